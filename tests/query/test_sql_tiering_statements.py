"""Resources and storage policies through the SQL server, against the stack's MinIO: CREATE /
ALTER / DROP / SHOW RESOURCE and STORAGE POLICY, attaching policies and media to tables and
partitions of every keys model, and each error Doris gives (with MySQL codes). Resource and
policy names are global, so every test makes its own."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import pytest
from minio import Minio

from query.context import SqlFailure
from query.tiering import parse_cooldown_ttl
from schemas.config import load_settings
from storage.secrets import MASK, PREFIX
from tests.query.sqlkit import Conn, columns, fails, rows, run

WRONG_ARGUMENTS, UNKNOWN_ERROR = 1210, 1105
FUTURE = "2099-01-01 08:00:00"


# -- the ttl parser (no stack) ------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "seconds"), [("1d", 86400), ("1h", 3600), ("30m", 1800), ("45s", 45), ("120", 120),
                                               (" 2d ", 172800), ("3day", 259200), ("1week", 604800),
                                               ("1H", 3600)])
def test_cooldown_ttl_forms(text: str, seconds: int) -> None:
    assert parse_cooldown_ttl(text) == seconds


@pytest.mark.parametrize("text", ["0", "0d", "-1", "-5h", "", "soon", "1x", "1.5h", "1h30m", "d"])
def test_cooldown_ttl_refuses_zero_negative_and_garbage(text: str) -> None:
    with pytest.raises(SqlFailure) as caught:
        parse_cooldown_ttl(text)
    assert caught.value.code == WRONG_ARGUMENTS and "cooldown_ttl" in caught.value.message


# -- fixtures -----------------------------------------------------------------------------------------
def _unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def bucket(server: None) -> str:
    config = load_settings()
    name = f"tier-{uuid.uuid4().hex[:10]}"
    Minio(config.minio_endpoint, config.minio_root_user, config.minio_root_password.get_secret_value(),
          secure=False).make_bucket(name)
    return name


def _properties(bucket: str, user: tuple[str, str], **changes: str | None) -> str:
    """A resource's PROPERTIES clause; a change of None leaves that property out."""
    props: dict[str, str | None] = {
        "type": "s3", "s3.endpoint": f"http://{load_settings().minio_endpoint}", "s3.region": "us-east-1",
        "s3.bucket": bucket, "s3.root.path": "strata/tests", "s3.access_key": user[0], "s3.secret_key": user[1],
        "use_path_style": "true", **changes}
    return "(" + ", ".join(f'"{k}" = "{v}"' for k, v in props.items() if v is not None) + ")"


@pytest.fixture
def resource(conn: Conn, bucket: str, s3_user: tuple[str, str]) -> str:
    name = _unique("res")
    run(conn, f'CREATE RESOURCE "{name}" PROPERTIES {_properties(bucket, s3_user)}')
    return name


def _policy(conn: Conn, resource: str, **cooldown: str) -> str:
    name = _unique("pol")
    props = ", ".join(f'"{k}" = "{v}"' for k, v in {"storage_resource": resource, **cooldown}.items())
    run(conn, f"CREATE STORAGE POLICY {name} PROPERTIES ({props})")
    return name


def _items(conn: Conn, name: str) -> dict[str, str]:
    found = rows(conn, f'SHOW RESOURCES WHERE NAME = "{name}"')
    assert {r[:2] for r in found} <= {(name, "s3")}, found
    return {r[2]: r[3] for r in found}


def _policy_row(conn: Conn, name: str) -> dict[str, Any]:
    names = columns(conn, "SHOW STORAGE POLICY")
    found = [dict(zip(names, r, strict=True)) for r in rows(conn, "SHOW STORAGE POLICY") if r[0] == name]
    assert len(found) == 1, found
    return found[0]


