"""String functions (https://doris.apache.org/docs/sql-manual/sql-functions/scalar-functions/string-functions/).

Doris counts LENGTH in bytes and CHAR_LENGTH in characters, as MySQL; DuckDB's LENGTH counts
characters, its STRLEN bytes."""

from __future__ import annotations

from sqlglot import exp

from query.functions.registry import NOT_SUPPORTED_YET, Call, Function, FunctionError, fn, render

F = "string"

# Groups of the URL pattern below, by PARSE_URL's part name.
_URL = (r"^(?:([^:/?#]+):)?(?://((?:([^@/?#]*)@)?([^/?#:]*)(?::([0-9]+))?))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?")
_URL_PARTS = {"PROTOCOL": 1, "AUTHORITY": 2, "USERINFO": 3, "HOST": 4, "PORT": 5, "PATH": 6, "QUERY": 7, "REF": 8}


def _parse_url(call: Call) -> exp.Expr:
    part = call.args[1]
    if not (isinstance(part, exp.Literal) and part.is_string):
        raise FunctionError(NOT_SUPPORTED_YET, "parse_url: the part must be a literal ('HOST', 'PATH', 'QUERY' …)")
    name = part.this.upper()
    if name == "FILE":
        return render(f"NULLIF(REGEXP_EXTRACT({{0}}, '{_URL}', 6) || CASE WHEN REGEXP_EXTRACT({{0}}, '{_URL}', 7) = '' "
                      f"THEN '' ELSE '?' || REGEXP_EXTRACT({{0}}, '{_URL}', 7) END, '')", call.args)
    if name not in _URL_PARTS:
        raise FunctionError(NOT_SUPPORTED_YET, f"parse_url: unknown part '{part.this}'")
    found = render(f"NULLIF(REGEXP_EXTRACT({{0}}, '{_URL}', {_URL_PARTS[name]}), '')", call.args)
    if len(call.args) == 3:
        if name != "QUERY":
            raise FunctionError(NOT_SUPPORTED_YET, "parse_url: a key goes with the 'QUERY' part only")
        return render("NULLIF(REGEXP_EXTRACT({0}, '(^|&)' || {1} || '=([^&]*)', 2), '')", [found, call.args[2]])
    return found


def _regexp_extract_all(call: Call) -> exp.Expr:
    # Doris answers the first group of every match as text: ['123','456'].
    return render("'[' || ARRAY_TO_STRING(LIST_TRANSFORM(REGEXP_EXTRACT_ALL({0}, {1}, 1), x -> '''' || x || ''''), "
                  "',') || ']'", call.args)


def _concat(call: Call) -> exp.Expr:
    # NULL when any argument is (DuckDB's CONCAT skips them).
    nulls = " OR ".join(f"{{{i}}} IS NULL" for i in range(len(call.args)))
    if not call.args:
        return exp.Literal.string("")
    return render(f"CASE WHEN {nulls} THEN NULL ELSE CONCAT({{*}}) END", call.args)


def _mask(call: Call) -> exp.Expr:
    """Upper-case letters become 'X', lower-case 'x', digits 'n', unless the call names other characters."""
    masked = call.args[0]
    defaults = [exp.Literal.string(c) for c in "Xxn"]
    replacements = [*call.args[1:], *defaults[len(call.args) - 1:]]
    for pattern, replacement in zip(("[A-Z]", "[a-z]", "[0-9]"), replacements, strict=True):
        masked = render(f"REGEXP_REPLACE({{0}}, '{pattern}', {{1}}, 'g')", [masked, replacement])
    return masked


_TEXT = "CAST({0} AS VARCHAR)"
# Padding with '' cannot reach the length: Doris answers ''.
_PAD = "CASE WHEN {{2}} = '' AND LENGTH({{0}}) < {{1}} THEN '' ELSE {side}PAD({{0}}, {{1}}, {{2}}) END"

