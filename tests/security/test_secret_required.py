"""A durable store never keeps questions and answers unsealed by accident.

A SQLite, Redis or own store keeps records beyond the process, so
`Elicitation(...)` refuses to start with it when the secret is missing, empty
(`ELICITKIT_SECRET=""`) or short, and says how to generate one; plaintext at
rest is an explicit choice (`plaintext_store=True`). The memory store needs no
secret.
"""

from __future__ import annotations

import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequestParams, ElicitResult

from elicitkit import Accepted, Elicitation
from elicitkit._crypto import SECRET_VARIABLES
from elicitkit.testing import ScriptedHuman, decline
from tests.shell.scenes import BIN, EXAMPLE
from tests.shell.test_serve import served_over_http
from tests.test_durable import UnfencedStore

pytestmark = pytest.mark.anyio

VARIABLES = SECRET_VARIABLES
FILE_VARIABLE = "ELICITKIT_SECRET_FILE"
SECRET = "secret-required-test-secret-0123456789abcdef"
HOW = 'Generate one with: python -c "import secrets; print(secrets.token_hex(32))"'


@pytest.fixture(autouse=True)
def no_secret_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in (*VARIABLES, FILE_VARIABLE):
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture(params=["sqlite", "redis"])
def durable(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A durable store's URL: a SQLite file, or the session's real redis-server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'state.db'}"
    return str(request.getfixturevalue("redis_server").url)


def refused(store: Any, **options: Any) -> str:
    with pytest.raises(ValueError, match="secret") as raised:
        Elicitation(MCPServer("sealed"), store=store, **options)
    message = str(raised.value)
    assert HOW in message
    return message


