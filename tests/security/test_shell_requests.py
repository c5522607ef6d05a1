"""The shell SDK sends exactly the question a script asked, whatever its values hold.

A value that comes from the caller (`ek_number --default "$(mcp_args_get .size)"`,
`mcp_elicit_choice "$(mcp_args_get .question)" ...`) must stay the value it is: text
stays text wherever it goes, and a value that takes a number, a count or a boolean
(an ek_* option, mcp-bash's TIMEOUT) refuses anything else before a question is
sent. Every helper: mcp-bash's called as mcp-bash documents them, with positional
arguments only, and the ek_* ones with every option; in both of mcp-bash's modes
(with jq and without), through a real `elicitkit serve` over stdio and HTTP, on
both eras.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TextIO

import anyio
import pytest
from mcp import Client

from elicitkit.shell import sdk_path
from elicitkit.testing import ScriptedHuman, accept
from tests.scenes import text_of
from tests.security.scenes import Question, Recorder, Served, elicitkit_serve

pytestmark = pytest.mark.anyio

# What a caller may put in an argument. The first two would turn a form into a link to any site, were
# they spliced into the request; the next two carry JSON's and the shell's special characters; the last
# ones look like options, which mcp-bash's helpers never read (`mcp_elicit_choice "--title" a b` asks
# "--title") and the ek_* helpers read only before `--`.
HOSTILE = [
    '"}, "mode": "url", "url": "https://evil.example/"',
    '1}}, "mode": "url", "url": "https://evil.example/", "x": {"y": "',
    'two\nlines\r\tand {braces} [brackets] \\ back\\"slash \\u0022',
    "control \x01\x1f\x7f, unicode é 🙂, shell $(echo PWNED) `echo PWNED` ${HOME} '",
    "--timeout",
    "--",
    "--integer",
]
LINK = "https://docs.example.com/sign-in"
# An https link that carries JSON's and the shell's special characters: sent as the text it is.
ODD_LINK = 'https://docs.example.com/a?b="},"mode":"form","url":"https://evil.example/"&c=$(echo)`x`${HOME}\'{}[]'
DECLINED = {"action": "decline", "content": None}
MCP_ERROR = {"action": "error", "content": None}  # mcp-bash's reply when nobody answered or could be asked
Outcome = tuple[int, dict[str, Any], str]  # a helper's exit code, reply and stderr


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
    """Every helper with `v` in every argument that takes text, and the question it must send.

    mcp-bash's helpers are called as mcp-bash documents them, with positional arguments only; the ek_*
    helpers with every option, `--` before a message that looks like an option.
    """
    pieces = v.split(",")  # a multi-choice --default is comma-separated
    end = ["--"] if v.startswith("-") else []
    schema = {"type": "object", "properties": {"note": {"type": "string", "title": v}}}
    return [
        (
            ["ek_confirm", "--title", v, "--description", v, "--field", v, *end, v],
            form(v, v, {"type": "boolean", "title": v, "description": v}),
        ),
        (["mcp_elicit_confirm", v], form(v, "confirmed", {"type": "boolean"})),
        (
            ["ek_string", "--title", v, "--description", v, "--default", v, *end, v, v],
            form(v, v, {"type": "string", "title": v, "description": v, "default": v}, required=False),
        ),
        (
            ["ek_string", "--min", "0", "--max", "9", "--format", "email", *end, v, v],
            form(v, v, {"type": "string", "minLength": 0, "maxLength": 9, "format": "email"}),
        ),
        (["mcp_elicit_string", v, v], form(v, v, {"type": "string"})),
        (["mcp_elicit_string", v], form(v, "value", {"type": "string"})),
        (
            ["ek_number", "--title", v, "--min", "-1.5", "--max", "1e3", "--default", "2.5E1", *end, v, v],
            form(v, v, {"type": "number", "title": v, "minimum": -1.5, "maximum": 1000, "default": 25}, required=False),
        ),
        (
            ["ek_number", "--integer", "--description", v, "--min", "0", "--max", "10", *end, v],
            form(v, "value", {"type": "integer", "description": v, "minimum": 0, "maximum": 10}),
        ),
        (["mcp_elicit_number", v, v], form(v, v, {"type": "number"})),
        (
            ["ek_choice", "--default", v, "--field", v, *end, v, v, "plain"],
            form(v, v, {"type": "string", "enum": [v, "plain"], "default": v}, required=False),
        ),
        (["mcp_elicit_choice", v, v, "plain"], form(v, "choice", {"type": "string", "enum": [v, "plain"]})),
        (
            ["ek_titled_choice", "--title", v, "--default", "ok", *end, v, f"ok:{v}", v],
            form(
                v,
                "choice",
                {"type": "string", "title": v, "oneOf": [titled(f"ok:{v}"), titled(v)], "default": "ok"},
                required=False,
            ),
        ),
        (
            ["mcp_elicit_titled_choice", v, f"ok:{v}", v],
            form(v, "choice", {"type": "string", "oneOf": [titled(f"ok:{v}"), titled(v)]}),
        ),
        (
            ["ek_multi_choice", "--title", v, "--min", "1", "--max", "9", "--default", v, *end, v, *pieces, "plain"],
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
            ["ek_titled_multi_choice", "--description", v, *end, v, f"ok:{v}", v],
            form(v, "choices", {"type": "array", "description": v, "items": {"anyOf": [titled(f"ok:{v}"), titled(v)]}}),
        ),
        (
            ["mcp_elicit_titled_multi_choice", v, f"ok:{v}", v],
            form(v, "choices", {"type": "array", "items": {"anyOf": [titled(f"ok:{v}"), titled(v)]}}),
        ),
        (["ek_url", "--timeout", "30", *end, v, LINK], ("url", v, LINK)),
        (["mcp_elicit_url", v, LINK], ("url", v, LINK)),
        (["mcp_elicit_url", v, ODD_LINK], ("url", v, ODD_LINK)),
        (["ek_url", *end, v, ODD_LINK], ("url", v, ODD_LINK)),
        (["mcp_elicit", v, ODD_LINK, "", "url"], ("url", v, ODD_LINK)),
        (["mcp_elicit_url", v, LINK, "30"], ("url", v, LINK)),
        (["mcp_elicit", v, json.dumps(schema)], ("form", v, schema)),
        (["mcp_elicit", v, json.dumps(schema), "30.5"], ("form", v, schema)),
        (["mcp_elicit", v, json.dumps(schema), "30", v], ("form", v, schema)),  # a MODE that is not url: a form
        (["mcp_elicit", v, LINK, "30", "url"], ("url", v, LINK)),
        (
            ["ek_ask_json", json.dumps({"message": v, "mode": "form", "schema": schema})],
            ("form", v, schema),
        ),
    ]


# Every option of the ek_* helpers that takes a number, a count or a boolean, on every helper that has it.
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
    """(the call before the bad value, the option, what it takes) for every typed option of every ek_* helper."""
    calls = []
    for family, options in FAMILIES.items():
        helper = f"ek_{family}"
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
    """The SDK's reply to a typed option that is not of its type."""
    return refused_by_server(f"{option} must be {kind}, not '{value}'")


