"""The DuckDB side of the sandbox, called directly (as if the statement-side check were bypassed):
rowset folders readable, everything else on the machine and the network not, settings locked,
extensions never installed or loaded."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from storage.sandbox import sandboxed_connection


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "data"
    data.mkdir()
    pq.write_table(pa.table({"k": [1, 2, 3]}), data / "r.parquet")
    secret = tmp_path / "secret.txt"
    secret.write_text("do-not-read")
    return data, secret


def test_rowset_folders_are_readable_through_cursors(layout: tuple[Path, Path]) -> None:
    data, _ = layout
    con = sandboxed_connection([data])
    cur = con.cursor()  # the engine runs each statement on a cursor: it shares the locked database
    cur.execute(f"CREATE TEMP VIEW v AS SELECT * FROM read_parquet('{data / 'r.parquet'}')")
    assert cur.execute("SELECT sum(k) FROM v").fetchone() == (6,)


def test_parquet_footers_are_kept_between_queries(layout: tuple[Path, Path]) -> None:
    """Rowset files never change once written, so every cursor reuses a file's parsed footer."""
    data, _ = layout
    cur = sandboxed_connection([data]).cursor()
    assert cur.execute("SELECT current_setting('parquet_metadata_cache')").fetchone() == (True,)
    with pytest.raises(duckdb.Error):
        cur.execute("SET parquet_metadata_cache = false")  # locked with the rest


@pytest.mark.parametrize("sql", [
    "SELECT * FROM read_text('{secret}')",
    "SELECT * FROM read_text('{data}/../secret.txt')",
    "SELECT * FROM read_blob('/proc/self/environ')",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM glob('/etc/*')",
    "SELECT * FROM read_csv('https://example.com/x.csv')",
    "SELECT * FROM read_parquet('s3://bucket/x.parquet')",
    "COPY (SELECT 1) TO '{secret}.out'",
    "ATTACH '{secret}.db'",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "SET lock_configuration = false",
    "SET allowed_directories = ['/']",
    "RESET enable_external_access",
    "SET autoinstall_known_extensions = true",
])
def test_everything_else_is_refused(layout: tuple[Path, Path], sql: str) -> None:
    data, secret = layout
    cur = sandboxed_connection([data]).cursor()
    with pytest.raises(duckdb.Error) as refused:
        cur.execute(sql.format(secret=secret, data=data)).fetchall()
    assert "do-not-read" not in str(refused.value)
    assert isinstance(refused.value, duckdb.PermissionException | duckdb.InvalidInputException |
                      duckdb.CatalogException | duckdb.IOException)
    assert not Path(f"{secret}.out").exists() and not Path(f"{secret}.db").exists()


def test_without_folders_nothing_is_readable(layout: tuple[Path, Path]) -> None:
    data, _ = layout
    cur = sandboxed_connection().cursor()
    with pytest.raises(duckdb.PermissionException):
        cur.execute(f"SELECT * FROM read_parquet('{data / 'r.parquet'}')")
    # Arrow data registered by Strata itself (routine-load batches) is still usable.
    cur.register("records", pa.table({"v": ["a", "b"]}))
    assert cur.execute("SELECT count(*) FROM records").fetchone() == (2,)
