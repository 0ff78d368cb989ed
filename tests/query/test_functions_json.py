"""JSON functions against Doris' answers: the examples of
https://doris.apache.org/docs/sql-manual/sql-functions/scalar-functions/json-functions/<name>."""

from __future__ import annotations

from tests.query.functionkit import check
from tests.query.sqlkit import Conn


def test_get_json(conn: Conn) -> None:
    check(conn, [
        ("get_json_int('{\"k1\":1, \"k2\":\"2\"}', '$.k1')", "1"),  # get-json-int
        ("get_json_int('{\"k1\":\"v1\", \"my.key\":[1, 2, 3]}', '$.\"my.key\"[1]')", "2"),
        ("get_json_int('{\"k1\":\"v1\"}', '$.k1')", None),
        ("get_json_string('{\"k1\":\"v1\", \"k2\":\"v2\"}', '$.k1')", "v1"),  # get-json-string
        ("get_json_string('{\"k1\":\"v1\"}', '$.k9')", None),
        ("get_json_double('{\"k1\":1.3, \"k2\":\"2\"}', '$.k1')", "1.3"),  # get-json-double
        ("get_json_double('{\"k1\":\"v1\", \"my.key\":[1.1, 2.2, 3.3]}', '$.\"my.key\"[1]')", "2.2"),
        ("get_json_bigint('{\"k1\":3000000000}', '$.k1')", "3000000000"),  # get-json-bigint
    ])


def test_json_family(conn: Conn) -> None:
    check(conn, [
        ("json_extract('{\"id\": 123, \"name\": \"doris\"}', '$.name')", '"doris"'),  # json-extract
        ("json_object('id', 87, 'name', 'carrot')", '{"id":87,"name":"carrot"}'),  # json-object
        ("json_array(1, 'abc', NULL, TRUE)", '[1,"abc",null,true]'),  # json-array
        ("json_contains('{\"a\": 1, \"b\": 2, \"c\": {\"d\": 4}}', '1', '$.a')", "1"),  # json-contains
        ("json_length('{\"k1\":\"v1\", \"k2\": \"v2\"}')", "2"),  # json-length
        ("json_length('{\"k1\":\"v1\", \"k2\": {\"a\": 2, \"b\": 3}}', '$.k2')", "2"),
        ("json_keys('{\"a\": 1, \"b\": {\"c\": 30}}')", '["a","b"]'),  # json-keys
        ("json_valid('{\"x\": 1}')", "1"), ("json_valid('{\"x\"')", "0"),  # json-valid
        ("json_unquote('\"doris\"')", "doris"),  # json-unquote
        ("json_type('{\"k1\":\"v1\"}', '$.k1')", "string"),  # json-type
        ("json_type('{\"k1\":[1]}', '$.k1')", "array"),
    ])
