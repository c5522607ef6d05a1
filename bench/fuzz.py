"""HTTP fuzzing: generated, mostly broken requests against a running server; it must refuse each clearly.

What it measures
----------------
A real server process (`bench/_fuzz_server.py`: `MCPServer` + `Elicitation`
with a durable store, served over streamable HTTP by uvicorn on 127.0.0.1,
logging at WARNING to stderr), once per store: SQLite (a file) and Redis (a
`redis-server` this script starts on a free port). Its tools cover the surface
a client reaches: a typed form, the one-field helpers with a journaled step, a
raw dict schema, the `elicit` tool asking in the web inbox, a secure form and a
third-party flow on elicitkit's pages, a URL elicitation, inbox questions that
become tasks, and a tool that asks nothing.

`--concurrency` workers, half on each protocol era, send `--n` requests in all
(split evenly over the stores). Each worker plays a client that mostly
misbehaves, from live material it harvests as it goes (sessions, requestStates,
input request keys, task ids, elicitIds, page links, CSRF values, cookies):

- 2025-11-25: `initialize` (with and without elicitation and task capabilities)
  and a session, `tools/call` read as an SSE stream whose `elicitation/create`
  requests get replies (valid, wrong, or a JSON-RPC error), task-augmented calls
  and `tasks/*`, every other method, notifications, replies to unknown ids;
- 2026-07-28: `tools/call` returning `InputRequiredResult`s and their retries
  with `inputResponses` and `requestState` (valid, forged, tampered, replayed,
  bound to another tool or other arguments), `tasks/*`, every other method;
- on both: mutations of the valid message (wrong types, missing and extra
  fields, huge and deep values, NaN/Infinity, lone surrogates, overlong
  strings, unknown ids), batch arrays, invalid JSON and invalid UTF-8, wrong
  content types, `Accept`, `MCP-Protocol-Version`, `Mcp-Method` and session
  headers, other HTTP methods and paths; and the page routes (`/elicit/go`,
  `/elicit/f`, `/elicit/cb`, the inbox, its answer form and event stream) with
  forged and tampered tokens, wrong or missing CSRF, cookies and forms.

Three counters, which must all stay 0:

- `crashes`: the server process died, or stopped answering a `ping` (it is
  restarted, and the fuzzing goes on);
- `internal_errors`: an HTTP 5xx, or a JSON-RPC error `-32603`, in any response;
- `tracebacks`: a traceback, or an ERROR (or worse) record, on the server's stderr.

The first offending requests are printed (repr, truncated), with the server's
log record for a traceback (the server tags every record with the request that
was being served).

What the SDK itself does with the methods elicitkit never touches (`prompts/*`,
`resources/*`, `completion/complete`, `logging/setLevel`) is counted apart, as
`sdk_only` on a line before the last: `mcp` 2.3 answers `prompts/get` for an
unknown prompt with a traceback in the log (and -32603 on 2026-07-28).

How to run
----------
From the repository root (needs `redis-server` on PATH, as the tests do)::

    .venv/bin/python bench/fuzz.py                          # 100,000 requests: several minutes
    .venv/bin/python bench/fuzz.py --n 2000 --seed 7 --stores sqlite

The last line is always ``crashes=N internal_errors=N tracebacks=N``; the lines
before it give the requests sent per store and era, the live material harvested
and used (requestStates, task ids, page forms, ... : how deep the fuzzing got),
client timeouts (calls held for a person past 5 s, not an error), the rate and
the time taken.
"""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import anyio
import anyio.to_thread
import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.redis_server

from tests.redis_server import RedisServer  # noqa: E402

SERVER_APP = Path(__file__).with_name("_fuzz_server.py")
SECRET = "fuzz-bench-secret-0123456789abcdef0123456789"
OLD, NEW = "2025-11-25", "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
REQUEST_TIMEOUT = 5.0  # seconds for one request (a call held for a person ends here: counted as a client timeout)
STREAM_WAIT = 1.5  # seconds a worker follows one SSE stream before it drops the connection (a dropped client)
PROBE_EVERY, PROBE_TIMEOUT = 2.0, 15.0
LAST_WAIT = 1.0  # seconds the last requests in flight get once all are sent, before they are dropped
SHOWN = 5  # offending requests printed per counter
# Methods elicitkit does not touch: whatever the SDK does with them is the SDK's, counted apart (`sdk_only`).
SDK_ONLY = frozenset(
    {"prompts/get", "prompts/list", "resources/read", "resources/list", "resources/templates/list"}
    | {"resources/subscribe", "resources/unsubscribe", "completion/complete", "logging/setLevel"}
)

TOOLS: dict[str, Callable[[random.Random], dict[str, Any]]] = {
    "form": lambda r: {"name": r.choice(["v1", "api", "db"])},
    "helpers": lambda r: {"topic": "release"},
    "raw": lambda r: {},
    "secure": lambda r: {},
    "link": lambda r: {},
    "oauth": lambda r: {},
    "inbox": lambda r: {"topic": "infra"},
    "long": lambda r: {},
    "plain": lambda r: {"n": r.randint(0, 9)},
    "elicit": lambda r: {
        "message": r.choice(["Ship it?", "Your name?"]),
        "schema": r.choice(ELICIT_SCHEMAS),
        "uiType": "web",
    },
    "sendElicitationResult": lambda r: {"elicitId": "x" * 22, "action": "accept", "content": {"value": True}},
}
ELICIT_SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
    {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}, "n": {"type": "integer"}}},
    {"type": "object", "properties": {"c": {"type": "string", "enum": ["a", "b"]}}},
]
METHODS = [
    "initialize", "ping", "server/discover", "tools/list", "tools/call", "resources/list",
    "resources/templates/list", "resources/read", "resources/subscribe", "resources/unsubscribe", "prompts/list",
    "prompts/get", "completion/complete", "logging/setLevel", "tasks/get", "tasks/result", "tasks/update",
    "tasks/cancel", "tasks/list", "elicitation/create", "sampling/createMessage", "roots/list", "unknown/method", "",
    "notifications/initialized", "notifications/cancelled", "notifications/progress",
    "notifications/roots/list_changed", "notifications/elicitation/complete", "notifications/tasks/status",
]  # fmt: skip
PARAMS: dict[str, Callable[[random.Random], dict[str, Any]]] = {
    "resources/read": lambda r: {"uri": "file:///etc/passwd"},
    "resources/subscribe": lambda r: {"uri": "x://y"},
    "prompts/get": lambda r: {"name": "nope", "arguments": {}},
    "completion/complete": lambda r: {
        "ref": {"type": "ref/prompt", "name": "x"},
        "argument": {"name": "a", "value": ""},
    },
    "logging/setLevel": lambda r: {"level": r.choice(["debug", "error", "loud"])},
    "notifications/cancelled": lambda r: {"requestId": r.randint(0, 50), "reason": "fuzz"},
    "notifications/progress": lambda r: {"progressToken": r.randint(0, 50), "progress": 1},
    "notifications/elicitation/complete": lambda r: {"elicitationId": "x" * 22},
    "elicitation/create": lambda r: {"message": "?", "requestedSchema": {"type": "object", "properties": {}}},
}


