"""The one-time tokens elicitkit spends in the store, named in one place.

An answer is taken once, across every node, by spending a *claim* under its
run: the round nonce a 2026-07-28 retry echoes, the `elicitId` the model
answers, or the question a page or a channel answers (so a page link, too,
works once). A page link is also bound once, to the first browser that opens
it (`link_binding`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import NamedTuple

from elicitkit._core.jsontext import canonical_any
from elicitkit._core.kinds import Answer

__all__ = ["Claim", "fingerprint", "link_binding", "spent_token"]


class Claim(NamedTuple):
    """What an arrival of answers spends, once: `text` under its run; `round` marks a retry's round nonce, which
    must also be the round the run expects now."""

    text: str
    round: bool = False

    @classmethod
    def of_round(cls, nonce: str) -> Claim:
        return cls(nonce, round=True)

    @classmethod
    def of_question(cls, source: str, question_id: str) -> Claim:
        """The claim of a page's or a channel's answer to one question."""
        return cls(f"{source}:{question_id}")


def spent_token(run_id: str, claim: Claim) -> str:
    """The store token of `claim` under its run, the same whichever node spends it.

    The run id in braces is a Redis Cluster hash tag: the token lives in its run's slot, so a round is taken
    (token, journal, questions) in one atomic step there too.
    """
    return f"round:{{{run_id}}}:{claim.text}"


def fingerprint(answers: Mapping[str, Answer]) -> bytes:
    """What a claim is spent with: the answers that spent it, so that a resend of the very same answers (a dropped
    connection, a doubled retry) is told apart from a used claim replayed with others."""
    text = canonical_any({key: [answer.action, answer.content] for key, answer in answers.items()})
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:16]


def link_binding(question_id: str, holder: tuple[str, str] | None = None) -> str:
    """The store token that binds a question's page link to the first browser opening it, the same on every node.

    A question has one link (its form, or a third-party flow's `/elicit/go/` hop and callback); a channel hands
    each approver a form link of their own (`holder`: their channel and user id), which binds apart.
    """
    if holder is None:
        return f"bind:{question_id}"
    return f"bind:{question_id}:" + hashlib.sha256("\0".join(holder).encode("utf-8", "surrogatepass")).hexdigest()
