"""Suite-wide: tests marked `nightly` run only at nightly depth (tests.depth, `infra/test --nightly`)."""

from __future__ import annotations

import pytest

from tests.depth import NIGHTLY


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if NIGHTLY:
        return
    skip = pytest.mark.skip(reason="nightly suite: run by infra/test --nightly")
    for item in items:
        if item.get_closest_marker("nightly") is not None:
            item.add_marker(skip)
