"""Runs a dbt project's steps in one process of the dbt virtualenv (tests/clients/test_dbt.py), so dbt
starts once rather than once per command; writes one JSON list to the output file (dbt logs to
stdout): each step's outcome and seconds.

Usage: python run_project.py <project dir> <profiles dir> <steps JSON> <output file>
A step is ["dbt", arg, …] (a dbt command line) or ["sql", statement] (run through the profile's
connection settings with mysql-connector-python, which dbt-doris itself uses)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

# No anonymous usage events and no version check: each would wait on a network this machine lacks.
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("DBT_VERSION_CHECK", "false")

import mysql.connector  # noqa: E402
import yaml  # noqa: E402
from dbt.cli.main import dbtRunner  # noqa: E402


def _connection(profiles: Path) -> Any:
    profile = yaml.safe_load((profiles / "profiles.yml").read_text())["strata"]["outputs"]["dev"]
    return mysql.connector.connect(host=profile["host"], port=profile["port"], user=profile["username"],
                                   password=profile["password"], database=profile["schema"], autocommit=True)


def main() -> None:
    project, profiles, steps = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3])
    runner = dbtRunner()
    outcomes: list[dict[str, Any]] = []
    for step in steps:
        started = time.monotonic()
        outcomes.append(_run_step(runner, project, profiles, step))
        outcomes[-1]["seconds"] = round(time.monotonic() - started, 1)
    Path(sys.argv[4]).write_text(json.dumps(outcomes))


def _run_step(runner: dbtRunner, project: Path, profiles: Path, step: list[str]) -> dict[str, Any]:
    if step[0] == "sql":
        conn = _connection(profiles)
        try:
            conn.cursor().execute(step[1])
            return {"step": step, "success": True}
        except mysql.connector.Error as exc:
            return {"step": step, "success": False, "error": str(exc)}
        finally:
            conn.close()
    result = runner.invoke([*step[1:], "--project-dir", str(project), "--profiles-dir", str(profiles)])
    nodes = [{"name": node.node.name, "status": str(node.status), "message": node.message}
             for node in getattr(result.result, "results", None) or []]
    return {"step": step, "success": bool(result.success), "nodes": nodes,
            "error": str(result.exception) if result.exception else None}


if __name__ == "__main__":
    main()
