"""Dynamic partition table properties (Doris' `dynamic_partition.*`) through the SQL server: set in
CREATE TABLE and ALTER TABLE … SET, checked with Doris' rules (MySQL error 1210 naming the property),
shown by SHOW CREATE TABLE and SHOW DYNAMIC PARTITION TABLES.

The worker's scheduler may create partitions in an enabled table at any time, so these tests assert
on properties and SHOW output only, never on an enabled table's partitions."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from minio import Minio

from query.dynamic_partition import COLUMNS, ordinal
from schemas.config import load_settings
from tests.query.sqlkit import Conn, columns, fails, rows, run, show_create

WRONG_ARGUMENTS, BAD_DB_ERROR = 1210, 1049
NEVER = "-2147483648"
P = "dynamic_partition."


def _props(**given: str) -> str:
    """A PROPERTIES clause of dynamic partition properties."""
    return "PROPERTIES (" + ", ".join(f'"{P}{k}" = "{v}"' for k, v in given.items()) + ")"


def _create(conn: Conn, name: str, properties: str, *, column: str = "dt DATE", partitions: str = "()",
            kind: str = "RANGE", buckets: int = 3) -> str:
    col = column.split()[0]
    partition = f"PARTITION BY {kind}({col}) {partitions}" if kind else ""
    sql = (f"CREATE TABLE {name} ({column}, v INT) DUPLICATE KEY({col}) {partition} "
           f"DISTRIBUTED BY HASH({col}) BUCKETS {buckets} {properties}")
    run(conn, sql)
    return sql


def _dynamic(conn: Conn, db: str | None = None) -> dict[str, dict[str, object]]:
    sql = "SHOW DYNAMIC PARTITION TABLES" + (f" FROM {db}" if db else "")
    return {str(r[0]): dict(zip(COLUMNS, r, strict=True)) for r in rows(conn, sql)}


def _shown_properties(conn: Conn, table: str) -> dict[str, str]:
    text = show_create(conn, table)
    body = text[text.index("PROPERTIES (") + len("PROPERTIES (") : text.rindex(")")]
    found = {}
    for line in body.strip().splitlines():
        key, _, value = line.rstrip(",").partition(" = ")
        found[key.strip('"')] = value.strip('"')
    return found


# -- no stack ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("n", "text"), [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th"),
                                         (13, "13th"), (21, "21st"), (22, "22nd"), (23, "23rd"), (28, "28th")])
def test_ordinal(n: int, text: str) -> None:
    assert ordinal(n) == text


# -- accepted and shown --------------------------------------------------------------------------------
@pytest.fixture
def policy(conn: Conn) -> str:
    """A storage policy on a resource of the stack's MinIO (names are global, so unique)."""
    config = load_settings()
    bucket, resource, name = (f"dyn-{uuid.uuid4().hex[:10]}", f"res_{uuid.uuid4().hex[:8]}",
                              f"pol_{uuid.uuid4().hex[:8]}")
    Minio(config.minio_endpoint, config.minio_root_user, config.minio_root_password.get_secret_value(),
          secure=False).make_bucket(bucket)
    props = {"type": "s3", "s3.endpoint": f"http://{config.minio_endpoint}", "s3.region": "us-east-1",
             "s3.bucket": bucket, "s3.root.path": "strata/dynamic", "s3.access_key": config.minio_root_user,
             "s3.secret_key": config.minio_root_password.get_secret_value(), "use_path_style": "true"}
    run(conn, f'CREATE RESOURCE "{resource}" PROPERTIES (' + ", ".join(f'"{k}" = "{v}"' for k, v in props.items())
        + ")")
    run(conn, f'CREATE STORAGE POLICY {name} PROPERTIES ("storage_resource" = "{resource}", "cooldown_ttl" = "1d")')
    return name


