"""Turns expected failures into one line on stderr and exit code 1 (no stack trace)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping

from infra.toolchain import StrataError
from schemas.config import ConfigError


def guarded(fn: Callable[[], int]) -> int:
    try:
        return fn()
    except (StrataError, ConfigError) as exc:
        text = str(exc)
        print(text if text.startswith("strata: ") else f"strata: {text}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        print("strata: interrupted", file=sys.stderr)
        return 130


def run_action(argv: list[str] | None, actions: Mapping[str, Callable[[], object]], default: str = "run") -> int:
    """`python -m infra.<node> <action>`: runs the named action (guarded), default `run`."""
    args = sys.argv[1:] if argv is None else argv
    action = args[0] if args else default

    def go() -> int:
        chosen = actions.get(action)
        if chosen is None:
            raise StrataError(f"unknown action {action!r} ({'|'.join(actions)})")
        chosen()
        return 0

    return guarded(go)
