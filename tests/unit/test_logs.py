from __future__ import annotations

import json
import logging

from streams.logs import JsonFormatter, faust_logging_config, level_name


def _record(msg: str, *args: object, **extra: object) -> logging.LogRecord:
    record = logging.LogRecord("streams.sinks.base", logging.WARNING, __file__, 1, msg, args, None)
    for key, value in extra.items():
        setattr(record, key, value)
    return record


def test_json_lines_carry_the_message_the_level_the_logger_and_extras() -> None:
    line = JsonFormatter().format(_record("partition %s paused at %d records", "logs.raw/3", 10_000, stage="hot"))
    assert "\n" not in line
    out = json.loads(line)
    assert out["message"] == "partition logs.raw/3 paused at 10000 records"
    assert (out["level"], out["logger"], out["stage"]) == ("WARNING", "streams.sinks.base", "hot")
    assert out["ts"].endswith("+00:00")


def _fail() -> None:
    raise ValueError("bad\nthing")


def test_exceptions_stay_inside_the_one_line() -> None:
    try:
        _fail()
    except ValueError:
        import sys

        record = _record("failed")
        record.exc_info = sys.exc_info()
    line = JsonFormatter().format(record)
    assert "\n" not in line and "ValueError: bad" in json.loads(line)["exc"]


def test_faust_workers_get_the_json_formatter_only_when_asked() -> None:
    assert faust_logging_config("info", "text") is None
    conf = faust_logging_config("warn", "json")
    assert conf is not None and conf["root"]["level"] == "WARNING"
    assert conf["formatters"]["json"]["()"] == "streams.logs.JsonFormatter"
    assert level_name("crit") == "CRITICAL"
