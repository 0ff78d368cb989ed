"""storage.arrow_memory: the servers' Arrow pool is the system allocator unless the environment names
one. Each case runs in a fresh interpreter: the pool is process-wide."""

from __future__ import annotations

import os
import subprocess
import sys

from storage.arrow_memory import OVERRIDE

_PROBE = ("import pyarrow as pa; from storage.arrow_memory import use_system_pool; "
          "chosen = use_system_pool(); kept = pa.array(range(1000)); "
          "print(chosen, pa.default_memory_pool().backend_name, pa.system_memory_pool().bytes_allocated() > 0)")


def _probe(**env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k != OVERRIDE}
    done = subprocess.run([sys.executable, "-c", _PROBE], env={**clean, **env}, capture_output=True, text=True,
                          check=True, timeout=60)
    return done.stdout.split()


def test_the_system_allocator_becomes_the_default_pool() -> None:
    # pyarrow's own default here is mimalloc; after the call a new array's buffers are the system pool's
    assert _probe() == ["system", "system", "True"]


def test_an_operators_choice_stands() -> None:
    assert _probe(**{OVERRIDE: "mimalloc"}) == ["mimalloc", "mimalloc", "False"]
