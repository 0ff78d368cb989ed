"""Text-protocol result rows (Protocol::ResultsetRow) encoded an Arrow record batch at a time.

The row-at-a-time writer (`WireStream.write_text_rows`) calls a Python encoder per value; for a big
result that is most of the server's time, spent on the event loop. Here each column is turned into
its text form once per batch with pyarrow.compute (a cast to string is MySQL's text for integers,
dates, DECIMALs and strings), its length-encoded prefixes are built with numpy, and the columns are
joined row by row into framed packets by one Arrow kernel: no Python object per value, and the GIL
is released for most of it, so this runs on a worker thread while the loop serves other clients.

The bytes are exactly the row-at-a-time writer's (tests/wire/test_text_batches.py compares them):
where Arrow's text differs from MySQL's (a FLOAT's shortest single-precision text, a DOUBLE's
exponent form, a small DECIMAL's exponent form, times, nested values, TIMESTAMP WITH TIME ZONE in
the session's zone) the value or column falls back to its own per-value encoder (`WireColumn.text`)
over the batch's Python values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from mysql_mimic.types import ColumnType, uint_len

from query.wire import values as v
from query.wire.columns import WireColumn

_MAX_FRAME = 0xFFFFFF
_NULL = 0xFB
_INTEGER_TYPES = (ColumnType.TINY, ColumnType.SHORT, ColumnType.LONG, ColumnType.LONGLONG)
_TEXT_TYPES = (ColumnType.VAR_STRING, ColumnType.STRING, ColumnType.JSON, ColumnType.BLOB)
_TIMESTAMP_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}
_NO_SEPARATOR = pa.scalar(b"", pa.large_binary())
_POINT_ZERO = pa.scalar(".0", pa.large_string())
_NO_TEXT = pa.scalar("", pa.large_string())


class RecordBatches(Protocol):
    """A result's rows as Arrow record batches, read as the client takes them. `next_batch` blocks
    (the executor may still be producing rows) and is called on a worker thread; a failure is
    raised as an exception with `code` and `message`. `close` releases the executor's resources,
    whether or not every batch was read (it may wait for a `next_batch` in progress)."""

    def next_batch(self) -> pa.RecordBatch | None: ...

    def read_whole(self) -> list[pa.RecordBatch] | None:
        """Every batch not yet taken, when the result was read to its end before it reached the wire
        and holds few rows (a point lookup's): the wire then encodes them as they are, with no hop to
        a worker thread; else None (read them with `next_batch`)."""

    def interrupt(self) -> None:
        """Thread-safe: stops a `next_batch` running on another thread."""

    def close(self) -> None: ...


@dataclass(frozen=True)
class EncodedRows:
    """Framed row packets ready for the socket, and the sequence id the next packet takes."""

    data: bytes
    rows: int
    next_seq: int


def _as_binary(array: pa.Array) -> pa.Array:
    return pc.cast(pc.cast(array, pa.large_string()), pa.large_binary())


def _per_value(array: pa.Array, column: WireColumn) -> pa.Array:
    encode = column.text
    return pa.array([None if value is None else encode(value) for value in array.to_pylist()], pa.large_binary())


def text_values(array: pa.Array, column: WireColumn) -> pa.Array:
    """The column's values as the text protocol sends them (large_binary, NULL where NULL)."""
    kind = array.type
    if pa.types.is_null(kind) or array.null_count == len(array):
        return pa.nulls(len(array), pa.large_binary())
    if pa.types.is_integer(kind) and column.type in _INTEGER_TYPES:
        return _as_binary(array)
    if pa.types.is_boolean(kind) and column.type == ColumnType.TINY:
        return _as_binary(pc.cast(array, pa.int8()))  # MySQL's TINYINT(1): 1/0, not true/false
    if pa.types.is_decimal(kind) and column.type == ColumnType.NEWDECIMAL and column.text is v.text_decimal:
        text = _as_binary(array)
        # Arrow writes a small value of a wide scale in exponent form (1E-10); MySQL never does.
        if not pc.any(pc.match_substring(pc.cast(text, pa.large_string()), "E")).as_py():
            return text
    elif (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind)
          or pa.types.is_large_binary(kind)) and column.type in _TEXT_TYPES:
        return pc.cast(array, pa.large_binary())
    elif pa.types.is_float64(kind) and column.type == ColumnType.DOUBLE and column.text is v.text_double:
        return _double_text(array, column)
    elif pa.types.is_date32(kind) and column.type == ColumnType.DATE:
        return _as_binary(array)
    elif pa.types.is_timestamp(kind) and kind.tz is None and column.type == ColumnType.DATETIME \
            and _TIMESTAMP_DIGITS[kind.unit] >= column.decimals:
        # Arrow writes every fraction digit of the unit; the column shows its scale's, truncated.
        width = 19 + (column.decimals + 1 if column.decimals else 0)
        return _as_binary(pc.utf8_slice_codeunits(pc.cast(array, pa.large_string()), 0, width))
    return _per_value(array, column)


