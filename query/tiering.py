"""Resources and storage policies (DESIGN §10): CREATE/ALTER/DROP/SHOW RESOURCE and STORAGE POLICY,
with Doris' rules, errors and SHOW shapes.

A resource is probed (bucket exists, an object can be written, read and deleted) before it goes on
the log, and its secret key goes there sealed: `strata.events` is read by outside consumers. SHOW
prints secrets as `MASK`. Policy times are normalized for the tiering agent, which has no session:
`cooldown_ttl` to integer seconds, `cooldown_datetime` to UTC.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from projections.cooldown import DATETIME_FORMAT
from projections.projection import Projection
from query.context import Context, Done, Rows, SessionState, SqlFailure
from query.parser import statements as st
from query.reads import session_zone
from query.show_filter import like
from query.table_definition import utc_datetime
from schemas import commands as cmd
from schemas.errors import ErrorCode
from storage.object_store import RemoteUnavailable, ResourceError
from storage.secrets import masked

# A resource's stored location: once a policy can have cooled data there, moving it would lose the data.
_LOCATION_KEYS = ("s3.endpoint", "s3.region", "s3.bucket", "s3.root.path")
_POLICY_KEYS = ("storage_resource", "cooldown_ttl", "cooldown_datetime")
_COOLDOWNS = ("cooldown_ttl", "cooldown_datetime")
_TTL_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400, "week": 604800}
# SHOW STORAGE POLICY's value for an unset cooldown (Doris 2.x prints -1 for either).
_UNSET = "-1"


def parse_cooldown_ttl(text: str) -> int:
    """`1d`, `1h`, `30m`, `45s`, `1week` or plain seconds → seconds, which must be positive."""
    found = re.fullmatch(r"\s*(\d+)\s*([a-z]*)\s*", text.lower())
    if found is None or found.group(2) not in _TTL_UNITS or int(found.group(1)) == 0:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Invalid cooldown_ttl '{text}': expected a positive number of "
                                                    "seconds, or a count of d, h, m or s (e.g. '1d', '30m')")
    return int(found.group(1)) * _TTL_UNITS[found.group(2)]


# -- resources ------------------------------------------------------------------------------------
def _resources(ctx: Context) -> dict[str, dict[str, Any]]:
    return ctx.projection.named["resource"]


def _policies(ctx: Context) -> dict[str, dict[str, Any]]:
    return ctx.projection.named["storage_policy"]


def _missing(kind: str, name: str) -> SqlFailure:
    return SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{kind} '{name}' does not exist")


def _probe(ctx: Context, name: str, properties: dict[str, str]) -> None:
    """Validates the properties and checks the store answers with them (Doris' s3_validity_check)."""
    try:
        ctx.stores.build(name, properties).probe()
    except RemoteUnavailable as exc:  # the store may come back: not the statement's fault
        raise SqlFailure(ErrorCode.UNKNOWN_ERROR, str(exc)) from None
    except ResourceError as exc:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, str(exc)) from None


def _policies_on(ctx: Context, resource: str) -> list[str]:
    return sorted(p for p, v in _policies(ctx).items() if v["properties"].get("storage_resource") == resource)


def create_resource(ctx: Context, session: SessionState, s: st.CreateResource) -> Done:
    if s.name in _resources(ctx):
        if s.if_not_exists:
            return Done()
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Resource '{s.name}' already exists")
    properties = {**s.properties, "type": s.properties.get("type", "").lower()}
    _probe(ctx, s.name, properties)
    ctx.propose(cmd.CreateResource(name=s.name, resource_type=properties["type"],
                                   properties=ctx.stores.box.seal_properties(properties),
                                   if_not_exists=s.if_not_exists))
    return Done()


def alter_resource(ctx: Context, session: SessionState, s: st.AlterResource) -> Done:
    current = _resources(ctx).get(s.name)
    if current is None:
        raise _missing("Resource", s.name)
    kind = current["resource_type"]
    if s.properties.get("type", kind).lower() != kind:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Resource '{s.name}': the type can not be changed (it is "
                                                    f"'{kind}')")
    changes = {k: v for k, v in s.properties.items() if k != "type"}
    opened = ctx.stores.properties(s.name)
    users = _policies_on(ctx, s.name)
    moved = [k for k in _LOCATION_KEYS if k in changes and changes[k] != opened.get(k)]
    if users and moved:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                         f"Resource '{s.name}' is used by storage policy {', '.join(users)}; {', '.join(moved)} "
                         "can not be changed (data cooled there would be lost)")
    _probe(ctx, s.name, {**opened, **changes})
    ctx.propose(cmd.AlterResource(name=s.name, properties=ctx.stores.box.seal_properties(changes)))
    return Done()


def drop_resource(ctx: Context, session: SessionState, s: st.DropResource) -> Done:
    if s.name not in _resources(ctx):
        if s.if_exists:
            return Done()
        raise _missing("Resource", s.name)
    users = _policies_on(ctx, s.name)
    if users:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Resource '{s.name}' is used by storage policy "
                                                    f"{', '.join(users)}; drop or alter the policy first")
    ctx.propose(cmd.DropResource(name=s.name, if_exists=s.if_exists))
    return Done()


def _shown_properties(resource: dict[str, Any]) -> dict[str, str]:
    return masked({"type": resource["resource_type"], **resource["properties"]})


def show_resources(ctx: Context, session: SessionState, s: st.ShowResources) -> Rows:
    rows: list[tuple[str, ...]] = []
    for name, resource in sorted(_resources(ctx).items()):
        if (s.name is not None and name != s.name) or not like(s.like, name):
            continue
        rows.extend((name, resource["resource_type"], item, value)
                    for item, value in sorted(_shown_properties(resource).items()))
    return Rows(["Name", "ResourceType", "Item", "Value"], rows)


