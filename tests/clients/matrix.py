"""What every client of the matrix does and must get back: the tables, the rows, the statements.

The Java and Node programs (tests/clients/java, tests/clients/node) write the same statements in their
own languages; the Python clients use these. Expected values are what MySQL gives each client.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

# Non-ASCII on purpose (two- and three-byte UTF-8); the quote and `?` in the prepared text must reach the
# table as text, not as a placeholder or the end of a literal.
CITY = "Zürich ☃"
PREPARED_TEXT = "Zürich ☃ ?'"
BIG = 9007199254740993  # 2**53 + 1: a client or server that goes through a double loses the last digit

ROWS: list[tuple[Any, ...]] = [
    (1, BIG, Decimal("12345.67"), date(2026, 12, 1), datetime(2026, 12, 1, 10, 0, 1),
     datetime(2026, 12, 1, 10, 0, 1, 123000), datetime(2026, 12, 1, 10, 0, 1, 123456), CITY, 2.5, 1),
    (2, None, None, None, None, None, None, None, None, None),
]
# What the prepared INSERT writes (row 3: every parameter type; row 4: every parameter NULL).
PREPARED_ROWS: list[tuple[Any, ...]] = [
    (3, -BIG, Decimal("-0.05"), date(1999, 12, 31), datetime(2026, 12, 1, 23, 59, 59),
     datetime(2026, 12, 1, 23, 59, 59, 999000), datetime(2026, 12, 1, 23, 59, 59, 999999), PREPARED_TEXT, -1.25, 0),
    (4, None, None, None, None, None, None, None, None, None),
]
COLUMNS = ["id", "big", "amount", "d", "dt0", "dt3", "dt6", "txt", "dbl", "flag"]
# MySQL's column type codes (include/field_types.h) for those columns: LONG, LONGLONG, NEWDECIMAL, DATE,
# DATETIME ×3, VAR_STRING, DOUBLE, TINY (BOOLEAN is TINYINT(1)).
TYPE_CODES = [3, 8, 246, 10, 12, 12, 12, 253, 5, 1]


@dataclass(frozen=True)
class Login:
    """Where and as whom a client connects."""

    host: str
    port: int
    user: str
    password: str
    database: str


@dataclass(frozen=True)
class Tables:
    """The two tables one client run creates: a Duplicate Key table with a column of every type, and a
    Unique Key table with time travel."""

    prefix: str

    @property
    def dup(self) -> str:
        return f"{self.prefix}_dup"

    @property
    def uniq(self) -> str:
        return f"{self.prefix}_uniq"

    def create_dup(self) -> str:
        return (f"CREATE TABLE {self.dup} (id INT, big BIGINT, amount DECIMAL(10,2), d DATE, dt0 DATETIME,"
                " dt3 DATETIME(3), dt6 DATETIME(6), txt VARCHAR(64), dbl DOUBLE, flag BOOLEAN)"
                " DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")

    def create_uniq(self) -> str:
        return (f"CREATE TABLE {self.uniq} (id INT, v VARCHAR(32)) UNIQUE KEY(id)"
                ' DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ("enable_time_travel" = "true")')

    def insert_rows(self) -> str:
        return (f"INSERT INTO {self.dup} VALUES (1, {BIG}, 12345.67, '2026-12-01', '2026-12-01 10:00:01',"
                f" '2026-12-01 10:00:01.123', '2026-12-01 10:00:01.123456', '{CITY}', 2.5, true),"
                " (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)")

    def select_rows(self) -> str:
        return f"SELECT * FROM {self.dup} WHERE id IN (1, 2) ORDER BY id"

    def select_empty(self) -> str:
        # BI tools describe a query by running it with a false predicate: the columns must be typed anyway.
        return f"SELECT * FROM {self.dup} WHERE 1 = 0"

    def prepared_insert(self) -> str:
        return (f"INSERT INTO {self.dup} (id, big, amount, d, dt0, dt3, dt6, txt, dbl, flag)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)")

    def prepared_select(self) -> str:
        return f"SELECT * FROM {self.dup} WHERE id >= %s AND (txt = %s OR txt IS NULL) ORDER BY id"

    def time_travel(self, instant: str) -> str:
        return f"SELECT id, v FROM {self.uniq} FOR TIME AS OF '{instant}'"


def prepared_params() -> list[tuple[Any, ...]]:
    """The parameters of the prepared INSERT: PREPARED_ROWS with BOOLEAN as a Python bool."""
    full = PREPARED_ROWS[0]
    return [(*full[:-1], False), PREPARED_ROWS[1]]


# The two errors every client must see with MySQL's code and SQLSTATE, and then go on using its connection.
UNKNOWN_TABLE = ("SELECT * FROM no_such_table", 1146, "42S02")
SYNTAX_ERROR = ("SELEC 1", 1064, "42000")
# Seconds between the first commit and the instant a time-travel check takes, so the instant is after that
# commit even when NOW(6) drops its fraction (that check is about the read; NOW(6) has a check of its own);
# and between the instant and the second commit, which any clock tick separates.
TIME_TRAVEL_GAP_S = 1.1
TIME_TRAVEL_GAP_AFTER_S = 0.05
