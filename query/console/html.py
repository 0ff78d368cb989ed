"""Server-rendered HTML of the console: one function per view, each rendering the dict the JSON
endpoint returns (query.console.data, query.console.sql_reads), and the sign-in form. No scripts,
no external assets: inline CSS and SVG, so the pages work offline and in any browser (and in
`chromium --dump-dom`)."""

from __future__ import annotations

from html import escape
from typing import Any
from urllib.parse import quote

CSS = """
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;color:#1d2330;background:#f5f6f8}
header{background:#1d2330;color:#fff;padding:10px 20px;display:flex;gap:24px;align-items:baseline}
header a{color:#cfe0ff;text-decoration:none}header b{font-size:16px}header .who{margin-left:auto;color:#9aa}
main{padding:16px 20px}h1{font-size:20px;margin:4px 0 12px}h2{font-size:16px;margin:20px 0 8px}
table{border-collapse:collapse;background:#fff;margin-bottom:12px}
th,td{border:1px solid #dde1e7;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef1f5;font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums}
code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px}
pre{background:#fff;border:1px solid #dde1e7;padding:8px;white-space:pre-wrap}
.muted{color:#778}.bad{color:#b42318}.ok{color:#067647}.card{background:#fff;border:1px solid #dde1e7;
padding:10px;margin-bottom:12px}.legend span{display:inline-block;margin-right:14px}
.sw{display:inline-block;width:12px;height:12px;vertical-align:middle;margin-right:4px;border:1px solid #0003}
svg text{font:11px system-ui,sans-serif}
.rows td{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px}
tr.ch-insert td{background:#ecfdf3}tr.ch-delete td{background:#fef3f2}
tr.ch-update_preimage td{background:#fffaeb}tr.ch-update_postimage td{background:#fef0c7}
form.signin{background:#fff;border:1px solid #dde1e7;padding:16px;max-width:320px}
form.signin label{display:block;margin:8px 0 4px}form.signin input{width:100%;box-sizing:border-box;padding:6px}
form.signin button{margin-top:12px;padding:6px 16px}
"""

KIND_COLORS = {"load": "#2f6fdf", "delete": "#d92d20", "update": "#f79009", "schema_change": "#7a5af8",
               "add_partition": "#12b76a", "drop_partition": "#b54708", "restore": "#ee46bc", "truncate": "#912018",
               "overwrite": "#0086c9",
               "compaction": "#475467", "cooldown": "#0e9384"}
TIER_COLORS = {"ssd": "#53b1fd", "hdd": "#fdb022"}
REMOTE_COLOR = "#9e77ed"


def tier_color(tier: str) -> str:
    return TIER_COLORS.get(tier, REMOTE_COLOR if tier.startswith("remote:") else "#98a2b3")


def human_bytes(n: int | None) -> str:
    if n is None:
        return ""
    size = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return str(n)


def _e(value: Any) -> str:
    return escape("" if value is None else str(value))


def page(title: str, viewer: str, body: str) -> str:
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{_e(title)} · Strata console</title>"
            f"<style>{CSS}</style></head><body><header><b>Strata console</b>"
            "<a href='/console'>Tables</a><a href='/console/pipelines'>Pipelines</a>"
            + (f"<span class=who>signed in as <b id=viewer>{_e(viewer)}</b> · <a href='/console/logout'>sign out</a>"
               "</span>" if viewer else "<span class=who>not signed in</span>") + "</header>"
            f"<main><h1>{_e(title)}</h1>{body}</main></body></html>")


def _table_href(db: str, table: str) -> str:
    return f"/console/table/{quote(db, safe='')}/{quote(table, safe='')}"


# -- tables ----------------------------------------------------------------------------------------
def _count_cell(t: dict[str, Any]) -> str:
    if t.get("rows") is None:
        return f"<td class='n muted' data-rows title='{_e(t.get('rows_error'))}'>—</td>"
    return f"<td class=n data-rows>{t['rows']}</td>"


