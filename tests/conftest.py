"""Shared fixtures: every engine test runs on both protocol eras."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["legacy", "auto"])
def mode(request: pytest.FixtureRequest) -> str:
    """`legacy` speaks 2025-11-25 (elicitation/create); `auto` negotiates 2026-07-28 (InputRequiredResult)."""
    return str(request.param)
