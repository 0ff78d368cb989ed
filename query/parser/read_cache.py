"""Parsed SELECTs kept by their text: a client sends the same query again and again (a dashboard's
refresh, a benchmark's loop, an ORM's lookups), and parsing it is the largest Python cost of a short
read on the server's event loop.

Only scripts made of queries whose text holds no secret are kept (a CREATE USER's password, an S3
table function's key stay out of memory); a query's parse depends on its text alone. Each hit is a
deep copy, so a handler that rewrites its statement in place never changes what the next reader of
the same text gets.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Callable

from query.parser.statements import Query, Statement
from query.secret_text import mask_secrets

# Texts longer than this are parsed each time (long texts are rarely repeated, and kept they would
# hold memory the cache is not sized for).
MAX_TEXT_CHARS = 4096
MAX_ENTRIES = 512


class ReadCache:
    """Least recently used first out, at most `MAX_ENTRIES` texts; safe across threads."""

    def __init__(self, parse: Callable[[str], list[Statement]], entries: int = MAX_ENTRIES) -> None:
        self._parse = parse
        self._entries = entries
        self._kept: OrderedDict[str, list[Statement]] = OrderedDict()
        self._lock = threading.Lock()

    def parse(self, sql: str) -> list[Statement]:
        if len(sql) > MAX_TEXT_CHARS:
            return self._parse(sql)
        with self._lock:
            kept = self._kept.get(sql)
            if kept is not None:
                self._kept.move_to_end(sql)
        if kept is not None:
            return copy.deepcopy(kept)
        statements = self._parse(sql)
        if statements and all(isinstance(s, Query) for s in statements) and mask_secrets(sql) == sql:
            with self._lock:
                self._kept[sql] = copy.deepcopy(statements)
                while len(self._kept) > self._entries:
                    self._kept.popitem(last=False)
        return statements
