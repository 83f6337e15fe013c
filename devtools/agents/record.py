"""Record what a real agent puts on Kafka for real corpus files, as a fixture under tests/fixtures/agents.

    python -m devtools.agents.record --case rsyslog-json --agent "rsyslog 8.2302.0" \\
        --config deploy/agents/rsyslog/sluice-kafka.conf --set 'template="sluice_json"=>template="sluice_line"' \\
        --command 'rsyslogd -n -f {config} -i {state}/pid' corpus/training/a.log corpus/training/b.log

The config is copied with the ``--set OLD=>NEW`` replacements applied (the template or encoding a
case picks) and kept in the fixture beside ``records.jsonl`` and ``meta.json``. The files are tailed
from ``/tmp/sluice-agents/<case>/var/log/...`` so the paths in the records are stable.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import time
from pathlib import Path

from devtools.agents.records import dump, read_topic
from devtools.agents.run import REPO, AgentRun, common_env, lay_out, running

FIXTURES = REPO / "tests" / "fixtures" / "agents"


def create_topic(brokers: str, topic: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": brokers})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result()
    time.sleep(1.0)  # let the metadata reach every broker thread before the agent asks for it


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--case", required=True)
    ap.add_argument("--agent", required=True, help="name and version, as the agent reports it")
    ap.add_argument("--config", required=True, type=Path)
    ap.add_argument("--command", required=True, help="with {config} and {state} placeholders")
    ap.add_argument("--set", dest="subs", action="append", default=[],
                    help="OLD=>NEW, applied to the config (\\n: a newline)")
    ap.add_argument("--container", action="store_true", help="lay the file out as a kubelet container log")
    ap.add_argument("--links", action="store_true", help="and tail it through /var/log/containers links")
    ap.add_argument("--brokers", default="127.0.0.1:19092")
    ap.add_argument("--partitions", type=int, default=3)
    ap.add_argument("--quiet-s", type=float, default=8.0)
    ap.add_argument("--extra-env", action="append", default=[], help="NAME=VALUE for the agent")
    ap.add_argument("--note", default="")
    args = ap.parse_args(argv)

    root = Path("/tmp/sluice-agents") / args.case  # noqa: S108 - a fixed path: it is in the records
    shutil.rmtree(root, ignore_errors=True)
    state = root / "state"
    text = args.config.read_text()
    for sub in args.subs:
        old, _, new = (part.replace("\\n", "\n") for part in sub.partition("=>"))
        if old not in text:
            raise SystemExit(f"--set {sub!r}: {old!r} is not in {args.config}")
        text = text.replace(old, new)
    out = FIXTURES / args.case
    out.mkdir(parents=True, exist_ok=True)
    config = out / ("config" + "".join(args.config.suffixes))
    config.write_text(text)
    _dir, glob = lay_out(root, args.files, container=args.container or args.links, links=args.links)
    topic = f"agents-{args.case}-{time.time_ns()}"
    create_topic(args.brokers, topic, args.partitions)
    env = common_env(args.brokers, topic, glob, state)
    env.update(dict(e.split("=", 1) for e in args.extra_env))
    command = [c.format(config=config, state=state) for c in shlex.split(args.command)]
    run = AgentRun(args.case, command, env, state / "agent.out")
    with running(run):
        records = list(read_topic(args.brokers, topic, quiet_s=args.quiet_s, timeout_s=180))
    n = dump(sorted(records, key=lambda r: (r.partition, r.offset)), out / "records.jsonl")
    meta = {"agent": args.agent, "config": config.name, "example": str(args.config),
            "substitutions": args.subs, "env": args.extra_env, "inputs": [str(f) for f in args.files],
            "tailed_from": glob, "container_log": args.container or args.links, "partitions": args.partitions,
            "records": n, "note": args.note}
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"{args.case}: {n} records -> {out}")
    if n == 0:
        print(run.log_tail())
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
