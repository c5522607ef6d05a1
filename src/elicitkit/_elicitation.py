"""`Elicitation`: the one object a server creates to ask people questions."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.routing import Route

from elicitkit import _elicit_tool, _mcp
from elicitkit._asking import Asking
from elicitkit._clients import ClientOverride
from elicitkit._core.kinds import Mode, RouteName, Stage, new_id
from elicitkit._crypto import PlainSealer, Sealer, secret_ring
from elicitkit._engine.engine import Engine
from elicitkit._engine.policy import Policy
from elicitkit._engine.stages import StageName
from elicitkit._fallback import DEFAULT_TOOL, Fallback, tool_description
from elicitkit._helpers import TextFormat, choice_schema, choices_schema, confirm_schema, split_options, text_schema
from elicitkit._hookdata import QuestionInfo
from elicitkit._hooks import HookPoint, Hooks
from elicitkit._mcp import ToolContext
from elicitkit._results import ElicitationResult
from elicitkit._schema.compile import compile_schema
from elicitkit._servers import seam_for
from elicitkit._timeouts import SERVER_DEFAULT, Timeout, check_seconds
from elicitkit._urlmode import Links, Wait
from elicitkit._web.app import PageIdentity
from elicitkit._web.app_view import VIEW_META, VIEW_MIME, VIEW_NAME, VIEW_URI, view_html
from elicitkit._web.limits import DEFAULT_BODY_LIMITS, BodyLimits, bodies_first
from elicitkit._web.tokens import LinkTokens
from elicitkit.channels.base import Channel, Via
from elicitkit.stores import durable_store, store_and_broker
from elicitkit.stores.base import Broker, Store
from elicitkit.stores.memory import MemoryBroker

if TYPE_CHECKING:
    from fastmcp import FastMCP

__all__ = ["ATTACHED", "Elicitation"]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

logger = logging.getLogger("elicitkit")

DEFAULT_TIMEOUT = 300.0
DEFAULT_SESSION_IDLE_TIMEOUT = 600.0
ATTACHED = "_elicitkit_attached"
"""The attribute under which a server keeps its `Elicitation`."""


class Elicitation:
    """Human-in-the-loop elicitation for an `MCPServer` (or a `fastmcp.FastMCP`), on every protocol era.

    ```python
    server = MCPServer("deploy-desk")
    hitl = Elicitation(server)

    @server.tool()
    async def deploy(version: str, ctx: Context) -> str:
        match await hitl.elicit(ctx, f"Deploy {version}?", Approval):
            case Accepted(data=Approval(approved=True)): ...
    ```

    Attaching installs a `tools/call` middleware and a lifespan hook on the
    server's low-level SDK server; tools stay plain `@server.tool()` functions.

    Args:
        server: the server to attach to: the SDK's `MCPServer`, or fastmcp's
            `FastMCP` (`pip install 'elicitkit[fastmcp]'`; its tools pass their
            fastmcp `Context` to `elicit` and the helpers).
        timeout: seconds to wait for each answer unless a call says otherwise; `None` waits without limit
            (a 2026-07-28 run still ends when the client does not come back within `run_expiry`).
        run_expiry: seconds a 2026-07-28 run waits for the client's retry before it is cancelled and freed.
        one_pending_per_session: when True, a new question cancels the session's previous open one (whose
            `elicit` returns `Cancelled`); by default questions are concurrent.
        fallback: what happens when the client cannot show the form:
            `"llm"` (the tool result asks the model to ask the person, who
            answers through the `fallback_tool` system tool), `"error"`
            (`ElicitationNotSupported`), or an async callable
            `(ctx, PendingQuestion) -> ElicitResult`.
        fallback_tool: the name of the system tool for the `"llm"` fallback
            (and for answers from elicitkit's form view in the chat).
        app_view: show forms in the chat as elicitkit's MCP Apps view to clients declaring
            `io.modelcontextprotocol/ui`: `True` for forms they cannot show themselves, `"first"`
            for every form, `False` never. Links never go through it (docs/apps.md).
        client_overrides: what particular clients really show, whatever they declare (elicitation modes,
            elicitkit's view in the chat), matched on `clientInfo` name and version.
        keepalive: seconds between progress notifications while a 2025-11-25 client shows a form (when the
            call has a progress token); `None` turns them off.
        store: where runs, journals and pending questions live: `"memory://"` (default; it warns at
            start-up where several nodes seem to serve), `"sqlite:///state.db"` (durable, one machine),
            `"redis://host:6379/0"` (many nodes), `"redis+cluster://host:6379"` (on a Redis Cluster), or a `Store`.
        broker: how nodes reach each other; defaults to the store's own
            (Redis pub/sub for Redis, in-process otherwise).
        secret: seals everything stored and every `requestState`; several
            rotate (the first seals). Defaults to `ELICITKIT_SECRET`, the
            file `ELICITKIT_SECRET_FILE` names (readable by its owner only),
            else FrontMCP's `MCP_ELICITATION_SECRET`, `MCP_SESSION_SECRET`, `MCP_SERVER_SECRET` in that
            order (several in one, whitespace-separated). Nodes sharing a store need the same one.
            At least 32 bytes each; a SQLite, Redis or your own store refuses
            to start without one (or with one set but empty).
        plaintext_store: run a durable store without a secret on purpose: what it keeps is stored in
            plaintext, and messages between nodes are not signed (tests, local development). A secret, if one
            is configured in the environment, still seals.
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
        body_limits: how large a body elicitkit's pages take (256 KiB) and how
            long any of its routes, and the MCP endpoint, waits for one (10 s); see `BodyLimits`.
        session_idle_timeout: seconds a 2025-11-25 streamable-HTTP session may
            go without a request in flight before the SDK closes it, cancelling
            what still runs in it (a client that vanished without a DELETE);
            `None` keeps sessions until their client ends them. A `tools/call`
            waiting on its person is in flight and keeps its session. The
            SDK's own default is 30 minutes; a `session_idle_timeout` passed to
            `server.streamable_http_app(...)` or `server.run(...)` wins. On a
            fastmcp server, its `http_app(session_idle_timeout=...)` and its
            `FASTMCP_HTTP_SESSION_IDLE_TIMEOUT` setting win, and `None` leaves
            fastmcp's own default.
    """

    def __init__(
        self,
        server: MCPServer[Any] | FastMCP[Any],
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        run_expiry: float = 600.0,
        one_pending_per_session: bool = False,
        fallback: Fallback = "llm",
        fallback_tool: str = DEFAULT_TOOL,
        app_view: bool | Literal["first"] = True,
        client_overrides: Sequence[ClientOverride] = (),
        keepalive: float | None = 15.0,
        store: str | Store | None = None,
        broker: Broker | None = None,
        secret: str | Sequence[str] | None = None,
        plaintext_store: bool = False,
        node_id: str | None = None,
        forward_timeout: float = 2.0,
        lease: float = 15.0,
        public_url: str | None = None,
        url_wait: float = 10.0,
        max_suspended: int | None = None,
        page_identity: PageIdentity | None = None,
        channels: Sequence[Channel] = (),
        via: Via | None = None,
        body_limits: BodyLimits = DEFAULT_BODY_LIMITS,
        session_idle_timeout: float | None = DEFAULT_SESSION_IDLE_TIMEOUT,
    ) -> None:
        check_seconds(timeout)
        check_seconds(run_expiry, "run_expiry", none_ok=False)
        check_seconds(url_wait, "url_wait", none_ok=False)
        check_seconds(keepalive, "keepalive")
        check_seconds(forward_timeout, "forward_timeout", none_ok=False)
        check_seconds(lease, "lease", none_ok=False)
        check_seconds(session_idle_timeout, "session_idle_timeout")
        if not (fallback in ("llm", "error") or callable(fallback)):
            raise ValueError(f'fallback must be "llm", "error" or an async callable, not {fallback!r}')
        if app_view not in (True, False, "first"):
            raise ValueError(f'app_view must be True, False or "first", not {app_view!r}')
        seam = seam_for(server)
        lowlevel = seam.lowlevel
        if getattr(server, ATTACHED, None) is not None:
            raise ValueError(
                "This server already has an Elicitation attached; create one per server and share it between modules"
            )
        secrets = secret_ring(secret, store=durable_store(store), plaintext_store=plaintext_store)
        ring = Sealer(secrets) if secrets else None
        sealer: Sealer | PlainSealer = ring if ring is not None else PlainSealer()
        the_store, broker = store_and_broker(store, broker)
        shared = not isinstance(broker, MemoryBroker)
        if ring is not None:
            _mcp.use_request_state_keys(lowlevel, ring.request_state_keys())
        elif shared:
            logger.warning(
                "elicitkit: a store shared between nodes is configured WITHOUT a secret: questions, answers and "
                "journals are stored in plaintext, and a retry that reaches another node cannot be opened there. "
                "Set Elicitation(secret=...) or ELICITKIT_SECRET on every node."
            )
        ttl = _mcp.request_state_ttl(lowlevel)
        self.server = server
        self._seam = seam
        self.node_id = node_id or new_id()
        policy = Policy(
            # A retry after the SDK's requestState TTL is refused before it reaches a run: stop waiting then.
            run_expiry=min(run_expiry, ttl) if ttl is not None else run_expiry,
            url_wait=url_wait,
            max_suspended=max_suspended,
            task_tool=seam.run_tasks(),
            keepalive=keepalive,
            one_pending_per_session=one_pending_per_session,
            fallback=fallback,
            fallback_tool=fallback_tool,
            app_view="first" if app_view == "first" else "fallback" if app_view else "off",
            client_overrides=tuple(client_overrides),
            node=self.node_id,
            shared=shared,
            forward_timeout=forward_timeout,
            lease=lease,
        )
        tokens = LinkTokens(secrets or None)
        # A SQLite file opened here from its URL is closed whenever the server stops serving (Redis's stay open).
        closes = isinstance(store, str) and durable_store(store) == "SQLite"
        self._engine = Engine(
            policy, store=the_store, broker=broker, sealer=sealer, tokens=tokens, close_store_when_stopped=closes
        )
        self._hooks = Hooks()
        self._asking = Asking(self._engine, self._hooks, self.node_id, timeout=timeout, via=None)
        self._links = Links(
            self._engine,
            self._asking,
            tokens,
            public_url=public_url,
            page_identity=page_identity,
            body_limits=body_limits,
        )
        desk = self._engine.desk
        desk.base_url = self._links.base
        desk.page_identity = page_identity
        for channel in channels:
            desk.add(channel)
        self.via = via  # a default that names no added channel fails now, not at the first ask
        setattr(server, ATTACHED, self)
        lowlevel.middleware.append(self._engine.middleware)
        _mcp.drop_request_named_notifications(lowlevel)
        _mcp.wrap_lifespan(lowlevel, self._engine.host)
        seam.default_session_idle_timeout(session_idle_timeout)
        # The MCP endpoint reads a body first too, so a client that drops its connection mid-body is no error.
        seam.guard_http_bodies(lambda app, path: bodies_first(app, body_limits.read_timeout, path))
        _mcp.advertise_tasks(lowlevel)
        # Registered on the server itself, so server.run("streamable-http") and its own HTTP app serve the pages.
        for route in self.routes():
            seam.add_route(route)
        if policy.answer_tool_on:
            seam.add_system_tool(
                _send_elicitation_result, name=fallback_tool, description=tool_description(fallback_tool)
            )
        if app_view:
            seam.add_view(VIEW_URI, name=VIEW_NAME, mime_type=VIEW_MIME, meta=VIEW_META, html=view_html)

    # -- settings ---------------------------------------------------------------------------

    @property
    def timeout(self) -> float | None:
        """Seconds to wait for each answer unless a call says otherwise (None: no limit)."""
        return self._asking.timeout

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        check_seconds(value)
        self._asking.timeout = value

    @property
    def via(self) -> Via | None:
        """Where questions go unless a call says otherwise: a channel, or None for the MCP client."""
        return self._asking.via

    @via.setter
    def via(self, value: Via | None) -> None:
        if value is not None:
            self._engine.desk.channel(value)  # fails clearly when no such channel was added
        self._asking.via = value

    @property
    def public_url(self) -> str | None:
        """Where elicitkit's pages are reachable from the person's browser, e.g. `https://mcp.example.com`."""
        return self._links.public_url

    @public_url.setter
    def public_url(self, value: str | None) -> None:
        self._links.public_url = value

    @property
    def page_identity(self) -> PageIdentity | None:
        """`async (request) -> principal`: who opens a page, checked against who was asked (None: not checked)."""
        return self._links.page_identity

    def routes(self) -> list[Route]:
        """elicitkit's page routes and its channels' callbacks, to add to your own Starlette/FastAPI app (next to
        the mounted MCP app). Each reads a request's body first, within `body_limits`."""
        return self._links.routes()

    def http_app(self, **options: Any) -> Starlette:
        """One ASGI app: the MCP streamable-HTTP endpoint at `/mcp` and elicitkit's pages under `/elicit/`.

        `options` go to `server.streamable_http_app(...)`. To serve inside an
        existing Starlette/FastAPI app instead, mount `server.streamable_http_app()`
        and add `hitl.routes()` (and run `server.session_manager.run()` in its lifespan).
        """
        return self._seam.http_app(**options)

    async def step(self, ctx: ToolContext, name: str, fn: Callable[[], T | Awaitable[T]]) -> T:
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
        timeout: _elicit_tool.PerCaller = _elicit_tool.MCPDO_TIMEOUTS,
    ) -> None:
        """Register mcp.do's `elicit` tool: an agent asks a person (`{message, schema, uiType}`) on a channel.

        `destinations` maps each `uiType` ("slack", "discord", "teams", "web", the first the default) to where it
        asks, e.g. `{"slack": slack("#approvals")}` (an added web inbox is offered as `web()`). Results are mcp.do's,
        `isError` included, with structured content `{action, content?, reason?}`. `timeout` is by caller: mcp.do's
        `{"anonymous": 180, "authenticated": 300}` seconds by default; or seconds (None: no limit), `SERVER_DEFAULT`,
        or a function of the caller's principal (None when anonymous). See docs/channels.md.

        Raises:
            ValueError: a destination names a channel that was not added, or there is none; a bad timeout.
        """
        limit = _elicit_tool.per_caller(timeout, self._asking.timeout)
        _elicit_tool.install(
            self._seam, self.elicit, self.principal, self.channel_names, destinations or {}, name, limit
        )

    @property
    def active_runs(self) -> int:
        """Tool executions currently tracked (running or waiting for a person)."""
        return len(self._engine.registry.runs)

    @property
    def pending_questions(self) -> int:
        """Questions currently waiting for an answer."""
        return self._engine.registry.pending_questions

    def principal(self, ctx: ToolContext) -> str | None:
        """Who is calling, as elicitkit binds questions and answers to them (None when unauthenticated)."""
        return _mcp.principal(_mcp.request_context(ctx))

    def supports(self, ctx: ToolContext, mode: Mode = "form") -> bool:
        """True when this request's client can show `mode` elicitations itself (overrides applied)."""
        return self._engine.policy.native_possible(_mcp.request_context(ctx), mode)

    def can_ask(self, ctx: ToolContext) -> bool:
        """True when a form question asked from this request can reach a person at all: through the client, a
        server-wide channel (`via`), the model's fallback, or the server's own fallback handler."""
        return self.supports(ctx) or self.via is not None or self._engine.policy.fallback != "error"

    @overload
    async def elicit(
        self,
        ctx: ToolContext,
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
        ctx: ToolContext,
        message: str,
        schema: Mapping[str, Any],
        *,
        timeout: Timeout = SERVER_DEFAULT,
        via: Via | None = None,
        task: bool = False,
    ) -> ElicitationResult[dict[str, Any]]: ...

    async def elicit(
        self,
        ctx: ToolContext,
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
        return await self._asking.form(ctx, message, compile_schema(schema), timeout, unwrap=False, via=via, task=task)

    # -- one-field questions ------------------------------------------------------------------

    async def confirm(
        self,
        ctx: ToolContext,
        message: str,
        *,
        title: str | None = None,
        description: str | None = None,
        default: bool = False,
        timeout: Timeout = SERVER_DEFAULT,
        via: Via | None = None,
    ) -> ElicitationResult[bool]:
        """Ask a yes/no question; `Accepted.data` is the checkbox's value."""
        schema = confirm_schema(title, description, default)
        result: ElicitationResult[bool] = await self._asking.form(ctx, message, schema, timeout, unwrap=True, via=via)
        return result

    async def text(
        self,
        ctx: ToolContext,
        message: str,
        *,
        title: str | None = None,
        description: str | None = None,
        min_length: int | None = None,
        max_length: int | None = None,
        format: TextFormat | None = None,
        default: str | None = None,
        timeout: Timeout = SERVER_DEFAULT,
        via: Via | None = None,
    ) -> ElicitationResult[str]:
        """Ask for a line of text (optionally an email, URI, date or date-time)."""
        schema = text_schema(title, description, min_length, max_length, format, default)
        result: ElicitationResult[str] = await self._asking.form(ctx, message, schema, timeout, unwrap=True, via=via)
        return result

    async def choice(
        self,
        ctx: ToolContext,
        message: str,
        options: Sequence[str],
        *,
        title: str | None = None,
        description: str | None = None,
        default: str | None = None,
        timeout: Timeout = SERVER_DEFAULT,
        via: Via | None = None,
    ) -> ElicitationResult[str]:
        """Ask for one of `options`; `Accepted.data` is the chosen value."""
        values, titles = split_options(options)
        schema = choice_schema(values, titles, title, description, default)
        result: ElicitationResult[str] = await self._asking.form(ctx, message, schema, timeout, unwrap=True, via=via)
        return result

    async def titled_choice(
        self,
        ctx: ToolContext,
        message: str,
        options: Mapping[str, str],
        *,
        title: str | None = None,
        description: str | None = None,
        default: str | None = None,
        timeout: Timeout = SERVER_DEFAULT,
        via: Via | None = None,
    ) -> ElicitationResult[str]:
        """Ask for one of `options` (value -> display title); `Accepted.data` is the value."""
        values, titles = split_options(options)
        schema = choice_schema(values, titles, title, description, default)
        result: ElicitationResult[str] = await self._asking.form(ctx, message, schema, timeout, unwrap=True, via=via)
        return result

    async def choices(
        self,
        ctx: ToolContext,
        message: str,
        options: Sequence[str],
        *,
        title: str | None = None,
        description: str | None = None,
        min_items: int | None = None,
        max_items: int | None = None,
        default: Sequence[str] | None = None,
        timeout: Timeout = SERVER_DEFAULT,
        via: Via | None = None,
    ) -> ElicitationResult[list[str]]:
        """Ask for several of `options` (multi-select); `Accepted.data` is the chosen values."""
        values, titles = split_options(options)
        chosen = None if default is None else tuple(default)
        schema = choices_schema(values, titles, title, description, min_items, max_items, chosen)
        result: ElicitationResult[list[str]] = await self._asking.form(
            ctx, message, schema, timeout, unwrap=True, via=via
        )
        return result

    async def titled_choices(
        self,
        ctx: ToolContext,
        message: str,
        options: Mapping[str, str],
        *,
        title: str | None = None,
        description: str | None = None,
        min_items: int | None = None,
        max_items: int | None = None,
        default: Sequence[str] | None = None,
        timeout: Timeout = SERVER_DEFAULT,
        via: Via | None = None,
    ) -> ElicitationResult[list[str]]:
        """Multi-select with display titles (value -> title); `Accepted.data` is the chosen values."""
        return await self.choices(
            ctx,
            message,
            options,  # type: ignore[arg-type]  # a mapping's keys are the values, its values the titles
            title=title,
            description=description,
            min_items=min_items,
            max_items=max_items,
            default=default,
            timeout=timeout,
            via=via,
        )

    # -- links --------------------------------------------------------------------------------

    async def elicit_url(
        self,
        ctx: ToolContext,
        message: str,
        url: str,
        *,
        timeout: Timeout = SERVER_DEFAULT,
        required_error: bool = False,
        elicitation_id: str | None = None,
        wait: Wait = "accepted",
    ) -> ElicitationResult[None]:
        """Send the person to `url`; `Accepted` means they agreed to open it.

        With `required_error=True`, a 2025-11-25 call fails with the spec's
        `-32042` URL-required error instead (for tools that prefer to fail and be
        called again); 2026-07-28 asks in the `InputRequiredResult` as usual.
        `elicitation_id` is the id the client is given (its `elicitationId` on
        2025-11-25, the input request's key on 2026-07-28); by default a random
        one. Give your own when the page behind `url` must know it.

        With `wait="completed"` (for a page you host yourself), the client's
        consent only acknowledges the link: the call returns `Accepted` once the
        page says it is done with `hitl.complete(elicitation_id)` (on any node),
        or `Declined`/`Cancelled` if the client refuses the link; on 2025-11-25
        the client is then sent `notifications/elicitation/complete`.

        Raises:
            ValueError: the URL is not https (or loopback http) or carries credentials, the id is not 1 to
                128 letters, digits, `-` and `_`, or `wait` is neither "accepted" nor "completed".
            ElicitationNotSupported: the client cannot open links and the fallback does not apply.
        """
        return await self._links.elicit_url(
            ctx,
            message,
            url,
            timeout=timeout,
            required_error=required_error,
            elicitation_id=elicitation_id,
            wait=wait,
        )

    async def complete(self, elicitation_id: str, *, principal: str | None = None) -> bool:
        """The page behind an `elicit_url(..., wait="completed")` link is done: the asking call returns `Accepted`.

        Call it from your page's handler once the person finished there. The
        question may be held by any node of the store: the completion reaches
        it. `principal` is the authenticated principal the question was asked
        under, needed only when the question is held by another node and callers
        authenticate (elicitkit finds it itself for questions held here).

        Returns:
            True if this completed an open question; False if there was none to complete under that id (completed
            already, expired, declined, asked without `wait="completed"`, or unknown): calling it twice is safe.

        Raises:
            ValueError: the id is not 1 to 128 letters, digits, `-` and `_`.
        """
        return await self._links.complete(elicitation_id, principal=principal)

    async def secure_form(
        self,
        ctx: ToolContext,
        message: str,
        schema: type[T],
        *,
        timeout: Timeout = SERVER_DEFAULT,
        via: Via | None = None,
    ) -> ElicitationResult[T]:
        """Ask on elicitkit's own page: for secrets, which must never pass through the client or the model.

        The client is asked in URL mode to open a sealed, expiring, one-time
        link; the person fills the form there (`SecretStr` fields are password
        inputs); the tool receives the validated answer as an instance of `schema`.
        With `via` (or the server-wide `via`), the question goes to that channel
        instead, whose message gives each approver who asks a one-time link of their own.
        """
        return await self._links.secure_form(ctx, message, schema, timeout=timeout, via=via)

    async def url_flow(
        self,
        ctx: ToolContext,
        message: str,
        start: Callable[[str, str], str],
        *,
        timeout: Timeout = SERVER_DEFAULT,
    ) -> ElicitationResult[dict[str, str]]:
        """Run a third-party flow that redirects back to elicitkit.

        `start(callback_url, state)` returns the URL to send the person to (for
        OAuth: the authorize URL with `redirect_uri=callback_url&state=state`).
        When the third party redirects to the callback, `Accepted.data` holds
        its query parameters (`code`, or `error`, …) without `state`.
        """
        return await self._links.url_flow(ctx, message, start, timeout=timeout)

    # -- hooks (see `elicitkit._hooks` for when each runs; stage hooks: `elicitkit._engine.stages`) --------
    #
    # Each decorator works bare or with filters, and returns the function unchanged. Filters narrow which
    # questions a hook sees: `tools` (the asking tool's name), `modes` (`"form"`, `"url"`), `routes` (not for
    # `around` and `before_ask`, which run before the route is chosen), `when` (any predicate on the
    # `QuestionInfo`), and for `after_ask` the `stages` to be told of (`"stored"`, `"sent"`; both by default).

    def _register(self, point: HookPoint, fn: F | None, **filters: Any) -> F | Callable[[F], F]:
        def register(hook: F) -> F:
            self._hooks.add(point, hook, **filters)
            return hook

        return register if fn is None else register(fn)

    @overload
    def around(self, fn: F, /) -> F: ...
    @overload
    def around(
        self,
        fn: None = None,
        /,
        *,
        tools: Collection[str] | None = None,
        modes: Collection[Mode] | None = None,
        when: Callable[[QuestionInfo], bool] | None = None,
    ) -> Callable[[F], F]: ...
    def around(self, fn: Any = None, /, *, tools: Any = None, modes: Any = None, when: Any = None) -> Any:
        """`async (question, call_next) -> result`: wrap a whole question (`await call_next()` asks it)."""
        return self._register("around", fn, tools=tools, modes=modes, when=when)

    @overload
    def before_ask(self, fn: F, /) -> F: ...
    @overload
    def before_ask(
        self,
        fn: None = None,
        /,
        *,
        tools: Collection[str] | None = None,
        modes: Collection[Mode] | None = None,
        when: Callable[[QuestionInfo], bool] | None = None,
    ) -> Callable[[F], F]: ...
    def before_ask(self, fn: Any = None, /, *, tools: Any = None, modes: Any = None, when: Any = None) -> Any:
        """`(question) -> Ask | None`: rewrite the message or schema before it is asked; raise to veto."""
        return self._register("before_ask", fn, tools=tools, modes=modes, when=when)

    @overload
    def after_ask(self, fn: F, /) -> F: ...
    @overload
    def after_ask(
        self,
        fn: None = None,
        /,
        *,
        tools: Collection[str] | None = None,
        modes: Collection[Mode] | None = None,
        routes: Collection[RouteName] | None = None,
        stages: Collection[Stage] = (),
        when: Callable[[QuestionInfo], bool] | None = None,
    ) -> Callable[[F], F]: ...
    def after_ask(
        self,
        fn: Any = None,
        /,
        *,
        tools: Any = None,
        modes: Any = None,
        routes: Any = None,
        stages: Any = (),
        when: Any = None,
    ) -> Any:
        """`(question, stage) -> None`: observe a question reaching a stage on its route (`question.route` is set)."""
        return self._register("after_ask", fn, tools=tools, modes=modes, routes=routes, stages=stages, when=when)

    @overload
    def before_answer(self, fn: F, /) -> F: ...
    @overload
    def before_answer(
        self,
        fn: None = None,
        /,
        *,
        tools: Collection[str] | None = None,
        modes: Collection[Mode] | None = None,
        routes: Collection[RouteName] | None = None,
        when: Callable[[QuestionInfo], bool] | None = None,
    ) -> Callable[[F], F]: ...
    def before_answer(
        self, fn: Any = None, /, *, tools: Any = None, modes: Any = None, routes: Any = None, when: Any = None
    ) -> Any:
        """`(question, result) -> result | None`: rewrite or veto a validated answer before the tool sees it."""
        return self._register("before_answer", fn, tools=tools, modes=modes, routes=routes, when=when)

    @overload
    def after_answer(self, fn: F, /) -> F: ...
    @overload
    def after_answer(
        self,
        fn: None = None,
        /,
        *,
        tools: Collection[str] | None = None,
        modes: Collection[Mode] | None = None,
        routes: Collection[RouteName] | None = None,
        when: Callable[[QuestionInfo], bool] | None = None,
    ) -> Callable[[F], F]: ...
    def after_answer(
        self, fn: Any = None, /, *, tools: Any = None, modes: Any = None, routes: Any = None, when: Any = None
    ) -> Any:
        """`(question, outcome) -> None`: observe what the tool got, a result or an error."""
        return self._register("after_answer", fn, tools=tools, modes=modes, routes=routes, when=when)

    def stage(self, name: StageName) -> Callable[[F], F]:
        """Replace `"generate_id"` (`(message, mode) -> id`) or `"validate"` (`(question, content) -> problems`)."""
        return self._engine.stages.registrar(self._engine.stages.replace, name)

    def after_stage(self, name: StageName) -> Callable[[F], F]:
        """Watch `"generate_id"`, `"lookup_pending"`, `"validate"` or `"publish"`: `(StageEvent) -> None`."""
        return self._engine.stages.registrar(self._engine.stages.watch, name)


async def _send_elicitation_result(
    elicitId: str,  # the wire name FrontMCP-trained models already use
    action: Literal["accept", "decline", "cancel"],
    content: dict[str, Any] | None = None,
) -> str:
    """Placeholder whose signature gives the system tool its input schema; elicitkit's middleware answers calls."""
    raise RuntimeError("sendElicitationResult is answered by elicitkit's middleware")