# -- resources ------------------------------------------------------------------------------------------
def test_create_resource_is_probed_and_shown_with_its_secret_masked(conn: Conn, bucket: str,
                                                                     s3_user: tuple[str, str]) -> None:
    name = _unique("res")
    run(conn, f'CREATE RESOURCE "{name}" PROPERTIES {_properties(bucket, s3_user)}')
    assert columns(conn, "SHOW RESOURCES") == ["Name", "ResourceType", "Item", "Value"]
    items = _items(conn, name)
    assert items == {"type": "s3", "s3.endpoint": f"http://{load_settings().minio_endpoint}", "s3.region": "us-east-1",
                     "s3.bucket": bucket, "s3.root.path": "strata/tests", "s3.access_key": s3_user[0],
                     "s3.secret_key": MASK, "use_path_style": "true"}
    shown = str(rows(conn, "SHOW RESOURCES"))
    assert s3_user[1] not in shown and PREFIX not in shown, "neither the secret nor its sealed form is shown"
    assert {r[0] for r in rows(conn, f'SHOW RESOURCES LIKE "{name[:6]}%"')} >= {name}
    assert rows(conn, 'SHOW RESOURCES LIKE "no_such_%"') == []
    fails(conn, f'CREATE RESOURCE "{name}" PROPERTIES {_properties(bucket, s3_user)}', WRONG_ARGUMENTS,
          name, "already exists")
    run(conn, f'CREATE RESOURCE IF NOT EXISTS "{name}" PROPERTIES {_properties(bucket, s3_user)}')
    assert _items(conn, name) == items


def test_create_resource_refuses_bad_properties_and_stores_that_do_not_work(conn: Conn, bucket: str,
                                                                             s3_user: tuple[str, str]) -> None:
    cases: list[tuple[dict[str, str | None], int, tuple[str, ...]]] = [
        ({"type": "hdfs"}, WRONG_ARGUMENTS, ("type 'hdfs' is not supported",)),
        ({"s3.bucket": None}, WRONG_ARGUMENTS, ("missing required property s3.bucket",)),
        ({"s3.colour": "red"}, WRONG_ARGUMENTS, ("unknown property s3.colour",)),
        ({"s3.endpoint": "127.0.0.1:1"}, UNKNOWN_ERROR, ("did not answer", "127.0.0.1:1")),
        ({"s3.bucket": "no-such-bucket-here"}, WRONG_ARGUMENTS, ("bucket 'no-such-bucket-here' does not exist",)),
        ({"s3.secret_key": "not-the-secret"}, WRONG_ARGUMENTS, ("refused",)),
    ]
    for changes, code, fragments in cases:
        name = _unique("bad")
        message = fails(conn, f'CREATE RESOURCE "{name}" PROPERTIES {_properties(bucket, s3_user, **changes)}',
                        code, f"resource '{name}'", *fragments)
        assert "not-the-secret" not in message and s3_user[1] not in message
        assert rows(conn, f'SHOW RESOURCES WHERE NAME = "{name}"') == [], f"{changes}: nothing was created"


def test_alter_resource_is_probed_and_keeps_its_type(conn: Conn, resource: str, bucket: str,
                                                     s3_user: tuple[str, str]) -> None:
    fails(conn, f'ALTER RESOURCE "{resource}" PROPERTIES ("s3.secret_key" = "not-the-secret")', WRONG_ARGUMENTS,
          f"resource '{resource}'", "refused")
    fails(conn, f'ALTER RESOURCE "{resource}" PROPERTIES ("type" = "hdfs")', WRONG_ARGUMENTS, resource, "type")
    fails(conn, f'ALTER RESOURCE "{resource}" PROPERTIES ("s3.colour" = "red")', WRONG_ARGUMENTS, "s3.colour")
    fails(conn, 'ALTER RESOURCE "no_such_res" PROPERTIES ("s3.root.path" = "x")', WRONG_ARGUMENTS,
          "no_such_res", "does not exist")
    run(conn, f'ALTER RESOURCE "{resource}" PROPERTIES ("s3.root.path" = "strata/elsewhere", '
              f'"s3.secret_key" = "{s3_user[1]}")')
    items = _items(conn, resource)
    assert (items["s3.root.path"], items["s3.secret_key"], items["type"]) == ("strata/elsewhere", MASK, "s3")
    assert s3_user[1] not in str(rows(conn, "SHOW RESOURCES"))
    # Once a policy can have cooled data on it, the resource's location is fixed.
    policy = _policy(conn, resource, cooldown_ttl="1d")
    other = f"tier-{uuid.uuid4().hex[:10]}"
    fails(conn, f'ALTER RESOURCE "{resource}" PROPERTIES ("s3.bucket" = "{other}")', WRONG_ARGUMENTS,
          resource, policy, "s3.bucket")
    run(conn, f'ALTER RESOURCE "{resource}" PROPERTIES ("s3.connection.maximum" = "8")')
    assert _items(conn, resource)["s3.connection.maximum"] == "8"


