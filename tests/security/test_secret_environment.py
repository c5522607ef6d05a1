"""No tool can read elicitkit's secret where Linux shows a process's environment.

`/proc/<pid>/environ` is a process's *initial* environment, readable by its
user, so by every tool it runs. `elicitkit serve` given `ELICITKIT_SECRET`,
`MCP_ELICITATION_SECRET` or `ELICITKIT_SECRET_FILE` executes itself again with
them on a pipe: neither its environ nor a tool's shows them, and the server
still seals with the ring it was given.
"""

from __future__ import annotations

import base64
import os
import secrets
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client

from elicitkit._crypto import SECRET_VARIABLES, secrets_from_env
from tests.scenes import text_of
from tests.security.scenes import ELICITKIT, PATH, TOOLS, Served, elicitkit_serve

pytestmark = pytest.mark.anyio

WAYS = [*SECRET_VARIABLES, "ELICITKIT_SECRET_FILE"]


def given(way: str, ring: str, tmp_path: Path) -> dict[str, str]:
    """The environment that gives `ring` the way named: a variable, or a file only its owner can read."""
    if way != "ELICITKIT_SECRET_FILE":
        return {way: ring}
    path = tmp_path / "elicitkit.secret"
    path.write_text(f"{ring}\n")
    path.chmod(0o600)
    return {way: str(path)}


def names(environ: bytes) -> set[str]:
    return {entry.split(b"=", 1)[0].decode() for entry in environ.split(b"\0") if entry}


def environs(report: str) -> dict[int, bytes | None]:
    """What the `environ` tool read, by pid from the tool up: the environ file's bytes, or None if unreadable."""
    shown: dict[int, bytes | None] = {}
    for line in report.splitlines():
        pid, environ = line.split(" ", 1)
        shown[int(pid)] = None if environ == "unreadable" else b"" if environ == "empty" else base64.b64decode(environ)
    return shown


@pytest.mark.parametrize("way", WAYS)
async def test_no_environment_a_tool_can_read_holds_the_secret_however_it_was_given(
    mode: str, served_over: Served, way: str, tmp_path: Path
) -> None:
    secret, older = secrets.token_hex(32), secrets.token_hex(32)
    env = given(way, f"{secret} {older}", tmp_path)
    # --inherit-env: the tool gets everything the server has, which must not include a secret either.
    async with elicitkit_serve(served_over, env=env, flags=["--inherit-env"]) as server:
        with anyio.fail_after(30):
            async with Client(server, mode=mode) as client:
                result = await client.call_tool("environ", {})
    assert not result.is_error, text_of(result)
    shown = environs(text_of(result))
    tool, served, *ancestors = shown
    assert ancestors[0] == os.getpid()  # the chain runs from the tool through the server up to this test
    readable = {pid: environ for pid, environ in shown.items() if environ is not None}
    assert tool in readable and served in readable  # /proc/self/environ and /proc/$PPID/environ were read
    for pid, environ in readable.items():
        assert secret.encode() not in environ and older.encode() not in environ, f"pid {pid} shows the secret"
    for pid in (tool, served):
        assert names(readable[pid]).isdisjoint(WAYS), f"pid {pid} names {names(readable[pid]) & set(WAYS)}"
        if way == "ELICITKIT_SECRET_FILE":
            assert env[way].encode() not in readable[pid]  # not even where the file is
    assert "ELICITKIT_SECRET_FD" not in names(readable[tool])  # the pipe is the server's alone


def serve_cli(env: dict[str, str], folder: Path = TOOLS) -> subprocess.CompletedProcess[str]:
    """`elicitkit serve` started by hand with exactly `env`; these all stop before serving."""
    return subprocess.run(
        [ELICITKIT, "serve", str(folder)], capture_output=True, text=True, env={"PATH": PATH, **env}, timeout=30
    )


@pytest.mark.parametrize("way", WAYS)
def test_the_server_still_gets_the_whole_ring_it_was_given(way: str, tmp_path: Path) -> None:
    # A ring whose second secret is too short is refused, naming it and where it came from: the ring reached
    # the re-executed server whole, after it left the environment.
    done = serve_cli(given(way, f"{secrets.token_hex(32)} short", tmp_path))
    assert done.returncode == 2
    assert done.stderr.startswith(f"elicitkit serve: {way}'s secret 2 is 5 bytes; a secret must be at least 32 bytes")


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o602])
def test_a_secret_file_other_users_can_read_or_change_is_refused_like_ssh_refuses_a_key(
    tmp_path: Path, mode: int
) -> None:
    path = tmp_path / "elicitkit.secret"
    path.write_text(secrets.token_hex(32))
    path.chmod(mode)
    done = serve_cli({"ELICITKIT_SECRET_FILE": str(path)})
    assert done.returncode == 2
    assert done.stderr == (
        f"elicitkit serve: ELICITKIT_SECRET_FILE: permissions {mode:04o} for {path} are too open: other users "
        f"could read or change the secret. Make it readable by its owner only: chmod 600 {path}\n"
    )


def test_a_secret_file_that_is_missing_empty_or_given_with_the_variable_is_refused_saying_why(tmp_path: Path) -> None:
    missing, empty = tmp_path / "missing", tmp_path / "empty"
    empty.write_text(" \n")
    empty.chmod(0o600)
    cases = [
        ({"ELICITKIT_SECRET_FILE": str(missing)}, f"cannot read {missing}: No such file or directory"),
        ({"ELICITKIT_SECRET_FILE": str(empty)}, f"ELICITKIT_SECRET_FILE: {empty} holds no secret"),
        (
            {"ELICITKIT_SECRET_FILE": str(empty), "ELICITKIT_SECRET": secrets.token_hex(32)},
            "ELICITKIT_SECRET and ELICITKIT_SECRET_FILE are both set; give the secret one way",
        ),
    ]
    for env, says in cases:
        done = serve_cli(env)
        assert done.returncode == 2
        assert done.stderr.startswith("elicitkit serve: ") and says in done.stderr


def test_a_secret_file_holds_the_same_ring_as_the_variable(tmp_path: Path) -> None:
    new, old = secrets.token_hex(32), secrets.token_hex(32)
    env = given("ELICITKIT_SECRET_FILE", f" {new} \n{old}\n\n", tmp_path)
    assert secrets_from_env(env) == [new, old] == secrets_from_env({"ELICITKIT_SECRET": f" {new} \n{old}\n\n"})
    assert secrets_from_env({**env, "MCP_ELICITATION_SECRET": secrets.token_hex(32)}) == [new, old]
