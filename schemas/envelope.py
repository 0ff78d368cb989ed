"""The envelope every record on `strata.commands` and `strata.events` is wrapped in, and its codec.

Wire form (UTF-8 JSON)::

    {"event_id": "...", "type": "RowsetsCommitted", "schema_version": 1, "table_id": 7,
     "commit_ts_ms": 1764614201000, "command_id": "...", "payload": {...}}

Decoding never raises anything but `DecodeError` (and its kinds), so a processor can count a bad
record and skip it.
"""

from __future__ import annotations

import json
import uuid
from functools import cache
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, StrictInt, TypeAdapter, ValidationError, create_model

# Importing the kinds registers them.
from schemas import commands as _commands  # noqa: F401
from schemas import events as _events  # noqa: F401
from schemas.commands import Command
from schemas.events import Event
from schemas.registry import Payload, kinds, lookup


class DecodeError(ValueError):
    """A record that cannot be decoded; `reason` is a short label for metrics."""

    reason = "malformed"


class UnknownType(DecodeError):
    reason = "unknown_type"


class NewerSchemaVersion(DecodeError):
    reason = "newer_schema_version"


class EventEnvelope(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    event_id: str
    type: str
    schema_version: int
    table_id: int | None
    commit_ts_ms: int
    command_id: str | None
    payload: SerializeAsAny[Event]
    # On the last event of each sequencer transaction: strata.commands partition → the offset of the
    # next command to decide. The sequencer's consumer position thus commits with the events it
    # produced (no consumer-group offset commit, whose librdkafka call can hang past its timeout
    # when the group coordinator restarts: confluentinc/librdkafka#5456), and a restarted sequencer
    # reads it back from the log it replays anyway.
    commands_position: dict[int, int] | None = None


class CommandEnvelope(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    command_id: str
    type: str
    schema_version: int
    table_id: int | None
    issued_ts_ms: int
    # Who proposed it (a server or agent name), for tracing.
    origin: str
    payload: SerializeAsAny[Command]


def new_id() -> str:
    return uuid.uuid4().hex


def wrap_event(payload: Event, *, table_id: int | None, commit_ts_ms: int,
               command_id: str | None, event_id: str | None = None) -> EventEnvelope:
    return EventEnvelope(event_id=event_id or new_id(), type=payload.TYPE,
                         schema_version=payload.SCHEMA_VERSION, table_id=table_id,
                         commit_ts_ms=commit_ts_ms, command_id=command_id, payload=payload)


def wrap_command(payload: Command, *, table_id: int | None, issued_ts_ms: int, origin: str,
                 command_id: str | None = None) -> CommandEnvelope:
    return CommandEnvelope(command_id=command_id or new_id(), type=payload.TYPE,
                           schema_version=payload.SCHEMA_VERSION, table_id=table_id,
                           issued_ts_ms=issued_ts_ms, origin=origin, payload=payload)


def encode(envelope: EventEnvelope | CommandEnvelope) -> bytes:
    body = envelope.model_dump(mode="json")
    if body.get("commands_position", 0) is None:
        del body["commands_position"]  # most events: keep them as they were
    return json.dumps(body, separators=(",", ":"), sort_keys=True).encode()


def _decode(raw: bytes | str | None, family: str) -> tuple[dict[str, Any], Payload]:
    if raw is None:
        raise DecodeError("empty record")
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        # ValueError covers JSONDecodeError, UnicodeDecodeError and an integer past Python's digit
        # limit; RecursionError, arrays or objects nested thousands deep.
        raise DecodeError(f"not JSON: {str(exc)[:200]}") from None
    if not isinstance(body, dict):
        raise DecodeError("record is not a JSON object")
    type_name = body.get("type")
    cls = lookup(family, type_name) if isinstance(type_name, str) else None
    if cls is None:
        raise UnknownType(f"unknown {family} type {type_name!r}")
    version = body.get("schema_version")
    if not isinstance(version, int):
        raise DecodeError(f"{type_name}: schema_version missing or not an integer")
    if version > cls.SCHEMA_VERSION:
        raise NewerSchemaVersion(
            f"{type_name} schema_version {version} is newer than {cls.SCHEMA_VERSION}, the newest this "
            "process knows; upgrade it")
    try:
        payload = cls.model_validate(body.get("payload"))
    except ValidationError as exc:
        raise DecodeError(f"{type_name}: invalid payload: {exc.errors()[0]['msg']} "
                          f"at {'.'.join(map(str, exc.errors()[0]['loc']))}") from None
    return body, payload


@cache
def _event_adapter() -> TypeAdapter[Any]:
    """Every registered event kind's envelope as one union tagged by `type`, validated straight from
    the JSON bytes in one pass of pydantic-core: no `json.loads` dict, no second validation of the
    envelope around an already-validated payload (the follower's per-event cost on a replay).

    It accepts no record that `_decode` refuses: `schema_version` must be a JSON integer (the slow
    path's isinstance check), and the version and type are checked against the payload class after."""
    shapes = [
        create_model(f"_{name}Envelope", __config__=EventEnvelope.model_config,
                     event_id=(str, ...), type=(Literal[name], ...),  # type: ignore[valid-type,arg-type]
                     schema_version=(StrictInt, ...), table_id=(int | None, ...), commit_ts_ms=(int, ...),
                     command_id=(str | None, ...), payload=(cls, ...), commands_position=(dict[int, int] | None, None))
        for name, cls in kinds("event").items()]
    union: Any = Annotated[Union[tuple(shapes)], Field(discriminator="type")]  # noqa: UP007
    return TypeAdapter(union)


def _decode_event_fast(raw: bytes | str) -> EventEnvelope | None:
    """The envelope when the record is well-formed and of a version this process knows; None sends
    it down the slow path, whose errors say what is wrong."""
    try:
        shape = _event_adapter().validate_json(raw)
    except ValidationError:
        return None
    if shape.schema_version > type(shape.payload).SCHEMA_VERSION:
        return None
    # Validated already, field for field as EventEnvelope declares them: the instance takes the
    # shape's state as it is (what `model_construct` does, without its per-field loop).
    envelope = EventEnvelope.__new__(EventEnvelope)
    object.__setattr__(envelope, "__dict__", shape.__dict__)
    object.__setattr__(envelope, "__pydantic_fields_set__", shape.__pydantic_fields_set__)
    object.__setattr__(envelope, "__pydantic_extra__", None)
    object.__setattr__(envelope, "__pydantic_private__", None)
    return envelope


def decode_event(raw: bytes | str | None) -> EventEnvelope:
    if raw is not None:
        fast = _decode_event_fast(raw)
        if fast is not None:
            return fast
    body, payload = _decode(raw, "event")
    try:
        return EventEnvelope.model_validate({**body, "payload": payload})
    except ValidationError as exc:
        raise DecodeError(f"invalid event envelope: {exc.errors()[0]['msg']}") from None


def decode_command(raw: bytes | str | None) -> CommandEnvelope:
    body, payload = _decode(raw, "command")
    try:
        return CommandEnvelope.model_validate({**body, "payload": payload})
    except ValidationError as exc:
        raise DecodeError(f"invalid command envelope: {exc.errors()[0]['msg']}") from None
