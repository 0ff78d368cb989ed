"""Rowset files as DuckDB SQL: read, project onto a schema, drop deleted rows, merge by keys model.

One builder serves both readers (a snapshot's visible rows, named as the user sees them) and
compaction (merged rows of a run of rowsets, keeping the hidden columns so the output can be merged
again later). Stages, each a subquery:

1. raw — per group of files (same column set; when rows need them, same partition and version) one
   Parquet scan, `__version` and `__partition` as constants (compacted files carry their own
   `__version`), `__seq` and `__delete_sign`; no file-name join, so DuckDB pushes filters into the
   scan and answers a count from the files' metadata. A version-keeping compaction output read at a
   version inside its range keeps only its rows up to that version (`RowsetFile.read_through`);
2. logical — in the same SELECT, each wanted column by unique id (`c<id>`): its value cast to the
   wanted type (no cast where the file has that type), or its DEFAULT in files that predate it;
3. visible — delete predicates: a row written below a delete's version that matches it is gone;
4. merged — Duplicate: all rows; Unique: per key the row with the highest sequence value (a NULL
   one lowest), then the newest (`__version`, `__seq`), unless it has a delete sign; Aggregate:
   each value folded by its function in version order. A merge-on-write Unique Key read instead
   drops the positions its delete bitmaps mark (`table_rows_sql(superseded=…)`, `_merged_on_write`:
   stage 1 then carries each row's `__file` and `__row`), with no window over the rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from schemas.model import DELETE_SIGN_COLUMN, VERSION_COLUMN, Column
from storage.set_values import SET_DUCK_TYPE, sorted_set_sql, union_sql

_DUCK_TYPES = {
    "BOOLEAN": "BOOLEAN", "TINYINT": "TINYINT", "SMALLINT": "SMALLINT", "INT": "INTEGER",
    "BIGINT": "BIGINT", "LARGEINT": "HUGEINT", "FLOAT": "FLOAT", "DOUBLE": "DOUBLE", "DATE": "DATE",
    "DATETIME": "TIMESTAMP", "CHAR": "VARCHAR", "VARCHAR": "VARCHAR", "STRING": "VARCHAR", "JSON": "VARCHAR",
    "TEXT": "VARCHAR", "DECIMALV3": "DECIMAL", "BITMAP": SET_DUCK_TYPE, "HLL": SET_DUCK_TYPE,
}
# Weight of __version against __seq when ordering rows of one key: versions < 1e9, seq < 1e9.
ORDER = "(CAST(__version AS BIGINT) * 1000000000 + __seq)"


def duck_type(doris_type: str) -> str:
    """DuckDB's type for a canonical Doris type string (`DECIMAL(10,2)`, `VARCHAR(20)`, `INT`)."""
    base, _, params = doris_type.partition("(")
    base = base.upper()
    if base in ("DECIMAL", "DECIMALV3"):
        precision, _, scale = params.rstrip(")").partition(",")
        return f"DECIMAL({min(int(precision or 9), 38)},{int(scale or 0)})"
    try:
        return _DUCK_TYPES[base]
    except KeyError:
        raise ValueError(f"type {doris_type} is not supported") from None


# Doris also reads dates and datetimes written without separators ('20221001', '20221001123456').
_COMPACT_FORMATS = {"DATE": "['%Y%m%d']", "TIMESTAMP": "['%Y%m%d%H%M%S', '%Y%m%d']"}


def converted_sql(value: str, doris_type: str) -> str:
    """`value` converted to a column's DuckDB type as Doris converts a loaded value (DATE and DATETIME
    also from the compact 'YYYYMMDD[HHMMSS]' spelling), NULL where it does not convert."""
    duck = duck_type(doris_type)
    cast = f"TRY_CAST({value} AS {duck})"
    if duck == SET_DUCK_TYPE:
        # A BITMAP/HLL takes set values (to_bitmap(…), hll_hash(…)), kept sorted and distinct so that
        # equal sets are equal values; a scalar does not convert (DuckDB refuses the cast, as Doris).
        return sorted_set_sql(cast)
    compact = _COMPACT_FORMATS.get(duck)
    if compact is None:
        return cast
    parsed = f"TRY_STRPTIME(CAST({value} AS VARCHAR), {compact})"
    return f"COALESCE({cast}, CAST({parsed} AS {duck}))"


