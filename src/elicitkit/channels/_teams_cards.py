"""Adaptive Cards for questions on Teams, and card inputs back into answers.

A question is one Adaptive Card (version 1.4, the first with Universal
Actions), sent as the attachment `application/vnd.microsoft.card.adaptive`:

| question | what the card shows |
| --- | --- |
| one boolean field (what `hitl.confirm` asks) | Approve, Reject and Decline buttons |
| one single-select field with up to 5 options | a button per option, and Decline |
| secret fields | "Answer on a secure page" and Decline; no inputs at all |
| anything else | one input per field, Submit and Decline |

| field | input |
| --- | --- |
| boolean | `Input.Toggle` (`valueOn` "true", `valueOff` "false") |
| string | `Input.Text`, one line; `style` email or url for those formats; `maxLength` |
| string, format date | `Input.Date` |
| string, format date-time | `Input.Date` and `Input.Time` (labelled UTC: answers are read and defaults shown in UTC) |
| number, integer | `Input.Number` with `min` / `max` |
| single-select | `Input.ChoiceSet`, compact |
| multi-select | `Input.ChoiceSet` with `isMultiSelect`; Teams returns the values comma-separated |

A field of any other type, a multi-select without fixed options, and a
multi-select option containing a comma (Teams could not return it) are
refused with `ChannelRefused`, naming the field.

Decline is an `Action.ShowCard`: it opens, inside the card, one optional
multi-line input (`reason`, up to 1,000 characters) and its own Decline
button; what the person writes there reaches the tool as `Declined.reason`.

Every button is an `Action.Execute` (verb `elicitkit.answer`,
`elicitkit.decline` or `elicitkit.secure`) whose data is `{"ek": token,
"action": "answer" | "decline" | "secure"}`. Teams sends a press as an `invoke`
activity named `adaptiveCard/action`, with that data merged with the card's
inputs in `value.action.data`. Submit, Decline and the answer buttons carry an
`Action.Submit` fallback with the same data for clients without Universal
Actions, which send a `message` activity whose `value` holds it. The secure-page
button has no fallback: its link may only go back in an invoke response, which
only the person who pressed it sees.

TextBlocks render markdown, so text from the question (its message, field
names and descriptions, the closing line with the answerer's name and the
answer) goes through `literal`: markdown characters are backslash-escaped, list
markers at the start of a line too, and bare links are broken (the `:` of
`scheme://` and the dots of a domain name escaped), so none of it becomes
formatting or a link. Input labels, choice titles and button titles are plain
text in Adaptive Cards and are left as they are.

Inputs are named `field:<name>` so that no field collides with `ek` or
`action`. `content_of` turns what comes back (strings) into answer content with
the web pages' `parse_form` (numbers, booleans, lists, date-times), so a Teams
answer and a page answer are read by the same rule and validated by the desk.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any, Literal

from elicitkit._core.kinds import MAX_REASON
from elicitkit._schema.choices import options_of
from elicitkit._web.forms import FieldView, field_views, parse_form
from elicitkit.channels.base import ChannelRefused, Closing, Prompt

__all__ = [
    "CARD_TYPE",
    "INPUT",
    "REASON",
    "TIME",
    "VERBS",
    "Action",
    "closed_card",
    "content_of",
    "literal",
    "question_card",
    "reason_of",
]

CARD_TYPE = "application/vnd.microsoft.card.adaptive"
INPUT = "field:"
"""The prefix of every input id."""
TIME = "@time"
"""The suffix of a date-time field's time input (its date input has the plain id)."""
REASON = "reason"
"""The id of the decline's reason input (never a field's: those start with `field:`)."""

Action = Literal["answer", "decline", "secure"]
VERBS: dict[Action, str] = {"answer": "elicitkit.answer", "decline": "elicitkit.decline", "secure": "elicitkit.secure"}

_SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
_MAX_BUTTONS = 5  # Teams shows at most 6 actions on a card, and Decline is one
_KINDS = ("string", "number", "integer", "boolean", "array")
_TEXT_STYLES = {"email": "email", "uri": "url"}
_COLORS = {"accept": "Good", "decline": "Attention", "cancel": "Attention", "expired": "Warning"}

# Markdown in a TextBlock: emphasis, code, links and images, autolinks and HTML, headings, quotes, tables, and the
# `{{DATE(...)}}` / `{{TIME(...)}}` functions Adaptive Cards evaluate in text.
_SPECIALS = re.compile(r"[\\`*_~\[\](){}<>#|!]")
_LIST_MARKER = re.compile(r"(?<![^\r\n])([ \t]*)([-+=]|\d+(?=\.))")  # at the start of a line: - item, 1. item
_SCHEME = re.compile(r"(?<=[A-Za-z0-9]):(?=//)")  # https://…
_DOMAIN_DOT = re.compile(r"(?<=[A-Za-z0-9])\.(?=[A-Za-z]{2,}\b)")  # github.com/…, www.example.org


