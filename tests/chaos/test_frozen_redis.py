"""A Redis that stops answering costs a request the command deadline, not a hang.

Frozen (SIGSTOP), Redis keeps its connections open and answers nothing, as a
stalled server or one cut off without a reset looks to its clients. A retry
whose answer must be journaled then is refused as `store_unavailable` once the
command deadline passes; sent again after Redis answers again, it completes
the run once (the write that was cut off may have been applied meanwhile: the
round it spent is recognised as this very retry's).
"""

from __future__ import annotations

import signal
from contextlib import AsyncExitStack

import anyio
import pytest
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult

from elicitkit import Accepted, Elicitation
from elicitkit.stores import _redis_client
from tests.redis_server import RedisServer
from tests.scenes import Rounds, by_hand, text_of

pytestmark = pytest.mark.anyio

SECRET = "frozen-redis-secret-0123456789abcdef0123"
DEPLOY = Rounds("deploy")


async def test_a_frozen_redis_refuses_a_retry_within_the_command_deadline_and_it_completes_once_sent_again(
    redis: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_redis_client, "COMMAND_TIMEOUT", 0.5)
    server = MCPServer("t")
    hitl = Elicitation(server, store=redis.url, secret=SECRET)
    deployed: list[bool] = []

    @server.tool()
    async def deploy(ctx: Context) -> str:
        answer = await hitl.confirm(ctx, "Deploy?")
        deployed.append(isinstance(answer, Accepted) and answer.data is True)
        return "deployed" if deployed[-1] else "kept"

    async with AsyncExitStack() as stack:
        stack.push_async_callback(hitl.aclose)
        client = await stack.enter_async_context(by_hand(server))
        asked = await DEPLOY.start(client)
        redis.signal(signal.SIGSTOP)
        started = anyio.current_time()
        try:
            with anyio.fail_after(10), pytest.raises(MCPError) as refused:
                await DEPLOY.answer(client, asked, True)
        finally:
            redis.signal(signal.SIGCONT)
        # The deadline is 0.5 s here (the answer's write is shielded: no outer timeout could cut it shorter).
        assert anyio.current_time() - started < 2.0
        assert isinstance(refused.value.error.data, dict)
        assert refused.value.error.data["reason"] == "store_unavailable"
        with anyio.fail_after(10):
            done = await DEPLOY.answer(client, asked, True)
    assert isinstance(done, CallToolResult) and text_of(done) == "deployed"
    assert deployed == [True]
