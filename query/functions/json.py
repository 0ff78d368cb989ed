"""JSON functions (https://doris.apache.org/docs/sql-manual/sql-functions/scalar-functions/json-functions/).

GET_JSON_* answer NULL where the value is missing or of another kind, as Doris."""

from __future__ import annotations

from query.functions.registry import Function, fn

F = "json"

_AT = "JSON_EXTRACT({0}, {1})"
_TYPE = ("CASE JSON_TYPE({0}) WHEN 'OBJECT' THEN 'object' WHEN 'ARRAY' THEN 'array' WHEN 'NULL' THEN 'null' "
         "WHEN 'BOOLEAN' THEN 'bool' WHEN 'VARCHAR' THEN 'string' WHEN 'DOUBLE' THEN 'double' "
         "WHEN 'UBIGINT' THEN 'int' WHEN 'BIGINT' THEN 'int' END")
_LENGTH = ("CASE JSON_TYPE({0}) WHEN 'ARRAY' THEN JSON_ARRAY_LENGTH({0}) WHEN 'OBJECT' THEN LEN(JSON_KEYS({0})) "
           "WHEN NULL THEN NULL ELSE 1 END")


def _at(text: str) -> str:
    return text.replace("{0}", "(" + _AT + ")")


def _typed(kinds: tuple[str, ...], duck_type: str) -> str:
    """The value at the path as `duck_type` when JSON holds one of `kinds` there, else NULL."""
    listed = ", ".join(f"'{k}'" for k in kinds)
    return (f"CASE WHEN JSON_TYPE({_AT}) IN ({listed}) "
            f"THEN TRY_CAST(JSON_EXTRACT_STRING({{0}}, {{1}}) AS {duck_type}) END")


FUNCTIONS: list[Function] = [
    fn("json_extract", F, "json_extract('{\"a\": {\"b\": [1, 2]}}', '$.a.b[1]')",
       "JSON_EXTRACT(CAST({0} AS JSON), {1})"),
    fn("get_json_string", F, "get_json_string('{\"k1\": \"v1\"}', '$.k1')", "JSON_EXTRACT_STRING({0}, {1})"),
    fn("get_json_int", F, "get_json_int('{\"k1\": 3}', '$.k1')",
       _typed(("UBIGINT", "BIGINT"), "INTEGER")),
    fn("get_json_bigint", F, "get_json_bigint('{\"k1\": 3000000000}', '$.k1')",
       _typed(("UBIGINT", "BIGINT"), "BIGINT")),
    fn("get_json_double", F, "get_json_double('{\"k1\": 1.5}', '$.k1')",
       _typed(("UBIGINT", "BIGINT", "DOUBLE"), "DOUBLE")),
    fn("json_object", F, "json_object('k', 1, 'v', 'x')", "JSON_OBJECT({*})", arities=None),
    fn("json_array", F, "json_array(1, 'a', NULL)", "JSON_ARRAY({*})", arities=None),
    fn("json_contains", F, "json_contains('[1, 2]', '1')", a2="JSON_CONTAINS({0}, {1})",
       a3="JSON_CONTAINS(JSON_EXTRACT({0}, {2}), {1})"),
    fn("json_length", F, "json_length('{\"a\": 1, \"b\": [1]}')", a1=_LENGTH, a2=_at(_LENGTH)),
    fn("json_keys", F, "json_keys('{\"a\": 1, \"b\": 2}')", a1="TO_JSON(JSON_KEYS({0}))",
       a2="TO_JSON(JSON_KEYS({0}, {1}))"),
    fn("json_valid", F, "json_valid('{\"a\": 1}')",
       "CASE WHEN {0} IS NULL THEN NULL WHEN JSON_VALID({0}) THEN 1 ELSE 0 END"),
    fn("json_unquote", F, "json_unquote('\"a\"')",
       "CASE WHEN JSON_VALID({0}) AND JSON_TYPE({0}) = 'VARCHAR' THEN JSON_EXTRACT_STRING({0}, '$') ELSE {0} END"),
    fn("json_quote", F, "json_quote('a\"b')", "CAST(TO_JSON(CAST({0} AS VARCHAR)) AS VARCHAR)"),
    fn("json_type", F, "json_type('{\"a\": 1}', '$.a')", a1=_TYPE, a2=_at(_TYPE)),
    fn("json_parse", F, "json_parse('{\"a\": 1}')", "CAST({0} AS JSON)"),
    fn("json_exists_path", F, "json_exists_path('{\"a\": 1}', '$.a')", "JSON_EXISTS({0}, {1})"),
]
