"""Message kinds register themselves by type name so the codec can find them.

A payload class names its wire `type` and the `schema_version` it writes. Decoding a record of a
type we do not know, or of a newer version than we know, is a countable error, never a crash.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict


class Payload(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    TYPE: ClassVar[str]
    SCHEMA_VERSION: ClassVar[int] = 1
    # Which registry (events or commands) a concrete class belongs to; set by the family base.
    FAMILY: ClassVar[str] = ""


_registries: dict[str, dict[str, type[Payload]]] = {}


def register(cls: type[Payload]) -> type[Payload]:
    """Class decorator: makes `cls` decodable under its TYPE within its family."""
    family = _registries.setdefault(cls.FAMILY, {})
    if cls.TYPE in family:
        raise TypeError(f"{cls.FAMILY} type {cls.TYPE!r} registered twice")
    family[cls.TYPE] = cls
    return cls


def kinds(family: str) -> dict[str, type[Payload]]:
    return dict(_registries.get(family, {}))


def lookup(family: str, type_name: str) -> type[Payload] | None:
    """The class registered for `type_name` (no copy: this is on every decode's path)."""
    return _registries.get(family, {}).get(type_name)
