"""Running a client-matrix program written in another language (Java, Node) and reading its results.

Each program prints one JSON object: check name to ``{"value": …}`` or ``{"error": {…}}``. The tests
compare the values exactly; a check that errored fails with the driver's own error.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

Results = dict[str, dict[str, Any]]


def run_program(cmd: list[str], env: dict[str, str] | None = None, timeout_s: float = 180) -> Results:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout_s)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise AssertionError(f"{cmd[0]} exited {proc.returncode}:\n{proc.stderr.strip()[-3000:]}")
    results: Results = json.loads(proc.stdout.strip().splitlines()[-1])
    return results


def value(results: Results, check: str) -> Any:
    """The check's value; an AssertionError with the client's error when it failed or never ran."""
    if check not in results:
        raise AssertionError(f"{check} did not run (an earlier step failed): {json.dumps(results)[:1500]}")
    outcome = results[check]
    if "error" in outcome:
        raise AssertionError(f"{check} failed in the client: {outcome['error']}")
    return outcome["value"]
