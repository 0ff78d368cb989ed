"""What Strata reports about its storage wherever MySQL clients ask (SHOW ENGINES / CHARSET /
COLLATION / TABLE STATUS / COLUMNS, information_schema): one engine, one character set and its one
collation, as Doris 2.x reports them."""

from __future__ import annotations

# Doris stores text as utf8mb4 and compares it byte-wise.
CHARSET = "utf8mb4"
CHARSET_DESCRIPTION = "UTF-8 Unicode"
COLLATION = "utf8mb4_0900_bin"
COLLATION_ID = 309
CHARSET_MAXLEN = 4
# information_schema.TABLES' ENGINE of every table, and SHOW ENGINES' only row.
ENGINE = "Doris"
ENGINE_COMMENT = "Strata's Doris-compatible OLAP storage (event-sourced Parquet rowsets)"
