"""HTML forms from the restricted schema, and form posts back into answers.

Every string that comes from a question (message, titles, descriptions,
choices, defaults) is HTML-escaped. The browser enforces each constraint it
can (`required`, `minlength`, `maxlength`, `min`, `max`, input types); the
server validates the answer again regardless. Fields listed in `secret` render
as password inputs and are never pre-filled.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from html import escape
from typing import Any

from elicitkit._schema.choices import options_of

__all__ = ["parse_form", "render_fields"]

_INPUT_TYPES = {"email": "email", "uri": "url", "date": "date", "date-time": "datetime-local"}


def _options(prop: Mapping[str, Any]) -> list[tuple[str, str]]:
    return options_of(prop) or []


def _attr(name: str, value: Any) -> str:
    return f' {name}="{escape(str(value), quote=True)}"'


def render_fields(
    schema: Mapping[str, Any],
    values: Mapping[str, Any] | None = None,
    errors: Mapping[str, Sequence[str]] | None = None,
    secret: Collection[str] = (),
) -> str:
    """The `<fieldset>`s for every property, pre-filled with `values` (else the defaults)."""
    required = set(schema.get("required", []))
    parts = []
    for name, prop in schema.get("properties", {}).items():
        value = (values or {}).get(name, prop.get("default"))
        if name in secret:
            value = None
        parts.append(_field(name, prop, name in required, value, (errors or {}).get(name, ()), name in secret))
    return "\n".join(parts)


def _field(name: str, prop: Mapping[str, Any], required: bool, value: Any, errors: Sequence[str], secret: bool) -> str:
    label = escape(prop.get("title") or name)
    field_id = f"f-{escape(name, quote=True)}"
    help_text = f'<p class="help">{escape(prop["description"])}</p>' if prop.get("description") else ""
    error_text = "".join(f'<p class="error" role="alert">{escape(e)}</p>' for e in errors)
    kind = prop.get("type", "string")
    req = " required" if required else ""
    if kind == "boolean":
        checked = " checked" if value is True else ""
        control = (
            f'<input type="hidden" name="{escape(name, quote=True)}" value="false">'
            f'<label class="check"><input type="checkbox" id="{field_id}"{_attr("name", name)} value="true"{checked}>'
            f" {label}</label>"
        )
        return f'<div class="field">{control}{help_text}{error_text}</div>'
    if kind == "array":
        chosen = set(value or [])
        boxes = "".join(
            f'<label class="check"><input type="checkbox"{_attr("name", name)}{_attr("value", v)}'
            f"{' checked' if v in chosen else ''}> {escape(t)}</label>"
            for v, t in _options(prop.get("items", {}))
        )
        limits = []
        if "minItems" in prop:
            limits.append(f"at least {prop['minItems']}")
        if "maxItems" in prop:
            limits.append(f"at most {prop['maxItems']}")
        hint = f'<p class="help">Choose {" and ".join(limits)}.</p>' if limits else ""
        return f'<fieldset class="field"><legend>{label}</legend>{boxes}{hint}{help_text}{error_text}</fieldset>'
    options = _options(prop)
    if options:
        blank = "" if required else '<option value="">—</option>'
        items = "".join(
            f"<option{_attr('value', v)}{' selected' if v == value else ''}>{escape(t)}</option>" for v, t in options
        )
        control = f'<select id="{field_id}"{_attr("name", name)}{req}>{blank}{items}</select>'
    elif kind in ("integer", "number"):
        bounds = "".join(_attr(k, prop[src]) for k, src in (("min", "minimum"), ("max", "maximum")) if src in prop)
        step = ' step="1"' if kind == "integer" else ' step="any"'
        shown = _attr("value", value) if value is not None else ""
        control = f'<input type="number" id="{field_id}"{_attr("name", name)}{step}{bounds}{shown}{req}>'
    else:
        input_type = "password" if secret else _INPUT_TYPES.get(prop.get("format", ""), "text")
        lengths = "".join(
            _attr(k, prop[src]) for k, src in (("minlength", "minLength"), ("maxlength", "maxLength")) if src in prop
        )
        shown = _attr("value", value) if value is not None else ""
        autocomplete = ' autocomplete="off"' if secret else ""
        control = f'<input type="{input_type}" id="{field_id}"{_attr("name", name)}{lengths}{shown}{autocomplete}{req}>'
    return f'<div class="field"><label for="{field_id}">{label}</label>{control}{help_text}{error_text}</div>'


def parse_form(schema: Mapping[str, Any], form: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """Turn posted form values into answer content; unparseable values pass through for validation to report."""
    content: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        values = [v for v in form.get(name, []) if v != ""]
        kind = prop.get("type", "string")
        if kind == "array":
            if name in form:
                content[name] = values
            continue
        if kind == "boolean":
            if values:
                content[name] = values[-1] == "true"
            continue
        if not values:
            continue
        raw = values[-1]
        if kind in ("integer", "number"):
            try:
                number = float(raw)
                content[name] = int(number) if kind == "integer" and number.is_integer() else number
            except ValueError:
                content[name] = raw
        elif prop.get("format") == "date-time" and len(raw) in (16, 19) and "T" in raw:
            # <input type="datetime-local"> sends no offset; the person's entry is taken as UTC.
            content[name] = (raw + ":00" if len(raw) == 16 else raw) + "Z"
        else:
            content[name] = raw
    return content
