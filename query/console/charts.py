"""The console's SVG charts: a table's timeline (commits, tags, cooldowns, compactions on one time
axis) and its rowsets per tablet (one chart per partition, its tablets on one version axis). The
geometry — grouping of marks too close to tell apart, label rows, ticks — is query.console.layout's;
this module only draws it.

Times: the axis ticks carry their instant (`data-ts`, `data-fmt`) and are written in UTC; the page's
script rewrites them in the viewer's time zone (query.console.html). Every mark's tooltip says its
instant in UTC.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from query.console.layout import Group, Label, Scale, group_marks, place_labels, text_width, time_ticks, version_ticks
from query.console.markup import KIND_COLORS, e, human_bytes, kind_color, tier_color

# Marks closer than this many pixels are drawn as one group.
GROUP_GAP_PX = 18
# Members a group's tooltip lists before "… and n more".
TOOLTIP_MEMBERS = 40

WIDTH = 1200
X0, X1 = 110, 1180  # the time axis; lane names go left of it


@dataclass(frozen=True)
class Lane:
    name: str
    y: float  # the marks' middle
    label_rows: tuple[float, ...]  # baselines of the lane's label rows (above its marks)


COMMITS = Lane("commits", 44, (14, 29))
TAGS = Lane("tags", 80, (66,))
COOLDOWNS = Lane("cooldowns", 102, ())
COMPACTIONS = Lane("compactions", 124, ())
AXIS_Y = 140
TICK_BASELINE = 156
HEIGHT = 166


@dataclass(frozen=True)
class Window:
    """The span of time the timeline shows: all of the table's history, or a zoomed part."""

    lo: int
    hi: int
    zoomed: bool


