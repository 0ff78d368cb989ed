"""CREATE / PAUSE / RESUME / STOP / SHOW ROUTINE LOAD (DESIGN §11), with Doris' properties, rules
and SHOW shape. The SQL server only defines and steers jobs; the worker's routine load tasks run
them, and everything SHOW reports (state, progress, counts, the last error) comes from the log.

A job's definition is checked in full before it goes on the log: its COLUMNS and WHERE are
translated to DuckDB and run once over an empty batch, the topic and its partitions are looked
up, and `OFFSET_END` becomes each partition's current end, so the job means the same thing after
any restart.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable
from typing import Any

import duckdb

from projections.load_source import RECORDS, load_batch, plan_load
from projections.routine_loads import RoutineLoadJob, source_refusal
from projections.rows import RowsRejected
from projections.state import TableState
from query.context import Context, Done, Rows, SessionState, SqlFailure
from query.kafka_source import SourceUnavailable, topic_partitions, watermarks
from query.load_mapping import mapping, parse_jsonpaths
from query.parser import statements as st
from query.reads import duck_error, format_instant
from schemas import commands as cmd
from schemas.errors import ErrorCode
from schemas.model import OFFSET_BEGINNING, OFFSET_END, RoutineLoadSpec, RoutineLoadState
from storage.secrets import masked

_JOB_PROPERTIES = {"format", "jsonpaths", "json_root", "strip_outer_array", "max_batch_interval", "max_batch_rows",
                   "max_batch_size", "max_error_number", "strict_mode", "desired_concurrent_number"}
_SOURCE_PROPERTIES = {"kafka_broker_list", "kafka_topic", "kafka_partitions", "kafka_offsets"}
_DEFAULT_OFFSETS = "property.kafka_default_offsets"
_OFFSET_WORDS = {"OFFSET_BEGINNING": OFFSET_BEGINNING, "OFFSET_END": OFFSET_END}


def _bad(message: str) -> SqlFailure:
    return SqlFailure(ErrorCode.WRONG_ARGUMENTS, message)


def _number(properties: dict[str, str], key: str, parse: Callable[[str], Any], default: Any, *,
            minimum: float) -> Any:
    text = properties.get(key)
    if text is None:
        return default
    try:
        value = parse(text)
    except ValueError:
        value = None
    if value is None or value < minimum:
        raise _bad(f"{key} must be a number of at least {minimum:g}, not '{text}'")
    return value


def _flag(properties: dict[str, str], key: str) -> bool:
    text = properties.get(key, "false").lower()
    if text not in ("true", "false"):
        raise _bad(f"{key} must be true or false, not '{properties[key]}'")
    return text == "true"


def _separator(text: str | None) -> str:
    if text is None:
        return "\t"
    try:
        decoded = codecs.decode(text, "unicode_escape") if "\\" in text else text
    except UnicodeDecodeError:
        raise _bad(f"column separator '{text}' is not a valid escape sequence") from None
    if not decoded:
        raise _bad("the column separator must not be empty")
    return decoded


def _jsonpaths(text: str | None) -> tuple[str, ...]:
    try:
        return parse_jsonpaths(text)
    except ValueError as exc:
        raise _bad(str(exc)) from None


def _offsets(source: dict[str, str], partitions: list[int], ends: Callable[[], dict[int, int]]) -> dict[int, int]:
    words = [w.strip() for w in source["kafka_offsets"].split(",")] if "kafka_offsets" in source else \
        [source.get(_DEFAULT_OFFSETS, "OFFSET_END").strip()] * len(partitions)
    if len(words) != len(partitions):
        raise _bad(f"kafka_offsets names {len(words)} offsets for {len(partitions)} kafka_partitions")
    offsets = {}
    for partition, word in zip(partitions, words, strict=True):
        if word.upper() in _OFFSET_WORDS:
            offsets[partition] = _OFFSET_WORDS[word.upper()]
        elif word.isdigit():
            offsets[partition] = int(word)
        else:
            raise _bad(f"'{word}' is not an offset: expected a number, OFFSET_BEGINNING or OFFSET_END")
    if OFFSET_END in offsets.values():
        known = ends()
        offsets = {p: known[p] if o == OFFSET_END else o for p, o in offsets.items()}
    return offsets


def _spec(ctx: Context, s: st.CreateRoutineLoad, table: TableState, partitions: tuple[int, ...],
          user: str) -> RoutineLoadSpec:
    props = {k.lower(): v for k, v in s.properties.items()}
    unknown = sorted(set(props) - _JOB_PROPERTIES)
    if unknown:
        raise _bad(f"Unknown routine load property: {', '.join(unknown)}")
    source = {k.lower() if not k.lower().startswith("property.") else k: v for k, v in s.source_properties.items()}
    unknown = sorted(k for k in source if k not in _SOURCE_PROPERTIES and not k.lower().startswith("property."))
    if unknown:
        raise _bad(f"Unknown Kafka data source property: {', '.join(unknown)}")
    for required in ("kafka_broker_list", "kafka_topic"):
        if not source.get(required):
            raise _bad(f"{required} is required in FROM KAFKA (...)")
    fmt = props.get("format", "csv").lower()
    if fmt not in ("json", "csv"):
        raise _bad(f"format must be json or csv, not '{props['format']}'")
    columns, where, where_sql = mapping(s.columns, s.where, table)
    client = {k: v for k, v in source.items() if k.startswith("property.") and k != _DEFAULT_OFFSETS}
    opened = {k.removeprefix("property."): v for k, v in client.items()}
    broker_list, topic = source["kafka_broker_list"], source["kafka_topic"]
    refused = source_refusal(topic, user, ctx.projection.users)
    if refused is not None:  # before Kafka is asked anything about it
        raise SqlFailure(*refused)
    try:
        existing = topic_partitions(broker_list, topic, opened)
        if "kafka_partitions" in source:
            try:
                wanted = [int(p) for p in source["kafka_partitions"].split(",")]
            except ValueError:
                raise _bad(f"kafka_partitions must be a list of partition numbers, not "
                           f"'{source['kafka_partitions']}'") from None
            missing = sorted(set(wanted) - set(existing))
            if missing or len(set(wanted)) != len(wanted):
                raise _bad(f"kafka_partitions {source['kafka_partitions']}: topic '{topic}' has partitions "
                           f"{','.join(map(str, existing))}")
        else:
            wanted = existing

        def ends() -> dict[int, int]:
            found = watermarks(broker_list, topic, wanted, opened)
            if set(found) != set(wanted):
                raise SourceUnavailable(f"Kafka at {broker_list} did not tell where topic '{topic}' ends")
            return {p: high for p, (_, high) in found.items()}

        offsets = _offsets(source, wanted, ends)
    except SourceUnavailable as exc:
        raise SqlFailure(ErrorCode.UNKNOWN_ERROR, str(exc)) from None
    return RoutineLoadSpec(
        format=fmt, columns=columns, where=where, where_sql=where_sql, partitions=partitions,  # type: ignore[arg-type]
        column_separator=_separator(s.column_separator), jsonpaths=_jsonpaths(props.get("jsonpaths")),
        json_root=props.get("json_root") or None, strip_outer_array=_flag(props, "strip_outer_array"),
        strict_mode=_flag(props, "strict_mode"),
        max_batch_interval_s=_number(props, "max_batch_interval", float, 10.0, minimum=0.1),
        max_batch_rows=_number(props, "max_batch_rows", int, 200_000, minimum=1),
        max_batch_size=_number(props, "max_batch_size", int, 100 * 1024 * 1024, minimum=1),
        max_error_number=_number(props, "max_error_number", int, 0, minimum=0),
        broker_list=broker_list, topic=topic, start_offsets=offsets,
        client_properties=ctx.stores.box.seal_properties(client), user=user)


def create_routine_load(ctx: Context, session: SessionState, s: st.CreateRoutineLoad) -> Done:
    ctx.catch_up()
    db_id, db_name = ctx.database_id(session, s.job.db)
    if s.table.db and s.table.db.lower() != db_name.lower():
        raise _bad(f"the job's table must be in the job's database '{db_name}'")
    table = ctx.table(session, st.QualifiedName(s.table.name, db_name))
    existing = ctx.projection.routine_load(db_id, s.job.name)
    if existing is not None and existing.state != "STOPPED":
        raise SqlFailure(ErrorCode.LABEL_ALREADY_EXISTS,
                         f"Routine load job [{s.job.name}] already exists in database {db_name} ({existing.state})")
    partitions = []
    for name in s.partitions:
        found = table.partition_by_name(name)
        if found is None:
            raise SqlFailure(ErrorCode.UNKNOWN_PARTITION, f"Unknown partition '{name}' in table '{table.name}'")
        partitions.append(found.partition_id)
    spec = _spec(ctx, s, table, tuple(partitions), session.user)
    cur = ctx.cursor()
    try:  # the whole batch query once over no records: a mapping that cannot run is refused now
        load_batch(cur, table, spec, plan_load(spec, table), RECORDS.empty_table())
    except RowsRejected as exc:
        raise SqlFailure(exc.code, exc.message) from None
    except duckdb.Error as exc:
        raise SqlFailure(*duck_error(exc)) from None
    finally:
        cur.close()
    ctx.propose(cmd.ChangeRoutineLoad(db=db_name, job=s.job.name, state="RUNNING", table_id=table.table_id,
                                      spec=spec), table_id=table.table_id)
    return Done()


_TRANSITIONS: dict[str, tuple[RoutineLoadState, tuple[RoutineLoadState, ...]]] = {
    "PAUSE": ("PAUSED", ("RUNNING",)),
    "RESUME": ("RUNNING", ("PAUSED",)),
    "STOP": ("STOPPED", ("RUNNING", "PAUSED")),
}


def _jobs(ctx: Context, db_id: int) -> list[RoutineLoadJob]:
    return sorted((j for j in ctx.projection.routine_loads.values() if j.db_id == db_id), key=lambda j: j.job_id)


def _job(ctx: Context, session: SessionState, name: st.QualifiedName) -> tuple[str, RoutineLoadJob]:
    db_id, db_name = ctx.database_id(session, name.db)
    job = ctx.projection.routine_load(db_id, name.name)
    if job is None:
        raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"Routine load job [{name.name}] does not exist in database "
                                                  f"{db_name}")
    return db_name, job


def control_routine_load(ctx: Context, session: SessionState, s: st.RoutineLoadControl) -> Done:
    ctx.catch_up()
    state, sources = _TRANSITIONS[s.action]
    if s.job is None:  # PAUSE|RESUME ALL ROUTINE LOAD: the current database's jobs that can move
        db_id, db_name = ctx.database_id(session, None)
        targets = [(db_name, j) for j in _jobs(ctx, db_id) if j.state in sources]
    else:
        db_name, job = _job(ctx, session, s.job)
        if job.state not in sources:
            raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"Routine load job [{job.name}] is {job.state}: it can not be "
                                                      f"{'stopped' if s.action == 'STOP' else s.action.lower() + 'd'}")
        targets = [(db_name, job)]
    reason = f"ErrorReason{{{s.action} ROUTINE LOAD by the user}}" if s.action != "RESUME" else ""
    for db_name, job in targets:
        ctx.propose(cmd.ChangeRoutineLoad(db=db_name, job=job.name, state=state, table_id=job.table_id,
                                          reason=reason, from_states=sources), table_id=job.table_id)
    return Done()


_SHOW_COLUMNS = ["Id", "Name", "CreateTime", "PauseTime", "EndTime", "DbName", "TableName", "IsMultiTable", "State",
                 "DataSourceType", "CurrentTaskNum", "JobProperties", "DataSourceProperties", "CustomProperties",
                 "Statistic", "Progress", "Lag", "ReasonOfStateChanged", "ErrorLogUrls", "OtherMsg", "User", "Comment"]


def _time(ts_ms: int | None, session: SessionState) -> str:
    return format_instant(ts_ms, session)[:19] if ts_ms is not None else "NULL"


def _progress_and_lag(ctx: Context, job: RoutineLoadJob) -> tuple[dict[str, str], dict[str, int]]:
    """Doris' shapes: the last offset consumed per partition, and how many records are left."""
    spec = job.spec
    progress = {}
    for partition in spec.start_offsets:
        nxt = job.next_offset(partition)
        progress[str(partition)] = "OFFSET_BEGINNING" if nxt == OFFSET_BEGINNING else str(nxt - 1)
    if job.state == "STOPPED":
        return progress, {}
    client = {k.removeprefix("property."): v
              for k, v in ctx.stores.box.open_properties(dict(spec.client_properties)).items()}
    ends = watermarks(spec.broker_list, spec.topic, sorted(spec.start_offsets), client)
    lag = {}
    for partition, (low, high) in ends.items():
        nxt = job.next_offset(partition)
        lag[str(partition)] = max(0, high - (low if nxt == OFFSET_BEGINNING else nxt))
    return progress, lag