@pytest.mark.parametrize("variable", VARIABLES)
@pytest.mark.parametrize("value", ["", "   ", " \n\t "])
def test_an_empty_secret_variable_with_a_durable_store_is_refused_and_says_how_to_make_one(
    durable: str, variable: str, value: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(variable, value)
    assert f"{variable} is set but empty" in refused(durable)
    assert f"{variable} is set but empty" in refused(durable, plaintext_store=True)  # never read as "no secret"
    assert not (tmp_path / "state.db").exists()  # refused before the store was opened


@pytest.mark.parametrize("value", ["", "   "])
def test_an_empty_secret_file_variable_with_a_durable_store_is_refused_like_an_empty_secret(
    durable: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FILE_VARIABLE, value)
    assert f"{FILE_VARIABLE} is set but empty" in refused(durable)
    assert f"{FILE_VARIABLE} is set but empty" in refused(durable, plaintext_store=True)


def test_a_short_secret_with_a_durable_store_is_refused_from_the_environment_or_the_argument(
    durable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "secret is 5 bytes; a secret must be at least 32 bytes" in refused(durable, secret="short")
    assert "secret[1] is 3 bytes" in refused(durable, secret=[SECRET, "old"])
    monkeypatch.setenv("ELICITKIT_SECRET", "short")
    assert "ELICITKIT_SECRET is 5 bytes; a secret must be at least 32 bytes" in refused(durable)
    monkeypatch.setenv("ELICITKIT_SECRET", f"{SECRET} old")
    assert "ELICITKIT_SECRET's secret 2 is 3 bytes" in refused(durable)
    assert "whitespace separates the secrets of a rotation ring" in refused(durable)


async def test_no_secret_with_a_durable_or_own_store_is_refused_unless_plaintext_is_chosen(durable: str) -> None:
    kind = "SQLite" if durable.startswith("sqlite") else "Redis"
    for store, named in ((durable, kind), (UnfencedStore(), "UnfencedStore")):
        message = refused(store)
        assert f"A {named} store keeps questions, answers and journals beyond this process" in message
        assert "plaintext_store=True" in message
        await Elicitation(MCPServer("plain"), store=store, plaintext_store=True).aclose()


def test_an_empty_secret_argument_is_refused_whatever_the_store(durable: str) -> None:
    for store in (None, "memory://", durable):
        assert "secret is 0 bytes" in refused(store, secret="")
        assert "secret= holds no secret" in refused(store, secret=[])


def test_a_secret_argument_and_plaintext_store_together_are_refused_as_a_contradiction(durable: str) -> None:
    with pytest.raises(ValueError, match="contradict each other"):
        Elicitation(MCPServer("both"), store=durable, secret=SECRET, plaintext_store=True)


def order_server(store: str | None, **options: Any) -> MCPServer:
    server = MCPServer("orders")
    hitl = Elicitation(server, store=store, **options)

    @server.tool()
    async def order(ctx: Context) -> str:
        answer = await hitl.text(ctx, "How many?")
        return answer.data if isinstance(answer, Accepted) else "none"

    return server


def first_bytes_while_asked(db: Path, seen: list[int]) -> Any:
    """An answer that, while the person is being asked, notes the first byte of every record the store keeps."""

    def answer(params: ElicitRequestParams) -> ElicitResult:
        with closing(sqlite3.connect(db)) as conn:  # sqlite3's own `with` commits but leaves it open
            for table in ("runs", "questions", "journal"):
                column = "entry" if table == "journal" else "record"
                seen.extend(row[0][0] for row in conn.execute(f"SELECT {column} FROM {table}"))
        return ElicitResult(action="accept", content={"value": "3"})

    return answer


async def test_plaintext_at_rest_is_an_explicit_choice_and_then_questions_are_answered(
    mode: str, tmp_path: Path
) -> None:
    db = tmp_path / "state.db"
    seen: list[int] = []
    server = order_server(f"sqlite:///{db}", plaintext_store=True)
    async with Client(server, mode=mode, elicitation_callback=ScriptedHuman(first_bytes_while_asked(db, seen))) as c:
        result = await c.call_tool("order", {})
    assert [block.text for block in result.content] == ["3"]  # type: ignore[union-attr]
    assert set(seen) <= {0x00}  # plain records, marked as such
    assert seen or mode == "legacy"  # a 2025-11-25 form keeps its run in one request: nothing is stored


async def test_a_secret_in_the_environment_still_seals_when_plaintext_is_allowed(
    mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ELICITKIT_SECRET", SECRET)
    db = tmp_path / "state.db"
    seen: list[int] = []
    server = order_server(f"sqlite:///{db}", plaintext_store=True)
    async with Client(server, mode=mode, elicitation_callback=ScriptedHuman(first_bytes_while_asked(db, seen))) as c:
        result = await c.call_tool("order", {})
    assert [block.text for block in result.content] == ["3"]  # type: ignore[union-attr]
    assert set(seen) <= {0x01}  # sealed
    assert seen or mode == "legacy"


@pytest.mark.parametrize("value", [None, ""])
async def test_the_memory_store_needs_no_secret_even_when_the_variable_is_empty(
    mode: str, value: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if value is not None:
        monkeypatch.setenv("ELICITKIT_SECRET", value)
    human = ScriptedHuman(ElicitResult(action="accept", content={"value": "2"}))
    async with Client(order_server(None), mode=mode, elicitation_callback=human) as client:
        result = await client.call_tool("order", {})
    assert [block.text for block in result.content] == ["2"]  # type: ignore[union-attr]


def test_elicitkit_serve_with_a_durable_store_and_no_secret_exits_saying_how_to_make_one(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    done = subprocess.run(
        [str(Path(BIN) / "elicitkit"), "serve", "--store", store, str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "elicitkit serve: A SQLite store keeps questions, answers and journals" in done.stderr
    assert HOW in done.stderr
    assert "--plaintext-store" in done.stderr
    assert not (tmp_path / "runs.db").exists()


async def test_elicitkit_serve_keeps_a_durable_store_in_plaintext_only_when_told_to(mode: str, tmp_path: Path) -> None:
    flags = ("--plaintext-store", "--store", f"sqlite:///{tmp_path / 'runs.db'}")
    human = ScriptedHuman(decline())
    async with served_over_http(*flags) as url, Client(url, mode=mode, elicitation_callback=human) as client:
        stopped = await client.call_tool("release", {"version": "3.0"})
    assert stopped.structured_content == {"success": True, "result": {"message": "Stopped at confirm: decline"}}


@pytest.mark.parametrize("variable", [*VARIABLES, FILE_VARIABLE])
def test_elicitkit_serve_given_an_empty_secret_exits_saying_so_though_the_secret_left_its_environment(
    tmp_path: Path, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # elicitkit serve moves the secret variables out of its environment before it starts: an empty one must
    # still be refused, not read as "no secret" and then allowed by --plaintext-store.
    monkeypatch.setenv(variable, "")
    store = f"sqlite:///{tmp_path / 'runs.db'}"
    done = subprocess.run(
        [str(Path(BIN) / "elicitkit"), "serve", "--plaintext-store", "--store", store, str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert f"elicitkit serve: {variable} is set but empty" in done.stderr
    assert not (tmp_path / "runs.db").exists()


async def test_elicitkit_serve_seals_with_the_secret_it_was_given_even_with_plaintext_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 2026-07-28: the run waits between rounds in the store, so there are records to look at while asked.
    monkeypatch.setenv("ELICITKIT_SECRET", SECRET)
    db = tmp_path / "runs.db"
    seen: list[int] = []

    def answer(params: ElicitRequestParams) -> ElicitResult:
        with closing(sqlite3.connect(db)) as conn:  # sqlite3's own `with` commits but leaves it open
            seen.extend(row[0][0] for row in conn.execute("SELECT record FROM runs"))
        return ElicitResult(action="decline")

    flags = ("--plaintext-store", "--store", f"sqlite:///{db}")
    async with (
        served_over_http(*flags) as url,
        Client(url, mode="auto", elicitation_callback=ScriptedHuman(answer)) as c,
    ):
        stopped = await c.call_tool("release", {"version": "3.0"})
    assert stopped.structured_content == {"success": True, "result": {"message": "Stopped at confirm: decline"}}
    assert seen and set(seen) == {0x01}  # sealed with the secret handed over, not kept in plaintext
