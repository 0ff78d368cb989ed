"""Time-travel snapshot resolution: `projections.snapshot.resolve(projection, table, ts)` at random
past instants, on tables with 1k, 10k and 100k commits (no stack: the histories are folded
straight into a Projection in a temp dir).

    .venv/bin/python -m bench.tt_resolution [--sizes 1000,10000,100000] [--partitions 4] [--buckets 2]
                                            [--instants 200] [--slow-instants 20] [--seed 7]

The table: Duplicate Key, time travel on, `--partitions` partitions × `--buckets` buckets. Commit i
(at T0 + 10·i ms) loads one partition (i mod partitions) with one rowset per bucket, so each
partition's version index holds commits/partitions entries and each tablet as many rowsets.
Three layouts of the same commits, each its own Projection:

- `auto_compacted` (the goal's layout): after every commit, each touched tablet is compacted the
  way the worker's agent does it (`projections.compaction.due`/`plan`: cumulative when the live
  cover has ≥ 5 rowsets — merging every live rowset above the base — base when it has > 20), the
  inputs becoming stale (kept: time travel is on). The cover at any past version is then a few
  rowsets, whatever the history's length.
- `base_compacted`: the history loaded uncompacted, then one base CompactionCommitted per tablet
  whose output covers versions [1, V − 4] (all but its last 4), every input stale. Instants after
  that output's end (`after_compaction`) are covered by it; instants before it (`uniform`) can only
  be served by the single-version rowsets, so their cover is O(versions) — a fact of the layout.
- `uncompacted`: every commit its own rowset; the cover at version V is V rowsets per tablet.

Per layout: p50/p99 of resolve() over random instants (uniform over the history; `--slow-instants`
of them where the cover is O(versions)), the mean cover size, resolve() at the latest state, and
`Projection.version_at` alone (one partition's version-index seek).
Goal: auto_compacted resolve p99 < 5 ms at the largest size and flat across sizes (p50 at the
largest ≤ 2× p50 at the smallest). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.stack import BENCH_HOME, emit, log, machine, percentiles_ms
from projections.compaction import BASE_TRIGGER, CUMULATIVE_TRIGGER, Kind
from projections.projection import Projection
from projections.snapshot import resolve
from schemas import events as ev
from schemas.envelope import wrap_event
from schemas.model import Column, Distribution, Partition, PartitionBound, Rowset, TableSchema

TOPIC = "strata.events"
T0_MS = 1_780_000_000_000  # 2026-05-28: any fixed instant; the fold never reads the wall clock
STEP_MS = 10
FLUSH_EVERY = 4000
GOAL_P99_MS = 5.0
FLAT_FACTOR = 2.0
LAYOUTS = ("auto_compacted", "base_compacted", "uncompacted")
TAIL_VERSIONS = 4


def _rowset(rowset_id: str, pid: int, bucket: int, start: int, end: int, ts: int) -> Rowset:
    return Rowset(rowset_id=rowset_id, partition_id=pid, bucket=bucket, num_rows=1, size_bytes=1000,
                  path=f"t/1/{pid}/{bucket}/{rowset_id}.parquet", schema_version=1, checksum="0" * 64,
                  start_version=start, end_version=end, visible_ts_ms=ts)


@dataclass
class Folder:
    projection: Projection
    offset: int = 0
    events: int = 0
    compactions: int = 0
    # (pid, bucket) → the tablet's live cover as (start, end, rowset_id), for the emulated agent.
    live: dict[tuple[int, int], list[tuple[int, int, str]]] = field(default_factory=dict)

    def apply(self, payload: ev.Event, ts: int) -> None:
        envelope = wrap_event(payload, table_id=getattr(payload, "table_id", None), commit_ts_ms=ts,
                              command_id=None, event_id=f"e{self.offset}")
        self.projection.apply(envelope, TOPIC, 0, self.offset)
        self.offset += 1
        self.events += 1
        if self.events % FLUSH_EVERY == 0:
            self.projection.flush()


def _create(folder: Folder, partitions: int, buckets: int) -> None:
    schema = TableSchema(schema_version=1, columns=(Column(unique_id=1, name="k", type="BIGINT", is_key=True),
                                                     Column(unique_id=2, name="v", type="BIGINT")))
    parts = tuple(Partition(partition_id=pid, name=f"p{pid}", buckets=buckets,
                            bound=PartitionBound(lower=(str((pid - 1) * 1000),), upper=(str(pid * 1000),)))
                  for pid in range(1, partitions + 1))
    folder.apply(ev.DatabaseCreated(db_id=1, name="bench"), T0_MS - 2)
    folder.apply(ev.TableCreated(db_id=1, table_id=1, name="t", keys_model="DUPLICATE", table_schema=schema,
                                 partition_kind="RANGE", partition_columns=("k",), partitions=parts,
                                 distribution=Distribution(columns=("k",), buckets=buckets),
                                 properties={"enable_time_travel": "true", "replication_num": "1"},
                                 next_column_id=3), T0_MS - 1)


def _auto_compact(folder: Folder, pid: int, bucket: int, ts: int) -> None:
    """What the compaction agent would commit for this tablet now (same triggers as `due`/`plan`)."""
    live = folder.live[(pid, bucket)]
    while True:
        kind: Kind
        if len(live) > BASE_TRIGGER:
            first = 0
            kind = "base"
        elif len(live) >= CUMULATIVE_TRIGGER:
            first = 1 if live[0][0] == 1 else 0
            kind = "cumulative"
        else:
            return
        run = live[first:]
        if len(run) < 2:
            return
        folder.compactions += 1
        out_id = f"c{pid}b{bucket}n{folder.compactions}"
        output = _rowset(out_id, pid, bucket, run[0][0], run[-1][1], ts)
        folder.apply(ev.CompactionCommitted(table_id=1, partition_id=pid, bucket=bucket, kind=kind,
                                            input_rowset_ids=tuple(r[2] for r in run), output=output), ts)
        live[first:] = [(run[0][0], run[-1][1], out_id)]


def build(path: Path, layout: str, commits: int, partitions: int, buckets: int) -> tuple[Projection, dict]:
    t0 = time.perf_counter()
    folder = Folder(Projection(path))
    _create(folder, partitions, buckets)
    versions = dict.fromkeys(range(1, partitions + 1), 0)
    folder.live = {(p, b): [] for p in versions for b in range(buckets)}
    for i in range(commits):
        pid = i % partitions + 1
        versions[pid] += 1
        v = versions[pid]
        ts = T0_MS + STEP_MS * i
        rowsets = tuple(_rowset(f"r{pid}b{b}v{v}", pid, b, v, v, ts) for b in range(buckets))
        folder.apply(ev.RowsetsCommitted(table_id=1, commit_number=i + 1, label=f"l{i}", partition_versions={pid: v},
                                         rowsets=rowsets, num_rows=buckets), ts)
        if layout == "auto_compacted":
            for b in range(buckets):
                folder.live[(pid, b)].append((v, v, f"r{pid}b{b}v{v}"))
                _auto_compact(folder, pid, b, ts + 1 + b)
    compacted_to: dict[int, int] = {}
    if layout == "base_compacted":
        ts = T0_MS + STEP_MS * commits
        for pid, top in versions.items():
            end = max(1, top - TAIL_VERSIONS)
            compacted_to[pid] = end
            for b in range(buckets):
                folder.compactions += 1
                output = _rowset(f"c{pid}b{b}base", pid, b, 1, end, ts)
                folder.apply(ev.CompactionCommitted(
                    table_id=1, partition_id=pid, bucket=b, kind="base",
                    input_rowset_ids=tuple(f"r{pid}b{b}v{v}" for v in range(1, end + 1)), output=output), ts)
                ts += 1
    folder.projection.flush()
    info = {"build_s": round(time.perf_counter() - t0, 2), "events": folder.events,
            "compaction_events": folder.compactions, "partition_versions": versions,
            "last_commit_ts_ms": T0_MS + STEP_MS * (commits - 1)}
    if compacted_to:
        info["compacted_to_version"] = compacted_to
    return folder.projection, info


def time_resolve(projection: Projection, instants: list[int]) -> dict:
    table = projection.tables[1]
    resolve(projection, table, instants[0])  # warm the block cache / code paths
    samples, covers = [], []
    for ts in instants:
        t0 = time.perf_counter()
        snap = resolve(projection, table, ts)
        samples.append(time.perf_counter() - t0)
        covers.append(len(snap.rowsets))
    return {**percentiles_ms(samples), "mean_cover_rowsets": round(sum(covers) / len(covers), 1),
            "max_cover_rowsets": max(covers)}


def time_version_at(projection: Projection, instants: list[int], partitions: int, rng: random.Random) -> dict:
    samples = []
    for ts in instants:
        pid = rng.randint(1, partitions)
        t0 = time.perf_counter()
        projection.version_at(1, pid, ts)
        samples.append(time.perf_counter() - t0)
    return percentiles_ms(samples)


def measure(path: Path, layout: str, commits: int, args: argparse.Namespace) -> dict:
    projection, info = build(path, layout, commits, args.partitions, args.buckets)
    try:
        rng = random.Random(args.seed * 1_000_003 + commits)
        last = info["last_commit_ts_ms"]
        slow = layout != "auto_compacted"
        n = min(args.instants, args.slow_instants) if slow else args.instants
        uniform = [rng.randint(T0_MS, last) for _ in range(n)]
        result = {**info, "uniform": time_resolve(projection, uniform)}
        if layout == "base_compacted":
            # Instants after every partition's compacted end: the last TAIL_VERSIONS commits per partition.
            start = last - STEP_MS * (TAIL_VERSIONS * args.partitions - 1)
            result["after_compaction"] = time_resolve(projection, [rng.randint(start, last)
                                                                   for _ in range(args.instants)])
        table = projection.tables[1]
        latest: list[float] = []
        while len(latest) < (20 if sum(latest) < 0.05 else 3):  # 3 runs when one takes > 50 ms
            t0 = time.perf_counter()
            snap = resolve(projection, table, None)
            latest.append(time.perf_counter() - t0)
        result["latest"] = {**percentiles_ms(latest), "cover_rowsets": len(snap.rowsets)}
        va_instants = [rng.randint(T0_MS, last) for _ in range(max(args.instants, 1000))]
        result["version_at"] = time_version_at(projection, va_instants, args.partitions, rng)
        return result
    finally:
        projection.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000", help="commits per table, comma-separated")
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--buckets", type=int, default=2)
    ap.add_argument("--instants", type=int, default=200, help="random instants per layout and size")
    ap.add_argument("--slow-instants", type=int, default=20,
                    help="instants for the layouts whose cover is O(versions) (uniform instants)")
    ap.add_argument("--layouts", default=",".join(LAYOUTS))
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--keep-stack", action="store_true", help="accepted for uniformity; no stack is used")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    layouts = [x for x in args.layouts.split(",") if x]
    unknown = set(layouts) - set(LAYOUTS)
    if unknown:
        raise SystemExit(f"bench/tt_resolution: unknown layouts {sorted(unknown)}")

    root = BENCH_HOME / "tmp"
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="tt_resolution_", dir=root))
    results: dict[str, dict[str, dict]] = {layout: {} for layout in layouts}
    try:
        for commits in sizes:
            for layout in layouts:
                log(f"tt_resolution: {layout}, {commits:,} commits: folding …")
                out = measure(tmp / f"{layout}_{commits}", layout, commits, args)
                results[layout][str(commits)] = out
                log(f"tt_resolution: {layout}, {commits:,} commits: built in {out['build_s']} s; resolve p50 "
                    f"{out['uniform']['p50_ms']} ms p99 {out['uniform']['p99_ms']} ms "
                    f"(cover {out['uniform']['mean_cover_rowsets']} rowsets), version_at p50 "
                    f"{out['version_at']['p50_ms']} ms")
                shutil.rmtree(tmp / f"{layout}_{commits}", ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    goal_met = None
    flat = None
    if "auto_compacted" in results and sizes:
        auto = results["auto_compacted"]
        small, large = auto[str(min(sizes))]["uniform"], auto[str(max(sizes))]["uniform"]
        flat = round(large["p50_ms"] / small["p50_ms"], 2) if small["p50_ms"] else None
        goal_met = bool(large["p99_ms"] < GOAL_P99_MS and flat is not None and flat <= FLAT_FACTOR)
    emit({
        "bench": "tt_resolution",
        "goal": f"auto_compacted: resolve(projection, table, ts) p99 < {GOAL_P99_MS} ms at {max(sizes):,} commits "
                f"and flat across sizes (p50 largest / p50 smallest <= {FLAT_FACTOR})",
        "goal_met": goal_met,
        "auto_compacted_p50_growth_largest_over_smallest": flat,
        "results": results,
        "sizes": {"commits": sizes, "partitions": args.partitions, "buckets": args.buckets,
                  "tablets": args.partitions * args.buckets, "instants": args.instants,
                  "slow_instants": args.slow_instants, "commit_spacing_ms": STEP_MS,
                  "commit_shape": "each commit loads one partition (round robin), one rowset per bucket",
                  "triggers": {"cumulative_at_live_rowsets": CUMULATIVE_TRIGGER, "base_above": BASE_TRIGGER},
                  "seed": args.seed},
        "machine": machine(),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