def datetime_precision(doris_type: str) -> int | None:
    """The fraction digits a DATETIME(p) column keeps (DATETIME alone: 0, as in Doris and MySQL);
    None for any other type."""
    base, _, params = doris_type.partition("(")
    if base.strip().upper() not in ("DATETIME", "DATETIMEV2"):
        return None
    return int(params.rstrip(")") or 0)


def rounded_sql(value: str, doris_type: str) -> str:
    """`value` (a DuckDB TIMESTAMP, microseconds) rounded half up to the fraction digits of a
    DATETIME(p) column, as Doris and MySQL store it; unchanged for other types.

    Files keep microsecond TIMESTAMPs whatever p is (one physical type, so schema changes and
    compaction never mix units); the rounding happens once, where a row is written."""
    precision = datetime_precision(doris_type)
    if precision is None or precision >= 6:
        return value
    unit = 10 ** (6 - precision)
    # The fraction as microseconds in [0, 1e6) counted from the whole second below (date_trunc floors,
    # also before 1970), so integer arithmetic rounds half up without floating point.
    second = f"date_trunc('second', {value})"
    micros = f"(epoch_us({value}) - epoch_us({second}))"
    return f"({second} + to_microseconds(({micros} + {unit // 2}) // {unit} * {unit}))"


def read_type(doris_type: str) -> str:
    """The DuckDB type a reader sees for a column: its storage type, except DATETIME(p), which is read
    as the DuckDB timestamp that states its precision (TIMESTAMP_S for 0, TIMESTAMP_MS for 1 to 3) so
    that result metadata says DATETIME(0) or DATETIME(3), and a string literal compared with it is taken
    at that precision."""
    precision = datetime_precision(doris_type)
    if precision is None or precision > 3:
        return duck_type(doris_type)
    return "TIMESTAMP_S" if precision == 0 else "TIMESTAMP_MS"


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def default_sql(column: Column, *, now: str | None = None) -> str:
    """The column's DEFAULT as DuckDB SQL. `now` is the load's instant for DEFAULT CURRENT_TIMESTAMP;
    readers pass none, since rows written before such a column existed have no instant of their own."""
    if column.default is None or column.default.upper() == "NULL":
        return f"CAST(NULL AS {duck_type(column.type)})"
    if column.default.upper() == "CURRENT_TIMESTAMP":
        return rounded_sql(f"CAST({quote_literal(now) if now else 'NULL'} AS {duck_type(column.type)})", column.type)
    return rounded_sql(f"CAST({quote_literal(column.default)} AS {duck_type(column.type)})", column.type)


@dataclass(frozen=True)
class RowsetFile:
    """What reading a rowset needs: where it is, which rows it holds, which columns its file has."""

    location: str
    partition_id: int
    start_version: int
    end_version: int
    column_ids: frozenset[int]
    # Only the file's rows of versions up to this one are read (a version-keeping compaction output read
    # at a version inside its range: schemas.model.Rowset.read_through); None: every row.
    read_through: int | None = None

    @property
    def compacted(self) -> bool:
        """Whether the file carries each row's `__version` (a compaction's output)."""
        return self.start_version != self.end_version or self.read_through is not None


@dataclass(frozen=True)
class DeleteRule:
    """Rows of `partition_id` written below `version` matching `predicate` (over `c<id>`; None: all)."""

    partition_id: int
    version: int
    predicate: str | None


