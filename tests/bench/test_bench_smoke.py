"""Smoke test: every benchmark runs end to end at a tiny size and prints one JSON object.

They run on the bench stack (var/bench, ports +30000), never the test stack that `infra/test`
starts, so they only run when that stack is already up or STRATA_BENCH_SMOKE=1 is set (then it is
started for the module and stopped after):

    STRATA_BENCH_SMOKE=1 .venv/bin/python -m pytest tests/bench -q

Each benchmark is a subprocess (`python -m bench.<name>`): the benchmarks point os.environ at
the bench stack, which must not leak into other tests of the session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from bench.stack import BENCH_ENV, COMPONENTS
from schemas.config import REPO_ROOT, load_settings

pytestmark = pytest.mark.integration

CASES = [
    ("insert_latency", ["--rows", "5", "--warmup", "1"]),
    ("bulk_insert", ["--rows", "10000"]),
    ("scan", ["--rows", "10000", "--rowsets", "2", "--keys", "5000", "--runs", "2",
              "--models", "DUPLICATE,UNIQUE"]),
    ("replay", ["--commands", "300"]),
    ("fast_start", ["--commands", "300"]),
    ("tt_resolution", ["--sizes", "200,400", "--instants", "10", "--slow-instants", "3"]),
    ("tt_vs_delta", ["--commits", "20", "--runs", "2", "--storage-wait", "0"]),
    ("tt_ratio", ["--commits", "10", "--rows-per-commit", "100", "--runs", "2"]),
    ("cooldown", ["--inserts", "2", "--rows-per-insert", "1000", "--runs", "2"]),
    ("group_commit", ["--clients", "3", "--inserts", "3"]),
    ("concurrent_writers", ["--connections", "1,2", "--seconds", "1"]),
    ("concurrent_writers", ["--connections", "1,2", "--seconds", "1", "--sql-servers", "2"]),
    ("routine_load", ["--rows", "20000", "--lag-records", "20"]),
    ("load", ["--clients", "4", "--duration-s", "5", "--seed-rows", "200"]),
    ("tags_clones", ["--rows", "20000", "--commits", "2", "--runs", "1"]),
    ("bulk_load", ["--rows", "20000", "--values-rows", "10000"]),
    ("insert_values", ["--statements", "4", "--rows-per-statement", "500", "--connections", "2"]),
    ("flight_sql", ["--rows", "20000", "--runs", "1"]),
    ("result_stream", ["--rows", "20000"]),
    ("analytic", ["--lineitem-rows", "20000", "--orders-rows", "5000", "--upserts", "500", "--runs", "1"]),
    ("unique_mow", ["--rows", "20000", "--upserts", "2000", "--upsert-batches", "2", "--runs", "2"]),
    ("catalog_scale", ["--rowsets", "300", "--runs", "2", "--peer-runs", "1", "--cpu-window-s", "1"]),
    ("fault_harness", ["--duration-s", "5", "--faults", "1", "--keys", "10", "--down-max-s", "0.5"]),
]
# The port shift stays: the benchmarks derive BENCH_ENV from it, and must find the stack started here.
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("STRATA_") or k == "STRATA_BENCH_PORT_SHIFT"},
       **BENCH_ENV}


def _bench_stack_up() -> bool:
    from infra.health import probe

    s = load_settings(**{k.removeprefix("STRATA_").lower(): v for k, v in BENCH_ENV.items()})
    return all(probe(n, s) is None for n in COMPONENTS)


@pytest.fixture(scope="module")
def bench_stack_running() -> Iterator[None]:
    if _bench_stack_up():
        yield  # someone runs it: use it, leave it
        return
    if os.environ.get("STRATA_BENCH_SMOKE") != "1":
        pytest.skip("the bench stack (var/bench, SQL 39030) is down; set STRATA_BENCH_SMOKE=1 to start it")
    subprocess.run([str(REPO_ROOT / "infra" / "up"), "--detach"], cwd=REPO_ROOT, env=ENV, check=True,
                   capture_output=True)
    try:
        yield
    finally:
        subprocess.run([str(REPO_ROOT / "infra" / "down")], cwd=REPO_ROOT, env=ENV, capture_output=True)


@pytest.mark.parametrize(("name", "flags"), CASES, ids=[c[0] for c in CASES])
def test_benchmark_prints_one_json_object(name: str, flags: list[str], bench_stack_running: None) -> None:
    proc = subprocess.run([sys.executable, "-m", f"bench.{name}", *flags, "--keep-stack"], cwd=REPO_ROOT,
                          env=ENV, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stdout
    out = json.loads(lines[0])
    assert out["bench"] == name
    assert {"goal", "goal_met", "sizes"} <= out.keys()
    assert out["machine"]["nproc"] >= 1
    if name == "replay":
        assert out["checksum_equal"], out
    if name == "fast_start":
        assert out["checksums_equal"], out
    if name == "concurrent_writers":
        for level in out["levels"]:
            costs = level["rounds_cpu_ms_per_commit"][0]
            assert costs["sql"] > 0 and costs["worker"] > 0 and costs["kafka"] > 0, level
            assert len(costs) == 4 + out["sizes"]["sql_servers"] - 1, costs  # sql, worker, kafka, the others, stack
            assert level["rounds_sequencer"][0]["commands_per_transaction"] >= 1, level
    if name == "unique_mow":
        assert out["answers_match"], out
        assert "merge-on-write" in out["tables"]["merge_on_write"]["plan"], out


def test_scale_out_rehearsal_prints_one_json_object(tmp_path: object) -> None:
    """The rehearsal brings up a cluster of its own (three brokers, two workers, two SQL servers)."""
    if os.environ.get("STRATA_BENCH_SMOKE") != "1":
        pytest.skip("starts a cluster of its own; set STRATA_BENCH_SMOKE=1 to run it")
    proc = subprocess.run([sys.executable, "-m", "bench.scale_out", "--duration-s", "20", "--faults", "2",
                           "--home", f"{tmp_path}/scale-out", "--base-port", "24000"], cwd=REPO_ROOT, env=ENV,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stdout
    out = json.loads(lines[0])
    assert out["bench"] == "scale_out" and out["goal_met"], out
    assert out["rows_lost"] == out["duplicates"] == out["mismatches"] == 0, out
    assert out["sql_b"]["latest_equal"] and out["sizes"]["brokers"] == 3, out
