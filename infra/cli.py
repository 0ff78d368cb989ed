"""The `strata` console command: status of the stack, projection replay and checksums."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from infra.cli_util import guarded
from infra.health import probe
from schemas.config import Settings, settings

if TYPE_CHECKING:
    import pyarrow as pa

    from projections.projection import Projection
    from projections.snapshot import Snapshot
    from schemas.model import Rowset

console = Console()

# Exit code for input the operator must correct (argparse uses the same).
BAD_INPUT = 2


class BadInput(ValueError):
    """An argument the command cannot use; printed in one line, exit code 2."""


def _addresses(s: Settings) -> dict[str, str]:
    return {"kafka": s.kafka_bootstrap, "minio": f"http://{s.minio_endpoint}",
            "worker": f"http://127.0.0.1:{s.worker_port}", "sql": f"mysql://{s.sql_host}:{s.sql_port}"}


def _versions(s: Settings) -> dict[str, str]:
    return {"kafka": s.kafka_version, "minio": s.minio_version, "worker": "strata 0.1.0", "sql": "strata 0.1.0"}


def status(s: Settings) -> int:
    table = Table(title=f"Strata ({s.home})")
    for column in ("component", "state", "address", "version"):
        table.add_column(column)
    unhealthy = 0
    for name, address in _addresses(s).items():
        reason = probe(name, s)
        unhealthy += reason is not None
        table.add_row(name, "[green]up[/]" if reason is None else f"[red]down[/] ({reason})", address,
                      _versions(s)[name])
    console.print(table)
    if probe("kafka", s) is None:
        from infra.topics import admin_client

        topics = sorted(t for t in admin_client(s).list_topics(timeout=5).topics if not t.startswith("__"))
        console.print("Kafka topics: " + ", ".join(topics))
    return 1 if unhealthy else 0


def parse_until(text: str, time_zone: str = "UTC", now_ms: int | None = None) -> int:
    """'YYYY-MM-DD HH:MM:SS[.ffffff]' in `time_zone` → UTC ms, exactly as `FOR TIME AS OF` reads it
    (the SQL layer's own parser, so both name the same millisecond). Refuses an instant in the future:
    the log cannot say yet what the tables will hold then."""
    from query.context import SessionState, SqlFailure
    from query.reads import parse_instant, session_zone

    session = SessionState(variables={"time_zone": time_zone})
    try:
        session_zone(session)
        until_ms = parse_instant(text, session)
    except SqlFailure as failure:
        raise BadInput(f"--until {text!r}: {failure.message}" if "time zone" not in failure.message
                       else f"--time-zone: {failure.message}") from None
    now = int(time.time() * 1000) if now_ms is None else now_ms
    if until_ms > now:
        from projections.replay import format_instant_ms

        raise BadInput(f"--until {text!r} is in the future (now is {format_instant_ms(now)} UTC)")
    return until_ms


def table_at(s: Settings, path: Path, db: str, table: str) -> pa.Table:
    """The rows of `db.table` in the projection at `path` (its latest state — for a `replay --until`
    projection, the table as of that instant), read as the SQL server reads a snapshot."""
    import duckdb

    from projections.projection import Projection
    from projections.remote import open_locator
    from projections.replay import format_instant_ms, until_of
    from projections.snapshot import resolve
    from query.relation import snapshot_sql

    projection = Projection(path, read_only=True)
    try:
        until = until_of(path)
        when = "" if until is None else f" as of {format_instant_ms(until)} UTC"
        database = projection.database_by_name(db)
        if database is None:
            raise BadInput(f"no database {db!r} in {path}{when}")
        found = projection.table_by_name(database.db_id, table)
        if found is None:
            raise BadInput(f"no table {db}.{table} in {path}{when}")
        snapshot = resolve(projection, found)
        live_path = s.state_dir / f"sql-{s.sql_port}"
        live = Projection(live_path, read_only=True) if live_path.exists() and live_path != path else None
        try:
            if live is not None:
                snapshot = _current_locations(snapshot, live)
            # A file cache of its own: a scratch read must not evict or race the servers' caches.
            locator, _ = open_locator(s, live or projection, f"replay-read-{path.name}")
            with duckdb.connect() as duck:
                return duck.sql(snapshot_sql(snapshot, locator)).to_arrow_table()
        finally:
            if live is not None:
                live.close()
    finally:
        projection.close()


def _current_locations(snapshot: Snapshot, live: Projection) -> Snapshot:
    """The snapshot with each rowset where the live catalog says it is now: a rowset cooled to a
    resource (or moved to HDD) after the instant was replayed to is no longer where it was then."""
    def now(rowset: Rowset) -> Rowset:
        record = live.rowset_record(rowset.rowset_id)
        return rowset if record is None else rowset.model_copy(
            update={"tier": record.rowset.tier, "path": record.rowset.path})

    return dataclasses.replace(snapshot, partitions=tuple(
        dataclasses.replace(p, rowsets=tuple(now(r) for r in p.rowsets)) for p in snapshot.partitions))


def _show(data: pa.Table, title: str, tsv: bool) -> None:
    def text(value: Any) -> str:
        return "NULL" if value is None else str(value)

    names = data.column_names
    # Sorted (NULLs first): a snapshot's rows come in file order, which says nothing to an operator.
    records = sorted((tuple(row[n] for n in names) for row in data.to_pylist()),
                     key=lambda r: tuple((v is not None, v) for v in r))
    if tsv:
        print("\t".join(names))
        for record in records:
            print("\t".join(text(v).replace("\t", " ").replace("\n", " ") for v in record))
        return
    console.print(title)  # above, not as the table's title: a narrow table would wrap it
    table = Table()
    for name in names:
        table.add_column(name)
    for record in records:
        table.add_row(*(text(v) for v in record))
    console.print(table)


def replay(s: Settings, into: Path | None, until: str | None = None, time_zone: str | None = None,
           show: str | None = None, tsv: bool = False) -> int:
    from projections.replay import ReplayRefused, until_dir_name
    from projections.replay import replay as run_replay

    try:
        if until is None and (time_zone is not None or show is not None or tsv):
            raise BadInput("--time-zone, --show and --tsv go with --until")
        until_ms = None if until is None else parse_until(until, time_zone or "UTC")
        if show is not None and (show.count(".") != 1 or not all(show.split("."))):
            raise BadInput(f"--show {show!r}: expected db.table")
    except BadInput as bad:
        print(f"strata: {bad}", file=sys.stderr)
        return BAD_INPUT
    if into is None:
        into = s.state_dir / ("replay" if until_ms is None else until_dir_name(until_ms))
    # With --tsv, stdout carries only the rows (for a pipe); the bar and the summary go to stderr.
    out = Console(stderr=True) if tsv else console
    with Progress(TextColumn("replaying strata.events"), BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), console=out) as bar:
        task = bar.add_task("replay", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        try:
            result = run_replay(s, into, progress, until_ms=until_ms)
        except ReplayRefused as refused:
            print(f"strata: {refused}", file=sys.stderr)
            return BAD_INPUT
    summary: dict[str, Any] = {"projection": str(result.path), "events": result.events,
                               "seconds": round(result.seconds, 3),
                               "events_per_second": round(result.events_per_second),
                               "decode_errors": result.decode_errors, "checksum": result.checksum}
    if result.until_ms is not None:
        summary.update(until=until, time_zone=time_zone or "UTC", until_ms=result.until_ms,
                       instant_utc=result.instant, scratch=True)
    print(json.dumps(summary), file=sys.stderr if tsv else sys.stdout, flush=True)
    if show is not None:
        db, name = show.split(".")
        try:
            data = table_at(s, result.path, db, name)
        except BadInput as bad:
            print(f"strata: {bad}", file=sys.stderr)
            return BAD_INPUT
        _show(data, f"{show} as of {result.instant} UTC", tsv)
    return 0


def checksum(path: Path) -> int:
    from projections.replay import checksum as projection_checksum

    if not path.is_dir():
        console.print(f"strata: no projection at {path}")
        return 1
    digest, offsets = projection_checksum(path)
    print(json.dumps({"projection": str(path), "checksum": digest,
                              "offsets": {f"{t}/{p}": o for (t, p), o in sorted(offsets.items())}}))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="strata", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("status", help="each component: up/down, address, version; Kafka topics")
    replay_cmd = sub.add_parser("replay", help="rebuild a projection from offset 0 of strata.events")
    replay_cmd.add_argument("--into", type=Path, help="projection directory (default: <home>/state/replay, "
                            "or <home>/state/replay-until-<instant> with --until)")
    replay_cmd.add_argument("--until", metavar="TS", help="fold only events committed at or before "
                            "'YYYY-MM-DD HH:MM:SS[.ffffff]' (inclusive; what FOR TIME AS OF answers) into a scratch "
                            "projection")
    replay_cmd.add_argument("--time-zone", metavar="TZ", help="zone of --until: +08:00 or a name (default UTC)")
    replay_cmd.add_argument("--show", metavar="DB.TABLE", help="with --until: print the table's rows at that moment")
    replay_cmd.add_argument("--tsv", action="store_true", help="with --show: plain tab-separated rows on stdout")
    checksum_cmd = sub.add_parser("checksum", help="digest of a projection (same after a replay)")
    checksum_cmd.add_argument("path", type=Path, nargs="?",
                              help="projection directory (default: the SQL server's replica)")
    args = parser.parse_args(argv)

    def run() -> int:
        s = settings()
        if args.command == "status":
            return status(s)
        if args.command == "replay":
            return replay(s, args.into, args.until, args.time_zone, args.show, args.tsv)
        return checksum(args.path or s.state_dir / f"sql-{s.sql_port}")

    return guarded(run)


if __name__ == "__main__":
    sys.exit(main())