def _double_text(array: pa.Array, column: WireColumn) -> pa.Array:
    """Python's repr of each double, as `text_double` gives. Both Arrow and Python write the shortest
    digits that read back as the same double; they differ in the notation: Python writes 1e-4 <= |x|
    < 1e16 (and 0) in fixed notation with at least one decimal (`3.0`), Arrow without one (`3`) and
    in exponent form for some of those (`1.23456789012345e+14`). Arrow's text is kept where it is
    fixed in that range; other values (rare in practice) are encoded one by one."""
    text = pc.cast(array, pa.large_string())
    magnitude = pc.abs(array)
    fixed = pc.and_(pc.or_(pc.equal(magnitude, 0.0), pc.and_(pc.greater_equal(magnitude, 1e-4),
                                                              pc.less(magnitude, 1e16))),
                    pc.invert(pc.match_substring(text, "e")))
    fixed = pc.fill_null(fixed, True)  # NULL stays NULL either way
    text = pc.if_else(pc.match_substring(text, "."), text, pc.binary_join_element_wise(text, _POINT_ZERO, _NO_TEXT))
    text = pc.cast(text, pa.large_binary())
    others = pc.invert(fixed)
    if not pc.any(others).as_py():
        return text
    rest = pc.filter(array, others)
    return pc.replace_with_mask(text, others, _per_value(rest, column))


def _offsets(array: pa.Array) -> np.ndarray:
    return np.frombuffer(array.buffers()[1], dtype=np.int64, count=len(array) + 1, offset=array.offset * 8)


