"""Chat forgeries: a Slack, Discord or Teams callback with a wrong signature, a stale timestamp, or replayed.

Each channel's callback is checked the way the service signs it (Slack's HMAC, Discord's Ed25519, the Bot
Framework's JWT). The local services in tests/channels/ sign exactly as the real ones do, and forge on
request. A forgery is refused before it reaches the question, nothing is posted or answered, and the
genuine click that follows is the one taken.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tests.channels.teams_server import FORGERIES
from tests.channels.test_discord import ADA, BOB, asks_to_deploy, in_discord
from tests.channels.test_slack import ALICE, calling, desk
from tests.channels.test_slack import BOB as SLACK_BOB
from tests.channels.test_teams import ALICE as TEAMS_ALICE
from tests.channels.test_teams import BOB as TEAMS_BOB
from tests.channels.test_teams import THANKS, confirming
from tests.channels.test_teams import desk as teams_desk

pytestmark = pytest.mark.anyio

# Well past the 300 s both services allow: timestamps are whole seconds, and a loaded machine is slow to answer.
OFF = 400

SLACK = ["wrong secret", "unsigned", "stale", "from the future", "replayed"]


@pytest.mark.parametrize("forgery", SLACK)
async def test_a_forged_stale_or_replayed_slack_callback_is_refused_and_answers_nothing(
    mode: str, forgery: str
) -> None:
    arguments = {"kind": "confirm", "approvers": [ALICE.id]}
    async with desk(mode) as (local, client), calling(client, "ask", arguments) as result:
        message = await local.message(1)
        if forgery == "wrong secret":
            refused = await local.click(ALICE, message, "Approve", secret="not-the-signing-secret")
        elif forgery == "unsigned":
            refused = await local.post_raw(b"payload=%7B%7D", {"X-Slack-Request-Timestamp": str(int(time.time()))})
        elif forgery in ("stale", "from the future"):
            off = -OFF if forgery == "stale" else OFF
            refused = await local.click(ALICE, message, "Approve", timestamp=int(time.time()) + off)
        else:
            await local.click(SLACK_BOB, message, "Approve")  # genuine, but Bob may not answer: nothing taken
            await local.ephemeral_for(SLACK_BOB)
            refused = await local.resend()
        expected = {"stale": "Stale", "from the future": "Stale", "replayed": "Replayed"}.get(forgery, "Invalid")
        assert refused.status_code == 401
        assert refused.text.startswith(expected)
        assert message.updates == 0
        await local.click(ALICE, message, "Reject")
        assert await result() == "false"


DISCORD = ["wrong key", "altered body", "unsigned", "stale", "from the future", "replayed"]


@pytest.mark.parametrize("forgery", DISCORD)
async def test_a_forged_stale_or_replayed_discord_interaction_is_refused_and_answers_nothing(
    mode: str, forgery: str
) -> None:
    async with in_discord(asks_to_deploy(approvers={ADA.id}), mode) as scene:
        running = scene.call("deploy")
        message = await scene.discord.message(1)
        button = message["components"][0]["components"][0]
        click: dict[str, Any] = scene.people.payload(
            3, {"custom_id": button["custom_id"], "component_type": 2}, ADA, message
        )
        if forgery == "wrong key":
            refused = await scene.people.send(click, key=Ed25519PrivateKey.generate())
        elif forgery == "altered body":
            as_bob = {**click, "member": {**click["member"], "user": BOB.to_json()}}
            refused = await scene.people.send(click, body=json.dumps(as_bob, separators=(",", ":")).encode())
        elif forgery == "unsigned":
            refused = await scene.people.post(json.dumps(click).encode(), {"Content-Type": "application/json"})
        elif forgery in ("stale", "from the future"):
            refused = await scene.people.send(click, timestamp=time.time() + (-OFF if forgery == "stale" else OFF))
        else:
            first = await scene.people.click(message, "Approve", BOB)  # genuine, but Bob may not answer
            assert "not one of the approvers" in first.content
            refused = await scene.people.post(*first.request)
        assert refused.status == 401
        assert scene.discord.edits() == []
        assert scene.hitl.pending_questions == 1
        assert (await scene.people.click(message, "Reject", ADA)).content == "Thanks, your answer was recorded."
        assert await running.text() == "deploy=False"


TEAMS = [*FORGERIES, "expired", "not-yet-valid", "replayed"]


@pytest.mark.parametrize("forgery", TEAMS)
async def test_a_forged_expired_or_replayed_teams_activity_is_refused_and_answers_nothing(
    mode: str, forgery: str
) -> None:
    async with teams_desk(confirming(approvers={TEAMS_ALICE.aad}), mode) as scene:
        question = await scene.bf.question(1)
        if forgery == "replayed":
            assert await scene.said(question, "Approve", TEAMS_BOB) != THANKS  # genuine, but Bob may not answer
            refused = await scene.bf.replay(scene.endpoint)
            assert (refused.status_code, refused.text) == (409, "This activity was already received")
        else:
            refused = await scene.press(question, "Approve", forgery=forgery)
            assert refused.status_code == 401, (forgery, refused.text)
        assert scene.bf.updates == []
        assert scene.hitl.pending_questions == 1
        assert await scene.said(question, "Reject", TEAMS_ALICE) == THANKS
        assert await scene.outcome() == "approved=False"