def window_of(data: dict[str, Any], start: int | None, end: int | None) -> Window | None:
    """The instants to show: `start`…`end` when zoomed, else every mark's, padded so that the first
    and last marks are not on the chart's edges. None when the table has no marks."""
    if start is not None and end is not None and start < end:
        return Window(start, end, True)
    stamps = [m["ts_ms"] for key in ("commits", "compactions", "cooldowns", "tags") for m in data.get(key, [])]
    if not stamps:
        return None
    lo, hi = min(stamps), max(stamps)
    pad = max((hi - lo) // 40, 1)
    return Window(lo - pad, hi + pad, False)


def _tooltip(lines: Sequence[str]) -> str:
    shown = list(lines[:TOOLTIP_MEMBERS])
    if len(lines) > TOOLTIP_MEMBERS:
        shown.append(f"… and {len(lines) - TOOLTIP_MEMBERS} more (click to zoom in)")
    return f"<title>{e(chr(10).join(shown))}</title>"


def _zoom_href(href: str, group: Group[dict[str, Any]]) -> str:
    """Where clicking a mark goes: a single mark's moment, or a group's time span (zoomed in)."""
    first, last = group.members[0]["ts_ms"], group.members[-1]["ts_ms"]
    if first == last:
        return f"{href}?at={first}"
    return f"{href}?from={first}&amp;to={last}"


def _text(label: Label, css: str) -> str:
    return f"<text class={css} x={label.x:.1f} y={label.baseline} text-anchor=middle>{e(label.text)}</text>"


def _draw_lane(lane: Lane, marks: list[dict[str, Any]], scale: Scale, href: str, css: str,
               describe: Callable[[dict[str, Any]], str], label_of: Callable[[dict[str, Any]], str],
               shape: Callable[[float, float, str], str], color_of: Callable[[dict[str, Any]], str]) -> list[str]:
    groups = group_marks(marks, lambda m: scale.x(m["ts_ms"]), GROUP_GAP_PX)
    # A group's label is its count, short enough that at the densest (a group every GROUP_GAP_PX) every
    # group's count finds room on one of two label rows.
    labels = place_labels([(_middle(g), label_of(g.members[0]) if len(g.members) == 1 else f"×{len(g.members)}")
                           for g in groups], lane.label_rows, X0 - 8, WIDTH - 2) if lane.label_rows else \
        [None] * len(groups)
    parts = []
    for group, label in zip(groups, labels, strict=True):
        colors = {color_of(m) for m in group.members}
        color = colors.pop() if len(colors) == 1 else KIND_COLORS["compaction"]
        tooltip = _tooltip([describe(m) for m in group.members])
        numbers = " ".join(str(m.get("number", "")) for m in group.members).strip()
        if len(group.members) == 1:
            mark = shape(_middle(group), lane.y, color)
            kind = f" data-kind='{e(group.members[0].get('kind', ''))}'" if "kind" in group.members[0] else ""
            parts.append(f"<a href='{_zoom_href(href, group)}'><g class={css}-mark{kind} data-number='{numbers}'>"
                         f"{tooltip}{mark}</g></a>")
        else:
            parts.append(f"<a href='{_zoom_href(href, group)}'><g class={css}-group data-count={len(group.members)} "
                         f"data-numbers='{numbers}'>{tooltip}<rect x={group.first_x - 1:.1f} y={lane.y - 7} "
                         f"width={GROUP_GAP_PX - 2} height=14 rx=5 fill='{color}' stroke='#101828' "
                         "stroke-width=1.5/></g></a>")
        if label is not None:
            parts.append(_text(label, f"{css}-label"))
    return parts


def _middle(group: Group[dict[str, Any]]) -> float:
    """Where a mark is drawn: a single mark at its instant; a group as a pill over the pixels its
    members may take (its first mark and the GROUP_GAP_PX after it), so that groups never overlap."""
    return group.x if len(group.members) == 1 else group.first_x - 1 + (GROUP_GAP_PX - 2) / 2


def _circle(x: float, y: float, color: str) -> str:
    return f"<circle cx={x:.1f} cy={y} r=6 fill='{color}'/>"


def _flag(x: float, y: float, color: str) -> str:
    return f"<path d='M{x:.1f} {y + 7} L{x:.1f} {y - 7} L{x + 9:.1f} {y - 3} L{x:.1f} {y + 1}' fill='{color}' " \
           f"stroke='{color}' stroke-width=1.5/>"


def _triangle(x: float, y: float, color: str) -> str:
    return f"<path d='M{x - 7:.1f} {y - 6} L{x + 7:.1f} {y - 6} L{x:.1f} {y + 7} Z' fill='{color}'/>"


def _diamond(x: float, y: float, color: str) -> str:
    return f"<path d='M{x:.1f} {y - 8} L{x + 8:.1f} {y} L{x:.1f} {y + 8} L{x - 8:.1f} {y} Z' fill='{color}'/>"


def timeline_svg(data: dict[str, Any], href: str, window: Window) -> str:
    """The timeline of `data` (query.console.data.table_timeline) over `window`."""
    scale = Scale(window.lo, window.hi, X0, X1)

    def shown(key: str) -> list[dict[str, Any]]:
        return [m for m in data.get(key, []) if window.lo <= m["ts_ms"] <= window.hi]

    parts = [f"<svg id=timeline class=timeline width={WIDTH} height={HEIGHT} viewBox='0 0 {WIDTH} {HEIGHT}' "
             "xmlns='http://www.w3.org/2000/svg' role=img aria-label='commits over time'>",
             f"<line x1={X0} y1={AXIS_Y} x2={X1} y2={AXIS_Y} stroke='#98a2b3'/>"]
    for lane in (COMMITS, TAGS, COOLDOWNS, COMPACTIONS):
        parts.append(f"<text class=lane-name x=4 y={lane.y + 4}>{lane.name}</text>")
    for tick in time_ticks(scale):
        half = text_width(tick.text) / 2
        if tick.x - half < 0 or tick.x + half > WIDTH:
            continue
        parts.append(f"<line x1={tick.x:.1f} y1={AXIS_Y} x2={tick.x:.1f} y2={AXIS_Y + 4} stroke='#98a2b3'/>"
                     f"<text class=tick x={tick.x:.1f} y={TICK_BASELINE} text-anchor=middle data-ts={tick.value} "
                     f"data-fmt={tick.fmt}>{e(tick.text)}<title>{e(tick.text)} UTC</title></text>")
    parts += _draw_lane(
        COMMITS, shown("commits"), scale, href, "commit",
        lambda c: f"#{c['number']} {c['kind']} at {c['time']} UTC: +{c['rows_added']} −{c['rows_removed']} "
                  f"{c['description']}",
        lambda c: f"#{c['number']}", _circle, lambda c: kind_color(c["kind"]))
    parts += _draw_lane(
        TAGS, shown("tags"), scale, href, "tag",
        lambda t: f"tag {t['name']}: commit #{t['commit_number']} at {t['time']} UTC",
        lambda t: str(t["name"]), _flag, lambda t: KIND_COLORS["tag"])
    parts += _draw_lane(
        COOLDOWNS, shown("cooldowns"), scale, href, "cooldown",
        lambda c: f"{c['rowsets']} rowset(s) moved to {', '.join(sorted({m['to'] for m in c['moves']}))} at "
                  f"{c['time']} UTC", lambda c: "", _triangle, lambda c: KIND_COLORS["cooldown"])
    parts += _draw_lane(
        COMPACTIONS, shown("compactions"), scale, href, "compaction",
        lambda c: f"compaction of {c['partition']}/{c['bucket']} versions {c['versions'][0]}–{c['versions'][1]} "
                  f"({len(c['inputs'])} inputs) at {c['time']} UTC", lambda c: "", _diamond,
        lambda c: KIND_COLORS["compaction"])
    at = data.get("as_of")
    if at is not None and window.lo <= at["ts_ms"] <= window.hi:
        ax = scale.x(at["ts_ms"])
        parts.append(f"<line id=as-of-line x1={ax:.1f} y1={COMMITS.y - 10} x2={ax:.1f} y2={AXIS_Y + 2} "
                     "stroke='#101828' stroke-dasharray='4 3'/>")
    parts.append("</svg>")
    return "".join(parts)


# -- rowsets per tablet ---------------------------------------------------------------------------------
TABLET_X0, TABLET_X1 = 80, 1180
LANE_H = 20
AXIS_H = 20


def _lanes(rowsets: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """Each rowset's lane in its tablet's row: visible ones on the first, stale ones stacked below
    without overlapping versions."""
    lanes: list[list[tuple[int, int]]] = [[]]
    placed = []
    for r in rowsets:
        span = (r["start_version"], r["end_version"])
        if r["state"] == "visible":
            lane = 0
        else:
            lane = next((i for i in range(1, len(lanes))
                         if all(span[1] < s or span[0] > end for s, end in lanes[i])), len(lanes))
            if lane == len(lanes):
                lanes.append([])
        lanes[lane].append(span)
        placed.append((lane, r))
    return placed


def _rowset(r: dict[str, Any], scale: Scale, y: float, touched: set[str]) -> str:
    x0 = scale.x(r["start_version"] - 0.5) + 1
    w = max(scale.x(r["end_version"] + 0.5) - 1 - x0, 2)
    is_touched = r["rowset_id"] in touched
    stroke = "stroke='#101828' stroke-width=2.5" if is_touched else "stroke='#0004'"
    opacity = "1" if r["state"] == "visible" else ".45"
    dash = " stroke-dasharray='3 2'" if r["state"] == "stale" else ""
    versions = f"{r['start_version']}–{r['end_version']}"
    # The versions are written inside the rowset only where they fit (the tooltip always has them).
    text = f"<text x={x0 + 3:.1f} y={y + 13}>{versions}</text>" if text_width(versions) + 6 <= w else ""
    return (f"<g class=rowset data-rowset='{e(r['rowset_id'])}' data-tier='{e(r['tier'])}' "
            f"data-state='{r['state']}' data-versions='{r['start_version']}-{r['end_version']}'"
            f"{' data-touched=true' if is_touched else ''}>"
            f"<title>{e(r['rowset_id'])}: versions {versions}, {r['num_rows']} rows, {human_bytes(r['size_bytes'])}, "
            f"{e(r['tier'])}, {r['state']}{' since ' + e(r['stale']) + ' UTC' if r['stale'] else ''}</title>"
            f"<rect x={x0:.1f} y={y} width={w:.1f} height={LANE_H - 4} rx=3 fill='{tier_color(r['tier'])}' "
            f"fill-opacity={opacity} {stroke}{dash}/>{text}</g>")


def partition_svg(partition: str, tablets: list[dict[str, Any]], touched: set[str]) -> str:
    """One partition's tablets, a row each, on one version axis: version v is the same column in
    every row, so the tablets' rowsets line up by the commits that wrote them."""
    top = max((r["end_version"] for tb in tablets for r in tb["rowsets"]), default=1)
    scale = Scale(0.5, top + 0.5, TABLET_X0, TABLET_X1)
    rows = [(tb, _lanes(tb["rowsets"])) for tb in tablets]
    height = AXIS_H + sum((max((lane for lane, _ in placed), default=0) + 1) * LANE_H + 6 for _, placed in rows)
    parts = [f"<svg class=partition data-partition='{e(partition)}' width={WIDTH} height={height} "
             f"viewBox='0 0 {WIDTH} {height}' xmlns='http://www.w3.org/2000/svg'>",
             "<text x=4 y=13 class=muted>version</text>"]
    for tick in version_ticks(top, scale):
        parts.append(f"<text class=version-tick x={tick.x:.1f} y=13 text-anchor=middle>{tick.text}</text>"
                     f"<line x1={tick.x:.1f} y1=16 x2={tick.x:.1f} y2={height} stroke='#eaecf0'/>")
    y = AXIS_H
    for tablet, placed in rows:
        lanes = max((lane for lane, _ in placed), default=0) + 1
        parts.append(f"<g class=tablet data-bucket={tablet['bucket']}><text x=4 y={y + 13}>bucket "
                     f"{tablet['bucket']}</text>")
        parts += [_rowset(r, scale, y + lane * LANE_H, touched) for lane, r in placed]
        parts.append("</g>")
        y += lanes * LANE_H + 6
    parts.append("</svg>")
    return "".join(parts)