def tables_page(data: dict[str, Any]) -> str:
    tiers: list[str] = data["tiers"] or ["ssd"]
    out = [f"<p class=muted>As of {_e(data['generated_at'])} UTC. <b>rows</b> is what <code>SELECT COUNT(*)</code> "
           "answers now (run as you; — without SELECT on the table); <b>rows stored</b> counts the rows in "
           "the latest snapshot's rowsets, before DELETE predicates and key merges apply. Bytes count every "
           "rowset kept, stale ones for time travel included.</p>"]
    if not data["databases"]:
        out.append("<p>No tables visible to this user.</p>")
    for db in data["databases"]:
        out.append(f"<h2 class=db data-db='{_e(db['name'])}'>{_e(db['name'])}</h2>")
        if not db["tables"]:
            out.append("<p class=muted>no tables</p>")
            continue
        head = "".join(f"<th>{_e(t)}</th>" for t in tiers)
        out.append("<table class=tables><tr><th>table</th><th>keys</th><th>partitions</th><th>rows</th>"
                   f"<th>rows stored</th><th>rowsets (live / kept)</th>{head}<th>commits</th><th>last commit</th>"
                   "<th>time travel retention</th><th>earliest available</th></tr>")
        for t in db["tables"]:
            tt = t["time_travel"]
            retention = f"{tt['retention_days']} d" if tt["enabled"] else "<span class=muted>off</span>"
            cells = "".join(f"<td class=n>{human_bytes(t['bytes_by_tier'].get(tier, 0))}</td>" for tier in tiers)
            out.append(f"<tr class=table-row data-table='{_e(t['name'])}'>"
                       f"<td><a href='{_table_href(t['db'], t['name'])}'>{_e(t['name'])}</a></td>"
                       f"<td>{_e(t['keys_model'])}</td><td class=n>{t['partitions']}</td>"
                       f"{_count_cell(t)}<td class=n data-rows-stored>{t['rows_stored']}</td>"
                       f"<td class=n>{t['live_rowsets']} / {t['kept_rowsets']}</td>"
                       f"{cells}<td class=n>{t['commits']}</td><td>{_e(t['last_commit'])}</td>"
                       f"<td>{retention}</td><td>{_e(tt['earliest']) or '<span class=muted>—</span>'}</td></tr>")
        out.append("</table>")
    if data["resources"]:
        out.append("<h2>Resources</h2><table class=resources><tr><th>name</th><th>properties</th></tr>")
        for r in data["resources"]:
            props = ", ".join(f"{_e(k)}={_e(v)}" for k, v in sorted(r["properties"].items()))
            out.append(f"<tr><td>{_e(r['name'])}</td><td><code>{props}</code></td></tr>")
        out.append("</table>")
    return page("Tables", data["viewer"], "".join(out))


