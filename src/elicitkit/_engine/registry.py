"""The runs and open questions this process holds, and how they are found."""

from __future__ import annotations

from elicitkit._engine.ended import EndedRuns
from elicitkit._engine.question import Question
from elicitkit._engine.run import Run

__all__ = ["Registry"]


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
        self.ended = EndedRuns()
        """Runs that finished here, kept a while for a resend of their last retry."""

    @property
    def pending_questions(self) -> int:
        return sum(len(run.pending) for run in self.runs.values())

    def hosted_run(self, run_id: str) -> Run | None:
        """The run, when this process hosts it (inline runs cannot be resumed from outside their request)."""
        run = self.runs.get(run_id)
        return run if run is not None and run.hosted else None

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
        """Make `question` its session's one open question; the previous one is cancelled.

        (A 2026-07-28 caller's session is its authenticated principal. An anonymous one has none: the protocol has
        no sessions, and the SDK gives every request a connection of its own and all of them one shared outbound,
        so anything taken for a session would make every anonymous caller one, cancelling each other's questions.)
        """
        key = question.caller[1]
        if key is None:
            return
        previous = self._session_questions.get(key)
        self._session_questions[key] = question
        if previous is not None:
            previous.cancel()

    def kept_for_restart(self, run: Run, question: Question, now: float) -> bool:
        """Whether `question`'s record outlives this process: the server is shutting down while the question of a
        hosted run is still open and in time, so its answer, sent after the restart, replays the run (not so when
        the run ends, or the question is answered or expires)."""
        return run.hosted and self.stopping > 0 and question.answer is None and now < question.expires_at

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
