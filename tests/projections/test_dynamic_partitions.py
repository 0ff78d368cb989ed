"""Dynamic partition plans without Kafka: names, ranges, hot partitions, history and what is dropped,
for every time unit, and the validation of every property."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from projections.dynamic_partitions import (
    NEVER,
    DynamicPartitionError,
    check_table,
    overlaps,
    parse_spec,
    plan,
)
from schemas.model import PartitionBound


def _spec(**props: str):  # noqa: ANN202
    return parse_spec({f"dynamic_partition.{k}": v for k, v in props.items()})


NOW = datetime(2021, 5, 20, 15, 30, tzinfo=UTC)


def test_dorises_own_example_of_hot_partitions() -> None:
    # Doris' documentation: today 2021-05-20, DAY, start=-3, end=3, hot_partition_num=2.
    spec = _spec(time_unit="DAY", start="-3", end="3", hot_partition_num="2", create_history_partition="true")
    got = plan(spec, NOW, "DATE")
    assert [p.name for p in got.create] == ["p20210517", "p20210518", "p20210519", "p20210520", "p20210521",
                                            "p20210522", "p20210523"]
    first = got.create[0]
    assert first.bound == PartitionBound(lower=("2021-05-17",), upper=("2021-05-18",))
    assert first.properties == {"storage_medium": "hdd"}
    assert got.create[2].properties == {"storage_medium": "ssd", "storage_cooldown_time": "2021-05-21 00:00:00"}
    assert got.create[3].properties["storage_cooldown_time"] == "2021-05-22 00:00:00"
    assert got.drop_before == "2021-05-17"


def test_without_history_only_now_and_ahead_are_created() -> None:
    got = plan(_spec(time_unit="DAY", start="-7", end="2"), NOW, "DATETIME")
    assert [p.name for p in got.create] == ["p20210520", "p20210521", "p20210522"]
    assert got.create[0].bound.lower == ("2021-05-20 00:00:00",)
    assert plan(_spec(time_unit="DAY", end="1"), NOW, "DATE").drop_before is None  # start unset: never drop


@pytest.mark.parametrize(("props", "names", "lower"), [
    ({"time_unit": "HOUR", "end": "1"}, ["p2021052015", "p2021052016"], "2021-05-20 15:00:00"),
    ({"time_unit": "WEEK", "end": "1"}, ["p2021_20", "p2021_21"], "2021-05-17"),
    ({"time_unit": "WEEK", "end": "1", "start_day_of_week": "3"}, ["p2021_20", "p2021_21"], "2021-05-19"),
    ({"time_unit": "MONTH", "end": "1", "prefix": "m_"}, ["m_202105", "m_202106"], "2021-05-01"),
    ({"time_unit": "MONTH", "end": "1", "start_day_of_month": "25"}, ["p202104", "p202105"], "2021-04-25"),
    ({"time_unit": "YEAR", "end": "1"}, ["p2021", "p2022"], "2021-01-01"),
])
def test_every_time_unit(props: dict[str, str], names: list[str], lower: str) -> None:
    got = plan(_spec(**props), NOW, "DATETIME" if props["time_unit"] == "HOUR" else "DATE")
    assert [p.name for p in got.create] == names
    assert got.create[0].bound.lower == (lower,)


def test_the_time_zone_decides_where_a_day_starts() -> None:
    late = datetime(2021, 5, 20, 23, 30, tzinfo=UTC)
    assert plan(_spec(time_unit="DAY", end="1", time_zone="Asia/Shanghai"), late, "DATE").create[0].name == "p20210521"


def test_history_partition_num_bounds_the_history() -> None:
    spec = _spec(time_unit="DAY", start="-30", end="1", create_history_partition="true", history_partition_num="2")
    assert [p.name for p in plan(spec, NOW, "DATE").create] == ["p20210518", "p20210519", "p20210520", "p20210521"]


def test_policy_and_medium_pass_to_every_partition() -> None:
    got = plan(_spec(time_unit="DAY", end="1", storage_policy="cold", storage_medium="HDD"), NOW, "DATE")
    assert all(p.properties == {"storage_medium": "hdd", "storage_policy": "cold"} for p in got.create)


def test_overlap_is_judged_on_moments() -> None:
    day = PartitionBound(lower=("2021-05-20",), upper=("2021-05-21",))
    assert overlaps(day, [PartitionBound(lower=("2021-05-20 12:00:00",), upper=None)])
    assert not overlaps(day, [PartitionBound(lower=None, upper=("2021-05-20",))])


@pytest.mark.parametrize(("props", "message"), [
    ({"end": "3"}, "time_unit must be one of"),
    ({"time_unit": "MINUTE", "end": "3"}, "not 'MINUTE'"),
    ({"time_unit": "DAY"}, "end is required"),
    ({"time_unit": "DAY", "end": "0"}, "end must be from 1"),
    ({"time_unit": "DAY", "end": "3", "start": "0"}, "start must be from"),
    ({"time_unit": "DAY", "end": "x"}, "must be an integer"),
    ({"time_unit": "DAY", "end": "3", "time_zone": "Mars/Olympus"}, "not a known time zone"),
    ({"time_unit": "DAY", "end": "3", "prefix": "1p"}, "prefix '1p'"),
    ({"time_unit": "DAY", "end": "3", "enable": "yes"}, "enable must be true or false"),
    ({"time_unit": "DAY", "end": "3", "colour": "red"}, "Unknown dynamic partition property"),
    ({"time_unit": "DAY", "end": "3", "storage_medium": "TAPE"}, "SSD or HDD"),
    ({"time_unit": "DAY", "end": "3", "hot_partition_num": "2", "storage_medium": "HDD"}, "can not be combined"),
    ({"time_unit": "DAY", "end": "3", "start_day_of_month": "31"}, "from 1 to 28"),
    ({"time_unit": "DAY", "end": "3", "start_day_of_week": "8"}, "from 1 to 7"),
])
def test_bad_properties_are_named(props: dict[str, str], message: str) -> None:
    with pytest.raises(DynamicPartitionError, match=message):
        _spec(**props)


def test_the_table_must_fit() -> None:
    spec = _spec(time_unit="HOUR", end="1")
    assert spec is not None and spec.start == NEVER
    with pytest.raises(DynamicPartitionError, match="BY RANGE on one column"):
        check_table(spec, "LIST", ["DATE"])
    with pytest.raises(DynamicPartitionError, match="DATE or DATETIME"):
        check_table(spec, "RANGE", ["INT"])
    with pytest.raises(DynamicPartitionError, match="HOUR needs a DATETIME"):
        check_table(spec, "RANGE", ["DATE"])
    check_table(spec, "RANGE", ["DATETIME"])
    assert parse_spec({"replication_num": "1"}) is None
