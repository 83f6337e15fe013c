"""Kafka transactions for a stage whose outputs and read offsets are committed together.

The assemble stage consumes ``logs.raw`` through Faust's ``rdkafka://`` driver and writes its outputs
with a transactional librdkafka producer. Written at least once, a kill -9 between "outputs delivered"
and "raw offsets committed" re-emitted events onto the events topics, and the cold tier (whose objects
are named by events-topic offsets) stored them twice. Here the outputs and the raw offsets go into one
Kafka transaction: either both are visible to ``read_committed`` consumers (the sinks; librdkafka's
default isolation) or neither.

``send_offsets_to_transaction`` takes the consumer group's metadata from the stage's own consumer
(``consumer_group_metadata()`` of the current assignment). With its generation the broker fences a
worker that lost its partitions (``ILLEGAL_GENERATION`` / ``UNKNOWN_MEMBER_ID``): its transaction is
aborted and the new owner's outputs are the only ones.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from streams.errors import DependencyRefused, Failure, SluiceError
from streams.kafka_errors import kafka_failure

log = logging.getLogger(__name__)


class TransactionAborted(SluiceError):
    """The transaction was rolled back: nothing of it is visible; re-read from the committed offsets."""


class ProducerWedged(SluiceError):
    """A transactional call of librdkafka did not return within its own timeout and a grace period."""


class TransactionalWriter:
    """One call of :meth:`write` = one transaction: the messages and the group's offsets, or nothing.

    A transaction that cannot be committed within ``deadline_s`` (the broker is away, its coordinator
    moved) is rolled back and reported as :class:`TransactionAborted`; the caller re-reads its input.
    If even the abort cannot reach the broker, the producer is replaced: the next one, with the same
    transactional id, fences the old one and the broker aborts what it left open.

    The producer is replaced, and the transaction reported aborted, also when a call does not return
    within its timeout plus ``wedged_after_s``. librdkafka 2.16's ``send_offsets_to_transaction`` can
    wait forever once the group coordinator's broker restarted (librdkafka issues #5456 and #5511,
    open): the fault suite's broker restart left an assemble worker blocked in it for minutes, its
    partitions unread. Each call therefore runs on a thread of its own, and a call still blocked is
    left to its thread, with the old producer. ``on_wedged`` is called for each such call, and
    :attr:`abandoned` counts those that have not returned yet (each holds a thread and a librdkafka
    client, until it returns or the worker restarts).
    """

    def __init__(self, client_config: dict[str, Any], transactional_id: str, timeout_ms: int,
                 deadline_s: float | None = None, retry_wait_s: float = 0.5, wedged_after_s: float = 5.0,
                 producer_factory: Callable[[dict[str, Any]], Any] | None = None,
                 on_wedged: Callable[[], None] | None = None) -> None:
        self.transactional_id = transactional_id
        self.config = {
            **client_config, "transactional.id": transactional_id, "transaction.timeout.ms": timeout_ms,
            "linger.ms": 5, "compression.type": "zstd",  # message.max.bytes: kafka.max_message_bytes
        }
        self.deadline_s = deadline_s if deadline_s is not None else timeout_ms / 1000
        self.retry_wait_s = retry_wait_s
        self.wedged_after_s = wedged_after_s
        self.producer_factory = producer_factory
        self.on_wedged = on_wedged
        self.abandoned = 0  # wedged calls that have not returned yet
        self._abandoned_lock = threading.Lock()
        self.producer: Any = None
        self._initialised = False
        self._new_producer()

    def _new_producer(self) -> None:
        if self.producer_factory is None:
            from confluent_kafka import Producer

            self.producer_factory = Producer
        self.producer = self.producer_factory(self.config)
        self._initialised = False

    def write(self, messages: list[tuple[str, bytes | None, bytes | None, int]], offsets: dict[tuple[str, int], int],
              metadata: Any) -> None:
        """Blocking. ``messages`` are (topic, key, value or None for a tombstone, partition or -1 for the
        key's); ``metadata`` is the consumer's ``consumer_group_metadata()``. Raises
        :class:`TransactionAborted` (retry from the committed offsets) or SluiceError."""
        from confluent_kafka import KafkaException, TopicPartition

        if offsets and metadata is None:
            raise SluiceError("offsets to commit in a transaction, but no consumer group metadata")
        deadline = time.monotonic() + self.deadline_s
        try:
            if not self._initialised:
                # Also aborts whatever a previous producer with this transactional id left open.
                self._call(deadline, self.producer.init_transactions)
                self._initialised = True
            self.producer.begin_transaction()
        except (KafkaException, TimeoutError, ProducerWedged) as exc:
            self._refused(exc)
            self._new_producer()
            raise TransactionAborted(f"cannot start a transaction as {self.transactional_id}: {exc}") from exc
        try:
            for topic, key, value, partition in messages:
                while True:
                    try:
                        self.producer.produce(topic, value, key, partition)
                        break
                    except BufferError:  # librdkafka's queue is full: let it drain, then go on
                        self.producer.poll(0.1)
            if offsets:
                tps = [TopicPartition(t, p, o) for (t, p), o in sorted(offsets.items())]
                self._call(deadline, self.producer.send_offsets_to_transaction, tps, metadata)
            self._call(deadline, self.producer.commit_transaction)
        except ProducerWedged as exc:
            self._new_producer()  # fences the wedged one; the broker aborts its open transaction
            raise TransactionAborted(f"transaction of {len(messages)} outputs and offsets {offsets} given up: "
                                     f"{exc}") from exc
        except (KafkaException, TimeoutError) as exc:
            self._refused(exc)
            err = exc.args[0] if isinstance(exc, KafkaException) else None
            if err is not None and err.fatal():
                raise SluiceError(f"transactional producer {self.transactional_id} failed for good ({err}); "
                                  "the worker must restart (its open transaction is aborted by the broker)") from exc
            self._abort()
            raise TransactionAborted(f"transaction of {len(messages)} outputs and offsets {offsets} rolled back: "
                                     f"{err or exc}") from exc
        except BaseException:
            self._abort()
            raise

    def _refused(self, exc: BaseException) -> None:
        """SASL authentication failed or an ACL denies the transactional id, the topics or the group:
        every transaction would fail alike, so the stage stops with the reason instead of retrying."""
        from confluent_kafka import KafkaException

        if isinstance(exc, KafkaException) and kafka_failure(exc) is Failure.REFUSED:
            raise DependencyRefused(f"Kafka refused the transactional producer {self.transactional_id}: "
                                    f"{exc.args[0]}. Check the Kafka credentials and this user's ACLs (Write on "
                                    "the output topics, Write/Describe on the transactional id, Read on the "
                                    "consumer group)", "kafka") from exc

    def _call(self, deadline: float, fn: Any, *args: Any) -> Any:
        """Call a transactional API (its last argument a timeout), again while its error is retriable."""
        from confluent_kafka import KafkaException

        name = getattr(fn, "__name__", str(fn))
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{name} not done within {self.deadline_s:.0f} s")
            try:
                return self._bounded(name, fn, *args, min(left, 10.0))
            except KafkaException as exc:
                err = exc.args[0]
                if not err.retriable() or err.txn_requires_abort() or err.fatal():
                    raise
                log.warning("%s: %s (retrying)", name, err)
                time.sleep(min(self.retry_wait_s, max(0.0, deadline - time.monotonic())))

    def _bounded(self, name: str, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` (its last argument a timeout), on a thread of its own; :class:`ProducerWedged` if
        it has not returned within that timeout plus ``wedged_after_s``."""
        outcome: list[Any] = []
        given_up: list[bool] = []  # set, under the lock, once the caller stopped waiting
        done = threading.Event()
        lock = self._abandoned_lock

        def call() -> None:
            try:
                outcome.append((True, fn(*args)))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                outcome.append((False, exc))
            finally:
                with lock:
                    done.set()
                    if given_up:  # it has returned at last
                        self.abandoned -= 1

        threading.Thread(target=call, name=f"txn-{name}", daemon=True).start()
        waited = args[-1] + self.wedged_after_s
        if not done.wait(waited):
            with lock:
                if not done.is_set():
                    given_up.append(True)
                    self.abandoned += 1
            if given_up:
                if self.on_wedged is not None:
                    self.on_wedged()
                raise ProducerWedged(f"{name} of {self.transactional_id} still blocked {waited:.0f} s after it "
                                     "was called (librdkafka #5456); the producer is replaced")
        ok, value = outcome[0]
        if not ok:
            raise value
        return value

    def _abort(self) -> None:
        from confluent_kafka import KafkaException

        try:
            self._call(time.monotonic() + self.deadline_s, self.producer.abort_transaction)
        except (KafkaException, TimeoutError, ProducerWedged) as exc:
            # The broker aborts it: when the next producer with this id starts, or after the timeout.
            log.warning("abort of transaction %s failed (%s); starting a new producer", self.transactional_id, exc)
            self._new_producer()
