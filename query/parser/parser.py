"""Statement dispatch: the first keyword(s) pick a hand-written rule or a sqlglot-backed one."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from query.parser import ddl, dml, loads, misc, users, views
from query.parser.cursor import Cursor
from query.parser.errors import UnsupportedStatement
from query.parser.lexing import split_statements, syntax_error, tokenize
from query.parser.literal_insert import parse_literal_insert
from query.parser.read_cache import ReadCache
from query.parser.statements import Insert, Passthrough, QualifiedName, Statement

Rule = Callable[[Cursor], Statement]

# Recognised Doris/MySQL statements Strata does not implement: a clear refusal beats "syntax error".
_UNSUPPORTED: tuple[tuple[str, ...], ...] = tuple(
    tuple(phrase.split())
    for phrase in (
        "CREATE MATERIALIZED VIEW",
        "CREATE INDEX",
        "CREATE ROLE",
        "CREATE FUNCTION",
        "CREATE GLOBAL FUNCTION",
        "CREATE CATALOG",
        "CREATE EXTERNAL TABLE",
        "CREATE TEMPORARY TABLE",
        "CREATE EXTERNAL RESOURCE",
        "CREATE REPOSITORY",
        "CREATE WORKLOAD GROUP",
        "CREATE ROW POLICY",
        "CREATE JOB",
        "CREATE ENCRYPTKEY",
        "CREATE FILE",
        "CREATE SQL BLOCK RULE",
        "DROP MATERIALIZED VIEW",
        "DROP INDEX",
        "DROP ROLE",
        "DROP FUNCTION",
        "DROP CATALOG",
        "DROP REPOSITORY",
        "ALTER MATERIALIZED VIEW",
        "ALTER DATABASE",
        "ALTER SYSTEM",
        "ALTER CATALOG",
        "ALTER ROUTINE LOAD",
        "LOAD DATA",
        "BACKUP",
        "INSTALL",
        "UNINSTALL",
        "REPLACE",
        "MERGE",
        "CALL",
        "ANALYZE",
        "REFRESH",
        "SYNC",
        "SWITCH",
        "LOCK TABLES",
        "UNLOCK TABLES",
        "CLEAN",
        "SHOW CATALOGS",
        "SHOW CREATE ROUTINE LOAD",
        "SHOW BACKUP",
        "SHOW SNAPSHOT",
        "SHOW USERS",
        "SHOW ROLES",
        "SHOW FUNCTIONS",
    )
)

# Why, where a refusal meets a tool that sends the statement on its own.
_UNSUPPORTED_WHY: dict[tuple[str, ...], str] = {
    # Doris' quick start adds its backend by hand; Strata's workers join by themselves.
    ("ALTER", "SYSTEM"): "Strata's workers are its backends and join the cluster when started (one worker process "
                         "per STRATA_WORKER_INSTANCE); SHOW BACKENDS lists them",
    ("CREATE", "INDEX"): "Strata tables have no secondary indexes (pandas.DataFrame.to_sql indexes its index "
                         "column: pass index=False)",
}

# Transaction chatter from MySQL drivers; the server decides what (if anything) to do.
_PASSTHROUGH = frozenset({"BEGIN", "START", "COMMIT", "ROLLBACK"})


def _sub_rules(rules: dict[tuple[str, ...], Rule], what: str) -> Rule:
    """A rule that picks one of ``rules`` by the keywords following the statement's first word."""

    def rule(c: Cursor) -> Statement:
        for words, sub_rule in rules.items():
            if c.accept(*words):
                return sub_rule(c)
        raise c.error(f"expected {what}")

    return rule


def _from_start(rule: Rule) -> Rule:
    """For rules that hand the whole statement to sqlglot, which wants to see the first keyword too."""

    def from_start(c: Cursor) -> Statement:
        c.pos = 0
        return rule(c)

    return from_start


