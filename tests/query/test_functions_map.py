"""Map functions against Doris' answers: the examples of
https://doris.apache.org/docs/sql-manual/sql-functions/scalar-functions/map-functions/<name>; maps
print as Doris prints them ({"k1":1, "k2":2}, see query.wire.values)."""

from __future__ import annotations

from tests.query.functionkit import check
from tests.query.sqlkit import Conn


def test_maps(conn: Conn) -> None:
    check(conn, [
        ("map('k1', 1, 'k2', 2)", '{"k1":1, "k2":2}'),  # map
        ("map_keys(map('k1', 1, 'k2', 2))", '["k1", "k2"]'),  # map-keys
        ("map_values(map('k1', 1, 'k2', 2))", "[1, 2]"),  # map-values
        ("map_size(map('k1', 1, 'k2', 2))", "2"),  # map-size
        ("map_contains_key(map('k1', 1), 'k1')", "1"), ("map_contains_key(map('k1', 1), 'k9')", "0"),
        ("map_contains_value(map('k1', 1), 1)", "1"),
        ("element_at(map('k1', 1, 'k2', 2), 'k2')", "2"),  # element-at (array-functions) on a map
    ])
