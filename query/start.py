"""The SQL server's entry point (`python -m query.start`, the Procfile's `sql`): an empty replica's
checkpoint restore begins before the server's modules are loaded, and goes on while they load.

Loading them (`query.server` and what it imports) takes seconds of CPU; the restore mostly waits on
the object store and the disk. One after the other they add up on a new server's way to its first
answer; side by side, the restore is mostly hidden. `python -m query.server` starts the same server
without the head start.
"""

from __future__ import annotations

import logging

from projections import checkpoints
from schemas.config import ConfigError, Settings, settings

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def replica_name(config: Settings) -> str:
    """The name of the server's projection replica (its folder under the state directory)."""
    return f"sql-{config.sql_port}"


def main() -> None:
    # Before the restore begins: its log lines (restored from …, or why not) must not be lost.
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    try:
        config = settings()
    except ConfigError as exc:
        raise SystemExit(f"strata sql: {exc}") from None
    restoring = None
    if config.projection_snapshot_restore:
        restoring = checkpoints.prefetch(config, config.state_dir / replica_name(config))
    from query import server  # noqa: PLC0415 - loaded while the checkpoint is restored

    server.main(restoring)


if __name__ == "__main__":
    main()
