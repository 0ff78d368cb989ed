"""Turns expected failures into one line on stderr and exit code 1 (no stack trace)."""

from __future__ import annotations

import sys
from collections.abc import Callable

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
