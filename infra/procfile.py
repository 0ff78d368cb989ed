"""Reads the Procfile and decides which of its components can run in this checkout."""

from __future__ import annotations

import importlib.util
import shlex
from dataclasses import dataclass
from pathlib import Path

from infra.layout import PROCFILE, REPO_ROOT


@dataclass(frozen=True)
class Component:
    name: str
    command: str

    @property
    def python_module(self) -> str | None:
        """`m` for a `… python -m m` command."""
        argv = shlex.split(self.command)
        if "-m" in argv[:-1] and Path(argv[0]).name.startswith("python"):
            return argv[argv.index("-m") + 1]
        return None

    def missing_reason(self) -> str | None:
        """Why this component cannot start here (its module or script is not written yet)."""
        mod = self.python_module
        if mod is not None:
            try:
                found = importlib.util.find_spec(mod) is not None
            except (ImportError, ValueError):
                found = False
            return None if found else f"module {mod} not present"
        exe = shlex.split(self.command)[0]
        path = REPO_ROOT / exe
        if "/" in exe and not path.exists():
            return f"{exe} not present"
        return None


def read_procfile(path: Path = PROCFILE) -> list[Component]:
    comps: list[Component] = []
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or ":" not in line:
            continue
        name, cmd = line.split(":", 1)
        comps.append(Component(name.strip(), cmd.strip()))
    return comps