# -- weird values ------------------------------------------------------------------


def deep(depth: int) -> Any:
    value: Any = "bottom"
    for i in range(depth):
        value = [value] if i % 2 else {"d": value}
    return value


def weird(r: random.Random) -> Any:
    pick = r.randrange(34)
    return [
        None, True, False, 0, -1, 2**31, 2**64, -(2**63), 1.5, 1e308, -1e-320, math.nan, math.inf, -math.inf,
        "", " ", "\ud800", "a\udfffb", "\x00", "x" * r.choice([129, 5000, 300_000]), "é" * 1000, "\u202e\ufeff",
        "../../etc/passwd", "<script>alert(1)</script>", "' OR 1=1 --", "{{7*7}}%s%n", [], {}, [None],
        {"": None, "\ud83d": 1}, deep(r.choice([30, 300, 3000])), list(range(r.choice([100, 20_000]))),
        {f"k{i}": i for i in range(r.choice([50, 5000]))}, "v1." + base64.urlsafe_b64encode(r.randbytes(80)).decode(),
    ][pick]  # fmt: skip


def mutate(value: Any, r: random.Random, times: int | None = None) -> Any:
    """`value` with one to three random changes at random places (the input is not changed)."""
    value = json.loads(json.dumps(value))
    for _ in range(times if times is not None else r.randint(1, 3)):
        value = _mutate_once(value, r)
    return value


def _mutate_once(value: Any, r: random.Random) -> Any:
    if not isinstance(value, (dict, list)) or not value or r.random() < 0.15:
        return weird(r) if r.random() < 0.8 else _retype(value, r)
    key: Any = r.choice(list(value)) if isinstance(value, dict) else r.randrange(len(value))
    op = r.random()
    if isinstance(value, dict) and op < 0.15:
        del value[key]
    elif isinstance(value, dict) and op < 0.3:
        value[r.choice(["extra", "_meta", "__proto__", "\ud800", "", "id", "jsonrpc", "task", "params"])] = weird(r)
    else:
        value[key] = _mutate_once(value[key], r)
    return value


def _retype(value: Any, r: random.Random) -> Any:
    if isinstance(value, str):
        return r.choice([[value], {"v": value}, len(value), value * 50, value[::-1], value[:-1], value + "\ud800"])
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return r.choice([str(value), -value, value + 0.5, [value]])
    return r.choice([str(value), None, [value]])


def dumps(value: Any, r: random.Random | None = None) -> bytes:
    """JSON bytes; lone surrogates escaped (valid JSON), or, now and then, written raw (invalid UTF-8)."""
    if r is not None and r.random() < 0.05:
        return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return json.dumps(value).encode()


def tamper(token: str, r: random.Random) -> str:
    if not token:
        return "x"
    i = r.randrange(len(token))
    options = [
        token[:i] + ("A" if token[i] != "A" else "B") + token[i + 1 :],
        token[:i],
        token + "==",
        token[::-1],
        token.replace(".", "", 1),
        "v1." + token,
        token + "\ud800",
        token * 3,
    ]
    return r.choice(options)


# -- valid answers -------------------------------------------------------------------


def answer_for(schema: Any, r: random.Random) -> dict[str, Any]:
    content: dict[str, Any] = {}
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    for name, prop in props.items():
        if isinstance(prop, dict):
            content[name] = _value_for(prop)
    return content


def _value_for(prop: dict[str, Any]) -> Any:
    kind = prop.get("type")
    if "enum" in prop:
        return prop["enum"][0]
    if "oneOf" in prop:
        return prop["oneOf"][0].get("const")
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return prop.get("minimum", 1)
    if kind == "array":
        items = prop.get("items", {})
        options = items.get("enum") or [o.get("const") for o in items.get("anyOf", [])]
        return options[:1]
    formats = {"date": "2026-07-28", "date-time": "2026-07-28T10:00:00Z", "email": "a@b.example", "uri": "https://x.y"}
    return formats.get(prop.get("format", ""), "ok")


def reply_for(params: dict[str, Any], r: random.Random) -> dict[str, Any]:
    """A client's ElicitResult for the question `params`: mostly valid, often not."""
    pick = r.random()
    if params.get("mode") == "url":
        result: dict[str, Any] = {"action": r.choice(["accept", "decline", "cancel"])}
    elif pick < 0.6:
        result = {"action": "accept", "content": answer_for(params.get("requestedSchema"), r)}
    else:
        result = {"action": r.choice(["decline", "cancel", "accept"])}
    return mutate(result, r) if r.random() < 0.4 else result


# -- the server ----------------------------------------------------------------------