@dataclass(frozen=True)
class MergeSpec:
    keys_model: str
    columns: tuple[Column, ...]          # the wanted columns, in output order
    extra_columns: tuple[Column, ...] = ()  # needed only by delete predicates (dropped since)
    delete_sign: bool = False            # files carry __delete_sign (Unique Key tables)
    # Readers only (Doris' skip_storage_engine_merge / skip_delete_sign session variables): False reads
    # every row version unmerged, as a Duplicate Key table; False keeps rows marked with a delete sign.
    merge: bool = True
    hide_delete_signs: bool = True
    # Unique Key: the column whose value orders a key's rows before their load order (Doris'
    # sequence column); it may be left out of `columns` (hidden) and is read all the same.
    sequence: Column | None = None
    # Readers with show_hidden_columns: Unique Key rows with a delete sign are kept, and
    # __DORIS_DELETE_SIGN__ and __DORIS_VERSION_COL__ follow `columns`, as Doris shows them.
    show_hidden: bool = False

    def unique_order(self) -> str:
        """The ORDER BY choosing a Unique Key row: the one first in it wins."""
        by_sequence = f"{self.sequence.file_column} DESC NULLS LAST, " if self.sequence is not None else ""
        return f"{by_sequence}__version DESC, __seq DESC"


# Up to this many single-version rowsets of one column set and partition are read by a scan each with
# their version as a constant; more are read by one scan joined to a map of file → version (a UNION
# of hundreds of scans costs more to plan and run than the join).
_CONSTANT_VERSION_SCANS = 8


def _groups(files: Sequence[RowsetFile], versioned: bool, positions: bool) -> list[tuple[list[RowsetFile], bool]]:
    """Files read by one `read_parquet`, and whether the scan maps each file to its version (and
    index) by name.

    Same column set always; when rows need their version and partition, the same partition, and
    single-version rowsets a scan each (version a constant) unless there are many (one mapped scan).
    With `positions`, a scan of several files is mapped: a row's file is known by its name only."""
    if not versioned:
        by_columns: dict[tuple[frozenset[int], int | None], list[RowsetFile]] = {}
        for f in files:
            by_columns.setdefault((f.column_ids, f.read_through), []).append(f)
        return [(group, positions and len(group) > 1) for group in by_columns.values()]
    by_tablet: dict[tuple[frozenset[int], int, bool, int | None], list[RowsetFile]] = {}
    for f in files:
        by_tablet.setdefault((f.column_ids, f.partition_id, f.compacted, f.read_through), []).append(f)
    groups: list[tuple[list[RowsetFile], bool]] = []
    for (_, _, compacted, _), group in by_tablet.items():
        by_version: dict[int, list[RowsetFile]] = {}
        for f in group:
            by_version.setdefault(f.end_version, []).append(f)
        if compacted or len(by_version) == 1:
            groups.append((group, False))
        elif len(by_version) > _CONSTANT_VERSION_SCANS:
            groups.append((group, True))
        else:
            groups.extend((same, False) for same in by_version.values())
    return [(group, mapped or (positions and len(group) > 1)) for group, mapped in groups]


def _value(column: Column, column_ids: frozenset[int]) -> str:
    """A column of files holding `column_ids`: its value in the wanted type, or its DEFAULT when the
    files predate it. A cast to the type a file already has is no cast (DuckDB drops it), so filters
    on the column still reach the Parquet scan."""
    if column.unique_id not in column_ids:
        return default_sql(column)
    return f"CAST(r.{column.file_column} AS {duck_type(column.type)})"


@dataclass(frozen=True)
class _Scan:
    """One `read_parquet` of a group of files (`_groups`): its FROM, the columns its files share as SQL
    over `r` (and the file map `m`), and the condition on its rows (or "")."""

    first: RowsetFile
    source: str
    hidden: str
    condition: str


