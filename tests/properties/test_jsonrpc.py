"""Properties of the JSON-RPC surface, on a real server over streamable HTTP, on both protocol eras.

Whatever a client sends — known and unknown methods with generated params, wrong types for `id` or `params`,
`tools/call` of elicitkit's tools with generated arguments, 2026-07-28 retries with generated `inputResponses`
and `requestState`, 2025-11-25 elicitation replies with generated content, `tasks/*` requests and
notifications — a request gets its result or a JSON-RPC error other than -32603 (internal error), nothing is
logged at ERROR or with a traceback, and the server keeps answering. An answer that fits the form is taken as
the typed answer; one that does not is never taken.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from typing import Annotated, Any, Literal

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import INTERNAL_ERROR
from pydantic import BaseModel, Field

from elicitkit import Accepted, Elicitation
from elicitkit._schema import compile_schema, problems_in
from elicitkit.channels import WebInbox
from tests.properties.strategies import JSON_VALUES, breaking, fitting, schemas
from tests.properties.surface import CURRENT, LEGACY, Era, Reply, Surface, serving

SECRET = "properties-jsonrpc-secret-0123456789abcdef"


class Plan(BaseModel):
    approve: bool
    seats: Annotated[int, Field(ge=1, le=50)] = 1
    env: Literal["prod", "staging"]
    note: Annotated[str, Field(max_length=20)] = ""
    when: dt.date | None = None


PLAN = compile_schema(Plan)


def plan_server() -> MCPServer:
    server = MCPServer("properties")
    hitl = Elicitation(server, secret=SECRET, timeout=10, channels=[WebInbox()])
    hitl.install_elicit_tool(timeout=0.2)

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await hitl.elicit(ctx, "Plan?", Plan)
        if isinstance(answer, Accepted):
            return "accept " + answer.data.model_dump_json()
        return answer.action

    @server.tool()
    async def ask_task(ctx: Context) -> str:
        answer = await hitl.elicit(ctx, "Plan, when you can?", Plan, task=True)
        return answer.action

    @server.tool()
    def plain(n: int) -> int:
        return n * 2

    return server


@pytest.fixture(scope="module")
def surface() -> Iterator[Surface]:
    with serving(plan_server()) as surface:
        surface.start_session()
        yield surface


# --- what every reply must be ---------------------------------------------------------------------------------


def strict_json(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False, ensure_ascii=False).encode()
    except ValueError:
        return False
    return True


def is_request(message: Any) -> bool:
    """A JSON-RPC request the server must answer: a method, an id that is text or a whole number, object params.

    In strict JSON: NaN, the infinities and lone surrogates are no JSON, and the server may refuse to parse them.
    """
    return (
        strict_json(message)
        and isinstance(message, dict)
        and message.get("jsonrpc") == "2.0"
        and isinstance(message.get("method"), str)
        and "id" in message
        and type(message["id"]) in (int, str)
        and isinstance(message.get("params", {}), dict)
    )


def assert_answered(surface: Surface, message: Any, reply: Reply) -> dict[str, Any] | None:
    """`message`'s answer (None when it is no request), which is a result or an error other than internal error."""
    trouble = surface.trouble.take()
    assert not trouble, trouble
    for sent in reply.messages:
        if "error" in sent:
            assert sent["error"]["code"] != INTERNAL_ERROR, sent["error"]
    if not is_request(message):
        return None
    answer = reply.answer_to(message["id"])
    assert answer is not None, (reply.status, reply.messages)
    assert ("result" in answer) != ("error" in answer), answer
    return answer


def still_serving(surface: Surface, era: Era) -> None:
    reply = surface.send({"jsonrpc": "2.0", "id": "still", "method": "tools/list", "params": {}}, era)
    answer = reply.answer_to("still")
    assert answer is not None and "result" in answer, reply.messages
    assert not surface.trouble.take()


# --- generated messages -----------------------------------------------------------------------------------------

