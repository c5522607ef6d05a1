"""`Elicitation`: the one object a server creates to ask people questions."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar, overload

import anyio
from mcp.server.mcpserver import Context, MCPServer
from starlette.applications import Starlette

from elicitkit import _elicit_tool, _mcp
from elicitkit._asking import Asking
from elicitkit._clients import ClientOverride, Mode
from elicitkit._core.kinds import Answer, new_id
from elicitkit._crypto import PlainSealer, Sealer, secrets_from_env
from elicitkit._engine.engine import Engine
from elicitkit._engine.policy import Policy
from elicitkit._engine.question import Asked, Question
from elicitkit._fallback import DEFAULT_TOOL, Fallback, tool_description
from elicitkit._helpers import FIELD, AskHelpers
from elicitkit._hookapi import HookMethods
from elicitkit._hooks import Hooks
from elicitkit._results import Accepted, Cancelled, Declined, ElicitationResult
from elicitkit._schema.compile import FormSchema, compile_schema
from elicitkit._timeouts import SERVER_DEFAULT, Timeout, check_message, check_seconds, seconds
from elicitkit._urlmode import UrlMode
from elicitkit._web.app import PageIdentity
from elicitkit._web.tokens import LinkTokens
from elicitkit.channels.base import Channel, Via
from elicitkit.stores import store_and_broker
from elicitkit.stores.base import Broker, Store
from elicitkit.stores.memory import MemoryBroker

__all__ = ["Elicitation"]

T = TypeVar("T")

logger = logging.getLogger("elicitkit")

DEFAULT_TIMEOUT = 300.0
_ATTACHED = "_elicitkit_attached"


class Elicitation(AskHelpers, UrlMode, HookMethods):
    """Human-in-the-loop elicitation for an `MCPServer`, on every protocol era.

    ```python
    server = MCPServer("deploy-desk")
    hitl = Elicitation(server)

    @server.tool()
    async def deploy(version: str, ctx: Context) -> str:
        match await hitl.elicit(ctx, f"Deploy {version}?", Approval):
            case Accepted(data=Approval(approved=True)): ...
    ```

    Attaching installs a `tools/call` middleware and a lifespan hook on the
    server; tools stay plain `@server.tool()` functions.

    Args:
        server: the server to attach to.
        timeout: seconds to wait for each answer unless a call says otherwise;
            `None` waits without limit (a 2026-07-28 run still ends when the
            client does not come back within `run_expiry`).
        run_expiry: seconds a 2026-07-28 run waits for the client's retry
            before it is cancelled and freed.
        one_pending_per_session: when True, a new question cancels the
            session's previous open one (whose `elicit` returns `Cancelled`);
            by default questions are concurrent.
        fallback: what happens when the client cannot show the form:
            `"llm"` (the tool result asks the model to ask the person, who
            answers through the `fallback_tool` system tool), `"error"`
            (`ElicitationNotSupported`), or an async callable
            `(ctx, PendingQuestion) -> ElicitResult`.
        fallback_tool: the name of the system tool for the `"llm"` fallback.
        client_overrides: the modes particular clients really support,
            whatever they declare (matched on `clientInfo` name and version).
        keepalive: seconds between progress notifications while a
            2025-11-25 client shows a form (when the call has a progress
            token); `None` turns them off.
        store: where runs, journals and pending questions live:
            `"memory://"` (default), `"sqlite:///state.db"` (durable, one
            machine), `"redis://host:6379/0"` (many nodes), or a `Store`.
        broker: how nodes reach each other; defaults to the store's own
            (Redis pub/sub for Redis, in-process otherwise).
        secret: seals everything stored and every `requestState`; several
            rotate (the first seals). Defaults to `ELICITKIT_SECRET` or
            `MCP_ELICITATION_SECRET`. Nodes sharing a store need the same one.
        node_id: this node's id (random by default; a restart is a new node).
        forward_timeout: seconds to wait for the owner of a run to acknowledge
            a forwarded answer before taking the run over.
        lease: seconds a node's heartbeat keeps it counted alive; with Redis, a
            node whose process died is counted gone at once (its subscription
            goes with it), so the lease only bounds the wait for a frozen one.
        public_url: where elicitkit's pages (secure forms, third-party
            callbacks) are reachable from the person's browser; https, or http
            on loopback. Can also be set later: `hitl.public_url = ...`.
        url_wait: seconds a 2026-07-28 retry (or a fallback answer) waits for
            the person to finish elicitkit's page before it is told to retry later.
        max_suspended: waiting tool bodies kept in memory; beyond it the longest
            waiting hibernate to the store and their answer replays them.
        page_identity: `async (request) -> principal` telling who opens one of
            elicitkit's pages (your session cookie or SSO). When given, only the
            principal who was asked can use a link, as the spec requires of
            servers with users. Without it, links are bearer links bound to the
            first browser that opens them.
        channels: the human channels questions can go to (`WebInbox()`,
            `SlackChannel(...)`, `DiscordChannel(...)`, `TeamsChannel(...)`);
            their callbacks are served next to elicitkit's pages.
        via: where questions go unless a call says otherwise: a channel
            (`slack("#deploys")`, `web()`, ...), or None for the MCP client.
    """

    def __init__(
        self,
        server: MCPServer[Any],
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        run_expiry: float = 600.0,
        one_pending_per_session: bool = False,
        fallback: Fallback = "llm",
        fallback_tool: str = DEFAULT_TOOL,
        client_overrides: Sequence[ClientOverride] = (),
        keepalive: float | None = 15.0,
        store: str | Store | None = None,
        broker: Broker | None = None,
        secret: str | Sequence[str] | None = None,
        node_id: str | None = None,
        forward_timeout: float = 2.0,
        lease: float = 15.0,
        public_url: str | None = None,
        url_wait: float = 10.0,
        max_suspended: int | None = None,
        page_identity: PageIdentity | None = None,
        channels: Sequence[Channel] = (),
        via: Via | None = None,
    ) -> None:
        check_seconds(timeout)
        check_seconds(run_expiry, "run_expiry", none_ok=False)
        check_seconds(url_wait, "url_wait", none_ok=False)
        check_seconds(keepalive, "keepalive")
        check_seconds(forward_timeout, "forward_timeout", none_ok=False)
        check_seconds(lease, "lease", none_ok=False)
        if not (fallback in ("llm", "error") or callable(fallback)):
            raise ValueError(f'fallback must be "llm", "error" or an async callable, not {fallback!r}')
        if getattr(server, _ATTACHED, None) is not None:
            raise ValueError(
                "This server already has an Elicitation attached; create one per server and share it between modules"
            )
        secrets = [secret] if isinstance(secret, str) else list(secret) if secret is not None else secrets_from_env()
        ring = Sealer(secrets) if secrets else None
        sealer: Sealer | PlainSealer = ring if ring is not None else PlainSealer()
        the_store, broker = store_and_broker(store, broker)
        shared = not isinstance(broker, MemoryBroker)
        if ring is not None:
            _mcp.use_request_state_keys(server, ring.request_state_keys())
        elif shared:
            logger.warning(
                "elicitkit: a store shared between nodes is configured WITHOUT a secret: questions, answers and "
                "journals are stored in plaintext, and a retry that reaches another node cannot be opened there. "
                "Set Elicitation(secret=...) or ELICITKIT_SECRET on every node."
            )
        ttl = _mcp.request_state_ttl(server)
        self.server = server
        self.timeout = timeout
        self.node_id = node_id or new_id()
        policy = Policy(
            # A retry after the SDK's requestState TTL is refused before it reaches a run: stop waiting then.
            run_expiry=min(run_expiry, ttl) if ttl is not None else run_expiry,
            url_wait=url_wait,
            max_suspended=max_suspended,
            keepalive=keepalive,
            one_pending_per_session=one_pending_per_session,
            fallback=fallback,
            fallback_tool=fallback_tool,
            client_overrides=tuple(client_overrides),
            node=self.node_id,
            shared=shared,
            forward_timeout=forward_timeout,
            lease=lease,
        )
        self._tokens = LinkTokens(secrets or None)
        self._engine = Engine(policy, store=the_store, broker=broker, sealer=sealer, tokens=self._tokens)
        self._hooks = Hooks()
        self._asking = Asking(self._engine, self._hooks, self.node_id)
        self._page_identity = page_identity
        self._public_url = None
        self.public_url = public_url
        self.via = via
        self._engine.desk.base_url = self._base
        self._engine.desk.page_identity = page_identity
        for channel in channels:
            self._engine.desk.add(channel)
        if via is not None:
            self._engine.desk.channel(via)  # a default that names no added channel fails now, not at the first ask
        setattr(server, _ATTACHED, self)
        server.middleware.append(self._engine.middleware)
        _mcp.wrap_lifespan(server, self._engine.host)
        _mcp.advertise_tasks(server)
        # Registered on the server itself, so server.run("streamable-http") and streamable_http_app() serve the pages.
        for route in self.routes():
            server.custom_route(route.path, methods=sorted(route.methods or ()), include_in_schema=False)(
                route.endpoint
            )
        if fallback == "llm":
            server.add_tool(
                _send_elicitation_result,
                name=fallback_tool,
                description=tool_description(fallback_tool),
                structured_output=False,
            )

    def http_app(self, **options: Any) -> Starlette:
        """One ASGI app: the MCP streamable-HTTP endpoint at `/mcp` and elicitkit's pages under `/elicit/`.

        `options` go to `server.streamable_http_app(...)`. To serve inside an
        existing Starlette/FastAPI app instead, mount `server.streamable_http_app()`
        and add `hitl.routes()` (and run `server.session_manager.run()` in its lifespan).
        """
        return self.server.streamable_http_app(**options)

    async def step(self, ctx: Context[Any, Any], name: str, fn: Callable[[], T | Awaitable[T]]) -> T:
        """Run a side effect once per tool run, however often the run is replayed.

        `fn` (plain or async, no arguments) runs and its JSON-serializable
        result is journaled; when the run is replayed after a crash or a
        takeover, the journaled result is returned and `fn` is not called
        again. Give each step of a tool a distinct `name`.

        Raises:
            TypeError: the result is not JSON-serializable.
        """
        del ctx  # the run is found through the task; ctx keeps call sites uniform with `elicit`
        value: T = await self._engine.step(name, fn)
        return value

    async def aclose(self) -> None:
        """Close the store's and the broker's connections, once the server is done serving (Redis, SQLite)."""
        await self._engine.aclose()

    @property
    def channel_names(self) -> frozenset[str]:
        """The names of the human channels added (`"web"`, `"slack"`, ...)."""
        return frozenset(self._engine.desk.channels)

    def install_elicit_tool(
        self,
        destinations: Mapping[str, Via] | None = None,
        *,
        name: str = "elicit",
        timeout: Timeout = SERVER_DEFAULT,
    ) -> None:
        """Register an `elicit` tool through which an agent asks a person a question of its own (mcp.do's shape).

        Its input is `{message, schema, uiType}`; `destinations` maps each
        `uiType` ("slack", "discord", "teams", "web") to where it asks, e.g.
        `{"slack": slack("#approvals")}` (an added web inbox is offered as
        `web()` by default). Results read `User provided: {json}`, `User
        declined: {reason}` or `User canceled: Request timed out after N
        minutes`, with structured content `{action, content?, reason?}`.

        Raises:
            ValueError: a destination names a channel that was not added, or there is none.
        """
        limit = seconds(timeout, self.timeout)
        _elicit_tool.install(self.server, self.elicit, self.channel_names, destinations or {}, name, limit)

    def _destination(self, via: Via | None) -> Via | None:
        chosen = via if via is not None else self.via
        if chosen is not None:
            self._engine.desk.channel(chosen)  # fails clearly when no such channel was added
        return chosen

    @property
    def active_runs(self) -> int:
        """Tool executions currently tracked (running or waiting for a person)."""
        return len(self._engine.registry.runs)

    @property
    def pending_questions(self) -> int:
        """Questions currently waiting for an answer."""
        return self._engine.registry.pending_questions

    def principal(self, ctx: Context[Any, Any]) -> str | None:
        """Who is calling, as elicitkit binds questions and answers to them (None when unauthenticated)."""
        return _mcp.principal(_mcp.request_context(ctx))

    def supports(self, ctx: Context[Any, Any], mode: Mode = "form") -> bool:
        """True when this request's client can show `mode` elicitations itself (overrides applied)."""
        return self._engine.policy.native_possible(_mcp.request_context(ctx), mode)

    def can_ask(self, ctx: Context[Any, Any]) -> bool:
        """True when a form question asked from this request can reach a person at all: through the client, a
        server-wide channel (`via`), the model's fallback, or the server's own fallback handler."""
        return self.supports(ctx) or self.via is not None or self._engine.policy.fallback != "error"

    @overload
    async def elicit(
        self,
        ctx: Context[Any, Any],
        message: str,
        schema: type[T],
        *,
        timeout: Timeout = SERVER_DEFAULT,
        via: Via | None = None,
        task: bool = False,
    ) -> ElicitationResult[T]: ...

    @overload
    async def elicit(
        self,
        ctx: Context[Any, Any],
        message: str,
        schema: Mapping[str, Any],
        *,
        timeout: Timeout = SERVER_DEFAULT,
        via: Via | None = None,
        task: bool = False,
    ) -> ElicitationResult[dict[str, Any]]: ...

    async def elicit(
        self,
        ctx: Context[Any, Any],
        message: str,
        schema: Any,
        *,
        timeout: Timeout = SERVER_DEFAULT,
        via: Via | None = None,
        task: bool = False,
    ) -> ElicitationResult[Any]:
        """Ask the person a question and wait for a validated, typed answer.

        Args:
            ctx: the tool's `Context`.
            message: what to ask.
            schema: a pydantic model, dataclass or TypedDict (the answer is an
                instance of it), or a raw restricted JSON schema (the answer is a dict).
            timeout: seconds to wait; `None` waits without limit; by default the
                server-wide `timeout`.
            via: ask on a human channel instead of the MCP client
                (`slack("#deploys", approvers={"U123"})`, `web()`, ...); by
                default the server-wide `via`.
            task: the person may take long: on 2026-07-28, a client that takes
                tasks gets a task handle and answers through `tasks/get` and
                `tasks/update` instead of holding its call open (questions on a
                channel do this anyway). On 2025-11-25 the client decides, by
                asking for a task in `tools/call`.

        Returns:
            `Accepted` with `.data`, `Declined`, or `Cancelled`.

        Raises:
            SchemaError: `schema` is outside MCP's restricted form schema.
            InvalidElicitationContent: the answer broke the schema (`.problems`).
            ElicitationTimeout: no answer in time.
            ElicitationNotSupported: the client cannot show forms.
            ElicitationClientError: the client failed the request.
        """
        return await self._ask(ctx, message, compile_schema(schema), timeout, unwrap=False, via=via, task=task)

    async def _ask(
        self,
        ctx: Context[Any, Any],
        message: str,
        schema: FormSchema,
        timeout: Timeout,
        *,
        unwrap: bool,
        via: Via | None = None,
        task: bool = False,
    ) -> ElicitationResult[Any]:
        check_message(message)
        limit = seconds(timeout, self.timeout)
        asked = Asked(new_id(), message, schema, via=self._destination(via), task=task)
        question = Question(asked, anyio.current_time() + limit)

        def convert(asked: Question, answer: Answer) -> ElicitationResult[Any]:
            if answer.action == "accept":
                data = asked.data_of(answer.content)
                return Accepted(data=data[FIELD] if unwrap else data, content=dict(answer.content))
            return Declined() if answer.action == "decline" else Cancelled()

        return await self._asking(ctx, question, limit, convert, rewritable=not unwrap)


async def _send_elicitation_result(
    elicitId: str,  # the wire name FrontMCP-trained models already use
    action: Literal["accept", "decline", "cancel"],
    content: dict[str, Any] | None = None,
) -> str:
    """Placeholder whose signature gives the system tool its input schema; elicitkit's middleware answers calls."""
    raise RuntimeError("sendElicitationResult is answered by elicitkit's middleware")