def test_drop_resource_refused_while_a_policy_uses_it(conn: Conn, resource: str) -> None:
    fails(conn, 'DROP RESOURCE "no_such_res"', WRONG_ARGUMENTS, "no_such_res", "does not exist")
    run(conn, 'DROP RESOURCE IF EXISTS "no_such_res"')
    policy = _policy(conn, resource, cooldown_ttl="1h")
    fails(conn, f'DROP RESOURCE "{resource}"', WRONG_ARGUMENTS, resource, "used by storage policy", policy)
    run(conn, f"DROP STORAGE POLICY {policy}")
    run(conn, f'DROP RESOURCE "{resource}"')
    assert rows(conn, f'SHOW RESOURCES WHERE NAME = "{resource}"') == []
    fails(conn, f"CREATE STORAGE POLICY {_unique('pol')} PROPERTIES (\"storage_resource\" = \"{resource}\", "
                "\"cooldown_ttl\" = \"1d\")", WRONG_ARGUMENTS, resource, "does not exist")


# -- storage policies -----------------------------------------------------------------------------------
def test_show_storage_policy_in_doris_shape_with_ttl_in_seconds(conn: Conn, resource: str,
                                                                s3_user: tuple[str, str]) -> None:
    assert columns(conn, "SHOW STORAGE POLICY") == ["PolicyName", "Id", "Version", "Type", "StorageResource",
                                                    "CooldownDatetime", "CooldownTtl", "properties"]
    for ttl, seconds in (("1d", "86400"), ("1h", "3600"), ("30m", "1800"), ("45s", "45"), ("600", "600")):
        row = _policy_row(conn, _policy(conn, resource, cooldown_ttl=ttl))
        assert (row["Version"], row["Type"], row["StorageResource"], row["CooldownDatetime"], row["CooldownTtl"]) \
            == ("0", "STORAGE", resource, "-1", seconds), ttl
        shown = json.loads(row["properties"])
        assert shown["s3.secret_key"] == MASK and shown["type"] == "s3" and shown["s3.access_key"] == s3_user[0]
    listing = str(rows(conn, "SHOW STORAGE POLICY"))
    assert s3_user[1] not in listing and PREFIX not in listing


def test_create_storage_policy_errors(conn: Conn, resource: str) -> None:
    def create(props: str, *fragments: str) -> None:
        fails(conn, f"CREATE STORAGE POLICY {_unique('pol')} PROPERTIES ({props})", WRONG_ARGUMENTS, *fragments)

    on = f'"storage_resource" = "{resource}"'
    create(f'{on}, "cooldown_ttl" = "1d", "cooldown_datetime" = "{FUTURE}"', "can't be set together")
    create(on, "cooldown_datetime or cooldown_ttl must be set")
    create('"cooldown_ttl" = "1d"', "missing [storage_resource]")
    create('"storage_resource" = "no_such_res", "cooldown_ttl" = "1d"', "no_such_res", "does not exist")
    create(f'{on}, "cooldown_ttl" = "1d", "colour" = "red"', "Unknown storage policy property colour")
    for bad in ("0", "-5", "soon"):
        create(f'{on}, "cooldown_ttl" = "{bad}"', "cooldown_ttl", bad)
    create(f'{on}, "cooldown_datetime" = "2030-13-01"', "cooldown_datetime", "yyyy-MM-dd HH:mm:ss")
    policy = _policy(conn, resource, cooldown_ttl="1d")
    fails(conn, f'CREATE STORAGE POLICY {policy} PROPERTIES ({on}, "cooldown_ttl" = "2d")', WRONG_ARGUMENTS,
          policy, "already exists")
    run(conn, f'CREATE STORAGE POLICY IF NOT EXISTS {policy} PROPERTIES ({on}, "cooldown_ttl" = "2d")')
    assert _policy_row(conn, policy)["CooldownTtl"] == "86400", "IF NOT EXISTS left the policy as it was"