TOOLS = ["ask", "ask_task", "plain", "elicit", "sendElicitationResult", "no-such-tool"]
# On 2025-11-25 these ask on the call's own stream and hold it until answered: the elicitation test drives them.
WAITING = {"ask", "ask_task", "elicit"}
METHODS = [
    "ping", "tools/list", "tools/call", "resources/list", "resources/read", "resources/templates/list",
    "prompts/list", "prompts/get", "completion/complete", "logging/setLevel", "tasks/get", "tasks/update",
    "tasks/cancel", "tasks/list", "tasks/result", "elicitation/create", "sampling/createMessage",
    "notifications/cancelled", "notifications/progress", "notifications/elicitation/complete",
]  # fmt: skip
texts = st.text(max_size=16)
objects = st.dictionaries(texts, JSON_VALUES, max_size=4)
request_ids = st.integers(-(2**53), 2**53) | texts
bad_ids = st.sampled_from([None, True, 1.5, [], {}, [1], {"id": 1}])
states = texts | texts.map("ek1.".__add__) | st.sampled_from(["ek1.", "ek1..", "ek1.a.b", ""])


@st.composite
def responses(draw: st.DrawFn, keys: list[str] | None = None) -> Any:
    """`inputResponses`: ElicitResults for `keys` (or for made-up keys), with fitting, broken or any content."""
    keys = keys if keys is not None and draw(st.integers(0, 3)) else draw(st.lists(texts, max_size=2))
    out: dict[str, Any] = {}
    for key in keys:
        out[key] = draw(elicit_results())
    return out if draw(st.integers(0, 9)) else draw(JSON_VALUES)


@st.composite
def elicit_results(draw: st.DrawFn) -> Any:
    """What a client may say an elicitation's result is: well formed or not."""
    shape = draw(st.sampled_from(["fits", "fits", "breaks", "any content", "decline", "anything"]))
    if shape == "fits":
        return {"action": "accept", "content": draw(plan_answers())}
    if shape == "breaks":
        content = draw(plan_answers())
        field = draw(st.sampled_from(sorted(PLAN.properties)))
        content[field] = draw(breaking(PLAN.properties[field]))
        return {"action": "accept", "content": content}
    if shape == "any content":
        return {"action": draw(st.sampled_from(["accept", "decline", "cancel"]) | texts), "content": draw(JSON_VALUES)}
    if shape == "decline":
        return {"action": draw(st.sampled_from(["decline", "cancel"]))}
    return draw(objects | JSON_VALUES)


@st.composite
def plan_answers(draw: st.DrawFn) -> dict[str, Any]:
    """Content that fits `Plan`'s form (lone surrogates left out: they cannot travel as UTF-8 JSON)."""
    answer = {}
    for name, prop in PLAN.properties.items():
        if name in PLAN.required or draw(st.booleans()):
            answer[name] = draw(fitting(prop).filter(lambda v: not (isinstance(v, str) and not _utf8(v))))
    return answer


def fits(result: Any) -> bool:
    """Whether `result` accepts `Plan`'s form with content that fits it."""
    return (
        isinstance(result, dict)
        and set(result) == {"action", "content"}
        and result["action"] == "accept"
        and problems_in(PLAN, "accept", result["content"]) is None
    )