def refused_by_server(reason: str) -> dict[str, Any]:
    """elicitkit's reply to a question that cannot be asked."""
    return {"action": "error", "content": None, "error": "invalid_request", "message": reason}


def timed(value: str) -> list[tuple[list[str], str]]:
    """Every mcp-bash helper with `value` as its wait (TIMEOUT, or MCPBASH_ELICITATION_TIMEOUT), and its name."""
    setting = f"MCPBASH_ELICITATION_TIMEOUT={value}"
    return [
        (["mcp_elicit", "Go?", "{}", value], "mcp_elicit"),
        (["mcp_elicit", "Go?", LINK, value, "url"], "mcp_elicit"),
        (["mcp_elicit_url", "Go?", LINK, value], "mcp_elicit_url"),
        ([setting, "mcp_elicit", "Go?", "{}"], "mcp_elicit"),
        ([setting, "mcp_elicit_url", "Go?", LINK], "mcp_elicit_url"),
        ([setting, "mcp_elicit_confirm", "Go?"], "mcp_elicit"),
        ([setting, "mcp_elicit_string", "Name?"], "mcp_elicit"),
        ([setting, "mcp_elicit_number", "Size?"], "mcp_elicit"),
        ([setting, "mcp_elicit_choice", "Which?", "a", "b"], "mcp_elicit"),
        ([setting, "mcp_elicit_titled_choice", "Which?", "a:A", "b:B"], "mcp_elicit"),
        ([setting, "mcp_elicit_multi_choice", "Which?", "a", "b"], "mcp_elicit"),
        ([setting, "mcp_elicit_titled_multi_choice", "Which?", "a:A", "b:B"], "mcp_elicit"),
    ]


