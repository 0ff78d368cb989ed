"""sqlglot's Doris dialect, extended with Doris time travel and made to fail loudly.

Two changes matter to callers:

* every table reference accepts ``FOR TIME | SYSTEM_TIME | TIMESTAMP AS OF '<ts>'`` and
  ``FOR VERSION AS OF <int>``, before or after its alias, normalised to ``exp.Version`` with
  ``this`` = ``TIMESTAMP`` or ``VERSION``;
* errors are raised at the first problem with the offending token attached (``LocatedParseError``)
  and sqlglot never degrades a statement to an opaque ``exp.Command``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal, NoReturn

from sqlglot import exp
from sqlglot.dialects.doris import Doris
from sqlglot.errors import ParseError
from sqlglot.parsers.doris import DorisParser
from sqlglot.tokens import Token, TokenType

# Words that may follow FOR to introduce a point-in-time read; SYSTEM TIME is the two-word spelling.
TIME_TRAVEL_TIME_WORDS = frozenset({"TIME", "SYSTEM_TIME", "TIMESTAMP"})
VERSION_KIND = "VERSION"
TIME_KIND = "TIMESTAMP"

Production = Literal["statement", "condition"]


class LocatedParseError(ParseError):
    """A sqlglot failure that remembers its token; ``token is None`` means end of input."""

    def __init__(self, description: str, token: Token | None) -> None:
        super().__init__(description)
        self.description = description
        self.token = token


class StrataParser(DorisParser):
    def raise_error(self, message: str, token: Token | None = None) -> NoReturn:
        # Raising even under ErrorLevel.RAISE keeps the first (most useful) error and its position;
        # _try_parse still backtracks because this is a ParseError.
        located = token or self._curr or None
        raise LocatedParseError(message, located)

    def _parse_as_command(self, start: Token) -> exp.Command:
        self.raise_error("unsupported syntax", start)

    def _parse_command(self) -> exp.Command:
        self.raise_error("unsupported syntax", self._prev)

    def _parse_version(self) -> exp.Version | None:
        index = self._index
        if not self._match(TokenType.FOR):
            return None
        if self._match_text_seq("SYSTEM", "TIME") or self._match_texts(TIME_TRAVEL_TIME_WORDS):
            kind = TIME_KIND
        elif self._match_text_seq(VERSION_KIND):
            kind = VERSION_KIND
        else:
            # Not time travel (e.g. FOR UPDATE); let the caller interpret FOR.
            self._retreat(index)
            return None
        if not self._match_text_seq("AS", "OF"):
            self.raise_error("expected AS OF")

        literal: exp.Expr
        if kind == TIME_KIND:
            # FOR SYSTEM_TIME AS OF TIMESTAMP '...' is the SQL:2011 spelling.
            if self._curr.token_type in (TokenType.TIMESTAMP, TokenType.TIMESTAMPTZ) and (
                self._next.token_type == TokenType.STRING
            ):
                self._advance()
            if not self._match(TokenType.STRING):
                self.raise_error("AS OF expects a quoted timestamp literal")
            literal = exp.Literal.string(self._prev.text)
        else:
            if not (self._curr.token_type == TokenType.NUMBER and self._curr.text.isdigit()):
                self.raise_error("VERSION AS OF expects an integer version")
            self._advance()
            literal = exp.Literal.number(int(self._prev.text))
        return self.expression(exp.Version(this=kind, kind="AS OF", expression=literal))

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
        # sqlglot only looks for the clause before the alias (Doris' order); also accept it after.
        if isinstance(table, exp.Table) and not schema and not table.args.get("version"):
            version = self._parse_version()
            if version:
                table.set("version", version)
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
        tree = self._parse_statement() if production == "statement" else self._parse_disjunction()
        return tree, self._index


class StrataDoris(Doris):
    Parser = StrataParser


# Dialect objects are stateless configuration; parsers and tokenizers are created per call.
DIALECT = StrataDoris()
