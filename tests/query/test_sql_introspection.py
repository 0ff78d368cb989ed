"""Doris' operator introspection through pymysql: SHOW BACKENDS / FRONTENDS, SHOW DATA, SHOW TABLETS /
TABLET, ADMIN SHOW REPLICA …, SHOW TRANSACTION, ADMIN SHOW FRONTEND CONFIG and SHOW PROC, answered with
this deployment's workers, SQL server and rowset records; each refused or filtered for a plain user."""

from __future__ import annotations

import os
import re

from tests.query.sqlkit import Conn, columns, fails, rows, run
from tests.query.test_sql_tiering import _policy as tiering_policy
from tests.query.test_sql_tiering import minio, resource, wait_cooled

__all__ = ["minio", "resource"]  # the tiering tests' fixtures, used here

_BACKEND_COLUMNS = ["BackendId", "Host", "HeartbeatPort", "BePort", "HttpPort", "BrpcPort", "ArrowFlightSqlPort",
                    "LastStartTime", "LastHeartbeat", "Alive", "SystemDecommissioned", "TabletNum", "DataUsedCapacity",
                    "TrashUsedCapacity", "AvailCapacity", "TotalCapacity", "UsedPct", "MaxDiskUsedPct",
                    "RemoteUsedCapacity", "Tag", "ErrMsg", "Version", "Status", "HeartbeatFailureCounter", "NodeRole"]
_SIZE = re.compile(r"^\d+\.\d{3} (B|KB|MB|GB|TB)$")


def _dicts(conn: Conn, sql: str) -> list[dict[str, object]]:
    names = columns(conn, sql)
    return [dict(zip(names, r, strict=True)) for r in rows(conn, sql)]


