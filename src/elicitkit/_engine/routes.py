"""Routes: how one question reaches the person, chosen per question.

- `native`: 2025-11-25 `elicitation/create` on the session of the request
  waiting for the run (with progress keepalives while the person thinks);
- `mrtr`: 2026-07-28 `InputRequiredResult`, answered by the client's retry;
- `llm`: the client cannot show the form, so the tool result asks the model to
  ask the person and answer through the `sendElicitationResult` system tool;
- a custom fallback handler, or `ElicitationNotSupported`, per policy.
"""

from __future__ import annotations

import logging
from contextlib import suppress
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError, NoBackChannelError
from pydantic import ValidationError

from elicitkit import _mcp
from elicitkit._clients import Mode, modes_for
from elicitkit._engine.journal import Entry, digest_of
from elicitkit._engine.run import Answer, Question, Run
from elicitkit._errors import (
    ElicitationClientError,
    ElicitationNotSupported,
    ElicitationTimeout,
    InvalidElicitationContent,
    Problem,
)
from elicitkit._fallback import PendingQuestion

if TYPE_CHECKING:
    from elicitkit._engine.engine import Engine

__all__ = ["ask", "client_modes", "native_possible"]

KEEPALIVE_MESSAGE = "Waiting for a person to answer"
logger = logging.getLogger("elicitkit")


def client_modes(engine: Engine, rctx: ServerRequestContext[Any, Any]) -> frozenset[Mode]:
    return modes_for(engine.client_overrides, _mcp.client_info(rctx), _mcp.capabilities(rctx))


def native_possible(engine: Engine, rctx: ServerRequestContext[Any, Any], mode: Mode = "form") -> bool:
    """Can the client of `rctx` show `mode` itself, on this request's era?"""
    if mode not in client_modes(engine, rctx):
        return False
    return _mcp.is_mrtr(rctx.protocol_version) or rctx.session.can_send_request


async def ask(engine: Engine, ctx: Context[Any, Any], run: Run | None, question: Question, timeout: float) -> Answer:
    """Put `question` to the person on the best route; wait until `question.expires_at`.

    Raises:
        ElicitationTimeout: no answer in time (the message quotes `timeout`).
        ElicitationNotSupported: no route reaches the person.
        ElicitationClientError: the client answered with an error.
        InvalidElicitationContent: the client's reply was not an elicitation result.
    """
    own = _mcp.request_context(ctx)
    # A hosted run asks through whichever request is waiting for it now (the latest retry).
    rctx = run.rctx if run is not None and not run.inline and run.rctx is not None else own
    question.owner = run
    if run is not None and run.hosted:
        question.seq = run.advance()
        question.digest = digest_of(question.message, question.schema.wire)
        entry = run.journal.get(question.seq)
        if entry is not None and entry.kind == "answer" and entry.digest == question.digest:
            return Answer(entry.action, entry.content)
        if entry is not None:
            logger.info(
                "Run %s asks a different question at step %d than its journal holds; asking again", run.id, question.seq
            )
    question.caller = (_mcp.principal(rctx), _mcp.session_key(rctx))
    mrtr = _mcp.is_mrtr(rctx.protocol_version)
    what = "links (URL mode)" if question.mode == "url" else "elicitation forms"
    if native_possible(engine, rctx, "url" if question.mode == "url" else "form"):
        question.route = "mrtr" if mrtr else "native"
        if mrtr and (run is None or run.inline):
            raise ElicitationNotSupported(
                "On MCP 2026-07-28 a question can only be asked from a tool called through the server "
                "that Elicitation(server) is attached to, while the server's lifespan is running"
            )
    elif engine.fallback == "error" or (
        question.mode == "url" and not question.observable and engine.fallback == "llm"
    ):
        raise ElicitationNotSupported(f"The client did not declare that it can show {what}")
    elif engine.fallback == "llm":
        question.route = "llm"
        if run is None or run.inline:
            raise ElicitationNotSupported(
                f"The client cannot show {what}, and the fallback route needs the tool to run "
                "through the server that Elicitation(server) is attached to, while its lifespan is running"
            )
    else:
        answer = await _ask_handler(engine, ctx, question)
        if run is not None and run.hosted:
            entry = Entry("answer", question.digest, answer.action, answer.content)
            await engine.durability.record(run.id, run.principal, question.seq, entry)
        return answer
    if engine.one_pending_per_session:
        engine.claim_session(rctx, question)
    if question.observable:
        engine.url_questions[question.id] = question
    try:
        # One scope per question: its deadline is the timeout, and cancelling it withdraws the question.
        with anyio.CancelScope(deadline=question.expires_at) as scope:
            if question.route == "native":
                question.scope = scope
                if run is not None:
                    run.pending[question.id] = question
                await _ask_native(rctx, question, engine.keepalive)
            else:
                assert run is not None
                if question.route == "llm":
                    engine.by_elicit_id[question.id] = question
                await engine.save_question(run, question)
                run.ask(question)
                await question.wait()
    finally:
        question.scope = None
        engine.forget(question)
        if run is not None and run.hosted and question.route in ("mrtr", "llm") and question.mode == "form":
            # The stored record must not outlive the question: its elicitId must stop working. (A link's
            # record stays with its run; the journal says it was answered.)
            with anyio.CancelScope(shield=True), suppress(Exception):
                await engine.store.delete_question(question.id)
    if question.answer is None:
        raise ElicitationTimeout(timeout)
    if question.route == "native" and question.observable:
        # 2025-11-25: tell the client the out-of-band flow it opened has finished.
        with anyio.CancelScope(shield=True), suppress(Exception):
            await rctx.session.send_elicit_complete(question.id, related_request_id=rctx.request_id)
    return question.answer


