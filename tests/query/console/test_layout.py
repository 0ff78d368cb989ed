"""The console's chart geometry (query.console.layout): grouping of colliding marks, label placement
without overlaps at any density, and axis ticks whose labels clear each other."""

from __future__ import annotations

import itertools
import random

from query.console.layout import (
    FONT_PX,
    LABEL_PAD_PX,
    Scale,
    group_marks,
    place_labels,
    text_box,
    text_width,
    time_ticks,
    version_ticks,
)

MINUTE_MS = 60_000
T0 = 1_796_000_000_000  # an instant in 2026


def test_far_apart_marks_stay_single_and_close_ones_group() -> None:
    xs = [10.0, 100.0, 101.0, 105.0, 200.0]
    groups = group_marks(xs, lambda x: x, 16)
    assert [g.members for g in groups] == [[10.0], [100.0, 101.0, 105.0], [200.0]]
    assert groups[1].x == 102.5 and (groups[1].first_x, groups[1].last_x) == (100.0, 105.0)


def test_a_group_is_never_wider_than_the_gap_however_dense() -> None:
    xs = [i * 0.5 for i in range(1000)]  # a mark every half pixel: chaining would make one group
    groups = group_marks(xs, lambda x: x, 16)
    assert sum(len(g.members) for g in groups) == 1000
    assert all(g.last_x - g.first_x < 16 for g in groups)
    assert all(b.first_x - a.first_x >= 16 for a, b in itertools.pairwise(groups))


def test_labels_never_overlap_and_drop_when_no_row_has_room() -> None:
    rng = random.Random(7)
    wanted = [(rng.uniform(0, 500), f"#{i}") for i in range(400)]
    placed = place_labels(wanted, [14, 29], 0, 500)
    boxes = [label.box for label in placed if label is not None]
    assert 10 < len(boxes) < 400  # some placed, the rest left to the marks' tooltips
    assert not any(a.overlaps(b) for a, b in itertools.combinations(boxes, 2))
    assert all(0 <= b.left and b.right <= 500 for b in boxes)


def test_a_lone_label_goes_on_the_first_row_centred_on_its_mark() -> None:
    (label,) = place_labels([(250.0, "#12")], [14, 29], 0, 500)
    assert label is not None and (label.x, label.baseline) == (250.0, 14)
    # Near an edge it is pushed inside rather than cut off.
    (edge,) = place_labels([(499.0, "a long label")], [14], 0, 500)
    assert edge is not None and edge.box.right <= 500


def test_label_rows_a_line_apart_do_not_overlap() -> None:
    a, b = text_box(10, 14, "xxxx", "middle"), text_box(10, 29, "xxxx", "middle")
    assert not a.overlaps(b) and a.overlaps(text_box(12, 14, "xx", "middle"))


def test_time_ticks_for_a_minute_are_seconds_whose_labels_clear_each_other() -> None:
    ticks = time_ticks(Scale(T0, T0 + MINUTE_MS, 110, 1170))
    assert ticks and all(t.fmt == "s" and len(t.text) == 8 for t in ticks)
    steps = {b.value - a.value for a, b in itertools.pairwise(ticks)}
    assert len(steps) == 1 and steps.pop() % 1000 == 0
    assert all(b.x - a.x >= text_width(a.text) + LABEL_PAD_PX for a, b in itertools.pairwise(ticks))


def test_time_ticks_switch_format_with_the_span() -> None:
    assert {t.fmt for t in time_ticks(Scale(T0, T0 + 500, 0, 1000))} == {"ms"}
    assert {t.fmt for t in time_ticks(Scale(T0, T0 + 6 * 3_600_000, 0, 1000))} == {"min"}
    assert {t.fmt for t in time_ticks(Scale(T0, T0 + 90 * 86_400_000, 0, 1000))} == {"day"}


def test_version_ticks_thin_out_to_clear_labels() -> None:
    few = version_ticks(5, Scale(0.5, 5.5, 0, 1000))
    assert [t.value for t in few] == [1, 2, 3, 4, 5]
    many = version_ticks(500, Scale(0.5, 500.5, 0, 1000))
    assert many[0].value == 1 and len(many) < 100
    widths = text_width("500") + 2 * LABEL_PAD_PX
    assert all(b.x - a.x >= widths for a, b in itertools.pairwise(many))
    assert FONT_PX == 11


def test_counts_of_groups_at_the_densest_all_find_a_row() -> None:
    # Groups are at least the grouping gap (18 px) apart; a two-digit count fits on one of two rows.
    wanted = [(110 + 18.0 * i, f"×{10 + i % 90}") for i in range(59)]
    placed = place_labels(wanted, [14, 29], 102, 1198)
    assert all(label is not None for label in placed)