def test_alter_storage_policy_switches_between_ttl_and_datetime(conn: Conn, resource: str, bucket: str,
                                                                s3_user: tuple[str, str]) -> None:
    run(conn, "SET time_zone = '+08:00'")
    policy = _policy(conn, resource, cooldown_ttl="1d")
    run(conn, f'ALTER STORAGE POLICY {policy} PROPERTIES ("cooldown_datetime" = "2030-01-01 08:00:00")')
    row = _policy_row(conn, policy)
    assert (row["CooldownDatetime"], row["CooldownTtl"], row["Version"]) == ("2030-01-01 08:00:00", "-1", "1")
    run(conn, "SET time_zone = 'UTC'")
    assert _policy_row(conn, policy)["CooldownDatetime"] == "2030-01-01 00:00:00", "stored as one UTC instant"
    run(conn, f'ALTER STORAGE POLICY {policy} PROPERTIES ("cooldown_ttl" = "2h")')
    row = _policy_row(conn, policy)
    assert (row["CooldownDatetime"], row["CooldownTtl"], row["Version"]) == ("-1", "7200", "2")
    fails(conn, f'ALTER STORAGE POLICY {policy} PROPERTIES ("cooldown_ttl" = "1h", "cooldown_datetime" = "{FUTURE}")',
          WRONG_ARGUMENTS, "can't be set together")
    fails(conn, f'ALTER STORAGE POLICY {policy} PROPERTIES ("cooldown_ttl" = "never")', WRONG_ARGUMENTS,
          "cooldown_ttl", "never")
    fails(conn, f'ALTER STORAGE POLICY {policy} PROPERTIES ("storage_resource" = "no_such_res")', WRONG_ARGUMENTS,
          "no_such_res", "does not exist")
    fails(conn, 'ALTER STORAGE POLICY no_such_pol PROPERTIES ("cooldown_ttl" = "1h")', WRONG_ARGUMENTS,
          "no_such_pol", "does not exist")
    # Nothing cooled under the policy yet: its resource may change.
    other = _unique("res")
    run(conn, f'CREATE RESOURCE "{other}" PROPERTIES {_properties(bucket, s3_user, **{"s3.root.path": "other"})}')
    run(conn, f'ALTER STORAGE POLICY {policy} PROPERTIES ("storage_resource" = "{other}")')
    assert (_policy_row(conn, policy)["StorageResource"], _policy_row(conn, policy)["CooldownTtl"]) == (other, "7200")


def test_storage_resource_fixed_once_data_cooled_under_the_policy(conn: Conn, db: str, resource: str, bucket: str,
                                                                  s3_user: tuple[str, str]) -> None:
    policy = _policy(conn, resource, cooldown_ttl="1")
    run(conn, f'CREATE TABLE cold (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 '
              f'PROPERTIES ("storage_policy" = "{policy}")')
    run(conn, "INSERT INTO cold VALUES (1, 10), (2, 20)")
    deadline = time.monotonic() + 60
    tiers: list[Any] = []
    while time.monotonic() < deadline:
        tiers = [r[0] for r in rows(conn, f"SELECT TIER FROM information_schema.rowsets WHERE TABLE_SCHEMA = '{db}' "
                                          "AND TABLE_NAME = 'cold'")]
        if tiers and all(str(t).startswith("remote:") for t in tiers):
            break
        time.sleep(0.5)
    assert tiers and all(str(t) == f"remote:{resource}" for t in tiers), f"the tiering agent did not cool: {tiers}"
    other = _unique("res")
    run(conn, f'CREATE RESOURCE "{other}" PROPERTIES {_properties(bucket, s3_user, **{"s3.root.path": "other"})}')
    fails(conn, f'ALTER STORAGE POLICY {policy} PROPERTIES ("storage_resource" = "{other}")', WRONG_ARGUMENTS,
          policy, "storage_resource", "cold")
    run(conn, f'ALTER STORAGE POLICY {policy} PROPERTIES ("cooldown_ttl" = "1d")')  # its times may still change
    assert sorted(rows(conn, "SELECT k, v FROM cold")) == [(1, 10), (2, 20)]


# -- policies and media on tables -----------------------------------------------------------------------
_MODELS = {
    "DUPLICATE": "(k INT, v INT) DUPLICATE KEY(k)",
    "UNIQUE": "(k INT, v INT) UNIQUE KEY(k)",
    "AGGREGATE": "(k INT, v INT SUM) AGGREGATE KEY(k)",
}
_PARTITIONS = ('PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN ("10"), PARTITION p2 VALUES LESS THAN ("20"), '
               'PARTITION p3 VALUES LESS THAN ("30")) DISTRIBUTED BY HASH(k) BUCKETS 1')