# -- storage policies -------------------------------------------------------------------------------
def _policy_changes(session: SessionState, name: str, properties: dict[str, str]) -> dict[str, str]:
    """The properties of a CREATE/ALTER STORAGE POLICY, checked and normalized."""
    unknown = sorted(k for k in properties if k not in _POLICY_KEYS)
    if unknown:
        noun = "property" if len(unknown) == 1 else "properties"
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Unknown storage policy {noun} {', '.join(unknown)} for "
                                                    f"'{name}' (known: {', '.join(_POLICY_KEYS)})")
    if all(k in properties for k in _COOLDOWNS):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Storage policy '{name}': cooldown_datetime and cooldown_ttl "
                                                    "can't be set together")
    changes = dict(properties)
    if "cooldown_ttl" in changes:
        changes["cooldown_ttl"] = str(parse_cooldown_ttl(changes["cooldown_ttl"]))
    if "cooldown_datetime" in changes:
        changes["cooldown_datetime"] = utc_datetime(changes["cooldown_datetime"], session, "cooldown_datetime")[0]
    return changes


def _check_policy(ctx: Context, name: str, properties: dict[str, str]) -> None:
    resource = properties.get("storage_resource")
    if not resource:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Storage policy '{name}': missing [storage_resource] in "
                                                    "properties")
    if resource not in _resources(ctx):
        raise _missing("Storage resource", resource)
    if not any(k in properties for k in _COOLDOWNS):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Storage policy '{name}': cooldown_datetime or cooldown_ttl "
                                                    "must be set")


def create_storage_policy(ctx: Context, session: SessionState, s: st.CreateStoragePolicy) -> Done:
    if s.name in _policies(ctx):
        if s.if_not_exists:
            return Done()
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Storage policy '{s.name}' already exists")
    properties = _policy_changes(session, s.name, s.properties)
    _check_policy(ctx, s.name, properties)
    ctx.propose(cmd.CreateStoragePolicy(name=s.name, properties=properties, if_not_exists=s.if_not_exists))
    return Done()


def alter_storage_policy(ctx: Context, session: SessionState, s: st.AlterStoragePolicy) -> Done:
    current = _policies(ctx).get(s.name)
    if current is None:
        raise _missing("Storage policy", s.name)
    changes = _policy_changes(session, s.name, s.properties)
    # The event carries the whole new property set: setting one cooldown removes the other.
    kept = {k: v for k, v in current["properties"].items()
            if not (k in _COOLDOWNS and any(c in changes for c in _COOLDOWNS))}
    properties = {**kept, **changes}
    _check_policy(ctx, s.name, properties)
    # Refused by the sequencer once data cooled under the policy's resource (it sees every move).
    ctx.propose(cmd.AlterStoragePolicy(name=s.name, properties=properties))
    return Done()


def _using(projection: Projection, policy: str | None) -> list[tuple[str, str, str, str]]:
    """(policy, database, table, partitions) for each live table naming a policy: "ALL" when the
    table does, else the partitions that name it themselves."""
    rows = []
    for table in projection.tables.values():
        if table.dropped_ts_ms is not None:
            continue
        db = projection.databases[table.db_id].name
        own = table.properties.get("storage_policy")
        if own and policy in (None, own):
            rows.append((own, db, table.name, "ALL"))
        by_policy: dict[str, list[str]] = {}
        for partition in sorted(table.live_partitions(), key=lambda p: p.partition_id):
            named = partition.partition.properties.get("storage_policy")
            if named and named != own and policy in (None, named):
                by_policy.setdefault(named, []).append(partition.name)
        rows.extend((name, db, table.name, ",".join(parts)) for name, parts in by_policy.items())
    return sorted(rows)


def drop_storage_policy(ctx: Context, session: SessionState, s: st.DropStoragePolicy) -> Done:
    if s.name not in _policies(ctx):
        if s.if_exists:
            return Done()
        raise _missing("Storage policy", s.name)
    users = _using(ctx.projection, s.name)
    if users:
        named = ", ".join(f"{db}.{table}" + ("" if parts == "ALL" else f" (partitions {parts})")
                          for _, db, table, parts in users)
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Storage policy '{s.name}' is used by {named}; remove it from "
                                                    "them first")
    ctx.propose(cmd.DropStoragePolicy(name=s.name, if_exists=s.if_exists))
    return Done()


def _local_datetime(utc_text: str, session: SessionState) -> str:
    moment = datetime.strptime(utc_text, DATETIME_FORMAT).replace(tzinfo=UTC)
    return moment.astimezone(session_zone(session)).strftime(DATETIME_FORMAT)


def show_storage_policy(ctx: Context, session: SessionState, s: st.ShowStoragePolicy) -> Rows:
    if s.using:
        return Rows(["PolicyName", "Database", "Table", "Partitions"], list(_using(ctx.projection, s.policy)))
    rows = []
    for name, policy in sorted(_policies(ctx).items()):
        props = policy["properties"]
        resource_name = props.get("storage_resource", "")
        resource = _resources(ctx).get(resource_name)
        shown = json.dumps(_shown_properties(resource), sort_keys=True) if resource is not None else ""
        cooldown = props.get("cooldown_datetime")
        # No catalog ids for named objects: the creation instant is unique per policy and stable in replay.
        rows.append((name, str(policy["created_ts_ms"]), str(policy.get("version", 0)), "STORAGE", resource_name,
                     _local_datetime(cooldown, session) if cooldown else _UNSET, props.get("cooldown_ttl", _UNSET),
                     shown))
    return Rows(["PolicyName", "Id", "Version", "Type", "StorageResource", "CooldownDatetime", "CooldownTtl",
                 "properties"], rows)
