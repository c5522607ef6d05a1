"""Whether the environment looks like a deployment of several nodes, for the memory store's start-up warning.

The memory store keeps pending questions and runs in one process: an answer
that reaches another process cannot find its question, and a restart loses
them all. That is right for development, tests and stdio servers, and wrong
wherever several processes or replicas serve one MCP endpoint. elicitkit
cannot see the load balancer, so it reads the signals platforms set:

| signal | what it says |
| --- | --- |
| `WEB_CONCURRENCY` above 1 | gunicorn or uvicorn start that many worker processes |
| `KUBERNETES_SERVICE_HOST` | a Kubernetes pod; its Deployment may run several replicas |
| `K_SERVICE`, `AWS_LAMBDA_FUNCTION_NAME`, `VERCEL`, `DYNO`, `FLY_APP_NAME` | a platform that scales out |
| `ELICITKIT_ENV` or `NODE_ENV` = `production` | the operator says so (`NODE_ENV` is FrontMCP's) |
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

__all__ = ["several_nodes_signals", "warn_if_several_nodes"]

logger = logging.getLogger("elicitkit")

_PLATFORMS = {
    "KUBERNETES_SERVICE_HOST": "Kubernetes",
    "K_SERVICE": "Cloud Run",
    "AWS_LAMBDA_FUNCTION_NAME": "AWS Lambda",
    "VERCEL": "Vercel",
    "DYNO": "Heroku",
    "FLY_APP_NAME": "Fly.io",
}
_STAGES = ("ELICITKIT_ENV", "NODE_ENV")


def several_nodes_signals(environ: Mapping[str, str]) -> list[str]:
    """Each signal in `environ` that several nodes (or processes) serve this server, said for a log line."""
    found = []
    workers = environ.get("WEB_CONCURRENCY", "").strip()
    if workers.isdigit() and int(workers) > 1:
        found.append(f"WEB_CONCURRENCY={int(workers)} worker processes")
    for name, platform in _PLATFORMS.items():
        if environ.get(name, "").strip():
            found.append(f"{name} is set ({platform})")
    for name in _STAGES:
        if environ.get(name, "").strip().lower() in ("production", "prod"):
            found.append(f"{name}={environ[name].strip()}")
    return found


def warn_if_several_nodes(environ: Mapping[str, str] = os.environ) -> None:
    """For the default memory store: a warning at start-up, naming each signal that several nodes serve."""
    signals = several_nodes_signals(environ)
    if signals:
        logger.warning(
            "elicitkit: questions are kept in memory (the default store), but this looks like a deployment of "
            "several nodes (%s). An answer that reaches another process or replica cannot find its question, and "
            'a restart loses every pending one. Use store="redis://..." for several nodes (store="sqlite:///'
            '..." for one machine with restarts), or pass store="memory://" to choose memory on purpose.',
            "; ".join(signals),
        )
