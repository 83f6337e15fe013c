"""CPU per message of confluent-kafka's ways to hand a batch of encoded outputs to librdkafka
(``python -m devtools.produce_bench [--messages N]``): ``produce()`` per message (what the assemble
stage's transactional writer does), ``produce_batch()`` with a list of message dicts, and each with a
delivery callback. Writes to a fresh topic on the local stack, then deletes it.
"""

from __future__ import annotations

import argparse
import os
import time
import uuid

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from streams.config import load_settings


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m devtools.produce_bench")
    ap.add_argument("--messages", type=int, default=200_000)
    ap.add_argument("--size", type=int, default=300)
    args = ap.parse_args()
    conf = load_settings().kafka.client_config()
    topic = f"bench-produce-{uuid.uuid4().hex[:8]}"
    admin = AdminClient(conf)
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result()
    payloads = [os.urandom(args.size // 2).hex().encode() for _ in range(1000)]
    keys = [f"topic/0/{i}".encode() for i in range(1000)]
    try:
        for how in ("produce", "produce + callback", "produce_batch", "produce_batch + callback"):
            p = Producer({**conf, "linger.ms": 5, "compression.type": "zstd",
                          "queue.buffering.max.messages": 1_000_000})
            delivered = [0]

            def on_delivery(err, _msg, delivered=delivered):
                delivered[0] += err is None

            cb = on_delivery if "callback" in how else None
            c0 = time.process_time()
            if how.startswith("produce_batch"):
                for start in range(0, args.messages, 1000):
                    batch = [{"value": payloads[i % 1000], "key": keys[i % 1000]}
                             for i in range(start, min(start + 1000, args.messages))]
                    if cb is not None:
                        p.produce_batch(topic, batch, on_delivery=cb)
                    else:
                        p.produce_batch(topic, batch)
                    p.poll(0)
            else:
                for i in range(args.messages):
                    if cb is not None:
                        p.produce(topic, payloads[i % 1000], keys[i % 1000], on_delivery=cb)
                    else:
                        p.produce(topic, payloads[i % 1000], keys[i % 1000])
                    if i % 1000 == 999:
                        p.poll(0)
            handed = time.process_time() - c0
            p.flush(60)
            total = time.process_time() - c0
            print(f"{how:26s} {handed / args.messages * 1e6:5.2f} us/message in Python, "
                  f"{total / args.messages * 1e6:5.2f} us/message with librdkafka's flush (process CPU)")
    finally:
        admin.delete_topics([topic])


if __name__ == "__main__":
    main()
