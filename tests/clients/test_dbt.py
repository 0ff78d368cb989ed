"""dbt-doris, the official Doris adapter for dbt, run as its users run it (issue 17): a project
(tests/clients/dbt/project) with a seed, a `table` model built twice (the second build swaps the new
table in with ALTER TABLE … REPLACE WITH TABLE), a `view`, an `incremental` model run again after new
rows arrive and then with --full-refresh, a `snapshot` taken twice around an update, `dbt test` and
`dbt docs generate`; and nothing of dbt's own (`__dbt_tmp`, `__dbt_backup`) left behind.

dbt-core and dbt-doris are installed from PyPI into a virtualenv of their own (tests/clients/install.py);
every step runs in one process of it (tests/clients/dbt/run_project.py), so dbt starts once."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pymysql
import pytest

from tests.clients import install
from tests.clients.matrix import Login

pytestmark = pytest.mark.integration

XFAIL: dict[tuple[str, str | None], str] = {}

PROJECT = Path(__file__).resolve().parent / "dbt" / "project"
RUNNER = Path(__file__).resolve().parent / "dbt" / "run_project.py"
SOURCE = ("CREATE TABLE new_orders (id INT, customer VARCHAR(10), amount DECIMAL(10,2), status VARCHAR(10), "
          "updated_at DATETIME) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
FIRST_ORDERS = ("INSERT INTO new_orders VALUES (1, 'ann', 10.50, 'pending', '2026-12-01 10:00:00'), "
                "(2, 'bob', 20.00, 'shipped', '2026-12-01 11:00:00')")
STEPS: list[list[str]] = [
    ["dbt", "seed"],
    ["dbt", "run"],
    ["dbt", "run", "--select", "customer_totals"],  # a table model's second build replaces the first
    ["sql", "INSERT INTO new_orders VALUES (3, 'cy', 7.00, 'new', '2026-12-02 10:00:00')"],
    ["dbt", "run", "--select", "orders_incremental"],  # only the new row goes in
    ["dbt", "run", "--select", "orders_incremental", "--full-refresh"],
    ["dbt", "snapshot"],
    ["sql", "UPDATE new_orders SET status = 'shipped', updated_at = '2026-12-03 09:00:00' WHERE id = 1"],
    ["dbt", "snapshot"],  # closes id 1's first version and opens its second
    ["dbt", "test"],
    ["dbt", "docs", "generate"],
]


def _sql(login: Login, statement: str) -> list[tuple[Any, ...]]:
    with pymysql.connect(host=login.host, port=login.port, user=login.user, password=login.password,
                         database=login.database, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute(statement)
        return [tuple(r) for r in cur.fetchall()]


@pytest.fixture(scope="module")
def project(login: Login, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], Path]:
    """(each step's outcome, the project directory after the run) of one run of STEPS."""
    try:
        python = install.dbt_python()
    except install.ClientUnavailable as exc:
        pytest.skip(str(exc))
    work = tmp_path_factory.mktemp("dbt")
    shutil.copytree(PROJECT, work, dirs_exist_ok=True)
    (work / "profiles.yml").write_text(json.dumps({"strata": {"target": "dev", "outputs": {"dev": {
        "type": "doris", "host": login.host, "port": login.port, "username": login.user,
        "password": login.password, "schema": login.database, "threads": 1}}}}))
    _sql(login, SOURCE)
    _sql(login, FIRST_ORDERS)
    out = work / "outcomes.json"
    proc = subprocess.run([str(python), str(RUNNER), str(work), str(work), json.dumps(STEPS), str(out)],
                          capture_output=True, text=True, timeout=900)
    if not out.exists():
        raise AssertionError(f"dbt runner failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n"
                             f"{proc.stderr[-3000:]}")
    return json.loads(out.read_text()), work


def _step(outcomes: list[dict[str, Any]], index: int) -> dict[str, Any]:
    found = outcomes[index]
    assert found["step"] == STEPS[index]
    return found


def _succeeded(outcomes: list[dict[str, Any]], index: int, node: str | None = None) -> None:
    """Step `index` succeeded (only its node `node`, when named)."""
    step = _step(outcomes, index)
    nodes = [n for n in step.get("nodes", []) if node is None or n["name"] == node]
    failed = [n for n in nodes if n["status"] not in ("success", "pass")]
    assert (node is not None or step["success"]) and not failed, (step["error"], failed)
    assert node is None or nodes, f"step {index} ran no node {node}"


def test_seed_and_first_build(project: tuple[list[dict[str, Any]], Path], login: Login) -> None:
    outcomes, _ = project
    _succeeded(outcomes, 0)
    _succeeded(outcomes, 1, "customer_totals")
    _succeeded(outcomes, 1, "orders_incremental")
    totals = _sql(login, "SELECT customer, total, orders FROM customer_totals")
    assert sorted((c, float(t), n) for c, t, n in totals) == [("ann", 15.75, 2), ("bob", 20.0, 1)]


def test_view_model(project: tuple[list[dict[str, Any]], Path], login: Login) -> None:
    outcomes, _ = project
    _succeeded(outcomes, 1, "shipped_orders")
    assert sorted(_sql(login, "SELECT id, customer FROM shipped_orders")) == [(2, "bob"), (3, "ann")]
    assert ("shipped_orders", "VIEW") in _sql(login, "SHOW FULL TABLES")


def test_table_model_built_twice(project: tuple[list[dict[str, Any]], Path], login: Login) -> None:
    outcomes, _ = project
    _succeeded(outcomes, 2)
    assert len(_sql(login, "SELECT * FROM customer_totals")) == 2


def test_incremental_model(project: tuple[list[dict[str, Any]], Path], login: Login) -> None:
    outcomes, _ = project
    _succeeded(outcomes, 3)
    run = _step(outcomes, 4)
    _succeeded(outcomes, 4)
    assert [n["message"] for n in run["nodes"]] == ["1 rows affected"]  # the new row only
    _succeeded(outcomes, 5)
    assert sorted(r[0] for r in _sql(login, "SELECT id FROM orders_incremental")) == [1, 2, 3]


def test_snapshot_twice(project: tuple[list[dict[str, Any]], Path], login: Login) -> None:
    outcomes, _ = project
    for index in (6, 7, 8):
        _succeeded(outcomes, index)
    versions = _sql(login, "SELECT status, dbt_valid_to IS NULL FROM orders_snapshot WHERE id = 1 "
                           "ORDER BY dbt_valid_from")
    assert versions == [("pending", 0), ("shipped", 1)]


# dbt-doris' catalog query (its doris__get_catalog macro), with the project's schema filled in.
CATALOG_QUERY = """with tables as (
    select null as "table_database", table_schema, table_name,
           case when table_type = 'BASE TABLE' then 'table' when table_type = 'VIEW' then 'view'
                else table_type end as table_type,
           null as table_owner, table_comment
    from information_schema.tables),
columns as (
    select null as "table_database", table_schema as "table_schema", table_name as "table_name",
           column_name as "column_name", ordinal_position as "column_index", data_type as "column_type",
           column_comment as "column_comment"
    from information_schema.columns)
select columns.table_database, columns.table_schema, columns.table_name, tables.table_type,
       tables.table_comment as "table_comment", tables.table_owner, columns.column_name, columns.column_index,
       columns.column_type, columns.column_comment
from tables join columns using (table_schema, table_name)
where tables.table_schema not in ('information_schema') and (upper(tables.table_schema) = upper('{schema}'))
order by column_index"""


def test_dbt_test_and_docs(project: tuple[list[dict[str, Any]], Path], login: Login) -> None:
    """`dbt test` runs every data test; `dbt docs generate` writes its catalog from dbt-doris' catalog
    query, whose rows are checked here. (dbt-core 1.10 then keys the rows by a NULL database and the
    models by '', so catalog.json lists no node — with Doris too: an adapter matter.)"""
    outcomes, work = project
    _succeeded(outcomes, 9)
    assert len(_step(outcomes, 9)["nodes"]) == 6  # unique and not_null on three models
    _succeeded(outcomes, 10)
    assert (work / "target" / "catalog.json").is_file()
    found = _sql(login, CATALOG_QUERY.format(schema=login.database))
    tables = {(r[2], r[3]) for r in found}
    assert {("customer_totals", "table"), ("shipped_orders", "view"), ("orders_incremental", "table")} <= tables
    assert ("customer_totals", "table", "customer", 1) in {(r[2], r[3], r[6], r[7]) for r in found}


def test_nothing_left_behind(project: tuple[list[dict[str, Any]], Path], login: Login) -> None:
    names = sorted(r[0] for r in _sql(login, "SHOW TABLES"))
    assert names == ["customer_totals", "new_orders", "orders", "orders_incremental", "orders_snapshot",
                     "shipped_orders"]
