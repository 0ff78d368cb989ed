"""What the console's HTML views and its charts share: escaping, byte sizes, and the colours of
commit kinds and storage tiers."""

from __future__ import annotations

from html import escape
from typing import Any

KIND_COLORS = {"load": "#2f6fdf", "delete": "#d92d20", "update": "#f79009", "schema_change": "#7a5af8",
               "add_partition": "#12b76a", "drop_partition": "#b54708", "restore": "#ee46bc", "truncate": "#912018",
               "overwrite": "#0086c9",
               "compaction": "#475467", "cooldown": "#0e9384", "tag": "#dc6803"}
OTHER_KIND_COLOR = "#667085"
TIER_COLORS = {"ssd": "#53b1fd", "hdd": "#fdb022"}
REMOTE_COLOR = "#9e77ed"


def e(value: Any) -> str:
    """`value` as HTML text or a quoted attribute's value."""
    return escape("" if value is None else str(value))


def kind_color(kind: str) -> str:
    return KIND_COLORS.get(kind, OTHER_KIND_COLOR)


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
