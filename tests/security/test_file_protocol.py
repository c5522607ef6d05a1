"""mcp-bash's file protocol never reads or writes through a link the tool planted in its call folder.

The server opens every file in the call folder with `O_NOFOLLOW`, writes its
reply through a fresh temporary (`O_CREAT | O_EXCL | O_NOFOLLOW`) renamed into
place, and reads nothing from a folder others could write to. A planted link is
refused with a log line, the file it names is left as it was, and the tool's
real question is still answered.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from elicitkit.shell._private import PrivateFolder, Refused
from elicitkit.testing import ScriptedHuman, accept
from tests.scenes import text_of
from tests.security.scenes import Served, elicitkit_serve

pytestmark = pytest.mark.anyio

ANSWERED = {"action": "accept", "content": {"ok": True}}
ELSEWHERE = '{"message":"Planted question?","mode":"form","schema":{"type":"object","properties":{}}}'
LINK_REFUSED = "is a symbolic link; write the file itself in the call folder"


def refused(reason: str) -> dict[str, Any]:
    return {
        "action": "error",
        "content": None,
        "error": "invalid_request",
        "message": f"refused elicit.request: {reason}",
    }


@pytest.mark.parametrize(
    ("plant", "first", "logged"),
    [
        (
            "request",
            refused(f"elicit.request {LINK_REFUSED}"),
            f"refused elicit.request: elicit.request {LINK_REFUSED}",
        ),
        ("response", None, "elicit.response was a symbolic link; the reply replaces the link, not what it names"),
        ("temporary", None, None),
        ("error", None, f"ignored tool.error: tool.error {LINK_REFUSED}"),
        (
            "open_folder",
            refused("the call folder is writable by other users (mode 0777); it must be 0700"),
            "refused elicit.request: the call folder is writable by other users (mode 0777)",
        ),
    ],
    ids=["request", "response", "temporary", "error", "open_folder"],
)
async def test_a_link_planted_in_the_call_folder_is_refused_and_the_real_question_still_works(
    mode: str,
    served_over: Served,
    tmp_path: Path,
    plant: str,
    first: dict[str, Any] | None,
    logged: str | None,
) -> None:
    # Outside the call folder: a file a link could make the server read (a question, a JSON-RPC error) or
    # overwrite with its reply.
    target = tmp_path / "elsewhere.json"
    planted_text = ELSEWHERE if plant == "request" else '{"code": -32000, "message": "from elsewhere"}'
    target.write_text(planted_text)
    human = ScriptedHuman(accept({"ok": True}))
    log = tmp_path / "server.log"
    async with elicitkit_serve(served_over, log=log) as server:
        with anyio.fail_after(30):
            async with Client(server, mode=mode, elicitation_callback=human) as client:
                result = await client.call_tool("planted", {"plant": plant, "target": str(target)})
    assert not result.is_error, text_of(result)
    responses = [json.loads(line) for line in text_of(result).splitlines()]
    assert responses == ([first] if first else []) + [ANSWERED]
    assert [x.message for x in human.transcript] == ["Real question?"]  # never the planted one
    assert target.read_text() == planted_text  # neither read as a question nor written over
    if logged is not None:
        assert logged in log.read_text()


# --- the folder's own rules, one at a time -------------------------------------------------------------


@pytest.fixture
def folder(tmp_path: Path) -> Any:
    made = PrivateFolder(str(tmp_path))
    yield made
    made.remove()


def test_a_reply_is_never_written_through_the_temporary_name_the_tool_planted(
    folder: PrivateFolder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("untouched")
    names = iter(["0123456789abcdef", "fedcba9876543210"])
    monkeypatch.setattr("elicitkit.shell._private.secrets.token_hex", lambda n: next(names))
    (folder.path / ".elicit.response.0123456789abcdef.tmp").symlink_to(target)  # the first name it will pick
    folder.write_atomically("elicit.response", '{"action":"decline","content":null}')
    assert target.read_text() == "untouched"
    assert (folder.path / "elicit.response").read_text() == '{"action":"decline","content":null}'
    assert not (folder.path / "elicit.response").is_symlink()
    assert sorted(p.name for p in folder.path.iterdir()) == [".elicit.response.0123456789abcdef.tmp", "elicit.response"]


def test_a_link_in_place_of_the_cancel_file_creates_nothing_where_it_points(
    folder: PrivateFolder, tmp_path: Path
) -> None:
    target = tmp_path / "created-by-nobody"
    (folder.path / "cancelled").symlink_to(target)
    with pytest.raises(Refused, match="cancelled is a symbolic link"):
        folder.touch("cancelled")
    assert not target.exists()


def test_a_request_that_is_a_fifo_or_a_folder_is_refused_without_waiting(folder: PrivateFolder) -> None:
    os.mkfifo(folder.path / "elicit.request")
    with pytest.raises(Refused, match=r"elicit\.request is not a plain file"):
        folder.take("elicit.request")
    assert not folder.exists("elicit.request")  # consumed all the same
    (folder.path / "q.1.json").mkdir()
    with pytest.raises(Refused, match=r"q\.1\.json is not a plain file"):
        folder.read("q.1.json")


def test_the_call_folder_is_private_and_its_files_are_read_only_while_it_stays_so(folder: PrivateFolder) -> None:
    assert (folder.path.stat().st_mode & 0o777, folder.path.stat().st_uid) == (0o700, os.geteuid())
    (folder.path / "elicit.request").write_text("{}")
    folder.path.chmod(0o770)
    with pytest.raises(Refused, match=r"writable by other users \(mode 0770\)"):
        folder.read("elicit.request")
    folder.path.chmod(0o700)
    assert folder.read("elicit.request") == b"{}"


def test_a_call_folder_moved_away_by_its_tool_is_not_removed_in_its_place(tmp_path: Path) -> None:
    made = PrivateFolder(str(tmp_path))
    moved = tmp_path / "moved"
    made.path.rename(moved)
    made.path.mkdir()  # something else now has the folder's name
    (made.path / "keep").write_text("kept")
    made.remove()
    assert (made.path / "keep").read_text() == "kept"
    assert moved.is_dir()
