"""The `strata` console command: status of the stack, projection replay and checksums."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from infra.cli_util import guarded
from infra.health import probe
from schemas.config import Settings, settings

console = Console()


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


def replay(s: Settings, into: Path) -> int:
    from projections.replay import replay as run_replay

    with Progress(TextColumn("replaying strata.events"), BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), console=console) as bar:
        task = bar.add_task("replay", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        result = run_replay(s, into, progress)
    print(json.dumps({"projection": str(result.path), "events": result.events,
                              "seconds": round(result.seconds, 3),
                              "events_per_second": round(result.events_per_second),
                              "decode_errors": result.decode_errors, "checksum": result.checksum}))
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
    replay_cmd.add_argument("--into", type=Path, help="projection directory (default: <home>/state/replay)")
    checksum_cmd = sub.add_parser("checksum", help="digest of a projection (same after a replay)")
    checksum_cmd.add_argument("path", type=Path, nargs="?",
                              help="projection directory (default: the SQL server's replica)")
    args = parser.parse_args(argv)

    def run() -> int:
        s = settings()
        if args.command == "status":
            return status(s)
        if args.command == "replay":
            return replay(s, args.into or s.state_dir / "replay")
        return checksum(args.path or s.state_dir / f"sql-{s.sql_port}")

    return guarded(run)


if __name__ == "__main__":
    sys.exit(main())
