"""Shell tools under elicitkit, on both eras and both in-process transports: mcp-bash's tools run unchanged."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitRequestParams, ElicitResult

from elicitkit.channels.base import Responder, Via
from elicitkit.testing import ScriptedHuman, accept, call_through_model, cancel, decline
from tests.channels.recording import RecordingChannel
from tests.scenes import Transport, connect, settled, text_of
from tests.shell.scenes import EXAMPLE, alive, ended, has_node, pids_in, shell_server

pytestmark = pytest.mark.anyio

RELEASE_ANSWERS = [
    accept({"confirmed": True}),
    accept({"choice": "beta"}),
    accept({"choice": "slim"}),
    accept({"choices": ["lint", "unit"]}),
]


async def test_an_mcp_bash_tool_asks_four_questions_and_gets_every_answer(mode: str, transport: Transport) -> None:
    server, hitl = shell_server(EXAMPLE)
    human = ScriptedHuman(*RELEASE_ANSWERS)
    with anyio.fail_after(20):
        async with connect(server, transport, mode, elicitation_callback=human) as client:
            result = await client.call_tool("release", {"version": "2.1"})
    assert not result.is_error, text_of(result)
    assert result.structured_content == {
        "success": True,
        "result": {"message": "Released 2.1", "channel": "beta", "build": "slim", "checks": "lint,unit"},
    }
    assert [x.message for x in human.transcript] == [
        "Release 2.1?",
        "Which channel?",
        "Which build?",
        "Which checks must pass?",
    ]
    assert human.transcript[2].schema["properties"]["choice"]["oneOf"][0] == {
        "const": "full",
        "title": "Full (with symbols)",
    }
    await settled(hitl)


@pytest.mark.parametrize(
    ("stop_at", "reply", "expected"),
    [
        (0, decline(), "Stopped at confirm: decline"),
        (1, cancel(), "Stopped at channel: cancel"),
        (2, decline(), "Stopped at build: decline"),
        (3, decline(), "Stopped at checks: decline"),
    ],
)
async def test_an_mcp_bash_tool_stops_at_the_first_answer_that_is_not_an_accept(
    mode: str, stop_at: int, reply: ElicitResult, expected: str
) -> None:
    server, hitl = shell_server(EXAMPLE)
    human = ScriptedHuman(*RELEASE_ANSWERS[:stop_at], reply)
    with anyio.fail_after(20):
        async with Client(server, mode=mode, elicitation_callback=human) as client:
            result = await client.call_tool("release", {"version": "2.2"})
    assert not result.is_error, text_of(result)
    assert result.structured_content == {"success": True, "result": {"message": expected}}
    assert len(human.transcript) == stop_at + 1
    await settled(hitl)


async def test_mcp_bash_request_files_are_answered_and_an_invalid_answer_never_reaches_the_script(mode: str) -> None:
    server, hitl = shell_server()
    # "x" breaks minLength 2: the person is asked again, and the script only ever reads "Ada".
    human = ScriptedHuman(accept({"name": "x"}), accept({"name": "Ada"}), accept({"choices": ["mp3"]}))
    with anyio.fail_after(20):
        async with Client(server, mode=mode, elicitation_callback=human) as client:
            result = await client.call_tool("file_protocol", {})
    assert text_of(result).split() == [
        '{"action":"accept","content":{"name":"Ada"}}',
        '{"action":"accept","content":{"choices":["mp3"]}}',
    ]
    assert "must be at least 2 characters" in human.transcript[1].message
    # mcp-bash writes a titled multi-select as items.oneOf; the client is asked with the spec's items.anyOf.
    items = human.transcript[2].schema["properties"]["choices"]["items"]
    assert items == {"anyOf": [{"const": "mp4", "title": "MP4 Video"}, {"const": "mp3", "title": "MP3 Audio"}]}
    await settled(hitl)


async def test_python_and_node_tools_ask_through_elicitkit_ask(mode: str) -> None:
    server, hitl = shell_server()
    human = ScriptedHuman(accept({"value": True}), accept({"value": "prod"}), accept({"value": "fixes"}))
    with anyio.fail_after(30):
        async with Client(server, mode=mode, elicitation_callback=human) as client:
            python = await client.call_tool("py_ask", {"service": "api"})
            assert text_of(python).strip() == "restarted api in prod (exit 0)"
            if has_node():
                node = await client.call_tool("node_ask", {})
                assert text_of(node).strip() == "note: fixes"
    assert human.transcript[1].schema["properties"]["value"]["oneOf"][1] == {"const": "prod", "title": "Production"}
    await settled(hitl)


async def test_elicitkit_ask_exits_1_on_decline_and_4_when_nobody_can_be_asked(mode: str) -> None:
    server, _ = shell_server()
    async with Client(server, mode=mode, elicitation_callback=ScriptedHuman(decline())) as client:
        declined = await client.call_tool("py_ask", {"service": "api"})
    assert text_of(declined).startswith("not restarted (exit 1:")
    unable, _ = shell_server(fallback="error")
    async with Client(unable, mode=mode) as client:  # no forms, and no fallback to the model
        refused = await client.call_tool("py_ask", {"service": "api"})
    assert (
        text_of(refused).strip()
        == 'not restarted (exit 4: {"action": "decline", "content": null, "error": "not_supported"})'
    )


async def test_a_tool_the_person_is_never_asked_by_gets_arguments_checked_against_its_input_schema(mode: str) -> None:
    server, _ = shell_server(EXAMPLE)
    async with Client(server, mode=mode, elicitation_callback=ScriptedHuman()) as client:
        result = await client.call_tool("release", {"version": 21})
    assert result.is_error
    assert text_of(result) == "Invalid arguments for tool release: version: fails 'type'"


async def test_a_failing_tool_is_an_error_result_with_its_stderr_and_mcp_fail_is_the_json_rpc_error(
    mode: str,
) -> None:
    server, _ = shell_server()
    async with Client(server, mode=mode) as client:
        failed = await client.call_tool("fail", {})
        assert failed.is_error
        assert text_of(failed) == "Tool fail exited with status 3\ndisk full on /var"
        assert (failed.meta or {})["exitCode"] == 3
        with pytest.raises(MCPError) as raised:
            await client.call_tool("invalid_args", {"count": 0})
    assert raised.value.error.code == -32602
    assert raised.value.error.message == ".count must be >= 1"


async def test_progress_lines_reach_the_client_as_the_tool_writes_them(mode: str) -> None:
    server, _ = shell_server()
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    async with Client(server, mode=mode) as client:
        result = await client.call_tool("progress", {}, progress_callback=progress)
    assert text_of(result) == "built\n"
    assert seen == [(50.0, 100.0, "half way"), (100.0, 100.0, "done")]


async def test_cancelling_a_call_terminates_the_script_and_everything_it_started(mode: str, tmp_path: Path) -> None:
    server, hitl = shell_server()
    asked = anyio.Event()

    async def person(context: Any, params: ElicitRequestParams) -> ElicitResult:
        asked.set()
        await anyio.Event().wait()  # the person never answers: the call is cancelled instead
        raise AssertionError("unreachable")

    pids = tmp_path / "pids"
    async with Client(server, mode=mode, elicitation_callback=person) as client, anyio.create_task_group() as tg:
        tg.start_soon(client.call_tool, "slow", {"pids": str(pids), "ask": True})
        with anyio.fail_after(10):
            await asked.wait()
        script, child = pids_in(pids)
        assert alive(script)
        assert alive(child)
        tg.cancel_scope.cancel()
    for pid in (script, child):
        await ended(pid)
    await settled(hitl)


async def test_a_script_killed_mid_question_leaves_nothing_pending(mode: str, tmp_path: Path) -> None:
    server, hitl = shell_server()
    pids = tmp_path / "pids"

    async def person(context: Any, params: ElicitRequestParams) -> ElicitResult:
        script, _ = pids_in(pids)
        os.kill(script, signal.SIGKILL)
        await ended(script)
        return accept({"confirmed": True})

    with anyio.fail_after(20):
        async with Client(server, mode=mode, elicitation_callback=person) as client:
            result = await client.call_tool("slow", {"pids": str(pids), "ask": True})
    assert result.is_error
    assert "exited with status -9" in text_of(result)
    assert not alive(pids_in(pids)[1])  # its background child went with it
    await settled(hitl)


async def test_a_tool_past_its_time_limit_is_ended_with_an_error_result(mode: str, tmp_path: Path) -> None:
    server, hitl = shell_server()
    pids = tmp_path / "pids"
    with anyio.fail_after(20):
        async with Client(server, mode=mode) as client:
            result = await client.call_tool("slow", {"pids": str(pids)})  # timeoutSecs: 1
    assert result.is_error
    assert text_of(result) == "Tool slow timed out after 1 seconds"
    for pid in pids_in(pids):
        await ended(pid)
    await settled(hitl)


async def test_time_spent_waiting_for_the_person_does_not_count_against_the_tools_time_limit(
    mode: str, tmp_path: Path
) -> None:
    server, hitl = shell_server()
    pids = tmp_path / "pids"
    thinking = 1.5  # the person takes longer than the tool's whole time limit (timeoutSecs: 1)

    async def slow_person(context: Any, params: ElicitRequestParams) -> ElicitResult:
        await anyio.sleep(thinking)  # a person deliberating, not a wait for something to happen
        return accept({"confirmed": True})

    with anyio.fail_after(20):
        async with Client(server, mode=mode, elicitation_callback=slow_person) as client:
            started = anyio.current_time()
            result = await client.call_tool("slow", {"pids": str(pids), "ask": True})
            took = anyio.current_time() - started
    assert text_of(result) == "Tool slow timed out after 1 seconds"
    assert took >= 1 + thinking  # its second of running time, plus the person's time on top
    await settled(hitl)


async def test_without_inotify_request_files_are_found_by_looking_and_still_answered(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("elicitkit.shell._inotify.available", lambda: False)  # as on macOS or BSD
    server, hitl = shell_server()
    human = ScriptedHuman(accept({"name": "Ada"}), accept({"choices": ["mp4"]}))
    with anyio.fail_after(20):
        async with Client(server, mode=mode, elicitation_callback=human) as client:
            result = await client.call_tool("file_protocol", {})
    assert text_of(result).split() == [
        '{"action":"accept","content":{"name":"Ada"}}',
        '{"action":"accept","content":{"choices":["mp4"]}}',
    ]
    await settled(hitl)


async def test_a_client_without_forms_gets_the_scripts_questions_through_the_model(mode: str) -> None:
    server, hitl = shell_server(EXAMPLE)
    human = ScriptedHuman(*RELEASE_ANSWERS)
    with anyio.fail_after(20):
        async with Client(server, mode=mode) as client:  # declares no elicitation: the model asks in chat
            result = await call_through_model(client, "release", {"version": "2.1"}, human)
    assert result.structured_content == {
        "success": True,
        "result": {"message": "Released 2.1", "channel": "beta", "build": "slim", "checks": "lint,unit"},
    }
    assert len(human.transcript) == 4
    await settled(hitl)


async def test_a_scripts_question_goes_to_the_channel_the_server_names_and_its_answer_comes_back(mode: str) -> None:
    channel = RecordingChannel("desk")
    server, hitl = shell_server(EXAMPLE, channels=[channel], via=Via("desk", "ops"))
    results: list[Any] = []
    with anyio.fail_after(20):
        async with Client(server, mode=mode) as client, anyio.create_task_group() as tg:

            async def call() -> None:
                results.append(await client.call_tool("release", {"version": "2.1"}))

            tg.start_soon(call)
            prompt = await channel.next_post(1)
            assert (prompt.message, prompt.target) == ("Release 2.1?", "ops")
            assert (await channel.desk.reply(prompt.token, Responder("desk", "7", "Lin"), "decline", None)).ok
    assert results[0].structured_content == {"success": True, "result": {"message": "Stopped at confirm: decline"}}
    await settled(hitl)