def literal(text: str) -> str:
    """`text` as a TextBlock shows it literally: no formatting, no links, no lists (see the module docstring)."""
    text = _SPECIALS.sub(r"\\\g<0>", text)
    text = _LIST_MARKER.sub(_unlisted, text)
    text = _SCHEME.sub(r"\\:", text)
    return _DOMAIN_DOT.sub(r"\\.", text)


def _unlisted(marker: re.Match[str]) -> str:
    indent, sign = marker.group(1), marker.group(2)
    return f"{indent}{sign}\\" if sign[0].isdigit() else f"{indent}\\{sign}"  # 1\. item, \- item


def question_card(prompt: Prompt) -> dict[str, Any]:
    """The card that asks `prompt`.

    Raises:
        ChannelRefused: a field Teams has no input for (the message names it and says why).
    """
    body = _heading(prompt)
    decline = _decline(prompt.token)
    if prompt.secret_fields:
        names = literal(", ".join(prompt.secret_fields))
        body.append(_text(f"Some answers ({names}) are secret: they are never typed into Teams.", subtle=True))
        actions = [_action("Answer on a secure page", prompt.token, "secure", style="positive"), decline]
        return _card(body, actions)
    for name, prop in prompt.fields.items():
        reason = refusal(prop)
        if reason is not None:
            raise ChannelRefused(f"field {name!r}: {reason}")
    views = field_views(prompt.schema)
    buttons = _buttons(prompt.token, views)
    if buttons is not None:
        return _card(body, [*buttons, decline])
    for view in views:
        body.extend(_inputs(view, prompt.fields[view.name]))
    submit = _action("Submit", prompt.token, "answer", style="positive", inputs=True)
    return _card(body, [submit, decline])


def closed_card(prompt: Prompt, closing: Closing) -> dict[str, Any]:
    """The card a closed question's message becomes: the question and its outcome, no actions."""
    outcome = _text(literal(closing.text), weight="Bolder")
    outcome["color"] = _COLORS.get(closing.outcome, "Default")
    return _card([*_heading(prompt, open_until=False), outcome], [])


def refusal(prop: Mapping[str, Any]) -> str | None:
    """Why Teams cannot show a field, or None when it can."""
    kind = prop.get("type", "string")
    if kind not in _KINDS:
        return f"a {kind} field has no Teams input"
    if kind != "array":
        return None
    items = prop.get("items")
    options = options_of(items) if isinstance(items, Mapping) else None
    if not options:
        return "a list without fixed options has no Teams input"
    for value, _ in options:
        if "," in str(value):
            return f"option {value!r} contains a comma, and Teams returns the choices of a multi-select comma-separated"
    return None


def content_of(schema: Mapping[str, Any], data: Mapping[str, Any]) -> dict[str, Any]:
    """The answer content in a press's data: each field's input read back into the schema's types.

    Values that cannot be read (a number that is not one) pass through for the desk to refuse with a message.
    """
    form: dict[str, list[str]] = {}
    for name, prop in schema.get("properties", {}).items():
        key = INPUT + name
        if prop.get("format") == "date-time":
            day, hour = _string(data.get(key)), _string(data.get(key + TIME))
            if day or hour:
                form[name] = [f"{day}T{hour}" if day and hour else day or hour]
            continue
        if key not in data:
            continue
        raw = data[key]
        if prop.get("type") == "array":
            form[name] = [_string(v) for v in raw] if isinstance(raw, list) else _string(raw).split(",")
        else:
            form[name] = [_string(raw)]
    return parse_form(schema, form)


# -- pieces ------------------------------------------------------------------------


def _card(body: list[dict[str, Any]], actions: list[dict[str, Any]]) -> dict[str, Any]:
    card: dict[str, Any] = {"type": "AdaptiveCard", "$schema": _SCHEMA, "version": "1.4", "body": body}
    if actions:
        card["actions"] = actions
    return card


def _text(text: str, *, subtle: bool = False, weight: str | None = None) -> dict[str, Any]:
    """A TextBlock showing `text` as markdown: whatever in it came from the question went through `literal`."""
    block: dict[str, Any] = {"type": "TextBlock", "text": text, "wrap": True}
    if subtle:
        block |= {"isSubtle": True, "size": "Small", "spacing": "None"}
    if weight is not None:
        block["weight"] = weight
    return block


