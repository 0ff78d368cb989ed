"""The worker's background agents and the projection replica they share.

Each agent is a periodic sweep over the replica (fed from `strata.events` by its follower);
every change an agent makes goes through `strata.commands`, like any other writer's. With several
workers, each does the share `streams.ownership.WorkShare` gives it: compaction, cooldown and
routine load of the tables it holds; the recycler and the dynamic partition scheduler, which look
at every table, on the leader alone.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from projections.checkpoints import CheckpointWriter
from projections.compaction import Compactor
from projections.cooldown import Cooler
from projections.policy_clock import policy_clock
from projections.remote import open_locator
from projections.replica import Replica
from projections.tablet_locks import TabletLocks
from schemas.config import Settings
from streams.compaction_agent import CompactionAgent
from streams.delete_bitmap_agent import DeleteBitmapAgent
from streams.dynamic_partition_scheduler import DynamicPartitionScheduler
from streams.ownership import WorkShare
from streams.recycler import Recycler
from streams.routine_load_agent import RoutineLoadAgent
from streams.tiering_agent import TieringAgent

log = logging.getLogger(__name__)
# How often jobs are looked over besides on their own events (a task that failed is restarted).
ROUTINE_LOAD_SWEEP_S = 2.0
# Delete bitmaps are computed as soon as a commit is folded (the listener wakes the agent); this is
# only how often it looks when nothing woke it.
DELETE_BITMAP_SWEEP_S = 5.0


class Agents:
    def __init__(self, config: Settings, share: WorkShare) -> None:
        self.config = config
        self.share = share
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.started = False

    def start(self) -> None:
        config = self.config
        name = "worker-agents" + (f"-{config.worker_instance}" if config.worker_instance else "")
        self.replica = Replica.open(config, config.worker_state_dir / "worker-agents", name, catch_up_timeout=600)
        self.projection, self.proposer = self.replica.projection, self.replica.proposer
        self.locator, stores = open_locator(config, self.projection, name)
        share = self.share
        tiers = self.locator.tiers
        for tier in tiers.names():
            tiers.root(tier).mkdir(parents=True, exist_ok=True)
        locks = TabletLocks()  # compaction and cooldown never work on one tablet at once
        self.compaction = CompactionAgent(Compactor(self.projection, self.proposer, self.locator, stores, locks,
                                                    day_s=config.time_travel_day_s), owns=share.owns_table)
        share.add_listener(lambda _slots: self.compaction.rescan())
        self.replica.follower.add_listener(self.compaction.on_event)
        self.delete_bitmaps = DeleteBitmapAgent(self.projection, self.proposer, self.locator, owns=share.owns_table)
        self.replica.follower.add_listener(self.delete_bitmaps.on_event)
        clock = policy_clock(config)
        self.tiering = TieringAgent(Cooler(self.projection, self.proposer, tiers, stores), locks,
                                    local_grace_s=config.cooldown_local_grace_s, clock=clock,
                                    default_cooldown_s=config.storage_cooldown_seconds, owns=share.owns_table)
        share.add_listener(lambda _slots: self.tiering.rescan())
        # Run by the faust app's timer (streams/worker.py), not by a thread of its own.
        self.dynamic_partitions = DynamicPartitionScheduler(self.projection, self.proposer, clock=clock,
                                                            interval_s=config.dynamic_partition_check_interval_s)
        self.replica.follower.add_listener(self.dynamic_partitions.on_event)
        self.replica.follower.add_listener(self.tiering.on_event)
        self.recycler = Recycler(self.projection, self.proposer, tiers, stores, grace_s=config.recycle_grace_s,
                                 day_s=config.time_travel_day_s, recovery_window_s=config.recovery_window_s)
        self.routine_load = RoutineLoadAgent(config, self.replica, tiers, owns=share.owns_table)
        share.add_listener(lambda _slots: self.routine_load.wake.set())
        self.replica.follower.add_listener(self.routine_load.on_event)
        self._every(config.compaction_interval_s, "compaction", self.compaction.sweep, wake=self.compaction.wake)
        self._every(DELETE_BITMAP_SWEEP_S, "delete-bitmaps", self.delete_bitmaps.sweep, wake=self.delete_bitmaps.wake)
        self._every(config.tiering_interval_s, "tiering", self.tiering.sweep, wake=self.tiering.wake)
        self._every(config.recycle_interval_s, "recycler", lambda: self.recycler.sweep() if share.leads() else 0)
        self._every(ROUTINE_LOAD_SWEEP_S, "routine-load", self.routine_load.sweep, wake=self.routine_load.wake)
        if config.projection_snapshot_interval_s > 0:
            # One writer for the cluster: every replica of the log holds the same bytes.
            self.checkpoints = CheckpointWriter(config, self.projection)
            self._every(config.projection_snapshot_interval_s, "projection-checkpoint",
                        lambda: 1 if share.leads() and self.checkpoints.upload() else 0)
        self.routine_load.sweep()
        self.started = True

    def _every(self, interval: float, name: str, sweep: Callable[[], int],
               wake: threading.Event | None = None) -> None:
        """Runs `sweep` every `interval` seconds, or sooner when `wake` is set."""

        def pause() -> bool:
            if wake is None:
                return self._stop.wait(interval)
            wake.wait(interval)
            wake.clear()
            return self._stop.is_set()

        def loop() -> None:
            while not pause():
                try:
                    sweep()
                except Exception:  # noqa: BLE001 - an agent's bad pass must not end the agent
                    log.exception("%s sweep failed; next pass in %.1fs", name, interval)

        thread = threading.Thread(target=loop, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def healthy(self) -> bool:
        return self.started and all(t.is_alive() for t in self._threads)

    def stop(self) -> None:
        self._stop.set()
        if self.started:
            self.routine_load.stop()
            self.replica.close()