# -- one table ---------------------------------------------------------------------------------------
def _commit_svg(data: dict[str, Any], href: str) -> str:
    commits, compactions = data["commits"], data["compactions"]
    cooldowns = data.get("cooldowns", [])
    stamps = [c["ts_ms"] for c in commits] + [c["ts_ms"] for c in compactions] + [c["ts_ms"] for c in cooldowns]
    if not stamps:
        return "<p class=muted>No commits yet.</p>"
    lo, hi = min(stamps), max(stamps)
    span = max(hi - lo, 1)
    width, left, right = 1200, 100, 30
    lanes = {"commit": 40, "cooldown": 70, "compaction": 100}

    def x(ts: int) -> float:
        return left + (ts - lo) / span * (width - left - right)

    parts = [f"<svg id=timeline class=timeline width={width} height=150 viewBox='0 0 {width} 150' "
             "xmlns='http://www.w3.org/2000/svg' role=img aria-label='commits over time'>",
             f"<line x1={left} y1=120 x2={width - right} y2=120 stroke='#98a2b3'/>",
             f"<text x={left} y=140>{_e(data['commits'][0]['time'] if commits else '')}</text>",
             f"<text x={width - right} y=140 text-anchor=end>{_e(_iso_of(hi, commits, compactions))}</text>",
             f"<text x=4 y={lanes['commit'] + 4}>commits</text>",
             f"<text x=4 y={lanes['cooldown'] + 4}>cooldowns</text>",
             f"<text x=4 y={lanes['compaction'] + 4}>compactions</text>"]
    for c in cooldowns:
        cx, cy = x(c["ts_ms"]), lanes["cooldown"]
        targets = ", ".join(sorted({m["to"] for m in c["moves"]}))
        parts.append(f"<g class=cooldown-mark><title>{c['rowsets']} rowset(s) moved to {_e(targets)} at "
                     f"{_e(c['time'])}</title><path d='M{cx - 7:.1f} {cy - 6} L{cx + 7:.1f} {cy - 6} "
                     f"L{cx:.1f} {cy + 7} Z' fill='{KIND_COLORS['cooldown']}'/></g>")
    for c in commits:
        color = KIND_COLORS.get(c["kind"], "#667085")
        parts.append(f"<a href='{href}?at={c['ts_ms']}'><g class=commit-mark data-kind='{_e(c['kind'])}' "
                     f"data-number='{c['number']}'><title>#{c['number']} {_e(c['kind'])} at {_e(c['time'])}: "
                     f"+{c['rows_added']} −{c['rows_removed']} {_e(c['description'])}</title>"
                     f"<line x1={x(c['ts_ms']):.1f} y1={lanes['commit'] + 8} x2={x(c['ts_ms']):.1f} y2=120 "
                     f"stroke='{color}' stroke-opacity='.35'/>"
                     f"<circle cx={x(c['ts_ms']):.1f} cy={lanes['commit']} r=7 fill='{color}'/>"
                     f"<text x={x(c['ts_ms']):.1f} y={lanes['commit'] - 11} text-anchor=middle>{c['number']}</text>"
                     "</g></a>")
    for c in compactions:
        cx, cy = x(c["ts_ms"]), lanes["compaction"]
        parts.append(f"<a href='{href}?at={c['ts_ms']}'><g class=compaction-mark><title>compaction of "
                     f"{_e(c['partition'])}/{c['bucket']} versions {c['versions'][0]}–{c['versions'][1]} "
                     f"({len(c['inputs'])} inputs) at {_e(c['time'])}</title>"
                     f"<path d='M{cx:.1f} {cy - 8} L{cx + 8:.1f} {cy} L{cx:.1f} {cy + 8} L{cx - 8:.1f} {cy} Z' "
                     f"fill='{KIND_COLORS['compaction']}'/></g></a>")
    at = data.get("as_of")
    if at is not None and lo <= at["ts_ms"] <= hi + span:
        ax = min(x(at["ts_ms"]), width - right)
        parts.append(f"<line id=as-of-line x1={ax:.1f} y1=15 x2={ax:.1f} y2=125 stroke='#101828' "
                     "stroke-dasharray='4 3'/>")
    parts.append("</svg>")
    kinds = (sorted({c["kind"] for c in commits}) + (["compaction"] if compactions else [])
             + (["cooldown"] if cooldowns else []))
    legend = "".join(f"<span><i class=sw style='background:{KIND_COLORS.get(k, '#667085')}'></i>{_e(k)}</span>"
                     for k in kinds)
    return "".join(parts) + f"<div class=legend>{legend}</div>"


def _iso_of(ts: int, commits: list[dict[str, Any]], compactions: list[dict[str, Any]]) -> str:
    for c in (*commits, *compactions):
        if c["ts_ms"] == ts:
            return str(c["time"])
    return ""


