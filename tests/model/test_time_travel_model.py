"""Model-based test of time travel: after every step of a random history (loads, deletes, updates,
column changes, truncates, manual and automatic compactions, restores and recycler runs with a
one-second retention), every instant recorded so far that is still inside the window must read
exactly what the oracle held then — and instants the recycler trimmed must be refused."""

from __future__ import annotations

import atexit
import copy
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pymysql
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as s
from hypothesis.stateful import invariant, precondition, rule

from projections.remote import RemoteStores
from projections.replica import Replica
from schemas.config import load_settings
from storage.tiers import LocalTiers
from streams.recycler import Recycler
from tests.model.oracle import OracleTable, sort_rows
from tests.model.test_oracle_model import TableMachine

pytestmark = pytest.mark.integration
# The test's own recycler counts one retention day as this many seconds.
DAY_S = 1.0
_recycler: Recycler | None = None


def recycler() -> Recycler:
    """One in-process recycler with a short day, sharing the stack's log and tiers."""
    global _recycler
    if _recycler is None:
        config = load_settings()
        replica = Replica.open(config, Path(tempfile.mkdtemp(prefix="tt-model-recycler-")), "tt-model-recycler")
        atexit.register(replica.close)
        _recycler = Recycler(replica.projection, replica.proposer, LocalTiers.from_config(config),
                             RemoteStores(replica.projection, config), grace_s=0.0,
                             day_s=DAY_S)
    return _recycler


def _instant(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _ms(text: str) -> int:
    return int(datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=UTC).timestamp() * 1000)


class TimeTravelMachine(TableMachine):
    properties = 'PROPERTIES ("enable_time_travel" = "true", "time_travel_retention_days" = "1")'

    def __init__(self) -> None:
        super().__init__()
        # instant (ms) → (column names, rows) the oracle held at that instant
        self.history: dict[int, tuple[list[str], list[tuple[Any, ...]]]] = {}
        self.snapshots: dict[int, OracleTable] = {}

    def _latest_commit_ms(self) -> int | None:
        rows = self.sql(f"SHOW TIME TRAVEL ON {self.name}")
        return _ms(rows[-1][2]) if rows else None

    def _earliest_ms(self) -> int | None:
        rows = self.sql(f"SHOW TIME TRAVEL ON {self.name}")
        return _ms(rows[-1][1]) if rows and rows[-1][1] else None

    @rule(kind=s.sampled_from(["BASE", "CUMULATIVE"]))
    def compact(self, kind: str) -> None:
        self.sql(f"ADMIN COMPACT TABLE {self.name} WHERE TYPE = '{kind}'")

    # RESTORE brings back rows, not partitions a step dropped since: partitioned runs leave it out.
    @precondition(lambda self: bool(self.snapshots) and not self.partitioned)
    @rule(data=s.data())
    def restore(self, data: s.DataObject) -> None:
        instant = data.draw(s.sampled_from(sorted(self.snapshots)))
        self.sql(f"RESTORE TABLE {self.name} TO TIME AS OF '{_instant(instant)}'")
        self.oracle = copy.deepcopy(self.snapshots[instant])

    @precondition(lambda self: bool(self.history))
    @rule()
    def recycle(self) -> None:
        agent = recycler()
        self.sql(f"SELECT count(*) FROM {self.name}")
        with agent.projection.lock:
            db = agent.projection.database_by_name("model_test")
            table = agent.projection.table_by_name(db.db_id, self.name) if db else None
        if table is not None:  # only this machine's table: other tests keep their week of history
            agent.recycle_table(table)
        earliest = self._earliest_ms()
        trimmed = [t for t in self.history if earliest is not None and t < earliest]
        for t in trimmed:
            with pytest.raises(pymysql.MySQLError) as refused:
                self.sql(f"SELECT * FROM {self.name} FOR TIME AS OF '{_instant(t)}'")
            assert refused.value.args[0] == 1210 and "earliest instant that works" in refused.value.args[1]
            del self.history[t]
            self.snapshots.pop(t, None)

    @invariant()
    def every_instant_reads_what_it_held(self) -> None:
        if not hasattr(self, "oracle"):
            return
        latest = self._latest_commit_ms()
        if latest is None:
            return
        self.history[latest] = (list(self.oracle.names), self.oracle.result())
        self.snapshots[latest] = copy.deepcopy(self.oracle)
        earliest = self._earliest_ms() or 0
        for instant, (names, rows) in sorted(self.history.items()):
            if instant < earliest:
                continue
            self.cur.execute(f"SELECT * FROM {self.name} FOR TIME AS OF '{_instant(instant)}'")
            got = sort_rows(list(self.cur.fetchall()))
            assert [d[0] for d in self.cur.description] == names, f"columns at {_instant(instant)}"
            assert got == rows, f"rows at {_instant(instant)}"


class UniqueTimeTravelMachine(TimeTravelMachine):
    keys_model = "UNIQUE"


class PartitionedTimeTravelMachine(TimeTravelMachine):
    """Dropping and adding back a partition: reads of every instant before the drop still see it."""

    keys_model = "UNIQUE"
    partitioned = True


class AggregateTimeTravelMachine(TimeTravelMachine):
    keys_model = "AGGREGATE"
    value_aggregation = "SUM"


_settings = settings(max_examples=10, stateful_step_count=15, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
TestDuplicateTimeTravel = TimeTravelMachine.TestCase
TestUniqueTimeTravel = UniqueTimeTravelMachine.TestCase
TestAggregateTimeTravel = AggregateTimeTravelMachine.TestCase
TestPartitionedTimeTravel = PartitionedTimeTravelMachine.TestCase
for _case in (TestDuplicateTimeTravel, TestUniqueTimeTravel, TestAggregateTimeTravel, TestPartitionedTimeTravel):
    _case.settings = _settings
del _case
