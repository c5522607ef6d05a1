"""What several security tests share: every log record (uvicorn's included), and both ways to reach `elicitkit serve`."""

from __future__ import annotations

import logging
from typing import cast

import pytest
import uvicorn

from tests.security.scenes import Served


class Logs:
    """Every record logged during a test, at any level, from any logger."""

    def __init__(self, caplog: pytest.LogCaptureFixture) -> None:
        self._caplog = caplog

    @property
    def records(self) -> list[logging.LogRecord]:
        return self._caplog.records  # a new list in each phase of the test: read it when asked

    def assert_no_traceback(self) -> None:
        """No record carries a traceback or says that something failed."""
        for record in self.records:
            assert record.exc_info is None, (record.name, record.getMessage())
            assert "Traceback" not in record.getMessage(), record.getMessage()
            assert record.levelno < logging.ERROR, (record.name, record.getMessage())


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> Logs:
    """`caplog` at DEBUG for every logger, uvicorn's too: each server the test starts keeps its hands off
    logging, whose config would stop `uvicorn.error` (where an app's exceptions go) from reaching the root."""
    monkeypatch.setattr(uvicorn.Config, "configure_logging", lambda self: None)
    caplog.set_level(logging.DEBUG)
    return Logs(caplog)


@pytest.fixture(params=["stdio", "http"])
def served_over(request: pytest.FixtureRequest) -> Served:
    """How `elicitkit serve` is reached: its stdin and stdout, or streamable HTTP on 127.0.0.1."""
    return cast("Served", request.param)
