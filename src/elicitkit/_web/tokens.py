"""Opaque, sealed, expiring links for elicitkit's pages.

A link token seals (AES-256-GCM) the question id, the principal the question
belongs to, its purpose (`form` or `callback`) and an expiry. Anyone can hold
it; nobody can read, forge or alter it, and it has one spelling only. It is usable once: the store records
its use. Without a configured secret, tokens are sealed under a key made when
the process starts, so they work for that process only.
"""

from __future__ import annotations

import base64
import json
import os
import re
import time
from dataclasses import dataclass
from typing import Any, Literal

from elicitkit._crypto import Sealer
from elicitkit._errors import TamperedRecord

__all__ = ["InvalidLink", "Link", "LinkTokens"]

Purpose = Literal["form", "callback", "go", "browser", "channel"]
_AAD = b"elicitkit/v1/link"


class InvalidLink(Exception):
    """A link that cannot be honoured; `reason` is safe to show the person."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Link:
    question_id: str
    principal: str | None
    purpose: Purpose
    expires_at: float
    target: str | None = None
    """For `go` links: where the person is sent once their browser is bound to the question."""
    by: tuple[str, str, str | None] | None = None
    """For a form link a channel handed to an approver: (channel, user id, name), who answers through it."""


class LinkTokens:
    """Mints and reads link tokens."""

    def __init__(self, secrets: list[str] | None) -> None:
        self._sealer = Sealer(secrets) if secrets else Sealer([os.urandom(32).hex()])

    def mint(self, link: Link) -> str:
        payload: dict[str, Any] = {"q": link.question_id, "p": link.principal, "u": link.purpose, "e": link.expires_at}
        if link.target is not None:
            payload["t"] = link.target
        if link.by is not None:
            payload["b"] = list(link.by)
        return _text(self._sealer.seal(None, json.dumps(payload, separators=(",", ":")).encode(), aad=_AAD))

    def read(self, token: str, purpose: Purpose) -> Link:
        """The link a token stands for.

        Raises:
            InvalidLink: the token is malformed, forged, altered, for another page, or expired.
        """
        try:
            payload = json.loads(self._sealer.open(None, _bytes(token), aad=_AAD))
            by = payload.get("b")
            link = Link(
                str(payload["q"]),
                payload["p"],
                payload["u"],
                float(payload["e"]),
                payload.get("t"),
                (str(by[0]), str(by[1]), None if by[2] is None else str(by[2])) if by is not None else None,
            )
        except (ValueError, KeyError, TypeError, TamperedRecord):
            raise InvalidLink("This link is not valid. Ask the assistant for a new one.") from None
        if link.purpose != purpose:
            raise InvalidLink("This link is not valid. Ask the assistant for a new one.")
        if time.time() >= link.expires_at:
            raise InvalidLink("This link has expired. Ask the assistant for a new one.")
        return link


_ALPHABET = re.compile(r"[A-Za-z0-9_-]*")


def _text(sealed: bytes) -> str:
    return base64.urlsafe_b64encode(sealed).decode().rstrip("=")


def _bytes(token: str) -> bytes:
    """The sealed bytes of a token `_text` wrote, and only of such a token.

    Python's base64 decoder skips characters outside the alphabet and ignores a last character's unused bits,
    so one link would have many spellings: a token must be exactly the text it decodes to.
    """
    if not _ALPHABET.fullmatch(token):
        raise ValueError("not base64url")
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    if _text(raw) != token:
        raise ValueError("not the canonical spelling")
    return raw
