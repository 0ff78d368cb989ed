"""The "compression" table property (Doris' names, default LZ4F): the codec of the table's rowset files,
for loads and compactions alike; an unknown name is refused at CREATE TABLE."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pymysql

from schemas.config import settings as strata_settings
from tests.query.sqlkit import fails, rows, run, show_create


def _codecs(db: str, table: str, conn: pymysql.connections.Connection) -> set[str]:
    """The codecs of the table's visible rowsets' files, found by rowset id under the local tiers."""
    ids = {r[0] for r in rows(conn, f"SELECT ROWSET_ID FROM information_schema.rowsets WHERE TABLE_SCHEMA = '{db}' "
                                    f"AND TABLE_NAME = '{table}' AND STATE = 'visible'")}
    assert ids
    config = strata_settings()
    files = [p for root in (config.ssd_dir, config.hdd_dir) for p in Path(root).rglob("*.parquet") if p.stem in ids]
    assert len(files) == len(ids), (ids, files)
    codecs = set()
    for path in files:
        meta = pq.ParquetFile(path).metadata
        codecs |= {meta.row_group(g).column(c).compression
                   for g in range(meta.num_row_groups) for c in range(meta.num_columns)}
    return codecs


def test_default_is_lz4_and_zstd_when_asked(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE plain (k INT, v VARCHAR(20)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
              'PROPERTIES ("replication_num" = "1")')
    run(conn, "CREATE TABLE packed (k INT, v VARCHAR(20)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
              'PROPERTIES ("replication_num" = "1", "compression" = "zstd")')
    for table in ("plain", "packed"):
        run(conn, f"INSERT INTO {table} VALUES (1, 'a'), (2, 'b')")
        run(conn, f"INSERT INTO {table} VALUES (2, 'c'), (3, 'd')")
    assert _codecs(db, "plain", conn) == {"LZ4"}
    assert _codecs(db, "packed", conn) == {"ZSTD"}
    assert '"compression" = "ZSTD"' in show_create(conn, "packed")
    # A compaction's output keeps the table's codec.
    run(conn, "ADMIN COMPACT TABLE packed WHERE TYPE = 'BASE'")
    assert rows(conn, "SELECT count(*) FROM information_schema.rowsets WHERE TABLE_SCHEMA = DATABASE() "
                      "AND TABLE_NAME = 'packed' AND STATE = 'visible'") == [(1,)]
    assert _codecs(db, "packed", conn) == {"ZSTD"}
    assert rows(conn, "SELECT k, v FROM packed ORDER BY k") == [(1, "a"), (2, "c"), (3, "d")]


def test_an_unknown_compression_is_refused(conn: pymysql.connections.Connection, db: str) -> None:
    fails(conn, "CREATE TABLE bad (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                'PROPERTIES ("compression" = "brotli")', 1210, "compression")
    fails(conn, "SELECT * FROM bad", 1146, "bad")
