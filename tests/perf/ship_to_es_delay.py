"""End-to-end delay: a line written to a log file -> its event searchable in Elasticsearch.

    .venv/bin/python tests/perf/ship_to_es_delay.py [--interval 0.5] [--rate 20] [--seconds 60]

Runs the real path on the local stack: `sluice ship` tails a file, `sluice worker assemble` and
`sluice worker hot` (fresh consumer groups) carry the lines to Elasticsearch. Real corpus lines
(loghub OpenSSH: one event per line) are appended at ``--rate`` lines/s, each line's write time
kept by its byte offset; Elasticsearch is polled and each event's first appearance timed
(the event carries its source file offset). Reports p50 / p95 / max delay. The assemble stage holds
a single-line event until the next line of its source starts (or its idle timeout), so the delay
includes the gap to the next line: at 20 lines/s, about 50 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from devtools import CORPUS_DIR
from streams.clients import es_client
from streams.config import load_settings
from streams.ship.identity import split_stream_offset

CORPUS = CORPUS_DIR / "loghub" / "OpenSSH" / "OpenSSH_2k.log"


def main() -> None:  # noqa: PLR0915 - one straight measurement script
    ap = argparse.ArgumentParser()
    ap.add_argument("--interval", type=float, default=0.5, help="sluice ship's send interval (s)")
    ap.add_argument("--rate", type=float, default=20.0, help="lines written per second")
    ap.add_argument("--seconds", type=float, default=60.0, help="how long to write")
    args = ap.parse_args()

    settings = load_settings()
    project = settings.routing.default_project
    host = f"e2e-{uuid.uuid4().hex[:8]}"
    lines = [ln + b"\n" for ln in CORPUS.read_bytes().replace(b"\r\n", b"\n").split(b"\n") if ln]
    work = Path(tempfile.mkdtemp(prefix="sluice-e2e-"))
    log = work / "logs" / "ssh.log"
    log.parent.mkdir()
    log.touch()
    base_env = {**os.environ, "SLUICE_OBSERVABILITY__PORT": "0"}
    procs = [
        subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", "assemble", "--loglevel", "warn"],
                         env={**base_env, "SLUICE_ASSEMBLE__APP_ID": f"{host}-assemble",
                              "SLUICE_ASSEMBLE__TAKE_WITHIN_S": "0.05"},
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        subprocess.Popen([sys.executable, "-m", "streams.cli", "worker", "hot", "--loglevel", "warn"],
                         env={**base_env, "SLUICE_HOT__GROUP_ID": f"{host}-hot", "SLUICE_HOT__MAX_BATCH_AGE_S": "0.1"},
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        subprocess.Popen([sys.executable, "-m", "streams.cli", "ship", "--path", str(log.parent / "*.log"),
                          "--checkpoint", str(work / "checkpoint.json"), "--interval", str(args.interval),
                          "--stagger-window", "0", "--node-name", host, "--label", f"project={project}"],
                         env={**base_env, "SLUICE_SHIP__PODINFO_LABELS_PATH": str(work / "none")},
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
    ]
    written: dict[int, float] = {}  # byte offset -> time written
    seen: dict[int, float] = {}
    stop = threading.Event()
    es = es_client(settings.elasticsearch)

    def poll() -> None:
        while not stop.is_set():
            try:
                es.indices.refresh(index=f"sluice-logs-{project}-*")
                hits = es.search(index=f"sluice-logs-{project}-*", size=10_000, source=["raw.first_file_offset"],
                                 query={"term": {"source.host": host}})["hits"]["hits"]
            except Exception:  # noqa: BLE001 - index not there yet
                hits = []
            now = time.time()
            for hit in hits:
                raw = hit["_source"]["raw"]["first_file_offset"]
                if raw is not None:
                    seen.setdefault(split_stream_offset(raw)[1], now)
            time.sleep(0.1)

    try:
        time.sleep(8)  # workers join their groups
        watcher = threading.Thread(target=poll, daemon=True)
        watcher.start()
        offset = 0
        with log.open("ab") as fh:
            start = time.time()
            n = 0
            while time.time() - start < args.seconds:
                line = lines[n % len(lines)]
                fh.write(line)
                fh.flush()
                written[offset] = time.time()
                offset += len(line)
                n += 1
                time.sleep(max(0.0, start + n / args.rate - time.time()))
        deadline = time.time() + max(60.0, args.interval * 3)
        while time.time() < deadline and len(seen) < len(written) - 1:
            time.sleep(0.5)
        stop.set()
    finally:
        for p in procs:
            p.send_signal(signal.SIGINT)
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
    delays = sorted(seen[o] - written[o] for o in written if o in seen)
    # The very last line waits for the idle timeout (no next line closes it): reported apart.
    result = {
        "interval_s": args.interval, "rate": args.rate, "lines": len(written), "visible": len(delays),
        "p50_s": round(delays[len(delays) // 2], 3) if delays else None,
        "p95_s": round(delays[int(len(delays) * 0.95)], 3) if delays else None,
        "max_s": round(delays[-1], 3) if delays else None,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