def timeout_refused(name: str, value: str) -> Outcome:
    """mcp-bash's reply when nobody can be asked (status 1), and the SDK's reason on stderr."""
    reason = f"{name}: the timeout must be a positive number of seconds, not '{value}' (MCPBASH_ELICITATION_TIMEOUT)"
    return (1, MCP_ERROR, reason + "\n")


def outcomes(text: str) -> list[Outcome]:
    """Each case's exit code, reply (JSON) and stderr, as the ask_cases tool printed them."""
    got = []
    for line in text.splitlines():
        case = json.loads(line)
        assert "JQ CALLED" not in case["reply"] + case["stderr"]
        got.append((case["code"], json.loads(case["reply"]), case["stderr"]))
    return got


# Each value of each axis (era, transport, mcp-bash's mode) meets each value of the other two: what a helper
# sends is built in bash, the axes only carry it, and the whole matrix of every helper and every hostile value
# is long enough that all eight combinations would cost minutes for no pair not already covered.
PAIRWISE = [("legacy", "stdio", False), ("legacy", "http", True), ("auto", "stdio", True), ("auto", "http", False)]


@pytest.mark.parametrize(
    ("mode", "served_over", "minimal"),
    PAIRWISE,
    ids=[f"{m}-{s}-{'minimal' if n else 'with-jq'}" for m, s, n in PAIRWISE],
)
async def test_every_helper_sends_exactly_the_question_asked_whatever_its_values_hold(
    mode: str, served_over: Served, minimal: bool
) -> None:
    cases: list[list[str]] = []
    questions: list[Question] = []
    expected: list[Outcome] = []
    for v in HOSTILE:
        for call, question in asked(v):
            cases.append(call)
            questions.append(question)
            # mcp-bash's code: 0 when the person answered; elicitkit's: 1 for a decline.
            expected.append((0, DECLINED, "") if call[0].startswith("mcp_") else (1, DECLINED, ""))
        for call, option, kind in typed_options():  # refused in the script: never sent
            cases.append(with_value(call, v))
            expected.append((5, refused(option, kind, v), ""))
        for call, name in timed(v):  # refused in the script: never sent
            cases.append(call)
            expected.append(timeout_refused(name, v))
    # A multi-choice default is split on commas as `read -a` splits it: a final empty value is dropped.
    cases.append(["ek_multi_choice", "--default", "a,b,", "Which?", "a", "b"])
    items = {"type": "string", "enum": ["a", "b"]}
    questions.append(
        form("Which?", "choices", {"type": "array", "items": items, "default": ["a", "b"]}, required=False)
    )
    expected.append((1, DECLINED, ""))
    person = Recorder()
    async with elicitkit_serve(served_over) as server:
        with anyio.fail_after(90):
            # On 2026-07-28 each question is a round of its own.
            async with Client(
                server, mode=mode, elicitation_callback=person, input_required_max_rounds=len(questions) + 1
            ) as client:
                result = await client.call_tool("ask_cases", {"cases": cases, "minimal": minimal})
    assert not result.is_error, text_of(result)
    got = outcomes(text_of(result))
    for _, reply, _ in got:
        reply.pop("elicitationId", None)  # a link's reply names it; what it is does not matter here
    assert got == expected
    assert person.asked == questions  # nothing more, nothing less: no link to anywhere else


def url_refused(url: str) -> list[tuple[list[str], str]]:
    """Every helper asking for a visit to `url`, which is not an https link, and the server's reason."""
    reason = "An elicitation URL must not contain whitespace, control characters or backslashes"
    if not any(c.isspace() or c == "\\" or ord(c) < 32 or ord(c) == 127 for c in url):
        reason = f"An elicitation URL must be https (plain http only for loopback), not {url.split(':')[0]!r}"
    calls = [["mcp_elicit_url", "Go?", url], ["mcp_elicit", "Go?", url, "30", "url"], ["ek_url", "--", "Go?", url]]
    return [(call, reason) for call in calls]


