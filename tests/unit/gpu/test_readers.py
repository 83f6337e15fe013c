"""The readers over recorded NVML (nvidia-smi -q / dmon of an H100) and DCGM exporter output (8 x H100
in Kubernetes mode, 8 x A800 with MIG): tests/fixtures/gpu/, sources in its README."""

from __future__ import annotations

import httpx
import pytest

from devtools.testing.gpu import FIXTURES, RecordedNvml, parse_smi_query, recorded_states, recorded_xids
from streams.gpu.dcgm import DcgmReader, new_xids, parse_exposition, readings_from_exposition
from streams.gpu.nvml import NvmlReader
from streams.gpu.reading import GpuReadError, throttle_names


def test_the_recorded_query_output_is_read_as_nvidia_smi_printed_it() -> None:
    (gpu,) = parse_smi_query((FIXTURES / "nvidia-smi-q.h100.load.txt").read_text())
    assert gpu["_bus_id"] == "00000000:00:09.0"
    assert gpu["FB Memory Usage"]["Used"] == "19818 MiB"
    assert [p["Process ID"] for p in gpu["Processes"]["_processes"]] == ["11327", "11328", "11345"]
    states, dmon = recorded_states()
    assert states["load"].util_gpu == 100 and states["idle"].util_gpu == 0
    assert states["idle"].reasons == 0x1 and states["load"].reasons == 0  # "Idle : Active" only when idle
    assert states["load"].power_mw == 588_390 and states["load"].ecc_uncorrected == 0
    assert [r["sm"] for r in dmon["load"]] == [100] * 5 and [r["pwr"] for r in dmon["idle"]] == [69] * 5


def test_nvml_reader_reports_what_the_recorded_device_reported() -> None:
    nvml = RecordedNvml(count=2)
    nvml.set_state(1, "idle")
    reader = NvmlReader(nvml)
    busy, idle = reader.read()
    assert (busy.utilization_pct, busy.memory_used_mb, busy.memory_total_mb) == (100.0, 19818.0, 81559.0)
    assert busy.pids == (11327, 11328, 11345) and busy.throttle_reasons == ()
    assert busy.power_w == 631.0 and busy.temperature_c == 63.0 and busy.sm_clock_mhz == 1980.0  # dmon row 1
    assert (idle.utilization_pct, idle.pids, idle.throttle_reasons) == (0.0, (), ("gpu_idle",))
    assert busy.uuid != idle.uuid and busy.name == "NVIDIA H100 80GB HBM3"
    second, _ = reader.read()
    assert second.power_w == 634.0, "the next recorded dmon row"


def test_xid_events_are_reported_once_on_their_device() -> None:
    nvml = RecordedNvml(count=3)
    reader = NvmlReader(nvml)
    codes = [xid for _bus, xid, _msg in recorded_xids()]
    assert codes == [48, 64, 13, 13, 13, 109]
    nvml.inject_xid(2, 48)
    nvml.inject_xid(2, 64)
    nvml.add_ecc(2, uncorrected=1)
    readings = reader.read()
    assert [r.xids for r in readings] == [(), (), (48, 64)]
    assert readings[2].ecc_uncorrected == 1.0 and readings[0].ecc_uncorrected == 0.0
    assert [r.xids for r in reader.read()] == [(), (), ()]


def test_a_figure_the_device_does_not_support_is_missing_not_zero() -> None:
    reader = NvmlReader(RecordedNvml(count=1, ecc=False))
    (reading,) = reader.read()
    assert reading.ecc_corrected is None and reading.ecc_uncorrected is None
    assert reading.utilization_pct == 100.0


def test_nvml_that_cannot_start_is_a_read_error_that_says_what_to_do() -> None:
    class NoDriver(RecordedNvml):
        def nvmlInit(self) -> None:
            raise self.NVMLError("Driver Not Loaded")

    with pytest.raises(GpuReadError, match=r"Driver Not Loaded.*ENABLED=off"):
        NvmlReader(NoDriver())


def test_the_recorded_fake_uses_pynvmls_names_and_values() -> None:
    pynvml = pytest.importorskip("pynvml")
    fake = RecordedNvml()
    for name in dir(RecordedNvml):
        if name.startswith(("nvml", "NVML")):
            assert hasattr(pynvml, name), name
            value = getattr(fake, name)
            if isinstance(value, int):
                assert getattr(pynvml, name) == value, name
    assert issubclass(pynvml.NVMLError_Timeout, pynvml.NVMLError)


