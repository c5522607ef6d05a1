"""Every fastmcp scene runs with both clients: fastmcp's own and the SDK's over streamable HTTP.

Nothing here imports fastmcp: each test module skips itself when it is not installed.
"""

from __future__ import annotations

import pytest


@pytest.fixture(params=["fastmcp", "sdk-http"])
def driver(request: pytest.FixtureRequest) -> str:
    """`fastmcp` is fastmcp's `Client` in memory; `sdk-http` is the SDK's `Client` over real streamable HTTP."""
    return str(request.param)