def _tablet_svg(tablet: dict[str, Any], touched: set[str]) -> str:
    rowsets = tablet["rowsets"]
    top = max((r["end_version"] for r in rowsets), default=1)
    width, left, lane_h = 1000, 10, 22
    unit = (width - 2 * left) / max(top, 1)
    # Lanes: visible rowsets on the first, stale ones stacked below without overlaps.
    lanes: list[list[tuple[int, int]]] = [[]]
    placed = []
    for r in rowsets:
        span = (r["start_version"], r["end_version"])
        if r["state"] == "visible":
            lane = 0
        else:
            lane = next((i for i in range(1, len(lanes))
                         if all(span[1] < s or span[0] > e for s, e in lanes[i])), len(lanes))
            if lane == len(lanes):
                lanes.append([])
        lanes[lane].append(span)
        placed.append((lane, r))
    height = len(lanes) * lane_h + 20
    parts = [f"<svg class=tablet width={width} height={height} viewBox='0 0 {width} {height}' "
             "xmlns='http://www.w3.org/2000/svg'>"]
    for lane, r in placed:
        x0 = left + (r["start_version"] - 1) * unit
        w = max(unit * (r["end_version"] - r["start_version"] + 1) - 2, 3)
        y = 4 + lane * lane_h
        stroke = "stroke='#101828' stroke-width=2.5" if r["rowset_id"] in touched else "stroke='#0004'"
        opacity = "1" if r["state"] == "visible" else ".45"
        dash = " stroke-dasharray='3 2'" if r["state"] == "stale" else ""
        parts.append(f"<g class=rowset data-rowset='{_e(r['rowset_id'])}' data-tier='{_e(r['tier'])}' "
                     f"data-state='{r['state']}' data-versions='{r['start_version']}-{r['end_version']}'"
                     f"{' data-touched=true' if r['rowset_id'] in touched else ''}>"
                     f"<title>{_e(r['rowset_id'])}: versions {r['start_version']}–{r['end_version']}, {r['num_rows']} "
                     f"rows, {human_bytes(r['size_bytes'])}, {_e(r['tier'])}, {r['state']}"
                     f"{' since ' + _e(r['stale']) if r['stale'] else ''}</title>"
                     f"<rect x={x0:.1f} y={y} width={w:.1f} height={lane_h - 6} rx=3 fill='{tier_color(r['tier'])}' "
                     f"fill-opacity={opacity} {stroke}{dash}/>"
                     f"<text x={x0 + 4:.1f} y={y + 12}>{r['start_version']}–{r['end_version']}</text></g>")
    parts.append(f"<text x={left} y={height - 3} class=muted>versions 1 … {top}</text></svg>")
    return "".join(parts)


