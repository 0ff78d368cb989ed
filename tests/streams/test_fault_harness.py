"""The fault harness, short: ~75 s of a mixed workload (labelled INSERTs, UPDATEs, DELETEs, ADMIN
COMPACT, cooldowns, ADD/DROP COLUMN, RESTORE, a routine load fed by a producer) while the worker, the
SQL server, the Kafka broker and MinIO are each `kill -9`ed at least once and restarted. Nothing
acknowledged is lost, nothing is applied twice, every recorded instant reads what the oracle held,
and the SQL server's projection equals a fresh replay. See bench/fault_harness.py."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from bench.fault_harness import KINDS, HarnessConfig, Stack, run_harness
from schemas.config import REPO_ROOT, load_settings

pytestmark = pytest.mark.integration


@pytest.mark.timeout(900)
def test_a_mixed_workload_survives_kill_9_of_every_process() -> None:
    s = load_settings()
    t0 = time.monotonic()
    try:
        result = run_harness(s, HarnessConfig(duration_s=75, faults=5, keys=30, down_max_s=3.0))
    finally:
        subprocess.run([str(REPO_ROOT / "infra" / "up"), "--detach"], cwd=REPO_ROOT, capture_output=True,
                       timeout=400)
        Stack(s).wait_healthy()
    print(json.dumps(result, default=str))
    print(f"fault harness: {time.monotonic() - t0:.0f} s")
    assert all(result["faults"]["by_kind"].get(k, 0) >= 1 for k in KINDS), result["faults"]
    assert result["rows_lost"] == 0, result
    assert result["duplicates"] == 0, result
    assert result["mismatches"] == 0, result
    assert not result["operations"]["gave_up"], result["operations"]
    assert result["feed"]["acked"] > 0 and result["main"]["instants_checked"] > 0, result
    assert result["replay"]["checksum_equal"], result["replay"]