async def _ask_handler(engine: Engine, ctx: Context[Any, Any], question: Question) -> Answer:
    assert callable(engine.fallback)
    remaining = question.expires_at - anyio.current_time()
    pending = PendingQuestion(question.id, question.message, question.schema.wire, question.expires_wall())
    with anyio.move_on_after(remaining):
        result = await engine.fallback(ctx, pending)
        return Answer(result.action, result.content)
    raise ElicitationTimeout(remaining)


async def _ask_native(rctx: ServerRequestContext[Any, Any], question: Question, keepalive: float | None) -> None:
    if question.mode == "url":
        assert question.url is not None
        send = rctx.session.elicit_url(question.message, question.url, question.id, related_request_id=rctx.request_id)
    else:
        send = rctx.session.elicit_form(question.message, question.schema.wire, related_request_id=rctx.request_id)
    try:
        if keepalive is None or not _wants_progress(rctx):
            result = await send
        else:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_keep_alive, rctx, keepalive)
                result = await send
                tg.cancel_scope.cancel()
    except NoBackChannelError:
        raise ElicitationNotSupported("This connection cannot carry a request to the client") from None
    except MCPError as exc:
        raise ElicitationClientError(exc.error.code, exc.error.message) from None
    except ValidationError:
        raise InvalidElicitationContent([Problem("", "the client's reply is not a valid elicitation result")]) from None
    if question.observable and result.action == "accept":
        # The person agreed to open our page; the answer comes when they submit it there.
        question.acknowledged = True
        await question.wait()
        return
    question.scope = None
    question.resolve(Answer(result.action, result.content))


def _wants_progress(rctx: ServerRequestContext[Any, Any]) -> bool:
    meta: Any = rctx.meta
    return bool(meta) and (meta.get("progress_token") is not None or meta.get("progressToken") is not None)


async def _keep_alive(rctx: ServerRequestContext[Any, Any], interval: float) -> None:
    """Progress notifications while the person thinks, so clients that reset their timeout on progress wait."""
    beat = 0
    while True:
        await anyio.sleep(interval)
        beat += 1
        await rctx.session.report_progress(beat, None, KEEPALIVE_MESSAGE)
