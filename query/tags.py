"""Tags: ALTER TABLE … CREATE TAG / DROP TAG and SHOW TAGS. A tag names one snapshot of a table and
keeps it readable (`FOR TAG AS OF 'name'`, query.reads) past the time-travel retention, on tables
without time travel too: the recycler keeps every rowset a live tag's snapshot reads."""

from __future__ import annotations

from projections.names import name_taken_ts_ms
from projections.state import TableState
from query.change_feed import commit_at
from query.context import Context, Done, Rows, SessionState, SqlFailure
from query.parser import statements as st
from query.reads import as_of_ms, format_instant, now_ms, parse_instant
from schemas import commands as cmd
from schemas.errors import ErrorCode

RETENTION_PROPERTY = "retention_days"


def _retention_days(properties: st.Properties) -> int | None:
    unknown = sorted(set(properties) - {RETENTION_PROPERTY})
    if unknown:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"unknown tag property '{unknown[0]}'; only "
                                                    f"'{RETENTION_PROPERTY}' is known")
    text = properties.get(RETENTION_PROPERTY)
    if text is None:
        return None
    if not text.strip().isdigit() or int(text) < 1:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"'{RETENTION_PROPERTY}' must be a whole number of days "
                                                    f"(1 or more), not '{text}'")
    return int(text)


def _tagged_moment(ctx: Context, session: SessionState, table: TableState,
                   as_of: st.Moment | None) -> tuple[int | None, int | None]:
    """(commit number, instant) of the snapshot a CREATE TAG names; None where the sequencer decides
    (by default the latest commit; a commit's instant). The sequencer also checks the snapshot is
    still whole (projections.retention.whole_since_ms): only it knows what the recycler did last."""
    if as_of is None:
        return None, None
    if isinstance(as_of, st.AsOfVersion):
        if not 1 <= as_of.n <= table.commit_number:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"table '{table.name}' has no commit {as_of.n} to tag "
                                                        f"(commits are 1 to {table.commit_number})")
        return as_of.n, None
    if table.time_travel:
        ts = as_of_ms(ctx, session, table, as_of)  # the time-travel window's checks and errors
    else:
        ts = parse_instant(as_of.ts, session)
        if ts > now_ms():
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"'{as_of.ts}' is in the future")
        taken = name_taken_ts_ms(table)
        if taken is not None and ts < taken:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                             f"'{as_of.ts}' is before table '{table.name}' took its name by ALTER TABLE … "
                             f"REPLACE WITH TABLE (at {format_instant(taken, session)})")
    number = commit_at(ctx.projection, table, ts)
    if number == 0:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"table '{table.name}' has no commit at or before '{as_of.ts}'")
    return number, ts


def create_tag(ctx: Context, session: SessionState, s: st.CreateTag) -> Done:
    ctx.catch_up()
    table = ctx.table(session, s.table)
    days = _retention_days(s.properties)
    existing = table.tags.get(s.name.lower())
    if existing is not None and existing.live_at(now_ms()):  # an expired tag's name may be used again
        raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"tag '{s.name}' already exists on table '{table.name}'")
    number, ts = _tagged_moment(ctx, session, table, s.as_of)
    retention_ms = None if days is None else int(days * ctx.config.time_travel_day_s * 1000)
    ctx.propose(cmd.CreateTag(table_id=table.table_id, name=s.name, commit_number=number, ts_ms=ts,
                              retention_days=days, retention_ms=retention_ms), table_id=table.table_id)
    return Done()


def drop_tag(ctx: Context, session: SessionState, s: st.DropTag) -> Done:
    ctx.catch_up()
    table = ctx.table(session, s.table)
    if s.name.lower() not in table.tags:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"tag '{s.name}' does not exist on table '{table.name}'")
    ctx.propose(cmd.DropTag(table_id=table.table_id, name=s.name), table_id=table.table_id)
    return Done()


def show_tags(ctx: Context, session: SessionState, s: st.ShowTags) -> Rows:
    """One row per tag, oldest first; RetentionDays and ExpiresAt are NULL for a tag kept forever."""
    ctx.catch_up()
    table = ctx.table(session, s.table)
    rows = []
    for tag in sorted(table.tags.values(), key=lambda t: (t.created_ts_ms, t.name)):
        commit = ctx.projection.commit(table.table_id, tag.commit_number)
        rows.append((tag.name, tag.commit_number, format_instant(commit.ts_ms if commit else tag.ts_ms, session),
                     format_instant(tag.created_ts_ms, session), tag.retention_days,
                     None if tag.expires_ts_ms is None else format_instant(tag.expires_ts_ms, session)))
    return Rows(["Name", "CommitNumber", "CommitTime", "CreatedTime", "RetentionDays", "ExpiresAt"], rows)