def table_page(data: dict[str, Any], at_text: str = "") -> str:
    t = data["table"]
    href = _table_href(t["db"], t["name"])
    tt = t["time_travel"]
    retention = f"retention {tt['retention_days']} d, earliest {_e(tt['earliest'])}" if tt["enabled"] else "off"
    out = [f"<p><b>{_e(t['keys_model'])} KEY</b> · {t['partitions']} partition(s) × {t['buckets']} bucket(s) · "
           f"{_count_text(data.get('count'))} · {t['rows_stored']} rows stored · {human_bytes(t['bytes'])} in "
           + ", ".join(f"{_e(k)}: {human_bytes(v)}" for k, v in t["bytes_by_tier"].items())
           + f" · time travel: {retention}</p>",
           "<h2>Timeline</h2><div class=card>", _commit_svg(data, href),
           "<p class=muted>Click a commit or a compaction to see the table as of then. Cooldowns (rowsets "
           "moving between tiers) change no answer: they are not commits.</p></div>"]
    # The moment picker: a GET form (no script needed), UTC.
    out.append(f"<h2>Read the table as of a moment</h2><form id=as-of-form method=get action='{href}'>"
               f"<input name=at size=28 placeholder='YYYY-MM-DD HH:MM:SS[.fff] (UTC)' value='{_e(at_text)}'> "
               "<button>show</button></form>")
    at = data.get("as_of")
    touched: set[str] = set()
    if at is not None:
        touched = {r["rowset_id"] for r in at["rowsets"]}
        out.append(f"<div class=card id=as-of><pre id=as-of-sql>{_e(at['sql'])};</pre>")
        if not at["readable"]:
            out.append(f"<p class=bad>Not readable: {_e(at['reason'])}</p>")
        else:
            versions = ", ".join(f"{_e(k)} @ v{v}" for k, v in at["versions"].items())
            out.append(f"<p>Partition versions: {versions or '—'}. The read touches {len(at['rowsets'])} rowset(s) "
                       "(outlined below):</p><table class=touched><tr><th>rowset</th><th>partition/bucket</th>"
                       "<th>versions</th><th>tier</th><th>rows</th></tr>")
            for r in at["rowsets"]:
                out.append(f"<tr><td><code>{_e(r['rowset_id'])}</code></td><td>{_e(r['partition'])}/{r['bucket']}</td>"
                           f"<td>{r['versions'][0]}–{r['versions'][1]}</td><td>{_e(r['tier'])}</td>"
                           f"<td class=n>{r['num_rows']}</td></tr>")
            out.append("</table>")
        out.append("</div>")
    if data.get("rows_as_of") is not None:
        out.append(_rows_as_of(data["rows_as_of"]))
    if data.get("diff") is not None:
        out.append(_diff(data["diff"]))
    out.append("<h2>Commits</h2><table class=commits><tr><th>#</th><th>time (UTC)</th><th>kind</th>"
               "<th>rows added</th><th>rows removed</th><th>description</th><th></th></tr>")
    for c in reversed(data["commits"]):
        color = KIND_COLORS.get(c["kind"], "#667085")
        out.append(f"<tr class=commit data-kind='{_e(c['kind'])}'><td class=n>{c['number']}</td>"
                   f"<td>{_e(c['time'])}</td><td><i class=sw style='background:{color}'></i>{_e(c['kind'])}</td>"
                   f"<td class=n>{c['rows_added']}</td><td class=n>{c['rows_removed']}</td>"
                   f"<td>{_e(c['description'])}</td><td><a href='{href}?at={c['ts_ms']}'>as of</a> · "
                   f"<a href='{href}?diff={c['number']}'>diff</a></td></tr>")
    out.append("</table>")
    if data["compactions"]:
        out.append("<h2>Compactions</h2><table class=compactions><tr><th>time (UTC)</th><th>tablet</th>"
                   "<th>versions</th><th>inputs</th><th>output tier</th></tr>")
        for c in data["compactions"]:
            out.append(f"<tr class=compaction><td>{_e(c['time'])}</td><td>{_e(c['partition'])}/{c['bucket']}</td>"
                       f"<td>{c['versions'][0]}–{c['versions'][1]}</td><td class=n>{len(c['inputs'])}</td>"
                       f"<td>{_e(c['tier'])}</td></tr>")
        out.append("</table>")
    if data.get("cooldowns"):
        out.append("<h2>Cooldowns</h2><table class=cooldowns><tr><th>time (UTC)</th><th>rowsets</th>"
                   "<th>from → to</th></tr>")
        for c in data["cooldowns"]:
            paths = ", ".join(sorted({f"{m['from']} → {m['to']}" for m in c["moves"]}))
            out.append(f"<tr class=cooldown><td>{_e(c['time'])}</td><td class=n>{c['rowsets']}</td>"
                       f"<td>{_e(paths)}</td></tr>")
        out.append("</table>")
    tiers = sorted({r["tier"] for tb in data["tablets"] for r in tb["rowsets"]})
    legend = "".join(f"<span><i class=sw style='background:{tier_color(k)}'></i>{_e(k)}</span>" for k in tiers)
    out.append(f"<h2>Rowsets per tablet</h2><div class=legend>{legend}<span>solid: visible</span>"
               "<span>faded, dashed: stale (kept for time travel)</span><span>outlined: read by the chosen moment"
               "</span></div>")
    for tablet in data["tablets"]:
        out.append(f"<div class=card><b>{_e(tablet['partition'])} / bucket {tablet['bucket']}</b> "
                   f"<span class=muted>{len(tablet['rowsets'])} rowset(s)</span><br>"
                   f"{_tablet_svg(tablet, touched)}</div>")
    return page(f"{t['db']}.{t['name']}", data.get("viewer", ""), "".join(out))