def test_throttle_bits_are_named_as_nvml_defines_them() -> None:
    pynvml = pytest.importorskip("pynvml")
    assert throttle_names(pynvml.nvmlClocksEventReasonGpuIdle) == ("gpu_idle",)
    assert throttle_names(pynvml.nvmlClocksEventReasonHwThermalSlowdown | pynvml.nvmlClocksEventReasonSwPowerCap) \
        == ("sw_power_cap", "hw_thermal_slowdown")


def test_dcgm_exposition_of_eight_gpus_in_kubernetes_mode() -> None:
    readings, xids = readings_from_exposition((FIXTURES / "dcgm.h100x8-k8s.metrics").read_text())
    assert [r.index for r in readings] == list(range(8)) and xids == {}
    two = readings[2]
    assert two.pod is not None and (two.pod.namespace, two.pod.pod, two.pod.container) == \
        ("dynamo-workload", "vllm-agg-0-vllmdecodeworker-dkb9q", "main")
    assert two.power_w == 110.786 and two.temperature_c == 29 and two.utilization_pct == 0
    assert [r.pod for r in readings if r.index != 2] == [None] * 7
    assert readings[6].uuid == "GPU-a0e6d978-c416-5df8-1ab9-eb27b31eab35"
    assert readings[6].name == "NVIDIA H100 80GB HBM3"


def test_dcgm_mig_instances_are_devices_of_their_own() -> None:
    readings, xids = readings_from_exposition((FIXTURES / "dcgm.a800x8-mig.metrics").read_text())
    assert [r.device_key for r in readings] == ["0/3", "0/5", "0/6", "1", "2", "3", "4", "5", "6", "7"]
    mig = readings[0]
    assert (mig.memory_used_mb, mig.memory_total_mb, mig.sm_clock_mhz) == (10, 10 + 19957, 1410)
    assert readings[3].memory_total_mb == 2 + 81226 and readings[3].utilization_pct is None  # not in this excerpt
    assert set(xids.values()) == {0.0} and len(xids) == 10


def test_exposition_text_is_parsed_as_prometheus_writes_it() -> None:
    text = ('# HELP x y\nDCGM_FI_DEV_GPU_UTIL{gpu="0",modelName="A \\"quoted\\" name",pod=""} 42 1700000000000\n'
            "garbage line\nDCGM_FI_DEV_GPU_TEMP{gpu=\"0\"} NaN\n")
    samples = list(parse_exposition(text))
    assert samples[0] == ("DCGM_FI_DEV_GPU_UTIL", {"gpu": "0", "modelName": 'A "quoted" name', "pod": ""}, 42.0)
    (reading,), _ = readings_from_exposition(text)
    assert reading.utilization_pct == 42.0 and reading.temperature_c is None and reading.pod is None


@pytest.mark.parametrize("gpu", ["\u00b2", "\u0661", "9" * 40, "-1", "0x1", ""])
def test_a_sample_with_a_hostile_gpu_label_is_skipped_and_the_other_gpus_are_read(gpu: str) -> None:
    text = "".join(f'DCGM_FI_DEV_GPU_UTIL{{gpu="{g}"}} {v}\n' for g, v in (("0", 5), (gpu, 7), ("1", 9)))
    readings, _ = readings_from_exposition(text)
    assert [(r.index, r.utilization_pct) for r in readings] == [(0, 5.0), (1, 9.0)]


def test_a_new_xid_is_a_change_of_the_last_xid_gauge() -> None:
    assert new_xids({"3": 0.0}, {"3": 79.0}) == {"3": (79,)}
    assert new_xids({"3": 79.0}, {"3": 79.0}) == {}
    assert new_xids({"3": 79.0}, {"3": 0.0}) == {}


def test_the_dcgm_reader_scrapes_and_reports_an_xid_once() -> None:
    recorded = (FIXTURES / "dcgm.a800x8-mig.metrics").read_text()
    # Arranged: the second scrape is the recording with GPU 3's last-XID gauge at 79.
    line = next(x for x in recorded.splitlines() if x.startswith('DCGM_FI_DEV_XID_ERRORS{gpu="3"'))
    scrapes = iter([recorded, recorded.replace(line, line[:-1] + "79"), recorded.replace(line, line[:-1] + "79")])
    client = httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(200, text=next(scrapes))))
    reader = DcgmReader("http://node:9400/metrics", client=client)
    assert all(not r.xids for r in reader.read())
    assert [(r.device_key, r.xids) for r in reader.read() if r.xids] == [("3", (79,))]
    assert all(not r.xids for r in reader.read())


def test_an_exporter_that_does_not_answer_is_a_read_error() -> None:
    client = httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(503)))
    with pytest.raises(GpuReadError, match="node:9400"):
        DcgmReader("http://node:9400/metrics", client=client).read()
