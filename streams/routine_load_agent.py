"""Starts a task thread for every RUNNING routine load job of the log and lets it go when the job
pauses or stops (each task notices by itself and returns). A job is created, resumed or restarted
with the worker simply by being RUNNING in the projection: no schedule lives anywhere else. With
several workers, a job runs on the one holding its table's share (streams.ownership); a task whose
table moved away is stopped (and would be fenced by its transactional.id if it lingered)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from projections.replica import Replica
from schemas import events as ev
from schemas.config import Settings
from schemas.envelope import EventEnvelope
from storage.tiers import LocalTiers
from streams.routine_load_task import RoutineLoadTask


class RoutineLoadAgent:
    def __init__(self, config: Settings, replica: Replica, tiers: LocalTiers,
                 owns: Callable[[int], bool] = lambda _table_id: True) -> None:
        self.config, self.replica, self.projection, self.tiers = config, replica, replica.projection, tiers
        self.owns = owns
        self.wake = threading.Event()
        self._stop = threading.Event()
        self._running: dict[str, tuple[RoutineLoadTask, threading.Thread]] = {}
        self._finished_rows = 0
        self._finished_errors = 0

    def on_event(self, envelope: EventEnvelope) -> None:
        if isinstance(envelope.payload, ev.RoutineLoadChanged | ev.TableDropped):
            self.wake.set()

    def sweep(self) -> int:
        """Starts tasks for RUNNING jobs that have none; returns how many started."""
        for key, (task, thread) in list(self._running.items()):
            job = self.projection.routine_loads.get(key)
            if job is None or not self.owns(job.table_id):
                task.stop.set()  # the task returns at its next check; its batch stays unread on the log
            if not thread.is_alive():
                self._finished_rows += task.stats.loaded_rows
                self._finished_errors += task.stats.error_rows
                del self._running[key]
        started = 0
        for key, job in list(self.projection.routine_loads.items()):
            if job.state != "RUNNING" or key in self._running or self._stop.is_set() or not self.owns(job.table_id):
                continue
            task = RoutineLoadTask(self.config, self.replica, self.tiers, key, threading.Event())
            thread = threading.Thread(target=task.run, name=f"routine-load-{job.job_id}", daemon=True)
            thread.start()
            self._running[key] = (task, thread)
            started += 1
        return started

    @property
    def running_tasks(self) -> int:
        return sum(1 for _, thread in self._running.values() if thread.is_alive())

    @property
    def loaded_rows(self) -> int:
        return self._finished_rows + sum(task.stats.loaded_rows for task, _ in self._running.values())

    @property
    def error_rows(self) -> int:
        return self._finished_errors + sum(task.stats.error_rows for task, _ in self._running.values())

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        for task, _ in self._running.values():
            task.stop.set()
        for _, thread in self._running.values():
            thread.join(timeout)
