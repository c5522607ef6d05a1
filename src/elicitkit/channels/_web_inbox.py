"""The web inbox: elicitkit's own page lists each person's open questions, live, and takes their answers.

A tool asks with `via=web()` (the inbox of whoever called it) or
`via=web("alice")`; alice opens `/elicit/inbox` (who she is comes from
`Elicitation(page_identity=...)`), sees the question with its form, and
answers it there. By default only she may answer (`Via.approvers`).

The index lives in the store, so every node sees it and it survives restarts:
each open question is an entry of its principal's inbox (the store's inbox
operations; the inbox is named by the hex SHA-256 of the principal, which is
never stored in the clear). An entry is the question as the page needs it
(token, message, schema, tool, expiry), sealed for the principal, and it
expires with the question. `post` adds a question, `close` removes it, and
both tell every node's event streams for that inbox that it changed. The
pages, the event stream and the answer form are in `elicitkit._web.inbox_page`;
all of them reach elicitkit through the desk's `InboxDesk` seam.

Security: the page shows a person only their own inbox; an answer needs the
page's CSRF cookie and field, and the desk takes it only from an approver,
validated, once. The inbox is one of elicitkit's pages, so it may ask for
secret fields (password inputs); chats may not.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from starlette.routing import Route

from elicitkit._web.inbox_page import InboxDesk, InboxPages, unrenderable
from elicitkit.channels.base import ChannelRefused, Closing, Desk, Prompt

__all__ = ["WebInbox"]

logger = logging.getLogger("elicitkit")


class WebInbox:
    """The web inbox channel: questions asked `via=web(...)` wait on elicitkit's page `/elicit/inbox`.

    Add it with `Elicitation(server, channels=[WebInbox()], page_identity=...)`:
    `page_identity` tells who opens the page, and so whose inbox it shows.
    """

    own_pages = True
    """One of elicitkit's own pages: a question goes to one principal's inbox, and may have secret fields."""

    def __init__(self, *, name: str = "web") -> None:
        self.name = name
        self._desk: InboxDesk | None = None
        self._base_url: Callable[[], str] = lambda: ""

    def bind(self, desk: Desk, base_url: Callable[[], str]) -> None:
        if not isinstance(desk, InboxDesk):
            raise TypeError("WebInbox is served by elicitkit: add it with Elicitation(server, channels=[WebInbox()])")
        self._desk = desk
        self._base_url = base_url

    @property
    def desk(self) -> InboxDesk:
        if self._desk is None:
            raise RuntimeError("This WebInbox was not added to an Elicitation: Elicitation(server, channels=[...])")
        return self._desk

    def routes(self) -> Sequence[Route]:
        return InboxPages(self, self.desk, self._base_url).routes()

    # -- the channel -------------------------------------------------------------------

    async def post(self, prompt: Prompt) -> dict[str, Any]:
        """Add the question to its principal's inbox and tell the pages open on it.

        Raises:
            ChannelRefused: the server has no `page_identity` (nobody could open the inbox), or a field has no control.
        """
        desk = self.desk
        if desk.page_identity is None:
            raise ChannelRefused(
                "the web inbox needs to know who opens it: pass Elicitation(server, page_identity=...)"
            )
        principal = prompt.target
        if principal is None:
            raise ChannelRefused("the web inbox shows a question to a principal, and this one has none")
        reason = unrenderable(prompt.schema)
        if reason is not None:
            raise ChannelRefused(reason)
        entry = {
            "token": prompt.token,
            "message": prompt.message,
            "schema": prompt.schema,
            "tool": prompt.tool,
            "expires_at": prompt.expires_at,
            "secret": list(prompt.secret_fields),
            "posted_at": time.time(),
        }
        await desk.file_in_inbox(principal, prompt.id, entry, prompt.expires_at)
        await self._announce(principal)
        return {"inbox": True}

    async def close(self, prompt: Prompt, ref: dict[str, Any], closing: Closing) -> None:
        """Take the question out of the inbox (whatever the outcome) and tell the pages open on it."""
        if prompt.target is not None:
            await self.desk.unfile(prompt.target, prompt.id)
            await self._announce(prompt.target)

    # -- the index, as the pages read it ------------------------------------------------

    async def questions(self, principal: str) -> list[Prompt]:
        """The open questions in `principal`'s inbox, oldest first."""
        desk = self.desk
        found: list[tuple[float, Prompt]] = []
        for entry_id, entry in (await desk.inbox(principal)).items():
            if entry is None:
                logger.warning("Inbox entry %s cannot be opened (another secret, or altered); skipped", entry_id)
                continue
            prompt = Prompt(
                id=entry_id,
                token=entry["token"],
                message=entry["message"],
                schema=entry["schema"],
                target=principal,
                expires_at=entry["expires_at"],
                tool=entry["tool"],
                secret_fields=tuple(entry["secret"]),
            )
            if await desk.prompt(prompt.token) is None:
                # Closed while the node that asked it was down (so `close` never ran): drop it.
                await desk.unfile(principal, entry_id)
                continue
            found.append((entry["posted_at"], prompt))
        return [prompt for _, prompt in sorted(found, key=lambda item: item[0])]

    def changes(self, principal: str) -> AbstractAsyncContextManager[AsyncIterator[bytes]]:
        """A message each time `principal`'s inbox changes, on any node, for as long as the context is open."""
        return self.desk.inbox_changes(principal)

    async def _announce(self, principal: str) -> None:
        try:
            await self.desk.inbox_changed(principal)
        except Exception as exc:
            # The question is in the store all the same: a reload shows it.
            logger.warning("Could not announce a change of a web inbox (%s)", type(exc).__name__)
