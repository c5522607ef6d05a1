"""What Slack sends back, read into answers: the token behind a click, a click's or a modal's content, a
decline's reason, and the desk's refusals as Slack shows them in a modal.

No IO here: `elicitkit.channels._slack` hands these functions what Slack posted; what they read was built by
`_slack_blocks` (action ids, option indexes, the modal's input blocks).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from elicitkit._schema.choices import options_of
from elicitkit._web.forms import typed_number
from elicitkit.channels._slack_blocks import CHOOSE, DECLINE, NO, OK, PREFIX, REASON, SELECT, VALUE, YES
from elicitkit.channels.base import Verdict

__all__ = ["click_content", "content_of", "errors_of", "reason_of", "token_of"]

_ERROR_TEXT = 300


def token_of(payload: Mapping[str, Any], action: Mapping[str, Any]) -> str | None:
    """The token behind a clicked element: a button's value, else the Decline button's in the same block."""
    if isinstance(action.get("value"), str):
        return str(action["value"])
    for block in (payload.get("message") or {}).get("blocks") or ():
        if block.get("block_id") == action.get("block_id"):
            for element in block.get("elements") or ():
                if element.get("action_id") == PREFIX + DECLINE and isinstance(element.get("value"), str):
                    return str(element["value"])
    return None


def click_content(schema: Mapping[str, Any], action: str, clicked: Mapping[str, Any]) -> dict[str, Any] | None:
    """The answer a click on a message control stands for (`action` without the prefix); None when it is none."""
    names = list(schema.get("properties", {}))
    if action == OK and not names:
        return {}
    if len(names) != 1:
        return None
    name, prop = names[0], schema["properties"][names[0]]
    if action in (YES, NO) and prop.get("type") == "boolean":
        return {name: action == YES}
    if action == SELECT:
        index = (clicked.get("selected_option") or {}).get("value")
    elif action.startswith(CHOOSE):
        index = action.removeprefix(CHOOSE)
    else:
        return None
    value = _option(options_of(prop) or [], index)
    return None if value is None else {name: value}


def _option(options: Sequence[tuple[str, str]], index: Any) -> str | None:
    try:
        return options[int(index)][0] if 0 <= int(index) < len(options) else None
    except (TypeError, ValueError):
        return None


def content_of(schema: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """A submitted modal's `view.state.values` as answer content, converted to the schema's types.

    Empty optional fields are left out; a value that does not convert is passed on as typed, for the desk to refuse.
    """
    content: dict[str, Any] = {}
    required = set(schema.get("required", ()))
    for name, prop in schema.get("properties", {}).items():
        state = (values.get(name) or {}).get(VALUE) or {}
        kind = prop.get("type", "string")
        if kind == "boolean":
            content[name] = any(o.get("value") == "true" for o in state.get("selected_options") or ())
        elif kind == "array":
            options = options_of(prop.get("items", {})) or []
            chosen = [_option(options, o.get("value")) for o in state.get("selected_options") or ()]
            if chosen or name in required:
                content[name] = [c for c in chosen if c is not None]
        elif "selected_option" in state or options_of(prop):
            picked = _option(options_of(prop) or [], (state.get("selected_option") or {}).get("value"))
            if picked is not None:
                content[name] = picked
        elif state.get("selected_date"):
            content[name] = str(state["selected_date"])
        elif state.get("selected_date_time") is not None:
            moment = dt.datetime.fromtimestamp(int(state["selected_date_time"]), dt.UTC)
            content[name] = moment.isoformat().replace("+00:00", "Z")
        elif state.get(VALUE) not in (None, ""):
            content[name] = (
                typed_number(str(state[VALUE]), kind) if kind in ("integer", "number") else str(state[VALUE])
            )
    return content


def errors_of(schema: Mapping[str, Any], verdict: Verdict) -> dict[str, str]:
    """A refused answer's problems by input block, as Slack's `response_action: errors` shows them in the modal."""
    names = list(schema.get("properties", {}))
    if not names:
        return {}
    errors: dict[str, list[str]] = {}
    for path, problem in verdict.problems.items():
        field = path.split(".", 1)[0]
        errors.setdefault(field if field in names else names[0], []).append(problem)
    if not errors:
        errors[names[0]] = [verdict.message]
    return {block: _clipped("; ".join(problems)) for block, problems in errors.items()}


def _clipped(text: str) -> str:
    return text if len(text) <= _ERROR_TEXT else text[: _ERROR_TEXT - 1] + "…"


def reason_of(values: Mapping[str, Any]) -> str | None:
    """What the person typed as their reason in the decline modal (None: nothing)."""
    typed = (values.get(REASON) or {}).get(VALUE) or {}
    value = typed.get("value") if isinstance(typed, Mapping) else None
    return value if isinstance(value, str) else None