def _partition_policies(conn: Conn, table: str) -> dict[str, str]:
    names = columns(conn, f"SHOW PARTITIONS FROM {table}")
    return {r[1]: r[names.index("RemoteStoragePolicy")] for r in rows(conn, f"SHOW PARTITIONS FROM {table}")}


@pytest.mark.parametrize("model", list(_MODELS))
def test_policies_attach_at_create_alter_and_modify_partition(conn: Conn, db: str, resource: str, model: str) -> None:
    first, second, third = (_policy(conn, resource, cooldown_ttl="1d") for _ in range(3))
    run(conn, f'CREATE TABLE t {_MODELS[model]} {_PARTITIONS} PROPERTIES ("storage_policy" = "{first}")')
    run(conn, "INSERT INTO t VALUES (1, 1), (15, 2), (25, 3)")
    assert _partition_policies(conn, "t") == {"p1": first, "p2": first, "p3": first}
    run(conn, f'ALTER TABLE t SET ("storage_policy" = "{second}")')
    run(conn, f'ALTER TABLE t MODIFY PARTITION (p1, p2) SET ("storage_policy" = "{third}")')
    assert _partition_policies(conn, "t") == {"p1": third, "p2": third, "p3": second}
    assert f'"storage_policy" = "{second}"' in rows(conn, "SHOW CREATE TABLE t")[0][1]
    assert rows(conn, f"SHOW STORAGE POLICY USING FOR {third}") == [(third, db, "t", "p1,p2")]
    assert rows(conn, f"SHOW STORAGE POLICY USING FOR {second}") == [(second, db, "t", "ALL")]
    assert rows(conn, f"SHOW STORAGE POLICY USING FOR {first}") == []
    run(conn, f'ALTER TABLE t MODIFY PARTITION (*) SET ("storage_policy" = "{first}")')
    assert _partition_policies(conn, "t") == {"p1": first, "p2": first, "p3": first}
    assert sorted(rows(conn, "SELECT k, v FROM t")) == [(1, 1), (15, 2), (25, 3)], "loads and reads go on"


def test_unknown_policy_is_refused_everywhere(conn: Conn, db: str) -> None:
    fails(conn, f'CREATE TABLE t {_MODELS["DUPLICATE"]} DISTRIBUTED BY HASH(k) BUCKETS 1 '
                'PROPERTIES ("storage_policy" = "no_such_pol")', WRONG_ARGUMENTS, "storage policy 'no_such_pol'",
          "does not exist")
    fails(conn, f'CREATE TABLE t {_MODELS["DUPLICATE"]} PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN ("10") '
                '("storage_policy" = "no_such_pol")) DISTRIBUTED BY HASH(k) BUCKETS 1', WRONG_ARGUMENTS,
          "no_such_pol")
    run(conn, f"CREATE TABLE t {_MODELS['UNIQUE']} {_PARTITIONS}")
    fails(conn, 'ALTER TABLE t SET ("storage_policy" = "no_such_pol")', WRONG_ARGUMENTS, "no_such_pol",
          "does not exist")
    fails(conn, 'ALTER TABLE t MODIFY PARTITION p1 SET ("storage_policy" = "no_such_pol")', WRONG_ARGUMENTS,
          "no_such_pol")
    fails(conn, 'ALTER TABLE t ADD PARTITION p4 VALUES LESS THAN ("40") ("storage_policy" = "no_such_pol")',
          WRONG_ARGUMENTS, "no_such_pol")
    assert set(_partition_policies(conn, "t").values()) == {""}


