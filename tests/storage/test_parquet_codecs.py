"""storage.parquet_codecs: Doris' compression names → the codec rowset files are written with."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from storage.parquet_codecs import DEFAULT_CODEC, DORIS_COMPRESSIONS, parquet_codec


def test_doris_default_lz4f_is_lz4() -> None:
    assert parquet_codec(None) == DEFAULT_CODEC == "lz4"
    assert parquet_codec("LZ4F") == parquet_codec("lz4hc") == "lz4"


@pytest.mark.parametrize(("doris", "codec"), [("ZSTD", "zstd"), ("snappy", "snappy"), ("ZLIB", "gzip"),
                                              ("NO_COMPRESSION", "none")])
def test_names_in_any_case(doris: str, codec: str) -> None:
    assert parquet_codec(doris) == parquet_codec(doris.lower()) == codec


def test_an_unknown_name_that_got_past_create_table_writes_the_default() -> None:
    assert parquet_codec("brotli-9") == DEFAULT_CODEC


@pytest.mark.parametrize("codec", sorted(set(DORIS_COMPRESSIONS.values())))
def test_every_codec_is_written_and_named_in_the_file(tmp_path: Path, codec: str) -> None:
    """pyarrow writes every rowset file (storage.rowset_writer): it takes each name, and the file says the
    codec; DuckDB reads it back."""
    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"x": list(range(1000))}), path, compression=codec)
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == \
        {"none": "UNCOMPRESSED"}.get(codec, codec.upper())
    assert duckdb.sql(f"SELECT sum(x) FROM read_parquet('{path}')").fetchall() == [(499500,)]
