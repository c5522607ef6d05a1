"""The one-time nonce a 2026-07-28 retry must echo: each round's `requestState` works once.

A round is handed out until a retry uses it: every result handed out meanwhile (a resend of the retry that
led to it, a client told to come back later) carries the same nonce, so a client that lost one of them holds
another that works. Once used, the next round gets a fresh nonce.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from elicitkit._core.kinds import new_id

__all__ = ["Round"]


@dataclass(slots=True)
class Round:
    """The nonce of the round handed to the client, while a retry is expected."""

    nonce: str | None = None

    def open(self) -> str:
        """The nonce the next retry must echo: the one handed out already, until a retry uses it; else a fresh one."""
        if self.nonce is None:
            self.nonce = new_id()
        return self.nonce

    def matches(self, nonce: str) -> bool:
        """Whether `nonce` is the current one (constant time), without using it."""
        return self.nonce is not None and secrets.compare_digest(self.nonce, nonce)

    def take(self, nonce: str) -> bool:
        """Use the nonce: True once for the current one; False when reused, stale or none is expected."""
        if not self.matches(nonce):
            return False
        self.nonce = None
        return True

    def close(self) -> None:
        self.nonce = None