# -- pipelines ----------------------------------------------------------------------------------------
def pipelines_page(data: dict[str, Any]) -> str:
    out = ["<h2>Routine loads</h2>"]
    if not data["routine_loads"]:
        out.append("<p class=muted>No routine load jobs.</p>")
    else:
        out.append("<table class=routine-loads><tr><th>job</th><th>table</th><th>state</th><th>topic</th>"
                   "<th>loaded rows</th><th>rows/s <span class=muted>(loaded ÷ job age)</span></th>"
                   "<th>lag per partition</th><th>error rows</th><th>last error</th></tr>")
        for j in data["routine_loads"]:
            lag = ", ".join(f"p{p}: {'?' if v is None else v}" for p, v in j["lag"].items()) or "—"
            state_cls = "ok" if j["state"] == "RUNNING" else "bad" if j["state"] == "PAUSED" else "muted"
            reason = f"<br><span class=muted>{_e(j['reason'])}</span>" if j["reason"] else ""
            out.append(f"<tr class=routine-load data-job='{_e(j['name'])}'><td>{_e(j['db'])}.{_e(j['name'])}</td>"
                       f"<td>{_e(j['table'])}</td><td class={state_cls}>{_e(j['state'])}{reason}</td>"
                       f"<td><code>{_e(j['topic'])}</code></td><td class=n>{j['loaded_rows']}</td>"
                       f"<td class=n>{j['rows_per_s']}</td><td>{_e(lag)}</td><td class=n>{j['error_rows']}</td>"
                       f"<td>{_e(j['last_error']) or '<span class=muted>—</span>'}</td></tr>")
        out.append("</table>")
    tiering = data["tiering"]
    out.append(f"<h2>Tiering queue</h2><p class=muted>Planned by {_e(tiering['computed_by'])}; policy clock now "
               f"{_e(tiering['now'])} UTC.</p>")
    if not tiering["tablets"]:
        out.append("<p class=muted>No tablet has tiering properties.</p>")
    else:
        out.append("<table class=tiering><tr><th>tablet</th><th>policy</th><th>due now</th>"
                   "<th>next due (UTC)</th></tr>")
        for t in tiering["tablets"]:
            moves = "<br>".join(f"v{m['versions'][0]}–{m['versions'][1]}: {_e(m['from'])} → {_e(m['to'])} "
                                f"({human_bytes(m['size_bytes'])})" for m in t["due_now"]) or "—"
            out.append(f"<tr class=tiering-tablet><td>{_e(t['db'])}.{_e(t['table'])} "
                       f"{_e(t['partition'])}/{t['bucket']}</td><td>{_e(t['policy']) or '—'}</td><td>{moves}</td>"
                       f"<td>{_e(t['next_due']) or '—'}</td></tr>")
        out.append("</table>")
    cache = data["file_cache"]
    rate = "—" if cache["hit_rate"] is None else f"{cache['hit_rate'] * 100:.1f} %"
    out.append("<h2>File cache <span class=muted>(this SQL server)</span></h2><table class=file-cache>"
               f"<tr><th>hit rate</th><td id=hit-rate class=n>{rate}</td></tr>"
               f"<tr><th>hits / misses</th><td class=n>{cache['hits']} / {cache['misses']}</td></tr>"
               f"<tr><th>downloaded</th><td class=n>{human_bytes(cache['bytes_downloaded'])}</td></tr>"
               f"<tr><th>held / cap</th><td class=n>{human_bytes(cache['bytes_cached'])} / "
               f"{human_bytes(cache['cap_bytes'])}</td></tr>"
               f"<tr><th>evictions</th><td class=n>{cache['evictions']}</td></tr></table>")
    return page("Pipelines", data["viewer"], "".join(out))


