"""SERVER and the tool's arguments, read from the command line and checked before anything is called."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.client.stdio import StdioServerParameters

from elicitkit._term.arguments import UsageError, check_arguments, parse_arguments
from elicitkit._term.reach import explain, server_of
from tests.examples import EXAMPLES

SCHEMA = {
    "type": "object",
    "properties": {
        "version": {"type": "string"},
        "count": {"type": "integer"},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
    "required": ["version"],
}


def test_a_string_property_takes_the_text_as_typed_and_others_read_json() -> None:
    parsed = parse_arguments(["version=2.0", "count=3", "note=42"], None, SCHEMA)
    assert parsed == {"version": "2.0", "count": 3, "note": "42"}


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({}, "deploy needs 'version': pass --arg version=…"),
        ({"version": "1", "verison": "2"}, "deploy takes no argument 'verison' (it takes: version, count, note)"),
        ({"version": "1", "count": "many"}, "deploy: count: must be of type integer"),
        ({"version": 2}, "deploy: version: must be of type string"),
    ],
)
def test_arguments_the_tool_would_refuse_are_a_usage_error(arguments: dict[str, Any], says: str) -> None:
    with pytest.raises(UsageError, match=says.replace("(", r"\(").replace(")", r"\)")):
        check_arguments("deploy", arguments, SCHEMA)


def test_a_tool_that_takes_more_than_it_lists_is_left_to_judge() -> None:
    check_arguments("t", {"extra": 1}, {"type": "object", "properties": {}, "additionalProperties": True})


@pytest.mark.parametrize(
    ("server", "says"),
    [
        (
            "127.0.0.1:8000/mcp",
            "'127.0.0.1:8000/mcp' is an address without its scheme: did you mean http://127.0.0.1:8000/mcp",
        ),
        ("localhost:8000", "did you mean http://localhost:8000/mcp"),
        ("[::1]:8000/mcp", "did you mean http://[::1]:8000/mcp"),
        ("ws://127.0.0.1:8000/mcp", "ws:// is not a transport elicitkit speaks"),
        ("http:///mcp", "has no host"),
        ("   ", "SERVER is empty"),
        ("no-such-server --flag", "there is no command 'no-such-server' to start the server"),
        (str(EXAMPLES / "terminal_tour.py"), "is not executable: start it with python"),
        ("'unclosed", "SERVER is not a command line"),
    ],
)
def test_an_address_that_cannot_be_one_is_refused_with_what_was_meant(server: str, says: str) -> None:
    with pytest.raises(UsageError) as refused:
        server_of(server)
    assert says in str(refused.value)


def test_a_command_line_and_a_url_are_told_apart() -> None:
    assert server_of("https://example.com/mcp") == "https://example.com/mcp"
    command = server_of("python -m http.server")
    assert isinstance(command, StdioServerParameters)
    assert (command.command, command.args) == ("python", ["-m", "http.server"])


def test_the_era_mismatch_and_a_missing_path_are_explained_with_what_to_try() -> None:
    assert "--protocol 2025-11-25" in explain(RuntimeError("no back-channel for server-initiated requests"), "x", True)
    said = explain(RuntimeError("Not Found"), "http://127.0.0.1:8000", False)
    assert said.endswith("streamable-HTTP servers usually serve http://127.0.0.1:8000/mcp")
