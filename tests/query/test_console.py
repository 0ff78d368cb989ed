"""The web console (issue 9) end to end on the stack: real data made through the SQL port (a
time-travel table that cools to the stack's MinIO and is compacted, a routine load from Kafka, a
non-root user), then the JSON endpoints over plain HTTP and the HTML views rendered by headless
Chromium (`chromium --dump-dom`), with screenshots under var/screenshots/."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pymysql
import pytest

from schemas.config import Settings
from tests.query.chromium_kit import chromium_path
from tests.query.routine_load_kit import kafka_source, new_topic, produce
from tests.query.sqlkit import Conn, rows, run

pytestmark = pytest.mark.integration
SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"


@pytest.fixture(scope="module")
def chromium() -> str:
    return chromium_path()


def _base(config: Settings) -> str:
    return f"http://127.0.0.1:{config.http_port}"


def get(config: Settings, path: str, user: str = "root", password: str = "") -> tuple[int, Any]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    request = urllib.request.Request(_base(config) + path, headers={"Authorization": f"Basic {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
            status = response.status
            kind = response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        body, status, kind = exc.read(), exc.code, exc.headers.get("Content-Type", "")
    return status, json.loads(body) if "json" in kind else body.decode()


def api(config: Settings, path: str, **login: str) -> Any:
    status, body = get(config, path, **login)
    assert status == 200, (path, status, body)
    return body


def wait_for(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def browse(chromium: str, config: Settings, path: str, shot: str) -> str:
    """The DOM Chromium renders for the page `path` serves root, plus a screenshot. A browser sends
    no credentials until it is challenged, and the console answers a browser without a session with
    its sign-in form (tests/query/test_console_signin.py), so the page is fetched signed in and
    handed to Chromium as a file: it needs nothing else (no external assets)."""
    status, served = get(config, path)
    assert status == 200, (path, status, served)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="strata-chromium-") as profile:
        page_file = Path(profile) / "page.html"
        page_file.write_text(served, encoding="utf-8")
        url = page_file.as_uri()
        flags = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 f"--user-data-dir={profile}"]
        dom = subprocess.run([*flags, "--dump-dom", url], capture_output=True, text=True, timeout=120)
        assert dom.returncode == 0, dom.stderr[-2000:]
        picture = SCREENSHOTS / f"{shot}.png"
        picture.unlink(missing_ok=True)
        shot_run = subprocess.run([*flags, f"--screenshot={picture}", "--window-size=1400,1000", url],
                                  capture_output=True, text=True, timeout=120)
        assert shot_run.returncode == 0 and picture.stat().st_size > 10_000, shot_run.stderr[-2000:]
    return dom.stdout


def _cold_table(conn: Conn, config: Settings, db: str) -> str:
    """Table `t`: three loads cooled to a MinIO resource, a schema change, a delete, a compaction."""
    from minio import Minio

    minio = Minio(config.minio_endpoint, config.minio_root_user, config.minio_root_password.get_secret_value(),
                  secure=False)
    resource, bucket = f"res_{uuid.uuid4().hex[:8]}", f"console-{uuid.uuid4().hex[:10]}"
    minio.make_bucket(bucket)
    run(conn, f'CREATE RESOURCE "{resource}" PROPERTIES ("type"="s3", "s3.endpoint"="http://{config.minio_endpoint}", '
              f'"s3.region"="us-east-1", "s3.bucket"="{bucket}", "s3.root.path"="cold/{resource}", '
              f'"s3.access_key"="{config.minio_root_user}", '
              f'"s3.secret_key"="{config.minio_root_password.get_secret_value()}", "use_path_style"="true")')
    policy = f"pol_{uuid.uuid4().hex[:8]}"
    run(conn, f'CREATE STORAGE POLICY {policy} PROPERTIES ("storage_resource"="{resource}", "cooldown_ttl"="1")')
    run(conn, "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
              f'PROPERTIES ("enable_time_travel"="true", "time_travel_retention_days"="3", '
              f'"storage_policy"="{policy}")')
    for i in range(3):
        run(conn, f"INSERT INTO t VALUES ({3 * i + 1}, 1), ({3 * i + 2}, 2), ({3 * i + 3}, 3)")
        time.sleep(0.05)
    return resource


def test_console_end_to_end(conn: Conn, db: str, config: Settings, chromium: str) -> None:
    started = time.monotonic()
    resource = _cold_table(conn, config, db)
    remote = f"remote:{resource}"
    table_api = f"/api/console/table/{db}/t"

    def tiers() -> set[str]:
        return {r["tier"] for tb in api(config, table_api)["tablets"] for r in tb["rowsets"]}

    wait_for(lambda: tiers() == {remote}, 40, "t's rowsets to cool to MinIO")
    run(conn, 'ALTER TABLE t ADD COLUMN w INT DEFAULT "7"')
    run(conn, "DELETE FROM t WHERE k = 1")
    assert run(conn, "ADMIN COMPACT TABLE t WHERE TYPE = 'BASE'") >= 1
    wait_for(lambda: tiers() == {remote}, 40, "the compaction's output and stale inputs to be cold")

    # A routine load into `r`, and a user who may read only `r`.
    run(conn, "CREATE TABLE r (id INT NOT NULL, name VARCHAR(10)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
    topic = new_topic()
    produce(topic, [{"id": i, "name": f"n{i}"} for i in range(20)] + [b'{"id": oops'])
    run(conn, f'CREATE ROUTINE LOAD {db}.feed ON r PROPERTIES ("format" = "json", "max_batch_interval" = "0.3", '
              f'"max_error_number" = "5") {kafka_source(topic)}')
    user, password = f"u_{uuid.uuid4().hex[:8]}", "s3cret-pw"
    run(conn, f"CREATE USER '{user}'@'%' IDENTIFIED BY '{password}'")
    run(conn, f"GRANT SELECT_PRIV ON {db}.r TO '{user}'")
    try:
        def job() -> dict[str, Any]:
            jobs = [j for j in api(config, "/api/console/pipelines")["routine_loads"] if j["db"] == db]
            return jobs[0] if jobs else {}

        wait_for(lambda: job().get("loaded_rows") == 20 and job().get("error_rows") == 1, 40, "the job to load")
        _check_json(config, db, remote, user, password, job())
        _check_pages(chromium, config, conn, db, remote)
    finally:
        run(conn, f"STOP ROUTINE LOAD FOR {db}.feed")
        run(conn, f"DROP USER IF EXISTS '{user}'")
    print(f"console end-to-end test: {time.monotonic() - started:.1f} s")


def _check_json(config: Settings, db: str, remote: str, user: str, password: str, job: dict[str, Any]) -> None:
    # Tables: the keys model, partitions, rows, bytes per tier and the time-travel window.
    listing = api(config, "/api/console/tables")
    mine = next(d for d in listing["databases"] if d["name"] == db)
    t = next(x for x in mine["tables"] if x["name"] == "t")
    assert (t["keys_model"], t["partitions"], t["time_travel"]["retention_days"]) == ("DUPLICATE", 1, 3)
    assert t["time_travel"]["earliest"] is not None and set(t["bytes_by_tier"]) == {remote}
    # Rows stored in the latest snapshot's rowsets (the DELETE predicate still applies on read), and
    # what SELECT COUNT(*) answers.
    assert t["bytes_by_tier"][remote] > 0 and t["rows_stored"] == 9 and t["rows"] == 8, t
    assert remote in listing["tiers"]
    shown = json.dumps(listing)
    res = next(r for r in listing["resources"] if r["name"] == remote.removeprefix("remote:"))
    assert res["properties"]["s3.secret_key"] == "******" and "sealed:" not in shown

    # The timeline: commits by kind, a compaction (versions spanned, inputs stale), cooled rowsets.
    timeline = api(config, f"/api/console/table/{db}/t")
    kinds = [c["kind"] for c in timeline["commits"]]
    assert kinds == ["load", "load", "load", "schema_change", "delete"], kinds
    assert [c["rows_added"] for c in timeline["commits"][:3]] == [3, 3, 3]
    (compaction,) = timeline["compactions"]
    assert compaction["versions"][0] < compaction["versions"][1] and len(compaction["inputs"]) >= 3
    rowsets = [r for tb in timeline["tablets"] for r in tb["rowsets"]]
    assert {r["state"] for r in rowsets} == {"visible", "stale"} and {r["tier"] for r in rowsets} == {remote}
    # The cooldowns themselves, with when they happened: the three loads' rowsets went to the resource.
    cooled = [m for c in timeline["cooldowns"] for m in c["moves"]]
    assert len(cooled) >= 3 and {m["to"] for m in cooled} == {remote} and {m["from"] for m in cooled} <= {"ssd"}
    assert all(timeline["commits"][0]["ts_ms"] < c["ts_ms"] for c in timeline["cooldowns"])

    # As of the second load: the SQL, the versions and the rowsets that read touches; the SQL works.
    second = timeline["commits"][1]
    at = api(config, f"/api/console/table/{db}/t?at={second['ts_ms']}")["as_of"]
    assert at["readable"] and at["sql"] == f"SELECT * FROM `{db}`.`t` FOR TIME AS OF '{second['time']}'"
    # The compaction kept every row's version: its output alone answers the instant, read through version 2.
    assert [(r["versions"], r["read_through"]) for r in at["rowsets"]] == [([1, 3], 2)] and all(
        r["tier"] == remote for r in at["rowsets"])
    with pymysql.connect(host="127.0.0.1", port=config.sql_port, user="root", autocommit=True) as c:
        assert len(rows(c, at["sql"])) == 6
    status, body = get(config, f"/api/console/table/{db}/t?at=yesterday-ish")
    assert status == 400 and "not an instant" in body["msg"]

    # Pipelines: the job's rows, rate, lag and errors; the tiering queue; the file cache.
    assert job["state"] == "RUNNING" and job["lag"] == {"0": 0} and job["rows_per_s"] > 0
    assert job["error_rows"] == 1 and "JSON" in job["last_error"], job
    pipes = api(config, "/api/console/pipelines")
    queue = [q for q in pipes["tiering"]["tablets"] if q["db"] == db and q["table"] == "t"]
    assert len(queue) == 1 and queue[0]["due_now"] == [] and queue[0]["policy"].startswith("pol_")
    assert set(pipes["file_cache"]) >= {"hits", "misses", "hit_rate"} and pipes["file_cache"]["misses"] >= 1

    # Access follows the SQL users: the user sees only `r` (and its job); wrong passwords get 401.
    theirs = api(config, "/api/console/tables", user=user, password=password)
    assert [(d["name"], [x["name"] for x in d["tables"]]) for d in theirs["databases"]] == [(db, ["r"])]
    assert theirs["resources"] == [] and theirs["viewer"] == user
    assert get(config, f"/api/console/table/{db}/t", user=user, password=password)[0] == 404
    assert api(config, f"/api/console/table/{db}/r", user=user, password=password)["table"]["name"] == "r"
    assert [j["name"] for j in api(config, "/api/console/pipelines", user=user, password=password)
            ["routine_loads"] if j["db"] == db] == ["feed"]
    for login in ({"user": user, "password": "wrong"}, {"user": "root", "password": "x"},
                  {"user": "nobody_here", "password": ""}):
        status, body = get(config, "/api/console/tables", **login)
        assert status == 401 and "Access denied" in body["msg"], (login, status, body)
    no_auth = urllib.request.Request(_base(config) + "/api/console/tables")
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(no_auth, timeout=10)
    assert caught.value.code == 401 and "Basic" in caught.value.headers["WWW-Authenticate"]


def _check_pages(chromium: str, config: Settings, conn: Conn, db: str, remote: str) -> None:
    tables = browse(chromium, config, "/console", "console-tables")
    assert f"data-db=\"{db}\"" in tables and 'data-table="t"' in tables and 'data-table="r"' in tables
    assert f"/console/table/{db}/t" in tables and remote in tables and "3 d" in tables

    timeline = browse(chromium, config, f"/console/table/{quote(db)}/t", "console-timeline")
    assert '<svg id="timeline"' in timeline
    # Commits too close to tell apart (the three loads) may be drawn as one group; each is drawn once.
    drawn = [n for found in re.findall(r'class="commit-(?:mark|group)"[^>]*data-numbers?="([^"]*)"', timeline)
             for n in found.split()]
    assert sorted(drawn) == ["1", "2", "3", "4", "5"] and timeline.count('class="compaction-mark"') == 1
    assert 'data-kind="schema_change"' in timeline and 'data-kind="delete"' in timeline
    assert f'data-tier="{remote}" data-state="visible"' in timeline
    assert f'data-tier="{remote}" data-state="stale"' in timeline
    assert timeline.count('<tr class="commit"') == 5 and '<tr class="compaction">' in timeline
    assert timeline.count('class="cooldown-mark"') >= 1 and '<tr class="cooldown">' in timeline

    first = rows(conn, f"SHOW TIME TRAVEL ON {db}.t")[0][5]  # commit 1's time, the session zone UTC
    picked = browse(chromium, config, f"/console/table/{quote(db)}/t?at={quote(str(first))}", "console-as-of")
    assert f"FOR TIME AS OF '{first}'" in picked and 'id="as-of-line"' in picked
    assert picked.count('data-touched="true"') == 1

    signin = browse(chromium, config, "/console/login", "console-sign-in")
    assert 'action="/console/login"' in signin and 'type="password"' in signin

    pipelines = browse(chromium, config, "/console/pipelines", "console-pipelines")
    assert 'data-job="feed"' in pipelines and "RUNNING" in pipelines and "p0: 0" in pipelines
    assert 'class="tiering-tablet"' in pipelines and 'id="hit-rate"' in pipelines
