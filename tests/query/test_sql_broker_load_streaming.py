"""Broker Load reads each object a chunk at a time (spooled to disk, never whole in memory): files
larger than STRATA_S3_TRANSFER_MAX_BYTES load — CSV, JSON lines and Parquet (row group by row
group) — in one commit per table, with the merge of a Unique Key table (last row wins, across
chunks) and an Aggregate Key table's folding exact; formats still read whole are refused beyond
it with an error naming the limit. Nightly: a file several times the memory budget loads while the
server's peak RSS grows by less than the budget."""

from __future__ import annotations

import io
import os
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.query.s3_kit import S3User, finished_job, keys, minio, put
from tests.query.sqlkit import Conn, columns, rows, run, sorted_rows
from tests.query.stream_load_kit import OtherServer, fetch, other_server, status_kb

CAP = 64 << 10  # STRATA_S3_TRANSFER_MAX_BYTES of the loading server: every file here is larger
SMALL = {"STRATA_S3_TRANSFER_MAX_BYTES": str(CAP), "STRATA_STREAM_LOAD_CHUNK_BYTES": str(8 << 10)}
COUNT = 20_000
TRAVEL = "PROPERTIES ('enable_time_travel' = 'true')"


def _load(server: OtherServer, db: str, data: str, user: S3User) -> dict[str, object]:
    label = f"l{uuid.uuid4().hex[:12]}"
    loader = server.connect(db)
    try:
        run(loader, f"LOAD LABEL {label} ({data}) WITH S3 ({keys(user, 'aws')})")
        return finished_job(loader, "LOAD", label, timeout_s=300)
    finally:
        loader.close()


def _parquet(table: pa.Table, row_group: int) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, row_group_size=row_group)
    return sink.getvalue()


