from __future__ import annotations

import fastavro.validation

from streams.contracts import parsed_schema
from streams.rawbatch import batches_from_file, default_source, read_lines, source_key


def test_offsets_point_at_line_starts_in_crlf_files(corpus) -> None:
    path = corpus / "loghub" / "Apache" / "Apache_2k.log"  # CRLF endings, no final newline
    data = path.read_bytes()
    lines = list(read_lines(path))
    assert len(lines) == 2000
    for offset, text in lines[:50] + lines[-5:]:
        assert data[offset:offset + len(text)].decode() == text
        assert not text.endswith("\r")


def test_batches_keep_every_line_once_and_validate(corpus) -> None:
    path = corpus / "training" / "vllm_serve_jamba_cuda_oom_kv_cache.log"
    batches = list(batches_from_file(path, default_source(path), {"project": "p"}, 40, 123))
    assert [len(b["lines"]) for b in batches] == [40, 40, 11]
    offsets = [line["file_offset"] for b in batches for line in b["lines"]]
    assert offsets == sorted(set(offsets))
    for batch in batches:
        assert fastavro.validation.validate(batch, parsed_schema("raw_batch"))


def test_invalid_utf8_is_replaced_not_fatal(tmp_path) -> None:
    path = tmp_path / "bad.log"
    path.write_bytes(b"ok line\n\xff\xfe broken \x00 nul\nlast")
    assert [t for _, t in read_lines(path)] == ["ok line", "\ufffd\ufffd broken \x00 nul", "last"]


def test_source_key_is_stable_per_source() -> None:
    a = {"host": "n1", "file": "train.log", "stream": "stdout"}
    assert source_key(a) == source_key(dict(a)) != source_key({**a, "host": "n2"})
