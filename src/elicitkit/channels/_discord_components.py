"""Discord messages, components and modals for elicitkit questions (`_discord_replies` reads what comes back).

No IO here: `_discord.py` posts what these functions build.

How a question looks (the first rule that fits):

| question | message components | answer |
| --- | --- | --- |
| any field in `secret_fields` | "Answer on a secure page" | elicitkit's own page, link sent ephemerally |
| no fields | "Submit" | accept `{}` |
| one boolean field (`confirm`) | "Approve" / "Reject" | accept `{field: true}` / `{field: false}` |
| one single-select, ≤ 5 options | one button per option | accept `{field: value}` |
| one single- or multi-select, ≤ 25 options | a string select | accept `{field: value}` / `{field: [values]}` |
| anything else, ≤ 5 fields | "Answer…", which opens a modal | accept the modal's fields |

Every message also has "Decline", which opens a small modal (`decline_modal`, `custom_id`
`ek:d:<message id>`) with one optional paragraph input: the person's reason, which reaches the tool as
`Declined.reason` (`reason_of_modal`); submitted empty, it declines without one. A modal holds one Label (type 18) per
field: a Checkbox (23) for a boolean, a String Select (3) for a single- or multi-select (≤ 25
options), and a short Text Input (4) for every other field. Labels are Discord's current modal
layout; Action Rows of text inputs in modals are deprecated (`content_of_modal` still reads them).
Text inputs come back as strings: integers and numbers are converted here (what does not parse is
passed on as typed, so the desk refuses it with its reason); emails, URIs, dates and date-times stay
strings and the desk validates them. Whatever cannot be shown raises `ChannelRefused` naming the
field and the Discord limit: more than 25 options, more than 5 fields in a form, a `minLength`
above Discord's 4000 characters, a type outside the restricted schema.

Component `custom_id`s never carry values: a button or select option carries the option's index,
an input carries its field's index (`ek:f:<i>`), and both are read back against the question's schema,
which the desk opens from the token. That keeps every `custom_id` and option value far below
Discord's 100-character limit, whatever the choices are called.

Where the token lives: in the footer of the message's embed (`elicitkit · <token>`). Discord includes
the whole message in every component interaction, and in a modal submit when the modal was opened
from a message component, so the token comes back signed by Discord with every click and every form;
a `custom_id` could not hold it (≤ 100 characters; a token is ~145). A modal's own `custom_id` is
`ek:m:<message id>`, checked against the message the submit carries. The token in the footer is
visible to the channel, which is harmless: it only opens the question for someone whose reply comes
through Discord's signed interactions, and the desk still checks approvers. Closing the message
removes it.

Embed descriptions and field values render Discord markdown, so text from the question there (its
message, field labels, the outcome with the answerer's name and the answer) goes through `literal`:
markdown characters are backslash-escaped (and list markers at the start of a line), mentions
(`<@…>`, `<#…>`, `@everyone`) and masked links become plain text, and bare links are broken at their
`://`. `allowed_mentions` stops pings besides. Button labels, select options and modal titles are
plain text and are left as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from elicitkit._core.kinds import MAX_REASON
from elicitkit._web.forms import FieldView, field_views
from elicitkit.channels._discord_text import clip, clip_escaped, literal
from elicitkit.channels.base import ChannelRefused, Closing, Prompt

__all__ = [
    "APPROVE",
    "CHOOSE",
    "DECLINE",
    "DECLINING",
    "FIELD",
    "FOOTER",
    "FORM",
    "LABEL",
    "MODAL",
    "NO_MENTIONS",
    "PICK",
    "REASON",
    "REJECT",
    "SECURE",
    "SUBMIT",
    "closed_message",
    "decline_modal",
    "layout_of",
    "literal",
    "modal",
    "question_message",
    "views_of",
]

MAX_OPTIONS, MAX_BUTTONS, MAX_MODAL_FIELDS, MAX_TEXT = 25, 5, 5, 4000

APPROVE, REJECT, SUBMIT, DECLINE = "ek:yes", "ek:no", "ek:ok", "ek:decline"
FORM, SECURE, CHOOSE, PICK, FIELD, MODAL = "ek:form", "ek:secure", "ek:choose", "ek:pick:", "ek:f:", "ek:m:"
DECLINING, REASON = "ek:d:", "ek:reason"
FOOTER = "elicitkit · "
"""What the embed's footer says before the question's token."""

_BLURPLE, _GREEN, _RED, _GREY = 0x5865F2, 0x57F287, 0xED4245, 0x99AAB5
_PRIMARY, _SECONDARY, _SUCCESS, _DANGER = 1, 2, 3, 4
_ROW, _BUTTON, _STRING_SELECT, _TEXT_INPUT, LABEL, _CHECKBOX = 1, 2, 3, 4, 18, 23
NO_MENTIONS: dict[str, Any] = {"parse": []}
"""Text from a question must never ping anyone (`@everyone` in a tool's message stays text)."""

_KINDS = {"boolean", "string", "number", "integer", "array"}
_HINTS = {
    "email": "name@example.com",
    "url": "https://…",
    "date": "YYYY-MM-DD",
    "datetime-local": "YYYY-MM-DDThh:mm:ssZ",
}

Layout = Literal["secure", "submit", "confirm", "buttons", "select", "form"]

# -- what a question becomes ------------------------------------------------------------------------------------


def layout_of(prompt: Prompt) -> Layout:
    """How `prompt` is shown (see the module docstring).

    Raises:
        ChannelRefused: a field Discord cannot show, named with the reason.
    """
    if prompt.secret_fields:
        return "secure"  # every field is answered on elicitkit's page: Discord's limits do not apply
    views = views_of(prompt)
    if not views:
        return "submit"
    if len(views) == 1 and views[0].kind == "boolean":
        return "confirm"
    if len(views) == 1 and views[0].kind in ("select", "multi"):
        return "buttons" if views[0].kind == "select" and len(views[0].options) <= MAX_BUTTONS else "select"
    if len(views) > MAX_MODAL_FIELDS:
        raise ChannelRefused(
            f"the question has {len(views)} fields, and a Discord modal holds at most {MAX_MODAL_FIELDS}: "
            "split it into several questions"
        )
    return "form"


def question_message(prompt: Prompt) -> dict[str, Any]:
    """The body of `POST /channels/{id}/messages` for `prompt`.

    Raises:
        ChannelRefused: a field Discord cannot show.
    """
    layout = layout_of(prompt)
    return {
        "embeds": [_embed(prompt, layout)],
        "components": _components(prompt, layout),
        "allowed_mentions": NO_MENTIONS,
    }


def closed_message(prompt: Prompt, closing: Closing) -> dict[str, Any]:
    """The body of `PATCH /channels/{id}/messages/{id}`: the outcome instead of the controls, and no token."""
    color = {"accept": _GREEN, "decline": _RED}.get(closing.outcome, _GREY)
    embed = {
        "title": _title(prompt),
        "description": literal(prompt.message, 4096),
        "color": color,
        "fields": [{"name": "Outcome", "value": literal(closing.text, 1024)}],
        "footer": {"text": "elicitkit"},
    }
    return {"embeds": [embed], "components": [], "allowed_mentions": NO_MENTIONS}


def modal(prompt: Prompt, message_id: str) -> dict[str, Any]:
    """The `data` of a MODAL (type 9) interaction response: one Label per field."""
    labels = []
    for index, view in enumerate(views_of(prompt)):
        label: dict[str, Any] = {
            "type": LABEL,
            "label": clip(view.label, 45),
            "component": _control(view, prompt.fields[view.name], index),
        }
        if view.help:
            label["description"] = clip(view.help, 100)
        labels.append(label)
    title = clip(prompt.message, 45) or "Your answer"
    return {"custom_id": f"{MODAL}{message_id}", "title": title, "components": labels}


def decline_modal(prompt: Prompt, message_id: str) -> dict[str, Any]:
    """The `data` of the MODAL Decline opens: why (optional), as one paragraph."""
    reason = {
        "type": _TEXT_INPUT,
        "custom_id": REASON,
        "style": 2,
        "required": False,
        "max_length": MAX_REASON,
        "placeholder": "Why not? The tool that asked reads it.",
    }
    label = {"type": LABEL, "label": "Reason (optional)", "component": reason}
    label["description"] = clip(f"Declining: {prompt.message}", 100)
    return {"custom_id": f"{DECLINING}{message_id}", "title": "Decline the question", "components": [label]}


# -- rendering --------------------------------------------------------------------------------------------------


def views_of(prompt: Prompt) -> list[FieldView]:
    """The question's fields as Discord shows them; one it cannot show raises `ChannelRefused`."""
    views = field_views(prompt.schema)
    for view in views:
        _check(view, prompt.fields[view.name])
    return views


def _check(view: FieldView, prop: Mapping[str, Any]) -> None:
    kind = prop.get("type", "string")
    if kind not in _KINDS:
        raise ChannelRefused(f"field {view.name!r} has type {kind!r}, which is not in the restricted form schema")
    if view.kind in ("select", "multi"):
        count = len(view.options)
        if count == 0:
            raise ChannelRefused(f"field {view.name!r} is a list with no choices; Discord can only offer fixed choices")
        if count > MAX_OPTIONS:
            raise ChannelRefused(
                f"field {view.name!r} has {count} choices, and a Discord select menu holds at most {MAX_OPTIONS}"
            )
        if int(prop.get("minItems", 0)) > count:
            raise ChannelRefused(f"field {view.name!r} asks for more choices than it offers")
    elif view.kind == "input" and int(prop.get("minLength", 0)) > MAX_TEXT:
        raise ChannelRefused(
            f"field {view.name!r} needs at least {prop['minLength']} characters, "
            f"and a Discord text input holds at most {MAX_TEXT}"
        )


def _title(prompt: Prompt) -> str:
    return clip(f"{prompt.tool} asks" if prompt.tool else "A question for you", 256)


def _embed(prompt: Prompt, layout: Layout) -> dict[str, Any]:
    fields = [{"name": "Answer by", "value": f"<t:{int(prompt.expires_at)}:f> (<t:{int(prompt.expires_at)}:R>)"}]
    if layout == "secure":
        fields.append({"name": "Private answer", "value": "Answer on a secure page: it never passes through Discord."})
    elif layout == "form":
        listed = "\n".join(
            f"• {literal(v.label, 200)}" + (" (required)" if v.required else "") for v in views_of(prompt)
        )
        fields.append({"name": "Fields", "value": clip_escaped(listed, 1024)})
    return {
        "title": _title(prompt),
        "description": literal(prompt.message, 4096),
        "color": _BLURPLE,
        "fields": fields,
        "footer": {"text": f"{FOOTER}{prompt.token}"},
    }


def _components(prompt: Prompt, layout: Layout) -> list[dict[str, Any]]:
    decline = _button("Decline", DECLINE, _SECONDARY)
    if layout == "secure":
        return [_row(_button("Answer on a secure page", SECURE, _PRIMARY), decline)]
    if layout == "submit":
        return [_row(_button("Submit", SUBMIT, _PRIMARY), decline)]
    if layout == "form":
        return [_row(_button("Answer…", FORM, _PRIMARY), decline)]
    (view,) = views_of(prompt)
    if layout == "confirm":
        return [_row(_button("Approve", APPROVE, _SUCCESS), _button("Reject", REJECT, _DANGER), decline)]
    if layout == "buttons":
        options = [
            _button(str(title), f"{PICK}{i}", _PRIMARY if value == view.value else _SECONDARY)
            for i, (value, title) in enumerate(view.options)
        ]
        return [_row(*options), _row(decline)]
    return [_row(_select(view, prompt.fields[view.name], CHOOSE)), _row(decline)]


def _control(view: FieldView, prop: Mapping[str, Any], index: int) -> dict[str, Any]:
    """The modal control for one field, inside its Label."""
    custom_id = f"{FIELD}{index}"
    if view.kind == "boolean":
        return {"type": _CHECKBOX, "custom_id": custom_id, "default": view.value is True}
    if view.kind in ("select", "multi"):
        return _select(view, prop, custom_id, in_modal=True)
    attributes = view.attributes
    control: dict[str, Any] = {"type": _TEXT_INPUT, "custom_id": custom_id, "style": 1, "required": view.required}
    if "minlength" in attributes:
        control["min_length"] = max(0, int(attributes["minlength"]))
    if "maxlength" in attributes:
        control["max_length"] = min(MAX_TEXT, max(1, int(attributes["maxlength"])))
        control["style"] = 2 if control["max_length"] > 200 else 1
    hint = _hint(attributes)
    if hint:
        control["placeholder"] = clip(hint, 100)
    if view.value is not None:
        control["value"] = clip(str(view.value), MAX_TEXT)
    return control


def _hint(attributes: Mapping[str, Any]) -> str | None:
    kind = attributes.get("type")
    if kind != "number":
        return _HINTS.get(str(kind))
    words = "A whole number" if attributes.get("step") == "1" else "A number"
    low, high = attributes.get("min"), attributes.get("max")
    if low is not None and high is not None:
        return f"{words} from {low} to {high}"
    if low is not None:
        return f"{words}, at least {low}"
    return f"{words}, at most {high}" if high is not None else words


def _select(view: FieldView, prop: Mapping[str, Any], custom_id: str, *, in_modal: bool = False) -> dict[str, Any]:
    chosen = view.chosen if view.kind == "multi" else frozenset({view.value})
    options = []
    for i, (value, title) in enumerate(view.options):
        option: dict[str, Any] = {"label": clip(str(title), 100) or "—", "value": str(i)}
        if value in chosen:
            option["default"] = True
        options.append(option)
    select: dict[str, Any] = {"type": _STRING_SELECT, "custom_id": custom_id, "options": options}
    if view.kind == "multi":
        count = len(view.options)
        low = min(int(prop.get("minItems", 0)), count)
        high = max(1, low, min(int(prop.get("maxItems", count)), count))
        select["min_values"], select["max_values"] = low, high
        select["placeholder"] = f"Choose up to {high}" if low == 0 else f"Choose {low} to {high}"
    else:
        select["min_values"] = select["max_values"] = 1
        select["placeholder"] = "Choose one"
    if in_modal:
        select["required"] = view.required and select["min_values"] >= 1
        if not select["required"]:
            select["min_values"] = 0
    return select


def _row(*components: dict[str, Any]) -> dict[str, Any]:
    return {"type": _ROW, "components": list(components)}


def _button(label: str, custom_id: str, style: int) -> dict[str, Any]:
    return {"type": _BUTTON, "style": style, "label": clip(label, 80) or "—", "custom_id": custom_id}
