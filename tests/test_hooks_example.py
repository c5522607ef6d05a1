"""examples/hooks.py: a policy veto, redact-and-audit and four eyes, on both eras."""

from __future__ import annotations

import itertools
from types import ModuleType
from typing import Any

import anyio
import pytest
from mcp import Client

from elicitkit.testing import ScriptedHuman, accept
from tests.examples import load_example
from tests.scenes import text_of

pytestmark = pytest.mark.anyio

IBAN = "DE89370400440532013000"
_fresh = itertools.count()


def treasury() -> ModuleType:
    return load_example("hooks", f"treasury_{next(_fresh)}")


async def test_a_small_payment_is_approved_once_and_audited_with_the_account_masked(mode: str) -> None:
    example = treasury()
    human = ScriptedHuman(accept({"approved": True, "iban": IBAN}))
    async with Client(example.server, mode=mode, elicitation_callback=human) as client:
        assert text_of(await client.call_tool("pay", {"amount": 50, "to": "bob"})) == "Paid 50 to bob"
    [record] = example.records
    assert record["outcome"] == "accept"
    assert record["answer"] == {"approved": True, "iban": "DE89…3000"}
    assert IBAN not in str(example.records)


async def test_a_closed_desk_vetoes_the_question_and_nobody_is_asked(mode: str) -> None:
    example = treasury()
    example.Desk.open = False
    human = ScriptedHuman()
    async with Client(example.server, mode=mode, elicitation_callback=human) as client:
        result = await client.call_tool("pay", {"amount": 50, "to": "bob"})
    assert text_of(result) == "Not paid: The payments desk is closed; payments resume at 08:00"
    assert human.transcript == []
    assert example.records[0]["outcome"] == "vetoed"


@pytest.mark.parametrize(("confirm", "expected"), [(True, "Paid 50000 to carol"), (False, "Not paid: a second")])
async def test_a_large_payment_waits_for_a_second_approver(mode: str, confirm: bool, expected: str) -> None:
    example = treasury()
    human = ScriptedHuman(accept({"approved": True, "iban": IBAN}))
    results: list[Any] = []
    async with (
        Client(example.server, mode=mode, elicitation_callback=human) as payer,
        Client(example.server, mode=mode) as supervisor,
        anyio.create_task_group() as tg,
    ):

        async def pay() -> None:
            results.append(await payer.call_tool("pay", {"amount": 50000, "to": "carol"}))

        tg.start_soon(pay)
        with anyio.fail_after(5):
            while not example.waiting:  # the hook holds the approval once every task is blocked on it
                await anyio.wait_all_tasks_blocked()
        [listed] = (await supervisor.call_tool("pending_approvals", {})).structured_content["result"]
        question_id = listed.split(":")[0]
        assert listed.endswith("Pay 50000 to carol?")
        answer = await supervisor.call_tool("approve_payment", {"question_id": question_id, "confirm": confirm})
        assert text_of(answer) == ("Confirmed" if confirm else "Refused")
    assert text_of(results[0]).startswith(expected)
    assert example.waiting == {}
    assert [r["outcome"] for r in example.records] == ["accept" if confirm else "decline"]