def _table(conn: Conn, name: str = "t", buckets: int = 2) -> None:
    run(conn, f"CREATE TABLE {name} (k INT, v VARCHAR(20)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS {buckets}")
    run(conn, f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b'), (3, 'c')")


def test_show_backends_lists_the_live_worker_with_its_tablets(conn: Conn, db: str) -> None:
    _table(conn)
    assert columns(conn, "SHOW BACKENDS")[:len(_BACKEND_COLUMNS)] == _BACKEND_COLUMNS
    found = _dicts(conn, "SHOW BACKENDS")
    alive = [b for b in found if b["Alive"] == "true"]
    assert alive, found
    worker = alive[0]
    assert worker["HttpPort"] == int(os.environ["STRATA_WORKER_PORT"]) or len(alive) > 1
    assert worker["LastStartTime"] and worker["LastHeartbeat"] and worker["ErrMsg"] == ""
    assert sum(int(str(b["TabletNum"])) for b in alive) >= 2  # this test's table alone has two
    assert all(_SIZE.match(str(b[c])) for b in found for c in ("DataUsedCapacity", "AvailCapacity", "TotalCapacity"))
    assert '"health": "ok"' in str(worker["Status"])


def test_show_frontends_is_this_sql_server(conn: Conn) -> None:
    found = _dicts(conn, "SHOW FRONTENDS")
    me = [f for f in found if f["QueryPort"] == int(os.environ["STRATA_SQL_PORT"])]
    assert len(me) == 1, found
    assert me[0]["Alive"] == "true" and me[0]["IsMaster"] == "true" and me[0]["CurrentConnected"] == "Yes"
    assert int(str(me[0]["ReplayedJournalId"])) >= 0 and me[0]["Version"]


def test_show_data_per_database_and_table(conn: Conn, db: str) -> None:
    _table(conn, "t", buckets=2)
    _table(conn, "u", buckets=3)
    data = rows(conn, "SHOW DATA")
    assert columns(conn, "SHOW DATA") == ["TableName", "Size", "ReplicaCount", "RemoteSize"]
    assert [r[0] for r in data] == ["t", "u", "Total", "Quota", "Left"]
    assert data[0][2] == 2 and data[1][2] == 3 and data[2][2] == 5
    assert _SIZE.match(data[0][1]) and data[0][1] != "0.000 B" and data[0][3] == "0.000 B"
    assert data[3][1] == "1024.000 TB"
    assert rows(conn, f"SHOW DATA FROM {db}") == data
    one = rows(conn, f"SHOW DATA FROM {db}.t")
    assert columns(conn, "SHOW DATA FROM t") == ["TableName", "IndexName", "Size", "ReplicaCount", "RowCount",
                                                 "RemoteSize"]
    assert one[0][0] == "t" and one[0][4] == 3 and one[0][2] == data[0][1]
    fails(conn, "SHOW DATA FROM nope_db.t", 1049)


def test_show_data_lists_only_what_a_user_may_see(reader: tuple[Conn, str, str], db: str) -> None:
    me, _, _ = reader
    assert [r[0] for r in rows(me, "SHOW DATA")] == ["open", "Total", "Quota", "Left"]
    assert rows(me, f"SHOW DATA FROM {db}.open")[0][0] == "open"
    fails(me, f"SHOW DATA FROM {db}.closed", 1142)


def test_show_tablets_and_tablet(conn: Conn, db: str) -> None:
    _table(conn, "t", buckets=3)
    tablets = _dicts(conn, "SHOW TABLETS FROM t")
    assert len(tablets) == 3
    assert sum(int(str(t["RowCount"])) for t in tablets) == 3
    assert all(t["Version"] == 1 and t["State"] == "NORMAL" for t in tablets)
    assert sum(int(str(t["LocalDataSize"])) for t in tablets) > 0
    assert any('"ssd"' in str(t["Tiers"]) for t in tablets)
    assert len(rows(conn, "SHOW TABLETS FROM t PARTITION (t)")) == 3  # an unpartitioned table's partition
    fails(conn, "SHOW TABLETS FROM t PARTITION (nope)", 1735)
    tablet = _dicts(conn, f"SHOW TABLET {tablets[0]['TabletId']}")
    assert tablet[0]["DbName"] == db and tablet[0]["TableName"] == "t" and tablet[0]["PartitionName"] == "t"
    fails(conn, "SHOW TABLET 999999999", 1105, "does not exist")


def test_admin_show_replica_status_and_distribution(conn: Conn, db: str) -> None:
    _table(conn, "t", buckets=2)
    status = _dicts(conn, "ADMIN SHOW REPLICA STATUS FROM t")
    assert len(status) == 2 and all(r["Status"] == "OK" and r["IsBad"] == "false" for r in status)
    assert rows(conn, "ADMIN SHOW REPLICA STATUS FROM t WHERE STATUS != 'OK'") == []
    assert len(rows(conn, "ADMIN SHOW REPLICA STATUS FROM t WHERE STATUS = 'OK'")) == 2
    distribution = _dicts(conn, "ADMIN SHOW REPLICA DISTRIBUTION FROM t")
    assert sum(int(str(r["ReplicaNum"])) for r in distribution) == 2
    assert any(r["NumPercent"] == "100.00 %" for r in distribution)


def test_operator_statements_need_admin(reader: tuple[Conn, str, str]) -> None:
    me, _, _ = reader
    for sql in ("SHOW BACKENDS", "SHOW FRONTENDS", "SHOW TABLETS FROM open", "SHOW TABLET 1000", "SHOW PROC '/'",
                "ADMIN SHOW REPLICA STATUS FROM open", "ADMIN SHOW REPLICA DISTRIBUTION FROM open"):
        fails(me, sql, 1227, "ADMIN_PRIV")


def test_show_transaction_by_label_and_id(conn: Conn, db: str) -> None:
    _table(conn)
    run(conn, "INSERT INTO t WITH LABEL my_load VALUES (9, 'z')")
    by_label = _dicts(conn, f"SHOW TRANSACTION FROM {db} WHERE label = 'my_load'")
    assert len(by_label) == 1
    txn = by_label[0]
    assert txn["Label"] == "my_load" and txn["TransactionStatus"] == "VISIBLE"
    assert txn["LoadJobSourceType"] == "INSERT_STREAMING" and txn["CommitTime"] and txn["FinishTime"]
    by_id = _dicts(conn, f"SHOW TRANSACTION WHERE id = {txn['TransactionId']}")
    assert by_id == by_label
    assert _dicts(conn, f"SHOW TRANSACTION WHERE ID = {int(str(txn['TransactionId'])) - 1}")[0]["Label"] != "my_load"
    fails(conn, f"SHOW TRANSACTION FROM {db} WHERE label = 'nope'", 1105, "does not exist")
    fails(conn, "SHOW TRANSACTION WHERE id = 999999999999999", 1105, "does not exist")


def test_show_transaction_needs_load_priv(conn: Conn, db: str, reader: tuple[Conn, str, str]) -> None:
    me, _, _ = reader
    run(conn, "INSERT INTO open WITH LABEL open_load VALUES (1)")
    fails(me, "SHOW TRANSACTION WHERE label = 'open_load'", 1142, "LOAD_PRIV")


def test_admin_show_frontend_config(conn: Conn, reader: tuple[Conn, str, str]) -> None:
    assert columns(conn, "ADMIN SHOW FRONTEND CONFIG") == ["Key", "Value", "Type", "IsMutable", "MasterOnly",
                                                           "Comment"]
    config = {str(r[0]): r for r in rows(conn, "ADMIN SHOW FRONTEND CONFIG")}
    assert config["sql_port"][1] == os.environ["STRATA_SQL_PORT"] and config["sql_port"][2] == "int"
    assert config["qe_max_connection"][3] == "false"
    assert not [k for k in config if "password" in k or "secret" in k]
    assert [r[0] for r in rows(conn, "ADMIN SHOW FRONTEND CONFIG LIKE 'sql_p%'")] == ["sql_port"]
    me, _, _ = reader
    fails(me, "ADMIN SHOW FRONTEND CONFIG", 1227, "ADMIN_PRIV")


def _ids(conn: Conn, db: str, table: str) -> tuple[int, int]:
    db_id = next(int(r[0]) for r in rows(conn, "SHOW PROC '/dbs'") if r[1] == db)
    table_id = next(int(r[0]) for r in rows(conn, f"SHOW PROC '/dbs/{db_id}'") if r[1] == table)
    return db_id, table_id


def test_show_proc_paths(conn: Conn, db: str) -> None:
    _table(conn, "t", buckets=2)
    assert {"backends", "frontends", "dbs", "statistic", "current_queries"} <= {r[0] for r in
                                                                              rows(conn, "SHOW PROC '/'")}
    assert columns(conn, "SHOW PROC '/backends'") == columns(conn, "SHOW BACKENDS")
    assert columns(conn, "SHOW PROC '/frontends'") == columns(conn, "SHOW FRONTENDS")
    dbs = _dicts(conn, "SHOW PROC '/dbs'")
    mine = next(d for d in dbs if d["DbName"] == db)
    assert mine["TableNum"] == 1 and mine["ReplicaCount"] == 2
    db_id, table_id = _ids(conn, db, "t")
    tables = _dicts(conn, f"SHOW PROC '/dbs/{db_id}'")
    assert tables[0]["TableName"] == "t" and tables[0]["VisibleVersion"] == 1
    partitions = _dicts(conn, f"SHOW PROC '/dbs/{db_id}/{table_id}/partitions'")
    assert [p["PartitionName"] for p in partitions] == ["t"]
    partition_id = partitions[0]["PartitionId"]
    tablets = rows(conn, f"SHOW PROC '/dbs/{db_id}/{table_id}/partitions/{partition_id}/{table_id}'")
    assert len(tablets) == 2
    tablet = tablets[0][0]
    detail = str(_dicts(conn, f"SHOW TABLET {tablet}")[0]["DetailCmd"])
    assert rows(conn, detail.rstrip(";"))[0][0] == tablet  # the tablet's replica
    statistic = rows(conn, "SHOW PROC '/statistic'")
    assert statistic[-1][0] == "Total"
    assert any("SHOW PROC" in str(r[-1]) for r in rows(conn, "SHOW PROC '/current_queries'"))
    fails(conn, "SHOW PROC '/nope'", 1235, "'/dbs'")
    fails(conn, "SHOW PROC '/dbs/999999'", 1105, "does not exist")


def test_insert_reply_names_label_and_transaction(conn: Conn, db: str) -> None:
    _table(conn)
    with conn.cursor() as cur:
        cur.execute("INSERT INTO t WITH LABEL replied VALUES (5, 'e')")
    message = conn._result.message.decode()  # type: ignore[union-attr]  # pymysql keeps the length byte
    match = re.search(r"\{'label':'replied', 'status':'VISIBLE', 'txnId':'(\d+)'\}$", message)
    assert match, message
    assert rows(conn, f"SHOW TRANSACTION WHERE id = {match.group(1)}")[0][1] == "replied"


def test_cooled_bytes_count_as_remote(conn: Conn, db: str, resource: tuple[str, str]) -> None:
    name, _ = resource
    policy = tiering_policy(conn, name)
    run(conn, f'CREATE TABLE c (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 '
              f'PROPERTIES ("storage_policy"="{policy}")')
    run(conn, "INSERT INTO c VALUES (1, 10), (2, 20)")
    wait_cooled(conn, db, "c", name)
    data = rows(conn, "SHOW DATA")
    assert data[0][0] == "c" and data[0][1] == "0.000 B" and data[0][3] != "0.000 B"
    tablet = _dicts(conn, "SHOW TABLETS FROM c")[0]
    assert tablet["LocalDataSize"] == 0 and int(str(tablet["RemoteDataSize"])) > 0
    assert f'"remote:{name}"' in str(tablet["Tiers"])
    assert any(b["RemoteUsedCapacity"] != "0.000 B" for b in _dicts(conn, "SHOW BACKENDS") if b["Alive"] == "true")
