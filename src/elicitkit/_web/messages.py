"""What the pages say about a refused answer: one message per field, in plain words that say what to do.

The engine refuses an answer with problems by field (`Problem(path, message)`);
those messages are written for logs and the model ("must be at most 24
characters", or a type's own validator text such as "String should match
pattern '^[a-z0-9-]+$'"). A page shows none of them. It only takes *which*
fields were refused, and writes each message from the schema itself: the
field's title and the first of its constraints that the entry breaks, in the
words of the GOV.UK Design System's error messages ("Enter service",
"Replicas must be between 1 and 64", "Choose region"). A field refused by a
rule the schema cannot state (a pattern) is asked to be checked against its
hint; one the tool's own validator refused with words of its author's (a
`ValueError` or an `assert` in a pydantic validator; `_schema.authored` finds
them) says those words, which were written for people. Messages never quote what was entered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from elicitkit._schema.choices import choices_of
from elicitkit._schema.values import check_value

__all__ = ["WHOLE", "explain", "field_message", "in_sentence"]

WHOLE = "The answer was not accepted as a whole. Check each answer and send the form again."
"""A refusal that names no field (the type's own rule across fields)."""

_FORMATS = {
    "email": "as an email address, like name@example.com",
    "uri": "as a full web address, like https://example.com",
    "date": "as a real date",
    "date-time": "as a real date and time",
}
_MISSING = object()


def explain(
    schema: Mapping[str, Any],
    content: Mapping[str, Any] | None,
    paths: Iterable[str],
    said: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """One message for each field named in `paths` (a problem's path; its first part is the field), in the
    schema's order; a path naming no field gives the message for the whole answer, under "". `said`: by field,
    the words a validator's author refused it with (`_schema.authored`)."""
    properties: Mapping[str, Any] = schema.get("properties", {})
    named = {path.split(".")[0] for path in paths}
    required = set(schema.get("required", ()))
    sent = content or {}
    own = said or {}
    messages = {
        name: field_message(prop, name, name in required, sent.get(name, _MISSING), own.get(name))
        for name, prop in properties.items()
        if name in named
    }
    if named - properties.keys():
        messages[""] = WHOLE
    return messages


def field_message(
    prop: Mapping[str, Any], name: str, required: bool = True, value: Any = _MISSING, said: str | None = None
) -> str:
    """What to do about field `name` (schema property `prop`) refused with `value` (left out: nothing entered);
    `said`: the words the tool's own validator refused it with."""
    given = str(prop.get("title") or name)
    title, lower = given[:1].upper() + given[1:], in_sentence(given)  # to start a sentence, and inside one
    kind = prop.get("type", "string")
    if value is _MISSING or value is None:
        return _missing(prop, kind, lower)
    if kind == "boolean":
        return f"Choose yes or no for {lower}"
    if kind in ("integer", "number"):
        return _number(prop, kind, title, value)
    if kind == "array":
        return _choices(prop, lower, value)
    if choices_of(prop) is not None:
        return f"Choose {lower} from the options shown"
    if isinstance(value, str):
        length = len(value)
        low, high = prop.get("minLength"), prop.get("maxLength")
        if (low is not None and length < low) or (high is not None and length > high):
            return f"{title} must be {_between(low, high, 'character')}"
        fmt = prop.get("format")
        if fmt in _FORMATS and check_value(dict(prop), value):
            return f"Enter {lower} {_FORMATS[fmt]}"
    if said:
        return f"{title} is not accepted: {said}"
    return _unexplained(prop, title)


def _missing(prop: Mapping[str, Any], kind: str, lower: str) -> str:
    if kind == "boolean":
        return f"Choose yes or no for {lower}"
    if kind == "array":
        least = prop.get("minItems") or 1
        return f"Choose at least {_count(least, 'option')} for {lower}"
    if choices_of(prop) is not None:
        return f"Choose {lower}"
    return f"Enter {lower}"


def _number(prop: Mapping[str, Any], kind: str, title: str, value: Any) -> str:
    whole = kind == "integer"
    noun = "a whole number" if whole else "a number"
    low, high = prop.get("minimum"), prop.get("maximum")
    bounds = f" {_between(low, high)}" if low is not None or high is not None else ""
    wrong_kind = isinstance(value, bool) or not isinstance(value, int | float) or value != value  # NaN
    if wrong_kind or (whole and isinstance(value, float) and not value.is_integer()):
        return f"{title} must be {noun}{bounds}"
    if (low is not None and value < low) or (high is not None and value > high):
        return f"{title} must be{bounds}"
    return _unexplained(prop, title)


def _choices(prop: Mapping[str, Any], lower: str, value: Any) -> str:
    options = choices_of(prop.get("items", {})) or []
    if not isinstance(value, list) or any(v not in options for v in value) or len(set(value)) != len(value):
        return f"Choose {lower} from the options shown"
    low, high = prop.get("minItems"), prop.get("maxItems")
    if low is not None and high is not None:
        return f"Choose {_between(low, high, 'option')} for {lower}"
    if low is not None and len(value) < low:
        return f"Choose at least {_count(low, 'option')} for {lower}"
    if high is not None and len(value) > high:
        return f"Choose at most {_count(high, 'option')} for {lower}"
    return f"Choose {lower} again from the options shown"


def _unexplained(prop: Mapping[str, Any], title: str) -> str:
    """A rule the schema cannot state (a pattern, the tool's own check): say where to look, not the rule."""
    where = " against the hint" if prop.get("description") else ""
    return f"{title} is not accepted as entered: check it{where} and enter it again"


def _between(low: Any, high: Any, noun: str | None = None) -> str:
    unit = "" if noun is None else f" {noun}s"
    if low is not None and high is not None:
        if low == high:
            return f"exactly {_count(low, noun)}" if noun else f"exactly {low}"
        return f"between {low} and {high}{unit}"
    if low is not None:
        return f"{_count(low, noun) if noun else low} or more"
    return f"{_count(high, noun) if noun else high} or {'fewer' if noun else 'less'}"


def _count(n: int, noun: str | None) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def in_sentence(title: str) -> str:
    """`title` inside a sentence: its first letter lower-cased, unless it starts an acronym ("API key")."""
    if len(title) > 1 and title[:2].isupper():
        return title
    return title[:1].lower() + title[1:]
