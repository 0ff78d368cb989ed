"""Fixtures for the infra tests. They run inside `infra/test`, which starts the test stack and
exports its STRATA_* variables, so `load_settings()` here sees the same config as the stack."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from infra.health import kafka_ok, minio_ok
from schemas.config import Settings, load_settings


@pytest.fixture(scope="session")
def cfg() -> Settings:
    return load_settings()


@pytest.fixture(scope="session")
def stack(cfg: Settings) -> Settings:
    """The running stack's settings; fails (not skips) when it is down, so CI cannot go green."""
    problems = [p for p in (kafka_ok(cfg), minio_ok(cfg)) if p]
    if problems:
        pytest.fail("the stack is not running (run the tests through infra/test): " + "; ".join(problems))
    return cfg


@pytest.fixture
def unique() -> Iterator[str]:
    yield uuid.uuid4().hex[:12]