_RULES: dict[str, Rule] = {
    "SELECT": _from_start(dml.parse_select_statement),
    "WITH": _from_start(dml.parse_select_statement),
    "INSERT": _from_start(dml.parse_insert),
    "UPDATE": _from_start(dml.parse_update),
    "DELETE": dml.parse_delete,
    "TRUNCATE": dml.parse_truncate,
    "CREATE": _sub_rules(
        {
            ("DATABASE",): misc.create_database,
            ("SCHEMA",): misc.create_database,
            ("TABLE",): ddl.create_table,
            ("VIEW",): views.create_view,
            ("OR", "REPLACE", "VIEW"): lambda c: views.create_view(c, or_replace=True),
            ("RESOURCE",): misc.create_resource,
            ("STORAGE", "POLICY"): misc.create_storage_policy,
            ("ROUTINE", "LOAD"): misc.create_routine_load,
            ("USER",): users.create_user,
        },
        "DATABASE, TABLE, VIEW, RESOURCE, STORAGE POLICY, ROUTINE LOAD or USER after CREATE",
    ),
    "DROP": _sub_rules(
        {
            ("DATABASE",): misc.drop_database,
            ("SCHEMA",): misc.drop_database,
            ("TABLE",): misc.drop_table,
            ("VIEW",): views.drop_view,
            ("RESOURCE",): misc.drop_resource,
            ("STORAGE", "POLICY"): misc.drop_storage_policy,
            ("USER",): users.drop_user,
        },
        "DATABASE, TABLE, VIEW, RESOURCE, STORAGE POLICY or USER after DROP",
    ),
    "ALTER": _sub_rules(
        {
            ("TABLE",): ddl.alter_table,
            ("VIEW",): views.alter_view,
            ("RESOURCE",): misc.alter_resource,
            ("STORAGE", "POLICY"): misc.alter_storage_policy,
            ("USER",): users.alter_user,
        },
        "TABLE, VIEW, RESOURCE, STORAGE POLICY or USER after ALTER",
    ),
    "SHOW": misc.show,
    "USE": misc.use,
    "DESC": misc.describe,
    "DESCRIBE": misc.describe,
    "RECOVER": misc.recover,
    "RESTORE": misc.restore,
    "ADMIN": misc.admin,
    "PAUSE": misc.routine_load_control,
    "RESUME": misc.routine_load_control,
    "STOP": misc.routine_load_control,
    "SET": misc.set_statement,
    "KILL": misc.kill,
    "EXPLAIN": misc.explain,
    "EXPORT": loads.export_table,
    "LOAD": _sub_rules({("LABEL",): loads.load_label}, "LABEL after LOAD"),
    "CANCEL": loads.cancel,
    "GRANT": lambda c: users.grant(c, revoke=False),
    "REVOKE": lambda c: users.grant(c, revoke=True),
}


def _parse_tokens(tokens: list[Token], sql: str) -> Statement:
    c = Cursor(tokens, sql)
    for phrase in _UNSUPPORTED:
        if c.at(*phrase):
            why = _UNSUPPORTED_WHY.get(phrase)
            raise UnsupportedStatement(f"{' '.join(phrase)} is not supported" + (f": {why}" if why else ""))
    if c.at_type(TokenType.L_PAREN):
        return dml.parse_select_statement(c)
    word = c.word()
    if word in _PASSTHROUGH:
        return Passthrough(word or "", misc.source_text(c))
    rule = _RULES.get(word or "")
    if rule is None:
        raise c.error("unknown statement")
    c.advance()
    return rule(c)


def _literal_insert(sql: str) -> Statement | None:
    """A bulk `INSERT … VALUES` of literals, scanned without the tokenizer (query.parser.literal_insert)."""
    found = parse_literal_insert(sql)
    if found is None:
        return None
    return Insert(QualifiedName(found.table, found.db), found.columns, None, exp.Values(expressions=[]),
                  literal_rows=found.rows)


def parse_statement(sql: str) -> Statement:
    """Parse exactly one statement; a trailing semicolon is allowed."""
    if (fast := _literal_insert(sql)) is not None:
        return fast
    chunks = list(split_statements(tokenize(sql)))
    if not chunks:
        raise syntax_error(sql, None, "empty statement")
    if len(chunks) > 1:
        raise syntax_error(sql, chunks[1][0], "only one statement expected; use parse_script for several")
    return _parse_tokens(chunks[0], sql)


def _parse_script(sql: str) -> list[Statement]:
    if (fast := _literal_insert(sql)) is not None:
        return [fast]
    return [_parse_tokens(tokens, sql) for tokens in split_statements(tokenize(sql))]


_reads = ReadCache(_parse_script)


def parse_script(sql: str) -> list[Statement]:
    """Parse ``;``-separated statements; error positions refer to the whole script. A script of
    queries parsed before is a copy of that parse (query.parser.read_cache)."""
    return _reads.parse(sql)
