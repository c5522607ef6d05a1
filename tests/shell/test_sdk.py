"""elicitkit's shell SDK and `elicitkit ask`: the schemas their options build, their exit codes, and bad questions."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_types import ElicitRequestParams, ElicitRequestURLParams, ElicitResult

from elicitkit.shell import sdk_path
from elicitkit.testing import ScriptedHuman, accept
from tests.scenes import settled, text_of
from tests.shell.scenes import BIN, shell_server

pytestmark = pytest.mark.anyio

LOGIN = "https://registry.example.com/login"


def replies(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The tool's "<exit code> <reply JSON>" lines."""
    return [(code, json.loads(reply)) for code, reply in (line.split(" ", 1) for line in text.splitlines())]


async def test_every_sdk_option_reaches_the_schema_and_a_link_tells_the_script_its_elicitation_id(mode: str) -> None:
    server, hitl = shell_server()
    links: list[ElicitRequestURLParams] = []

    def open_link(params: ElicitRequestParams) -> ElicitResult:
        assert isinstance(params, ElicitRequestURLParams)
        links.append(params)
        return ElicitResult(action="accept")

    human = ScriptedHuman(
        accept({"value": "Bo"}),
        accept({"replicas": 3}),
        accept({"choices": ["eu", "us"]}),
        accept({"go": True}),
        open_link,
        open_link,
    )
    with anyio.fail_after(20):
        async with Client(server, mode=mode, elicitation_callback=human) as client:
            result = await client.call_tool("sdk_tour", {})
    assert not result.is_error, text_of(result)
    lines = replies(text_of(result))
    assert lines[:4] == [
        ("0", {"action": "accept", "content": {"value": "Bo"}}),
        ("0", {"action": "accept", "content": {"replicas": 3}}),
        ("0", {"action": "accept", "content": {"choices": ["eu", "us"]}}),
        ("0", {"action": "accept", "content": {"go": True}}),
    ]
    assert [x.schema for x in human.transcript[:4]] == [
        {
            "type": "object",
            "properties": {
                "value": {"type": "string", "title": "Approver", "minLength": 2, "maxLength": 10, "default": "Ada"}
            },
        },
        {
            "type": "object",
            "properties": {"replicas": {"type": "integer", "minimum": 1, "maximum": 5}},
            "required": ["replicas"],
        },
        {
            "type": "object",
            "properties": {
                "choices": {
                    "type": "array",
                    "items": {"anyOf": [{"const": "eu", "title": "Europe"}, {"const": "us", "title": "United States"}]},
                    "minItems": 1,
                    "default": ["eu"],
                }
            },
        },
        {"type": "object", "properties": {"go": {"type": "boolean"}}, "required": ["go"]},
    ]
    # ek_url and mcp-bash's mcp_elicit_url both tell the script which link the person agreed to open.
    assert [(link.message, link.url) for link in links] == [
        ("Sign in to the registry", LOGIN),
        ("Sign in again", LOGIN),
    ]
    ids = [reply["elicitationId"] for _, reply in lines[4:]]
    assert [code for code, _ in lines[4:]] == ["0", "0"]
    assert all(ids) and ids[0] != ids[1]
    if mode == "legacy":  # 2025-11-25 sends the id to the client too: the same one
        assert ids == [link.elicitation_id for link in links]
    await settled(hitl)


async def test_a_question_no_person_can_be_asked_gets_an_invalid_request_reply_and_the_next_is_answered(
    mode: str,
) -> None:
    server, hitl = shell_server()
    human = ScriptedHuman(accept({"confirmed": True}))
    with anyio.fail_after(20):
        async with Client(server, mode=mode, elicitation_callback=human) as client:
            result = await client.call_tool("bad_requests", {})
    assert not result.is_error, text_of(result)
    lines = text_of(result).splitlines()
    refused = replies("\n".join(lines[:5]))
    assert [code for code, _ in refused] == ["5"] * 5
    assert {reply["action"] for _, reply in refused} == {"error"}
    assert {reply["error"] for _, reply in refused} == {"invalid_request"}
    assert [reply["message"] for _, reply in refused] == [
        "the request is not JSON: Expecting value: line 1 column 1 (char 0)",
        'a form request needs a "schema" object',
        "Raw schema property 'a': type 'object' is not allowed (string, number, integer, boolean or a multi-select array)",
        '"timeout" must be a positive number of seconds',
        "An elicitation URL must be https (plain http only for loopback), not 'http'",
    ]
    assert json.loads(lines[5].removeprefix("file ")) == {
        "action": "error",
        "content": None,
        "error": "invalid_request",
        "message": "the request is not JSON: Expecting value: line 1 column 12 (char 11)",
    }
    assert replies(lines[6]) == [("0", {"action": "accept", "content": {"confirmed": True}})]
    assert [x.message for x in human.transcript] == ["Still there?"]  # nobody saw the bad ones
    await settled(hitl)


