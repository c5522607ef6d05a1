"""The shell SDK sends exactly the question a script asked, whatever its values hold.

A value that comes from the caller (`ek_number --default "$(mcp_args_get .size)"`)
must stay the value it is: text stays text wherever it goes, and an option that
takes a number, a count or a boolean refuses anything else before a question is
sent. Every helper, every option, in both of mcp-bash's modes (with jq and
without), through a real `elicitkit serve` over stdio and HTTP, on both eras.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from elicitkit.shell import sdk_path
from elicitkit.testing import ScriptedHuman, accept
from tests.scenes import text_of
from tests.security.scenes import Question, Recorder, Served, elicitkit_serve

pytestmark = pytest.mark.anyio

# What a caller may put in an argument. The first two would turn a form into a link to any site, were
# they spliced into the request; the others carry JSON's and the shell's special characters.
HOSTILE = [
    '"}, "mode": "url", "url": "https://evil.example/"',
    '1}}, "mode": "url", "url": "https://evil.example/", "x": {"y": "',
    'two\nlines\r\tand {braces} [brackets] \\ back\\"slash \\u0022',
    "control \x01\x1f\x7f, unicode é 🙂, shell $(echo PWNED) `echo PWNED` ${HOME} '",
]
LINK = "https://docs.example.com/sign-in"
DECLINED = {"action": "decline", "content": None}


def form(message: str, field: str, prop: dict[str, Any], *, required: bool = True) -> Question:
    schema: dict[str, Any] = {"type": "object", "properties": {field: prop}}
    if required:
        schema["required"] = [field]
    return ("form", message, schema)


def titled(option: str) -> dict[str, str]:
    """The SDK's `value:Title`: the value before the first colon, the title after it (or the value)."""
    value, colon, title = option.partition(":")
    return {"const": value, "title": title if colon else option}


def asked(v: str) -> list[tuple[list[str], Question]]:
    """Every helper with `v` in every option that takes text, and the question it must send."""
    pieces = v.split(",")  # a multi-choice --default is comma-separated
    schema = {"type": "object", "properties": {"note": {"type": "string", "title": v}}}
    return [
        (
            ["ek_confirm", "--title", v, "--description", v, "--field", v, v],
            form(v, v, {"type": "boolean", "title": v, "description": v}),
        ),
        (["mcp_elicit_confirm", "--title", v, v], form(v, "confirmed", {"type": "boolean", "title": v})),
        (
            ["ek_string", "--title", v, "--description", v, "--default", v, v, v],
            form(v, v, {"type": "string", "title": v, "description": v, "default": v}, required=False),
        ),
        (
            ["mcp_elicit_string", "--min", "0", "--max", "9", v, v],
            form(v, v, {"type": "string", "minLength": 0, "maxLength": 9}),
        ),
        (
            ["ek_number", "--title", v, "--min", "-1.5", "--max", "1e3", "--default", "2.5E1", v, v],
            form(v, v, {"type": "number", "title": v, "minimum": -1.5, "maximum": 1000, "default": 25}, required=False),
        ),
        (
            ["mcp_elicit_number", "--integer", "--description", v, "--min", "0", "--max", "10", v],
            form(v, "value", {"type": "integer", "description": v, "minimum": 0, "maximum": 10}),
        ),
        (
            ["ek_choice", "--default", v, "--field", v, v, v, "plain"],
            form(v, v, {"type": "string", "enum": [v, "plain"], "default": v}, required=False),
        ),
        (["mcp_elicit_choice", v, v, "plain"], form(v, "choice", {"type": "string", "enum": [v, "plain"]})),
        (
            ["ek_titled_choice", "--title", v, "--default", "ok", v, f"ok:{v}", v],
            form(
                v,
                "choice",
                {"type": "string", "title": v, "oneOf": [titled(f"ok:{v}"), titled(v)], "default": "ok"},
                required=False,
            ),
        ),
        (
            ["mcp_elicit_titled_choice", v, f"ok:{v}"],
            form(v, "choice", {"type": "string", "oneOf": [titled(f"ok:{v}")]}),
        ),
        (
            ["ek_multi_choice", "--title", v, "--min", "1", "--max", "9", "--default", v, v, *pieces, "plain"],
            form(
                v,
                "choices",
                {
                    "type": "array",
                    "title": v,
                    "items": {"type": "string", "enum": [*pieces, "plain"]},
                    "minItems": 1,
                    "maxItems": 9,
                    "default": pieces,
                },
                required=False,
            ),
        ),
        (
            ["mcp_elicit_multi_choice", v, v, "plain"],
            form(v, "choices", {"type": "array", "items": {"type": "string", "enum": [v, "plain"]}}),
        ),
        (
            ["ek_titled_multi_choice", "--description", v, v, f"ok:{v}", v],
            form(v, "choices", {"type": "array", "description": v, "items": {"anyOf": [titled(f"ok:{v}"), titled(v)]}}),
        ),
        (
            ["mcp_elicit_titled_multi_choice", v, f"ok:{v}"],
            form(v, "choices", {"type": "array", "items": {"anyOf": [titled(f"ok:{v}")]}}),
        ),
        (["ek_url", "--timeout", "30", v, LINK], ("url", v, LINK)),
        (["mcp_elicit_url", v, LINK, "30"], ("url", v, LINK)),
        (["mcp_elicit", v, json.dumps(schema), "30.5"], ("form", v, schema)),
        (
            ["ek_ask_json", json.dumps({"message": v, "mode": "form", "schema": schema})],
            ("form", v, schema),
        ),
    ]


