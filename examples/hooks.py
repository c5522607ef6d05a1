"""treasury: three hooks every money-moving server wants, on a tool that asks before it pays.

- a **policy veto** (`before_ask`): payments are only asked for while the
  payments desk is open; otherwise the tool is told why and nobody is asked;
- **redact and audit** (`after_answer`): every outcome goes to an audit sink,
  with the account number masked;
- **four eyes** (`before_answer`): an approval above 10,000 waits for a second
  person, who confirms it with the `approve_payment` tool (a different
  principal when the server authenticates its callers).

Run it with `python examples/hooks.py` (stdio) or watch `tests/test_hooks_example.py`.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

from elicitkit import (
    Accepted,
    Declined,
    Elicitation,
    ElicitationResult,
    ElicitationVetoed,
    Outcome,
    QuestionInfo,
)

server = MCPServer("treasury")
hitl = Elicitation(server, timeout=300)

FOUR_EYES_ABOVE = 10_000
SECOND_APPROVAL_WAIT = 600.0


class Payment(BaseModel):
    approved: bool = Field(description="Pay it?")
    iban: str = Field(min_length=15, max_length=34, description="Account to pay from")


class Desk:
    """The payments desk: open or closed (a real server would read a calendar)."""

    open = True


# -- policy veto: nobody is asked while the desk is closed ---------------------------------------------


@hitl.before_ask(tools={"pay"})
def desk_must_be_open(question: QuestionInfo) -> None:
    if not Desk.open:
        raise ElicitationVetoed("The payments desk is closed; payments resume at 08:00")


# -- redact and audit: every outcome recorded, the account number masked -------------------------------

audit_sink = logging.getLogger("treasury.audit")
records: list[dict[str, Any]] = []  # what the sink received, kept for the example's test


@hitl.after_answer
def audit(question: QuestionInfo, outcome: Outcome) -> None:
    content = dict(outcome.result.content) if isinstance(outcome.result, Accepted) else {}
    if "iban" in content:
        content["iban"] = f"{content['iban'][:4]}…{content['iban'][-4:]}"
    record = {"question": question.id, "tool": question.tool, "who": question.principal, "outcome": outcome.name}
    record["answer"] = content
    records.append(record)
    audit_sink.info(json.dumps(record))


# -- four eyes: a large approval waits for a second person ---------------------------------------------


class SecondApproval:
    """An approval above the threshold, waiting for someone else to confirm it."""

    def __init__(self, question: QuestionInfo, amount: int) -> None:
        self.question = question
        self.amount = amount
        self.confirmed: bool | None = None
        self.decided = anyio.Event()


waiting: dict[str, SecondApproval] = {}


@hitl.before_answer(tools={"pay"})
async def four_eyes(question: QuestionInfo, result: ElicitationResult[Any]) -> ElicitationResult[Any] | None:
    amount = int((question.arguments or {}).get("amount", 0))
    if not (isinstance(result, Accepted) and result.data.approved and amount > FOUR_EYES_ABOVE):
        return None
    pending = waiting[question.id] = SecondApproval(question, amount)
    try:
        with anyio.move_on_after(SECOND_APPROVAL_WAIT):
            await pending.decided.wait()
    finally:
        del waiting[question.id]
    if pending.confirmed:
        return None
    return Declined(reason="a second approver did not confirm the payment")


@server.tool()
async def pay(amount: int, to: str, ctx: Context) -> str:
    """Pay `amount` to `to` after a person approves it (and a second one, above 10,000)."""
    try:
        answer = await hitl.elicit(ctx, f"Pay {amount} to {to}?", Payment)
    except ElicitationVetoed as exc:
        return f"Not paid: {exc.reason}"
    match answer:
        case Accepted(data=Payment(approved=True)):
            return f"Paid {amount} to {to}"
        case Declined(reason=str(reason)):
            return f"Not paid: {reason}"
        case _:
            return "Not paid"


@server.tool()
def pending_approvals() -> list[str]:
    """Payments waiting for a second approver: `question id: amount to whom`."""
    return [f"{qid}: {p.question.message}" for qid, p in waiting.items()]


@server.tool()
def approve_payment(question_id: str, confirm: bool, ctx: Context) -> str:
    """Confirm (or refuse) a large payment someone else approved."""
    pending = waiting.get(question_id)
    if pending is None or pending.decided.is_set():
        return "No payment is waiting for that id"
    approver = hitl.principal(ctx)
    if approver is not None and approver == pending.question.principal:
        return "A payment needs a second person: you approved it already"
    pending.confirmed = confirm
    pending.decided.set()
    return "Confirmed" if confirm else "Refused"


if __name__ == "__main__":
    server.run()
