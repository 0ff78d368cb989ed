"""Dynamic partitions from a MySQL client, with the stack's policy clock moved forward: a daily
table gets its partitions ahead of time, the newest stay on SSD, older ones go to HDD and then to
MinIO, and those past `start` are dropped — while `FOR TIME AS OF` from before a drop still reads
them. Commit timestamps stay real; only the scheduler's and tiering agent's clock moves."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta

import pymysql
import pytest
from minio import Minio

from projections.policy_clock import advance, reset
from schemas.config import Settings
from tests.query.routine_load_kit import wait_for
from tests.query.sqlkit import columns, rows, run

pytestmark = pytest.mark.integration
DAY_S = 86400.0


@pytest.fixture
def clock(config: Settings) -> Iterator[Settings]:
    """The stack's policy clock, put back to the wall clock afterwards."""
    reset(config)
    yield config
    reset(config)


def _partitions(conn: pymysql.connections.Connection, table: str = "t") -> dict[str, dict[str, object]]:
    sql = f"SHOW PARTITIONS FROM {table}"
    names = columns(conn, sql)
    return {r[1]: dict(zip(names, r, strict=True)) for r in rows(conn, sql)}


def _day(offset: int, today: date) -> str:
    return "p" + (today + timedelta(days=offset)).strftime("%Y%m%d")


def test_a_daily_table_manages_its_partitions_and_tiers(conn: pymysql.connections.Connection, db: str,
                                                        clock: Settings) -> None:
    config = clock
    bucket = f"dyn-{uuid.uuid4().hex[:10]}"
    Minio(config.minio_endpoint, config.minio_root_user, config.minio_root_password.get_secret_value(),
          secure=False).make_bucket(bucket)
    res = f"res_{uuid.uuid4().hex[:8]}"
    run(conn, f'CREATE RESOURCE "{res}" PROPERTIES ("type"="s3", "s3.endpoint"="http://{config.minio_endpoint}", '
              f'"s3.region"="us-east-1", "s3.bucket"="{bucket}", "s3.root.path"="dyn", '
              f'"s3.access_key"="{config.minio_root_user}", '
              f'"s3.secret_key"="{config.minio_root_password.get_secret_value()}", "use_path_style"="true")')
    run(conn, f'CREATE STORAGE POLICY {res} PROPERTIES ("storage_resource"="{res}", "cooldown_ttl"="3d")')
    today = datetime.now(UTC).date()
    if datetime.now(UTC) > datetime.combine(today, datetime.max.time(), UTC) - timedelta(minutes=1):
        time.sleep(61)  # not across midnight: the test reasons in whole days from now
        today = datetime.now(UTC).date()
    run(conn, "CREATE TABLE t (dt DATE, k INT) DUPLICATE KEY(dt) PARTITION BY RANGE(dt) () "
              "DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ("
              '"dynamic_partition.enable" = "true", "dynamic_partition.time_unit" = "DAY", '
              '"dynamic_partition.start" = "-7", "dynamic_partition.end" = "3", '
              f'"dynamic_partition.hot_partition_num" = "2", "dynamic_partition.storage_policy" = "{res}", '
              '"enable_time_travel" = "true")')
    wait_for(lambda: sorted(_partitions(conn)) == [_day(i, today) for i in range(4)], "partitions 0..+3")
    first = _partitions(conn)[_day(0, today)]
    assert first["StorageMedium"] == "SSD" and first["RemoteStoragePolicy"] == res
    assert isinstance(first["Range"], str) and first["Range"].count(str(today)) == 1
    run(conn, f"INSERT INTO t VALUES ('{today}', 1)")
    assert _partitions(conn)[_day(0, today)]["Tier"] == "ssd"

    advance(config, DAY_S)  # day 1: one more partition ahead; today's is still hot
    wait_for(lambda: _day(4, today) in _partitions(conn), "the partition 4 days ahead")
    time.sleep(1.5)
    assert _partitions(conn)[_day(0, today)]["Tier"] == "ssd"

    advance(config, DAY_S)  # day 2: today's partition is past its hot window → HDD
    wait_for(lambda: _partitions(conn)[_day(0, today)]["Tier"] == "hdd", "the cooled-down partition on HDD")

    advance(config, 2 * DAY_S)  # day 4: its rows are older than the policy's 3 days → MinIO
    wait_for(lambda: _partitions(conn)[_day(0, today)]["Tier"] == f"remote:{res}", "the partition on MinIO")
    wait_for(lambda: _day(7, today) in _partitions(conn), "the partitions up to 3 days after day 4")
    assert rows(conn, "SELECT * FROM t") == [(today, 1)]

    before_drop = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    time.sleep(0.05)
    advance(config, 4 * DAY_S)  # day 8: today's partition is past start = -7 → dropped
    wait_for(lambda: _day(0, today) not in _partitions(conn), "the expired partition to be dropped")
    names = sorted(_partitions(conn))
    assert names[0] == _day(1, today) and names[-1] == _day(11, today) and len(names) == 11
    assert rows(conn, "SELECT count(*) FROM t") == [(0,)]
    run(conn, "SET time_zone = '+00:00'")
    assert rows(conn, f"SELECT * FROM t FOR TIME AS OF '{before_drop}'") == [(today, 1)]
    newest = _partitions(conn)[_day(11, today)]
    assert newest["StorageMedium"] == "SSD" and newest["Tier"] == "ssd"