def test_drop_storage_policy_refused_while_a_table_or_partition_names_it(conn: Conn, db: str, resource: str) -> None:
    fails(conn, "DROP STORAGE POLICY no_such_pol", WRONG_ARGUMENTS, "no_such_pol", "does not exist")
    run(conn, "DROP STORAGE POLICY IF EXISTS no_such_pol")
    on_table, on_partition = _policy(conn, resource, cooldown_ttl="1d"), _policy(conn, resource, cooldown_ttl="2d")
    run(conn, f'CREATE TABLE whole {_MODELS["AGGREGATE"]} DISTRIBUTED BY HASH(k) BUCKETS 1 '
              f'PROPERTIES ("storage_policy" = "{on_table}")')
    run(conn, f'CREATE TABLE parts {_MODELS["DUPLICATE"]} PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN ("10"), '
              f'PARTITION p2 VALUES LESS THAN ("20") ("storage_policy" = "{on_partition}")) '
              "DISTRIBUTED BY HASH(k) BUCKETS 1")
    using = rows(conn, "SHOW STORAGE POLICY USING")
    assert (on_table, db, "whole", "ALL") in using and (on_partition, db, "parts", "p2") in using
    assert columns(conn, "SHOW STORAGE POLICY USING") == ["PolicyName", "Database", "Table", "Partitions"]
    fails(conn, f"DROP STORAGE POLICY {on_table}", WRONG_ARGUMENTS, on_table, f"{db}.whole")
    fails(conn, f"DROP STORAGE POLICY {on_partition}", WRONG_ARGUMENTS, on_partition, f"{db}.parts", "p2")
    run(conn, 'ALTER TABLE whole SET ("storage_policy" = "")')  # detached: the policy is free again
    assert (on_table, db, "whole", "ALL") not in rows(conn, "SHOW STORAGE POLICY USING")
    run(conn, "DROP TABLE parts FORCE")
    run(conn, f"DROP STORAGE POLICY {on_table}")
    run(conn, f"DROP STORAGE POLICY {on_partition}")
    assert {r[0] for r in rows(conn, "SHOW STORAGE POLICY")}.isdisjoint({on_table, on_partition})


def test_storage_medium_and_cooldown_time(conn: Conn, db: str) -> None:
    run(conn, "SET time_zone = '+08:00'")
    run(conn, f'CREATE TABLE m {_MODELS["UNIQUE"]} PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN ("10") '
              '("storage_medium" = "HDD"), PARTITION p2 VALUES LESS THAN ("20")) DISTRIBUTED BY HASH(k) BUCKETS 1 '
              f'PROPERTIES ("storage_medium" = "SSD", "storage_cooldown_time" = "{FUTURE}")')
    text = rows(conn, "SHOW CREATE TABLE m")[0][1]
    assert '"storage_medium" = "ssd"' in text and '"storage_cooldown_time" = "2099-01-01 00:00:00"' in text, \
        "the session's +08:00 instant stored as UTC"
    names = columns(conn, "SHOW PARTITIONS FROM m")
    media = {r[1]: r[names.index("StorageMedium")] for r in rows(conn, "SHOW PARTITIONS FROM m")}
    assert media == {"p1": "HDD", "p2": "SSD"}
    run(conn, 'ALTER TABLE m SET ("storage_cooldown_time" = "2098-06-01 12:00:00")')
    assert '"storage_cooldown_time" = "2098-06-01 04:00:00"' in rows(conn, "SHOW CREATE TABLE m")[0][1]
    run(conn, 'ALTER TABLE m MODIFY PARTITION p2 SET ("storage_medium" = "hdd")')
    media = {r[1]: r[names.index("StorageMedium")] for r in rows(conn, "SHOW PARTITIONS FROM m")}
    assert media == {"p1": "HDD", "p2": "HDD"}
    run(conn, f'ALTER TABLE m MODIFY PARTITION p1 SET ("storage_medium" = "ssd", "storage_cooldown_time" = "{FUTURE}")')
    fails(conn, 'ALTER TABLE m SET ("storage_medium" = "tape")', WRONG_ARGUMENTS, "storage_medium", "tape")
    fails(conn, 'ALTER TABLE m SET ("storage_cooldown_time" = "2001-01-01 00:00:00")', WRONG_ARGUMENTS,
          "storage_cooldown_time", "later than now")
    fails(conn, 'ALTER TABLE m SET ("storage_cooldown_time" = "tomorrow")', WRONG_ARGUMENTS,
          "storage_cooldown_time", "yyyy-MM-dd HH:mm:ss")
    fails(conn, f'ALTER TABLE m MODIFY PARTITION p2 SET ("storage_medium" = "HDD", '
                f'"storage_cooldown_time" = "{FUTURE}")', WRONG_ARGUMENTS, "HDD", "storage_cooldown_time")
    fails(conn, f'CREATE TABLE bad {_MODELS["DUPLICATE"]} DISTRIBUTED BY HASH(k) BUCKETS 1 '
                'PROPERTIES ("storage_cooldown_time" = "2001-01-01 00:00:00")', WRONG_ARGUMENTS, "later than now")
    fails(conn, f'CREATE TABLE bad {_MODELS["DUPLICATE"]} PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN ("10") '
                '("storage_medium" = "floppy")) DISTRIBUTED BY HASH(k) BUCKETS 1', WRONG_ARGUMENTS, "floppy")