def _utf8(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


@st.composite
def params_for(draw: st.DrawFn, method: str, era: Era) -> Any:
    if not draw(st.integers(0, 19)):
        return draw(JSON_VALUES)  # often not an object at all
    if method == "tools/call":
        tools = [t for t in TOOLS if era == CURRENT or t not in WAITING]
        params: dict[str, Any] = {"name": draw(st.sampled_from(tools) | texts)}
        arguments = {
            "elicit": st.fixed_dictionaries(
                {
                    "message": texts,
                    "schema": schemas() | JSON_VALUES,
                    "uiType": st.sampled_from(["web", "slack"]) | texts,
                }
            ),
            "sendElicitationResult": st.fixed_dictionaries(
                {"elicitId": texts, "action": st.sampled_from(["accept", "decline"]) | texts},
                optional={"content": JSON_VALUES},
            ),
            "plain": st.fixed_dictionaries({"n": JSON_VALUES}),
        }.get(params["name"], objects)
        if draw(st.integers(0, 9)):
            params["arguments"] = draw(arguments)
        else:
            params["arguments"] = draw(JSON_VALUES)
        if draw(st.booleans()):
            params["requestState"] = draw(states)
        if draw(st.booleans()):
            params["inputResponses"] = draw(responses())
        if era == LEGACY and draw(st.booleans()) and params["name"] not in WAITING:
            params["task"] = draw(st.just({}) | JSON_VALUES)
        return params
    if method.startswith("tasks/"):
        params = {"taskId": draw(texts | JSON_VALUES)}
        if method == "tasks/update":
            params["inputResponses"] = draw(responses())
        return params
    return draw(objects)


@st.composite
def messages(draw: st.DrawFn, era: Era) -> Any:
    method = draw(st.sampled_from(METHODS) | texts)
    if era == LEGACY and method == "tasks/result":
        method = "tasks/get"  # an unknown task answers at once; a live one would hold the request (tested below)
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if not method.startswith("notifications/") or not draw(st.integers(0, 4)):
        message["id"] = draw(request_ids if draw(st.integers(0, 9)) else bad_ids)
    if draw(st.integers(0, 9)):
        message["params"] = draw(params_for(method, era))
    if not draw(st.integers(0, 29)):
        message["jsonrpc"] = draw(st.sampled_from(["1.0", None, 2]))
    if not draw(st.integers(0, 29)):
        return draw(JSON_VALUES)
    return message


# --- the properties -------------------------------------------------------------------------------------------

ERAS = pytest.mark.parametrize("era", [LEGACY, CURRENT])


@ERAS
@settings(max_examples=400)
@given(data=st.data())
def test_any_message_gets_its_result_or_a_clear_error(surface: Surface, era: Era, data: st.DataObject) -> None:
    message = data.draw(messages(era))
    assert_answered(surface, message, surface.send(message, era))
    if not data.draw(st.integers(0, 49)):
        still_serving(surface, era)


@ERAS
@pytest.mark.parametrize("method", [" ", "tools/call ", " tools/list", "\ttools/list"])
def test_a_method_with_spaces_at_its_ends_gets_a_clear_error(surface: Surface, era: Era, method: str) -> None:
    # Found by the property above: such a method cannot ride the `Mcp-Method` header, so it goes without it.
    message = {"jsonrpc": "2.0", "id": 7, "method": method, "params": {"name": "ask", "arguments": {}}}
    answer = assert_answered(surface, message, surface.send(message, era))
    assert answer is not None and "error" in answer, answer


@settings(max_examples=250)
@given(data=st.data())
def test_a_2026_retry_with_generated_answers_and_state_is_answered_and_takes_only_a_fitting_answer(
    surface: Surface, data: st.DataObject
) -> None:
    call: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "ask", "arguments": {}},
    }
    asked = assert_answered(surface, call, surface.send(call, CURRENT))
    assert asked is not None and asked["result"]["resultType"] == "input_required", asked
    [key] = asked["result"]["inputRequests"]
    genuine: str = asked["result"]["requestState"]
    state = data.draw(st.sampled_from(["genuine", "genuine", "genuine", "changed", "ours, unsealed", "other"]))
    request_state = {
        "genuine": genuine,
        "changed": genuine[:-4] + ("AAAA" if not genuine.endswith("AAAA") else "BBBB"),
        "ours, unsealed": "ek1.run.nonce",
        "other": data.draw(states),
    }[state]
    answers = data.draw(responses([key]))
    retry = dict(call, id=2, params={**call["params"], "requestState": request_state, "inputResponses": answers})
    answer = assert_answered(surface, retry, surface.send(retry, CURRENT))
    if answer is None:
        return  # no JSON (NaN, a lone surrogate): refused as such
    event(f"{state} state: " + ("error" if "error" in answer else str(answer["result"].get("resultType"))))
    if state != "genuine":
        assert "error" in answer or answer["result"].get("resultType") == "input_required", answer
        return
    if "error" in answer:
        return
    result = answer["result"]
    given = answers.get(key) if isinstance(answers, dict) else None
    if isinstance(answers, dict) and set(answers) == {key} and fits(given):
        assert result.get("resultType") == "complete", result  # an answer that fits is taken, at once
    if result.get("resultType") == "input_required":
        return  # asked again: the answer did not fit, or did not answer the question
    text = result["content"][0]["text"]
    event(f"ended: {text.split()[0]}")
    if text.startswith("accept "):
        # Taken only as a fitting accept, and as exactly that answer.
        assert isinstance(given, dict) and given.get("action") == "accept"
        typed = Plan.model_validate_json(text.removeprefix("accept "))
        assert typed == Plan.model_validate(given["content"])