def error_page(title: str, message: str, viewer: str = "") -> str:
    return page(title, viewer, f"<p class=bad>{_e(message)}</p><p><a href='/console'>back to the tables</a></p>")


# -- rows read through SQL ------------------------------------------------------------------------------
def _count_text(count: dict[str, Any] | None) -> str:
    if count is None or count["count"] is None:
        reason = "" if count is None else count["error"]
        return f"<span class=muted title='{_e(reason)}'>rows: — (no SELECT)</span>"
    return f"<span id=row-count>{count['count']}</span> rows (<code>SELECT COUNT(*)</code>)"


def _sql_block(answer: dict[str, Any], element_id: str) -> str:
    return f"<pre id={element_id}>{_e(answer['set_time_zone'])};\n{_e(answer['sql'])};</pre>"


def _rows_table(answer: dict[str, Any], css: str, change_column: str | None = None) -> str:
    if answer["error"] is not None:
        return f"<p class='bad refused'>{_e(answer['error'])}</p>"
    if not answer["rows"]:
        return "<p class=muted>No rows.</p>"
    at = answer["columns"].index(change_column) if change_column in answer["columns"] else None
    out = [f"<table class='rows {css}'><tr>" + "".join(f"<th>{_e(c)}</th>" for c in answer["columns"]) + "</tr>"]
    for row in answer["rows"]:
        kind = f" class=ch-{_e(row[at])}" if at is not None else ""
        cells = "".join("<td class=muted>NULL</td>" if v is None else f"<td>{_e(v)}</td>" for v in row)
        out.append(f"<tr{kind}>{cells}</tr>")
    out.append("</table>")
    return "".join(out)


def _rows_as_of(answer: dict[str, Any]) -> str:
    count = answer.get("count")
    counted = "" if count is None or count["count"] is None else \
        f" of <span id=as-of-count>{count['count']}</span> (<code>SELECT COUNT(*)</code> then)"
    return (f"<h2>Rows as of {_e(answer['time'])} (UTC)</h2><div class=card id=rows-as-of>"
            f"<p>Up to {answer['limit']} rows{counted}, as this SQL returns them (run as you):</p>"
            + _sql_block(answer, "rows-as-of-sql") + _rows_table(answer, "as-of-rows") + "</div>")


def _diff(answer: dict[str, Any]) -> str:
    counts = ", ".join(f"{n} {_e(k)}" for k, n in sorted(answer["change_counts"].items())) or "no row changes"
    return (f"<h2>Commit {answer['commit']}: what it changed</h2><div class=card id=diff>"
            f"<p>{counts} (up to {answer['limit']} rows, from the change feed, run as you):</p>"
            + _sql_block(answer, "diff-sql") + _rows_table(answer, "diff-rows", "_change_type") + "</div>")


# -- sign-in ---------------------------------------------------------------------------------------------
def sign_in_page(target: str, csrf: str, message: str = "") -> str:
    problem = f"<p class=bad id=sign-in-error>{_e(message)}</p>" if message else ""
    return page("Sign in", "", f"{problem}<form class=signin method=post action='/console/login'>"
                f"<input type=hidden name=csrf value='{_e(csrf)}'><input type=hidden name=next value='{_e(target)}'>"
                "<label for=user>SQL user</label><input id=user name=user autocomplete=username required autofocus>"
                "<label for=password>Password</label>"
                "<input id=password name=password type=password autocomplete=current-password>"
                "<button>Sign in</button></form><p class=muted>Scripts may use HTTP Basic auth instead "
                "(<code>curl -u user:password …/api/console/tables</code>).</p>")


def sign_out_page(viewer: str, csrf: str | None) -> str:
    if csrf is None:
        return page("Sign out", viewer, "<p>Signed in with HTTP Basic auth: close the browser to forget it.</p>")
    return page("Sign out", viewer, "<form method=post action='/console/logout'>"
                f"<input type=hidden name=csrf value='{_e(csrf)}'><button>Sign out</button></form>")
