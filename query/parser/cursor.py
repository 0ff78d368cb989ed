"""Token cursor for the hand-written recursive-descent parser of Doris-only statements."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from typing import TypeVar

from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.tokens import Token, TokenType

from query.parser.dialect import DIALECT, LocatedParseError, Production, StrataParser
from query.parser.errors import SqlSyntaxError, UnsupportedStatement
from query.parser.lexing import syntax_error
from query.parser.statements import Properties, QualifiedName

T = TypeVar("T")
S = TypeVar("S", bound=str)

_STRING_TYPES = frozenset(
    {
        TokenType.STRING,
        TokenType.NATIONAL_STRING,
        TokenType.RAW_STRING,
        TokenType.HEX_STRING,
        TokenType.BIT_STRING,
        TokenType.BYTE_STRING,
        TokenType.HEREDOC_STRING,
        TokenType.UNICODE_STRING,
    }
)
# Tokens whose text must never be mistaken for a keyword: `select` is a name, 'select' a value.
_NOT_WORDS = _STRING_TYPES | {TokenType.IDENTIFIER, TokenType.NUMBER}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*\Z")

# Bare words that are clause keywords in the statements we parse by hand; taking them as names
# would turn a missing name into a confusing error later on. Backquote them to use as names.
RESERVED = frozenset(
    """
    ADD ALTER AND AS BY CREATE DATABASE DEFAULT DISTRIBUTED DROP DUPLICATE ENGINE EXISTS FOR FROM
    IF IN INTO KEY LIKE NOT NULL ON OR PARTITION PROPERTIES SELECT SET TABLE TO UNIQUE VALUES WHERE
    WITH
    """.split()
)


class Cursor:
    """Position in one statement's tokens; every failure becomes a located ``SqlSyntaxError``."""

    def __init__(self, tokens: list[Token], sql: str) -> None:
        self.tokens = tokens
        self.sql = sql
        self.pos = 0

    # ------------------------------------------------------------------ inspection

    def peek(self, offset: int = 0) -> Token | None:
        index = self.pos + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def word(self, offset: int = 0) -> str | None:
        """Upper-cased text of a keyword-like token, ``None`` for names in quotes, literals, punctuation.

        sqlglot lexes some phrases as one token (``PARTITION BY``); their words are space-separated.
        """
        token = self.peek(offset)
        if token is None or token.token_type in _NOT_WORDS:
            return None
        parts = token.text.upper().split()
        if not parts or not all(_WORD.match(part) for part in parts):
            return None
        return " ".join(parts)

    def _phrase_length(self, words: tuple[str, ...]) -> int:
        """How many tokens spell exactly ``words`` at the cursor (0 if they do not)."""
        matched = 0
        count = 0
        while matched < len(words):
            word = self.word(count)
            if word is None:
                return 0
            parts = tuple(word.split())
            if words[matched : matched + len(parts)] != parts:
                return 0
            matched += len(parts)
            count += 1
        return count

    def at(self, *words: str) -> bool:
        return self._phrase_length(words) > 0

    def at_end(self) -> bool:
        return self.pos >= len(self.tokens)

    def at_type(self, token_type: TokenType) -> bool:
        token = self.peek()
        return token is not None and token.token_type == token_type

    # ------------------------------------------------------------------ consumption

    def error(self, detail: str, token: Token | None | bool = True) -> SqlSyntaxError:
        """Error at ``token``; the default ``True`` means the current token (end of input if none)."""
        located = self.peek() if token is True else token
        return syntax_error(self.sql, located if isinstance(located, Token) else None, detail)

    def advance(self) -> Token:
        token = self.peek()
        if token is None:
            raise self.error("unexpected end of statement")
        self.pos += 1
        return token

    def accept(self, *words: str) -> bool:
        length = self._phrase_length(words)
        self.pos += length
        return length > 0

    def accept_any(self, words: Collection[str]) -> str | None:
        word = self.word()
        if word is not None and word in words:
            self.pos += 1
            return word
        return None

    def expect(self, *words: str) -> None:
        for word in words:
            if not self.accept(word):
                raise self.error(f"expected {word}")

    def accept_choice(self, choices: Sequence[S]) -> S | None:
        """Like ``accept_any`` but keeps the caller's literal type of the matched keyword."""
        word = self.word()
        for choice in choices:
            if word == choice:
                self.pos += 1
                return choice
        return None

    def expect_choice(self, choices: Sequence[S], what: str) -> S:
        choice = self.accept_choice(choices)
        if choice is None:
            raise self.error(f"expected {what}")
        return choice

    def expect_any(self, words: Collection[str], what: str) -> str:
        word = self.accept_any(words)
        if word is None:
            raise self.error(f"expected {what}")
        return word

    def accept_type(self, token_type: TokenType) -> Token | None:
        if self.at_type(token_type):
            return self.advance()
        return None

    def expect_type(self, token_type: TokenType, what: str) -> Token:
        token = self.accept_type(token_type)
        if token is None:
            raise self.error(f"expected {what}")
        return token

    def expect_end(self) -> None:
        if not self.at_end():
            raise self.error("unexpected token after end of statement")

    def if_not_exists(self) -> bool:
        if not self.accept("IF"):
            return False
        self.expect("NOT", "EXISTS")
        return True

    def if_exists(self) -> bool:
        if not self.accept("IF"):
            return False
        self.expect("EXISTS")
        return True

    # ------------------------------------------------------------------ names and literals

    def identifier(self, what: str = "a name") -> str:
        token = self.peek()
        if token is not None:
            if token.token_type == TokenType.IDENTIFIER:
                self.pos += 1
                return token.text
            word = self.word()
            if word is not None and word not in RESERVED:
                self.pos += 1
                return token.text
        raise self.error(f"expected {what}")

    def qualified_name(self, what: str = "a table name") -> QualifiedName:
        first = self.identifier(what)
        if self.accept_type(TokenType.DOT):
            return QualifiedName(self.identifier(what), db=first)
        return QualifiedName(first)

    def string(self, what: str = "a quoted string") -> str:
        token = self.peek()
        if token is None or token.token_type not in _STRING_TYPES:
            raise self.error(f"expected {what}")
        self.pos += 1
        return token.text

    def name_or_string(self, what: str) -> str:
        """Resource and label names may be written "quoted" or bare."""
        token = self.peek()
        if token is not None and token.token_type in _STRING_TYPES:
            return self.string(what)
        return self.identifier(what)

    def integer(self, what: str = "an integer") -> int:
        token = self.peek()
        if token is None or token.token_type != TokenType.NUMBER or not token.text.isdigit():
            raise self.error(f"expected {what}")
        self.pos += 1
        return int(token.text)

    def literal(self, what: str = "a literal") -> str:
        """String or (signed) number, as text without quotes."""
        sign = "-" if self.accept_type(TokenType.DASH) else ""
        if not sign:
            self.accept_type(TokenType.PLUS)
        token = self.peek()
        if token is not None and token.token_type == TokenType.NUMBER:
            self.pos += 1
            return sign + token.text
        if not sign and token is not None and token.token_type in _STRING_TYPES:
            return self.string()
        raise self.error(f"expected {what}")

    # ------------------------------------------------------------------ lists

    def csv(self, item: Callable[[], T]) -> list[T]:
        items = [item()]
        while self.accept_type(TokenType.COMMA):
            items.append(item())
        return items

    def parens(self, item: Callable[[], T]) -> list[T]:
        """``( item, ... )`` with at least one item."""
        self.expect_type(TokenType.L_PAREN, "'('")
        items = self.csv(item)
        self.expect_type(TokenType.R_PAREN, "')' or ','")
        return items

    def name_list(self, what: str = "a column name") -> tuple[str, ...]:
        return tuple(self.parens(lambda: self.identifier(what)))

    def properties(self) -> Properties:
        """``("k" = "v", ...)``; keys are case-insensitive in Doris, so they are lower-cased."""
        self.expect_type(TokenType.L_PAREN, "'(' to open the property list")
        result: Properties = {}
        if self.accept_type(TokenType.R_PAREN):
            return result
        while True:
            key_token = self.peek()
            key = self.name_or_string("a property name").lower()
            if key in result:
                raise self.error(f"duplicate property '{key}'", key_token)
            self.expect_type(TokenType.EQ, "'=' after the property name")
            result[key] = self._property_value()
            if self.accept_type(TokenType.R_PAREN):
                return result
            self.expect_type(TokenType.COMMA, "',' or ')' in the property list")

    def _property_value(self) -> str:
        if self.word() is not None:
            return self.advance().text
        return self.literal("a property value")

    # ------------------------------------------------------------------ delegation to sqlglot

    def sqlglot(self, production: Production, what: str) -> exp.Expr:
        """Parse an expression or statement at the cursor with sqlglot and move past it."""
        if self.at_end():
            raise self.error(f"expected {what}")
        parser = StrataParser(dialect=DIALECT)
        try:
            tree, end = parser.parse_fragment(self.tokens, self.sql, self.pos, production)
        except LocatedParseError as exc:
            raise syntax_error(self.sql, exc.token, exc.description) from None
        except ParseError as exc:
            details = exc.errors[0] if exc.errors else {}
            raise self.error(str(details.get("description") or exc)) from None
        except RecursionError:
            raise self.error("statement is nested too deeply") from None
        except UnsupportedStatement:
            raise
        except Exception as exc:  # a sqlglot bug must still surface as a syntax error, not a crash
            raise self.error(f"cannot parse {what} ({type(exc).__name__})") from None
        if tree is None or end == self.pos:
            raise self.error(f"expected {what}")
        self.pos = end
        return tree
