"""The security tests reach `elicitkit serve` both ways a client does."""

from __future__ import annotations

from typing import cast

import pytest

from tests.security.scenes import Served


@pytest.fixture(params=["stdio", "http"])
def served_over(request: pytest.FixtureRequest) -> Served:
    """How `elicitkit serve` is reached: its stdin and stdout, or streamable HTTP on 127.0.0.1."""
    return cast("Served", request.param)
