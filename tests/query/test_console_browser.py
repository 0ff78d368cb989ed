"""The console end to end in headless Chromium, driven like a user through the DevTools protocol
(tests/query/chromium_kit.py): sign in with the form (no credentials in any URL), open a table, pick
a moment on the timeline, read the rows as of then and the next commit's changes, and restore the
table to that moment. A screenshot of each step goes to var/test/console-e2e/ (paths printed)."""

from __future__ import annotations

import asyncio
import itertools
import re
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from query.console.layout import format_utc, text_width
from schemas.config import Settings
from tests.query.chromium_kit import Chromium, chromium_path
from tests.query.sqlkit import Conn, rows, run

pytestmark = pytest.mark.integration
SHOTS = Path(__file__).resolve().parents[2] / "var" / "test" / "console-e2e"


@pytest.fixture
def editor(conn: Conn, db: str) -> Iterator[tuple[str, str]]:
    """A user who may read `t` and restore it (RESTORE TABLE needs ALTER_PRIV)."""
    name, password = f"e2e_{uuid.uuid4().hex[:8]}", f"pw-{uuid.uuid4().hex[:8]}"
    run(conn, f"CREATE USER '{name}'@'%' IDENTIFIED BY '{password}'")
    yield name, password
    run(conn, f"DROP USER IF EXISTS '{name}'")


def _table(conn: Conn, db: str, name: str) -> None:
    run(conn, "CREATE TABLE t (k INT, v VARCHAR(10)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
              'PROPERTIES ("enable_time_travel"="true")')
    run(conn, "INSERT INTO t VALUES (1, 'one'), (2, 'two')")
    run(conn, "INSERT INTO t VALUES (3, 'three')")
    run(conn, "ALTER TABLE t CREATE TAG before_delete")
    run(conn, "DELETE FROM t WHERE k = 1")
    run(conn, "INSERT INTO t VALUES (4, 'four')")
    run(conn, f"GRANT SELECT_PRIV, ALTER_PRIV ON {db}.t TO '{name}'")


def _cells(rows_html: list[list[str]]) -> list[tuple[str, ...]]:
    return sorted(tuple(r) for r in rows_html)


ROWS_OF = """(sel) => Array.from(document.querySelectorAll(sel + ' tr')).slice(1)
    .map(tr => Array.from(tr.querySelectorAll('td')).map(td => td.textContent))"""


VIEWER_ZONE = "Asia/Kolkata"  # UTC+05:30: minutes and the date shift, so a UTC label cannot pass for it
TEXTS_OF = """Array.from(document.querySelectorAll('#timeline text')).map(t => {const b = t.getBBox();
    return [t.firstChild.nodeValue, b.x, b.y, b.width, b.height, t.dataset.ts || null, t.dataset.fmt || null,
            t.querySelector('title') ? t.querySelector('title').textContent : null]})"""
LOCAL_FORMATS = {"ms": "%H:%M:%S.%f", "s": "%H:%M:%S", "min": "%m-%d %H:%M", "day": "%Y-%m-%d"}


async def _check_timeline_geometry_and_zone(page: Chromium) -> None:
    """As rendered: no two texts of the timeline overlap, each is no wider than the layout's estimate
    (so the server's placement holds in the browser), and the ticks are in the viewer's time zone
    with UTC in their tooltips."""
    texts = await page.evaluate(TEXTS_OF)
    for a, b in itertools.combinations(texts, 2):
        apart = a[1] + a[3] <= b[1] or b[1] + b[3] <= a[1] or a[2] + a[4] <= b[2] or b[2] + b[4] <= a[2]
        assert apart, (a, b)
    assert [t for t in texts if t[3] > text_width(t[0]) + 0.5] == []
    ticks = [t for t in texts if t[5] is not None]
    assert ticks
    for text, *_, ts, fmt, title in ticks:
        local = datetime.fromtimestamp(int(ts) / 1000, ZoneInfo(VIEWER_ZONE)).strftime(LOCAL_FORMATS[fmt])
        assert text == (local[:-3] if fmt == "ms" else local), (text, ts, fmt)
        assert title == f"{format_utc(int(ts), fmt)} UTC" and text != format_utc(int(ts), fmt)
    # Chromium's ICU may name the zone by its older alias.
    assert await page.evaluate("document.querySelector('.viewer-zone').textContent") in (VIEWER_ZONE, "Asia/Calcutta")


