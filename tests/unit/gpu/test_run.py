"""Which reader `sluice ship` opens, and what it tells the sampler about the files it tails."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from devtools.testing.ship import make_shipper
from streams.gpu.dcgm import DcgmReader
from streams.gpu.reading import GpuReadError
from streams.gpu.run import known_sources, open_reader
from streams.gpu.settings import GpuSettings


def test_auto_samples_nothing_where_nvml_finds_no_gpu_and_on_says_why() -> None:
    assert open_reader(GpuSettings(enabled="off")) is None
    assert open_reader(GpuSettings(enabled="auto")) is None  # no NVIDIA driver on this machine
    with pytest.raises(GpuReadError, match="NVML"):
        open_reader(GpuSettings(enabled="on"))


def test_a_dcgm_url_scrapes_the_exporter_instead() -> None:
    reader = open_reader(GpuSettings(dcgm_url="http://127.0.0.1:9/metrics"))
    assert isinstance(reader, DcgmReader)
    reader.close()
    assert open_reader(GpuSettings(enabled="off", dcgm_url="http://127.0.0.1:9/metrics")) is None


def test_a_file_last_grew_when_it_was_last_written_not_when_the_shipper_started(tmp_path: Path) -> None:
    old = tmp_path / "old.log"
    old.write_text("a line\n")
    written = 1_700_000_000.0
    os.utime(old, (written, written))
    shipper, _sender, clock = make_shipper(tmp_path)
    shipper.start()
    clock.t += 1.0
    shipper.tick()
    [known] = known_sources(shipper)()
    assert known.path == str(old) and known.last_growth_s == pytest.approx(written)
