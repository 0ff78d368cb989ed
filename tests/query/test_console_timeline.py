"""The console's table page at any density and its "restore to here": 500 commits within a minute
drawn with grouped marks and labels that never overlap (checked from the SVG's geometry), tags as
marks of their own, every tablet of a partition on one version axis, and restoring only for users
with the privilege RESTORE TABLE needs, by a CSRF-protected POST."""

from __future__ import annotations

import html
import itertools
import re
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import pytest

from tests.query.console_kit import Browser, csrf_of
from tests.query.sqlkit import Conn, connect, rows, run

pytestmark = pytest.mark.integration
ROOT = ("root", "")
# The font of the charts' text (query.console.html's CSS: `svg text{font:11px …}`), and a width per
# character above its digits' and lower-case letters' (0.64 em in DejaVu Sans); the browser test
# checks rendered boxes themselves.
FONT_PX = 11
CHAR_PX = 0.7 * FONT_PX


@dataclass(frozen=True)
class TextBox:
    text: str
    left: float
    top: float
    right: float
    bottom: float

    def overlaps(self, other: TextBox) -> bool:
        return (self.left < other.right and other.left < self.right
                and self.top < other.bottom and other.top < self.bottom)


def _attrs(tag: str) -> dict[str, str]:
    return {k: v.strip("'\"") for k, v in re.findall(r"([\w-]+)=('[^']*'|\"[^\"]*\"|[^\s>]+)", tag)}


def svg_of(page: str, opening: str) -> str:
    start = page.index(opening)
    return page[start:page.index("</svg>", start)]


def text_boxes(svg: str) -> list[TextBox]:
    """Every <text> of the SVG as the box it takes: x, y (baseline) and text-anchor from its
    attributes, its width estimated as characters × CHAR_PX, its height the font size (+ descent)."""
    boxes = []
    for tag, content in re.findall(r"<text([^>]*)>([^<]*)", svg):
        attrs = _attrs(tag)
        text = html.unescape(content)
        width = len(text) * CHAR_PX
        x, y = float(attrs["x"]), float(attrs["y"])
        anchor = attrs.get("text-anchor", "start")
        left = x - width / 2 if anchor == "middle" else x - width if anchor == "end" else x
        boxes.append(TextBox(text, left, y - FONT_PX, left + width, y + 0.3 * FONT_PX))
    return boxes


def overlapping(boxes: list[TextBox]) -> list[tuple[str, str]]:
    return [(a.text, b.text) for a, b in itertools.combinations(boxes, 2) if a.overlaps(b)]


def marks(svg: str, kind: str) -> list[dict[str, str]]:
    """The attributes of each `<g class={kind}-mark|{kind}-group …>`."""
    return [{"class": cls, **_attrs(tag)} for cls, tag in
            re.findall(rf"<g class=({kind}-mark|{kind}-group)([^>]*)>", svg)]


def members(found: list[dict[str, str]]) -> list[int]:
    return sorted(int(n) for m in found for n in (m.get("data-number") or m["data-numbers"]).split())


