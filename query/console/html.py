"""Server-rendered HTML of the console: one function per view, each rendering the dict the JSON
endpoint returns (query.console.data, query.console.sql_reads), and the sign-in form. No external
assets: inline CSS, SVG (query.console.charts) and one inline script, so the pages work offline.
The script only rewrites the timeline's tick labels in the viewer's time zone (browser's Intl);
without it they stay in UTC, and everything else works without scripts.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from query.console import charts
from query.console.markup import e as _e
from query.console.markup import human_bytes, kind_color, tier_color

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

# Writes each `[data-ts][data-fmt]` element's instant in the browser's time zone, with the fields
# (and so the length) of its UTC text (query.console.layout.TICK_FORMATS); its tooltip keeps UTC.
LOCAL_TIME_SCRIPT = """
(function(){var f=new Intl.DateTimeFormat('en-CA',{year:'numeric',month:'2-digit',day:'2-digit',hour:'2-digit',
minute:'2-digit',second:'2-digit',hourCycle:'h23'});
function p(ts){var o={};f.formatToParts(new Date(ts)).forEach(function(x){o[x.type]=x.value});return o}
var w={ms:function(o,ts){return o.hour+':'+o.minute+':'+o.second+'.'+String(ts%1000).padStart(3,'0')},
s:function(o){return o.hour+':'+o.minute+':'+o.second},
min:function(o){return o.month+'-'+o.day+' '+o.hour+':'+o.minute},
day:function(o){return o.year+'-'+o.month+'-'+o.day}};
document.querySelectorAll('[data-ts][data-fmt]').forEach(function(el){var ts=Number(el.dataset.ts),
k=w[el.dataset.fmt];if(!k)return;el.firstChild.nodeValue=k(p(ts),ts)});
var z=Intl.DateTimeFormat().resolvedOptions().timeZone;document.querySelectorAll('.viewer-zone').forEach(
function(el){el.textContent=z})})();
"""


def page(title: str, viewer: str, body: str) -> str:
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{_e(title)} · Strata console</title>"
            f"<style>{CSS}</style></head><body><header><b>Strata console</b>"
            "<a href='/console'>Tables</a><a href='/console/pipelines'>Pipelines</a>"
            + (f"<span class=who>signed in as <b id=viewer>{_e(viewer)}</b> · <a href='/console/logout'>sign out</a>"
               "</span>" if viewer else "<span class=who>not signed in</span>") + "</header>"
            f"<main><h1>{_e(title)}</h1>{body}</main><script>{LOCAL_TIME_SCRIPT}</script></body></html>")


def table_href(db: str, table: str) -> str:
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
                       f"<td><a href='{table_href(t['db'], t['name'])}'>{_e(t['name'])}</a></td>"
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
def _zoom_links(href: str, window: charts.Window) -> str:
    """Zoom in (the middle half) and out (twice the span) around the middle, and back to everything."""
    middle, span = (window.lo + window.hi) // 2, window.hi - window.lo
    quarter = max(span // 4, 1)
    links = [f"<a id=zoom-in href='{href}?from={middle - quarter}&amp;to={middle + quarter}'>zoom in</a>",
             f"<a id=zoom-out href='{href}?from={middle - span}&amp;to={middle + span}'>zoom out</a>"]
    if window.zoomed:
        links.append(f"<a id=zoom-all href='{href}'>whole history</a>")
    return " · ".join(links)


def _timeline(data: dict[str, Any], href: str, window: charts.Window | None) -> str:
    if window is None:
        return "<p class=muted>No commits yet.</p>"
    kinds = (sorted({c["kind"] for c in data["commits"]}) + (["tag"] if data.get("tags") else [])
             + (["compaction"] if data["compactions"] else []) + (["cooldown"] if data.get("cooldowns") else []))
    legend = "".join(f"<span><i class=sw style='background:{kind_color(k)}'></i>{_e(k)}</span>" for k in kinds)
    return (f"<p class=muted>Times in <b class=viewer-zone>UTC</b> (hover a mark or a tick for UTC). "
            "Marks too close to tell apart are drawn as one, labelled with their count (×n): hover it for the "
            f"list, click it to zoom into its time span. {_zoom_links(href, window)}</p>"
            + charts.timeline_svg(data, href, window) + f"<div class=legend>{legend}</div>")


def _tags(data: dict[str, Any], href: str) -> str:
    if not data.get("tags"):
        return ""
    out = ["<h2>Tags</h2><table class=tags><tr><th>tag</th><th>commit</th><th>commit time (UTC)</th>"
           "<th>created (UTC)</th><th>expires (UTC)</th><th></th></tr>"]
    for t in data["tags"]:
        out.append(f"<tr class=tag data-tag='{_e(t['name'])}'><td>{_e(t['name'])}</td><td class=n>"
                   f"{t['commit_number']}</td><td>{_e(t['time'])}</td><td>{_e(t['created'])}</td>"
                   f"<td>{_e(t['expires']) or 'never'}</td><td><a href='{href}?at={t['ts_ms']}'>as of</a></td></tr>")
    out.append("</table>")
    return "".join(out)


def _as_of(at: dict[str, Any], href: str, may_restore: bool) -> str:
    out = [f"<div class=card id=as-of><pre id=as-of-sql>{_e(at['sql'])};</pre>"]
    if not at["readable"]:
        out.append(f"<p class=bad>Not readable: {_e(at['reason'])}</p></div>")
        return "".join(out)
    versions = ", ".join(f"{_e(k)} @ v{v}" for k, v in at["versions"].items())
    out.append(f"<p>Partition versions: {versions or '—'}. The read touches {len(at['rowsets'])} rowset(s) "
               "(outlined below):</p><table class=touched><tr><th>rowset</th><th>partition/bucket</th>"
               "<th>versions</th><th>tier</th><th>rows</th></tr>")
    for r in at["rowsets"]:
        out.append(f"<tr><td><code>{_e(r['rowset_id'])}</code></td><td>{_e(r['partition'])}/{r['bucket']}</td>"
                   f"<td>{r['versions'][0]}–{r['versions'][1]}"
                   + (f" (read through v{r['read_through']})" if r.get("read_through") is not None else "")
                   + f"</td><td>{_e(r['tier'])}</td>"
                   f"<td class=n>{r['num_rows']}</td></tr>")
    out.append("</table>")
    if may_restore:
        # A GET to the confirmation page, which shows what the restore undoes before anything is written.
        out.append(f"<form id=restore-start method=get action='{href}/restore'><input type=hidden name=at "
                   f"value='{at['ts_ms']}'><button>Restore to here…</button></form>")
    out.append("</div>")
    return "".join(out)


def table_page(data: dict[str, Any], at_text: str = "", window: charts.Window | None = None) -> str:
    t = data["table"]
    href = table_href(t["db"], t["name"])
    tt = t["time_travel"]
    retention = f"retention {tt['retention_days']} d, earliest {_e(tt['earliest'])}" if tt["enabled"] else "off"
    out = [f"<p><b>{_e(t['keys_model'])} KEY</b> · {t['partitions']} partition(s) × {t['buckets']} bucket(s) · "
           f"{_count_text(data.get('count'))} · {t['rows_stored']} rows stored · {human_bytes(t['bytes'])} in "
           + ", ".join(f"{_e(k)}: {human_bytes(v)}" for k, v in t["bytes_by_tier"].items())
           + f" · time travel: {retention}</p>"]
    if data.get("restored") is not None:
        out.append(f"<p class=ok id=restored>Restored: <code>{_e(data['restored'])}</code></p>")
    out += ["<h2>Timeline</h2><div class=card>", _timeline(data, href, window),
            "<p class=muted>Click a commit, a tag or a compaction to see the table as of then. Cooldowns (rowsets "
            "moving between tiers) change no answer: they are not commits.</p></div>"]
    # The moment picker: a GET form (no script needed), UTC.
    out.append(f"<h2>Read the table as of a moment</h2><form id=as-of-form method=get action='{href}'>"
               f"<input name=at size=28 placeholder='YYYY-MM-DD HH:MM:SS[.fff] (UTC)' value='{_e(at_text)}'> "
               "<button>show</button></form>")
    at = data.get("as_of")
    touched: set[str] = set()
    if at is not None:
        touched = {r["rowset_id"] for r in at["rowsets"]}
        out.append(_as_of(at, href, bool(data.get("may_restore"))))
    if data.get("rows_as_of") is not None:
        out.append(_rows_as_of(data["rows_as_of"]))
    if data.get("diff") is not None:
        out.append(_diff(data["diff"]))
    out.append(_tags(data, href))
    out.append("<h2>Commits</h2><table class=commits><tr><th>#</th><th>time (UTC)</th><th>kind</th>"
               "<th>rows added</th><th>rows removed</th><th>description</th><th></th></tr>")
    for c in reversed(data["commits"]):
        out.append(f"<tr class=commit data-kind='{_e(c['kind'])}'><td class=n>{c['number']}</td>"
                   f"<td>{_e(c['time'])}</td><td><i class=sw style='background:{kind_color(c['kind'])}'></i>"
                   f"{_e(c['kind'])}</td><td class=n>{c['rows_added']}</td><td class=n>{c['rows_removed']}</td>"
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
    out.append(_rowsets(data, touched))
    return page(f"{t['db']}.{t['name']}", data.get("viewer", ""), "".join(out))


def _rowsets(data: dict[str, Any], touched: set[str]) -> str:
    tiers = sorted({r["tier"] for tb in data["tablets"] for r in tb["rowsets"]})
    legend = "".join(f"<span><i class=sw style='background:{tier_color(k)}'></i>{_e(k)}</span>" for k in tiers)
    out = [f"<h2>Rowsets per tablet</h2><div class=legend>{legend}<span>solid: visible</span>"
           "<span>faded, dashed: stale (kept for time travel)</span><span>outlined: read by the chosen moment"
           "</span></div><p class=muted>One chart per partition: its tablets (buckets) a row each, on one version "
           "axis.</p>"]
    partitions: dict[str, list[dict[str, Any]]] = {}
    for tablet in data["tablets"]:
        partitions.setdefault(tablet["partition"], []).append(tablet)
    for name, tablets in partitions.items():
        count = sum(len(tb["rowsets"]) for tb in tablets)
        out.append(f"<div class=card><b>partition {_e(name)}</b> <span class=muted>{len(tablets)} tablet(s), "
                   f"{count} rowset(s)</span><br>{charts.partition_svg(name, tablets, touched)}</div>")
    return "".join(out)


def restore_page(data: dict[str, Any], undone: dict[str, Any], sql: str, csrf: str | None) -> str:
    """The confirmation before "restore to here": the rows the restore undoes, the SQL, and the button."""
    t = data["table"]
    href = table_href(t["db"], t["name"])
    counts = ", ".join(f"{n} {_e(k)}" for k, n in sorted(undone["change_counts"].items())) or "no row changes"
    out = [f"<p>Restoring makes a new commit whose rows are the table's rows as of {_e(undone['time'])} UTC. It "
           f"undoes every change since then: {counts} (up to {undone['limit']} rows, from the change feed, run as "
           "you):</p><div class=card id=undone>", _sql_block(undone, "undone-sql"),
           _rows_table(undone, "undone-rows", "_change_type"), "</div>", f"<pre id=restore-sql>{_e(sql)};</pre>"]
    if csrf is None:
        out.append("<p class=muted>Signed in with HTTP Basic auth: run the SQL above, or sign in with the form to "
                   "restore from here.</p>")
    else:
        out.append(f"<form id=restore-confirm method=post action='{href}/restore'>"
                   f"<input type=hidden name=csrf value='{_e(csrf)}'><input type=hidden name=at "
                   f"value='{undone['ts_ms']}'><button>Restore {_e(t['name'])} to {_e(undone['time'])} UTC</button> "
                   f"<a href='{href}?at={undone['ts_ms']}'>cancel</a></form>")
    return page(f"Restore {t['db']}.{t['name']}?", data.get("viewer", ""), "".join(out))


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
