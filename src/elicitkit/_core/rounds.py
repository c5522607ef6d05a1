"""The one-time nonce a 2026-07-28 retry must echo: each round's `requestState` works once."""

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
        """Hand out a fresh nonce; any earlier one stops working."""
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
