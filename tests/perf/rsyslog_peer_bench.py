"""A peer on the same lines, same machine, same run: rsyslog (from Debian) against Sluice's assemble worker.

    .venv/bin/python tests/perf/rsyslog_peer_bench.py [--passes 2] [--skip imkafka,imfile,sluice]

The corpus mix (training + loghub, ``passes`` times, each pass its own source) is produced to a fresh
topic as plain text, one line per record, keyed by file (what Filebeat-style producers send; blank
lines are not sent). Then, one after the other, each reads exactly those lines:

1. ``imkafka``: rsyslogd, imkafka -> omelasticsearch (bulk) into a throw-away peer index. The peer's
   whole job, Kafka to the store; it does no multiline merging and no parsing.
2. ``imfile``: rsyslogd, imfile with ``startmsg.regex`` (rsyslog's multiline: a line that does not
   start with blank space starts a record) over the same files on disk -> omkafka. The peer's
   multiline stage, to set against Sluice's assemble stage.
3. ``sluice``: ``sluice worker assemble`` on the plain-text topic -> Avro events on Kafka
   (decode, multiline rules, parse, classify, redact, route).
4. with ``--floor``: the same worker with its per-line work taken out (``floor_worker.py nothing``,
   then ``fixed``), each on a topic of its own: what the worker could reach were that work free.

Each process is started, left to go idle, then fed; its CPU-seconds from then (utime + stime from
/proc/<pid>/stat) give lines per CPU-second; the report gives Sluice / peer ratios. rsyslog is
installed at run time with apt-get when its modules are missing; its configs are generated here.
Writes bench-results/peer_rsyslog.md and bench-results/peer_rsyslog.json. Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from assemble_bench import GroupCommits, corpus_files  # the sibling script's helpers
from confluent_kafka import Consumer, Producer, TopicPartition

from devtools.stack.base import cpu_seconds
from streams.config import REPO_ROOT, Settings, load_settings
from streams.topics import isolated_settings

OUT = REPO_ROOT / "bench-results"
APT_PACKAGES = ("rsyslog", "rsyslog-kafka", "rsyslog-elasticsearch")
MODULE_DIRS = (Path("/usr/lib/x86_64-linux-gnu/rsyslog"), Path("/usr/lib/aarch64-linux-gnu/rsyslog"),
               Path("/usr/lib/rsyslog"))
START_REGEX = "^[^ \t]"  # a record starts with a line that is not indented






# -- rsyslog from Debian, at run time ----------------------------------------------------------------
def module_dir() -> Path | None:
    for d in MODULE_DIRS:
        if (d / "imkafka.so").exists() and (d / "omelasticsearch.so").exists() and (d / "omkafka.so").exists():
            return d
    return None


def ensure_rsyslog(log: list[str]) -> tuple[str, Path]:
    """rsyslogd and its module directory, installing the Debian packages when missing."""
    if shutil.which("rsyslogd") is None or module_dir() is None:
        sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
        cmd = [*sudo, "apt-get", "install", "-y", "--no-install-recommends", *APT_PACKAGES]
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        log.append(f"installing: {' '.join(cmd)}")
        res = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if res.returncode != 0:  # an old package index: refresh once and retry
            subprocess.run([*sudo, "apt-get", "update"], capture_output=True, env=env, check=False)
            res = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if res.returncode != 0:
            raise RuntimeError(f"apt-get failed ({res.returncode}): {res.stderr.strip()[-500:]}")
    binary, mods = shutil.which("rsyslogd"), module_dir()
    if binary is None or mods is None:
        raise RuntimeError("rsyslogd or its kafka/elasticsearch modules are still missing after apt-get")
    version = subprocess.run([binary, "-v"], capture_output=True, text=True, check=False).stdout.splitlines()[:1]
    log.append(f"rsyslog: {version[0] if version else binary}, modules in {mods}")
    return binary, mods


def wait_idle(pid: int, max_s: float = 90.0) -> None:
    """Wait until the process has started up: less than 0.05 CPU-s used in one second."""
    t0 = time.monotonic()
    prev = cpu_seconds(pid)
    while time.monotonic() - t0 < max_s:
        time.sleep(1.0)
        now = cpu_seconds(pid)
        if now - prev < 0.05:
            return
        prev = now


def measure(proc: subprocess.Popen, feed: Any, done: Any, what: str, timeout_s: float = 300) -> dict[str, float]:
    """Start-up excluded: CPU from when the idle process is fed its input until ``done()`` says finished."""
    wait_idle(proc.pid)
    cpu0, t0 = cpu_seconds(proc.pid), time.monotonic()
    feed()
    last = -1
    while time.monotonic() - t0 < timeout_s:
        time.sleep(0.25)
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited {proc.returncode}")
        finished, last = done()
        if finished:
            return {"cpu_s": cpu_seconds(proc.pid) - cpu0, "wall_s": time.monotonic() - t0, "count": last}
    raise RuntimeError(f"{what}: {last} outputs after {timeout_s:.0f} s")


def run_rsyslog(binary: str, conf: str, work: Path, feed: Any, done: Any, timeout_s: float = 120) -> dict[str, float]:
    (work / "rsyslog.conf").write_text(conf)
    err = (work / "rsyslog.stderr").open("w")
    proc = subprocess.Popen([binary, "-n", "-f", str(work / "rsyslog.conf"), "-i", str(work / "rsyslog.pid")],
                            stdout=err, stderr=subprocess.STDOUT)
    try:
        return measure(proc, feed, done, "rsyslogd", timeout_s)
    except RuntimeError as exc:
        raise RuntimeError(f"{exc}; stderr: {(work / 'rsyslog.stderr').read_text()[-600:]}") from None
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        err.close()


def stable(counter: Any, quiet_s: float = 3.0) -> Any:
    """done() for outputs whose count is not known beforehand: finished once it stops growing."""
    state = {"count": -1, "since": time.monotonic()}

    def done() -> tuple[bool, int]:
        n = counter()
        if n != state["count"]:
            state["count"], state["since"] = n, time.monotonic()
        return n > 0 and time.monotonic() - state["since"] >= quiet_s, n

    return done


# -- Kafka helpers ------------------------------------------------------------------------------------
def topic_total(settings: Settings, topics: list[str]) -> int:
    consumer = Consumer({**settings.kafka.client_config(), "group.id": "peer-peek"})
    meta = consumer.list_topics(timeout=10).topics
    total = 0
    for topic in topics:
        if topic not in meta:
            continue
        for p in meta[topic].partitions:
            lo, hi = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            total += hi - lo
    consumer.close()
    return total


def produce_plain(settings: Settings, topic: str, files: list[Path], passes: int, tag: str) -> int:
    producer = Producer({**settings.kafka.client_config(), "linger.ms": 20, "compression.type": "zstd"})
    sent = 0
    for n in range(passes):
        for f in files:
            key = f"{tag}-pass{n}/{f.parent.name}/{f.name}".encode()
            for line in f.read_bytes().split(b"\n"):
                if not line.strip():
                    continue  # Filebeat-style producers send no empty events
                while True:
                    try:
                        producer.produce(topic, line, key)
                        break
                    except BufferError:
                        producer.poll(0.05)
                sent += 1
            producer.poll(0)
    producer.flush(60)
    return sent


# -- the three runs -----------------------------------------------------------------------------------
def imkafka_conf(mods: Path, work: Path, settings: Settings, topic: str, group: str, index: str) -> str:
    es = settings.elasticsearch.url.split("://", 1)[-1].rstrip("/")
    host, _, port = es.partition(":")
    return f"""
