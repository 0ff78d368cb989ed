"""CREATE / ALTER / DROP VIEW and SHOW CREATE VIEW. A view is its query as text, with its table names
qualified as Doris stores them (`internal`.`db`.`t`), and the columns that query gave it when it was
defined; reading one expands the text (query.reads)."""

from __future__ import annotations

from sqlglot import exp

from projections.state import ViewState
from query.context import Context, Done, Rows, SessionState, SqlFailure
from query.create_as import doris_type_or_none
from query.identifiers import quoted
from query.information_schema import CATALOG
from query.parser import statements as st
from query.parser import table_refs
from query.reads import bind_tables, result_labels, unique_labels, view_body
from schemas import commands as cmd
from schemas.errors import ErrorCode
from schemas.model import ViewColumn

# SHOW CREATE VIEW's last two columns, as Doris answers them.
CHARACTER_SET_CLIENT = "utf8mb4"
COLLATION_CONNECTION = "utf8mb4_0900_bin"


def qualified_text(s: st.CreateView | st.AlterView, db: str) -> str:
    """The query as written, each table name replaced by `internal`.`db`.`t`: the view reads the same
    tables whatever database its reader is in (CTE names are no tables and stay)."""
    text = s.text
    spans: list[tuple[int, int, str]] = []
    for ref in table_refs(s.query.expr):
        parts = [p for p in (ref.node.args.get("catalog"), ref.node.args.get("db"), ref.node.this)
                 if isinstance(p, exp.Identifier)]
        starts = [p.meta["start"] for p in parts if isinstance(p.meta.get("start"), int)]
        ends = [p.meta["end"] for p in parts if isinstance(p.meta.get("end"), int)]
        if len(starts) != len(parts) or len(ends) != len(parts):
            raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"cannot locate table '{ref.name}' in the view's text")
        name = f"{quoted(CATALOG)}.{quoted(ref.db or db)}.{quoted(ref.name)}"
        spans.append((min(starts) - s.text_start, max(ends) - s.text_start + 1, name))
    for start, end, name in sorted(spans, reverse=True):
        text = text[:start] + name + text[end:]
    return text


# Result types that lose what a table column declares (a VARCHAR's length, a DATETIME's precision), and
# the declared types a column passed through unchanged may then show instead.
_NARROWED = {"STRING": ("VARCHAR", "CHAR", "STRING"), "DATETIME": ("DATETIME",)}


def _base(doris_type: str) -> str:
    return doris_type.split("(")[0].strip().upper()


def _declared_types(ctx: Context, body: exp.Expr) -> dict[str, str]:
    """The declared Doris types of the columns a single-table SELECT passes through as they are
    (lower-cased label → type), so DESC and information_schema show `varchar(20)` where the table
    says so; any other query shows its result types."""
    source = body.args.get("from_")
    refs = table_refs(body)
    if not isinstance(body, exp.Select) or body.args.get("joins") or not isinstance(source, exp.From) \
            or len(refs) != 1 or refs[0].node is not source.this or refs[0].as_of or refs[0].incr \
            or refs[0].history:
        return {}
    ref = refs[0]
    db = ctx.projection.database_by_name(ref.db or "")
    table = ctx.projection.table_by_name(db.db_id, ref.name) if db is not None else None
    view = ctx.projection.view_by_name(db.db_id, ref.name) if db is not None else None
    declared = ({c.name.lower(): c.type for c in table.schema_now.columns} if table is not None else
                {c.name.lower(): c.type for c in view.columns} if view is not None else {})
    qualifiers = {"", ref.name.lower(), (ref.node.alias or "").lower()}
    found: dict[str, str | None] = {}
    for item in body.selects:
        column = item.this if isinstance(item, exp.Alias) else item
        if isinstance(column, exp.Star) or (isinstance(column, exp.Column) and isinstance(column.this, exp.Star)):
            star = column if isinstance(column, exp.Star) else column.this
            if not star.args.get("replace"):  # `* REPLACE (…)` computes some of them
                found.update(declared)
        elif isinstance(column, exp.Column) and column.table.lower() in qualifiers and not column.args.get("db"):
            found[(item.alias if isinstance(item, exp.Alias) else column.name).lower()] = declared.get(
                column.name.lower())
    return {label: doris_type for label, doris_type in found.items() if doris_type}


def _column_type(duck_type: str, declared: str | None) -> str:
    derived = doris_type_or_none(duck_type) or duck_type
    if declared is not None and _base(declared) in _NARROWED.get(_base(derived), ()):
        return declared
    return derived


