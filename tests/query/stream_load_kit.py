"""Driving Stream Load as Doris users do: curl (`--location-trusted -u user: -T file`) against the
SQL server's HTTP port; the answer is Doris' JSON reply."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from schemas.config import load_settings


def http_base() -> str:
    return f"http://127.0.0.1:{load_settings().http_port}"


def curl_load(path: Path, db: str, table: str, headers: dict[str, str] | None = None, *,
              user: str = "root", password: str = "", base: str | None = None) -> dict[str, Any]:
    """`curl --location-trusted -u user:password -T path -H k:v … …/api/db/table/_stream_load`."""
    args = ["curl", "-sS", "--location-trusted", "-u", f"{user}:{password}", "-T", str(path)]
    for key, value in (headers or {}).items():
        args += ["-H", f"{key}:{value}"]
    args.append(f"{base or http_base()}/api/{db}/{table}/_stream_load")
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=True)
    reply: dict[str, Any] = json.loads(done.stdout)
    return reply


def curl_2pc(db: str, operation: str, *, txn_id: int | None = None, label: str | None = None,
             user: str = "root", password: str = "") -> dict[str, Any]:
    """`curl -X PUT -H txn_id:… (or label:…) -H txn_operation:commit|abort …/api/db/_stream_load_2pc`."""
    named = f"txn_id:{txn_id}" if txn_id is not None else f"label:{label}"
    args = ["curl", "-sS", "--location-trusted", "-u", f"{user}:{password}", "-X", "PUT", "-H", named,
            "-H", f"txn_operation:{operation}", f"{http_base()}/api/{db}/_stream_load_2pc"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=True)
    reply: dict[str, Any] = json.loads(done.stdout)
    return reply


def fetch(url: str) -> str:
    done = subprocess.run(["curl", "-sS", "--fail", url], capture_output=True, text=True, timeout=60, check=True)
    return done.stdout
