"""`EventFollower.end_offsets` shared by concurrent callers (integration, the real Kafka of the stack).

Every statement asks for the log's end (read-your-writes), so concurrent writers share the broker
probes: a caller takes the answer of the first probe begun after it arrived. These tests check the
promise that makes that safe — a record on the log before the call is inside the answer, whatever
the other callers do — that callers do share, and that a probe which fails costs only its caller."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException, Message, Producer

from projections.follower import EventFollower
from projections.projection import Projection
from schemas.config import settings
from streams.producer import create_topic
from tests.threads import in_threads

pytestmark = pytest.mark.integration
PARTITIONS = 2
CALLERS = 12


@pytest.fixture
def topic() -> str:
    name = f"test-end-offsets-{uuid.uuid4().hex[:10]}"
    create_topic(name, partitions=PARTITIONS)
    return name


class SlowProbes(EventFollower):
    """A follower whose broker probes take a while (so callers overlap) and are counted; the first
    `failing` of them raise as a broker that went away would."""

    def __init__(self, *args: object, failing: int = 0, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.probes = 0
        self.failing = failing
        self._count = threading.Lock()

    def _end_offset(self, partition: int, retry_for_s: float = 15.0) -> int:
        with self._count:
            self.probes += 1
            fail = self.probes <= self.failing
        time.sleep(0.05)
        if fail:
            raise RuntimeError("broker away")
        return super()._end_offset(partition, retry_for_s)


@pytest.fixture
def follower(topic: str, tmp_path: Path) -> Iterator[SlowProbes]:
    projection = Projection(tmp_path / "projection")
    made = SlowProbes(projection, settings(), name=f"end-offsets-{uuid.uuid4().hex[:6]}", topic=topic)
    yield made
    made.stop()
    projection.close()


def test_a_record_written_before_the_call_is_inside_its_answer(topic: str, follower: SlowProbes) -> None:
    producer = Producer({**settings().kafka_client(), "acks": "all"})
    misses: list[str] = []

    def write_then_ask(i: int) -> None:
        for round_ in range(3):
            partition = (i + round_) % PARTITIONS
            written: list[int] = []

            def delivered(err: object, msg: Message, into: list[int] = written) -> None:
                offset = msg.offset()
                if err is None and offset is not None:
                    into.append(offset)

            producer.produce(topic, value=f"{i}-{round_}".encode(), partition=partition, on_delivery=delivered)
            producer.flush(30)
            assert written, "the record was not delivered"
            ends = follower.end_offsets()
            if ends[partition] <= written[0]:
                misses.append(f"caller {i}: offset {written[0]} on partition {partition}, answer {ends}")

    assert in_threads(CALLERS, write_then_ask) == []
    assert misses == []
    # Shared: far fewer probes than calls (each call alone would have made one per partition).
    assert follower.probes < CALLERS * 3 * PARTITIONS / 2, follower.probes


def test_a_failed_probe_fails_its_caller_only(follower: SlowProbes) -> None:
    follower.failing = PARTITIONS * 100  # every probe fails until lowered below
    first: list[BaseException] = []

    def probe_first() -> None:
        try:
            follower.end_offsets()
        except RuntimeError as exc:
            first.append(exc)

    prober = threading.Thread(target=probe_first)
    prober.start()
    time.sleep(0.01)  # the first call is probing; the others arrive during its probe
    follower.failing = 1  # only the probe already begun fails
    answers: list[dict[int, int]] = []
    assert in_threads(4, lambda _: answers.append(follower.end_offsets())) == []
    prober.join(30)
    assert [str(e) for e in first] == ["broker away"]
    assert len(answers) == 4 and all(set(a) == set(range(PARTITIONS)) for a in answers)


def _write(topic: str, value: bytes) -> None:
    producer = Producer({**settings().kafka_client(), "acks": "all"})
    producer.produce(topic, value=value, partition=0)
    assert producer.flush(30) == 0


def test_a_fence_on_a_current_replica_holds_without_a_second_read(topic: str, follower: SlowProbes) -> None:
    _write(topic, b"before")
    follower.start()
    assert follower.wait_for_now(30)
    fence = follower.fence()
    assert fence.held(30) is True


def test_a_fence_on_a_replica_behind_the_log_waits_for_it_and_says_read_again(topic: str,
                                                                              follower: SlowProbes) -> None:
    """The record is on the log when the fence is made and the replica has not folded it: what was read
    meanwhile cannot stand. `held` returns only once the replica holds the record."""
    _write(topic, b"before the fence")
    fence = follower.fence()
    follower.start()
    assert fence.held(30) is False
    assert follower.position()[0] >= 1


def test_a_fence_on_a_replica_that_does_not_catch_up_times_out(topic: str, follower: SlowProbes) -> None:
    _write(topic, b"never folded")
    fence = follower.fence()  # the follower is never started
    with pytest.raises(TimeoutError, match="not caught up"):
        fence.held(0.3)


def test_a_fence_answers_with_a_record_written_before_it(topic: str, follower: SlowProbes) -> None:
    """The fence's own request (`request_end_offsets`): a record on the log before the fence is inside
    its answer, and no probe of the shared kind was needed for it."""
    for i in range(3):
        _write(topic, f"record {i}".encode())
    answer = follower.request_end_offsets()()
    assert answer[0] >= 3 and set(answer) == set(range(PARTITIONS))
    assert follower.probes == 0


class _FailedRequests:
    """Stands for the admin client while the cluster cannot answer a request (a leader moving)."""

    def list_offsets(self, requests: dict[object, object], **_: object) -> dict[object, object]:
        failed: Future[object] = Future()
        failed.set_exception(KafkaException(KafkaError(KafkaError.NOT_LEADER_FOR_PARTITION)))
        return {tp: failed for tp in requests}


def test_a_fence_whose_request_fails_probes_again(topic: str, follower: SlowProbes) -> None:
    _write(topic, b"before the fence")
    follower._admin = _FailedRequests()  # type: ignore[assignment]
    follower.start()
    assert follower.wait_for_now(30)
    probes = follower.probes
    fence = follower.fence()
    assert fence.held(30) is True
    assert follower.probes == probes + PARTITIONS  # answered by the probe consumer instead