# Every option that takes a number, a count or a boolean, on every helper that has it.
NUMBER, COUNT, BOOLEAN = "a number", "a whole number (0 or more)", "true or false"
FAMILIES = {
    "confirm": [("--default", BOOLEAN), ("--timeout", NUMBER)],
    "string": [("--min", COUNT), ("--max", COUNT), ("--timeout", NUMBER)],
    "number": [("--min", NUMBER), ("--max", NUMBER), ("--default", NUMBER), ("--timeout", NUMBER)],
    "choice": [("--timeout", NUMBER)],
    "titled_choice": [("--timeout", NUMBER)],
    "multi_choice": [("--min", COUNT), ("--max", COUNT), ("--timeout", NUMBER)],
    "titled_multi_choice": [("--min", COUNT), ("--max", COUNT), ("--timeout", NUMBER)],
}


def typed_options() -> list[tuple[list[str], str, str]]:
    """(the call before the bad value, the option, what it takes) for every typed option of every helper."""
    calls = []
    for family, options in FAMILIES.items():
        for helper in (f"ek_{family}", f"mcp_elicit_{family}"):
            for option, kind in options:
                calls.append(([helper, option], option, kind))
                if family == "number":
                    calls.append(([helper, "--integer", option], option, kind))
    calls.append((["ek_url", "--timeout"], "--timeout", NUMBER))
    return calls


def with_value(call: list[str], value: str) -> list[str]:
    """The whole call: the typed option's `value`, then a message and what the helper needs after it."""
    helper = call[0]
    tail = ["Which?", "a", "b"] if "choice" in helper else ["Go?", LINK] if helper == "ek_url" else ["Go?"]
    return [*call, value, *tail]


def refused(option: str, kind: str, value: str) -> dict[str, Any]:
    message = f"{option} must be {kind}, not '{value}'"
    return {"action": "error", "content": None, "error": "invalid_request", "message": message}


def case_lines(text: str) -> list[tuple[int, dict[str, Any]]]:
    lines = text.splitlines()
    assert "JQ CALLED" not in lines
    return [(int(code), json.loads(reply)) for code, reply in (line.split(" ", 1) for line in lines)]


@pytest.mark.parametrize("minimal", [False, True], ids=["with-jq", "minimal"])
async def test_every_helper_sends_exactly_the_question_asked_whatever_its_values_hold(
    mode: str, served_over: Served, minimal: bool
) -> None:
    cases: list[list[str]] = []
    questions: list[Question] = []
    replies: list[tuple[int, dict[str, Any]]] = []
    for v in HOSTILE:
        for call, question in asked(v):
            cases.append(call)
            questions.append(question)
            mcp_names = call[0].startswith("mcp_")  # mcp-bash's code: 0 when the person answered
            replies.append((0 if mcp_names else 1, DECLINED))
        for call, option, kind in typed_options():  # refused in the script: never sent
            cases.append(with_value(call, v))
            replies.append((1 if call[0].startswith("mcp_") else 5, refused(option, kind, v)))
        cases += [["mcp_elicit", "Go?", "{}", v], ["mcp_elicit_url", "Go?", LINK, v]]
        replies += [(1, refused("TIMEOUT", NUMBER, v))] * 2
    # A multi-choice default is split on commas as `read -a` splits it: a final empty value is dropped.
    cases.append(["ek_multi_choice", "--default", "a,b,", "Which?", "a", "b"])
    items = {"type": "string", "enum": ["a", "b"]}
    questions.append(
        form("Which?", "choices", {"type": "array", "items": items, "default": ["a", "b"]}, required=False)
    )
    replies.append((1, DECLINED))
    person = Recorder()
    async with elicitkit_serve(served_over) as server:
        with anyio.fail_after(60):
            # On 2026-07-28 each question is a round of its own.
            async with Client(
                server, mode=mode, elicitation_callback=person, input_required_max_rounds=len(questions) + 1
            ) as client:
                result = await client.call_tool("ask_cases", {"cases": cases, "minimal": minimal})
    assert not result.is_error, text_of(result)
    got = case_lines(text_of(result))
    for _, reply in got:
        reply.pop("elicitationId", None)  # a link's reply names it; what it is does not matter here
    assert got == replies
    assert person.asked == questions  # nothing more, nothing less: no link to anywhere else


