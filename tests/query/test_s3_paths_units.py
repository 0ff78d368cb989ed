"""The pure parts of the S3 paths, without a stack: Doris' glob, secret masking in statement text,
and the file formats (CSV with several-character separators and `\\N`, JSON lines and arrays)."""

from __future__ import annotations

import io

import pyarrow as pa
import pytest

from query.context import SqlFailure
from query.file_formats import TextOptions, concatenated, decode, decode_pieces, text_header, text_options, text_rows
from query.s3_location import split_uri
from query.s3_source import glob_regex
from query.secret_text import mask_secrets


@pytest.mark.parametrize(("pattern", "matches", "misses"), [
    ("d/*.csv", ["d/a.csv", "d/.csv"], ["d/s/a.csv", "d/a.csv.gz", "e/a.csv"]),
    ("d/?.csv", ["d/a.csv"], ["d/ab.csv"]),
    ("d/[ab].csv", ["d/a.csv", "d/b.csv"], ["d/c.csv"]),
    ("d/[!ab].csv", ["d/c.csv"], ["d/a.csv"]),
    ("d/{x,y}/*.parquet", ["d/x/1.parquet", "d/y/2.parquet"], ["d/z/1.parquet"]),
    ("a.b+c(1).csv", ["a.b+c(1).csv"], ["aXb+c(1).csv"]),
])
def test_glob(pattern: str, matches: list[str], misses: list[str]) -> None:
    regex = glob_regex(pattern)
    assert all(regex.match(m) for m in matches) and not any(regex.match(m) for m in misses)


def test_masking_keeps_keys_and_hides_secret_values() -> None:
    text = ('SELECT * FROM S3("uri" = "s3://b/k", "s3.secret_key" = "sk\\"1", \'AWS_SECRET_KEY\'=\'x y\', '
            '"s3.access_key" = "ak", "property.sasl.password" = "pw")')
    masked = mask_secrets(text)
    assert "sk" not in masked.replace("s3.secret_key", "") and "x y" not in masked and '"pw"' not in masked
    assert '"s3.access_key" = "ak"' in masked and '"uri" = "s3://b/k"' in masked
    assert mask_secrets("SELECT 'secret_key' = 'x'") == "SELECT 'secret_key' = '******'"  # errs on the safe side


def test_uris() -> None:
    assert split_uri("s3://bucket/a/b*.csv", "t") == ("bucket", "a/b*.csv")
    for bad, code in (("file:///etc/passwd", 1235), ("hdfs://nn/x", 1235), ("/etc/passwd", 1210),
                      ("s3://bucket", 1210), ("s3://bucket/", 1210)):
        with pytest.raises(SqlFailure) as caught:
            split_uri(bad, "t")
        assert caught.value.code == code, bad


def test_csv_with_several_character_separators_and_nulls() -> None:
    options = text_options({"column_separator": "||", "line_delimiter": "\\r\\n"})
    data = decode(b"1||a\r\n2||\\N\r\n", "csv", options, "x")
    assert data.to_pydict() == {"c1": ["1", "2"], "c2": ["a", None]}
    assert text_header(data.schema, "csv", options) + text_rows(data, options) == b"1||a\r\n2||\\N\r\n"
    named = decode(b"k,v\nint,string\n1,a\n", "csv_with_names_and_types", TextOptions(column_separator=","), "x")
    assert named.to_pydict() == {"k": ["1"], "v": ["a"]}


def test_json_lines_arrays_and_nested_values() -> None:
    lines = decode(b'{"a": 1, "b": {"c": [1]}}\n{"a": null}\n', "json", TextOptions(), "x")
    assert lines.to_pydict() == {"a": ["1", None], "b": ['{"c":[1]}', None]}
    array = decode(b'[{"a": "x"}]', "json", text_options({"strip_outer_array": "true"}), "x")
    assert array.to_pydict() == {"a": ["x"]}
    with pytest.raises(SqlFailure):
        decode(b"[1, 2]", "json", text_options({"strip_outer_array": "true"}), "x")


def test_csv_header_with_duplicate_names() -> None:
    twice = pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["k", "k"])
    options = TextOptions(column_separator=",")
    assert text_header(twice.schema, "csv_with_names", options) + text_rows(twice, options) == b"k,k\n1,2\n"


def test_link_local_endpoints_are_refused() -> None:
    from query.s3_location import check_endpoint

    for endpoint in ("http://169.254.169.254", "http://[fe80::1]:80", "https://metadata.google.internal"):
        with pytest.raises(SqlFailure) as caught:
            check_endpoint(endpoint, "S3()")
        assert caught.value.code == 1227, endpoint
    check_endpoint("http://127.0.0.1:9000", "S3()")
    check_endpoint("https://s3.eu-west-1.amazonaws.com", "S3()")


@pytest.mark.parametrize(("fmt", "data", "options"), [
    ("csv", b"1,a\n2,\\N\n3,c,extra\n4\n", TextOptions(column_separator=",")),
    ("csv", b"x||1|||2||\n||y||", TextOptions(column_separator="|", line_delimiter="||")),
    ("csv_with_names_and_types", b"skip\nk;v\nINT;STRING\n1;\"q\"\n2;b\n", TextOptions(column_separator=";",
                                                                                         skip_lines=1,
                                                                                         trim_double_quotes=True)),
    ("csv_with_names", b"k,v\n", TextOptions(column_separator=",")),
    ("json", b'{"a": 1}\n\n{"b": [1, 2], "a": null}\n{"c": "x"}\n', TextOptions()),
])
def test_pieces_decode_as_the_whole_file_does(fmt: str, data: bytes, options: TextOptions) -> None:
    """S3() reads text a piece at a time: whatever the piece size, the rows are the whole file's."""
    whole = decode(data, fmt, options, "x")
    for size in range(1, len(data) + 2):
        pieces = list(decode_pieces(io.BytesIO(data), fmt, options, "x", size))
        got = concatenated(pieces, "x") if pieces else pa.table({})
        assert got.to_pylist() == whole.to_pylist() and got.column_names == whole.column_names, size