class Target:
    """One fuzzed server process and what is known of its stderr."""

    def __init__(self, store: str, log: Path) -> None:
        self.store, self.log = store, log
        self.process: subprocess.Popen[str] | None = None
        self.port = 0
        self.generation = 0
        self.ready = anyio.Event()
        self._read = 0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        args = [sys.executable, str(SERVER_APP), "--store", self.store, "--secret", SECRET]
        with self.log.open("a") as stderr:
            self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env)  # noqa: ASYNC220
        assert self.process.stdout is not None
        with anyio.fail_after(60):
            line = await anyio.to_thread.run_sync(self.process.stdout.readline, abandon_on_cancel=True)
        if not line.startswith("READY "):
            raise RuntimeError(f"the server did not start:\n{self.log.read_text()[-3000:]}")
        self.port = int(line.split()[1])
        self.generation += 1
        self.ready.set()

    async def stop(self) -> None:
        process, self.process = self.process, None
        self.ready = anyio.Event()
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                await anyio.to_thread.run_sync(process.wait, 10)
            except subprocess.TimeoutExpired:
                process.kill()
                await anyio.to_thread.run_sync(process.wait)
        if process.stdout is not None:
            process.stdout.close()

    def new_log(self, *, final: bool = False) -> str:
        """What the server wrote since the last call, up to its last record's start (that record may be
        incomplete: it comes with the next call), or all of it when `final`."""
        with self.log.open("rb") as f:
            f.seek(self._read)
            data = f.read()
        if not final:
            last = max(
                data.rfind(b"\n" + level) for level in (b"DEBUG|", b"INFO|", b"WARNING|", b"ERROR|", b"CRITICAL|")
            )
            data = data[: last + 1] if last >= 0 else b""
        self._read += len(data)
        return data.decode("utf-8", "replace")


RECORD = re.compile(r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL)\|([^|]*)\|")


def bad_records(text: str) -> list[tuple[str, str]]:
    """(fuzz id, excerpt) of each ERROR record and each traceback in `text`, the server's one-line records."""
    found: list[tuple[str, list[str]]] = []
    head, counted = ("-", ""), False
    for line in text.splitlines():
        match = RECORD.match(line)
        if match:
            head, counted = (match[2], line), match[1] in ("ERROR", "CRITICAL")
            if counted:
                found.append((match[2], [line]))
            continue
        if not counted and "Traceback (most recent call last)" in line:
            found.append((head[0], [head[1]]))
            counted = True
        if counted:
            found[-1][1].append(line)
    return [(fid, "\n    ".join(excerpt(lines))) for fid, lines in found]


def excerpt(lines: list[str]) -> list[str]:
    """The record's line, the end of each exception in its chain (the cause first), and the last lines."""
    shown = lines[:1]
    for i, line in enumerate(lines):
        if "The above exception was the direct cause" in line or "During handling of the above exception" in line:
            shown += [*lines[max(1, i - 5) : i], "    ..."]
    return shown + lines[-6:]


# -- counting ------------------------------------------------------------------------


@dataclass
class Stats:
    sent: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    crashes: int = 0
    internal_errors: int = 0
    tracebacks: int = 0
    timeouts: int = 0
    sdk_only: int = 0
    fuzzer_errors: int = 0
    seen: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    """Live material the workers harvested and used: shows the fuzzing got past the front door."""
    offenders: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    recent: dict[str, str] = field(default_factory=dict)
    methods: dict[str, str | None] = field(default_factory=dict)
    ids: itertools.count[int] = field(default_factory=itertools.count)

    def offend(self, counter: str, what: str, method: str | None = None) -> None:
        if method in SDK_ONLY:
            self.sdk_only += 1
            counter = "sdk_only"
        else:
            setattr(self, counter, getattr(self, counter) + 1)
        if len(self.offenders[counter]) < SHOWN:
            self.offenders[counter].append(what)

    def remember(self, fid: str, what: str, method: str | None) -> None:
        self.recent[fid] = what
        self.methods[fid] = method
        if len(self.recent) > 50_000:
            for old in list(self.recent)[:10_000]:
                del self.recent[old]  # its method stays: a late traceback is still told apart (SDK_ONLY)


def short(value: Any, limit: int = 600) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


# -- one client ----------------------------------------------------------------------


@dataclass
class Harvest:
    """Live material a worker found in the server's answers, to replay, tamper with and answer."""

    generation: int = -1
    sessions: deque[str] = field(default_factory=lambda: deque(maxlen=8))
    states: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=40))
    spent: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=40))
    tasks: deque[str] = field(default_factory=lambda: deque(maxlen=40))
    elicit_ids: deque[str] = field(default_factory=lambda: deque(maxlen=40))
    links: deque[str] = field(default_factory=lambda: deque(maxlen=40))
    forms: deque[tuple[str, dict[str, str], dict[str, str]]] = field(default_factory=lambda: deque(maxlen=20))
    cookies: dict[str, str] = field(default_factory=dict)