FUNCTIONS: list[Function] = [
    fn("length", F, "length('Zoë')", f"STRLEN({_TEXT})"),
    fn("octet_length", F, "octet_length('Zoë')", f"STRLEN({_TEXT})"),
    fn("char_length", F, "char_length('Zoë')", f"LENGTH({_TEXT})"),
    fn("character_length", F, "character_length('Zoë')", f"LENGTH({_TEXT})"),
    fn("bit_length", F, "bit_length('abc')", f"STRLEN({_TEXT}) * 8"),
    fn("regexp_extract", F, "regexp_extract('abc123def', '([a-z]+)([0-9]+)', 2)", "REGEXP_EXTRACT({0}, {1}, {2})"),
    fn("regexp_extract_all", F, "regexp_extract_all('abc123def456', '([0-9]+)')", rewrite=_regexp_extract_all,
       arities={2}),
    fn("regexp_replace", F, "regexp_replace('a1b2', '[0-9]', 'x')", "REGEXP_REPLACE({0}, {1}, {2}, 'g')"),
    fn("regexp_replace_one", F, "regexp_replace_one('a1b2', '[0-9]', 'x')", "REGEXP_REPLACE({0}, {1}, {2})"),
    fn("regexp", F, "regexp('abc', '^a')", "REGEXP_MATCHES({0}, {1})"),
    fn("split_part", F, "split_part('a,b,c', ',', 2)", "SPLIT_PART({0}, {1}, {2})"),
    fn("substring_index", F, "substring_index('a.b.c', '.', -2)",
       "CASE WHEN {2} >= 0 THEN ARRAY_TO_STRING(LIST_SLICE(STRING_SPLIT({0}, {1}), 1, {2}), {1}) "
       "ELSE ARRAY_TO_STRING(LIST_SLICE(STRING_SPLIT({0}, {1}), {2}, -1), {1}) END"),
    fn("lpad", F, "lpad('hi', 5, 'xy')", _PAD.format(side="L")),
    fn("rpad", F, "rpad('hi', 5, 'xy')", _PAD.format(side="R")),
    fn("instr", F, "instr('foobar', 'bar')", "STRPOS({0}, {1})"),
    fn("locate", F, "locate('bar', 'foobarbar', 5)", a2="STRPOS({1}, {0})",
       a3="CASE WHEN {2} < 1 THEN 0 WHEN STRPOS(SUBSTRING({1}, {2}), {0}) = 0 THEN 0 "
          "ELSE STRPOS(SUBSTRING({1}, {2}), {0}) + {2} - 1 END"),
    fn("position", F, "position('bar' IN 'foobar')"),
    fn("concat", F, "concat('a', NULL)", rewrite=_concat),
    fn("concat_ws", F, "concat_ws(',', 'a', NULL, 'b')", "CASE WHEN {0} IS NULL THEN NULL ELSE CONCAT_WS({*}) END",
       arities=None),
    fn("money_format", F, "money_format(1234567.891)",
       "FORMAT('{:,.2f}', ROUND(CAST({0} AS DECIMAL(38, 10)), 2))"),
    fn("parse_url", F, "parse_url('http://www.example.com/path?k=v', 'HOST')", rewrite=_parse_url, arities={2, 3}),
    fn("url_decode", F, "url_decode('a%20b')", "URL_DECODE({0})"),
    fn("url_encode", F, "url_encode('a b')", "URL_ENCODE({0})"),
    fn("mask", F, "mask('abC123')", rewrite=_mask, arities={1, 2, 3, 4}),
    fn("upper", F, "upper('abc')", f"UPPER({_TEXT})"),
    fn("ucase", F, "ucase('abc')", f"UPPER({_TEXT})"),
    fn("lower", F, "lower('ABC')", f"LOWER({_TEXT})"),
    fn("lcase", F, "lcase('ABC')", f"LOWER({_TEXT})"),
    fn("trim", F, "trim('  a ')"),
    fn("ltrim", F, "ltrim('  a ')"),
    fn("rtrim", F, "rtrim('  a ')"),
    fn("reverse", F, "reverse('abc')", "REVERSE({0})"),
    fn("repeat", F, "repeat('ab', 2)", "REPEAT({0}, {1})"),
    fn("replace", F, "replace('abc', 'b', 'x')", "REPLACE({0}, {1}, {2})"),
    fn("left", F, "left('hello', 2)", "LEFT({0}, {1})"),
    fn("strleft", F, "strleft('hello', 2)", "LEFT({0}, {1})"),
    fn("right", F, "right('hello', 2)", "RIGHT({0}, {1})"),
    fn("strright", F, "strright('hello', 2)", "RIGHT({0}, {1})"),
    fn("substr", F, "substr('hello', 2, 3)"),
    fn("substring", F, "substring('hello', -3)"),
    fn("ascii", F, "ascii('a')", "ASCII({0})"),
    fn("space", F, "space(3)", "REPEAT(' ', {0})"),
    fn("starts_with", F, "starts_with('hello', 'he')", "STARTS_WITH({0}, {1})"),
    fn("ends_with", F, "ends_with('hello', 'lo')", "ENDS_WITH({0}, {1})"),
    fn("find_in_set", F, "find_in_set('b', 'a,b,c')",
       "CASE WHEN {0} IS NULL OR {1} IS NULL THEN NULL "
       "ELSE COALESCE(LIST_POSITION(STRING_SPLIT({1}, ','), {0}), 0) END"),
    fn("null_or_empty", F, "null_or_empty('')", "({0} IS NULL OR {0} = '')"),
    fn("not_null_or_empty", F, "not_null_or_empty('')", "({0} IS NOT NULL AND {0} <> '')"),
    fn("md5", F, "md5('abc')", "MD5({0})"),
    fn("hex", F, "hex('abc')", "HEX({0})"),
    fn("unhex", F, "unhex('616263')", "CAST(UNHEX({0}) AS VARCHAR)"),
    fn("to_base64", F, "to_base64('abc')", "TO_BASE64(CAST({0} AS BLOB))"),
]
