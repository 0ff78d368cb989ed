"""GroupedCalls: concurrent requests answered in shared rounds, never by a round begun before the
request (plain threads, no stack)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from storage.grouped_calls import GroupedCalls
from tests.threads import in_threads


class Log:
    """A counter written by callers before they ask; a round answers what it read when it began."""

    def __init__(self) -> None:
        self.written = 0
        self.rounds: list[frozenset[int]] = []
        self.lock = threading.Lock()

    def write(self) -> int:
        with self.lock:
            self.written += 1
            return self.written

    def serve(self, keys: frozenset[int]) -> dict[int, int]:
        with self.lock:
            seen = self.written
            self.rounds.append(keys)
        time.sleep(0.02)
        return {k: seen for k in keys}


def test_every_answer_is_at_least_as_new_as_its_request_and_rounds_are_shared() -> None:
    log = Log()
    calls = GroupedCalls(log.serve)
    stale: list[str] = []

    def caller(i: int) -> None:
        for _ in range(5):
            mine = log.write()
            seen = calls(i % 3)
            if seen < mine:
                stale.append(f"caller {i} wrote #{mine} and was answered with #{seen}")

    assert in_threads(16, caller) == []
    assert stale == []
    assert len(log.rounds) < 16 * 5 / 2, len(log.rounds)  # shared, not one round per request
    assert all(keys <= {0, 1, 2} for keys in log.rounds)


def test_a_failed_round_fails_its_own_requests_only() -> None:
    first_round = threading.Event()
    release = threading.Event()
    rounds = 0

    def serve(keys: frozenset[str]) -> dict[str, str]:
        nonlocal rounds
        rounds += 1
        if rounds == 1:
            first_round.set()
            release.wait(10)
            raise OSError("disk gone")
        return {k: f"ok {k}" for k in keys}

    calls = GroupedCalls(serve)
    first: list[BaseException] = []
    prober = threading.Thread(target=lambda: first.append(_raised(lambda: calls("a"))))
    prober.start()
    assert first_round.wait(10)
    answers: list[str] = []
    later = threading.Thread(target=lambda: answers.extend(calls(k) for k in ("b", "c")))
    later.start()
    time.sleep(0.05)  # the later request waits for the next round, not the failing one
    release.set()
    prober.join(10)
    later.join(10)
    assert [str(e) for e in first] == ["disk gone"]
    assert answers == ["ok b", "ok c"]
    assert calls("a") == "ok a"  # the next round tries again


def _raised(call: Callable[[], object]) -> BaseException:
    try:
        call()
    except BaseException as exc:  # noqa: BLE001 - returned to the test
        return exc
    raise AssertionError("expected an error")