def _scans(files: Sequence[RowsetFile], delete_sign: bool, versioned: bool, positions: bool) -> list[_Scan]:
    """Stage 1: per group of files (`_groups`) one Parquet scan with constants for what the group
    shares — no file-name join (but for many versions of one tablet, or positions in several files), so
    DuckDB pushes filters into the scans and counts from the files' metadata. With `positions`, each row
    also carries `__file` (its file's index in `files`) and `__row` (its row number in that file): where a
    delete bitmap (storage.delete_bitmaps) points."""
    index = {id(f): i for i, f in enumerate(files)}
    scans = []
    for group, mapped in _groups(files, versioned, positions):
        first = group[0]
        paths = ", ".join(quote_literal(f.location) for f in group)
        numbered = ", file_row_number = true" if positions else ""
        # Files of one column set may still differ in a column's physical type (MODIFY COLUMN widens):
        # union_by_name reads each by name in a type that holds both.
        source = (f"read_parquet({quote_literal(first.location)}{numbered})" if len(group) == 1
                  else f"read_parquet([{paths}], union_by_name = true{', filename = true' if mapped else ''}"
                       f"{numbered})")
        sign = "r.__delete_sign" if delete_sign else "false"
        hidden = f"r.__seq AS __seq, {sign} AS __delete_sign"
        if versioned:
            version = "r.__version" if first.compacted else "m.v" if mapped else str(first.end_version)
            hidden += f", CAST({version} AS BIGINT) AS __version, {first.partition_id} AS __partition"
        if positions:
            hidden += f", {'m.i' if mapped else index[id(first)]} AS __file, r.file_row_number AS __row"
        source += " AS r"
        if mapped:
            mapping = ", ".join(f"({quote_literal(f.location)}, {f.end_version}, {index[id(f)]})" for f in group)
            source += f" JOIN (VALUES {mapping}) AS m(f, v, i) ON r.filename = m.f"
        through = f"r.__version <= {first.read_through}" if first.read_through is not None else ""
        scans.append(_Scan(first, source, hidden, through))
    return scans


def _raw(files: Sequence[RowsetFile], wanted: Sequence[Column], delete_sign: bool, versioned: bool,
         positions: bool) -> str:
    """Stages 1–2: the scans' rows (`_scans`), columns `c<id>` and the hidden ones; every scan yields
    the same columns in the same order."""
    selects = []
    for scan in _scans(files, delete_sign, versioned, positions):
        values = ", ".join(f"{_value(c, scan.first.column_ids)} AS {c.file_column}" for c in wanted)
        where = f" WHERE {scan.condition}" if scan.condition else ""
        selects.append(f"SELECT {values}, {scan.hidden} FROM {scan.source}{where}")
    return " UNION ALL ".join(selects)


def _read_directly(spec: MergeSpec, files: Sequence[RowsetFile], unsigned: bool) -> str:
    """`table_rows_sql` of a read that neither merges, nor applies deletes, nor needs versions: each
    scan selects the user's columns itself. The same rows as selecting them from `visible_rows_sql`,
    with two query levels fewer for DuckDB to bind and optimise (half a millisecond of a point lookup)."""
    selects = []
    for scan in _scans(files, spec.delete_sign, versioned=False, positions=False):
        named = ", ".join(_as_read(c, _value(c, scan.first.column_ids)) for c in spec.columns)
        conditions = [c for c in (scan.condition, "NOT r.__delete_sign" if unsigned else "") if c]
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        selects.append(f"SELECT {named} FROM {scan.source}{where}")
    return " UNION ALL ".join(selects)


def needs_versions(spec: MergeSpec, deletes: Sequence[DeleteRule]) -> bool:
    """Whether a read of `spec` needs each row's `__version` and `__partition`: to apply delete
    predicates, to merge by key, or to show __DORIS_VERSION_COL__."""
    return bool(deletes) or (spec.keys_model != "DUPLICATE" and spec.merge) or _shows_hidden(spec)