global(workDirectory="{work}" maxMessageSize="1m")
module(load="{mods}/imkafka.so")
module(load="{mods}/omelasticsearch.so")
template(name="peerdoc" type="list" option.jsonf="on") {{
  property(outname="@timestamp" name="timereported" dateFormat="rfc3339" format="jsonf")
  property(outname="message" name="msg" format="jsonf")
}}
input(type="imkafka" topic="{topic}" broker=["{settings.kafka.bootstrap_servers}"] consumergroup="{group}"
      ruleset="peer" confParam=["auto.offset.reset=smallest"])
ruleset(name="peer" queue.type="LinkedList" queue.size="200000" queue.dequeueBatchSize="1000") {{
  action(type="omelasticsearch" server="{host or '127.0.0.1'}" serverport="{port or '9200'}"
         searchIndex="{index}" template="peerdoc" bulkmode="on" maxbytes="5m" esVersion.major="8"
         action.resumeRetryCount="-1")
}}
"""


def imfile_conf(mods: Path, work: Path, settings: Settings, files_dir: Path, topic: str) -> str:
    return f"""
global(workDirectory="{work}" maxMessageSize="1m")
module(load="{mods}/imfile.so" mode="inotify")
module(load="{mods}/omkafka.so")
template(name="raw" type="string" string="%msg%")
input(type="imfile" file="{files_dir}/*.log" tag="corpus" ruleset="peer" startmsg.regex="{START_REGEX}"
      readTimeout="1" freshStartTail="off" addMetadata="off" escapeLF="off")