def test_sign_in_pick_a_moment_see_rows_and_diff_then_restore(conn: Conn, db: str, config: Settings,
                                                               editor: tuple[str, str]) -> None:
    name, password = editor
    _table(conn, db, name)
    shots: list[Path] = []
    base = f"http://127.0.0.1:{config.http_port}"

    async def scenario() -> None:
        async with Chromium(chromium_path()) as page:
            await page.set_time_zone(VIEWER_ZONE)
            async def shot(step: str) -> None:
                shots.append(await page.screenshot(SHOTS / f"{len(shots) + 1}-{step}.png"))

            async def table_rows(selector: str) -> list[tuple[str, ...]]:
                return _cells(await page.evaluate(f"({ROWS_OF})({selector!r})"))

            # 1. The table's page asks for a sign-in; the form (a POST) signs in and comes back.
            await page.goto(f"{base}/console/table/{db}/t")
            assert "/console/login?" in await page.url()
            await page.type_into("#user", name)
            await page.type_into("#password", password)
            await shot("sign-in")
            await page.click("form.signin button")
            assert await page.url() == f"{base}/console/table/{db}/t"
            assert password not in await page.url() and await page.evaluate("document.cookie") == ""  # HttpOnly
            assert await page.evaluate("document.querySelector('#viewer').textContent") == name

            # 2. The tables list, then the table: its timeline with commits and the tag.
            await page.goto(f"{base}/console")
            await page.click("tr.table-row[data-table='t'] a")
            assert await page.url() == f"{base}/console/table/{db}/t"
            assert await page.evaluate("document.querySelectorAll('#timeline .tag-mark, #timeline .tag-group')"
                                       ".length") == 1
            await _check_timeline_geometry_and_zone(page)
            await shot("table")

            # 3. Pick the moment of commit 2 on the timeline (after zooming into a group if it is in one).
            for _ in range(3):
                if await page.evaluate("document.querySelector(\"g.commit-mark[data-number='2']\") !== null"):
                    break
                await page.click("g.commit-group[data-numbers~='2']")
            await page.click("g.commit-mark[data-number='2']")
            assert "?at=" in await page.url()
            assert await table_rows("#rows-as-of table") == [("1", "one"), ("2", "two"), ("3", "three")]
            # The change of the next commit (3, the DELETE): row 1 deleted.
            diff_title = await page.evaluate("document.querySelector('#diff').previousElementSibling.textContent")
            assert diff_title.startswith("Commit 3")
            diff = await table_rows("#diff table")
            assert [(r[0], r[1], r[2]) for r in diff] == [("1", "one", "delete")]
            await shot("as-of-commit-2")

            # 4. Restore to here: the confirmation lists what it undoes (the delete and the later insert).
            await page.click("#restore-start button")
            assert "/restore?at=" in await page.url()
            undone = await table_rows("#undone table")
            assert [(r[0], r[2]) for r in undone] == [("1", "delete"), ("4", "insert")]
            await shot("restore-confirm")
            await page.click("#restore-confirm button")
            assert "restored=" in await page.url()
            restored = await page.evaluate("document.querySelector('#restored').textContent")
            assert "RESTORE TABLE" in restored
            await shot("restored")

    asyncio.run(scenario())
    assert sorted(rows(conn, "SELECT k, v FROM t")) == [(1, "one"), (2, "two"), (3, "three")]
    last = rows(conn, "SHOW TIME TRAVEL ON t")[-1]
    assert last[6] == "restore" and re.match(r"RESTORE TO TIME AS OF", str(last[10]))
    for picture in shots:
        assert picture.stat().st_size > 10_000
        print(f"screenshot: {picture}")
