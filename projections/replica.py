"""A writer's own projection replica: the fold, the follower feeding it, and the proposer whose
answers the follower delivers. The SQL server, the worker's agents and tests all need the three
wired the same way."""

from __future__ import annotations

import logging
import shutil
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from projections import checkpoints
from projections.follower import EventFollower
from projections.projection import Projection
from projections.proposer import Proposer
from schemas.config import Settings

log = logging.getLogger(__name__)


@dataclass
class Replica:
    projection: Projection
    follower: EventFollower
    proposer: Proposer
    # The checkpoint this replica started from (projections.checkpoints); None: its own state or offset 0.
    restored: checkpoints.Manifest | None = None

    @classmethod
    def open(cls, config: Settings, path: Path, name: str, *, catch_up_timeout: float = 300.0,
             restoring: Future[checkpoints.Manifest | None] | None = None) -> Replica:
        """Opens the projection at `path` (an empty one first restored from the newest checkpoint,
        when there is one), catches it up with the log, and keeps it following. `restoring`: that
        restore, already begun by the caller (`checkpoints.prefetch`); it is waited for here."""
        if restoring is not None:
            restored = restoring.result()
        else:
            restored = checkpoints.restore(config, path) if config.projection_snapshot_restore else None
        projection = Projection(path)
        proposer = Proposer(config, origin=name)
        follower = EventFollower(projection, config, name=name, listener=proposer.on_event)
        if restored is not None and not _within(follower):
            # A checkpoint of another log (the topic was recreated): its offsets name events this
            # log never had. Only a fold from offset 0 is right.
            log.warning("projection %s: checkpoint %s is past the end of %s; folding the log from offset 0",
                        name, restored.key, follower.topic)
            follower.stop()
            projection.close()
            shutil.rmtree(path)
            restored = None
            projection = Projection(path)
            follower = EventFollower(projection, config, name=name, listener=proposer.on_event)
        follower.catch_up(timeout=catch_up_timeout)
        follower.start()
        return cls(projection, follower, proposer, restored)

    def close(self) -> None:
        self.follower.stop()
        self.projection.close()


def _within(follower: EventFollower) -> bool:
    ends = follower.end_offsets()
    return all(offset <= ends.get(partition, 0)
               for (topic, partition), offset in follower.projection.offsets().items() if topic == follower.topic)