async def test_a_schema_a_format_or_a_url_that_is_not_what_it_claims_is_refused_by_the_server_and_nobody_is_asked(
    mode: str, served_over: Served
) -> None:
    spliced = '{"type":"object","properties":{}}, "mode": "url", "url": "https://evil.example/"'
    refusals = [
        (["mcp_elicit", "Go?", spliced], 'the "schema" text is not JSON: Extra data: line 1 column 34 (char 33)'),
        (
            ["mcp_elicit", "Go?", '{"type":"object","properties":{},"properties":{"a":{"type":"string"}}}'],
            "the request gives 'properties' twice",
        ),
        (
            ["ek_string", "--format", HOSTILE[0], "Email?"],
            f"Raw schema property 'value': format {HOSTILE[0]!r} is not one of ['date', 'date-time', 'email', 'uri']",
        ),
        (
            ["ek_ask_json", '{"message":"Go?","mode":"form","schema":{},"mode":"url","url":"https://evil.example/"}'],
            "the request gives 'mode' twice",
        ),
        (
            [
                "ek_ask_json",
                '{"message":"Go?","schema":{"type":"object","properties":{"n":{"type":"number","default":NaN}}}}',
            ],
            "NaN is not a JSON number",
        ),
        (  # schema text that is half a character
            ["ek_ask_json", '{"message":"Go?","schema":"\\ud800"}'],
            'the "schema" text is not JSON: Expecting value: line 1 column 1 (char 0)',
        ),
    ]
    for url in [*HOSTILE, "javascript:alert(1)", "http://docs.example.com/", "https://docs.example.com/a b"]:
        refusals += url_refused(url)
    person = Recorder()
    async with elicitkit_serve(served_over) as server:
        with anyio.fail_after(60):
            async with Client(server, mode=mode, elicitation_callback=person) as client:
                result = await client.call_tool("ask_cases", {"cases": [call for call, _ in refusals]})
    got = outcomes(text_of(result))
    assert len(got) == len(refusals)
    for (call, reason), (code, reply, stderr) in zip(refusals, got, strict=True):
        if call[0].startswith("mcp_"):
            # As mcp-bash answers when its server cannot ask: the client's "error", status 0; why, on stderr.
            assert (code, reply) == (0, MCP_ERROR), call
            assert stderr == f"{call[0]}: {json.dumps(reason, ensure_ascii=False)}\n", call
        else:
            assert (code, reply, stderr) == (5, refused_by_server(reason), ""), call
    assert person.asked == []


async def test_an_answer_whose_content_looks_like_an_error_is_still_an_accept(mode: str, served_over: Served) -> None:
    human = ScriptedHuman(
        accept({"error": "timeout"}),
        accept({"error": "not_supported"}),
        accept({"error": "timeout"}),
        accept({"error": "not_supported"}),
    )
    cases = [
        ["ek_choice", "--field", "error", "Which?", "timeout", "other"],
        ["ek_string", "--field", "error", "Why?"],
        ["mcp_elicit_string", "Why?", "error"],
        ["mcp_elicit", "Why?", '{"type":"object","properties":{"error":{"type":"string"}}}'],
    ]
    async with elicitkit_serve(served_over) as server:
        with anyio.fail_after(30):
            async with Client(server, mode=mode, elicitation_callback=human) as client:
                result = await client.call_tool("ask_cases", {"cases": cases})
    accepted = [
        (0, {"action": "accept", "content": {"error": "timeout"}}, ""),
        (0, {"action": "accept", "content": {"error": "not_supported"}}, ""),
    ]
    assert outcomes(text_of(result)) == accepted * 2  # the ek_* helpers, then mcp-bash's


# --- the SDK alone: a typed option that is not of its type never leaves the script --------------------

NOT_NUMBERS = ["abc", "1e", "0x10", "NaN", "Infinity", "-", "+1", " 1", "1 ", "1\n", "01", "1.", ".5", "1,5", *HOSTILE]
NOT_COUNTS = [*NOT_NUMBERS, "-1", "1.5", "1e2"]
NOT_BOOLEANS = ["yes", "1", "True", "null", 'true, "x": {', *HOSTILE]
BAD = {NUMBER: NOT_NUMBERS, COUNT: NOT_COUNTS, BOOLEAN: NOT_BOOLEANS}
# mcp-bash's waits are positive numbers of seconds, written plainly.
NOT_TIMEOUTS = [*NOT_NUMBERS, "0", "0.0", "00", "-1", "-0", "1e3", "1E3", "00.5", "08", "a[$(echo PWNED)]"]


