"""How deep the slow suites go. `infra/test` (and CI) runs every test at CI depth: the model and fuzz
tests with fewer examples, and the few suites marked `nightly` skipped. `infra/test --nightly` sets
STRATA_TEST_DEPTH=nightly and runs everything at full depth (about twice as long). Both run the same
assertions; the nightly run only tries more histories and runs the slowest crash and replay suites."""

from __future__ import annotations

import os

NIGHTLY = os.environ.get("STRATA_TEST_DEPTH", "ci") == "nightly"


def examples(ci: int, nightly: int) -> int:
    """How many examples a hypothesis test tries at this depth."""
    return nightly if NIGHTLY else ci
