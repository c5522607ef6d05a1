"""What a person types for one form field, turned into the field's value, with the field's own rules.

Sans-IO: the terminal prompts call these while the person types, so a
mistake shows at once, and the server validates the answer again regardless.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from elicitkit._schema.choices import options_of
from elicitkit._schema.values import check_value

__all__ = ["as_typed", "hint", "initial_text", "parse_field", "picks"]

_YES = {"y", "yes", "true", "1"}
_NO = {"n", "no", "false", "0"}
_FORMATS = {
    "email": "an email address",
    "uri": "a URI",
    "date": "a date (YYYY-MM-DD)",
    "date-time": "a date-time with its offset (2026-01-31T09:30:00Z)",
}


def parse_field(prop: Mapping[str, Any], text: str, required: bool) -> tuple[bool, Any]:
    """`(given, value)` for what was typed; `given` is False for an empty optional field.

    Raises:
        ValueError: the text is not a value of this field; the message says why (never quoting it).
    """
    kind = prop.get("type", "string")
    if not text.strip():
        return _empty(prop, kind, required)
    value: Any
    if kind == "boolean":
        if text.strip().lower() not in _YES | _NO:
            raise ValueError("answer y or n")
        value = text.strip().lower() in _YES
    elif kind in ("integer", "number"):
        value = _number(text.strip(), kind)
    elif kind == "array":
        value = [_choice(prop.get("items", {}), part) for part in picks(prop.get("items", {}), text)]
    elif options_of(prop) is not None:
        value = _choice(prop, text.strip())
    else:
        value = text  # text is kept as typed, spaces included
    problems = check_value(dict(prop), value)
    if problems:
        raise ValueError("; ".join(problems))
    return True, value


def _empty(prop: Mapping[str, Any], kind: str, required: bool) -> tuple[bool, Any]:
    """An empty entry: the empty value where the field takes one (so a default can be cleared), else nothing."""
    empty: Any = [] if kind == "array" else "" if kind == "string" and options_of(prop) is None else None
    if empty is not None and (required or "default" in prop) and not check_value(dict(prop), empty):
        return True, empty
    if required:
        raise ValueError("required: type a value")
    return False, None


def _number(text: str, kind: str) -> int | float:
    try:
        return int(text)  # exact, however large
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        raise ValueError("must be a number") from None
    if not math.isfinite(number):
        raise ValueError("must be a finite number")
    return int(number) if kind == "integer" and number.is_integer() else number


def picks(items: Mapping[str, Any], text: str) -> list[str]:
    """The parts of a multi-select's entry: `1,3`, `1 3` and `lint, e2e` are two picks each; an option whose
    title holds a space is still one pick when typed whole."""
    text = text.strip()
    if "," in text:
        return [part.strip() for part in text.split(",") if part.strip()]
    known = {word.casefold() for option in options_of(items) or [] for word in option}
    return [text] if text.casefold() in known else text.split()


def _choice(prop: Mapping[str, Any], text: str) -> str:
    """An option by its value, its title (any case), or its number (1-based), in that order."""
    options = options_of(prop) or []
    for value, title in options:
        if text in (value, title):
            return value
    folded = text.casefold()
    for value, title in options:
        if folded in (value.casefold(), title.casefold()):
            return value
    if text.isdigit() and 1 <= int(text) <= len(options):
        return options[int(text) - 1][0]
    raise ValueError(f"choose 1-{len(options)}, or type an option")


def initial_text(prop: Mapping[str, Any]) -> str:
    """The default (SEP-1034) as the person would type it, pre-filled in the prompt."""
    return as_typed(prop["default"]) if "default" in prop else ""


def as_typed(value: Any) -> str:
    """A value as the person would type it (to edit an answer already given, or a default)."""
    if isinstance(value, bool):
        return "y" if value else "n"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def hint(prop: Mapping[str, Any]) -> str:
    """What the field takes, in a few words: kind, limits, format."""
    kind = prop.get("type", "string")
    if kind == "boolean":
        return {True: "Y/n", False: "y/N"}.get(prop["default"], "y/n") if "default" in prop else "y/n"
    if kind == "array":
        words = ["numbers or names, e.g. 1,3"]
        if "minItems" in prop:
            words.append(f"at least {prop['minItems']}")
        if "maxItems" in prop:
            words.append(f"at most {prop['maxItems']}")
        return ", ".join(words)
    if options_of(prop) is not None:
        return "choose one"
    if kind in ("integer", "number"):
        words = ["a whole number" if kind == "integer" else "a number"]
        if "minimum" in prop:
            words.append(f"≥ {prop['minimum']}")
        if "maximum" in prop:
            words.append(f"≤ {prop['maximum']}")
        return " ".join(words)
    words = [_FORMATS.get(prop.get("format", ""), "text")]
    if "minLength" in prop:
        words.append(f"at least {_count(prop['minLength'], 'character')}")
    if "maxLength" in prop:
        words.append(f"at most {_count(prop['maxLength'], 'character')}")
    return ", ".join(words)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
