"""What Discord sends back, read into answers: the question's token, which modal a submit is, and the content
or decline reason a click or a modal stands for.

No IO here: `elicitkit.channels._discord` hands these functions what Discord posted; what they read was built by
`_discord_components` (custom ids, option indexes, the modals' inputs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from elicitkit._web.forms import FieldView, typed_number
from elicitkit.channels._discord_components import (
    APPROVE,
    CHOOSE,
    DECLINING,
    FIELD,
    FOOTER,
    LABEL,
    MODAL,
    PICK,
    REASON,
    REJECT,
    SUBMIT,
    views_of,
)
from elicitkit.channels.base import Prompt

__all__ = [
    "content_of_click",
    "content_of_modal",
    "decline_message_id",
    "modal_message_id",
    "reason_of_modal",
    "token_of",
]


def token_of(message: Any) -> str | None:
    """The question's token from the message Discord sent with an interaction (None: not one of ours)."""
    if not isinstance(message, Mapping):
        return None
    for embed in message.get("embeds") or ():
        text = (embed.get("footer") or {}).get("text", "") if isinstance(embed, Mapping) else ""
        if isinstance(text, str) and text.startswith(FOOTER) and len(text) > len(FOOTER):
            return text[len(FOOTER) :]
    return None


def modal_message_id(custom_id: str) -> str | None:
    """The message a modal was opened from, from the modal's `custom_id` (None: not one of ours)."""
    return custom_id[len(MODAL) :] if custom_id.startswith(MODAL) else None


def decline_message_id(custom_id: str) -> str | None:
    """The message a decline modal was opened from (None: not a decline modal)."""
    return custom_id[len(DECLINING) :] if custom_id.startswith(DECLINING) else None


def reason_of_modal(components: Any) -> str | None:
    """What the person wrote in the decline modal (None: nothing, or no such input)."""
    for outer in components if isinstance(components, list) else ():
        if not isinstance(outer, Mapping):
            continue
        inner = [outer.get("component")] if outer.get("type") == LABEL else outer.get("components") or ()
        for part in inner:
            if isinstance(part, Mapping) and part.get("custom_id") == REASON and isinstance(part.get("value"), str):
                return str(part["value"])
    return None


def content_of_click(prompt: Prompt, custom_id: str, values: Any) -> dict[str, Any] | None:
    """The content a button or select of a one-field message accepts (None: no such control on it)."""
    views = views_of(prompt)
    if custom_id == SUBMIT and not views:
        return {}
    if len(views) != 1:
        return None
    view = views[0]
    if custom_id in (APPROVE, REJECT) and view.kind == "boolean":
        return {view.name: custom_id == APPROVE}
    if custom_id.startswith(PICK) and view.kind == "select":
        return _picked(view, [custom_id[len(PICK) :]], single=True)
    if custom_id == CHOOSE and view.kind in ("select", "multi") and isinstance(values, list):
        return _picked(view, values, single=view.kind == "select")
    return None


def content_of_modal(prompt: Prompt, components: Any) -> dict[str, Any]:
    """The content of a submitted modal (Labels, or the older Action Rows of text inputs).

    Empty optional inputs are left out; required ones are left for the desk to report.
    """
    submitted: dict[str, Mapping[str, Any]] = {}
    for outer in components if isinstance(components, list) else ():
        if not isinstance(outer, Mapping):
            continue
        inner = [outer.get("component")] if outer.get("type") == LABEL else outer.get("components") or ()
        for part in inner:
            if isinstance(part, Mapping) and isinstance(part.get("custom_id"), str):
                submitted[part["custom_id"]] = part
    content: dict[str, Any] = {}
    for index, view in enumerate(views_of(prompt)):
        part = submitted.get(f"{FIELD}{index}")
        if part is None:
            continue
        if view.kind == "boolean":
            content[view.name] = part.get("value") is True
        elif view.kind in ("select", "multi"):
            chosen = _picked(view, list(part.get("values") or ()), single=view.kind == "select")
            if chosen is not None and (view.required or chosen[view.name] not in (None, [])):
                content |= chosen
        else:
            raw = part.get("value")
            if isinstance(raw, str) and raw.strip():
                content[view.name] = typed_number(raw.strip(), str(prompt.fields[view.name].get("type")))
    return content


def _picked(view: FieldView, indices: Sequence[Any], *, single: bool) -> dict[str, Any] | None:
    """Option indices back into values; None when one is not an option of `view` (not from our message)."""
    values = []
    for index in indices:
        if not (isinstance(index, str) and index.isdigit() and int(index) < len(view.options)):
            return None
        values.append(view.options[int(index)][0])
    if single:
        return {view.name: values[0]} if len(values) == 1 else None
    return {view.name: values}
