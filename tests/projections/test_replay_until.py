"""`strata replay --until T` (integration, real stack): the projection folded from the events committed
at or before T holds each table exactly as `SELECT … FOR TIME AS OF T` answers through SQL — after
inserts, updates, deletes and a later compaction — and the command refuses bad input with exit code 2."""

from __future__ import annotations

import json
import os
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pymysql
import pytest

from infra.cli import BadInput, parse_until, table_at
from projections.replay import UNTIL_MARKER, format_instant_ms, replay, until_dir_name, until_of
from schemas.config import Settings, settings
from tests.query.sqlkit import rows, run

STRATA = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "strata"
TT = 'PROPERTIES ("enable_time_travel" = "true")'
Row = tuple[Any, ...]


@pytest.fixture(scope="module")
def config() -> Settings:
    if "STRATA_SQL_PORT" not in os.environ:
        pytest.fail("STRATA_SQL_PORT is not set; run the tests through infra/test")
    return settings()


def instant() -> str:
    """Now (UTC, the session's zone), with the commit before it safely in the past and the next after it."""
    time.sleep(0.02)
    moment = datetime.now(tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    time.sleep(0.02)
    return moment


def ordered(items: list[Row]) -> list[Row]:
    return sorted(items, key=lambda r: tuple((v is not None, v) for v in r))


def make_history(conn: pymysql.connections.Connection) -> list[str]:
    """A unique-key table (updates, deletes, upserts) and a duplicate-key one, with instants between
    the statements; compacted at the end, so the replayed past must read rowsets now stale."""
    run(conn, f"CREATE TABLE u (k INT, v VARCHAR(10), n DECIMAL(8,2)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) "
              f"BUCKETS 2 {TT}")
    run(conn, f"CREATE TABLE d (id INT, s VARCHAR(10)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2 {TT}")
    marks = []
    for statement in ("INSERT INTO u VALUES (1, 'a', 1.50), (2, 'b', 2.50), (3, 'c', NULL)",
                      "INSERT INTO d VALUES (1, 'x'), (2, 'y'), (2, 'y')",
                      "UPDATE u SET v = 'B', n = 20.00 WHERE k = 2",
                      "DELETE FROM u WHERE k = 3",
                      "DELETE FROM d WHERE id = 2",
                      "INSERT INTO u VALUES (4, 'd', 4.00), (1, 'A', 1.00)",
                      "INSERT INTO d VALUES (3, 'z')",
                      "DELETE FROM u WHERE k = 1"):
        run(conn, statement)
        marks.append(instant())
    run(conn, "ADMIN COMPACT TABLE u WHERE TYPE = 'BASE'")
    run(conn, "ADMIN COMPACT TABLE d WHERE TYPE = 'BASE'")
    return marks


# A dozen replays of a log every earlier test of the run wrote to: minutes, growing with the suite. The
# nightly run has it; infra/test keeps the prefix and CLI tests below, which replay once or twice.
@pytest.mark.nightly
@pytest.mark.timeout(900)
def test_replay_until_equals_for_time_as_of(conn: pymysql.connections.Connection, db: str, config: Settings,
                                            tmp_path: Path) -> None:
    before_tables = instant()
    marks = make_history(conn)
    latest = {t: ordered(rows(conn, f"SELECT * FROM {t}")) for t in ("u", "d")}
    for i, at in enumerate(marks):
        # One replay per instant (each folds the whole log up to it), read for both tables.
        result = replay(config, tmp_path / f"r{i}", until_ms=parse_until(at))
        assert result.until_ms == parse_until(at) and result.instant == format_instant_ms(parse_until(at))
        for table in ("u", "d"):
            got = ordered([tuple(r.values()) for r in table_at(config, tmp_path / f"r{i}", db, table).to_pylist()])
            if table == "d" and i == 0:
                # d exists but has no commit yet: SQL refuses the instant, the replay holds it empty.
                assert got == []
                continue
            expected = ordered(rows(conn, f"SELECT * FROM {table} FOR TIME AS OF '{at}'"))
            assert got == expected, f"{table} at {at} (after statement {i + 1})"
            # The history differs from the latest state before the last change of each table.
            last_change = 7 if table == "u" else 6
            assert (got == latest[table]) == (i >= last_change), f"{table} at {at}: {got} vs latest {latest[table]}"
    # Spot checks, so a replay that folded everything (or nothing) cannot pass by agreeing with itself.
    def u_at(i: int) -> list[Row]:
        return ordered([tuple(r.values()) for r in table_at(config, tmp_path / f"r{i}", db, "u").to_pylist()])
    assert u_at(0) == [(1, "a", 1.5), (2, "b", 2.5), (3, "c", None)]
    assert u_at(2)[1] == (2, "B", 20)
    # Before the tables existed, the replayed catalog has no such table.
    replay(config, tmp_path / "early", until_ms=parse_until(before_tables))
    with pytest.raises(BadInput, match="no table"):
        table_at(config, tmp_path / "early", db, "u")


def test_replay_until_folds_a_prefix_and_marks_it_scratch(conn: pymysql.connections.Connection, db: str,
                                                         config: Settings, tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE u (k INT, v VARCHAR(10)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {TT}")
    run(conn, "INSERT INTO u VALUES (1, 'a')")
    at = instant()
    run(conn, "INSERT INTO u VALUES (2, 'b')")
    full = replay(config, tmp_path / "full")
    past = replay(config, tmp_path / "past", until_ms=parse_until(at))
    assert full.until_ms is None and full.instant is None and until_of(tmp_path / "full") is None
    assert past.events < full.events and past.checksum != full.checksum
    assert until_of(tmp_path / "past") == parse_until(at) and (tmp_path / "past" / UNTIL_MARKER).is_file()
    assert until_dir_name(parse_until("2026-12-01 10:00:00.123456")) == "replay-until-20261201T100000.123Z"
    # Replaying again into its own scratch directory is allowed; into a live-looking one, refused.
    assert replay(config, tmp_path / "past", until_ms=parse_until(at)).checksum == past.checksum
    with pytest.raises(ValueError, match="not a `replay --until` projection"):
        replay(config, tmp_path / "full", until_ms=parse_until(at))


def strata(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(STRATA), "replay", *args], capture_output=True, text=True, timeout=60, env=os.environ)


def test_cli_end_to_end_and_bad_input(conn: pymysql.connections.Connection, db: str, tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE u (k INT, v VARCHAR(10)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {TT}")
    run(conn, "INSERT INTO u VALUES (1, 'a'), (2, 'b')")
    at = instant()
    run(conn, "UPDATE u SET v = 'B' WHERE k = 2")
    expected = rows(conn, f"SELECT * FROM u FOR TIME AS OF '{at}' ORDER BY k")
    assert expected == [(1, "a"), (2, "b")]

    # The same instant written in +08:00.
    local = (datetime.strptime(at, "%Y-%m-%d %H:%M:%S.%f") + timedelta(hours=8)).strftime("%Y-%m-%d %H:%M:%S.%f")
    done = strata("--until", local, "--time-zone", "+08:00", "--into", str(tmp_path / "cli"), "--show", f"{db}.u",
                  "--tsv")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines == ["k\tv", "1\ta", "2\tb"], done.stdout
    summary = json.loads(next(line for line in done.stderr.splitlines() if line.startswith("{")))
    assert summary["until_ms"] == parse_until(at) and summary["instant_utc"] == format_instant_ms(parse_until(at))
    assert summary["events"] > 0 and summary["checksum"] and summary["projection"] == str(tmp_path / "cli")

    shown = strata("--until", at, "--into", str(tmp_path / "cli2"), "--show", f"{db}.u")
    assert shown.returncode == 0, shown.stderr
    assert '"instant_utc"' in shown.stdout and "│ B" not in shown.stdout and "│ b" in shown.stdout

    for args, message in ((["--until", "yesterday"], "not a valid timestamp"),
                          (["--until", "2026-02-30 10:00:00"], "not a valid timestamp"),
                          (["--until", "2999-01-01 00:00:00"], "in the future"),
                          (["--until", at, "--time-zone", "Mars/Olympus"], "time zone"),
                          (["--until", at, "--show", "nodot"], "expected db.table"),
                          (["--time-zone", "+08:00"], "go with --until")):
        bad = strata(*args, "--into", str(tmp_path / "bad"))
        assert bad.returncode == 2, (args, bad.stdout, bad.stderr)
        assert message in bad.stderr and "Traceback" not in bad.stderr, (args, bad.stderr)
    assert not (tmp_path / "bad").exists()

    # A directory that is not a scratch projection is never wiped.
    keep = tmp_path / "live"
    keep.mkdir()
    (keep / "CURRENT").write_text("precious")
    refused = strata("--until", at, "--into", str(keep))
    assert refused.returncode == 2 and "not a `replay --until` projection" in refused.stderr
    assert (keep / "CURRENT").read_text() == "precious"
