"""How a Stream Load's plain CSV body becomes records (query.stream_load.readers): lines cut by Arrow a
chunk at a time, whatever the chunk boundaries, with skip_lines, \\r\\n, empty lines and batches."""

from __future__ import annotations

import io

import pytest

from query.stream_load import readers
from query.stream_load.request import StreamLoadRequest


def _lines(body: bytes, chunk: int, monkeypatch: pytest.MonkeyPatch, max_bytes: int | None = None,
           **options: object) -> list[list[bytes]]:
    monkeypatch.setattr(readers, "_CHUNK", chunk)
    request = StreamLoadRequest(label="l", **options)  # type: ignore[arg-type]
    sources = readers._csv_by_lines(request, io.BytesIO(body), max_bytes)
    batches = []
    for source in sources:
        records = source.records
        assert records.column("__o").to_pylist() == list(range(records.num_rows))
        assert set(records.column("__p").to_pylist()) <= {0}
        batches.append(records.column("__v").to_pylist())
    return batches


BODY = b"1\ta\r\n22\tbb\n\n333\tccc\r\n4444\tdddd"


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 7, 64])
def test_lines_are_the_same_at_any_chunk_size(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _lines(BODY, chunk, monkeypatch) == [[b"1\ta", b"22\tbb", b"333\tccc", b"4444\tdddd"]]
    assert _lines(BODY + b"\n", chunk, monkeypatch) == [[b"1\ta", b"22\tbb", b"333\tccc", b"4444\tdddd"]]


@pytest.mark.parametrize("chunk", [1, 4, 64])
def test_skip_lines_and_a_line_delimiter_of_several_bytes(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _lines(BODY, chunk, monkeypatch, skip_lines=2) == [[b"333\tccc", b"4444\tdddd"]]
    body = b"a,b||c,d\r||||e,f||"
    # Only a "\n" delimiter drops a "\r" before it; empty records are dropped.
    assert _lines(body, chunk, monkeypatch, line_delimiter="||", column_separator=",") == \
        [[b"a,b", b"c,d\r", b"e,f"]]


def test_batches_of_about_max_bytes_and_an_empty_body(monkeypatch: pytest.MonkeyPatch) -> None:
    body = b"".join(b"%d\tx\n" % i for i in range(100))
    batches = _lines(body, 16, monkeypatch, max_bytes=64)
    assert len(batches) > 2 and sum(batches, []) == [b"%d\tx" % i for i in range(100)]
    assert _lines(b"", 16, monkeypatch) == [[]]


def test_trim_double_quotes(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _lines(b'"a"\t"b"\n"c"\td\n', 4, monkeypatch, trim_double_quotes=True) == [[b"a\tb", b"c\td"]]


def test_parquet_times_become_the_text_a_csv_holds() -> None:
    import datetime as dt

    import pyarrow as pa

    moments = [dt.datetime(2024, 1, 1, 10, 0, 0), dt.datetime(1900, 2, 28, 23, 59, 59, 123456), None]
    assert readers._as_text(pa.array(moments, pa.timestamp("s"))).to_pylist() == \
        ["2024-01-01 10:00:00", "1900-02-28 23:59:59", None]
    assert readers._as_text(pa.array(moments, pa.timestamp("us", tz="UTC"))).to_pylist() == \
        ["2024-01-01 10:00:00.000000", "1900-02-28 23:59:59.123456", None]
    assert readers._as_text(pa.array([True, False, None])).to_pylist() == ["1", "0", None]
