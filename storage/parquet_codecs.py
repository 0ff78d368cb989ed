"""A table's "compression" property (Doris' names) as the Parquet codec of its rowset files.

Doris 2.1's default is LZ4F. LZ4 decompresses several times faster than ZSTD, a cost every scan and
point lookup pays again on each read, for files about 2.5 times larger; ZSTD (or SNAPPY, ZLIB, none)
is there for the tables that ask for it. Each Parquet file names its own codec, so readers need
nothing from here, and files of several codecs mix freely in one table.
"""

from __future__ import annotations

# Doris' names (any case) → pyarrow's codec names.
DORIS_COMPRESSIONS = {"lz4f": "lz4", "lz4": "lz4", "lz4hc": "lz4", "zstd": "zstd", "snappy": "snappy",
                      "zlib": "gzip", "no_compression": "none"}
DEFAULT_COMPRESSION = "lz4f"
DEFAULT_CODEC = DORIS_COMPRESSIONS[DEFAULT_COMPRESSION]


def parquet_codec(compression: str | None) -> str:
    """The codec (pyarrow's name) of a table whose "compression" property is `compression` (None:
    Doris' default). CREATE TABLE refuses names not in DORIS_COMPRESSIONS; one that got past it
    anyway is written with the default rather than failing every load."""
    return DORIS_COMPRESSIONS.get((compression or DEFAULT_COMPRESSION).lower(), DEFAULT_CODEC)