def visible_rows_sql(spec: MergeSpec, files: Sequence[RowsetFile], deletes: Sequence[DeleteRule], *,
                     versioned: bool = True, positions: bool = False) -> str | None:
    """Stages 1–3: every row not deleted, columns `c<id>` plus `__seq` and `__delete_sign` (when
    `versioned`, `__version` and `__partition`; with `positions`, `__file` and `__row`: see `_raw`).
    None if no files."""
    if not files:
        return None
    assert versioned or not deletes, "delete predicates need each row's version"
    extra = (*spec.extra_columns, *([spec.sequence] if spec.sequence is not None else []))
    wanted = (*spec.columns, *dict.fromkeys(c for c in extra if c not in spec.columns))
    raw = _raw(files, wanted, spec.delete_sign, versioned, positions)
    conditions = [f"(__partition = {d.partition_id} AND __version < {d.version} "
                  f"AND coalesce(({d.predicate or 'true'}), false))" for d in deletes]
    return f"SELECT * FROM ({raw})" + (f" WHERE NOT ({' OR '.join(conditions)})" if conditions else "")


def _fold(column: Column) -> str:
    name = column.file_column
    if column.aggregation == "SUM":
        # DuckDB widens a sum (BIGINT → HUGEINT, DECIMAL(8,2) → DECIMAL(38,2)); the column keeps its
        # declared type, as in Doris, so readers and the wire see the table's schema.
        return f"CAST(sum({name}) AS {duck_type(column.type)})"
    if column.aggregation in ("MIN", "MAX"):
        return f"{column.aggregation.lower()}({name})"
    if column.aggregation in ("BITMAP_UNION", "HLL_UNION"):
        return union_sql(name)  # a set union: the order of versions does not matter
    if column.aggregation == "REPLACE_IF_NOT_NULL":
        return f"arg_max({name}, {ORDER}) FILTER (WHERE {name} IS NOT NULL)"
    return f"arg_max_null({name}, {ORDER})"  # REPLACE: the newest value, even a NULL


def _as_read(column: Column, value: str) -> str:
    """`value` of `column` as readers see it (`read_type`), under the user's name for the column."""
    wanted = read_type(column.type)
    typed = value if wanted == duck_type(column.type) else f"CAST({value} AS {wanted})"
    return f"{typed} AS {quote_ident(column.name)}"


# Doris' types for the hidden columns every Unique Key table has (both NOT NULL DEFAULT 0).
_HIDDEN_TYPES = ((DELETE_SIGN_COLUMN, "TINYINT"), (VERSION_COLUMN, "BIGINT"))


def _shows_hidden(spec: MergeSpec) -> bool:
    return spec.show_hidden and spec.keys_model == "UNIQUE"


def _hidden_read(spec: MergeSpec) -> list[str]:
    """__DORIS_DELETE_SIGN__ and __DORIS_VERSION_COL__ of each row, when the spec shows them."""
    if not _shows_hidden(spec):
        return []
    values = {DELETE_SIGN_COLUMN: "__delete_sign", VERSION_COLUMN: "__version"}
    return [f"CAST({values[name]} AS {duck}) AS {quote_ident(name)}" for name, duck in _HIDDEN_TYPES]


def table_rows_sql(spec: MergeSpec, files: Sequence[RowsetFile], deletes: Sequence[DeleteRule], *,
                   superseded: str | None = None) -> str:
    """The visible rows of a table, merged, with the user's column names and read types.

    `superseded` (Unique Key, merge-on-write): SQL of the (`__file`, `__row`) positions in `files`
    that newer rows replaced (storage.delete_bitmaps); the merge is then that anti-join, no window."""
    named = [_as_read(c, c.file_column) for c in spec.columns]
    if superseded is not None and files and spec.keys_model == "UNIQUE" and spec.merge:
        return _merged_on_write(spec, files, deletes, superseded, named)
    unmerged = spec.keys_model == "DUPLICATE" or not spec.merge
    unsigned = spec.delete_sign and spec.hide_delete_signs and not spec.show_hidden
    if files and unmerged and not deletes and not _shows_hidden(spec):
        return _read_directly(spec, files, unsigned)
    visible = visible_rows_sql(spec, files, deletes, versioned=needs_versions(spec, deletes))
    if visible is None:
        empty = [_as_read(c, default_sql(c)) for c in spec.columns]
        hidden = [f"CAST(0 AS {t}) AS {quote_ident(n)}" for n, t in _HIDDEN_TYPES] if _shows_hidden(spec) else []
        return "SELECT " + ", ".join(empty + hidden) + " WHERE false"
    keys = ", ".join(c.file_column for c in spec.columns if c.is_key)
    if unmerged:
        return f"SELECT {', '.join(named + _hidden_read(spec))} FROM ({visible})" + \
            (" WHERE NOT __delete_sign" if unsigned else "")
    if spec.keys_model == "UNIQUE":
        keep = "" if spec.show_hidden or not spec.hide_delete_signs else " AND NOT __delete_sign"
        return (f"SELECT {', '.join(named + _hidden_read(spec))} FROM (SELECT *, row_number() OVER "
                f"(PARTITION BY {keys} ORDER BY {spec.unique_order()}) AS __rn FROM ({visible})) "
                f"WHERE __rn = 1{keep}")
    folded = [_as_read(c, c.file_column if c.is_key else _fold(c)) for c in spec.columns]
    return f"SELECT {', '.join(folded)} FROM ({visible}) GROUP BY {keys}"


