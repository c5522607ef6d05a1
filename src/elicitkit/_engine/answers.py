"""Where answers arrive: each is taken through the door of the node that holds its run.

An arrival is taken here when this process holds its run; it travels to the
owner node when another live node does (and goes through that node's door);
and when no live node holds the run, this node takes the run over, takes the
answers from the questions' records and replays the body from its journal.
A 2026-07-28 retry and the model's `sendElicitationResult` then wait for the
run's next outcome; a page or a channel hears what the door made of its answer.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ElicitResult
from pydantic import ValidationError

from elicitkit import _mcp
from elicitkit._core.codec import decode_state
from elicitkit._core.kinds import BY_ANSWER_TOOL, Answer
from elicitkit._core.once import Claim
from elicitkit._core.replies import Ruling
from elicitkit._engine import refusals
from elicitkit._engine.arrival import Arrival, Taken
from elicitkit._engine.cluster import Cluster, decode_outcome, encode_outcome
from elicitkit._engine.door import Door, Live, Recorded
from elicitkit._engine.host import RunHost
from elicitkit._engine.policy import Policy
from elicitkit._engine.records import QuestionRecord, Records
from elicitkit._engine.registry import Registry
from elicitkit._engine.tenure import NotHeld
from elicitkit._errors import InvalidElicitationContent
from elicitkit._fallback import PROBLEMS_META, error_result, parse_send_args
from elicitkit._schema import authored

__all__ = ["Answers"]

logger = logging.getLogger("elicitkit")


class Answers:
    """Routes each arrival of answers to the door of the node that holds its run."""

    def __init__(
        self, policy: Policy, registry: Registry, records: Records, cluster: Cluster, host: RunHost, door: Door
    ) -> None:
        self.policy = policy
        self.registry = registry
        self.records = records
        self.cluster = cluster
        self.host = host
        self.door = door
        self.stages = door.stages

    # -- from the MCP client -----------------------------------------------------------------

    async def retry(
        self, rctx: ServerRequestContext[Any, Any], params: Mapping[str, Any], call_next: CallNext
    ) -> HandlerResult:
        """A 2026-07-28 retry carrying one of our `requestState`s."""
        decoded = decode_state(str(params.get("requestState")))
        if decoded is None:
            raise refusals.unknown()
        run_id, nonce, owner = decoded
        arrival = Arrival(
            source="retry",
            principal=_mcp.principal(rctx),
            answers=_parse_responses(params.get("inputResponses")),
            claim=Claim.of_round(nonce),
            run_id=run_id,
            tool=str(params.get("name")),
        )
        return await self._request(rctx, call_next, arrival, owner)

    async def fallback_answer(
        self, rctx: ServerRequestContext[Any, Any], arguments: Any, call_next: CallNext
    ) -> HandlerResult:
        """The fallback system tool: answer an open question by its elicitId, then wait like a retry."""
        args = parse_send_args(arguments, self.policy.fallback_tool)
        if isinstance(args, CallToolResult):
            return args
        arrival = Arrival(
            source="model",
            principal=_mcp.principal(rctx),
            answers={args.elicit_id: Answer(args.action, args.content)},
            claim=Claim(args.elicit_id),
            session=_mcp.session_key(rctx),
        )
        return await self._request(rctx, call_next, arrival)

    async def _request(
        self, rctx: ServerRequestContext[Any, Any], call_next: CallNext, arrival: Arrival, owner: str | None = None
    ) -> HandlerResult:
        """`owner`: the node the run's `requestState` says held it (tried first when it is another)."""
        resent = self.registry.ended.resend(arrival, anyio.current_time())
        if resent is not None:
            return resent
        live = self._live(arrival)
        if live is not None:
            try:
                return await self._request_here(rctx, live, arrival)
            except NotHeld:
                pass  # a stale copy of a run another node took over: the arrival goes there
        try:
            return await self._request_elsewhere(rctx, call_next, arrival, owner)
        except NotHeld:
            raise refusals.taking_over() from None  # taken over again while this node replayed it

    async def _request_here(
        self, rctx: ServerRequestContext[Any, Any] | None, live: Live, arrival: Arrival
    ) -> HandlerResult:
        """Take a retry's or the model's answers for a run held here, then hand back the run's next outcome."""
        run = live.run
        if run is None or run.ending:
            self.stages.lost(arrival)
            if arrival.source == "retry":
                raise refusals.ended() if run is not None else refusals.unknown()
            return self._not_open(arrival)
        self.registry.unpark(run)  # not to hibernate while its answers are journaled
        taken = await self.door.take(live, arrival)
        if taken.refusal is not None:
            if taken.refusal == "reused" and self.policy.shared and await self.host.tenure.held_elsewhere(run):
                raise NotHeld
            raise _refused(taken)
        if arrival.source == "model" and not taken.resent:
            told = self._told_model(taken, arrival)
            if told is not None:
                return told
        if arrival.source == "model":
            run.resume()
        # Taken, or taken before by this very arrival (a resend after a dropped connection): the run's next outcome.
        return await self.host.await_outcome(run, rctx)

    async def _request_elsewhere(
        self, rctx: ServerRequestContext[Any, Any], call_next: CallNext, arrival: Arrival, hint: str | None = None
    ) -> HandlerResult:
        """The run is not held here: its owner takes the answers, or this node takes the run over and replays it.

        `hint`, the node that handed out the retry's round, is sent the answers first, without looking the run up:
        it checks the caller and tool itself, and says "not held here" to anything that is not its run's, which
        then goes the long way (the run's record names its owner, or the run is not the caller's).
        """
        principal = arrival.principal
        if hint is not None and hint != self.policy.node and arrival.run_id is not None:
            outcome = await self._forward(hint, arrival, wait=self.policy.run_expiry)
            if outcome is not None:
                return decode_outcome(outcome)
        if arrival.run_id is None:  # the model's answer names a question: find its run from its record
            asked = await self.records.load_question(arrival.question_id, principal)
            if asked is None or asked.route not in BY_ANSWER_TOOL:
                self.stages.lost(arrival)
                return self._not_open(arrival)
            arrival = arrival._replace(run_id=asked.run_id)
            held = self.registry.hosted_run(asked.run_id)
            if held is not None:  # the question closed here already
                if held.principal != principal or held.ending:
                    self.stages.lost(arrival)
                    return self._not_open(arrival)
                try:
                    if asked.observable and arrival.answers[arrival.question_id].action == "accept":
                        # Our page completed it before the model said the person went: hand over what came next.
                        held.resume()
                        return await self.host.await_outcome(held, rctx)
                    return await self._request_here(rctx, Live(held, {}), arrival)  # a resend, or too late
                except NotHeld:
                    pass  # a stale copy of a run another node took over: the arrival goes there
        assert arrival.run_id is not None
        run_id = arrival.run_id
        found = await self.records.load_run(run_id, principal)
        if found is None or (arrival.source == "retry" and found[1].tool != arrival.tool):
            self.stages.lost(arrival)
            if arrival.source == "model":
                return self._not_open(arrival)
            raise refusals.unknown()
        owner, record = found
        for _ in range(3):
            # Forwarding finds out fast when nobody listens, then checks the heartbeat. (The hinted node said "not
            # held here" or was gone a moment ago: where the record still names it, the run is taken over.)
            if owner not in (self.policy.node, hint):
                outcome = await self._forward(owner, arrival, wait=self.policy.run_expiry)
                if outcome is not None:
                    return decode_outcome(outcome)
            hint = None
            if await self.records.claim_run(run_id, owner):
                taken = await self._take_recorded(arrival)
                if taken.refusal is not None:
                    raise _refused(taken)
                if arrival.source == "model" and not taken.resent:
                    told = self._told_model(taken, arrival)
                    if told is not None:
                        return told
                return await self.host.replay(rctx, call_next, run_id, principal, record)
            found = await self.records.load_run(run_id, principal)
            if found is None:
                self.stages.lost(arrival)
                raise refusals.unknown()
            owner, record = found
        raise refusals.taking_over()

    # -- from elicitkit's pages and the human channels --------------------------------------

    async def take(self, arrival: Arrival) -> Taken:
        """Take a page's or a channel's answer to one question, on the node that holds its run.

        When no live node holds the run, a journaled run keeps the answer for its replay (the next request
        brings it back); the answer to a question of any other run can no longer be taken (stale).
        """
        live = self._live(arrival)
        if live is not None:
            return await self.door.take(live, arrival)
        records: dict[str, QuestionRecord] | None = None  # a task's answers: its run's stored questions
        hosted = True
        if arrival.run_id is None:
            record = await self.records.load_question(arrival.question_id, arrival.principal)
            if record is None:
                self.stages.lost(arrival)
                return _stale(arrival)
            arrival = arrival._replace(run_id=record.run_id)
            records, hosted = {arrival.question_id: record}, record.hosted
            owner = await self.records.owner_of(record.run_id) if hosted else record.node
        else:
            owner = await self.records.owner_of(arrival.run_id)
        if owner is not None and owner != self.policy.node and await self.cluster.alive(owner):
            outcome = await self._forward(owner, arrival, wait=5.0)
            if outcome is not None:
                return Taken.from_wire(outcome)
        if not hosted:
            logger.warning("Question %s was answered, but the run that asked it is gone", arrival.question_id)
            self.stages.lost(arrival)
            return _stale(arrival)
        taken = await self._take_recorded(arrival, records)
        # A replay here may have picked the question up meanwhile, after it read the journal: it gets the answer.
        late = self._live(arrival)
        for key, ruling in taken.rulings.items():
            question = None if late is None else late.questions.get(key)
            if ruling is Ruling.ANSWERS and question is not None:
                question.resolve(arrival.answers[key], arrival.by)
        return taken

    # -- from other nodes --------------------------------------------------------------------

    async def forwarded(self, run_id: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        """An arrival another node received for a run held here: take it through this node's door.

        Returns the run's next outcome (a retry, the model) or what the door made of it (a page, a channel);
        None when the run is not held here.
        """
        arrival = Arrival.from_wire(payload["arrival"])
        try:
            resent = self.registry.ended.resend(arrival, anyio.current_time())
        except MCPError as exc:
            return encode_outcome(error=exc)
        if resent is not None:
            return encode_outcome(resent)
        live = self._live(arrival, forwarded=True)
        if live is None or live.run is None or live.run.id != run_id:
            return None
        if arrival.source in ("retry", "model"):
            try:
                return encode_outcome(await self._request_here(None, live, arrival))
            except NotHeld:
                return None  # the sender finds the node that owns the run now
            except Exception as exc:
                return encode_outcome(error=exc)
        taken = await self.door.take(live, arrival)
        return taken.to_wire()

    # -- the pieces --------------------------------------------------------------------------

    def _live(self, arrival: Arrival, *, forwarded: bool = False) -> Live | None:
        """The questions `arrival` answers, when this process holds their run (None: it does not)."""
        if arrival.run_id is not None and arrival.source in ("retry", "task"):
            run = self.registry.hosted_run(arrival.run_id)
            if run is None:
                return None
            wrong_tool = arrival.tool is not None and run.tool != arrival.tool
            if wrong_tool or run.principal != arrival.principal:
                return Live(None, {})  # not this caller's: as if unknown
            return Live(run, run.pending)
        question = self.registry.answerable.get(arrival.question_id)
        if question is None:
            # Answered already, on a run held here (a forwarded resend names its run): the door tells which.
            run = None if arrival.run_id is None else self.registry.runs.get(arrival.run_id)
            return None if run is None or run.principal != arrival.principal else Live(run, {})
        run = self.registry.runs.get(question.run_id) if question.run_id is not None else None
        caller = question.caller
        if caller[0] != arrival.principal:
            return Live(run, {})
        if arrival.source == "model" and not forwarded and caller[1] != arrival.session:
            return Live(run, {})  # the model answers on the session it was asked on
        return Live(run, {arrival.question_id: question})

    async def _take_recorded(self, arrival: Arrival, records: Mapping[str, QuestionRecord] | None = None) -> Taken:
        """Take the answers from their questions' records, for a run no live node holds."""
        assert arrival.run_id is not None
        principal = arrival.principal
        if records is None:
            records = await self.records.run_questions(arrival.run_id, principal)
        journal = await self.records.journal(arrival.run_id, principal)
        return await self.door.take(Recorded(arrival.run_id, principal, records, journal), arrival)

    async def _forward(self, owner: str, arrival: Arrival, *, wait: float) -> dict[str, Any] | None:
        assert arrival.run_id is not None
        outcome = await self.cluster.forward(
            owner,
            arrival.run_id,
            arrival.principal,
            {"op": "arrival", "arrival": arrival.to_wire()},
            self.policy.forward_timeout,
            wait,
            check_every=self.policy.lease / 3,
        )
        self.stages.published(arrival, owner, outcome is not None)
        return outcome

    def _told_model(self, taken: Taken, arrival: Arrival) -> CallToolResult | None:
        """What the model is told at once about its answer; None when the run goes on (the answer was taken, the
        person went to our page, or the question is out of attempts) and the model gets the run's next outcome."""
        ruling = taken.ruling
        if ruling in (Ruling.STALE, Ruling.DUPLICATE):
            return self._not_open(arrival)
        if ruling is Ruling.REFUSED and not taken.exhausted:
            return self._still_open(taken.problems[arrival.question_id])
        return None

    def _not_open(self, arrival: Arrival) -> CallToolResult:
        tool = self.policy.fallback_tool
        return error_result(
            f"{tool}: no open question has elicitId {arrival.question_id!r}. It may have been answered already, "
            "have expired, or belong to another user; call the original tool again if needed."
        )

    def _still_open(self, problems: InvalidElicitationContent) -> CallToolResult:
        tool = self.policy.fallback_tool  # (the meta: for elicitkit's view in the chat, fields and authors' words)
        return error_result(
            f"{tool}: {problems} The question is still open: ask the user again and call {tool} with corrected content",
            meta={PROBLEMS_META: [{"path": p.dotted, "said": authored(p.message)} for p in problems.problems]},
        )


def _refused(taken: Taken) -> Exception:
    if taken.refusal == "reused":
        return refusals.reused()
    if taken.refusal == "ended":
        return refusals.ended()
    return refusals.unknown()


def _stale(arrival: Arrival) -> Taken:
    return Taken(rulings=dict.fromkeys(arrival.answers, Ruling.STALE))


def _parse_responses(raw: Any) -> dict[str, Answer]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise refusals.invalid_responses("inputResponses must be an object keyed by input request")
    answers: dict[str, Answer] = {}
    for key, value in raw.items():
        try:
            result = ElicitResult.model_validate(value)
        except ValidationError:
            raise refusals.invalid_responses(f"inputResponses[{key!r}] is not a valid elicitation result") from None
        answers[str(key)] = Answer(result.action, result.content, result.meta)
    return answers
