"""FrontMCP's names in elicitkit: the error aliases, `.status`, and the memory store's start-up warning."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from mcp.server.mcpserver import MCPServer

import elicitkit
from elicitkit import Accepted, Cancelled, Declined, Elicitation
from elicitkit._deployment import several_nodes_signals
from elicitkit.compat import frontmcp

pytestmark = pytest.mark.anyio

PRODUCTION_SIGNALS = [
    "WEB_CONCURRENCY",
    "KUBERNETES_SERVICE_HOST",
    "K_SERVICE",
    "AWS_LAMBDA_FUNCTION_NAME",
    "VERCEL",
    "DYNO",
    "FLY_APP_NAME",
    "ELICITKIT_ENV",
    "NODE_ENV",
]


def test_frontmcps_error_names_are_elicitkits_own_classes() -> None:
    assert frontmcp.ElicitationTimeoutError is elicitkit.ElicitationTimeout
    assert frontmcp.ElicitationNotSupportedError is elicitkit.ElicitationNotSupported
    assert frontmcp.InvalidInputError is elicitkit.InvalidElicitationContent
    assert frontmcp.ElicitationEncryptionError is elicitkit.TamperedRecord
    assert frontmcp.ElicitationSubscriptionError is elicitkit.StoreUnavailable
    assert frontmcp.ElicitationError is elicitkit.ElicitationError


def test_a_timeout_says_its_ttl_in_milliseconds_and_its_question() -> None:
    error = frontmcp.ElicitationTimeoutError(60, "elicit_abc")
    assert (error.ttl, error.elicit_id, error.timeout) == (60_000, "elicit_abc", 60)
    assert frontmcp.ElicitationTimeoutError(0.25).ttl == 250
    assert frontmcp.ElicitationTimeoutError(0.25).elicit_id is None


def test_every_result_has_frontmcps_status() -> None:
    assert Accepted(data=1).status == "accept"
    assert Declined().status == "decline"
    assert Cancelled().status == "cancel"
    for result in (Accepted(data=1), Declined(reason="no"), Cancelled()):
        assert result.status == result.action


@pytest.fixture
def no_deployment_signals(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PRODUCTION_SIGNALS:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("WEB_CONCURRENCY", "4", "WEB_CONCURRENCY=4 worker processes"),
        ("KUBERNETES_SERVICE_HOST", "10.0.0.1", "KUBERNETES_SERVICE_HOST is set (Kubernetes)"),
        ("K_SERVICE", "deploy-desk", "K_SERVICE is set (Cloud Run)"),
        ("AWS_LAMBDA_FUNCTION_NAME", "desk", "AWS_LAMBDA_FUNCTION_NAME is set (AWS Lambda)"),
        ("VERCEL", "1", "VERCEL is set (Vercel)"),
        ("DYNO", "web.1", "DYNO is set (Heroku)"),
        ("FLY_APP_NAME", "desk", "FLY_APP_NAME is set (Fly.io)"),
        ("ELICITKIT_ENV", "production", "ELICITKIT_ENV=production"),
        ("NODE_ENV", "Production", "NODE_ENV=Production"),
    ],
)
def test_the_default_memory_store_warns_at_start_up_where_several_nodes_serve(
    name: str,
    value: str,
    said: str,
    no_deployment_signals: None,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv(name, value)
    with caplog.at_level(logging.WARNING, logger="elicitkit"):
        Elicitation(MCPServer("desk"))
    [record] = [r for r in caplog.records if "kept in memory" in r.getMessage()]
    assert said in record.getMessage()
    assert 'store="redis://...' in record.getMessage()


@pytest.mark.parametrize(
    "environ",
    [{}, {"WEB_CONCURRENCY": "1"}, {"WEB_CONCURRENCY": "many"}, {"NODE_ENV": "development"}, {"VERCEL": " "}],
)
def test_no_signal_of_several_nodes_means_no_warning(environ: dict[str, str]) -> None:
    assert several_nodes_signals(environ) == []


async def test_memory_chosen_on_purpose_or_a_durable_store_does_not_warn(
    no_deployment_signals: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("WEB_CONCURRENCY", "2")
    with caplog.at_level(logging.WARNING, logger="elicitkit"):
        Elicitation(MCPServer("chosen"), store="memory://")
        durable = Elicitation(MCPServer("durable"), store=f"sqlite:///{tmp_path / 'state.db'}", secret="s" * 32)
    await durable.aclose()
    assert "kept in memory" not in caplog.text
    with caplog.at_level(logging.WARNING, logger="elicitkit"):
        Elicitation(MCPServer("default"))
    assert "WEB_CONCURRENCY=2 worker processes; KUBERNETES_SERVICE_HOST is set (Kubernetes)" in caplog.text


def test_a_development_machine_starts_quietly(no_deployment_signals: None, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="elicitkit"):
        Elicitation(MCPServer("dev"))
    assert caplog.text == ""
