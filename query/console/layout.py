"""Geometry of the console's charts, kept apart from the HTML: where a time or a version falls on an
axis, which marks collide and become one group, where labels go so that no two overlap, and the axis
ticks. Pure functions of numbers and strings, so they are unit-tested without a browser.

Text widths are estimated, not measured (the server has no fonts): font size × characters, each
counted `CHAR_EM` wide, or `WIDE_EM` for the few glyphs wider than that (#, m, w, capitals, …). The
ems are above the widest glyphs of DejaVu Sans (what system-ui resolves to on Debian; digits 0.64 em,
'#' 0.84, 'W' 0.99), so a box computed here holds the rendered text, and boxes that do not overlap
here do not overlap on screen either (tests/query/test_console_browser.py compares with getBBox).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Generic, TypeVar

FONT_PX = 11
CHAR_EM = 0.72  # estimated width of one character, in font sizes (see the module's docstring)
WIDE_EM = 1.0
WIDE = frozenset("#%@&mwMW") | frozenset("ABCDEFGHIJKLNOPQRSTUVXYZ")
DESCENT_EM = 0.3  # how far below its baseline a glyph may reach
LABEL_PAD_PX = 4  # free space kept between two labels on one row

T = TypeVar("T")


def text_width(text: str, font_px: float = FONT_PX) -> float:
    return sum(WIDE_EM if c in WIDE else CHAR_EM for c in text) * font_px


@dataclass(frozen=True)
class Box:
    """A text's box: left, top, right, bottom in SVG user units."""

    left: float
    top: float
    right: float
    bottom: float

    def overlaps(self, other: Box) -> bool:
        return (self.left < other.right and other.left < self.right
                and self.top < other.bottom and other.top < self.bottom)


def text_box(x: float, baseline: float, text: str, anchor: str = "start", font_px: float = FONT_PX) -> Box:
    """The box a `<text x y text-anchor>` occupies, by the width estimate."""
    width = text_width(text, font_px)
    left = x - width / 2 if anchor == "middle" else x - width if anchor == "end" else x
    return Box(left, baseline - font_px, left + width, baseline + DESCENT_EM * font_px)


@dataclass(frozen=True)
class Scale:
    """A linear axis: values lo…hi onto pixels x0…x1."""

    lo: float
    hi: float
    x0: float
    x1: float

    def x(self, value: float) -> float:
        span = self.hi - self.lo
        if span <= 0:
            return (self.x0 + self.x1) / 2
        return self.x0 + (value - self.lo) / span * (self.x1 - self.x0)


@dataclass(frozen=True)
class Group(Generic[T]):
    """Marks too close to draw apart: drawn as one mark at `x` (their middle), with their count."""

    members: list[T]
    x: float
    first_x: float
    last_x: float


def group_marks(items: Sequence[T], x_of: Callable[[T], float], gap_px: float) -> list[Group[T]]:
    """`items` in x order, in groups: a group starts at its first mark and takes every mark less than
    `gap_px` to its right. So a group is never wider than `gap_px` (however dense the marks, zooming
    into one separates its members) and two groups' first marks are at least `gap_px` apart."""
    ordered = sorted(items, key=x_of)
    groups: list[Group[T]] = []
    members: list[T] = []
    for item in ordered:
        if members and x_of(item) - x_of(members[0]) >= gap_px:
            groups.append(_group(members, x_of))
            members = []
        members.append(item)
    if members:
        groups.append(_group(members, x_of))
    return groups


def _group(members: list[T], x_of: Callable[[T], float]) -> Group[T]:
    first, last = x_of(members[0]), x_of(members[-1])
    return Group(list(members), (first + last) / 2, first, last)


@dataclass(frozen=True)
class Label:
    text: str
    x: float  # the middle of the text (text-anchor=middle)
    baseline: float

    @property
    def box(self) -> Box:
        return text_box(self.x, self.baseline, self.text, "middle")


