"""Runs that finished here, kept a while so that their last retry, sent again, gets the same result.

A 2026-07-28 run's result travels on the response to its last retry. When that
response is lost with its connection (or the client sent the retry twice), the
client sends the same retry again, after the run has finished and let go of
everything else. For `run_expiry` — as long as the run would have waited for
that retry — this process keeps the round the last retry spent, the
fingerprint of its answers and the result; a resend gets the result, another
retry with that round is refused as reused. The run's record stays in the store
at least as long (see `Records.keep_finished_run`), so a resend reaching another
node is forwarded here.
"""

from __future__ import annotations

import json
from collections import deque
from typing import NamedTuple

from mcp.server.context import HandlerResult

from elicitkit._core.once import fingerprint
from elicitkit._engine import refusals
from elicitkit._engine.arrival import Arrival
from elicitkit._engine.messages import encode_outcome
from elicitkit._engine.run import Run

__all__ = ["Ended", "EndedRuns", "frozen"]


class Ended(NamedTuple):
    """What is kept of a finished run: who may resend its last retry, and what that retry gets.

    Text and numbers only, kept as a plain tuple: thousands are kept at once on a busy node, and such a tuple is
    nothing the garbage collector walks (the result as a model was some fifteen objects, walked at every full
    collection)."""

    principal: str | None
    tool: str
    nonce: str
    """The round its last retry spent."""
    answers: bytes
    """The fingerprint of that retry's answers: a resend has the same, another retry with this round does not."""
    result: bytes
    """The result, as JSON (`frozen`)."""
    expires_at: float


def frozen(result: HandlerResult) -> bytes:
    """`result` as the JSON it goes to the client as (as a forwarded outcome carries it), to be kept."""
    return json.dumps(encode_outcome(result)["result"]).encode()


class EndedRuns:
    """The finished runs kept for a resend, by run id, each for the same time (so they expire in order)."""

    def __init__(self) -> None:
        self._runs: dict[str, tuple[str | None, str, str, bytes, bytes, float]] = {}
        """`Ended` as plain tuples: the collector stops tracking a plain tuple of text and numbers (not a named one)."""
        self._order: deque[tuple[float, str]] = deque()

    def keep(self, run: Run, now: float, keep_for: float) -> bool:
        """Keep `run`, which finished, if it finished with a result after a retry; whether it is kept."""
        final = run.final
        if run.last_retry is None or final is None or final.error is not None or run.task:
            return False
        nonce, answers = run.last_retry
        self.add(run.id, Ended(run.principal, run.tool, nonce, answers, frozen(final.result), now + keep_for), now)
        return True

    def add(self, run_id: str, ended: Ended, now: float) -> None:
        self.drop_expired(now)
        self._runs[run_id] = tuple.__new__(tuple, ended)
        self._order.append((ended.expires_at, run_id))

    def get(self, run_id: str, now: float) -> Ended | None:
        """The finished run `run_id`, while it is kept."""
        self.drop_expired(now)
        kept = self._runs.get(run_id)
        return None if kept is None else Ended._make(kept)

    def resend(self, arrival: Arrival, now: float) -> HandlerResult | None:
        """The result for `arrival` when it is a retry of a finished run kept here (None: it is not).

        Raises the `request_state_reused` refusal for a retry with another round or other answers.
        """
        if arrival.source != "retry" or arrival.run_id is None or arrival.claim is None:
            return None
        ended = self.get(arrival.run_id, now)
        if ended is None or ended.principal != arrival.principal or ended.tool != arrival.tool:
            return None
        if (arrival.claim.text, fingerprint(arrival.answers)) != (ended.nonce, ended.answers):
            raise refusals.reused()
        result: HandlerResult = json.loads(ended.result)
        return result

    def drop_expired(self, now: float) -> None:
        """Forget the runs kept until `now` or before."""
        order = self._order
        while order and order[0][0] <= now:
            _, run_id = order.popleft()
            kept = self._runs.get(run_id)
            if kept is not None and kept[5] <= now:
                del self._runs[run_id]
