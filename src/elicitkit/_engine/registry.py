"""The runs and open questions this process holds, and how they are found."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from elicitkit._engine.question import Question
from elicitkit._engine.run import Final, Run

__all__ = ["Ended", "Registry"]


@dataclass(frozen=True, slots=True)
class Ended:
    """A 2026-07-28 run that finished here, kept a while so that its last retry, sent again (its response was
    lost on the way), gets the same final outcome; the rest of the run is gone."""

    principal: str | None
    tool: str
    nonce: str
    """The round its last retry spent."""
    answers: bytes
    """The fingerprint of that retry's answers: a resend has the same, another retry with this round does not."""
    final: Final
    expires_at: float


class Registry:
    """Runs by id, the questions an answer may name by id, and each session's open question."""

    def __init__(self) -> None:
        self.runs: dict[str, Run] = {}
        self.answerable: dict[str, Question] = {}
        """Open questions answered from outside their run's requests, by the id an answer names: the model's
        `elicitId`, a page link's question, a channel message's question."""
        self.stopping = 0
        """How many of the server's lifespans are shutting down now (runs cancelled then keep what they await)."""
        self.parked: dict[str, Run] = {}
        """Hosted runs waiting for their next request, the longest waiting first (hibernation evicts from here)."""
        self._session_questions: dict[object, Question] = {}
        self._ended: dict[str, Ended] = {}
        self._ending_order: deque[tuple[float, str]] = deque()
        """When each kept run expires, the soonest first (every run is kept as long)."""

    @property
    def pending_questions(self) -> int:
        return sum(len(run.pending) for run in self.runs.values())

    def hosted_run(self, run_id: str) -> Run | None:
        """The run, when this process hosts it (inline runs cannot be resumed from outside their request)."""
        run = self.runs.get(run_id)
        return run if run is not None and run.hosted else None

    def keep_ended(self, run_id: str, ended: Ended, now: float) -> None:
        """Remember a finished run's last round and outcome until `ended.expires_at`."""
        self.drop_expired(now)
        self._ended[run_id] = ended
        self._ending_order.append((ended.expires_at, run_id))

    def ended(self, run_id: str, now: float) -> Ended | None:
        """The finished run `run_id`, while it is kept."""
        self.drop_expired(now)
        return self._ended.get(run_id)

    def drop_expired(self, now: float) -> None:
        """Forget the finished runs kept until `now` or before."""
        order = self._ending_order
        while order and order[0][0] <= now:
            _, run_id = order.popleft()
            ended = self._ended.get(run_id)
            if ended is not None and ended.expires_at <= now:
                del self._ended[run_id]

    def unpark(self, run: Run) -> None:
        """A request has come for `run`: it is no longer one that waits, so it cannot be evicted."""
        self.parked.pop(run.id, None)

    def release(self, run: Run) -> None:
        """`run` ended here (finished, expired, or hibernated): forget it, unless a replay holds its id now."""
        if self.runs.get(run.id) is run:
            del self.runs[run.id]
        if self.parked.get(run.id) is run:
            del self.parked[run.id]

    def track(self, key: str, question: Question) -> None:
        """Answers naming `key` go to `question` from now on."""
        self.answerable[key] = question

    def untrack(self, key: str, question: Question) -> None:
        if self.answerable.get(key) is question:
            del self.answerable[key]

    def claim_session(self, question: Question) -> None:
        """Make `question` its session's one open question; the previous one is cancelled."""
        key = question.caller[1]
        if key is None:
            return
        previous = self._session_questions.get(key)
        self._session_questions[key] = question
        if previous is not None:
            previous.cancel()

    def forget(self, question: Question) -> None:
        """`question` is closed (answered, timed out, withdrawn): nothing reaches it any more."""
        if question.is_open and question.run_id is not None:  # an answered one left its run when answered
            run = self.runs.get(question.run_id)
            if run is not None:
                run.closed(question)
        self.untrack(question.id, question)
        key = question.caller[1]
        if key is not None and self._session_questions.get(key) is question:
            del self._session_questions[key]
