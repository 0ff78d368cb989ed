"""MurmurHash3 (x86, 32 bits) of a value's UTF-8 text as DuckDB SQL: the member Doris' BITMAP_HASH
makes of a value (seed 104729, Doris' HashUtil::MURMUR3_32_SEED), which DuckDB has no function for.

UBIGINT arithmetic masked to 32 bits keeps every product below 2^64; a `_let` binds a value to a
lambda parameter so that it is computed once however often the formula uses it."""

from __future__ import annotations

_MASK = "4294967295"
_C1, _C2 = "3432918353", "461845907"  # 0xcc9e2d51, 0x1b873593
_SEED = "104729"


def _let(value: str, name: str, body: str) -> str:
    return f"LIST_TRANSFORM([{value}], {name} -> {body})[1]"


def _mul(a: str, c: str) -> str:
    return f"((({a}) * {c}) & {_MASK})"


def _rotl(x: str, r: int) -> str:
    return f"(((({x}) << {r}) | (({x}) >> {32 - r})) & {_MASK})"


def _mix(k: str) -> str:
    return _let(_mul(k, _C1), "__k1", _mul(_rotl("__k1", 15), _C2))


def _finish(h: str) -> str:
    first = _let(f"XOR({h}, {h} >> 16)", "__f1", _mul("__f1", "2246822507"))  # 0x85ebca6b
    second = _let(first, "__f2", _mul("XOR(__f2, __f2 >> 13)", "3266489909"))  # 0xc2b2ae35
    return _let(second, "__f3", "XOR(__f3, __f3 >> 16)")


_HEX = "HEX(ENCODE(CAST({0} AS VARCHAR)))"
_BYTES = f"LIST_TRANSFORM(RANGE(LENGTH({_HEX}) // 2), __i -> CAST(('0x' || SUBSTR({_HEX}, 2 * __i + 1, 2)) AS UBIGINT))"
# Each whole 4-byte block, little-endian, mixed into the running hash.
_BLOCK = "(__b[4 * __j + 1] | (__b[4 * __j + 2] << 8) | (__b[4 * __j + 3] << 16) | (__b[4 * __j + 4] << 24))"
_STEP = _let(_rotl("XOR(__h, __k)", 13), "__r", f"((__r * 5 + 3864292196) & {_MASK})")  # 0xe6546b64
_BODY = (f"LIST_REDUCE(LIST_TRANSFORM(RANGE(LEN(__b) // 4), __j -> {_mix(_BLOCK)}), (__h, __k) -> {_STEP}, "
         f"CAST({_SEED} AS UBIGINT))")
# The last 1 to 3 bytes, little-endian.
_TAIL = ("LIST_REDUCE(LIST_TRANSFORM(LIST_SLICE(__b, LEN(__b) // 4 * 4 + 1, LEN(__b)), "
         "(__t, __n) -> __t << (8 * (__n - 1))), (__x, __y) -> __x | __y, CAST(0 AS UBIGINT))")
_WITH_TAIL = f"CASE WHEN LEN(__b) % 4 = 0 THEN {_BODY} ELSE XOR({_BODY}, {_mix(_TAIL)}) END"

MURMUR3_32 = _let(_BYTES, "__b", _finish(f"XOR({_WITH_TAIL}, LEN(__b))"))
"""The hash of `{0}`'s text, a UBIGINT below 2^32 (a function template: `{0}` is the argument)."""
