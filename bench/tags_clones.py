"""What a tag costs in storage and what a zero-copy clone saves in time, through the SQL port.

    .venv/bin/python -m bench.tags_clones [--rows 1000000] [--commits 10] [--churn 0.1] [--runs 3]
                                          [--keep-stack]

A Unique Key table without time travel (a tag is how such a table keeps a past) gets --rows rows in
--commits `INSERT … SELECT`s. Then, side by side:
- **clone vs CTAS**: p50 of --runs `CREATE TABLE c CLONE t` against `CREATE TABLE c AS SELECT * FROM t`
  of the same snapshot (and the same two for the tag's snapshot), each checked by count and sum, with the
  bytes of new files each writes.
- **a tag's storage**: `ALTER TABLE t CREATE TAG snap`, then --churn of the keys upserted and a base
  compaction, then a recycler pass (in this process, no grace: the table keeps no other past). The
  bytes kept only for the tag (rowsets the live table no longer reads) against a full copy of the tagged
  snapshot (a CTAS of `FOR TAG AS OF 'snap'`) and against the live table's bytes. A second case upserts
  without compacting: the tag then shares every file with the live table and keeps nothing extra.
Bytes are the files' sizes on disk, read from the SQL server's projection. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.stack import (
    add_stack_args,
    bench_stack,
    create_table_sql,
    emit,
    find_table,
    fresh_database,
    log,
    machine,
    percentiles_ms,
    sql_connect,
    sql_projection_path,
)
from bench.tt_vs_delta import compact, timed
from schemas.config import Settings

if TYPE_CHECKING:  # imported where used: the replica starts only once the stack is up
    from streams.recycler import Recycler

SEED = 1000


def file_bytes(s: Settings, db: str, table: str) -> dict[str, int]:
    """Bytes and counts of a table's files that it holds itself (a clone's shared files are its source's):
    `live` the rowsets the latest snapshot reads, `kept` the stale ones not recycled yet."""
    from projections.projection import Projection
    from storage.tiers import LocalTiers

    tiers = LocalTiers.from_config(s)
    projection = Projection(sql_projection_path(s), read_only=True)
    try:
        found = find_table(projection, db, table)
        out = {"live_bytes": 0, "live_files": 0, "kept_bytes": 0, "kept_files": 0, "shared_files": 0}
        for record in projection.rowset_records(found.table_id):
            rowset = record.rowset
            if rowset.shared_file is not None:
                out["shared_files"] += 1
                continue
            kind = "live" if record.stale_ts_ms is None else "kept"
            out[f"{kind}_bytes"] += os.path.getsize(tiers.locate(rowset.tier, rowset.path))
            out[f"{kind}_files"] += 1
        return out
    finally:
        projection.close()


def recycle_once(cur: Any, recycler: Recycler, db: str, table: str) -> int:
    """One pass of `recycler` over `table`; returns once the SQL server has applied it."""
    with recycler.projection.lock:
        found = find_table(recycler.projection, db, table)
    recycled = recycler.recycle_table(found)
    cur.execute(f"SELECT count(*) FROM {table}")  # a statement catches the server up with the log
    cur.fetchall()
    return recycled


@contextlib.contextmanager
def no_grace_recycler(s: Settings) -> Iterator[Recycler]:
    """A recycler in this process with no grace (the stack's worker waits 120 s), on its own replica."""
    from projections.remote import RemoteStores
    from projections.replica import Replica
    from storage.tiers import LocalTiers
    from streams.recycler import Recycler

    replica = Replica.open(s, Path(tempfile.mkdtemp(prefix="bench-tags-recycler-")), "bench-tags-recycler")
    try:
        yield Recycler(replica.projection, replica.proposer, LocalTiers.from_config(s),
                       RemoteStores(replica.projection, s), grace_s=0.0, day_s=1.0)
    finally:
        replica.close()


def copies(cur: Any, s: Settings, db: str, source: str, runs: int) -> dict[str, Any]:
    """p50 of CLONE against CTAS of `source` (a clause after the table name), checked by count and sum."""
    out: dict[str, Any] = {}
    expected = timed(cur, f"SELECT count(*), sum(v) FROM t{source}")[1]
    for kind, ddl in (("clone", "CREATE TABLE {name} CLONE t{source}"),
                      ("ctas", "CREATE TABLE {name} AS SELECT * FROM t{source}")):
        samples = []
        for run in range(runs):
            name = f"{kind}_{run}_{time.monotonic_ns()}"
            samples.append(timed(cur, ddl.format(name=name, source=source))[0])
            got = timed(cur, f"SELECT count(*), sum(v) FROM {name}")[1]
            assert got == expected, f"{kind} of t{source}: {got} != {expected}"
            written = file_bytes(s, db, name)
            cur.execute(f"DROP TABLE {name} FORCE")
        out[kind] = {**percentiles_ms(samples), "new_file_bytes": written["live_bytes"],
                     "new_files": written["live_files"], "shared_files": written["shared_files"]}
    out["ctas_over_clone_p50"] = round(out["ctas"]["p50_ms"] / max(out["clone"]["p50_ms"], 0.001), 1)
    out["rows"] = [int(x) for x in expected[0]]
    return out


def load(cur: Any, rows: int, commits: int) -> None:
    per = -(-rows // commits)
    for c in range(commits):
        n = min(per, rows - c * per)
        cur.execute(f"INSERT INTO t SELECT {c * per} + a.k * 1000 + b.k, a.k * 1000 + b.k "
                    f"FROM seed a, seed b WHERE a.k * 1000 + b.k < {n}")


def upsert(cur: Any, rows: int, churn: float, shift: int) -> None:
    """Rewrites every (1/churn)-th key with a new value (Unique Key: the old row is superseded)."""
    step = max(1, round(1 / churn))
    cur.execute(f"INSERT INTO t SELECT k, v + {shift} FROM t WHERE k % {step} = 0")


def tag_storage(cur: Any, s: Settings, recycler: Recycler, db: str, rows: int, churn: float,
                compacted: bool) -> dict[str, Any]:
    tag = f"snap_{'compacted' if compacted else 'appended'}"
    cur.execute(f"ALTER TABLE t CREATE TAG {tag}")
    upsert(cur, rows, churn, 1_000_000_000)
    compaction = compact(cur, db, 1, 600, "tags_clones") if compacted else None
    recycled = recycle_once(cur, recycler, db, "t")
    kept = file_bytes(s, db, "t")
    copy_name = f"copy_{tag}"
    cur.execute(f"CREATE TABLE {copy_name} AS SELECT * FROM t FOR TAG AS OF '{tag}'")
    full_copy = file_bytes(s, db, copy_name)["live_bytes"]
    tagged = timed(cur, f"SELECT count(*), sum(v) FROM t FOR TAG AS OF '{tag}'")[1]
    copied = timed(cur, f"SELECT count(*), sum(v) FROM {copy_name}")[1]
    assert tagged == copied, f"the copy of tag {tag} reads {copied}, the tag {tagged}"
    cur.execute(f"DROP TABLE {copy_name} FORCE")
    cur.execute(f"ALTER TABLE t DROP TAG {tag}")
    return {"churn": churn, "compacted": compacted, "rowsets_recycled": recycled,
            "tag_kept_bytes": kept["kept_bytes"], "tag_kept_files": kept["kept_files"],
            "live_bytes": kept["live_bytes"], "full_copy_bytes": full_copy,
            "tag_over_full_copy": round(kept["kept_bytes"] / max(full_copy, 1), 3),
            "compaction": compaction}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--commits", type=int, default=10)
    ap.add_argument("--churn", type=float, default=0.1, help="share of keys upserted after the tag")
    ap.add_argument("--runs", type=int, default=3)
    add_stack_args(ap)
    args = ap.parse_args(argv)
    if not 0 < args.churn <= 1 or args.rows > args.commits * SEED * SEED:
        raise SystemExit("bench/tags_clones: --churn in (0, 1], at most 1M rows per commit")

    with bench_stack(args.keep_stack) as s:
        db = fresh_database(s, "bench_tags")
        conn = sql_connect(s, db)
        cur = conn.cursor()
        cur.execute(create_table_sql("seed", "DUPLICATE"))
        cur.execute("INSERT INTO seed VALUES " + ", ".join(f"({i}, 0)" for i in range(SEED)))
        cur.execute(create_table_sql("t", "UNIQUE"))
        t0 = time.perf_counter()
        load(cur, args.rows, args.commits)
        load_s = time.perf_counter() - t0
        log(f"tags_clones: {args.rows} rows in {args.commits} commits, {load_s:.1f} s")
        cur.execute("ALTER TABLE t CREATE TAG first")
        clone_tag = copies(cur, s, db, " FOR TAG AS OF 'first'", args.runs)
        cur.execute("ALTER TABLE t DROP TAG first")  # the storage cases below measure one tag at a time
        clone_now = copies(cur, s, db, "", args.runs)
        log(f"tags_clones: clone {clone_now['clone']['p50_ms']} ms, CTAS {clone_now['ctas']['p50_ms']} ms")
        with no_grace_recycler(s) as recycler:
            appended = tag_storage(cur, s, recycler, db, args.rows, args.churn, compacted=False)
            compacted = tag_storage(cur, s, recycler, db, args.rows, args.churn, compacted=True)
        conn.close()

    clones_free = all(c["clone"]["new_files"] == 0 for c in (clone_now, clone_tag))
    emit({
        "bench": "tags_clones",
        "goal": "a clone writes no file and is made faster than a CTAS of the same snapshot; a tag keeps no "
                "bytes beyond retention while the table only grows (it shares the live files)",
        "goal_met": bool(clones_free and clone_now["ctas_over_clone_p50"] > 1
                         and appended["tag_kept_bytes"] == 0),
        "clone_vs_ctas_latest": clone_now,
        "clone_vs_ctas_of_a_tag": clone_tag,
        "tag_storage_upserts_only": appended,
        "tag_storage_after_compaction": compacted,
        "load_s": round(load_s, 2),
        "sizes": {"rows": args.rows, "commits": args.commits, "churn": args.churn, "runs": args.runs,
                  "table": "UNIQUE KEY(k) (k BIGINT, v BIGINT), 1 bucket, no time travel", "database": db},
        "machine": machine(),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
