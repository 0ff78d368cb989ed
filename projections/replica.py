"""A writer's own projection replica: the fold, the follower feeding it, and the proposer whose
answers the follower delivers. The SQL server, the worker's agents and tests all need the three
wired the same way."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from projections.follower import EventFollower
from projections.projection import Projection
from projections.proposer import Proposer
from schemas.config import Settings


@dataclass
class Replica:
    projection: Projection
    follower: EventFollower
    proposer: Proposer

    @classmethod
    def open(cls, config: Settings, path: Path, name: str, *, catch_up_timeout: float = 300.0) -> Replica:
        """Opens the projection at `path`, catches it up with the log, and keeps it following."""
        projection = Projection(path)
        proposer = Proposer(config, origin=name)
        follower = EventFollower(projection, config, name=name, listener=proposer.on_event)
        follower.catch_up(timeout=catch_up_timeout)
        follower.start()
        return cls(projection, follower, proposer)

    def close(self) -> None:
        self.follower.stop()
        self.projection.close()