def _merged_on_write(spec: MergeSpec, files: Sequence[RowsetFile], deletes: Sequence[DeleteRule], superseded: str,
                     named: list[str]) -> str:
    """Stage 4 of a merge-on-write Unique Key read: each key's rows but its winner were marked when the
    winner (or a row outranking a late one) was written, so the winners are the rows not marked."""
    visible = visible_rows_sql(spec, files, deletes, positions=True)
    keep = "" if spec.show_hidden or not spec.hide_delete_signs else " WHERE NOT __delete_sign"
    return (f"SELECT {', '.join(named + _hidden_read(spec))} FROM ({visible}) AS __v "
            f"ANTI JOIN ({superseded}) AS __s ON __v.__file = __s.__file AND __v.__row = __s.__row{keep}")


def compacted_rows_sql(spec: MergeSpec, files: Sequence[RowsetFile], deletes: Sequence[DeleteRule], *,
                       base: bool, keep_versions: bool = False) -> str:
    """Merged rows of a run of rowsets, keeping `c<id>`, `__version`, `__seq` (and `__delete_sign`),
    so that merging the output again with newer rowsets gives what merging the inputs would.

    Delete signs are kept by a cumulative compaction — older rows they hide may live in rowsets
    below it — and dropped by a base compaction, which starts at version 1; except on a table with a
    sequence column, where a deleted key's row still outranks later loads of a lower sequence value.

    `keep_versions` (a time-travel table's version-keeping compaction): every input row as it is, with
    its own `__version`, unmerged, no delete applied (pass none) — the output's rows up to any version V
    of its range are then exactly the inputs' rows up to V, and reads merge and delete as of V."""
    assert not (keep_versions and deletes), "a version-keeping compaction applies no delete"
    visible = visible_rows_sql(spec, files, deletes)
    assert visible is not None, "a compaction needs inputs"
    cols = [c.file_column for c in spec.columns]
    hidden = ["__version", "__seq"] + (["__delete_sign"] if spec.delete_sign else [])
    keys = ", ".join(c.file_column for c in spec.columns if c.is_key)
    if spec.keys_model == "DUPLICATE" or keep_versions:
        return f"SELECT {', '.join(cols + hidden)} FROM ({visible})"
    if spec.keys_model == "UNIQUE":
        keep = " AND NOT __delete_sign" if base and spec.sequence is None else ""
        return (f"SELECT {', '.join(cols + hidden)} FROM (SELECT *, row_number() OVER (PARTITION BY {keys} "
                f"ORDER BY {spec.unique_order()}) AS __rn FROM ({visible})) WHERE __rn = 1{keep}")
    folded = [c.file_column if c.is_key else f"{_fold(c)} AS {c.file_column}" for c in spec.columns]
    # The merged row stands where its newest input row stood, so later REPLACEs still order after it.
    return (f"SELECT {', '.join(folded)}, max(__version) AS __version, arg_max(__seq, {ORDER}) AS __seq "
            f"FROM ({visible}) GROUP BY {keys}")