def test_every_property_is_accepted_and_shown(conn: Conn, db: str, policy: str) -> None:
    given = {"enable": "true", "time_unit": "WEEK", "time_zone": "Asia/Shanghai", "start": "-4", "end": "2",
             "prefix": "w", "buckets": "4", "start_day_of_week": "3", "start_day_of_month": "5",
             "create_history_partition": "true", "history_partition_num": "2", "hot_partition_num": "1",
             "storage_policy": policy, "storage_medium": "SSD"}
    _create(conn, "events", _props(**given))
    shown = _shown_properties(conn, "events")
    for key, value in given.items():
        assert shown[P + key] == value, (key, shown)
    found = _dynamic(conn)
    assert list(found) == ["events"]
    row = found["events"]
    # LastUpdateTime / LastSchedulerTime: the scheduler may have added partitions already.
    assert {k: v for k, v in row.items() if not k.startswith("Last") or k.endswith("Msg")} == {
        "TableName": "events", "Enable": "true", "TimeUnit": "WEEK", "Start": "-4", "End": "2", "Prefix": "w",
        "Buckets": "4", "ReplicationNum": "1", "StartOf": "WEDNESDAY", "State": "NORMAL",
        "LastCreatePartitionMsg": "", "LastDropPartitionMsg": "", "ReservedHistoryPeriods": "NULL"}


def test_show_dynamic_partition_tables_shape_and_defaults(conn: Conn, db: str) -> None:
    assert columns(conn, "SHOW DYNAMIC PARTITION TABLES") == COLUMNS
    assert rows(conn, "SHOW DYNAMIC PARTITION TABLES") == []
    _create(conn, "plain", "")  # a RANGE table without dynamic properties is not listed
    _create(conn, "daily", _props(enable="false", time_unit="day", end="3"), buckets=5)
    found = _dynamic(conn)
    assert list(found) == ["daily"]
    row = found["daily"]
    # Doris' defaults: start never drops, prefix p, the table's bucket count, NONE for DAY.
    assert (row["Enable"], row["TimeUnit"], row["Start"], row["End"], row["Prefix"], row["Buckets"],
            row["ReplicationNum"], row["StartOf"]) == ("false", "DAY", NEVER, "3", "p", "5", "1", "NONE")
    assert (row["LastUpdateTime"], row["LastSchedulerTime"]) == (None, None)
    assert (row["State"], row["LastCreatePartitionMsg"], row["LastDropPartitionMsg"],
            row["ReservedHistoryPeriods"]) == ("NORMAL", "", "", "NULL")
    # Values are stored in one spelling: units upper case, booleans lower case.
    shown = _shown_properties(conn, "daily")
    assert (shown[P + "time_unit"], shown[P + "enable"], shown[P + "end"]) == ("DAY", "false", "3")
    assert P + "start" not in shown and shown["replication_allocation"] == "tag.location.default: 1"


def test_show_create_table_of_an_empty_range_table_round_trips(conn: Conn, db: str) -> None:
    _create(conn, "empty", _props(enable="false", time_unit="DAY", end="2"))
    text = show_create(conn, "empty")
    assert "PARTITION BY RANGE(`dt`)\n()" in text
    run(conn, "DROP TABLE empty")
    run(conn, text)  # what SHOW CREATE TABLE prints creates the same table
    assert _shown_properties(conn, "empty")[P + "time_unit"] == "DAY"


@pytest.mark.parametrize(("unit", "extra", "start_of"), [
    ("HOUR", {}, "NONE"), ("DAY", {}, "NONE"), ("YEAR", {}, "NONE"),
    ("WEEK", {}, "MONDAY"), ("WEEK", {"start_day_of_week": "7"}, "SUNDAY"),
    ("MONTH", {}, "1st of month"), ("MONTH", {"start_day_of_month": "2"}, "2nd of month"),
    ("MONTH", {"start_day_of_month": "3"}, "3rd of month"), ("MONTH", {"start_day_of_month": "11"}, "11th of month"),
    ("MONTH", {"start_day_of_month": "22"}, "22nd of month"),
])
def test_start_of(conn: Conn, db: str, unit: str, extra: dict[str, str], start_of: str) -> None:
    _create(conn, "t", _props(enable="false", time_unit=unit, end="1", **extra), column="dt DATETIME")
    assert _dynamic(conn)["t"]["StartOf"] == start_of


def test_keys_are_case_insensitive_and_datetime_takes_hour(conn: Conn, db: str) -> None:
    run(conn, "CREATE TABLE h (ts DATETIME(3), v INT) DUPLICATE KEY(ts) PARTITION BY RANGE(ts) () "
              'DISTRIBUTED BY HASH(ts) BUCKETS 2 PROPERTIES ("Dynamic_Partition.Enable" = "FALSE", '
              '"DYNAMIC_PARTITION.time_unit" = "hour", "dynamic_partition.END" = "24")')
    row = _dynamic(conn)["h"]
    assert (row["Enable"], row["TimeUnit"], row["End"]) == ("false", "HOUR", "24")


