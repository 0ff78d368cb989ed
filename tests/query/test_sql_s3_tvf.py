"""Doris' S3() table function through the SQL server, against the stack's MinIO: formats, globs,
joins, INSERT … SELECT, resources, privileges, secrets kept out of errors and SHOW PROCESSLIST, and
the sandbox (DuckDB itself still reads no URL or file)."""

from __future__ import annotations

import gzip

import pyarrow as pa
import pymysql

from schemas.config import load_settings
from tests.query.s3_kit import S3User, keys, minio, put, put_parquet
from tests.query.sqlkit import Conn, columns, fails, rows, run
from tests.query.stream_load_kit import other_server

WRONG_ARGUMENTS, UNKNOWN_ERROR, NOT_SUPPORTED, ACCESS_DENIED = 1210, 1105, 1235, 1227
COMMA = ', "column_separator" = ","'


def _s3(bucket: str, user: S3User, path: str, fmt: str, extra: str = "") -> str:
    return f'S3("uri" = "s3://{bucket}/{path}", "format" = "{fmt}", {keys(user)}{extra})'


def test_parquet_files_by_glob(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    put_parquet(bucket, "data/a.parquet", pa.table({"k": [1, 2], "v": ["x", "y"]}))
    put_parquet(bucket, "data/b.parquet", pa.table({"k": [3], "v": ["z"]}))
    put_parquet(bucket, "data/sub/c.parquet", pa.table({"k": [9], "v": ["no"]}))  # * stays in one folder
    put(bucket, "data/readme.txt", b"not parquet")
    source = _s3(bucket, s3_user, "data/*.parquet", "parquet")
    assert rows(conn, f"SELECT k, v FROM {source} ORDER BY k") == [(1, "x"), (2, "y"), (3, "z")]
    assert columns(conn, f"SELECT * FROM {source} t") == ["k", "v"]
    assert rows(conn, f"SELECT count(*) FROM {_s3(bucket, s3_user, 'data/{a,b}.parquet', 'parquet')}") == [(3,)]
    assert rows(conn, f"SELECT count(*) FROM {_s3(bucket, s3_user, 'data/?.parquet', 'parquet')}") == [(3,)]
    assert rows(conn, f"SELECT k FROM {_s3(bucket, s3_user, 'data/a.parquet', 'parquet')} ORDER BY k") == \
        [(1,), (2,)]


def test_csv_formats_and_separators(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    put(bucket, "t.csv", b"1,alpha\n2,\\N\n")
    put(bucket, "named.csv", b"id|name\n7|seven\n")
    put(bucket, "tabbed.csv", b"1\tx\n")
    assert rows(conn, f"SELECT c1, c2 FROM {_s3(bucket, s3_user, 't.csv', 'csv', COMMA)}"
                      " ORDER BY c1") == [("1", "alpha"), ("2", None)]
    assert rows(conn, f"SELECT * FROM {_s3(bucket, s3_user, 'tabbed.csv', 'csv')}") == [("1", "x")]
    named = _s3(bucket, s3_user, "named.csv", "csv_with_names", ', "column_separator" = "|"')
    assert columns(conn, f"SELECT * FROM {named}") == ["id", "name"]
    assert rows(conn, f"SELECT CAST(id AS INT) + 1, name FROM {named}") == [(8, "seven")]


def test_json_lines_and_outer_array(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    put(bucket, "l.json", b'{"a": 1, "b": "x"}\n{"a": 2}\n')
    put(bucket, "arr.json", b'[{"a": 5, "b": "y"}]')
    assert rows(conn, f"SELECT a, b FROM {_s3(bucket, s3_user, 'l.json', 'json')} ORDER BY a") == \
        [("1", "x"), ("2", None)]
    outer = _s3(bucket, s3_user, "arr.json", "json", ', "strip_outer_array" = "true"')
    assert rows(conn, f"SELECT a, b FROM {outer}") == [("5", "y")]


def test_join_with_a_table_and_insert_select(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    put_parquet(bucket, "dim.parquet", pa.table({"id": [1, 2], "name": ["one", "two"]}))
    run(conn, "CREATE TABLE facts (id INT, amount INT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 "
              "PROPERTIES ('enable_time_travel' = 'true')")
    run(conn, "INSERT INTO facts VALUES (1, 10), (2, 20), (2, 5)")
    dim = _s3(bucket, s3_user, "dim.parquet", "parquet")
    assert rows(conn, f"SELECT d.name, sum(f.amount) FROM facts f JOIN {dim} d ON f.id = d.id "
                      "GROUP BY d.name ORDER BY d.name") == [("one", 10), ("two", 25)]
    run(conn, "CREATE TABLE names (id INT, name VARCHAR(20)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
    assert run(conn, f"INSERT INTO names SELECT id, name FROM {dim}") == 2
    assert rows(conn, "SELECT * FROM names ORDER BY id") == [(1, "one"), (2, "two")]
    put(bucket, "more.csv", b"3,three\n")
    run(conn, f"INSERT INTO names (id, name) SELECT c1, c2 FROM "
              f"{_s3(bucket, s3_user, 'more.csv', 'csv', COMMA)}")
    assert rows(conn, "SELECT count(*) FROM names") == [(3,)]


def test_resource_gives_endpoint_and_keys(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    put_parquet(bucket, "r.parquet", pa.table({"k": [42]}))
    name = f"tvf_{bucket.replace('-', '_')}"
    endpoint = keys(s3_user).split('"')[3]
    run(conn, f'CREATE RESOURCE "{name}" PROPERTIES ("type" = "s3", "s3.endpoint" = "{endpoint}", '
              f'"s3.region" = "us-east-1", "s3.bucket" = "{bucket}", "s3.root.path" = "res", '
              f'"s3.access_key" = "{s3_user[0]}", "s3.secret_key" = "{s3_user[1]}", "use_path_style" = "true")')
    try:
        assert rows(conn, f'SELECT k FROM S3("uri" = "s3://{bucket}/r.parquet", "format" = "parquet", '
                          f'"resource" = "{name}")') == [(42,)]
    finally:
        run(conn, f'DROP RESOURCE "{name}"')


def test_errors_are_clear_and_never_show_the_secret(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    put(bucket, "x.csv", b"1\n")
    secret = s3_user[1]
    cases = [
        (f'S3("uri" = "s3://{bucket}/none/*.csv", "format" = "csv", {keys(s3_user)})', WRONG_ARGUMENTS,
         "no object matches"),
        (f'S3("uri" = "s3://{bucket}/x.csv", "format" = "avro", {keys(s3_user)})', NOT_SUPPORTED, "avro"),
        (f'S3("uri" = "s3://{bucket}/x.csv", "format" = "csv", "colour" = "red", {keys(s3_user)})', NOT_SUPPORTED,
         "colour"),
        (f'S3("uri" = "s3://{bucket}/x.csv", "format" = "csv")', WRONG_ARGUMENTS, "s3.endpoint"),
        ('S3("uri" = "file:///etc/passwd", "format" = "csv", ' + keys(s3_user) + ")", NOT_SUPPORTED,
         "local files"),
        ('S3("uri" = "/etc/passwd", "format" = "csv", ' + keys(s3_user) + ")", WRONG_ARGUMENTS, "not an s3://"),
        (f'S3("uri" = "s3://{bucket}/x.csv", "format" = "csv", '
         + keys(s3_user).replace(secret, "wrong-secret") + ")", UNKNOWN_ERROR, "refused"),
        (f'S3("uri" = "s3://{bucket}/x.csv", "format" = "csv", '
         + keys(s3_user).replace(secret, secret + "x") + ")", UNKNOWN_ERROR, "refused"),
    ]
    for source, code, fragment in cases:
        message = fails(conn, f"SELECT * FROM {source}", code, fragment)
        assert secret not in message and "wrong-secret" not in message


def test_views_may_not_read_s3(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    put(bucket, "x.csv", b"1\n")
    fails(conn, f"CREATE VIEW v AS SELECT * FROM {_s3(bucket, s3_user, 'x.csv', 'csv')}", NOT_SUPPORTED,
          "view may not read S3()")


def test_the_executor_still_reads_no_url(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    for sql in (f"SELECT * FROM read_parquet('s3://{bucket}/x.parquet')",
                "SELECT * FROM read_csv('http://127.0.0.1:1/x.csv')",
                f"SELECT * FROM s3_read('s3://{bucket}/x')"):
        fails(conn, sql, ACCESS_DENIED, "not allowed")


def test_user_without_grants_may_read_with_own_keys_but_not_a_resource(
        conn: Conn, db: str, bucket: str, s3_user: S3User, user: tuple[str, str]) -> None:
    put_parquet(bucket, "u.parquet", pa.table({"k": [1]}))
    me = pymysql.connect(host=conn.host, port=conn.port, user=user[0], password=user[1], autocommit=True)
    try:
        with me.cursor() as cur:
            cur.execute(f"SELECT k FROM {_s3(bucket, s3_user, 'u.parquet', 'parquet')}")
            assert cur.fetchall() == ((1,),)
        fails(me, f'SELECT * FROM S3("uri" = "s3://{bucket}/u.parquet", "format" = "parquet", "resource" = "any")',
              ACCESS_DENIED, "ADMIN_PRIV")
    finally:
        me.close()


def test_processlist_masks_the_secret(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    """A statement reading S3() sees itself in the process list with its secret key masked."""
    put(bucket, "x.csv", b"1\n")
    info = rows(conn, f"SELECT p.INFO FROM information_schema.processlist p, {_s3(bucket, s3_user, 'x.csv', 'csv')} s "
                      "WHERE p.INFO LIKE '%x.csv%'")
    assert len(info) == 1 and s3_user[1] not in info[0][0] and '"s3.secret_key" = "******"' in info[0][0]
    assert s3_user[0] in info[0][0]  # the access key is no secret (Doris shows it too)


def test_objects_larger_than_the_transfer_cap_are_scanned(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    """Parquet objects are scanned from spooled copies, CSV and JSON lines (gzip too) decoded a piece at a
    time into spooled Arrow files (never decoded whole): a server allowed 64 kB per transfer reads,
    joins and loads from objects of ~400 kB, and removes its files after; a JSON document, parsed
    whole, is refused beyond it with the limit named."""
    count = 50_000
    table = pa.table({"k": list(range(count)), "v": [f"value-{i:08d}" for i in range(count)]})
    put_parquet(bucket, "big/a.parquet", table.slice(0, count // 2))
    put_parquet(bucket, "big/b.parquet", table.slice(count // 2))
    csv = b"".join(b"%d,v%d\n" % (i, i) for i in range(count))
    put(bucket, "big.csv", csv)
    put(bucket, "named.csv.gz", gzip.compress(b"k,v\n" + csv))
    lines = b"".join(b'{"k": %d, "v": "j%d"}\n' % (i, i) if i % 3 else b'{"k": %d}\n' % i for i in range(count))
    put(bucket, "big.json", lines)
    put(bucket, "document.json", b"[" + lines.replace(b"}\n", b"},").rstrip(b",") + b"]")
    for key in ("big/a.parquet", "big/b.parquet", "big.csv", "big.json", "named.csv.gz", "document.json"):
        assert (minio().stat_object(bucket, key).size or 0) > 64 << 10, key
    run(conn, "CREATE TABLE t (k INT, v VARCHAR(20)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    source = _s3(bucket, s3_user, "big/*.parquet", "parquet")
    text = _s3(bucket, s3_user, "big.csv", "csv", COMMA)
    named = _s3(bucket, s3_user, "named.csv.gz", "csv_with_names", COMMA + ', "compress_type" = "gz"')
    json_lines = _s3(bucket, s3_user, "big.json", "json")
    spool = load_settings().home / "stream_load" / "spool"
    total = count * (count - 1) // 2
    with other_server({"STRATA_S3_TRANSFER_MAX_BYTES": str(64 << 10),
                       "STRATA_STREAM_LOAD_CHUNK_BYTES": str(16 << 10)}) as small:
        reader = small.connect(db)
        try:
            assert rows(reader, f"SELECT count(*), sum(k), count(DISTINCT v) FROM {source}") == \
                [(count, total, count)]
            assert rows(reader, f"SELECT count(*) FROM {source} a JOIN {source} b ON a.k = b.k + 1") == \
                [(count - 1,)]
            run(reader, f"INSERT INTO t SELECT k, v FROM {source} WHERE k % 2 = 0")
            assert rows(reader, f"SELECT count(*), sum(CAST(c1 AS BIGINT)), min(c2), max(c2) FROM {text}") == \
                [(count, total, "v0", "v9999")]
            assert rows(reader, f"SELECT count(*), sum(CAST(k AS BIGINT)), count(DISTINCT v) FROM {named}") == \
                [(count, total, count)]
            assert rows(reader, f"SELECT count(*), sum(CAST(k AS BIGINT)), count(v) FROM {json_lines}") == \
                [(count, total, count - (count + 2) // 3)]
            with_self = f"WITH x AS (SELECT * FROM {text}) SELECT count(*) FROM x a JOIN x b ON a.c1 = b.c1"
            assert rows(reader, with_self) == [(count,)]
            assert not list(spool.glob("*.parquet")) and not list(spool.glob("*.arrow"))  # gone with the statements
            document = _s3(bucket, s3_user, "document.json", "json", ', "strip_outer_array" = "true"')
            fails(reader, f"SELECT count(*) FROM {document}", NOT_SUPPORTED,
                  "STRATA_S3_TRANSFER_MAX_BYTES")
        finally:
            reader.close()
    assert rows(conn, "SELECT count(*), max(k) FROM t") == [(count // 2, count - 2)]
