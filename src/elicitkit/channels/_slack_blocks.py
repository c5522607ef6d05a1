"""Block Kit for the Slack channel: the question's message, its modals, and the closed message.

No IO here: `elicitkit.channels._slack` posts what these functions build and
hands what Slack sends back to `_slack_replies` (`click_content`, `content_of`, `reason_of`).

The message (`message_blocks`) is a section with the question, a context line
(the asking tool, the deadline) and one actions block (`block_id` "elicitkit"):

| question | controls |
| --- | --- |
| one boolean field (`hitl.confirm`) | Approve / Reject (accept with true / false) |
| one single-select field | one button per option (up to 5), else a `static_select` |
| no field | OK (accept with nothing) |
| anything else | "Answer…", which opens the modal |
| any secret field | "Answer on a secure page" (the link goes privately to the clicker) |

and always Decline. Every `action_id` starts with "elicitkit."; the sealed token
rides in each button's `value` (Slack allows 2,000 characters). A select
menu's option values are option indexes (Slack allows only 150 characters
there), and its token is read from the Decline button of the same block,
which Slack sends back inside `message.blocks`.

Decline opens a small modal (`decline_view`, `callback_id` "elicitkit.decline")
with one optional multi-line input (`block_id` "reason"): what the person
says there reaches the tool as `Declined.reason`; submitting it empty declines
without a reason.

The modal (`modal_view`, `callback_id` "elicitkit") has one input block per
field, whose `block_id` is the field's name and whose element's `action_id` is
"value": `checkboxes` (boolean; always optional, unticked is false),
`static_select` and `multi_static_select` (up to 100 options), `number_input`,
`email_text_input`, `url_text_input`, `datepicker` (date), `datetimepicker`
(date-time, sent back as Unix seconds, answered in UTC) and `plain_text_input`.
Typed values come back as strings; `content_of` converts them to the schema's
types, and lets what does not convert through for the desk to refuse by name.
A field no control can hold raises `ChannelRefused` naming it, when the
question is posted rather than when someone clicks.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from typing import Any

from elicitkit._core.kinds import MAX_REASON
from elicitkit._web.forms import FieldView, field_views
from elicitkit.channels.base import ChannelRefused, Closing, Prompt

__all__ = [
    "ANSWER",
    "CALLBACK_ID",
    "DECLINE",
    "DECLINE_CALLBACK_ID",
    "REASON",
    "PREFIX",
    "SECURE",
    "VALUE",
    "closed_blocks",
    "decline_view",
    "escape",
    "fallback_text",
    "message_blocks",
    "modal_view",
    "notice_view",
]

PREFIX = "elicitkit."
YES, NO, OK, SELECT, CHOOSE = "yes", "no", "ok", "select", "choose."
ANSWER, SECURE, DECLINE = "answer", "secure", "decline"
CALLBACK_ID = "elicitkit"
DECLINE_CALLBACK_ID = "elicitkit.decline"
REASON = "reason"
_ACTIONS_BLOCK = "elicitkit"
VALUE = "value"
"""The `action_id` of every input in elicitkit's modals (its `block_id` names the field, or "reason")."""

# Block Kit's limits (https://docs.slack.dev/reference/block-kit).
_BUTTONVALUE, _BUTTON_TEXT, _OPTION_TEXT, _OPTIONS = 2000, 75, 75, 100
_SECTION_TEXT, _LABEL, _MODAL_TITLE, _MODAL_BLOCKS, _BLOCK_ID, _INPUT_LENGTH = 3000, 2000, 24, 100, 255, 3000
_MAX_BUTTONS = 5


