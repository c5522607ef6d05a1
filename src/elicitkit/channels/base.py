"""What every human channel implements, and what elicitkit gives it.

A channel (the web inbox, Slack, Discord, Teams, or your own) does four things:

1. `post(prompt)`: show a question to people, return a reference to the message;
2. receive their replies on its own HTTP callbacks (`routes()`), check that each
   one really comes from the service (signatures, timestamps, replays), and hand
   it to the `Desk` with who sent it (and, for a decline, the reason they gave,
   if the channel asks for one). elicitkit reads each callback's body
   before the route runs, refusing one over the channel's `body_limit` (an
   optional attribute, in bytes; 1 MiB when absent) or slower than
   `BodyLimits.read_timeout`: `request.body()` is the exact bytes sent;
3. tell the person what the desk said (answered, refused, invalid);
4. `close(prompt, ref, closing)`: update the message with the outcome (answered
   by whom, expired, withdrawn) so nobody answers a closed question.

The desk does the rest the same for every channel: it opens the question from
the token the channel embedded in its message (sealed, expiring), checks the
`approvers` policy, validates the answer against the question's schema, records
it once, and delivers it to the run on whichever node holds it.

A question is sent somewhere with a `Via`: `slack("#deploys")`,
`discord("1234567890")`, `teams(conversation_id)`, `web()`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from starlette.routing import Route

from elicitkit._errors import ElicitationError

__all__ = [
    "Approvers",
    "Channel",
    "ChannelRefused",
    "Closing",
    "Desk",
    "Prompt",
    "Responder",
    "Verdict",
    "Via",
    "discord",
    "slack",
    "teams",
    "web",
]


@dataclass(frozen=True, slots=True)
class Responder:
    """Who replied, as the channel's service identifies them (`id`, e.g. a Slack user id) and shows them (`name`)."""

    channel: str
    id: str
    name: str | None = None

    @property
    def label(self) -> str:
        return self.name or self.id

    def to_json(self) -> list[str | None]:
        return [self.channel, self.id, self.name]

    @classmethod
    def from_json(cls, value: Any) -> Responder | None:
        """The responder `to_json` wrote (None for anything else: an answer nobody on a channel gave)."""
        if not isinstance(value, list | tuple) or len(value) != 3:
            return None
        return cls(str(value[0]), str(value[1]), None if value[2] is None else str(value[2]))


Approvers = Collection[str]
"""Who may answer: the channel's user ids (Slack `U…`, Discord snowflakes, Teams AAD object ids, web principals).
Everybody else is refused with a message saying so. The list is stored with the question, so any node checks it."""


@dataclass(frozen=True, slots=True)
class Via:
    """Where a question goes: a channel by name, a place in it, and who may answer there."""

    channel: str
    target: str | None = None
    """Where in the channel: a Slack channel (`#deploys` or `C…`), a Discord channel id, a Teams conversation id,
    the principal whose web inbox shows it (None: whoever asked)."""
    approvers: Approvers | None = None
    """Who may answer (None: anyone the channel shows the question to; for the web inbox, its principal)."""

    def __post_init__(self) -> None:
        if isinstance(self.approvers, str):
            raise TypeError("approvers is a collection of user ids, not one string: approvers={'U123'}")
        if self.approvers is not None:
            object.__setattr__(self, "approvers", frozenset(str(a) for a in self.approvers))

    def allows(self, responder: Responder) -> bool:
        """Whether `responder` may answer: someone on this question's channel (ids of one service mean nothing on
        another) who is an approver, when there are any."""
        if responder.channel != self.channel:
            return False
        return self.approvers is None or responder.id in self.approvers

    def to_json(self) -> list[Any]:
        """The destination as stored with the question."""
        return [self.channel, self.target, None if self.approvers is None else sorted(self.approvers)]

    @classmethod
    def from_json(cls, value: Any) -> Via:
        channel, target, approvers = value
        return cls(str(channel), target, None if approvers is None else frozenset(approvers))


def slack(channel: str, *, approvers: Approvers | None = None) -> Via:
    """Ask in a Slack channel (`#deploys` or a channel id); `approvers`: Slack user ids (`U…`) who may answer."""
    return Via("slack", channel, approvers)


