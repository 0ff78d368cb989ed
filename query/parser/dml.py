"""Queries and DML: sqlglot builds the trees, this module checks and flattens them."""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from query.parser.cursor import Cursor
from query.parser.errors import UnsupportedStatement
from query.parser.statements import Delete, Insert, QualifiedName, Query, SelectIntoOutfile, TruncateTable, Update

# sqlglot argument names whose SQL spelling is not just the upper-cased name.
_CLAUSE_NAMES = {"conflict": "ON DUPLICATE KEY UPDATE", "returning": "RETURNING", "order": "ORDER BY"}
_LABEL_NAME_TYPES = frozenset({TokenType.IDENTIFIER, TokenType.VAR, TokenType.STRING})


def parse_query(c: Cursor) -> Query:
    """A complete SELECT / WITH / set operation from the cursor to the end of the statement."""
    start = c.peek()
    tree = c.sqlglot("statement", "a query")
    if not isinstance(tree, exp.Query):
        raise c.error("expected a query", start)
    c.expect_end()
    return Query(tree)


def parse_select_statement(c: Cursor) -> Query | SelectIntoOutfile:
    """A query statement: a query, or one ending in Doris' ``INTO OUTFILE …``."""
    from query.parser.loads import into_outfile, outfile_position  # loads builds on this module

    outfile = outfile_position(c)
    if outfile is None:
        return parse_query(c)
    query = Cursor(c.tokens[:outfile], c.sql)
    query.pos = c.pos
    tree = parse_query(query).expr
    c.pos = outfile
    return into_outfile(c, tree)


def partition_names(c: Cursor) -> tuple[str, ...]:
    """After PARTITION: ``p`` or ``(p1, p2)``."""
    if c.at_type(TokenType.L_PAREN):
        return c.name_list("a partition name")
    return (c.identifier("a partition name"),)


def _table_name(c: Cursor, node: exp.Expr, statement: str) -> QualifiedName:
    if not isinstance(node, exp.Table) or not node.name:
        raise c.error(f"{statement} expects a table name", c.tokens[0])
    if node.args.get("joins"):
        raise UnsupportedStatement(f"multi-table {statement} is not supported")
    if node.args.get("version"):
        raise c.error(f"AS OF is only allowed when reading tables, not in {statement}", c.tokens[0])
    if node.catalog:
        raise UnsupportedStatement("catalog-qualified table names are not supported")
    return QualifiedName(node.name, db=node.db or None)


def _reject_extras(tree: exp.Expr, allowed: set[str], statement: str) -> None:
    """sqlglot accepts many MySQL/other-dialect extensions that Doris (and Strata) do not have."""
    for key, value in tree.args.items():
        if value and key not in allowed:
            clause = _CLAUSE_NAMES.get(key, key.rstrip("_").replace("_", " ").upper())
            raise UnsupportedStatement(f"{statement} with {clause} is not supported")


def _split_label(tokens: list[Token]) -> tuple[str | None, list[Token]]:
    """Remove Doris' ``WITH LABEL l`` so sqlglot sees a plain INSERT.

    A CTE named ``label`` is never followed by another name (``WITH label AS``/``WITH label (``),
    so ``WITH LABEL <name>`` is unambiguous.
    """
    for i in range(2, len(tokens) - 2):
        first, second, name = tokens[i], tokens[i + 1], tokens[i + 2]
        if (
            first.token_type == TokenType.WITH
            and second.token_type != TokenType.IDENTIFIER
            and second.text.upper() == "LABEL"
            and name.token_type in _LABEL_NAME_TYPES
            and name.text.upper() != "AS"
        ):
            return name.text, tokens[:i] + tokens[i + 3 :]
    return None, tokens


def parse_insert(c: Cursor) -> Insert:
    """INSERT INTO, and INSERT OVERWRITE [TABLE] t [PARTITION (p, … | *)] (Doris)."""
    label, tokens = _split_label(c.tokens)
    inner = Cursor(tokens, c.sql)
    tree = inner.sqlglot("statement", "an INSERT statement")
    inner.expect_end()
    if not isinstance(tree, exp.Insert):
        raise inner.error("expected INSERT INTO", tokens[0])
    _reject_extras(tree, {"this", "expression", "overwrite"}, "INSERT")
    overwrite = bool(tree.args.get("overwrite"))
    target = tree.this
    columns: tuple[str, ...] | None = None
    if isinstance(target, exp.Schema):
        columns = tuple(col.name for col in target.expressions)
        target = target.this
    partitions: tuple[str, ...] = ()
    detect_partitions = False
    if isinstance(target, exp.Table) and isinstance(partition := target.args.get("partition"), exp.Partition):
        if any(isinstance(p, exp.Star) for p in partition.expressions):
            if not overwrite or len(partition.expressions) > 1:
                raise inner.error("PARTITION (*) stands alone, and only in INSERT OVERWRITE", tokens[0])
            detect_partitions = True
        else:
            partitions = tuple(p.name for p in partition.expressions)
        target.set("partition", None)
    table = _table_name(inner, target, "INSERT")
    if tree.expression is None:
        raise inner.error("expected VALUES or a query", None)
    return Insert(table, columns, label, tree.expression, partitions, overwrite, detect_partitions)


def parse_update(c: Cursor) -> Update:
    tree = c.sqlglot("statement", "an UPDATE statement")
    c.expect_end()
    if not isinstance(tree, exp.Update):
        raise c.error("expected UPDATE", c.tokens[0])
    _reject_extras(tree, {"this", "expressions", "where", "from_"}, "UPDATE")
    table = _table_name(c, tree.this, "UPDATE")
    sources = tree.args.get("from_")
    assignments: list[tuple[str, exp.Expr]] = []
    for item in tree.expressions:
        if not (isinstance(item, exp.EQ) and isinstance(item.this, exp.Column)):
            raise c.error("expected column = expression in SET", c.tokens[0])
        assignments.append((item.this.name, item.expression))
    where = tree.args.get("where")
    return Update(table, tuple(assignments), where.this if isinstance(where, exp.Where) else None,
                  sources if isinstance(sources, exp.From) else None, tree.this.alias or None)


def parse_delete(c: Cursor) -> Delete:
    """Everything after DELETE; parsed by hand because sqlglot drops Doris' PARTITION clause."""
    c.expect("FROM")
    table = c.qualified_name()
    partitions = partition_names(c) if c.accept_any(("PARTITION", "PARTITIONS")) else ()
    alias = c.identifier("an alias") if c.accept("AS") else None
    using = c.sqlglot("tables", "the tables after USING") if c.accept("USING") else None
    where = c.sqlglot("condition", "a condition") if c.accept("WHERE") else None
    c.expect_end()
    return Delete(table, partitions, where, using if isinstance(using, exp.From) else None, alias)


def parse_truncate(c: Cursor) -> TruncateTable:
    """Everything after TRUNCATE."""
    c.expect("TABLE")
    table = c.qualified_name()
    partitions = partition_names(c) if c.accept_any(("PARTITION", "PARTITIONS")) else ()
    c.expect_end()
    return TruncateTable(table, partitions)