class Worker:
    def __init__(self, target: Target, store: str, era: str, seed: int, stats: Stats, budget: Budget) -> None:
        self.target, self.store, self.era = target, store, era
        self.r = random.Random(seed)
        self.stats, self.budget = stats, budget
        self.h = Harvest()
        self.next_id = itertools.count(1)

    # -- sending -----------------------------------------------------------------------

    async def send(
        self,
        http: httpx.AsyncClient,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        stream: bool = False,
        follow: Callable[[dict[str, Any]], Any] | None = None,
    ) -> tuple[int, list[Any], str]:
        """Send one request; count what it says; return (status, JSON-RPC messages, text)."""
        self.budget.take()
        fid = f"f{next(self.stats.ids)}"
        what = f"{method} {path} headers={short(headers, 300)} body={short(body, 500)}"
        rpc = rpc_method(body)
        self.stats.remember(fid, what, rpc)
        self.stats.sent[(self.store, self.era)] += 1
        # Raw bytes: a header may carry what a browser never sends (non-ASCII, a lone surrogate's bytes).
        sent_headers = {k: header_bytes(v) for k, v in {**(headers or {}), "x-fuzz-id": fid}.items()}
        url = self.target.base + quote(path, safe="/?&=%:;@!$'()*+,~#", errors="surrogatepass")
        status, messages, text = 0, [], ""
        try:
            if stream:
                with anyio.move_on_after(STREAM_WAIT):
                    async with http.stream(method, url, content=body, headers=sent_headers) as response:
                        status = response.status_code
                        self._check_status(status, what, rpc)
                        async for message in sse_messages(response):
                            messages.append(message)
                            self._check(message, what, rpc)
                            if follow is not None and await follow(message):
                                break
            else:
                response = await http.request(method, url, content=body, headers=sent_headers)
                status, text = response.status_code, response.text
                self.harvest_headers(response)
                self._check_status(status, what + f" -> {short(text, 300)}", rpc)
                messages = parse_messages(response)
                for message in messages:
                    self._check(message, what, rpc)
        except httpx.TimeoutException:
            self.stats.timeouts += 1
        except (httpx.TransportError, httpx.StreamError):
            await self._wait_for_server()
        return status, messages, text

    def _check_status(self, status: int, what: str, rpc: str | None = None) -> None:
        if status >= 500:
            self.stats.offend("internal_errors", f"HTTP {status}: {what}", rpc)

    def _check(self, message: Any, what: str, rpc: str | None) -> None:
        error = message.get("error") if isinstance(message, dict) else None
        if isinstance(error, dict) and error.get("code") == -32603:
            self.stats.offend("internal_errors", f"-32603 {short(message['error'], 300)}: {what}", rpc)

    async def _wait_for_server(self) -> None:
        with anyio.fail_after(120):
            await self.target.ready.wait()

    # -- the loop ----------------------------------------------------------------------

    async def run(self, http: httpx.AsyncClient) -> None:
        try:
            while True:
                if self.h.generation != self.target.generation:
                    self.h = Harvest(generation=self.target.generation)
                await self._wait_for_server()
                try:
                    await self.one(http)
                except (Done, anyio.get_cancelled_exc_class()):
                    raise
                except Exception as exc:  # the fuzzer's own bug: shown, not allowed to end the run
                    self.stats.fuzzer_errors += 1
                    if self.stats.fuzzer_errors <= SHOWN:
                        print(f"fuzzer error: {short(exc)}", file=sys.stderr)
        except Done:
            return

    async def one(self, http: httpx.AsyncClient) -> None:
        pick = self.r.random()
        if pick < 0.17:
            await self.pages(http)
        elif pick < 0.27:
            await self.junk(http)
        elif self.era == OLD:
            await self.old(http, pick)
        else:
            await self.new(http, pick)

    # -- 2025-11-25 ------------------------------------------------------------------------

    def old_headers(self, session: str | None) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        headers["mcp-protocol-version"] = OLD
        if session is not None:
            headers["mcp-session-id"] = session
        return headers

    async def initialize(self, http: httpx.AsyncClient, mutated: bool = False) -> None:
        r = self.r
        capabilities: dict[str, Any] = r.choice(
            [{"elicitation": {}}, {"elicitation": {"form": {}, "url": {}}}, {}, {"elicitation": {"url": {}}}]
        )
        if r.random() < 0.4:
            capabilities["tasks"] = {"requests": {"elicitation": {"create": {}}}}
        params = {"protocolVersion": OLD, "capabilities": capabilities, "clientInfo": {"name": "fuzz", "version": "1"}}
        message = {"jsonrpc": "2.0", "id": next(self.next_id), "method": "initialize", "params": params}
        if mutated:
            message = mutate(message, r)
        await self.send(http, "POST", "/mcp", body=dumps(message, r), headers=self.old_headers(None))

    async def session(self, http: httpx.AsyncClient) -> str | None:
        if len(self.h.sessions) < 3 or self.r.random() < 0.03:
            params = {
                "protocolVersion": OLD,
                "capabilities": self.r.choice(
                    [
                        {"elicitation": {}},
                        {
                            "elicitation": {"form": {}, "url": {}},
                            "tasks": {"requests": {"elicitation": {"create": {}}}},
                        },
                        {},
                    ]
                ),
                "clientInfo": {"name": "fuzz", "version": "1"},
            }
            body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}).encode()
            self.budget.take()
            self.stats.sent[(self.store, self.era)] += 1
            try:
                response = await http.post(self.target.base + "/mcp", content=body, headers=self.old_headers(None))
            except httpx.HTTPError:
                await self._wait_for_server()
                return None
            self._check_status(response.status_code, f"initialize {body!r}")
            session = response.headers.get("mcp-session-id")
            if session:
                note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                await self.send(http, "POST", "/mcp", body=json.dumps(note).encode(), headers=self.old_headers(session))
                self.h.sessions.append(session)
        return self.r.choice(self.h.sessions) if self.h.sessions else None

    async def old(self, http: httpx.AsyncClient, pick: float) -> None:
        r = self.r
        session = await self.session(http)
        headers = self.old_headers(session)
        if pick < 0.55:
            await self.old_call(http, session)
        elif pick < 0.65:
            await self.tasks(http, headers)
        elif pick < 0.72:
            await self.initialize(http, mutated=True)
        elif pick < 0.78:  # a reply to a request the server never sent, or a wrong-direction message
            reply = r.choice(
                [
                    {"jsonrpc": "2.0", "id": r.choice([0, 1, 10**9, "x", None, 1.5]), "result": {"action": "accept"}},
                    {"jsonrpc": "2.0", "id": r.randint(0, 9), "error": {"code": -1, "message": "no"}},
                ]
            )
            await self.send(
                http, "POST", "/mcp", body=dumps(mutate(reply, r) if r.random() < 0.5 else reply, r), headers=headers
            )
        elif pick < 0.82 and session is not None:
            method = r.choice(["DELETE", "GET"])
            if method == "DELETE":
                if session in self.h.sessions:
                    self.h.sessions.remove(session)
                await self.send(http, "DELETE", "/mcp", headers=headers)
            else:
                await self.send(
                    http,
                    "GET",
                    "/mcp",
                    headers={**headers, "accept": "text/event-stream"},
                    stream=True,
                    follow=lambda m: _true(),
                )
        else:
            await self.any_method(http, headers, era_meta=False)

    async def old_call(self, http: httpx.AsyncClient, session: str | None) -> None:
        r = self.r
        tool = r.choice(list(TOOLS))
        params: dict[str, Any] = {"name": tool, "arguments": TOOLS[tool](r)}
        if tool == "sendElicitationResult" and self.h.elicit_ids:
            params["arguments"]["elicitId"] = r.choice(self.h.elicit_ids)
        if r.random() < 0.2:
            params["task"] = {"ttl": r.choice([1000, 60000])}
        if r.random() < 0.3:
            params["_meta"] = {"progressToken": r.randint(1, 99)}
        message: Any = {"jsonrpc": "2.0", "id": next(self.next_id), "method": "tools/call", "params": params}
        if r.random() < 0.3:
            message = mutate(message, r)
        headers = self.old_headers(session)

        sent_id = message.get("id") if isinstance(message, dict) else None

        async def follow(m: Any) -> bool:
            self.harvest(m)
            if not isinstance(m, dict):
                return False
            if m.get("method") == "elicitation/create" and "id" in m:
                self.stats.seen["elicitation/create"] += 1
                if r.random() < 0.1:
                    return True  # the client goes away
                if r.random() < 0.1:
                    reply: Any = {"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32600, "message": "nope"}}
                else:
                    reply = {"jsonrpc": "2.0", "id": m["id"], "result": reply_for(m.get("params") or {}, r)}
                await self.send(http, "POST", "/mcp", body=dumps(reply, r), headers=headers)
                return False
            return "id" in m and ("result" in m or "error" in m) and m.get("id") == sent_id

        await self.send(http, "POST", "/mcp", body=dumps(message, r), headers=headers, stream=True, follow=follow)

    # -- 2026-07-28 ------------------------------------------------------------------------

    def meta(self) -> dict[str, Any]:
        r = self.r
        capabilities: dict[str, Any] = r.choice([{"elicitation": {"form": {}, "url": {}}}, {"elicitation": {}}, {}])
        if r.random() < 0.4:
            capabilities["extensions"] = {TASKS: {}}
        return {
            "io.modelcontextprotocol/protocolVersion": NEW,
            "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        }

    def new_headers(self, method: str, name: str | None = None) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        headers |= {"mcp-protocol-version": NEW, "mcp-method": method}
        if name is not None:
            headers["mcp-name"] = name
        return headers

    async def new(self, http: httpx.AsyncClient, pick: float) -> None:
        if pick < 0.5:
            await self.new_call(http)
        elif pick < 0.75:
            await self.new_retry(http)
        elif pick < 0.85:
            await self.tasks(http, None)
        else:
            await self.any_method(http, None, era_meta=True)

    async def new_call(self, http: httpx.AsyncClient) -> None:
        r = self.r
        tool = r.choice(list(TOOLS))
        arguments = TOOLS[tool](r)
        if tool == "sendElicitationResult" and self.h.elicit_ids:
            arguments["elicitId"] = r.choice(self.h.elicit_ids)
        params = {"name": tool, "arguments": arguments, "_meta": self.meta()}
        message: Any = {"jsonrpc": "2.0", "id": next(self.next_id), "method": "tools/call", "params": params}
        mutated = r.random() < 0.3
        if mutated:
            message = mutate(message, r)
        _, messages, _ = await self.send(
            http, "POST", "/mcp", body=dumps(message, r), headers=self.new_headers("tools/call", tool)
        )
        for m in messages:
            self.harvest(m, call=None if mutated else params)

    async def new_retry(self, http: httpx.AsyncClient) -> None:
        r = self.r
        pool = self.h.states if self.h.states and r.random() < 0.8 else self.h.spent
        if not pool:
            await self.new_call(http)
            return
        state = r.choice(pool)
        params = json.loads(json.dumps(state["call"]))
        params["_meta"] = self.meta() if r.random() < 0.3 else params["_meta"]
        responses = {key: reply_for(request.get("params") or {}, r) for key, request in state["requests"].items()}
        if r.random() < 0.1:
            responses = {tamper(key, r): value for key, value in responses.items()}
        params["inputResponses"] = responses
        params["requestState"] = state["state"]
        pick = r.random()
        if pick < 0.1:
            params["requestState"] = tamper(state["state"], r)
        elif pick < 0.15:
            params["name"] = r.choice(list(TOOLS))
        elif pick < 0.2:
            params["arguments"] = TOOLS[params["name"]](r) if params["name"] in TOOLS else {}
        elif pick < 0.25 and len(pool) > 1:
            params["requestState"] = r.choice(pool)["state"]
        message: Any = {"jsonrpc": "2.0", "id": next(self.next_id), "method": "tools/call", "params": params}
        if r.random() < 0.25:
            message = mutate(message, r)
        _, messages, _ = await self.send(
            http, "POST", "/mcp", body=dumps(message, r), headers=self.new_headers("tools/call", state["call"]["name"])
        )
        if state in self.h.states:
            self.h.states.remove(state)
            self.h.spent.append(state)
        for m in messages:
            self.harvest(m, call=state["call"])

    # -- both eras -----------------------------------------------------------------------

    async def tasks(self, http: httpx.AsyncClient, headers: dict[str, str] | None) -> None:
        r = self.r
        method = r.choice(["tasks/get", "tasks/result", "tasks/update", "tasks/cancel", "tasks/list"])
        task = r.choice(self.h.tasks) if self.h.tasks and r.random() < 0.8 else r.choice(["", "nope", "x" * 22])
        params: dict[str, Any] = {"taskId": task}
        if method == "tasks/update":
            params["inputResponses"] = {r.choice(["k", task]): {"action": "accept", "content": {"value": "w"}}}
        if headers is None:
            params["_meta"] = self.meta()
        message: Any = {"jsonrpc": "2.0", "id": next(self.next_id), "method": method, "params": params}
        if r.random() < 0.1:
            del message["id"]  # a notification named like a request
        if r.random() < 0.3:
            message = mutate(message, r)
        sent_headers = headers or self.new_headers(method)
        stream = method == "tasks/result" and headers is not None

        async def follow(m: Any) -> bool:
            self.harvest(m)
            if not isinstance(m, dict):
                return False
            if m.get("method") == "elicitation/create" and "id" in m:
                reply = {"jsonrpc": "2.0", "id": m["id"], "result": reply_for(m.get("params") or {}, r)}
                await self.send(http, "POST", "/mcp", body=dumps(reply, r), headers=sent_headers)
            return "result" in m or "error" in m

        _, messages, _ = await self.send(
            http, "POST", "/mcp", body=dumps(message, r), headers=sent_headers, stream=stream, follow=follow
        )
        for m in messages:
            self.harvest(m)

    async def any_method(self, http: httpx.AsyncClient, headers: dict[str, str] | None, *, era_meta: bool) -> None:
        r = self.r
        method = r.choice(METHODS)
        params = PARAMS.get(method, lambda _: {})(r)
        if era_meta:
            params["_meta"] = self.meta()
        message: Any = {"jsonrpc": "2.0", "method": method, "params": params}
        if not method.startswith("notifications/"):
            message["id"] = next(self.next_id)
        if r.random() < 0.5:
            message = mutate(message, r)
        key = {"prompts/get": "name", "resources/read": "uri", "resources/subscribe": "uri"}.get(method)
        sent = headers or self.new_headers(method, str(params.get(key)) if key else None)
        await self.send(http, "POST", "/mcp", body=dumps(message, r), headers=sent)

    async def junk(self, http: httpx.AsyncClient) -> None:
        r = self.r
        session = self.h.sessions[0] if self.h.sessions and self.era == OLD else None
        headers = self.old_headers(session) if self.era == OLD else self.new_headers("tools/list")
        valid = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": self.meta()}}
        pick = r.randrange(14)
        body: bytes | None = dumps(valid)
        method, path = "POST", "/mcp"
        if pick == 0:
            body = dumps(valid)[: r.randrange(1, len(dumps(valid)))]
        elif pick == 1:
            body = r.randbytes(r.choice([1, 100, 5000]))
        elif pick == 2:
            body = dumps([mutate(valid, r) if r.random() < 0.5 else valid for _ in range(r.randint(0, 4))])
        elif pick == 3:
            body = b"x" * r.choice([1_000_000, 5_000_000])
        elif pick == 4:
            body = dumps(weird(r), r)
        elif pick == 5:
            headers["content-type"] = r.choice(
                [
                    "text/plain",
                    "application/x-www-form-urlencoded",
                    "",
                    "application/json; charset=latin-1",
                    "multipart/form-data; boundary=x",
                ]
            )
        elif pick == 6:
            headers["accept"] = r.choice(["text/html", "", "*/*", "application/json", "text/event-stream"])
        elif pick == 7:
            headers["mcp-protocol-version"] = r.choice(
                ["", "2024-11-05", "2099-01-01", "junk", OLD, NEW, "2025-11-25, 2026-07-28"]
            )
        elif pick == 8:
            if r.random() < 0.5:
                headers.pop("mcp-protocol-version", None)
            headers["mcp-session-id"] = r.choice(["", "nope", "x" * 5000, "../", "0" * 32])
        elif pick == 9:
            headers["mcp-method"] = r.choice(["tools/call", "", "x" * 300, "initialize"])
            headers["mcp-name"] = r.choice(["plain", "", "nope"])
        elif pick == 10:
            method = r.choice(["GET", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"])
        elif pick == 11:
            path = r.choice(
                [
                    "/",
                    "/mcp/",
                    "/mcp/x",
                    "/elicit",
                    "/elicit/",
                    "/elicit/f/",
                    "/elicit/static/../x",
                    "/%ff",
                    "/mcp?x=%zz",
                ]
            )
        elif pick == 12:
            body = (
                b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"a":'
                + b"[" * 100_000
                + b"]" * 100_000
                + b"}}"
            )
        else:
            body = dumps(valid).replace(b'"tools/list"', b'"tools/list", "id": 2, "method": "ping"')
        stream = method == "GET" and path == "/mcp"
        await self.send(
            http,
            method,
            path,
            body=body if method not in ("GET", "HEAD") else None,
            headers=headers,
            stream=stream,
            follow=(lambda m: _true()) if stream else None,
        )

    # -- pages -----------------------------------------------------------------------------

    async def pages(self, http: httpx.AsyncClient) -> None:
        r = self.r
        user = r.choice(["fuzzer", "fuzzer", "mallory", "", "", ""])  # none: the MCP clients' own links
        headers = {"x-user": user} if user else {}
        cookies = "; ".join(f"{k}={v}" for k, v in self.h.cookies.items() if r.random() < 0.8)
        if r.random() < 0.1:
            cookies = r.choice(
                ["ek_inbox=forged", "ek_inbox=" + tamper(self.h.cookies.get("ek_inbox", "v1.x"), r), "=; ;=="]
            )
        if cookies:
            headers["cookie"] = cookies
        pick = r.random()
        if pick < 0.2:
            _, _, text = await self.send(
                http, "GET", "/elicit/inbox" + r.choice(["", "?part=list", "?part=%ff"]), headers=headers
            )
            self.harvest_page("/elicit/inbox/answer", text)
        elif pick < 0.3:
            await self.send(
                http,
                r.choice(["GET", "HEAD"]),
                "/elicit/inbox/events",
                headers=headers,
                stream=True,
                follow=lambda m: _true(),
            )
        elif pick < 0.55 and self.h.forms:
            action, fields, controls = r.choice(self.h.forms)
            await self.post_form(http, action, fields, controls, headers)
        elif pick < 0.8 and self.h.links:
            link = r.choice(self.h.links)
            if r.random() < 0.2:
                link = link[: link.rfind("/") + 1] + tamper(link[link.rfind("/") + 1 :], r)
            method = r.choice(["GET", "GET", "POST", "HEAD"])
            body = (
                urlencode({"x": weird(r) if r.random() < 0.2 else "y"}, errors="surrogatepass").encode()
                if method == "POST"
                else None
            )
            if method == "POST":
                headers["content-type"] = "application/x-www-form-urlencoded"
            _, _, text = await self.send(http, method, link, headers=headers, body=body)
            self.harvest_page(link, text)
        else:
            token = r.choice(
                ["", "x", "v1.AAAA", "v1." + "A" * 200, "%ff%fe", "..%2f..%2fetc", "a" * 5000, tamper("v1.abcdef", r)]
            )
            path = r.choice(["/elicit/f/", "/elicit/go/", "/elicit/cb?state=", "/elicit/static/"]) + token
            await self.send(
                http, r.choice(["GET", "POST"]), path, headers=headers, body=b"a=b" if r.random() < 0.5 else None
            )

    async def post_form(
        self,
        http: httpx.AsyncClient,
        action: str,
        fields: dict[str, str],
        controls: dict[str, str],
        headers: dict[str, str],
    ) -> None:
        r = self.r
        data: list[tuple[str, str]] = list(controls.items())
        for name, kind in fields.items():
            value = {"checkbox": "on", "number": "1", "date": "2026-07-28", "email": "a@b.example"}.get(kind, "ok")
            data.append((name, value))
        pick = r.random()
        if pick < 0.15:
            data = [(k, v) for k, v in data if not k.endswith("csrf")]
        elif pick < 0.25:
            data = [(k, tamper(v, r) if k.endswith("csrf") else v) for k, v in data]
        elif pick < 0.35:
            data.append(r.choice(data) if data else ("ek:token", "x"))
        elif pick < 0.55 and data:
            i = r.randrange(len(data))
            data[i] = (data[i][0], str(weird(r))[:100_000])
        elif pick < 0.6:
            data.append(("ek:action", r.choice(["accept", "decline", "cancel", "", "x"])))
        body = urlencode(data, encoding="utf-8", errors="surrogatepass").encode()
        content_type = "application/x-www-form-urlencoded"
        if r.random() < 0.1:
            body = body + r.choice([b"&%zz=%", b"&a=%ED%A0%80", b"\xff\xfe", b"&" * 5000])
        if r.random() < 0.1:
            content_type = r.choice(
                ["multipart/form-data; boundary=b", "multipart/form-data", "application/json", "text/plain"]
            )
            if content_type.startswith("multipart") and r.random() < 0.5:
                body = b'--b\r\nContent-Disposition: form-data; name="ek:action"\r\n\r\naccept\r\n--b--\r\n'
        status, _, text = await self.send(
            http, "POST", action, headers={**headers, "content-type": content_type}, body=body
        )
        self.stats.seen[f"form posts {'inbox' if 'inbox' in action else 'page'} {status}"] += 1
        self.harvest_page(action, text)

    # -- harvesting ------------------------------------------------------------------------

    def harvest(self, message: Any, call: dict[str, Any] | None = None) -> None:
        if not isinstance(message, dict):
            return
        result = message.get("result")
        params = message.get("params")
        if isinstance(params, dict):
            self._links_in(params)
        if not isinstance(result, dict):
            return
        self._links_in(result)
        if isinstance(result.get("requestState"), str) and isinstance(result.get("inputRequests"), dict) and call:
            self.stats.seen["requestStates"] += 1
            self.h.states.append({"call": call, "state": result["requestState"], "requests": result["inputRequests"]})
        task = result.get("task") if isinstance(result.get("task"), dict) else result
        if isinstance(task.get("taskId"), str):
            self.stats.seen["task ids"] += 1
            self.h.tasks.append(task["taskId"])
        structured = result.get("structuredContent")
        pending = structured.get("elicitationPending") if isinstance(structured, dict) else None
        if isinstance(pending, dict) and isinstance(pending.get("elicitId"), str):
            self.stats.seen["elicitIds"] += 1
            self.h.elicit_ids.append(pending["elicitId"])

    def _links_in(self, value: Any) -> None:
        for url in re.findall(r"http://127\.0\.0\.1:\d+(/elicit/[^\s\"'\\]+)", json.dumps(value)):
            self.stats.seen["page links"] += 1
            self.h.links.append(url)
        for state in re.findall(r"state=([A-Za-z0-9._~-]+)", json.dumps(value)):
            self.h.links.append(f"/elicit/cb?state={state}&code=c")

    def harvest_headers(self, response: httpx.Response) -> None:
        """A page's cookies (the link's binding, the inbox's CSRF cookie) and where it redirects to."""
        for cookie in response.headers.get_list("set-cookie"):
            name, _, rest = cookie.partition("=")
            value = rest.split(";", 1)[0]
            if value and "max-age=0" not in cookie.lower():
                self.h.cookies[name.strip()] = value
            else:
                self.h.cookies.pop(name.strip(), None)
        location = response.headers.get("location", "")
        if "/elicit/" in location:
            self.stats.seen["page redirects"] += 1
            self.h.links.append(location[location.index("/elicit/") :])

    def harvest_page(self, action: str, text: str) -> None:
        if "<form" not in text:
            return
        controls = dict(re.findall(r'name="(ek:[a-z]+)"[^>]*value="([^"]*)"', text))
        fields: dict[str, str] = {}
        for tag in re.findall(r"<(?:input|select|textarea)[^>]*>", text):
            name = re.search(r'name="([^"]+)"', tag)
            if name and not name[1].startswith("ek:"):
                kind = re.search(r'type="([^"]+)"', tag)
                fields[name[1]] = kind[1] if kind else "text"
        posted = re.search(r'<form[^>]*action="([^"]+)"', text)
        target = posted[1].replace("&amp;", "&") if posted else action
        if target.startswith("http"):
            target = urlsplit(target).path
        self.stats.seen["page forms"] += 1
        for token in re.findall(r'name="ek:token"[^>]*value="([^"]*)"', text):
            self.h.forms.append((target, fields, {**controls, "ek:token": token, "ek:action": "accept"}))
        if "ek:token" not in controls:
            self.h.forms.append((target, fields, {**controls, "ek:action": self.r.choice(["accept", "decline"])}))


def rpc_method(body: bytes | None) -> str | None:
    try:
        message = json.loads(body or b"")
    except (ValueError, RecursionError):
        return None
    return message.get("method") if isinstance(message, dict) and isinstance(message.get("method"), str) else None


def header_bytes(value: str) -> bytes:
    return value.encode("utf-8", "surrogatepass").translate(None, b"\0\r\n")


class Done(Exception):
    """This worker's share of the requests is sent."""


class Budget:
    """The requests left to send against one server, shared by its workers."""

    def __init__(self, n: int) -> None:
        self.left = n
        self.spent = anyio.Event()

    def take(self) -> None:
        """Count one request about to be sent; raise `Done` when none are left."""
        if self.left <= 0:
            self.spent.set()
            raise Done
        self.left -= 1
        if not self.left:
            self.spent.set()


async def _true() -> bool:
    return True


def parse_messages(response: httpx.Response) -> list[Any]:
    kind = response.headers.get("content-type", "")
    try:
        if kind.startswith("application/json"):
            value = response.json()
            return value if isinstance(value, list) else [value]
        if kind.startswith("text/event-stream"):
            return [
                json.loads(line[5:])
                for line in response.text.splitlines()
                if line.startswith("data:") and line[5:].strip()
            ]
    except ValueError:
        pass
    return []


async def sse_messages(response: httpx.Response) -> Any:
    if not response.headers.get("content-type", "").startswith("text/event-stream"):
        try:
            await response.aread()
            value = response.json()
        except ValueError:
            return
        for message in value if isinstance(value, list) else [value]:
            yield message
        return
    async for line in response.aiter_lines():
        if line.startswith("data:") and line[5:].strip():
            try:
                yield json.loads(line[5:])
            except ValueError:
                continue


# -- the run -------------------------------------------------------------------------


async def watch(name: str, target: Target, stats: Stats, done: anyio.Event) -> None:
    """Count a dead or unresponsive server as a crash, and start it again."""
    ping = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "ping",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": NEW}},
        }
    ).encode()
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": NEW,
        "mcp-method": "ping",
    }
    async with httpx.AsyncClient(timeout=PROBE_TIMEOUT) as http:
        while not done.is_set():
            with anyio.move_on_after(PROBE_EVERY):
                await done.wait()
            if done.is_set():
                return
            count_log(name, target, stats)  # while the requests that caused them are still remembered
            process = target.process
            dead = process is None or process.poll() is not None
            if not dead:
                try:
                    response = await http.post(target.base + "/mcp", content=ping, headers=headers)
                    dead = response.status_code >= 500
                except httpx.HTTPError:
                    dead = True
            if dead:
                tail = target.log.read_text(errors="replace").splitlines()[-15:]
                stats.offend(
                    "crashes",
                    f"exit={process.poll() if process else None}; "
                    f"recent: {short(list(stats.recent.values())[-5:], 1500)}; stderr tail: " + "\n".join(tail),
                )
                await target.stop()
                await target.start()


async def fuzz_store(
    name: str, url: str, n: int, args: argparse.Namespace, stats: Stats, log: Path, closing: anyio.abc.TaskGroup
) -> float:
    """Fuzz one server with `n` requests; return the seconds it took. It is stopped (and its log read) in `closing`,
    a stop that takes a few seconds under load, while the next store's server is fuzzed."""
    target = Target(url, log)
    await target.start()
    budget = Budget(n)
    finished, running = anyio.Event(), [args.concurrency]

    async def work(worker: Worker, http: httpx.AsyncClient) -> None:
        try:
            await worker.run(http)
        finally:
            running[0] -= 1
            if not running[0]:
                finished.set()

    done = anyio.Event()
    start = time.perf_counter()
    limits = httpx.Limits(max_connections=4 * args.concurrency, max_keepalive_connections=2 * args.concurrency)
    try:
        async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT, limits=limits) as http, anyio.create_task_group() as tg:
            tg.start_soon(watch, name, target, stats, done)
            async with anyio.create_task_group() as workers:
                for i in range(args.concurrency):
                    era = (OLD, NEW)[i % 2]
                    worker = Worker(target, name, era, hash((args.seed, name, i)) & 0xFFFFFFFF, stats, budget)
                    workers.start_soon(work, worker, http)
                await budget.spent.wait()
                # The last requests in flight may be calls held for a person: give them a moment, then drop them.
                with anyio.move_on_after(LAST_WAIT):
                    await finished.wait()
                workers.cancel_scope.cancel()
            done.set()
    finally:
        elapsed = time.perf_counter() - start
        closing.start_soon(finish, name, target, stats)
    return elapsed


