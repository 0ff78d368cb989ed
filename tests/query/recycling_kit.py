"""An in-process recycler for SQL tests of what the recycler keeps and deletes (tags, clones)."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from projections.remote import RemoteStores
from projections.replica import Replica
from projections.state import TableState
from schemas.config import load_settings
from storage.tiers import LocalTiers
from streams.recycler import Recycler


@dataclass
class Recycling:
    """An in-process recycler with no grace and a one-second day, on its own replica of the log."""

    replica: Replica
    recycler: Recycler

    def table(self, db: str, name: str) -> TableState:
        self.replica.follower.wait_for_now(30)
        with self.replica.projection.lock:
            found = self.replica.projection.database_by_name(db)
            table = self.replica.projection.table_by_name(found.db_id, name) if found else None
        assert table is not None
        return table

    def dropped(self, db: str, name: str) -> TableState:
        self.replica.follower.wait_for_now(30)
        with self.replica.projection.lock:
            found = self.replica.projection.database_by_name(db)
            table = self.replica.projection.table_by_name(found.db_id, name, dropped=True) if found else None
        assert table is not None
        return table

    def purge(self, db: str, name: str) -> None:
        """Purges the dropped table `db.name` once its window passed, then sweeps orphan files."""
        self.recycler.purge_if_expired(self.dropped(db, name))
        self.replica.follower.wait_for_now(30)
        # Half a second of grace: a file another writer is about to commit is left alone.
        replace(self.recycler, grace_s=0.5).remove_orphans()

    def recycle(self, db: str, name: str) -> int:
        """One pass over `db.name` only: other tests' tables keep their history."""
        return self.recycler.recycle_table(self.table(db, name))

    def files(self, db: str, name: str) -> set[Path]:
        """The files of every rowset the log still names for the table, stale ones included."""
        table_id = self.table(db, name).table_id
        with self.replica.projection.lock:
            records = list(self.replica.projection.rowset_records(table_id))
        return {self.recycler.tiers.locate(r.rowset.tier, r.rowset.path) for r in records}


@pytest.fixture
def recycling() -> Iterator[Recycling]:
    """An in-process recycler with no grace and a one-second day, on its own replica of the log."""
    config = load_settings()
    replica = Replica.open(config, Path(tempfile.mkdtemp(prefix="tags-")), f"tags-{uuid.uuid4().hex[:6]}")
    try:
        yield Recycling(replica, Recycler(replica.projection, replica.proposer, LocalTiers.from_config(config),
                                          RemoteStores(replica.projection, config), grace_s=0.0, day_s=1.0))
    finally:
        replica.close()