def _heading(prompt: Prompt, *, open_until: bool = True) -> list[dict[str, Any]]:
    blocks = [_text(literal(prompt.message), weight="Bolder") | {"size": "Medium"}]
    notes = []
    if prompt.tool:
        notes.append(f"Asked by the tool {literal(prompt.tool)}")
    if open_until:
        # Teams renders DATE/TIME in each reader's own time zone.
        at = dt.datetime.fromtimestamp(prompt.expires_at, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        notes.append(f"open until {{{{DATE({at}, SHORT)}}}} {{{{TIME({at})}}}}")
    if notes:
        line = " · ".join(notes)
        blocks.append(_text(line[0].upper() + line[1:], subtle=True))
    return blocks


def _decline(token: str) -> dict[str, Any]:
    """Decline: a card shown in place, asking why (optional), with the button that declines."""
    reason = {
        "type": "Input.Text",
        "id": REASON,
        "label": "Reason (optional)",
        "isMultiline": True,
        "maxLength": MAX_REASON,
        "placeholder": "Why not? The tool that asked reads it.",
    }
    card = {"type": "AdaptiveCard", "body": [reason], "actions": [_action("Decline", token, "decline", inputs=True)]}
    return {"type": "Action.ShowCard", "title": "Decline", "card": card}


def reason_of(data: Mapping[str, Any]) -> str | None:
    """The reason written in a decline's card (None: none sent)."""
    reason = data.get(REASON)
    return reason if isinstance(reason, str) else None


def _action(
    title: str,
    token: str,
    action: Action,
    *,
    style: str | None = None,
    inputs: bool = False,
    values: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    data: dict[str, Any] = {"ek": token, "action": action, **(values or {})}
    associated = "auto" if inputs else "none"
    button: dict[str, Any] = {
        "type": "Action.Execute",
        "title": title,
        "verb": VERBS[action],
        "data": data,
        "associatedInputs": associated,
    }
    if style is not None:
        button["style"] = style
    # The secure link may only travel in an invoke response; a Submit's answer would be a message for everyone.
    button["fallback"] = (
        "drop"
        if action == "secure"
        else {"type": "Action.Submit", "title": title, "data": data, "associatedInputs": associated}
    )
    return button


def _buttons(token: str, views: list[FieldView]) -> list[dict[str, Any]] | None:
    """One press answers a lone yes/no or a lone short single-select; None when the question needs inputs."""
    if len(views) != 1:
        return None
    view = views[0]
    key = INPUT + view.name
    if view.kind == "boolean":
        return [
            _action("Approve", token, "answer", style="positive", values={key: "true"}),
            _action("Reject", token, "answer", style="destructive", values={key: "false"}),
        ]
    if view.kind == "select" and len(view.options) <= _MAX_BUTTONS:
        return [_action(str(title), token, "answer", values={key: str(value)}) for value, title in view.options]
    return None


def _inputs(view: FieldView, prop: Mapping[str, Any]) -> list[dict[str, Any]]:
    common: dict[str, Any] = {"id": INPUT + view.name, "label": view.label}
    if view.required:
        common |= {"isRequired": True, "errorMessage": f"{view.label} is required"}
    kind, fmt, value = prop.get("type", "string"), prop.get("format"), view.value
    found: list[dict[str, Any]]
    if view.kind == "boolean":
        toggle = {
            "type": "Input.Toggle",
            "id": common["id"],
            "title": view.label,
            "valueOn": "true",
            "valueOff": "false",
        }
        found = [toggle | {"value": "true" if value else "false"}]
    elif view.kind in ("select", "multi"):
        choices = [{"title": str(title), "value": str(option)} for option, title in view.options]
        found = [common | {"type": "Input.ChoiceSet", "choices": choices}]
        if view.kind == "multi":
            found[0] |= {"isMultiSelect": True, "style": "expanded"}
            if view.chosen:
                found[0]["value"] = ",".join(option for option, _ in view.options if option in view.chosen)
        else:
            found[0]["style"] = "compact"
            if value is not None:
                found[0]["value"] = str(value)
    elif kind in ("number", "integer"):
        limits = {card: prop[key] for card, key in (("min", "minimum"), ("max", "maximum")) if key in prop}
        found = [common | {"type": "Input.Number", **limits}]
        if value is not None:
            found[0]["value"] = value
    elif fmt == "date":
        found = [common | {"type": "Input.Date"} | ({"value": value} if value else {})]
    elif fmt == "date-time":
        day, hour = _utc_parts(value)
        date = common | {"type": "Input.Date", "label": f"{view.label} (date)"} | ({"value": day} if day else {})
        time = {"type": "Input.Time", "id": common["id"] + TIME, "label": f"{view.label} (time, UTC)"}
        if view.required:
            time |= {"isRequired": True, "errorMessage": f"{view.label} needs a time"}
        found = [date, time | ({"value": hour[:5]} if hour else {})]
    else:
        found = [common | {"type": "Input.Text", "isMultiline": False, "style": _TEXT_STYLES.get(fmt or "", "text")}]
        if "maxLength" in prop:
            found[0]["maxLength"] = prop["maxLength"]
        if value is not None:
            found[0]["value"] = str(value)
    if view.help:
        found.append(_text(literal(view.help), subtle=True))
    return found


def _utc_parts(value: Any) -> tuple[str, str]:
    """A date-time default as the card's date and time inputs show it: in UTC, which is how their answer is read."""
    text = str(value or "")
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        day, _, hour = text.partition("T")  # not a date-time: shown as written, for the desk to judge the answer
        return day, hour[:5]
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC)
    # A moment without an offset is taken as UTC, like the answer.
    hour = moment.strftime("%H:%M") if "T" in text.upper() or " " in text else ""
    return moment.date().isoformat(), hour


def _string(raw: Any) -> str:
    if isinstance(raw, bool):
        return "true" if raw else "false"
    return "" if raw is None else str(raw)