def _columns(ctx: Context, session: SessionState, s: st.CreateView | st.AlterView, definition: str,
             key: tuple[int, str]) -> tuple[ViewColumn, ...]:
    """The view's columns: what its query gives, named by the column list if there is one. Binding the
    query also proves it reads what exists, and that it does not read the view itself."""
    cur = ctx.cursor()
    try:
        body = view_body(definition)
        described = result_labels(cur, body, bind_tables(ctx, session, body, cur, (key,)))
    finally:
        cur.close()
    if s.columns and len(s.columns) != len(described):
        raise SqlFailure(ErrorCode.VIEW_WRONG_LIST, "View's SELECT and view's field list have different column "
                                                    "counts")
    labels = [label for label, _ in described]
    names = [c.name for c in s.columns] if s.columns else labels
    comments = [c.comment for c in s.columns] if s.columns else [""] * len(labels)
    seen: set[str] = set()
    for name in names:
        if name.lower() in seen:
            raise SqlFailure(ErrorCode.DUP_FIELDNAME, f"Duplicate column name '{name}'")
        seen.add(name.lower())
    declared = _declared_types(ctx, body)
    for label in labels:  # a label that names two columns says nothing about either's declaration
        if sum(other.lower() == label.lower() for other in labels) > 1:
            declared.pop(label.lower(), None)
    return tuple(ViewColumn(name=name, type=_column_type(duck_type, declared.get(label.lower())), comment=comment,
                            source=source)
                 for name, (label, duck_type), comment, source in zip(names, described, comments,
                                                                      unique_labels(labels), strict=True))


def _definition(ctx: Context, session: SessionState, s: st.CreateView | st.AlterView
                ) -> tuple[str, str, tuple[ViewColumn, ...]]:
    """(database name, qualified text, columns) of a view being defined."""
    ctx.catch_up()
    db_id, db = ctx.database_id(session, s.view.db)
    definition = qualified_text(s, db)
    return db, definition, _columns(ctx, session, s, definition, (db_id, s.view.name.lower()))


def create_view(ctx: Context, session: SessionState, s: st.CreateView) -> Done:
    db_id, _ = ctx.database_id(session, s.view.db)
    if s.if_not_exists and (ctx.projection.view_by_name(db_id, s.view.name) is not None
                            or ctx.projection.table_by_name(db_id, s.view.name) is not None):
        return Done()
    db, definition, columns = _definition(ctx, session, s)
    ctx.propose(cmd.CreateView(db=db, name=s.view.name, definition=definition, columns=columns,
                               comment=s.comment or "", or_replace=s.or_replace))
    return Done()


def alter_view(ctx: Context, session: SessionState, s: st.AlterView) -> Done:
    db, definition, columns = _definition(ctx, session, s)
    ctx.propose(cmd.AlterView(db=db, name=s.view.name, definition=definition, columns=columns))
    return Done()


def drop_view(ctx: Context, session: SessionState, s: st.DropView) -> Done:
    db_id, db = ctx.database_id(session, s.view.db)
    if ctx.projection.view_by_name(db_id, s.view.name) is None:
        if ctx.projection.table_by_name(db_id, s.view.name) is not None:
            raise SqlFailure(ErrorCode.WRONG_OBJECT,
                             f"'{db}.{s.view.name}' is not VIEW. Use 'DROP TABLE {db}.{s.view.name}'.")
        if s.if_exists:
            return Done()
        raise SqlFailure(ErrorCode.NO_SUCH_TABLE, f"Table '{db}.{s.view.name}' doesn't exist")
    ctx.propose(cmd.DropView(db=db, name=s.view.name))
    return Done()


def _string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def create_view_text(view: ViewState) -> str:
    """CREATE VIEW as Doris prints it: the name, the column list where the view renames or comments
    its query's columns, the comment, the qualified query text."""
    text = f"CREATE VIEW {quoted(view.name)}"
    if any(c.name != c.source or c.comment for c in view.columns):
        text += " (" + ", ".join(quoted(c.name) + (f" COMMENT {_string(c.comment)}" if c.comment else "")
                                 for c in view.columns) + ")"
    if view.comment:
        text += f" COMMENT {_string(view.comment)}"
    return f"{text} AS {view.definition};"


def show_create_view(ctx: Context, session: SessionState, s: st.ShowCreateView) -> Rows:
    view = ctx.view(session, s.view)
    if view is None:
        db_id, db = ctx.database_id(session, s.view.db)
        if ctx.projection.table_by_name(db_id, s.view.name) is not None:
            raise SqlFailure(ErrorCode.WRONG_OBJECT, f"'{db}.{s.view.name}' is not VIEW")
        raise SqlFailure(ErrorCode.NO_SUCH_TABLE, f"Table '{db}.{s.view.name}' doesn't exist")
    return Rows(["View", "Create View", "character_set_client", "collation_connection"],
                [(view.name, create_view_text(view), CHARACTER_SET_CLIENT, COLLATION_CONNECTION)])
