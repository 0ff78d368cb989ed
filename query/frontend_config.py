"""ADMIN SHOW FRONTEND CONFIG [LIKE '…']: this SQL server's settings (schemas.config, set by STRATA_*
environment variables or the STRATA_CONFIG file) in Doris' shape. Secrets are never shown: a secret
setting is left out, and a secret entry inside a mapping (Kafka client properties) shows as ******.
Settings are read at start, so none is mutable at run time."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from query import show_filter
from query.context import Context, Rows, SessionState
from query.parser import statements as st

COLUMNS = ["Key", "Value", "Type", "IsMutable", "MasterOnly", "Comment"]
_SECRET_KEY = re.compile(r"password|root_user|secret|token|credential|private|sasl\.jaas|key\.password|access_key",
                         re.IGNORECASE)
MASK = "******"


def _doris_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "long" if abs(value) > 2**31 - 1 else "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, dict):
        return "Map"
    if isinstance(value, list | tuple):
        return "String[]"
    return "String"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return json.dumps({k: MASK if _SECRET_KEY.search(str(k)) else v for k, v in value.items()}, default=str)
    if isinstance(value, Path):
        return str(value)
    return str(value)


def settings_rows(ctx: Context) -> list[tuple[object, ...]]:
    rows: list[tuple[object, ...]] = []
    fields = type(ctx.config).model_fields
    for name in sorted(fields):
        value = getattr(ctx.config, name)
        if isinstance(value, SecretStr) or _SECRET_KEY.search(name):
            continue
        rows.append((name, _text(value), _doris_type(value), "false", "false", fields[name].description or ""))
    return rows


def admin_show_frontend_config(ctx: Context, session: SessionState, s: st.AdminShowFrontendConfig) -> Rows:
    return show_filter.apply(ctx, Rows(COLUMNS, settings_rows(ctx)), s.like, None)
