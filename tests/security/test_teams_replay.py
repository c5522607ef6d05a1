"""A captured Bot Connector token cannot make someone else's press answer a Teams question.

The Connector's token vouches for the Bot Framework service, for this bot and
one `serviceUrl`, for about an hour, and rides on many activities: it names no
user and no conversation. So whoever captured one can post activities the
token check accepts, with any activity id and any `from`. The Teams channel
therefore takes who pressed from Teams itself (the conversation's member under
the press's Teams user id), never from the activity (docs/channels.md, Teams).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.channels.teams_server import Sent, TeamsUser, card_texts
from tests.channels.test_teams import ALICE, BOB, DEPLOYS, THANKS, Desk, confirming, desk

pytestmark = pytest.mark.anyio

NOT_VERIFIED = "Teams does not know the sender of this press as the user it names, so it cannot answer the question."
NOT_A_MEMBER = "Teams does not list you in the conversation this question was asked in, so you cannot answer it."
ELSEWHERE = "This button belongs to a question asked in another conversation, so it cannot answer it here."
UNCHECKED = "Teams could not be asked who pressed this button just now, so nothing was answered: press it again."
MALLORY = TeamsUser("3a11041c-0000-4bad-8bad-00000000bad0", "Mallory")


def forged(captured: dict[str, Any], activity_id: str, **changes: Any) -> dict[str, Any]:
    """The captured activity under a new id, with `changes` to its fields (the way an attacker writes one)."""
    return captured | {"id": activity_id} | changes


async def said(response: Any) -> str:
    assert response.status_code == 200, response.text
    text: str = response.json()["value"]
    return text


async def captured_press(scene: Desk, question: Sent, user: TeamsUser) -> tuple[dict[str, Any], str]:
    """`user` presses Approve (and is refused: not an approver); what an eavesdropper keeps: the activity and token."""
    assert "not one of the approvers" in await scene.said(question, "Approve", user)
    activity, token = scene.bf.delivered[-1]
    assert token is not None
    return activity, token


async def test_a_captured_token_a_new_activity_id_and_a_spoofed_aad_object_id_answer_nothing(mode: str) -> None:
    async with desk(confirming(approvers={ALICE.aad}), mode) as scene:
        bf = scene.bf
        question = await bf.question(1)
        bobs, token = await captured_press(scene, question, BOB)
        as_alice = {"id": BOB.id, "name": "Alice", "aadObjectId": ALICE.aad}

        # The attack as found: Bob's token, a fresh activity id, Alice's AAD object id.
        attack = forged(bobs, "f:attack-1", **{"from": as_alice})
        assert await said(await bf.post_with(scene.endpoint, attack, token)) == NOT_VERIFIED
        # Naming Alice by her AAD object id as the Teams user id too: Teams knows her under another id.
        by_aad = {"id": ALICE.aad, "name": "Alice", "aadObjectId": ALICE.aad}
        attack = forged(bobs, "f:attack-2", **{"from": by_aad})
        assert await said(await bf.post_with(scene.endpoint, attack, token)) == NOT_VERIFIED
        # A Teams user id nobody in the conversation has.
        made_up = {"id": "29:1forgedforgedforged", "name": "Alice", "aadObjectId": ALICE.aad}
        attack = forged(bobs, "f:attack-3", **{"from": made_up})
        assert await said(await bf.post_with(scene.endpoint, attack, token)) == NOT_A_MEMBER
        # The same press from another conversation of the bot's.
        elsewhere = bobs["conversation"] | {"id": "19:elsewhere0c5d8e0f4b7a4f2a@thread.tacv2"}
        attack = forged(bobs, "f:attack-4", conversation=elsewhere, **{"from": as_alice})
        assert await said(await bf.post_with(scene.endpoint, attack, token)) == ELSEWHERE
        # Declining as Alice is refused alike.
        (decline,) = [a for a in question.card["actions"] if a["title"] == "Decline"]
        declining = bobs["value"] | {
            "action": {"type": "Action.Execute", "data": dict(decline["card"]["actions"][0]["data"])}
        }
        attack = forged(bobs, "f:attack-5", value=declining, **{"from": as_alice})
        assert await said(await bf.post_with(scene.endpoint, attack, token)) == NOT_VERIFIED
        # And the captured activity itself, once more, is a replay.
        assert (await bf.post_with(scene.endpoint, bobs, token)).status_code == 409

        assert scene.hitl.pending_questions == 1
        assert bf.updates == []
        assert not scene.done.is_set()  # nothing reached the tool

        # Alice herself, pressing in Teams (a fresh activity and token), still answers.
        assert await scene.said(question, "Approve", ALICE) == THANKS
        assert await scene.outcome() == "approved=True"
        assert card_texts((await bf.update_of(question)).card)[-1] == "Answered by Alice: value: True"


async def test_a_spoofed_sender_on_the_action_submit_fallback_answers_nothing_either(mode: str) -> None:
    async with desk(confirming(approvers={ALICE.aad}), mode) as scene:
        bf = scene.bf
        question = await bf.question(1)
        _, token = await captured_press(scene, question, BOB)
        (approve,) = [a for a in question.card["actions"] if a["title"] == "Approve"]
        submitted = bf._activity(question, BOB, "msteams") | {"type": "message", "text": ""}
        submitted |= {"value": dict(approve["fallback"]["data"])}
        submitted["from"] = submitted["from"] | {"aadObjectId": ALICE.aad, "name": "Alice"}
        assert (await bf.post_with(scene.endpoint, submitted, token)).status_code == 200
        await bf.until(lambda: len(bf.replies) == 1)
        assert bf.replies[0].activity["text"] == NOT_VERIFIED
        assert scene.hitl.pending_questions == 1
        assert not scene.done.is_set()

        assert await scene.said(question, "Approve", ALICE) == THANKS
        assert await scene.outcome() == "approved=True"


async def test_the_presser_is_who_teams_knows_in_the_questions_conversation_asked_at_the_configured_service(
    mode: str,
) -> None:
    async with desk(confirming(), mode) as scene:
        bf = scene.bf
        question = await bf.question(1)
        press = await scene.press(question, "Reject", BOB)
        assert press.json()["value"] == THANKS
        # The thread's `;messageid=` is dropped: Teams looks members up in the channel itself.
        assert bf.lookups == [(DEPLOYS, BOB.id)]
        assert await scene.outcome() == "approved=False"
        assert card_texts((await bf.update_of(question)).card)[-1] == "Answered by Bob: value: False"


async def test_someone_teams_does_not_list_in_the_conversation_cannot_answer_even_without_approvers(
    mode: str,
) -> None:
    async with desk(confirming(), mode) as scene:
        question = await scene.bf.question(1)
        assert await scene.said(question, "Approve", MALLORY) == NOT_A_MEMBER
        assert scene.hitl.pending_questions == 1
        assert await scene.said(question, "Reject", BOB) == THANKS
        assert await scene.outcome() == "approved=False"


async def test_while_teams_cannot_say_who_pressed_nothing_is_answered_and_the_next_press_counts(mode: str) -> None:
    async with desk(confirming(approvers={ALICE.aad}), mode) as scene:
        bf = scene.bf
        question = await bf.question(1)
        bf.members_down = True
        assert await scene.said(question, "Approve", ALICE) == UNCHECKED
        assert scene.hitl.pending_questions == 1
        assert not scene.done.is_set()
        bf.members_down = False
        assert await scene.said(question, "Approve", ALICE) == THANKS
        assert await scene.outcome() == "approved=True"


async def test_a_press_on_a_closed_question_is_told_so_without_asking_teams_who_pressed() -> None:
    async with desk(confirming()) as scene:
        bf = scene.bf
        question = await bf.question(1)
        assert await scene.said(question, "Approve", ALICE) == THANKS
        assert await scene.outcome() == "approved=True"
        assert (
            await scene.said(question, "Reject", BOB)
            == "This question is closed: it was already answered, withdrawn, or it expired."
        )
        assert bf.lookups == [(DEPLOYS, ALICE.id)]