def place_labels(wanted: Sequence[tuple[float, str]], baselines: Sequence[float], left: float,
                 right: float) -> list[Label | None]:
    """A label for each (x, text), centred on x and kept within left…right, on the first of the
    `baselines` rows where it clears the labels already placed there by LABEL_PAD_PX; None where no
    row has room (the mark's tooltip still names it). Labels on different rows never overlap when
    the rows are at least a line (font size × (1 + DESCENT_EM)) apart."""
    placed: list[Label | None] = [None] * len(wanted)
    row_ends = [float("-inf")] * len(baselines)
    for i in sorted(range(len(wanted)), key=lambda j: wanted[j][0]):
        x, text = wanted[i]
        width = text_width(text)
        middle = min(max(x, left + width / 2), right - width / 2)
        for row, end in enumerate(row_ends):
            if middle - width / 2 >= end + LABEL_PAD_PX:
                placed[i] = Label(text, middle, baselines[row])
                row_ends[row] = middle + width / 2
                break
    return placed


# -- time ticks --------------------------------------------------------------------------------------
_SECOND, _MINUTE, _HOUR, _DAY = 1000, 60_000, 3_600_000, 86_400_000
_STEPS_MS = (1, 2, 5, 10, 20, 50, 100, 200, 500, _SECOND, 2 * _SECOND, 5 * _SECOND, 10 * _SECOND,
             15 * _SECOND, 30 * _SECOND, _MINUTE, 2 * _MINUTE, 5 * _MINUTE, 10 * _MINUTE, 15 * _MINUTE,
             30 * _MINUTE, _HOUR, 2 * _HOUR, 3 * _HOUR, 6 * _HOUR, 12 * _HOUR, _DAY, 2 * _DAY, 7 * _DAY,
             14 * _DAY, 30 * _DAY, 91 * _DAY, 365 * _DAY)
# A tick's label format by its step; the browser writes the same fields in the viewer's time zone
# (query.console.html's script), so a label is as long in either zone.
TICK_FORMATS = {"ms": "HH:MM:SS.fff", "s": "HH:MM:SS", "min": "MM-DD HH:MM", "day": "YYYY-MM-DD"}


def tick_format(step_ms: int) -> str:
    if step_ms < _SECOND:
        return "ms"
    if step_ms < _MINUTE:
        return "s"
    if step_ms < _DAY:
        return "min"
    return "day"


def format_utc(ts_ms: int, fmt: str) -> str:
    moment = datetime.fromtimestamp(ts_ms / 1000, tz=UTC)
    if fmt == "ms":
        return moment.strftime("%H:%M:%S.%f")[:-3]
    if fmt == "s":
        return moment.strftime("%H:%M:%S")
    if fmt == "min":
        return moment.strftime("%m-%d %H:%M")
    return moment.strftime("%Y-%m-%d")


@dataclass(frozen=True)
class Tick:
    value: int
    x: float
    text: str
    fmt: str


def time_ticks(scale: Scale) -> list[Tick]:
    """Ticks at round instants (multiples of a step, in UTC), the step the smallest that leaves each
    label its width and a pad; labels in UTC (the page rewrites them in the viewer's zone)."""
    span = max(scale.hi - scale.lo, 1)
    px_per_ms = (scale.x1 - scale.x0) / span
    step = _STEPS_MS[-1]
    for candidate in _STEPS_MS:
        if candidate * px_per_ms >= text_width(TICK_FORMATS[tick_format(candidate)]) + 3 * LABEL_PAD_PX:
            step = candidate
            break
    fmt = tick_format(step)
    first = -(-int(scale.lo) // step) * step
    return [Tick(ts, scale.x(ts), format_utc(ts, fmt), fmt) for ts in range(first, int(scale.hi) + 1, step)]


def version_ticks(top: int, scale: Scale) -> list[Tick]:
    """Version numbers 1…top at a round step (1, 2, 5, 10, 20, 50, …) whose labels do not overlap."""
    width = text_width(str(max(top, 1))) + 2 * LABEL_PAD_PX
    step = 1
    while step * (scale.x1 - scale.x0) / max(scale.hi - scale.lo, 1) < width:
        step = step * 5 // 2 if str(step).startswith("2") else step * 2
    values = [1] + list(range(step, top + 1, step)) if step > 1 else list(range(1, top + 1))
    ticks = [Tick(v, scale.x(v), str(v), "version") for v in values]
    # 1 and the first multiple of the step may be too close (step 2: 1 and 2 are one unit apart).
    if len(ticks) > 1 and ticks[1].x - ticks[0].x < width:
        del ticks[1]
    return ticks