def test_a_value_that_is_not_of_its_type_is_refused_with_the_sdks_reply_and_never_sent(tmp_path: Path) -> None:
    ask = tmp_path / "ask"
    os.mkfifo(ask, 0o600)
    listening = os.open(ask, os.O_RDWR | os.O_NONBLOCK)  # a question sent would land here
    calls: list[list[str]] = []
    expected: list[Outcome] = []
    for call, option, kind in typed_options():
        for value in BAD[kind]:
            calls.append(with_value(call, value))
            expected.append((5, refused(option, kind, value), ""))
    for value in NOT_TIMEOUTS:
        for call, name in timed(value):
            calls.append(call)
            expected.append(timeout_refused(name, value))
    script = [
        f"source {shlex.quote(str(sdk_path()))}",
        "set +e",
        'err="$(mktemp)"',
        # Each case's exit code, reply and stderr, each ended by a NUL (no process per case but the helper's
        # subshell: there are hundreds); a leading NAME=VALUE is set for that helper alone.
        'run() { local code=0 r e=""; if [[ "$1" == *=* ]]; then r="$(export "$1"; "${@:2}" 2>"${err}")" || code=$?;'
        ' else r="$("$@" 2>"${err}")" || code=$?; fi;'
        ' IFS= read -r -d "" e <"${err}" || true; printf "%s\\0%s\\0%s\\0" "${code}" "${r}" "${e}"; }',
    ]
    script += ["run " + shlex.join(call) for call in calls]
    script.append('rm -f "${err}"')
    env = {
        "PATH": os.environ["PATH"],
        "MCP_ELICIT_SUPPORTED": "1",
        "ELICITKIT_ASK": str(ask),
        "ELICITKIT_CALL_DIR": str(tmp_path),
    }
    try:
        # Bytes: text mode would read a \r in a value as a newline.
        ran = subprocess.run(["bash", "-c", "\n".join(script)], capture_output=True, env=env, timeout=60)
        with pytest.raises(BlockingIOError):
            os.read(listening, 1024)
    finally:
        os.close(listening)
    assert ran.stderr == b""
    fields = ran.stdout.decode().split("\0")[:-1]
    got = [(int(code), json.loads(reply), stderr) for code, reply, stderr in zip(*[iter(fields)] * 3, strict=True)]
    assert got == expected
    assert [p.name for p in tmp_path.iterdir()] == ["ask"]  # no request file was written


# mcp-bash's waits as people write them: whole seconds, or a decimal with no leading zero but its own.
TIMEOUTS = ["1", "30", "600", "0.5", "0.05", "30.25", "10.0"]


def test_a_wait_written_plainly_goes_with_the_question_as_the_number_it_is(tmp_path: Path) -> None:
    ask = tmp_path / "ask"
    os.mkfifo(ask, 0o600)
    calls = [call for value in TIMEOUTS for call, _ in timed(value)]
    sent: list[dict[str, Any]] = []

    def person(questions: TextIO) -> None:  # declines each question, keeping the request the script wrote
        for _ in calls:
            name = questions.readline().strip()
            if not name:  # the script ended before asking them all
                return
            base = tmp_path / name
            sent.append(json.loads(base.with_name(f"{base.name}.json").read_text()))
            base.with_name(f"{base.name}.fifo").write_text('{"action":"decline","content":null}\n')

    script = [f"source {shlex.quote(str(sdk_path()))}", "set +e"]
    script += [f'{shlex.join(call)}; echo " $?"' for call in calls]  # a leading NAME=VALUE: for that call alone
    env = {"PATH": os.environ["PATH"], "MCP_ELICIT_SUPPORTED": "1", "ELICITKIT_ASK": str(ask)}
    env["ELICITKIT_CALL_DIR"] = str(tmp_path)
    # Read and write, so that opening it never waits for the script and the script's writes never find it closed.
    with open(os.open(ask, os.O_RDWR)) as questions, ThreadPoolExecutor(1) as pool:
        answering = pool.submit(person, questions)
        ran = subprocess.run(["bash", "-c", "\n".join(script)], capture_output=True, text=True, env=env, timeout=60)
        ask.write_text("\n")  # for a person still waiting
        answering.result(timeout=10)
    assert ran.stderr == ""
    assert ran.stdout.splitlines() == ['{"action":"decline","content":null} 0'] * len(calls)
    waits = [value for value in TIMEOUTS for _ in timed(value)]
    assert [q["timeout"] for q in sent] == [json.loads(w) for w in waits]