@settings(max_examples=150)
@given(first=elicit_results().filter(lambda r: isinstance(r, dict) and strict_json(r)), error=st.booleans())
def test_a_2025_elicitation_reply_with_generated_content_ends_the_call_with_a_result(
    surface: Surface, first: Any, error: bool
) -> None:
    replies: list[dict[str, Any]] = []

    def reply(params: dict[str, Any]) -> dict[str, Any]:
        if not replies:
            replies.append(first)
            return {"error": {"code": -32000, "message": "the client failed"}} if error else {"result": first}
        replies.append({"action": "cancel"})
        return {"result": {"action": "cancel"}}

    posted, answer = surface.call_answering(LEGACY, "ask", {}, reply)
    assert all(p["status"] == 202 for p in posted), posted
    assert not surface.trouble.take()
    assert "result" in answer, answer
    text = answer["result"]["content"][0]["text"]
    event(f"ended: {text.split()[0]}")
    if not error and fits(first):
        assert text.startswith("accept "), text
    if text.startswith("accept "):
        assert not error and isinstance(first, dict) and first.get("action") == "accept"
        assert Plan.model_validate_json(text.removeprefix("accept ")) == Plan.model_validate(first["content"])


@ERAS
@settings(max_examples=60)
@given(data=st.data())
def test_tasks_requests_with_generated_ids_and_answers_are_answered(
    surface: Surface, era: Era, data: st.DataObject
) -> None:
    params: dict[str, Any] = {"name": "ask_task", "arguments": {}}
    if era == LEGACY:
        params["task"] = {}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    started = assert_answered(surface, call, surface.send(call, era))
    assert started is not None and "result" in started, started
    task_id = (started["result"]["task"] if era == LEGACY else started["result"])["taskId"]
    key = None
    for i, op in enumerate(data.draw(st.lists(st.sampled_from(["get", "update", "cancel", "notify"]), max_size=4))):
        which = task_id if data.draw(st.integers(0, 3)) else data.draw(texts | JSON_VALUES)
        method = {"get": "tasks/get", "update": "tasks/update", "cancel": "tasks/cancel", "notify": "tasks/get"}[op]
        if era == LEGACY and op == "update":
            method = "tasks/update"  # not a 2025-11-25 method: refused as unknown
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": {"taskId": which}}
        if op != "notify":
            message["id"] = 10 + i
        if op == "update":
            message["params"]["inputResponses"] = data.draw(responses([key] if key else None))
        answer = assert_answered(surface, message, surface.send(message, era))
        event(f"{method}: " + ("none" if answer is None else "error" if "error" in answer else "result"))
        if answer is not None and "result" in answer and op == "get" and era == CURRENT:
            key = next(iter(answer["result"].get("inputRequests") or {}), key)
    cancel = {"jsonrpc": "2.0", "id": 99, "method": "tasks/cancel", "params": {"taskId": task_id}}
    assert_answered(surface, cancel, surface.send(cancel, era))
    if era == LEGACY:
        # Ended, its result is there at once.
        ended = {"jsonrpc": "2.0", "id": 100, "method": "tasks/result", "params": {"taskId": task_id}}
        assert_answered(surface, ended, surface.send(ended, era))


@ERAS
def test_the_server_still_answers_after_every_property_of_this_module(surface: Surface, era: Era) -> None:
    still_serving(surface, era)
    body = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "plain", "arguments": {"n": 21}}}
    answer = assert_answered(surface, body, surface.send(body, era))
    assert answer is not None and answer["result"]["content"][0]["text"] == "42"
