"""The runs and open questions this process holds, and how they are found."""

from __future__ import annotations

from elicitkit._engine.run import Question, Run

__all__ = ["Registry"]


class Registry:
    """Runs by id, open questions by id (fallback and page questions), and each session's open question."""

    def __init__(self) -> None:
        self.runs: dict[str, Run] = {}
        self.by_elicit_id: dict[str, Question] = {}
        """Questions the model answers through the fallback tool, by question id."""
        self.url_questions: dict[str, Question] = {}
        """Open URL questions that elicitkit's pages or callbacks complete, by question id."""
        self.channel_questions: dict[str, Question] = {}
        """Open questions on human channels, by question id."""
        self.stopping = 0
        """How many of the server's lifespans are shutting down now (runs cancelled then keep what they await)."""
        self.parked: dict[str, Run] = {}
        """Hosted runs waiting for their next request, the longest waiting first (hibernation evicts from here)."""
        self._session_questions: dict[object, Question] = {}

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

    def claim_session(self, key: object, question: Question) -> None:
        """Make `question` the session's one open question; the previous one is cancelled."""
        if key is None:
            return
        question.session = key
        previous = self._session_questions.get(key)
        self._session_questions[key] = question
        if previous is not None:
            previous.resolve_cancelled()

    def forget(self, question: Question) -> None:
        if question.owner is not None:
            question.owner.pending.pop(question.id, None)
        self.by_elicit_id.pop(question.id, None)
        self.url_questions.pop(question.id, None)
        if question.session is not None and self._session_questions.get(question.session) is question:
            del self._session_questions[question.session]