def test_files_larger_than_the_transfer_cap_load_in_chunks(conn: Conn, db: str, bucket: str,
                                                           s3_user: S3User) -> None:
    run(conn, f"CREATE TABLE u (k INT, v VARCHAR(12), n INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {TRAVEL}")
    run(conn, f"CREATE TABLE d (k INT, v VARCHAR(12), n INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
              f"{TRAVEL}")
    run(conn, f"CREATE TABLE a (k INT, total BIGINT SUM, latest INT REPLACE) AGGREGATE KEY(k) "
              f"DISTRIBUTED BY HASH(k) BUCKETS 2 {TRAVEL}")
    csv = "".join(f"{i % 5000},v{i},{i}\n" for i in range(COUNT)).encode()
    lines = "".join(f'{{"k": {i}, "v": "j{i}", "n": {i * 3}}}\n' for i in range(COUNT)).encode()
    parquet = _parquet(pa.table({"k": [i % 700 for i in range(COUNT)], "total": list(range(COUNT)),
                                 "latest": list(range(COUNT))}), 1500)
    for body in (csv, lines, parquet):
        assert len(body) > CAP
    put(bucket, "big/u.csv", csv)
    put(bucket, "big/d.json", lines)
    put(bucket, "big/a.parquet", parquet)
    with other_server(SMALL) as small:
        unique = _load(small, db, f'DATA INFILE("s3://{bucket}/big/u.csv") INTO TABLE u COLUMNS TERMINATED BY ","',
                       s3_user)
        duplicate = _load(small, db, f'DATA INFILE("s3://{bucket}/big/d.json") INTO TABLE d FORMAT AS "json"', s3_user)
        aggregate = _load(small, db, f'DATA INFILE("s3://{bucket}/big/a.parquet") INTO TABLE a FORMAT AS "parquet"',
                          s3_user)
    for job in (unique, duplicate, aggregate):
        assert job["State"] == "FINISHED", job["ErrorMsg"]
        assert job["Progress"] == "ETL:100%; LOAD:100%" and f"dpp.norm.ALL={COUNT}" in str(job["EtlInfo"]), job
    # Unique: the last of each key's four rows, chunks apart; Duplicate: every row; Aggregate: folded.
    assert sorted_rows(conn, "SELECT * FROM u") == [(k, f"v{k + 15000}", k + 15000) for k in range(5000)]
    assert rows(conn, "SELECT count(*), sum(k), sum(n), count(DISTINCT v) FROM d") == \
        [(COUNT, COUNT * (COUNT - 1) // 2, 3 * COUNT * (COUNT - 1) // 2, COUNT)]
    folded: dict[int, list[int]] = {}
    for i in range(COUNT):
        folded.setdefault(i % 700, []).append(i)
    assert sorted_rows(conn, "SELECT k, total, latest FROM a") == sorted((k, sum(v), v[-1]) for k, v in folded.items())
    for table in ("u", "d", "a"):  # one commit each, whatever the chunks
        assert rows(conn, f"SELECT count(*) FROM {table} FOR VERSION AS OF 1") == \
            rows(conn, f"SELECT count(*) FROM {table}")


def test_csv_with_names_and_orc_files_larger_than_the_cap_load_in_chunks(conn: Conn, db: str, bucket: str,
                                                                          s3_user: S3User) -> None:
    """csv_with_names[_and_types]: the header lines are skipped and the fields taken in order, as Doris
    loads them (its header names nothing); ORC: a stripe at a time, columns matched by name."""
    from pyarrow import orc
    run(conn, "CREATE TABLE t (k INT, v VARCHAR(12)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    # The header names the columns the other way round: a load does not go by it.
    put(bucket, "named.csv", b"v,k\n" + b"".join(b"%d,v%d\n" % (i, i) for i in range(COUNT)))
    put(bucket, "typed.csv", b"k,v\nINT,STRING\n" + b"".join(b"%d,w%d\n" % (i, i) for i in range(COUNT, 2 * COUNT)))
    sink = io.BytesIO()
    orc.write_table(pa.table({"v": [f"o{i}" for i in range(COUNT)], "k": list(range(2 * COUNT, 3 * COUNT))}), sink,
                    stripe_size=32 << 10)
    assert orc.ORCFile(io.BytesIO(sink.getvalue())).nstripes > 1 and len(sink.getvalue()) > CAP
    put(bucket, "rows.orc", sink.getvalue())
    with other_server(SMALL) as small:
        named = _load(small, db, f'DATA INFILE("s3://{bucket}/named.csv") INTO TABLE t COLUMNS TERMINATED BY "," '
                                 'FORMAT AS "csv_with_names"', s3_user)
        typed = _load(small, db, f'DATA INFILE("s3://{bucket}/typed.csv") INTO TABLE t COLUMNS TERMINATED BY "," '
                                 'FORMAT AS "csv_with_names_and_types"', s3_user)
        stripes = _load(small, db, f'DATA INFILE("s3://{bucket}/rows.orc") INTO TABLE t FORMAT AS "orc"', s3_user)
    for job in (named, typed, stripes):
        assert job["State"] == "FINISHED" and f"dpp.norm.ALL={COUNT}" in str(job["EtlInfo"]), job
    assert sorted_rows(conn, "SELECT * FROM t") == \
        [(i, f"v{i}") for i in range(COUNT)] + [(i, f"w{i}") for i in range(COUNT, 2 * COUNT)] + \
        [(i, f"o{i - 2 * COUNT}") for i in range(2 * COUNT, 3 * COUNT)]


@pytest.mark.parametrize(("newline", "count"), [(b"\r\n", 400_000), (b"\n", 3_000_000)], ids=["chunked", "scan"])
def test_show_load_reports_progress_and_every_rejected_row_while_it_reads(conn: Conn, db: str, bucket: str,
                                                                          s3_user: S3User, newline: bytes,
                                                                          count: int) -> None:
    """SHOW LOAD follows a running job (LOADING, LOAD:x% rising); its URL lists the rejected rows of
    every chunk, in the order they were read (written as found, never held for the end).

    \r\n lines take the chunked path, whose 8 kB chunks make the job slow enough to be seen mid-way;
    plain \n lines are read by one DuckDB statement (query.stream_load.scan), much faster, so that
    file is larger: its 1024-row batches report how far the statement got."""
    run(conn, "CREATE TABLE t (k INT, v VARCHAR(12)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    body = b"".join(b"%d,v%d%s" % (i, i, newline) if i % 1000 else b"bad%d,v%s" % (i, newline)
                    for i in range(count))
    put(bucket, "slow.csv", body)
    label = f"l{uuid.uuid4().hex[:12]}"
    seen: list[tuple[str, str]] = []
    with other_server(SMALL) as small:
        loader = small.connect(db)
        try:
            names = columns(loader, f'SHOW LOAD WHERE LABEL = "{label}"')
            run(loader, f'LOAD LABEL {label} (DATA INFILE("s3://{bucket}/slow.csv") INTO TABLE t '
                        f'COLUMNS TERMINATED BY ",") WITH S3 ({keys(s3_user, "aws")}) '
                        'PROPERTIES ("max_filter_ratio" = "0.01", "strict_mode" = "true")')
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                job = dict(zip(names, rows(loader, f'SHOW LOAD WHERE LABEL = "{label}"')[0], strict=True))
                seen.append((str(job["State"]), str(job["Progress"])))
                if job["State"] in ("FINISHED", "CANCELLED"):
                    break
                time.sleep(0.05)
            logged = fetch(str(job["URL"])).splitlines()  # served by the loading server
        finally:
            loader.close()
    assert job["State"] == "FINISHED", job
    shares = [int(progress.rsplit(":", 1)[1].rstrip("%")) for state, progress in seen if state == "LOADING"]
    assert any(0 < share < 100 for share in shares), sorted(set(seen))  # seen mid-way, not only at its ends
    assert shares == sorted(shares), seen
    assert seen[-1] == ("FINISHED", "ETL:100%; LOAD:100%")
    assert rows(conn, "SELECT count(*) FROM t") == [(count - count // 1000,)]
    assert len(logged) == count // 1000
    assert [line[line.index("[") + 1:line.index("]")] for line in logged] == \
        [f"bad{i},v" for i in range(0, count, 1000)]


ROWS, PAD = 520_000, 1000  # a ~500 MB CSV, 3 × the budget
BUDGET = 160 << 20  # as tests/query/test_stream_load_memory.py: 8 MB chunks peak at ~120 MB


@pytest.mark.nightly  # minutes on a busy 2-core machine: the object is ~500 MB
def test_an_object_larger_than_the_memory_budget_loads(conn: Conn, db: str, bucket: str, s3_user: S3User,
                                                       tmp_path: Path) -> None:
    run(conn, "CREATE TABLE t (k BIGINT, n INT, pad VARCHAR(1000)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2")
    path = os.path.join(str(tmp_path), "big.csv")
    with open(path, "wb") as out:
        for start in range(0, ROWS, 2000):
            out.write(b"".join(b"%d\t%d\t%012d%s\n" % (k, k % 10007, k, b"x" * (PAD - 12))
                               for k in range(start, min(start + 2000, ROWS))))
    minio().fput_object(bucket, "big.csv", path)
    size = os.path.getsize(path)
    os.unlink(path)
    with other_server({}) as server:
        warm = _load(server, db, f'DATA INFILE("s3://{bucket}/big.csv") INTO TABLE t (k, n, pad) '
                                 'WHERE k < 0', s3_user)  # first-use costs are not the load's
        assert warm["State"] == "FINISHED", warm
        before_kb = status_kb(server.pid, "VmHWM")
        job = _load(server, db, f'DATA INFILE("s3://{bucket}/big.csv") INTO TABLE t', s3_user)
        growth = (status_kb(server.pid, "VmHWM") - before_kb) << 10
    assert job["State"] == "FINISHED", job["ErrorMsg"]
    print(f"object {size >> 20} MB, peak RSS growth {growth >> 20} MB")
    assert size >= 3 * BUDGET, size
    assert growth < BUDGET, f"peak RSS grew by {growth >> 20} MB loading {size >> 20} MB"
    total = ROWS * (ROWS - 1) // 2
    assert rows(conn, "SELECT count(*), sum(k), min(length(pad)), max(length(pad)) FROM t") == \
        [(ROWS, total, PAD, PAD)]
