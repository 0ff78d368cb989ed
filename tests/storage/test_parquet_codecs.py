"""storage.parquet_codecs: Doris' compression names → the codec rowset files are written with."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from storage.parquet_codecs import DEFAULT_CODEC, DORIS_COMPRESSIONS, duckdb_codec, parquet_codec


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
def test_every_codec_is_written_alike_by_pyarrow_and_duckdb(tmp_path: Path, codec: str) -> None:
    """Both writers of rowset files take the name, and the files say the same codec."""
    by_arrow, by_duckdb = tmp_path / "a.parquet", tmp_path / "d.parquet"
    pq.write_table(pa.table({"x": list(range(1000))}), by_arrow, compression=codec)
    duckdb.sql(f"COPY (SELECT range AS x FROM range(1000)) TO '{by_duckdb}' "
               f"(FORMAT PARQUET, COMPRESSION {duckdb_codec(codec)})")
    kinds = {pq.ParquetFile(p).metadata.row_group(0).column(0).compression for p in (by_arrow, by_duckdb)}
    assert len(kinds) == 1, kinds
    assert kinds.pop() == {"none": "UNCOMPRESSED"}.get(codec, codec.upper())