def discord(channel_id: str, *, approvers: Approvers | None = None) -> Via:
    """Ask in a Discord channel (its id); `approvers`: Discord user ids who may answer."""
    return Via("discord", channel_id, approvers)


def teams(conversation_id: str, *, approvers: Approvers | None = None) -> Via:
    """Ask in a Microsoft Teams conversation; `approvers`: AAD object ids of the users who may answer."""
    return Via("teams", conversation_id, approvers)


def web(principal: str | None = None, *, approvers: Approvers | None = None) -> Via:
    """Ask in elicitkit's web inbox of `principal` (default: whoever asked); only they answer unless `approvers`."""
    return Via("web", principal, approvers)


@dataclass(frozen=True, slots=True)
class Prompt:
    """A question as a channel shows it."""

    id: str
    token: str
    """Sealed and expiring: embed it in the message (button values, callback ids) and give it back to the desk."""
    message: str
    schema: Mapping[str, Any]
    """The restricted form schema (a flat object of primitive fields)."""
    target: str | None
    expires_at: float
    """Seconds since the epoch."""
    tool: str | None = None
    secret_fields: tuple[str, ...] = ()
    """Fields that must never be typed into a chat: offer `desk.secure_link` instead of inputs."""

    @property
    def fields(self) -> Mapping[str, Mapping[str, Any]]:
        properties: Mapping[str, Mapping[str, Any]] = self.schema.get("properties", {})
        return properties

    @property
    def required(self) -> Sequence[str]:
        required: Sequence[str] = self.schema.get("required", ())
        return required


Status = Literal["answered", "not_approver", "invalid", "closed"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the desk made of a reply; `message` is written for the person who replied."""

    status: Status
    message: str
    problems: Mapping[str, str] = field(default_factory=dict)
    """For `invalid`: what is wrong, by field name ("" for the form as a whole)."""

    @property
    def ok(self) -> bool:
        return self.status == "answered"


@dataclass(frozen=True, slots=True)
class Closing:
    """How a question ended, for the channel to update its message."""

    outcome: Literal["accept", "decline", "cancel", "expired", "withdrawn"]
    by: Responder | None = None
    summary: str = ""
    """The answer in words (secret fields never appear)."""

    @property
    def text(self) -> str:
        who = f" by {self.by.label}" if self.by is not None else ""
        words = {
            "accept": f"Answered{who}",
            "decline": f"Declined{who}",
            "cancel": f"Cancelled{who}",
            "expired": "Expired without an answer",
            "withdrawn": "Withdrawn: the tool no longer needs an answer",
        }[self.outcome]
        return f"{words}: {self.summary}" if self.summary else words


class ChannelRefused(ElicitationError):
    """The channel cannot show this question (a field type it has no control for); the message says which."""


class Desk(Protocol):
    """elicitkit's side of a channel: where replies go."""

    async def prompt(self, token: str) -> Prompt | None:
        """The open question behind `token` (to build a modal, say), or None when it is closed or the token is bad."""
        ...

    async def reply(
        self,
        token: str,
        responder: Responder,
        action: str,
        content: Mapping[str, Any] | None,
        *,
        reason: str | None = None,
    ) -> Verdict:
        """Answer the question behind `token` as `responder`; `reason`: what they said when declining (optional)."""
        ...

    async def secure_link(self, token: str, responder: Responder) -> Verdict:
        """A one-time link to elicitkit's own page for a question with secret fields (in `Verdict.message` when
        `ok`), for `responder` only: send it privately (ephemeral message, DM)."""
        ...


@runtime_checkable
class Channel(Protocol):
    """A place people answer questions. See the module docstring for the contract."""

    name: str

    def bind(self, desk: Desk, base_url: Callable[[], str]) -> None:
        """Called once when the channel is added: where replies go, and where elicitkit's pages are reachable."""
        ...

    def routes(self) -> Sequence[Route]:
        """The channel's HTTP callbacks (served next to elicitkit's pages, under `/elicit/channels/<name>/`)."""
        ...

    async def post(self, prompt: Prompt) -> dict[str, Any]:
        """Show the question; return a JSON-serializable reference to the message (kept with the question).

        Raises:
            ChannelRefused: a field this channel cannot show.
        """
        ...

    async def close(self, prompt: Prompt, ref: dict[str, Any], closing: Closing) -> None:
        """Update the message: the question is closed (answered, declined, expired or withdrawn)."""
        ...