async def test_a_schema_or_a_format_that_is_not_what_it_claims_is_refused_by_the_server_and_nobody_is_asked(
    mode: str, served_over: Served
) -> None:
    spliced = '{"type":"object","properties":{}}, "mode": "url", "url": "https://evil.example/"'
    cases = [
        ["mcp_elicit", "Go?", spliced],
        ["mcp_elicit", "Go?", '{"type":"object","properties":{},"properties":{"a":{"type":"string"}}}'],
        ["ek_string", "--format", HOSTILE[0], "Email?"],
        ["ek_ask_json", '{"message":"Go?","mode":"form","schema":{},"mode":"url","url":"https://evil.example/"}'],
        [
            "ek_ask_json",
            '{"message":"Go?","schema":{"type":"object","properties":{"n":{"type":"number","default":NaN}}}}',
        ],
        ["ek_ask_json", '{"message":"Go?","schema":"\\ud800"}'],  # schema text that is half a character
    ]
    person = Recorder()
    async with elicitkit_serve(served_over) as server:
        with anyio.fail_after(30):
            async with Client(server, mode=mode, elicitation_callback=person) as client:
                result = await client.call_tool("ask_cases", {"cases": cases})
    got = case_lines(text_of(result))
    assert [code for code, _ in got] == [1, 1, 5, 5, 5, 5]
    assert {reply["error"] for _, reply in got} == {"invalid_request"}
    assert [reply["message"] for _, reply in got] == [
        'the "schema" text is not JSON: Extra data: line 1 column 34 (char 33)',
        "the request gives 'properties' twice",
        f"Raw schema property 'value': format {HOSTILE[0]!r} is not one of ['date', 'date-time', 'email', 'uri']",
        "the request gives 'mode' twice",
        "NaN is not a JSON number",
        'the "schema" text is not JSON: Expecting value: line 1 column 1 (char 0)',
    ]
    assert person.asked == []


async def test_an_answer_whose_content_looks_like_an_error_is_still_an_accept(mode: str, served_over: Served) -> None:
    human = ScriptedHuman(accept({"error": "timeout"}), accept({"error": "not_supported"}))
    cases = [["ek_choice", "--field", "error", "Which?", "timeout", "other"], ["ek_string", "--field", "error", "Why?"]]
    async with elicitkit_serve(served_over) as server:
        with anyio.fail_after(30):
            async with Client(server, mode=mode, elicitation_callback=human) as client:
                result = await client.call_tool("ask_cases", {"cases": cases})
    assert case_lines(text_of(result)) == [
        (0, {"action": "accept", "content": {"error": "timeout"}}),
        (0, {"action": "accept", "content": {"error": "not_supported"}}),
    ]


# --- the SDK alone: a typed option that is not of its type never leaves the script --------------------

NOT_NUMBERS = ["abc", "1e", "0x10", "NaN", "Infinity", "-", "+1", " 1", "1 ", "1\n", "01", "1.", ".5", "1,5", *HOSTILE]
NOT_COUNTS = [*NOT_NUMBERS, "-1", "1.5", "1e2"]
NOT_BOOLEANS = ["yes", "1", "True", "null", 'true, "x": {', *HOSTILE]
BAD = {NUMBER: NOT_NUMBERS, COUNT: NOT_COUNTS, BOOLEAN: NOT_BOOLEANS}


def test_a_value_that_is_not_of_its_options_type_is_refused_with_the_sdks_error_and_never_sent(
    tmp_path: Path,
) -> None:
    ask = tmp_path / "ask"
    os.mkfifo(ask, 0o600)
    listening = os.open(ask, os.O_RDWR | os.O_NONBLOCK)  # a question sent would land here
    calls: list[list[str]] = []
    expected: list[tuple[int, dict[str, Any]]] = []
    for call, option, kind in typed_options():
        for value in BAD[kind]:
            calls.append(with_value(call, value))
            expected.append((1 if call[0].startswith("mcp_") else 5, refused(option, kind, value)))
    for value in NOT_NUMBERS:
        calls += [["mcp_elicit", "Go?", "{}", value], ["mcp_elicit_url", "Go?", LINK, value]]
        expected += [(1, refused("TIMEOUT", NUMBER, value))] * 2
    script = [
        f"source {shlex.quote(str(sdk_path()))}",
        'run() { local code=0 r; r="$("$@")" || code=$?; printf "%s %s\\n" "$code" "$r"; }',
    ]
    script += ["run " + shlex.join(call) for call in calls]
    env = {
        "PATH": os.environ["PATH"],
        "MCP_ELICIT_SUPPORTED": "1",
        "ELICITKIT_ASK": str(ask),
        "ELICITKIT_CALL_DIR": str(tmp_path),
    }
    try:
        ran = subprocess.run(["bash", "-c", "\n".join(script)], capture_output=True, text=True, env=env, timeout=60)
        with pytest.raises(BlockingIOError):
            os.read(listening, 1024)
    finally:
        os.close(listening)
    assert ran.stderr == ""
    assert case_lines(ran.stdout) == expected
    assert [p.name for p in tmp_path.iterdir()] == ["ask"]  # no request file was written