def _from_sizes(sizes: np.ndarray, data: np.ndarray) -> pa.Array:
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    return pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(sizes),
                                            [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _prefixes(text: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """Each value's length-encoded-integer prefix (0xFB for NULL), and each cell's whole size."""
    n = len(text)
    lengths = np.diff(_offsets(text))
    valid = text.is_valid().to_numpy(zero_copy_only=False)
    lengths = np.where(valid, lengths, 0)
    head = np.where(lengths < 251, lengths, np.where(lengths < 1 << 16, 0xFC, np.where(lengths < 1 << 24, 0xFD, 0xFE)))
    size = np.where(lengths < 251, 1, np.where(lengths < 1 << 16, 3, np.where(lengths < 1 << 24, 4, 9)))
    head = np.where(valid, head, _NULL)
    size = np.where(valid, size, 1)
    table = np.empty((n, 9), dtype=np.uint8)
    table[:, 0] = head
    table[:, 1:] = lengths.astype("<u8").view(np.uint8).reshape(n, 8)
    prefix = _from_sizes(size, table[np.arange(9) < size[:, None]])
    return prefix, size + lengths


def _frame_split(payload: bytes, seq: int) -> tuple[bytes, int]:
    """One packet of 16 MB or more: in frames of 0xFFFFFF bytes, then a shorter (maybe empty) one."""
    out = bytearray()
    while True:
        chunk, payload = payload[:_MAX_FRAME], payload[_MAX_FRAME:]
        out += (len(chunk) | (seq << 24)).to_bytes(4, "little") + chunk
        seq = (seq + 1) % 256
        if len(chunk) < _MAX_FRAME:
            return bytes(out), seq


# At most this many rows, a batch is encoded value by value in Python: the vectorised path costs about
# 50 µs a column whatever the row count (some twenty Arrow and numpy calls, each releasing and taking
# the GIL, which another busy thread may hold for its whole switch interval), a point lookup's four
# rows 0.4 ms against 0.03 ms one value at a time.
FEW_ROWS = 32


def _is_plain(kind: pa.DataType) -> bool:
    """Arrow types whose Python values (`to_pylist`) are the ones DuckDB's own fetch gives, so a
    column's per-value encoder writes the same text from either."""
    return (pa.types.is_integer(kind) or pa.types.is_boolean(kind) or pa.types.is_decimal(kind)
            or pa.types.is_floating(kind) or pa.types.is_date32(kind) or pa.types.is_string(kind)
            or pa.types.is_large_string(kind) or pa.types.is_binary(kind) or pa.types.is_large_binary(kind)
            or (pa.types.is_timestamp(kind) and kind.tz is None and kind.unit != "ns"))


def _cells(array: pa.Array, column: WireColumn) -> list[bytes | None]:
    if _is_plain(array.type):
        encode = column.text
        return [None if value is None else encode(value) for value in array.to_pylist()]
    return text_values(array, column).to_pylist()


def _encode_few_rows(batch: pa.RecordBatch, columns: Sequence[WireColumn], seq: int) -> EncodedRows:
    """`encode_text_rows` for a batch of at most FEW_ROWS rows, in plain Python."""
    cells = [_cells(array, column) for array, column in zip(batch.columns, columns, strict=True)]
    out = bytearray()
    for row in zip(*cells, strict=True):
        payload = bytearray()
        for cell in row:
            if cell is None:
                payload.append(_NULL)
            else:
                payload += uint_len(len(cell))
                payload += cell
        if len(payload) >= _MAX_FRAME:
            data, seq = _frame_split(bytes(payload), seq)
            out += data
        else:
            out += (len(payload) | (seq << 24)).to_bytes(4, "little")
            out += payload
            seq = (seq + 1) % 256
    return EncodedRows(bytes(out), batch.num_rows, seq)


def encode_text_rows(batch: pa.RecordBatch, columns: Sequence[WireColumn], seq: int) -> EncodedRows:
    """The batch's rows as framed text-protocol packets, the first with sequence id `seq`."""
    n = batch.num_rows
    if 0 < n <= FEW_ROWS:
        return _encode_few_rows(batch, columns, seq)
    parts: list[pa.Array] = []
    payload = np.zeros(n, dtype=np.int64)
    for array, column in zip(batch.columns, columns, strict=True):
        text = text_values(array, column)
        prefix, cell = _prefixes(text)
        parts += [prefix, text]
        payload += cell
    if n == 0:
        return EncodedRows(b"", 0, seq)
    if payload.max() >= _MAX_FRAME:
        rows = pc.binary_join_element_wise(*parts, _NO_SEPARATOR, null_handling="replace", null_replacement=b"")
        framed = bytearray()
        for row in rows.to_pylist():
            data, seq = _frame_split(row, seq)
            framed += data
        return EncodedRows(bytes(framed), n, seq)
    sequence = (seq + np.arange(n, dtype=np.int64)) % 256
    headers = (payload | (sequence << 24)).astype("<u4").view(np.uint8)
    header = _from_sizes(np.full(n, 4, dtype=np.int64), headers)
    rows = pc.binary_join_element_wise(header, *parts, _NO_SEPARATOR, null_handling="replace", null_replacement=b"")
    offsets = _offsets(rows)
    data = memoryview(rows.buffers()[2])[offsets[0]:offsets[-1]].tobytes()
    return EncodedRows(data, n, int((seq + n) % 256))