async def finish(name: str, target: Target, stats: Stats) -> None:
    """Stop the server, then count the ERROR records and tracebacks it wrote last, shutdown included."""
    await target.stop()
    count_log(name, target, stats, final=True)


def count_log(name: str, target: Target, stats: Stats, *, final: bool = False) -> None:
    """Count the ERROR records and tracebacks the server wrote since the last look."""
    for fid, text in bad_records(target.new_log(final=final)):
        request = stats.recent.get(fid, f"request {fid} (no longer kept)") if fid != "-" else "outside a request"
        stats.offend("tracebacks", f"[{name}] {request}\n    {text}", stats.methods.get(fid))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="requests to send in all (default 100000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=32, help="clients at once, half on each era")
    parser.add_argument("--stores", default="sqlite,redis", help="comma-separated: sqlite, redis, memory")
    args = parser.parse_args()
    stores = [s for s in args.stores.split(",") if s]
    stats = Stats()
    total = 0.0
    with tempfile.TemporaryDirectory(prefix="elicitkit-fuzz-") as tmp:
        directory = Path(tmp)
        redis = RedisServer(directory / "redis") if "redis" in stores else None
        if redis is not None:
            await redis.start()
        try:
            async with anyio.create_task_group() as closing:
                for i, store in enumerate(stores):
                    url = {"sqlite": f"sqlite:///{directory / 'state.db'}", "memory": "memory://"}.get(store) or (
                        redis.url if redis else ""
                    )
                    share = args.n // len(stores) + (1 if i < args.n % len(stores) else 0)
                    log = directory / f"{store}.log"
                    elapsed = await fuzz_store(store, url, share, args, stats, log, closing)
                    total += elapsed
                    sent = {era: stats.sent[(store, era)] for era in (OLD, NEW)}
                    rate = sum(sent.values()) / elapsed
                    print(
                        f"{store}: {sent[OLD]} requests on {OLD}, {sent[NEW]} on {NEW}, {rate:.0f}/s, {elapsed:.1f} s"
                    )
        finally:
            if redis is not None:
                await redis.stop()
    for counter in ("sdk_only", "crashes", "internal_errors", "tracebacks"):
        for what in stats.offenders[counter]:
            print(f"{counter}: {what}")
    sent_all = sum(stats.sent.values())
    print(
        f"sdk_only={stats.sdk_only} "
        f"(5xx, -32603 or tracebacks from the SDK's own methods: {', '.join(sorted(SDK_ONLY))})"
    )
    print("harvested and used: " + ", ".join(f"{k}={v}" for k, v in sorted(stats.seen.items())))
    print(f"seed={args.seed} concurrency={args.concurrency} requests={sent_all} client_timeouts={stats.timeouts}")
    print(f"fuzzer_errors={stats.fuzzer_errors} (the fuzzer's own bugs, shown on stderr)")
    print(f"rate={sent_all / total:.0f}/s seconds={total:.1f}")
    print(f"crashes={stats.crashes} internal_errors={stats.internal_errors} tracebacks={stats.tracebacks}")


if __name__ == "__main__":
    sys.setrecursionlimit(20_000)  # the deepest generated values (3,000 levels) are encoded by json.dumps
    anyio.run(main)
