"""Math functions (https://doris.apache.org/docs/sql-manual/sql-functions/scalar-functions/numeric-functions/)."""

from __future__ import annotations

from sqlglot import exp

from query.functions.registry import NOT_SUPPORTED_YET, Call, Function, FunctionError, fn, render

F = "math"
_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _conv(call: Call) -> exp.Expr:
    """CONV(n, from_base, to_base) for non-negative numbers into base 2, 10 or 16."""
    target = call.args[2]
    if not (isinstance(target, exp.Literal) and target.this in ("2", "10", "16")):
        raise FunctionError(NOT_SUPPORTED_YET, "conv: the target base must be 2, 10 or 16")
    value = render(f"LIST_REDUCE(LIST_TRANSFORM(STRING_SPLIT(UPPER(CAST({{0}} AS VARCHAR)), ''), "
                   f"c -> CAST(STRPOS('{_DIGITS}', c) - 1 AS BIGINT)), (acc, d) -> acc * {{1}} + d, CAST(0 AS BIGINT))",
                   call.args)
    shown = {"2": "BIN({0})", "10": "CAST({0} AS VARCHAR)", "16": "HEX({0})"}[target.this]
    return render(shown, [value])


FUNCTIONS: list[Function] = [
    fn("abs", F, "abs(-1.5)", "ABS({0})"),
    fn("ceil", F, "ceil(1.2)"),
    fn("ceiling", F, "ceiling(1.2)", "CEIL({0})"),
    fn("floor", F, "floor(1.8)"),
    fn("round", F, "round(2.675, 2)", a1="ROUND({0})", a2="ROUND({0}, {1})"),
    fn("truncate", F, "truncate(3.14159, 2)", "TRUNC({0}, {1})"),
    fn("pmod", F, "pmod(-7, 3)", "(({0} % {1}) + {1}) % {1}"),
    fn("mod", F, "mod(7, 3)", "{0} % NULLIF({1}, 0)"),
    fn("conv", F, "conv('ff', 16, 10)", rewrite=_conv, arities={3}),
    fn("bin", F, "bin(10)", "BIN(CAST({0} AS BIGINT))"),
    fn("sqrt", F, "sqrt(4)", "SQRT({0})"),
    fn("pow", F, "pow(2, 3)", "POW({0}, {1})"),
    fn("power", F, "power(2, 3)", "POW({0}, {1})"),
    fn("exp", F, "exp(1)", "EXP({0})"),
    fn("ln", F, "ln(10)", "LN({0})"),
    fn("log", F, "log(2, 8)", a1="LN({0})", a2="LOG({0}, {1})"),
    fn("log2", F, "log2(8)", "LOG2({0})"),
    fn("log10", F, "log10(100)", "LOG10({0})"),
    fn("sign", F, "sign(-3)", "SIGN({0})"),
    fn("greatest", F, "greatest(1, 3, 2)"),
    fn("least", F, "least(1, 3, 2)"),
    fn("rand", F, "rand() < 1", a0="RANDOM()"),
    fn("random", F, "random() < 1", a0="RANDOM()"),
    fn("pi", F, "pi()", "PI()"),
    fn("e", F, "e()", "EXP(1)"),
    fn("degrees", F, "degrees(pi())", "DEGREES({0})"),
    fn("radians", F, "radians(180)", "RADIANS({0})"),
    fn("sin", F, "sin(0)", "SIN({0})"),
    fn("cos", F, "cos(0)", "COS({0})"),
    fn("tan", F, "tan(0)", "TAN({0})"),
    fn("asin", F, "asin(1)", "ASIN({0})"),
    fn("acos", F, "acos(1)", "ACOS({0})"),
    fn("atan", F, "atan(1)", "ATAN({0})"),
    fn("atan2", F, "atan2(1, 1)", "ATAN2({0}, {1})"),
    fn("positive", F, "positive(-3)", "{0}"),
    fn("negative", F, "negative(3)", "-{0}"),
]