def show_routine_load(ctx: Context, session: SessionState, s: st.ShowRoutineLoad) -> Rows:
    ctx.catch_up()
    if s.job is not None:
        db_name, job = _job(ctx, session, s.job)
        jobs = [job]
    else:
        db_id, db_name = ctx.database_id(session, None)
        jobs = [j for j in _jobs(ctx, db_id) if s.all or j.state != "STOPPED"]
    rows = []
    for job in jobs:
        spec = job.spec
        table = ctx.projection.tables.get(job.table_id)
        progress, lag = _progress_and_lag(ctx, job)
        job_properties = {
            "format": spec.format, "columnSeparator": spec.column_separator, "jsonpaths": list(spec.jsonpaths),
            "json_root": spec.json_root or "", "strip_outer_array": str(spec.strip_outer_array).lower(),
            "strict_mode": str(spec.strict_mode).lower(), "maxBatchIntervalS": spec.max_batch_interval_s,
            "maxBatchRows": spec.max_batch_rows, "maxBatchSizeBytes": spec.max_batch_size,
            "maxErrorNum": spec.max_error_number, "columnToColumnExpr": ",".join(
                c.name if c.expr is None else f"{c.name}={c.expr}" for c in spec.columns),
            "whereExpr": spec.where or "", "partitions": ",".join(
                table.partitions[p].partition.name for p in spec.partitions) if table else ""}
        statistic = {"receivedBytes": job.received_bytes, "loadedRows": job.loaded_rows, "errorRows": job.error_rows,
                     "unselectedRows": job.unselected_rows,
                     "totalRows": job.loaded_rows + job.error_rows + job.unselected_rows,
                     "committedTaskNum": job.committed_batches}
        source = {"topic": spec.topic, "currentKafkaPartitions": ",".join(map(str, sorted(spec.start_offsets))),
                  "brokerList": spec.broker_list}
        rows.append((
            str(job.job_id), job.name, _time(job.created_ts_ms, session), _time(job.paused_ts_ms, session),
            _time(job.end_ts_ms, session), db_name, table.name if table else "", "false", job.state, "KAFKA",
            "1" if job.state == "RUNNING" else "0", json.dumps(job_properties, sort_keys=True),
            json.dumps(source, sort_keys=True), json.dumps(masked(dict(spec.client_properties)), sort_keys=True),
            json.dumps(statistic), json.dumps(progress), json.dumps(lag), job.reason, "", job.last_error,
            spec.user, ""))
    return Rows(_SHOW_COLUMNS, rows)