# --- outside a served tool: no server, only the SDK and the CLI ----------------------------------------


def bash(script: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {"PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", **env}
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=clean, timeout=30)


def test_json_helpers_escape_quotes_backslashes_newlines_and_control_characters() -> None:
    ran = bash(
        'eval "$(elicitkit shell-sdk)"\n'
        'mcp_json_obj text "$(printf \'a "b" \\\\ c\\nd\\te\\001f é\')"; echo\n'
        'mcp_json_arr x "" "y z"; echo'
    )
    assert ran.returncode == 0, ran.stderr
    obj, arr = ran.stdout.splitlines()
    assert json.loads(obj) == {"text": 'a "b" \\ c\nd\te\x01f é'}
    assert json.loads(arr) == ["x", "", "y z"]


def test_shell_sdk_path_prints_the_file_it_evals() -> None:
    ran = bash("elicitkit shell-sdk --path")
    assert ran.stdout.strip() == str(sdk_path())
    assert bash("elicitkit shell-sdk").stdout == sdk_path().read_text()


@pytest.mark.parametrize(
    ("env", "code", "reply"),
    [
        ({}, 4, {"action": "decline", "content": None, "error": "not_supported"}),
        (
            {"MCP_ELICIT_SUPPORTED": "1"},
            5,
            {
                "action": "error",
                "content": None,
                "error": "invalid_request",
                "message": "not inside a tool served by elicitkit (no ELICITKIT_ASK)",
            },
        ),
    ],
)
def test_outside_a_served_tool_ask_and_the_sdk_say_why_nobody_was_asked(
    env: dict[str, str], code: int, reply: dict[str, Any]
) -> None:
    cli = bash('elicitkit ask confirm "Deploy?"', **env)
    assert (cli.returncode, json.loads(cli.stdout)) == (code, reply)
    sdk = bash('eval "$(elicitkit shell-sdk)"; ek_confirm "Deploy?"', **env)
    expected = dict(reply, message="not inside a tool served by elicitkit") if code == 5 else reply
    assert (sdk.returncode, json.loads(sdk.stdout)) == (code, expected)
    mcp_bash = bash('eval "$(elicitkit shell-sdk)"; mcp_elicit_confirm "Deploy?"', **env)
    assert mcp_bash.returncode == 1  # mcp-bash's code: nobody answered


@pytest.mark.parametrize(
    "argv",
    [["ask"], ["ask", "confirm"], ["ask", "choice", "Env?"], ["ask", "shout", "Hi"], ["ask", "form", "X"]],
)
def test_a_bad_ask_command_line_exits_64_not_a_code_that_reads_as_an_answer(argv: list[str]) -> None:
    ran = subprocess.run([f"{BIN}/elicitkit", *argv], capture_output=True, text=True, timeout=30)
    assert ran.returncode == 64
    assert ran.stdout == ""
    assert "elicitkit ask" in ran.stderr


def test_elicitkit_ask_loads_only_the_standard_library_so_a_question_starts_in_milliseconds() -> None:
    probe = (
        "import sys\n"
        "from elicitkit._cli import main\n"
        "code = main(['ask', 'confirm', 'Deploy?'])\n"
        "heavy = sorted(m for m in ('mcp', 'mcp_types', 'pydantic', 'anyio', 'starlette', 'jsonschema') if m in sys.modules)\n"
        "print(code, heavy)\n"
    )
    ran = subprocess.run([f"{BIN}/python", "-c", probe], capture_output=True, text=True, timeout=30, env={})
    assert ran.stdout.splitlines()[-1] == "4 []", ran.stderr