def _insert_concurrently(db: str, count: int, clients: int) -> None:
    """`count` INSERTs, each its own commit, from `clients` connections at once."""
    failures: list[BaseException] = []

    def insert(first: int) -> None:
        try:
            with connect(db) as c:
                for k in range(first, count, clients):
                    run(c, f"INSERT INTO t VALUES ({k}, {k})")
        except BaseException as exc:  # noqa: BLE001 - reported below, in the test's thread
            failures.append(exc)

    threads = [threading.Thread(target=insert, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures


def _page(browser: Browser, path: str) -> str:
    reply = browser.get(path, basic=ROOT)
    assert reply.status == 200, reply.body[:2000]
    return reply.body


def test_500_commits_in_a_minute_draw_grouped_marks_and_labels_that_never_overlap(
        browser: Browser, conn: Conn, db: str) -> None:
    started = time.monotonic()
    run(conn, "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
              'PROPERTIES ("enable_time_travel"="true")')
    _insert_concurrently(db, 500, 8)
    run(conn, "ALTER TABLE t CREATE TAG first_one AS OF VERSION 1")
    run(conn, "ALTER TABLE t CREATE TAG last_one")
    inserted = time.monotonic() - started
    times = [c["ts_ms"] for c in browser.get(f"/api/console/table/{db}/t", basic=ROOT).json["commits"]]
    assert len(times) == 500 and max(times) - min(times) < 60_000, "the 500 commits took more than a minute"

    page = _page(browser, f"/console/table/{db}/t")
    svg = svg_of(page, "<svg id=timeline")
    found = marks(svg, "commit")
    # Every commit is drawn, most of them inside groups that show their count.
    assert members(found) == list(range(1, 501))
    groups = [m for m in found if m["class"] == "commit-group"]
    assert groups and len(found) < 120 and all(int(g["data-count"]) > 1 for g in groups)
    first_group = [int(n) for n in groups[0]["data-numbers"].split()]
    assert f"#{first_group[0]} load at" in svg.split("class=commit-group", 1)[1].split("</title>", 1)[0]
    boxes = text_boxes(svg)
    labels = [b for b in boxes if b.text.startswith("#") or b.text.startswith("×")]
    assert len(labels) >= 10, labels
    # Each group shows its count (×n) unless no label row had room for it.
    counts = [b.text for b in boxes if b.text.startswith("×")]
    assert counts and len(counts) >= len(groups) // 2, (counts, len(groups))
    assert overlapping(boxes) == []
    assert all(0 <= b.left and b.right <= 1200 for b in boxes)
    ticks = re.findall(r"<text class=tick [^>]*data-ts=(\d+) data-fmt=(\w+)>([^<]*)<title>([^<]*) UTC</title>", svg)
    assert len(ticks) >= 4
    # One label format, the one the ticks' step needs: seconds, or milliseconds for a step under a
    # second (the 500 commits may take a few seconds or most of the minute, with the machine's speed).
    step = int(ticks[1][0]) - int(ticks[0][0])
    assert {fmt for _, fmt, _, _ in ticks} == {"ms" if step < 1000 else "s"}, (step, ticks)
    # Both tags are marks on the timeline, on their own lane.
    tags = marks(svg, "tag")
    assert sum(int(t.get("data-count", 1)) for t in tags) == 2
    assert "tag first_one: commit #1" in html.unescape(svg) and "tag last_one: commit #500" in html.unescape(svg)

    # Clicking a group zooms into its time span: its members are drawn again, further apart.
    href = html.unescape(re.search(r"<a href='([^']+)'><g class=commit-group", svg).group(1))  # type: ignore[union-attr]
    zoomed_svg = svg_of(_page(browser, unquote(href)), "<svg id=timeline")
    zoomed = marks(zoomed_svg, "commit")
    assert set(first_group) <= set(members(zoomed)) and len(zoomed) > 1
    assert overlapping(text_boxes(zoomed_svg)) == []
    assert "id=zoom-all" in _page(browser, unquote(href))

    # The rowsets' chart: 500 versions on one axis, its tick labels clear of each other.
    versions = svg_of(page, "<svg class=partition")
    assert versions.count("class=version-tick") < 100 and overlapping(text_boxes(versions)) == []
    elapsed = time.monotonic() - started
    print(f"500 commits inserted in {inserted:.1f} s; the test took {elapsed:.1f} s")


def test_every_tablet_of_a_partition_has_a_row_on_one_version_axis(browser: Browser, conn: Conn,
                                                                   db: str) -> None:
    run(conn, "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS "
              'THAN (100), PARTITION p2 VALUES LESS THAN (200)) DISTRIBUTED BY HASH(k) BUCKETS 3')
    run(conn, "INSERT INTO t VALUES " + ", ".join(f"({k}, {k})" for k in range(0, 60)))
    run(conn, "INSERT INTO t VALUES (1, 1)")  # one tablet of p1 gets a rowset of version 3
    run(conn, "INSERT INTO t VALUES (150, 1)")
    page = _page(browser, f"/console/table/{db}/t")
    for partition in ("p1", "p2"):
        svg = svg_of(page, f"<svg class=partition data-partition='{partition}'")
        assert re.findall(r"<g class=tablet data-bucket=(\d+)>", svg) == ["0", "1", "2"]
        assert overlapping(text_boxes(svg)) == []
    p1 = svg_of(page, "<svg class=partition data-partition='p1'")
    # A version is the same column in every tablet's row.
    drawn = re.findall(r"data-versions='(\d+-\d+)'[^>]*><title>[^<]*</title><rect x=([\d.]+)", p1)
    assert [v for v, _ in drawn].count("1-1") == 3 and len({x for v, x in drawn if v == "1-1"}) == 1, drawn
    (second,) = [float(x) for v, x in drawn if v not in ("1-1",)]
    assert second > float(drawn[0][1])
    # p2's one row went to one tablet: its row has a rowset, the other two rows are drawn empty.
    p2 = svg_of(page, "<svg class=partition data-partition='p2'")
    assert p2.count("class=rowset") == 1


def _restore_table(conn: Conn) -> list[tuple[Any, ...]]:
    run(conn, "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
              'PROPERTIES ("enable_time_travel"="true")')
    run(conn, "INSERT INTO t VALUES (1, 1), (2, 2)")
    run(conn, "INSERT INTO t VALUES (3, 3)")
    run(conn, "DELETE FROM t WHERE k = 1")
    return sorted(rows(conn, "SELECT * FROM t"))


def _first_commit_ms(browser: Browser, db: str) -> int:
    return int(browser.get(f"/api/console/table/{db}/t", basic=ROOT).json["commits"][0]["ts_ms"])


def test_restore_to_here_for_a_user_with_alter_priv(browser: Browser, conn: Conn, db: str,
                                                    user: tuple[str, str]) -> None:
    name, password = user
    _restore_table(conn)
    run(conn, f"GRANT SELECT_PRIV, ALTER_PRIV ON {db}.t TO '{name}'")
    at = _first_commit_ms(browser, db)
    assert browser.sign_in(name, password).status == 303
    page = browser.get(f"/console/table/{db}/t?at={at}").body
    assert "id=restore-start" in page
    confirm = browser.get(f"/console/table/{db}/t/restore?at={at}")
    assert confirm.status == 200 and "id=restore-confirm" in confirm.body
    # What the restore undoes: the later commits' rows, from the change feed.
    undone = re.findall(r"<tr class=ch-(\w+)><td>(\d+)</td>", confirm.body)
    assert sorted(undone) == [("delete", "1"), ("insert", "3")]
    # No CSRF token, a wrong one, or HTTP Basic credentials instead of the session: refused.
    assert browser.post(f"/console/table/{db}/t/restore", {"at": str(at)}).status == 403
    assert browser.post(f"/console/table/{db}/t/restore", {"at": str(at), "csrf": "guess"}).status == 403
    basic = Browser(browser.port)
    assert basic.post(f"/console/table/{db}/t/restore", {"at": str(at)}, basic=(name, password)).status == 403
    assert sorted(rows(conn, "SELECT * FROM t")) == [(2, 2), (3, 3)]
    done = browser.post(f"/console/table/{db}/t/restore", {"at": str(at), "csrf": csrf_of(confirm.body)})
    assert done.status == 303 and "restored=" in done.headers["Location"]
    assert sorted(rows(conn, "SELECT * FROM t")) == [(1, 1), (2, 2)]
    kinds = [c["kind"] for c in browser.get(f"/api/console/table/{db}/t").json["commits"]]
    assert kinds[-1] == "restore"
    assert "id=restored" in browser.get(done.headers["Location"]).body


def test_no_restore_without_the_privilege(browser: Browser, conn: Conn, db: str, user: tuple[str, str]) -> None:
    name, password = user
    before = _restore_table(conn)
    run(conn, f"GRANT SELECT_PRIV ON {db}.t TO '{name}'")  # may read the past, may not restore
    at = _first_commit_ms(browser, db)
    assert browser.sign_in(name, password).status == 303
    page = browser.get(f"/console/table/{db}/t?at={at}")
    assert page.status == 200 and "id=rows-as-of" in page.body and "restore-start" not in page.body
    confirm = browser.get(f"/console/table/{db}/t/restore?at={at}")
    assert confirm.status == 403 and "ALTER_PRIV" in confirm.body
    # A forged POST with the user's own valid CSRF token: the privilege check refuses it.
    token = csrf_of(browser.get("/console/logout").body)
    forged = browser.post(f"/console/table/{db}/t/restore", {"at": str(at), "csrf": token})
    assert forged.status == 403 and "ALTER_PRIV" in forged.body
    assert sorted(rows(conn, "SELECT * FROM t")) == before