def test_from_another_database(conn: Conn, db: str) -> None:
    _create(conn, "t", _props(enable="false", time_unit="DAY", end="1"))
    other = f"t_{uuid.uuid4().hex[:10]}"
    run(conn, f"CREATE DATABASE {other}")
    try:
        run(conn, f"USE {other}")
        assert rows(conn, "SHOW DYNAMIC PARTITION TABLES") == []
        assert list(_dynamic(conn, db)) == ["t"]
        assert list(_dynamic(conn, f"{db}")) == ["t"]
        fails(conn, "SHOW DYNAMIC PARTITION TABLES FROM no_such_db_x", BAD_DB_ERROR, "no_such_db_x")
    finally:
        run(conn, f"USE {db}")
        run(conn, f"DROP DATABASE {other} FORCE")


def test_last_update_time_is_the_latest_partition_change(conn: Conn, db: str) -> None:
    run(conn, "SET time_zone = 'UTC'")
    # Disabled: the scheduler leaves the table alone; a partition made by CREATE is no partition change.
    _create(conn, "t", _props(enable="false", time_unit="DAY", end="1"),
            partitions='(PARTITION p1 VALUES LESS THAN ("2020-01-01"))')
    assert (_dynamic(conn)["t"]["LastUpdateTime"], _dynamic(conn)["t"]["LastSchedulerTime"]) == (None, None)
    run(conn, 'ALTER TABLE t ADD PARTITION p2 VALUES LESS THAN ("2020-02-01")')
    row = _dynamic(conn)["t"]
    added = datetime.strptime(str(row["LastUpdateTime"]), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    assert abs(datetime.now(tz=UTC) - added) < timedelta(minutes=2)
    assert row["LastSchedulerTime"] == row["LastUpdateTime"]
    run(conn, "ALTER TABLE t DROP PARTITION p1")
    dropped = datetime.strptime(str(_dynamic(conn)["t"]["LastUpdateTime"]), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    assert dropped >= added


# -- ALTER TABLE SET -----------------------------------------------------------------------------------
def test_alter_enables_disables_and_changes_end(conn: Conn, db: str) -> None:
    _create(conn, "t", _props(enable="false", time_unit="DAY", start="-7", end="3"))
    run(conn, f'ALTER TABLE t SET ("{P}enable" = "true")')
    assert (_dynamic(conn)["t"]["Enable"], _dynamic(conn)["t"]["End"]) == ("true", "3")
    run(conn, f'ALTER TABLE t SET ("{P}end" = "5", "{P}buckets" = "7")')
    row = _dynamic(conn)["t"]
    assert (row["Enable"], row["End"], row["Start"], row["Buckets"]) == ("true", "5", "-7", "7")
    run(conn, f'ALTER TABLE t SET ("{P}enable" = "false")')
    assert _dynamic(conn)["t"]["Enable"] == "false"
    shown = _shown_properties(conn, "t")
    assert (shown[P + "enable"], shown[P + "end"], shown[P + "start"], shown[P + "buckets"]) == \
        ("false", "5", "-7", "7")


def test_alter_makes_a_range_table_dynamic(conn: Conn, db: str) -> None:
    _create(conn, "t", "", partitions='(PARTITION p1 VALUES LESS THAN ("2020-01-01"))')
    assert _dynamic(conn) == {}
    # The merged properties are checked: enable alone lacks time_unit and end.
    fails(conn, f'ALTER TABLE t SET ("{P}enable" = "false")', WRONG_ARGUMENTS, P + "time_unit", "required")
    fails(conn, f'ALTER TABLE t SET ("{P}enable" = "false", "{P}time_unit" = "MONTH")', WRONG_ARGUMENTS,
          P + "end is required")
    assert _dynamic(conn) == {} and not any(k.startswith(P) for k in _shown_properties(conn, "t"))
    run(conn, f'ALTER TABLE t SET ("{P}enable" = "false", "{P}time_unit" = "MONTH", "{P}end" = "2")')
    row = _dynamic(conn)["t"]
    assert (row["Enable"], row["TimeUnit"], row["End"], row["StartOf"]) == ("false", "MONTH", "2", "1st of month")


def test_alter_checks_the_merged_properties(conn: Conn, db: str) -> None:
    _create(conn, "t", _props(enable="false", time_unit="DAY", end="3", storage_medium="HDD"))
    fails(conn, f'ALTER TABLE t SET ("{P}end" = "0")', WRONG_ARGUMENTS, P + "end", "from 1 to 500")
    fails(conn, f'ALTER TABLE t SET ("{P}hot_partition_num" = "2")', WRONG_ARGUMENTS, P + "hot_partition_num",
          "HDD")
    fails(conn, f'ALTER TABLE t SET ("{P}time_unit" = "HOUR")', WRONG_ARGUMENTS, "HOUR", "DATETIME")
    fails(conn, f'ALTER TABLE t SET ("{P}nope" = "1")', WRONG_ARGUMENTS, f"'{P}nope'")
    # A refused ALTER changes nothing, not even its valid parts.
    fails(conn, f'ALTER TABLE t SET ("{P}enable" = "true", "{P}start" = "1")', WRONG_ARGUMENTS, P + "start")
    row = _dynamic(conn)["t"]
    assert (row["Enable"], row["End"], row["Start"]) == ("false", "3", NEVER)
    # Other properties of a dynamic table still change on their own.
    run(conn, 'ALTER TABLE t SET ("group_commit_interval_ms" = "500")')
    assert _shown_properties(conn, "t")["group_commit_interval_ms"] == "500"


def test_alter_refuses_tables_that_can_not_be_dynamic(conn: Conn, db: str) -> None:
    run(conn, "CREATE TABLE u (dt DATE, v INT) DUPLICATE KEY(dt) DISTRIBUTED BY HASH(dt) BUCKETS 1")
    fails(conn, f'ALTER TABLE u SET ("{P}time_unit" = "DAY", "{P}end" = "1")', WRONG_ARGUMENTS, "BY RANGE")
    _create(conn, "n", "", column="k INT", partitions='(PARTITION p1 VALUES LESS THAN ("10"))')
    fails(conn, f'ALTER TABLE n SET ("{P}time_unit" = "DAY", "{P}end" = "1")', WRONG_ARGUMENTS,
          "DATE or DATETIME", "INT")


# -- errors --------------------------------------------------------------------------------------------
_OK = {"enable": "false", "time_unit": "DAY", "end": "3"}


@pytest.mark.parametrize(("changes", "fragments"), [
    ({"time_unit": "MINUTE"}, (P + "time_unit must be one of", "MINUTE")),
    ({"time_unit": None}, (P + "time_unit", "required")),
    ({"end": None}, (P + "end is required",)),
    ({"start": "0"}, (P + "start must be from",)),
    ({"start": "5"}, (P + "start must be from",)),
    ({"start": "minus"}, (P + "start must be an integer", "minus")),
    ({"end": "0"}, (P + "end must be from 1 to 500", "not 0")),
    ({"end": "-1"}, (P + "end must be from 1",)),
    ({"time_zone": "Mars/Olympus"}, (P + "time_zone", "Mars/Olympus", "not a known time zone")),
    ({"prefix": "1p"}, (P + "prefix", "'1p'", "must start with a letter")),
    ({"prefix": "p-x"}, (P + "prefix", "'p-x'")),
    ({"enable": "yes"}, (P + "enable must be true or false", "yes")),
    ({"create_history_partition": "1"}, (P + "create_history_partition must be true or false",)),
    ({"x": "1"}, ("Unknown dynamic partition property", f"'{P}x'")),
    ({"storage_medium": "XYZ"}, (P + "storage_medium must be SSD or HDD", "XYZ")),
    ({"storage_medium": "HDD", "hot_partition_num": "2"}, (P + "hot_partition_num", "HDD")),
    ({"buckets": "0"}, (P + "buckets must be from 1",)),
    ({"start_day_of_week": "8"}, (P + "start_day_of_week must be from 1 to 7",)),
    ({"start_day_of_month": "29"}, (P + "start_day_of_month must be from 1 to 28",)),
    ({"storage_policy": "no_such_policy_q"}, ("Storage policy 'no_such_policy_q'", P + "storage_policy",
                                              "does not exist")),
])
def test_create_refuses_bad_properties(conn: Conn, db: str, changes: dict[str, str | None],
                                       fragments: tuple[str, ...]) -> None:
    given = {k: v for k, v in {**_OK, **changes}.items() if v is not None}
    props = "PROPERTIES (" + ", ".join(f'"{P}{k}" = "{v}"' for k, v in given.items()) + ")"
    fails(conn, f"CREATE TABLE t (dt DATE, v INT) DUPLICATE KEY(dt) PARTITION BY RANGE(dt) () "
                f"DISTRIBUTED BY HASH(dt) BUCKETS 1 {props}", WRONG_ARGUMENTS, *fragments)
    assert rows(conn, "SHOW TABLES") == []


def test_create_refuses_tables_that_can_not_be_dynamic(conn: Conn, db: str) -> None:
    props = _props(**_OK)
    fails(conn, f"CREATE TABLE u (dt DATE, v INT) DUPLICATE KEY(dt) DISTRIBUTED BY HASH(dt) BUCKETS 1 {props}",
          WRONG_ARGUMENTS, "partitioned BY RANGE")
    fails(conn, f"CREATE TABLE l (dt DATE, v INT) DUPLICATE KEY(dt) PARTITION BY LIST(dt) "
                f"(PARTITION p1 VALUES IN ('2020-01-01')) DISTRIBUTED BY HASH(dt) BUCKETS 1 {props}",
          WRONG_ARGUMENTS, "partitioned BY RANGE")
    fails(conn, f"CREATE TABLE two (a DATE, b DATE, v INT) DUPLICATE KEY(a, b) PARTITION BY RANGE(a, b) () "
                f"DISTRIBUTED BY HASH(a) BUCKETS 1 {props}", WRONG_ARGUMENTS, "on one column")
    fails(conn, f"CREATE TABLE i (k INT, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) () "
                f"DISTRIBUTED BY HASH(k) BUCKETS 1 {props}", WRONG_ARGUMENTS, "DATE or DATETIME", "not INT")
    fails(conn, f"CREATE TABLE h (dt DATE, v INT) DUPLICATE KEY(dt) PARTITION BY RANGE(dt) () "
                f"DISTRIBUTED BY HASH(dt) BUCKETS 1 {_props(enable='false', time_unit='HOUR', end='3')}",
          WRONG_ARGUMENTS, "time_unit HOUR needs a DATETIME partition column")
    fails(conn, f"CREATE TABLE c {props} AS SELECT CAST('2020-01-01' AS DATE) AS dt", WRONG_ARGUMENTS, "BY RANGE")
    assert rows(conn, "SHOW TABLES") == []


def test_dynamic_properties_are_table_level_only(conn: Conn, db: str) -> None:
    fails(conn, f"CREATE TABLE t (dt DATE, v INT) DUPLICATE KEY(dt) PARTITION BY RANGE(dt) "
                f'(PARTITION p1 VALUES LESS THAN ("2020-01-01") ("{P}end" = "3")) '
                f"DISTRIBUTED BY HASH(dt) BUCKETS 1", WRONG_ARGUMENTS, f"'{P}end' is a table property", "p1")
    _create(conn, "t", _props(enable="false", time_unit="DAY", end="3"),
            partitions='(PARTITION p1 VALUES LESS THAN ("2020-01-01"))')
    fails(conn, f'ALTER TABLE t MODIFY PARTITION p1 SET ("{P}storage_medium" = "HDD")', WRONG_ARGUMENTS,
          f"'{P}storage_medium' is a table property")
    fails(conn, f'ALTER TABLE t MODIFY PARTITION (*) SET ("{P}enable" = "true")', WRONG_ARGUMENTS,
          "table property")
    fails(conn, f'ALTER TABLE t ADD PARTITION p2 VALUES LESS THAN ("2020-02-01") ("{P}prefix" = "q")',
          WRONG_ARGUMENTS, f"'{P}prefix' is a table property", "p2")
    assert [r[1] for r in rows(conn, "SHOW PARTITIONS FROM t")] == ["p1"]
    assert _dynamic(conn)["t"]["Enable"] == "false"