ruleset(name="peer" queue.type="LinkedList" queue.size="200000" queue.dequeueBatchSize="1000") {{
  action(type="omkafka" broker=["{settings.kafka.bootstrap_servers}"] topic="{topic}" template="raw"
         confParam=["compression.codec=zstd", "queue.buffering.max.ms=20"])
}}
"""


def indexed_all(count: int, lines: int) -> tuple[bool, int]:
    return count >= lines, count


def es_count(settings: Settings, index: str) -> int:
    from streams.clients import es_client

    es = es_client(settings.elasticsearch)
    try:
        es.indices.refresh(index=index)
        return int(es.count(index=index)["count"])
    except Exception:  # noqa: BLE001 - not created yet: nothing indexed
        return 0


def run_sluice(settings: Settings, tag: str, feed: Any, floor: str | None = None, lines: int = 0) -> dict[str, float]:
    """``sluice worker assemble`` (or, with ``floor``, ``floor_worker.py floor``) fed by ``feed``."""
    topics = settings.topics
    env = {**os.environ, "SLUICE_TOPICS__RAW": topics.raw, "SLUICE_TOPICS__EVENTS_PREFIX": topics.events_prefix,
           "SLUICE_TOPICS__METRICS": topics.metrics, "SLUICE_TOPICS__DLQ": topics.dlq,
           "SLUICE_ASSEMBLE__APP_ID": f"{tag}-group", "SLUICE_ASSEMBLE__IDLE_TIMEOUT_MS": "1000",
           "SLUICE_OBSERVABILITY__PORT": "0"}
    out_topics = [settings.topics.events_topic("default"), settings.topics.metrics, settings.topics.dlq]
    commits = None
    if floor is None:
        cmd = [sys.executable, "-m", "streams.cli", "worker", "assemble", "--loglevel", "warn"]
        done = stable(lambda: topic_total(settings, out_topics))
    else:
        cmd = [sys.executable, str(Path(__file__).with_name("floor_worker.py")), floor]
        # one partition, no transaction markers: the offset after the last line
        commits = GroupCommits(settings, f"{tag}-group", {(topics.raw, 0): lines})

        def done() -> tuple[bool, int]:
            return commits is not None and commits.reached(), 0
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO_ROOT)
    try:
        return measure(proc, feed, done, " ".join(cmd[1:]), 600)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        if commits is not None:
            commits.close()


def main() -> None:  # noqa: PLR0915 - one scenario read top to bottom
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--skip", default="", help="comma list of imkafka,imfile,sluice")
    ap.add_argument("--floor", action="store_true",
                    help="also run the worker with its per-line work taken out (floor_worker.py nothing, fixed)")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    OUT.mkdir(exist_ok=True)
    base = load_settings()
    tag = f"peer-{uuid.uuid4().hex[:6]}"
    settings = isolated_settings(base, tag, raw_partitions=1)
    topics = settings.topics
    peer_in, peer_out = f"{tag}.rsyslog-in", f"{tag}.rsyslog-multiline"
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient(settings.kafka.client_config())
    for fut in admin.create_topics([NewTopic(peer_in, 1, 1), NewTopic(peer_out, 1, 1)]).values():
        fut.result()
    files = corpus_files()
    lines = sum(1 for n in range(args.passes) for f in files for ln in f.read_bytes().split(b"\n") if ln.strip())
    log: list[str] = ["each process is started first and fed once idle: start-up is not counted"]
    results: dict[str, Any] = {"lines": lines, "files": len(files), "passes": args.passes, "log": log}
    work = Path(tempfile.mkdtemp(prefix="sluice-peer-"))
    binary, mods = "", Path()
    if not {"imkafka", "imfile"} <= skip:
        try:
            binary, mods = ensure_rsyslog(log)
        except Exception as exc:  # noqa: BLE001 - reported, not hidden: the Sluice side still runs
            log.append(f"rsyslog unavailable: {exc}")
            skip |= {"imkafka", "imfile"}
    index = f"peer-rsyslog-{tag}"
    if "imkafka" not in skip:
        w = work / "imkafka"
        w.mkdir()
        try:
            r = run_rsyslog(binary, imkafka_conf(mods, w, settings, peer_in, f"{tag}-rsyslog", index), w,
                            lambda: produce_plain(settings, peer_in, files, args.passes, tag),
                            lambda: indexed_all(es_count(settings, index), lines))
            results["imkafka"] = {**r, "lines_per_cpu_s": lines / r["cpu_s"], "lines_per_s": lines / r["wall_s"]}
            print(f"rsyslog imkafka -> omelasticsearch: {results['imkafka']}")
        except Exception as exc:  # noqa: BLE001 - one peer failing still leaves the others' figures
            log.append(f"imkafka run failed: {exc}")
    if "imfile" not in skip:
        w = work / "imfile"
        (w / "files").mkdir(parents=True)

        def copy_files() -> None:
            for n in range(args.passes):
                for f in files:
                    shutil.copyfile(f, w / "files" / f"pass{n}-{f.parent.name}-{f.name}")

        try:
            r = run_rsyslog(binary, imfile_conf(mods, w, settings, w / "files", peer_out), w, copy_files,
                            stable(lambda: topic_total(settings, [peer_out])))
            results["imfile"] = {**r, "lines_per_cpu_s": lines / r["cpu_s"], "records_out": r["count"]}
            print(f"rsyslog imfile multiline -> omkafka: {results['imfile']}")
        except Exception as exc:  # noqa: BLE001
            log.append(f"imfile run failed: {exc}")
    if "sluice" not in skip:
        r = run_sluice(settings, tag, lambda: produce_plain(settings, topics.raw, files, args.passes, tag))
        results["sluice"] = {**r, "lines_per_cpu_s": lines / r["cpu_s"], "lines_per_s": lines / r["wall_s"]}
        print(f"sluice worker assemble: {results['sluice']}")
    for floor in ("nothing", "fixed") if args.floor else ():
        own = isolated_settings(base, f"{tag}-{floor}", raw_partitions=1)  # its own raw topic and group
        r = run_sluice(own, f"{tag}-{floor}", lambda s=own: produce_plain(s, s.topics.raw, files, args.passes, tag),
                       floor, lines)
        results[f"floor_{floor}"] = {**r, "lines_per_cpu_s": lines / r["cpu_s"], "lines_per_s": lines / r["wall_s"]}
        print(f"floor_worker.py {floor}: {results[f'floor_{floor}']}")
    cleanup(settings, index, tag)
    shutil.rmtree(work, ignore_errors=True)
    (OUT / "peer_rsyslog.json").write_text(json.dumps(results, indent=1))
    text = report(results, " ".join(sys.argv[1:]))
    (OUT / "peer_rsyslog.md").write_text(text)
    print(text)


def cleanup(settings: Settings, index: str, tag: str) -> None:
    from confluent_kafka.admin import AdminClient

    from streams.clients import es_client

    with contextlib.suppress(Exception):
        es_client(settings.elasticsearch).indices.delete(index=index, ignore_unavailable=True)
    with contextlib.suppress(Exception):
        admin = AdminClient(settings.kafka.client_config())
        names = [t for t in admin.list_topics(timeout=10).topics if t.startswith(tag)]
        for fut in admin.delete_topics(names).values():
            fut.result()  # wait: a client closed at once drops the request


def report(r: dict[str, Any], argv: str) -> str:
    out = ["# Peer: rsyslog on the same lines", "",
           f"`tests/perf/rsyslog_peer_bench.py {argv}`: the corpus mix, {r['files']} files x {r['passes']} passes = "
           f"{r['lines']:,} non-blank lines, one plain-text line per Kafka record (Filebeat-style), same machine, "
           "one after the other in one run. CPU = utime + stime of the process from /proc, from when the idle "
           "process is fed until its output stops.", "",
           "| process | job | CPU s | wall s | lines per CPU-second |", "|---|---|---|---|---|"]
    rows = (("imkafka", "rsyslogd", "imkafka -> omelasticsearch (bulk), no multiline, no parsing"),
            ("imfile", "rsyslogd", f"imfile `startmsg.regex={START_REGEX!r}` multiline -> omkafka"),
            ("sluice", "sluice worker assemble", "Kafka (plain text) -> decode, multiline rules, parse, classify, "
                                                 "redact -> Avro events on Kafka"),
            ("floor_nothing", "floor_worker.py nothing", "the same worker, every record read and dropped: "
                                                         "Faust, the turns and their transactions, nothing written"),
            ("floor_fixed", "floor_worker.py fixed", "the same worker, every record decoded and each line made "
                                                     "one fixed event, Avro-encoded and written"))
    for key, proc, job in rows:
        if key in r:
            x = r[key]
            out.append(f"| {proc} | {job} | {x['cpu_s']:.1f} | {x['wall_s']:.1f} | **{x['lines_per_cpu_s']:,.0f}** |")
    out.append("")
    if "sluice" in r:
        for key, what in (("imkafka", "rsyslog imkafka -> Elasticsearch"), ("imfile", "rsyslog multiline stage")):
            if key in r:
                out.append(f"- Sluice assemble / {what}, lines per CPU-second: "
                           f"**{r['sluice']['lines_per_cpu_s'] / r[key]['lines_per_cpu_s']:.2f}**")
    for key, what in (("floor_nothing", "reading alone"), ("floor_fixed", "reading, decoding and writing")):
        if key in r:
            peers = ", ".join(f"{r[key]['lines_per_cpu_s'] / r[p]['lines_per_cpu_s']:.2f} of rsyslog {p}"
                              for p in ("imkafka", "imfile") if p in r)
            out.append(f"- The worker's {what}, with no per-line work: **{r[key]['lines_per_cpu_s']:,.0f}** lines "
                       f"per CPU-second{'; ' + peers if peers else ''} (done once the group committed every record)")
    if "imfile" in r:
        out.append(f"- rsyslog's multiline made {r['imfile']['records_out']:,} records; Sluice made "
                   f"{r.get('sluice', {}).get('count', 0):,} outputs (events + metric points + dead letters).")
    out += ["", "Notes:", ""] + [f"- {line}" for line in r["log"]]
    out.append("- Each figure includes the quiet period (3 s, idle CPU) the bench waits to see that output "
               "stopped growing, except rsyslog -> Elasticsearch, which stops at the exact document count.")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
