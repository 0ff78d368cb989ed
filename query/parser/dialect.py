"""sqlglot's Doris dialect, extended with Doris time travel and made to fail loudly.

Two changes matter to callers:

* every table reference accepts ``FOR TIME | SYSTEM_TIME | TIMESTAMP AS OF '<ts>'`` and
  ``FOR VERSION AS OF <int>``, before or after its alias, normalised to ``exp.Version`` with
  ``this`` = ``TIMESTAMP`` or ``VERSION``;
* ``FOR SYSTEM_TIME ALL | BETWEEN '<a>' AND '<b>' | FROM '<a>' TO '<b>'`` (MariaDB's system-versioned
  reads: every version of every row) is kept as ``exp.Version`` with ``this`` = ``HISTORY``, ``kind``
  the word after SYSTEM_TIME and a tuple of the two instants (none for ALL);
* a table name may carry Doris' incremental read ``t@incr('key'='value', …)`` (before its alias),
  kept as ``exp.Version`` with ``this`` = ``INCR`` and a tuple of ``'key' = 'value'`` pairs;
* a table reference's partition selection is any of Doris' spellings: ``PARTITION (p1, p2)``,
  ``PARTITION p1`` and ``PARTITIONS (p1, p2)``, all kept as ``exp.Partition`` (``TEMPORARY PARTITION``
  is refused: Strata has no temporary partitions);
* errors are raised at the first problem with the offending token attached (``LocatedParseError``)
  and sqlglot never degrades a statement to an opaque ``exp.Command``;
* every function call remembers the name it was written with (``meta[NAME_KEY]``), and the calls
  query.functions rewrites itself are read as plain calls with their arguments as written;
* ``GROUP_CONCAT([DISTINCT] x [, sep] [ORDER BY …] [SEPARATOR sep])`` is one ``exp.GroupConcat``;
* every SELECT item without an alias keeps the text the user wrote for it in
  ``meta[SOURCE_TEXT]``: MySQL and Doris label such a column with that text (``count(*)``,
  ``length(x)``), which the DuckDB SQL generated from the tree no longer is.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Literal, NoReturn

from sqlglot import exp
from sqlglot.dialects.doris import Doris
from sqlglot.errors import ParseError
from sqlglot.generators.doris import DorisGenerator
from sqlglot.parsers.doris import DorisParser
from sqlglot.tokens import Token, TokenType

from query.parser.errors import UnsupportedStatement

# Words that may follow FOR to introduce a point-in-time read; SYSTEM TIME is the two-word spelling.
TIME_TRAVEL_TIME_WORDS = frozenset({"TIME", "SYSTEM_TIME", "TIMESTAMP"})
VERSION_KIND = "VERSION"
TIME_KIND = "TIMESTAMP"
TAG_KIND = "TAG"
INCR_KIND = "INCR"
HISTORY_KIND = "HISTORY"
# The arg of an exp.Version holding a partition selection written after it, until the table takes it.
_LATE_PARTITION = "late_partition"
# The meta key of a SELECT item's source text (see the module docstring).
SOURCE_TEXT = "source_text"
# The meta key of a function call's name as written, lower case (query.functions maps it).
NAME_KEY = "doris_name"
# Nodes that wrap the call they qualify (`f(x) OVER (…)`, `f(x) FILTER (…)`).
_CALL_WRAPPERS = (exp.Window, exp.Filter, exp.IgnoreNulls, exp.RespectNulls, exp.WithinGroup)

# "tables": a FROM clause's table list with its joins, without the FROM word (DELETE … USING).
Production = Literal["statement", "condition", "tables"]


class LocatedParseError(ParseError):
    """A sqlglot failure that remembers its token; ``token is None`` means end of input."""

    def __init__(self, description: str, token: Token | None) -> None:
        super().__init__(description)
        self.description = description
        self.token = token


class StrataParser(DorisParser):
    FUNCTION_PARSERS = {**DorisParser.FUNCTION_PARSERS,
                        "GROUP_CONCAT": lambda self: self._parse_group_concat()}

    def _parse_function_call(
        self,
        functions: dict[str, Any] | None = None,
        anonymous: bool = False,
        optional_parens: bool = True,
        any_token: bool = False,
    ) -> exp.Expr | None:
        from query.functions import positional_names  # here: query.functions imports this module

        token = self._curr
        name = token.text if token is not None else None
        # A quoted name (`length`(x)) names the same function as the bare one.
        plain = anonymous or (token is not None and token.text.upper() in positional_names()
                              and self._next is not None and self._next.token_type == TokenType.L_PAREN)
        result = super()._parse_function_call(functions=functions, anonymous=plain, optional_parens=optional_parens,
                                              any_token=any_token)
        call = result
        while isinstance(call, _CALL_WRAPPERS):
            call = call.this
        if name is not None and isinstance(call, exp.Func) and NAME_KEY not in call.meta:
            call.meta[NAME_KEY] = name.lower()
        return result

    def _parse_group_concat(self) -> exp.GroupConcat:
        distinct = self._match(TokenType.DISTINCT)
        value = self._parse_disjunction()
        if distinct:
            value = self.expression(exp.Distinct(expressions=[value]))
        separator = self._parse_disjunction() if self._match(TokenType.COMMA) else None
        value = self._parse_order(this=value)
        if self._match_text_seq("SEPARATOR"):
            separator = self._parse_disjunction()
        return self.expression(exp.GroupConcat(this=value, separator=separator))

    def raise_error(self, message: str, token: Token | None = None) -> NoReturn:
        # Raising even under ErrorLevel.RAISE keeps the first (most useful) error and its position;
        # _try_parse still backtracks because this is a ParseError.
        located = token or self._curr or None
        raise LocatedParseError(message, located)

    def _parse_as_command(self, start: Token) -> exp.Command:
        self.raise_error("unsupported syntax", start)

    def _parse_command(self) -> exp.Command:
        self.raise_error("unsupported syntax", self._prev)

    def _parse_projections(self) -> tuple[list[exp.Expr], list[exp.Expr] | None]:
        return self._parse_csv(self._parse_projection), None

    def _parse_projection(self) -> exp.Expr | None:
        first = self._curr
        item = self._parse_expression()
        last = self._prev
        if item is not None and first is not None and last is not None and not isinstance(item, exp.Alias):
            item.meta[SOURCE_TEXT] = self.sql[first.start:last.end + 1]
        return item

    def _at_incr(self) -> bool:
        return (self._curr is not None and self._curr.token_type == TokenType.PARAMETER and self._curr.text == "@"
                and self._next is not None and self._next.text.lower() == "incr")

    def _parse_incr(self) -> exp.Version:
        """``@incr('k'='v', …)``; the pairs are only collected here, their meaning is checked later."""
        self._advance(2)
        if not self._match(TokenType.L_PAREN):
            self.raise_error("expected ( after @incr")
        pairs: list[exp.Expr] = []
        while not self._match(TokenType.R_PAREN):
            if pairs and not self._match(TokenType.COMMA):
                self.raise_error("expected , or ) in @incr(...)")
            if not self._match(TokenType.STRING):
                self.raise_error("@incr expects 'key' = 'value' pairs")
            key = exp.Literal.string(self._prev.text)
            if not self._match(TokenType.EQ):
                self.raise_error("expected = after the @incr key")
            if not self._match_set((TokenType.STRING, TokenType.NUMBER)):
                self.raise_error("@incr expects a quoted value")
            value = exp.Literal.string(self._prev.text)
            pairs.append(exp.EQ(this=key, expression=value))
        return self.expression(exp.Version(this=INCR_KIND, kind=INCR_KIND, expression=exp.Tuple(expressions=pairs)))

    def _parse_table_parts(
        self, schema: bool = False, is_db_reference: bool = False, wildcard: bool = False, fast: bool = False
    ) -> exp.Table | exp.Dot | None:
        index = self._index
        parts = super()._parse_table_parts(schema=schema, is_db_reference=is_db_reference, wildcard=wildcard, fast=fast)
        if fast and parts is not None and self._at_incr():
            # The fast path would read `@incr` as an alias; the full path parses it as a clause.
            self._retreat(index)
            return None
        if isinstance(parts, exp.Table) and not schema and not is_db_reference and self._curr is not None:
            # sqlglot would read `PARTITIONS` (a plain word to it) as the table's alias, and `TEMPORARY`
            # likewise: both are partition selections in Doris, so they are taken here first.
            if self._curr.text.upper() == "PARTITIONS" and self._next is not None \
                    and self._next.token_type == TokenType.L_PAREN:
                parts.set("partition", self._parse_partition_selection())
            elif self._curr.text.upper() == "TEMPORARY" and self._next is not None \
                    and self._next.text.upper() in ("PARTITION", "PARTITIONS"):
                raise UnsupportedStatement("TEMPORARY PARTITION is not supported: Strata has no temporary partitions")
        return parts

    def _parse_partition_selection(self) -> exp.Partition | None:
        """`PARTITION (p1, …)`, `PARTITION p1` or `PARTITIONS (p1, …)` (a plain word to sqlglot)."""
        if self._curr is not None and self._curr.text.upper() == "PARTITIONS":
            self._advance()
            return self.expression(exp.Partition(
                subpartition=False, expressions=self._parse_wrapped_csv(self._parse_partition_name)))
        return self._parse_partition()

    def _parse_partition(self) -> exp.Partition | None:
        if not self._match_texts(self.PARTITION_KEYWORDS):
            return None
        subpartition = self._prev.text.upper() == "SUBPARTITION"
        # Doris also names one partition without parentheses: `FROM t PARTITION p1`.
        names = (self._parse_wrapped_csv(self._parse_partition_name) if self._curr is not None
                 and self._curr.token_type == TokenType.L_PAREN else [self._parse_partition_name()])
        return self.expression(exp.Partition(subpartition=subpartition, expressions=names))

    def _parse_partition_name(self) -> exp.Expr:
        # `INSERT OVERWRITE t PARTITION (*)`: the partitions the new rows fall in (query.parser.dml).
        if self._match(TokenType.STAR):
            return exp.Star()
        name = self._parse_id_var(any_token=False)
        if name is None:
            self.raise_error("expected a partition name")
        return name

    def _parse_version(self) -> exp.Version | None:
        if self._at_incr():
            return self._parse_incr()
        version = self._parse_time_travel()
        # Doris selects partitions after the clause too (`t FOR TIME AS OF '…' PARTITION (p1)`), where
        # sqlglot, which looks for them before it, would read an alias `PARTITION` with a column list:
        # a silent read of every partition. The selection rides on the clause until `_parse_table`
        # moves it to the table.
        if version is not None and self._curr is not None and self._curr.text.upper() in ("PARTITION", "PARTITIONS") \
                and self._next is not None and self._next.token_type in (TokenType.L_PAREN, TokenType.VAR,
                                                                          TokenType.IDENTIFIER):
            version.set(_LATE_PARTITION, self._parse_partition_selection())
        return version

    def _parse_time_travel(self) -> exp.Version | None:
        index = self._index
        if not self._match(TokenType.FOR):
            return None
        system_time = self._match_text_seq("SYSTEM", "TIME") or self._match_text_seq("SYSTEM_TIME")
        if system_time and self._curr is not None and self._curr.text.upper() in ("ALL", "BETWEEN", "FROM"):
            return self._parse_history()
        if system_time or self._match_texts(TIME_TRAVEL_TIME_WORDS):
            kind = TIME_KIND
        elif self._match_text_seq(VERSION_KIND):
            kind = VERSION_KIND
        elif self._match_text_seq(TAG_KIND):
            kind = TAG_KIND
        else:
            # Not time travel (e.g. FOR UPDATE); let the caller interpret FOR.
            self._retreat(index)
            return None
        if not self._match_text_seq("AS", "OF"):
            self.raise_error("expected AS OF")

        literal: exp.Expr
        if kind == TIME_KIND:
            literal = self._parse_instant("AS OF")
        elif kind == TAG_KIND:
            if not self._match(TokenType.STRING):
                self.raise_error("FOR TAG AS OF expects a quoted tag name")
            literal = exp.Literal.string(self._prev.text)
        else:
            if not (self._curr.token_type == TokenType.NUMBER and self._curr.text.isdigit()):
                self.raise_error("VERSION AS OF expects an integer version")
            self._advance()
            literal = exp.Literal.number(int(self._prev.text))
        return self.expression(exp.Version(this=kind, kind="AS OF", expression=literal))

    def _parse_instant(self, clause: str) -> exp.Literal:
        """A quoted timestamp; ``TIMESTAMP '...'`` is the SQL:2011 spelling."""
        if self._curr is not None and self._curr.token_type in (TokenType.TIMESTAMP, TokenType.TIMESTAMPTZ) and (
            self._next is not None and self._next.token_type == TokenType.STRING
        ):
            self._advance()
        if not self._match(TokenType.STRING):
            self.raise_error(f"{clause} expects a quoted timestamp literal")
        return exp.Literal.string(self._prev.text)

    def _parse_history(self) -> exp.Version:
        """What follows ``FOR SYSTEM_TIME`` when it is not AS OF: ALL, BETWEEN a AND b, FROM a TO b."""
        word = self._curr.text.upper()
        self._advance()
        if word == "ALL":
            return self.expression(exp.Version(this=HISTORY_KIND, kind="ALL", expression=None))
        start = self._parse_instant(f"FOR SYSTEM_TIME {word}")
        joiner = "AND" if word == "BETWEEN" else "TO"
        if not self._match_text_seq(joiner):
            self.raise_error(f"expected {joiner} after FOR SYSTEM_TIME {word} '<instant>'")
        end = self._parse_instant(f"FOR SYSTEM_TIME {word} … {joiner}")
        return self.expression(exp.Version(this=HISTORY_KIND, kind=word,
                                           expression=exp.Tuple(expressions=[start, end])))

    def _parse_table(
        self,
        schema: bool = False,
        joins: bool = False,
        alias_tokens: Collection[TokenType] | None = None,
        parse_bracket: bool = False,
        is_db_reference: bool = False,
        parse_partition: bool = False,
        consume_pipe: bool = False,
    ) -> exp.Expr | None:
        table = super()._parse_table(
            schema=schema,
            joins=joins,
            alias_tokens=alias_tokens,
            parse_bracket=parse_bracket,
            is_db_reference=is_db_reference,
            parse_partition=parse_partition,
            consume_pipe=consume_pipe,
        )
        version_clause = table.args.get("version") if isinstance(table, exp.Table) else None
        late = version_clause.args.pop(_LATE_PARTITION, None) if isinstance(version_clause, exp.Version) else None
        if table is not None and late is not None:
            if table.args.get("partition"):
                self.raise_error("a table reference selects partitions once")
            table.set("partition", late)
        # sqlglot only looks for the clause before the alias (Doris' order); also accept it after.
        if isinstance(table, exp.Table) and not schema and not table.args.get("version"):
            version = self._parse_time_travel()
            if version:
                table.set("version", version)
        elif (isinstance(table, exp.Table) and isinstance(table.args.get("version"), exp.Version)
              and table.args["version"].name == INCR_KIND and self._curr is not None
              and self._curr.token_type == TokenType.FOR):
            self.raise_error("an @incr read cannot also have FOR ... AS OF (the range names its own end)")
        return table

    def parse_fragment(
        self, tokens: list[Token], sql: str, start: int, production: Production
    ) -> tuple[exp.Expr | None, int]:
        """Run one production from ``tokens[start]``; return the tree and the index it stopped at.

        This lets the hand-written parser delegate embedded expressions and queries to sqlglot
        without knowing in advance where they end.
        """
        self.reset()
        self.sql = sql
        self._tokens = tokens
        self._tokens_size = len(tokens)
        self._index = start - 1
        self._advance()
        tree: exp.Expr | None
        if production == "statement":
            tree = self._parse_statement()
        elif production == "tables":
            tree = self._parse_from(joins=True, skip_from_token=True)
        else:
            tree = self._parse_disjunction()
        return tree, self._index


class StrataGenerator(DorisGenerator):
    def version_sql(self, expression: exp.Version) -> str:
        if expression.name == HISTORY_KIND:
            kind = expression.text("kind")
            bounds = expression.expression.expressions if isinstance(expression.expression, exp.Tuple) else []
            if not bounds:
                return f"FOR SYSTEM_TIME {kind}"
            joiner = "AND" if kind == "BETWEEN" else "TO"
            return f"FOR SYSTEM_TIME {kind} {self.sql(bounds[0])} {joiner} {self.sql(bounds[1])}"
        if expression.name != INCR_KIND:
            return super().version_sql(expression)
        pairs = expression.expression.expressions if isinstance(expression.expression, exp.Tuple) else []
        inner = ", ".join(f"{self.sql(p, 'this')}={self.sql(p, 'expression')}" for p in pairs)
        return f"@incr({inner})"


class StrataTokenizer(Doris.Tokenizer):
    # Doris' own type names, so CAST(x AS LARGEINT) and friends parse; DDL reads types itself (parser.ddl).
    KEYWORDS = {
        **Doris.Tokenizer.KEYWORDS,
        "LARGEINT": TokenType.INT128,
        "DATETIMEV2": TokenType.DATETIME,
        "DATEV2": TokenType.DATE,
        "DECIMALV2": TokenType.DECIMAL,
        "DECIMALV3": TokenType.DECIMAL,
    }


class StrataDoris(Doris):
    Tokenizer = StrataTokenizer
    Parser = StrataParser
    Generator = StrataGenerator


# Dialect objects are stateless configuration; parsers and tokenizers are created per call.
DIALECT = StrataDoris()