def _plain(text: str, limit: int = _LABEL) -> dict[str, Any]:
    return {"type": "plain_text", "text": _cut(text, limit), "emoji": True}


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def escape(text: str) -> str:
    """Text shown as mrkdwn, with Slack's three control characters escaped (no mentions or links from questions)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _verbatim(text: str) -> dict[str, Any]:
    """A mrkdwn text object for text from a question (escaped): `verbatim`, so Slack does not turn the URLs,
    channel names and mentions written in it into links."""
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def _button(text: str, action: str, token: str, style: str | None = None) -> dict[str, Any]:
    button: dict[str, Any] = {"type": "button", "text": _plain(text, _BUTTON_TEXT), "action_id": PREFIX + action}
    button["value"] = token
    if style is not None:
        button["style"] = style
    return button


def _options(choices: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    return [{"text": _plain(title, _OPTION_TEXT), "value": str(i)} for i, (_, title) in enumerate(choices)]


def fallback_text(prompt: Prompt) -> str:
    """The notification text Slack shows where blocks cannot be rendered (mrkdwn too: escaped like the blocks)."""
    return _cut(escape(prompt.message), _SECTION_TEXT)


def _question(prompt: Prompt) -> list[dict[str, Any]]:
    about = [f"Asked by the tool `{escape(prompt.tool)}`"] if prompt.tool else []
    if math.isfinite(prompt.expires_at):
        deadline = dt.datetime.fromtimestamp(prompt.expires_at, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        about.append(f"answer before <!date^{int(prompt.expires_at)}^{{date_short_pretty}} {{time}}|{deadline}>")
    blocks: list[dict[str, Any]] = [{"type": "section", "text": _verbatim(_cut(escape(prompt.message), _SECTION_TEXT))}]
    if about:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": " · ".join(about)}]})
    return blocks


def message_blocks(prompt: Prompt) -> list[dict[str, Any]]:
    """The question as posted in the channel.

    Raises:
        ChannelRefused: a field Slack has no control for, or a token too long for a button.
    """
    if len(prompt.token) > _BUTTONVALUE:
        raise ChannelRefused(
            f"the question's token is {len(prompt.token)} characters long; a Slack button holds {_BUTTONVALUE}"
        )
    views = field_views(prompt.schema, secret=prompt.secret_fields)
    if not prompt.secret_fields:
        _inputs(prompt.schema, views)  # refuse now what the modal could not show
    token = prompt.token
    elements: list[dict[str, Any]]
    if prompt.secret_fields:
        elements = [_button("Answer on a secure page", SECURE, token, "primary")]
    elif not views:
        elements = [_button("OK", OK, token, "primary")]
    elif len(views) == 1 and views[0].kind == "boolean":
        elements = [_button("Approve", YES, token, "primary"), _button("Reject", NO, token, "danger")]
    elif len(views) == 1 and views[0].kind == "select" and len(views[0].options) <= _MAX_BUTTONS:
        elements = [_button(title, f"{CHOOSE}{i}", token) for i, (_, title) in enumerate(views[0].options)]
    elif len(views) == 1 and views[0].kind == "select":
        menu = {"type": "static_select", "action_id": PREFIX + SELECT, "placeholder": _plain("Choose…", 150)}
        elements = [menu | {"options": _options(views[0].options)}]
    else:
        elements = [_button("Answer…", ANSWER, token, "primary")]
    elements.append(_button("Decline", DECLINE, token))
    return [*_question(prompt), {"type": "actions", "block_id": _ACTIONS_BLOCK, "elements": elements}]


def closed_blocks(prompt: Prompt, closing: Closing) -> list[dict[str, Any]]:
    """The message once the question is closed: the question, and how it ended instead of the buttons."""
    outcome = {"type": "context", "elements": [_verbatim(_cut(escape(closing.text), _SECTION_TEXT))]}
    return [_question(prompt)[0], outcome]


def modal_view(prompt: Prompt, private_metadata: str) -> dict[str, Any]:
    """The modal a multi-field question opens, with one input block per field."""
    inputs = _inputs(prompt.schema, field_views(prompt.schema))
    return {
        "type": "modal",
        "callback_id": CALLBACK_ID,
        "title": _plain("Answer the question", _MODAL_TITLE),
        "submit": _plain("Submit", _MODAL_TITLE),
        "close": _plain("Cancel", _MODAL_TITLE),
        "private_metadata": private_metadata,
        "blocks": [_question(prompt)[0], *inputs],
    }


def decline_view(prompt: Prompt, private_metadata: str) -> dict[str, Any]:
    """The modal Decline opens: the question, and why (optional)."""
    reason = {
        "type": "input",
        "block_id": REASON,
        "optional": True,
        "label": _plain("Reason (optional)"),
        "hint": _plain("The tool that asked reads it."),
        "element": {
            "type": "plain_text_input",
            "action_id": VALUE,
            "multiline": True,
            "max_length": MAX_REASON,
            "placeholder": _plain("Why not?", 150),
        },
    }
    return {
        "type": "modal",
        "callback_id": DECLINE_CALLBACK_ID,
        "title": _plain("Decline the question", _MODAL_TITLE),
        "submit": _plain("Decline", _MODAL_TITLE),
        "close": _plain("Back", _MODAL_TITLE),
        "private_metadata": private_metadata,
        "blocks": [_question(prompt)[0], reason],
    }


def notice_view(text: str) -> dict[str, Any]:
    """A modal that only says `text` (the question closed, or the person may not answer it)."""
    return {
        "type": "modal",
        "title": _plain("Answer the question", _MODAL_TITLE),
        "close": _plain("Close", _MODAL_TITLE),
        "blocks": [{"type": "section", "text": {"type": "plain_text", "text": _cut(text, _SECTION_TEXT)}}],
    }


# -- the modal's inputs ----------------------------------------------------------------------------


def _inputs(schema: Mapping[str, Any], views: Sequence[FieldView]) -> list[dict[str, Any]]:
    if len(views) >= _MODAL_BLOCKS:
        raise ChannelRefused(f"the question has {len(views)} fields; a Slack modal holds {_MODAL_BLOCKS - 1}")
    properties = schema.get("properties", {})
    return [_input(view, properties[view.name]) for view in views]


def _input(view: FieldView, prop: Mapping[str, Any]) -> dict[str, Any]:
    where = f"field {view.name!r}"
    if len(view.name) > _BLOCK_ID:
        raise ChannelRefused(f"{where}: its name is longer than the {_BLOCK_ID} characters of a Slack block id")
    kind = prop.get("type", "string")
    if kind not in ("string", "number", "integer", "boolean", "array"):
        raise ChannelRefused(f"{where}: Slack has no control for a field of type {kind!r}")
    element = _element(where, view, prop)
    block: dict[str, Any] = {
        "type": "input",
        "block_id": view.name,
        "label": _plain(view.label),
        "element": {"action_id": VALUE} | element,
        # An unticked checkbox is an answer (false); Slack would otherwise insist on a tick.
        "optional": view.kind == "boolean" or not view.required,
    }
    if view.help:
        block["hint"] = _plain(view.help)
    return block


def _element(where: str, view: FieldView, prop: Mapping[str, Any]) -> dict[str, Any]:
    if view.kind == "boolean":
        element: dict[str, Any] = {"type": "checkboxes", "options": [{"text": _plain(view.label, 75), "value": "true"}]}
        if view.value is True:
            element["initial_options"] = element["options"]
        return element
    if view.kind in ("select", "multi"):
        if not view.options:
            raise ChannelRefused(f"{where}: a list without fixed choices has no Slack control")
        if len(view.options) > _OPTIONS:
            raise ChannelRefused(f"{where}: {len(view.options)} choices; Slack's menus hold at most {_OPTIONS}")
        options = _options(view.options)
        by_value = {value: option for (value, _), option in zip(view.options, options, strict=True)}
        if view.kind == "select":
            element = {"type": "static_select", "options": options, "placeholder": _plain("Choose…", 150)}
            if view.value in by_value:
                element["initial_option"] = by_value[view.value]
            return element
        element = {"type": "multi_static_select", "options": options, "placeholder": _plain("Choose…", 150)}
        if view.chosen:
            element["initial_options"] = [by_value[v] for v in by_value if v in view.chosen]
        if "maxItems" in prop:
            element["max_selected_items"] = prop["maxItems"]
        return element
    kind, value = view.attributes["type"], view.attributes.get("value")
    if kind == "number":
        return _number(view, prop)
    if kind in ("email", "url"):
        element = {"type": "email_text_input" if kind == "email" else "url_text_input"}
        return element | ({"initial_value": str(value)} if value is not None else {})
    if kind == "date":
        return {"type": "datepicker"} | ({"initial_date": str(value)} if value is not None else {})
    if kind == "datetime-local":
        initial = _epoch(value)
        return {"type": "datetimepicker"} | ({"initial_date_time": initial} if initial is not None else {})
    element = {"type": "plain_text_input", "multiline": False}
    low, high = prop.get("minLength"), prop.get("maxLength")
    if low is not None and low > _INPUT_LENGTH:
        raise ChannelRefused(f"{where}: needs {low} characters; Slack's text inputs hold at most {_INPUT_LENGTH}")
    if low:
        element["min_length"] = low
    if high is not None and high <= _INPUT_LENGTH:
        element["max_length"] = high
    return element | ({"initial_value": str(value)} if value is not None else {})


def _number(view: FieldView, prop: Mapping[str, Any]) -> dict[str, Any]:
    whole = prop.get("type") == "integer"
    element: dict[str, Any] = {"type": "number_input", "is_decimal_allowed": not whole}
    for key, schema_key, rounding in (("min_value", "minimum", math.ceil), ("max_value", "maximum", math.floor)):
        if schema_key in prop:
            element[key] = _number_text(rounding(prop[schema_key]) if whole else prop[schema_key])
    if view.value is not None:
        element["initial_value"] = _number_text(view.value)
    return element


def _number_text(value: float) -> str:
    return str(int(value)) if isinstance(value, int | float) and float(value).is_integer() else str(value)


def _epoch(value: Any) -> int | None:
    try:
        moment = dt.datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return int((moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)).timestamp())
