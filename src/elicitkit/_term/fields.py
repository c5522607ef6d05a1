"""What a person types for one form field, turned into the field's value, with the field's own rules.

Sans-IO: the terminal prompts call these while the person types, so a
mistake shows at once, and the server validates the answer again regardless.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from elicitkit._schema.choices import options_of
from elicitkit._schema.values import check_value

__all__ = ["hint", "initial_text", "parse_field"]

_YES = {"y", "yes", "true", "1"}
_NO = {"n", "no", "false", "0"}
_FORMATS = {"email": "an email address", "uri": "a URI", "date": "a date (YYYY-MM-DD)", "date-time": "a date-time"}


def parse_field(prop: Mapping[str, Any], text: str, required: bool) -> tuple[bool, Any]:
    """`(given, value)` for what was typed; `given` is False for an empty optional field.

    Raises:
        ValueError: the text is not a value of this field; the message says why (never quoting it).
    """
    text = text.strip()
    if not text:
        if required:
            raise ValueError("required: type a value")
        return False, None
    kind = prop.get("type", "string")
    value: Any
    if kind == "boolean":
        if text.lower() not in _YES | _NO:
            raise ValueError("answer y or n")
        value = text.lower() in _YES
    elif kind in ("integer", "number"):
        try:
            number = float(text)
        except ValueError:
            raise ValueError("must be a number") from None
        value = int(number) if kind == "integer" and number.is_integer() else number
    elif kind == "array":
        value = [_choice(prop.get("items", {}), part.strip()) for part in text.split(",") if part.strip()]
    elif options_of(prop) is not None:
        value = _choice(prop, text)
    else:
        value = text
    problems = check_value(dict(prop), value)
    if problems:
        raise ValueError("; ".join(problems))
    return True, value


def _choice(prop: Mapping[str, Any], text: str) -> str:
    """An option by its number (1-based), its value, or its title."""
    options = options_of(prop) or []
    if text.isdigit() and 1 <= int(text) <= len(options):
        return options[int(text) - 1][0]
    for value, title in options:
        if text in (value, title):
            return value
    raise ValueError(f"choose 1-{len(options)}, or type an option")


def initial_text(prop: Mapping[str, Any]) -> str:
    """The default (SEP-1034) as the person would type it, pre-filled in the prompt."""
    if "default" not in prop:
        return ""
    default = prop["default"]
    if isinstance(default, bool):
        return "y" if default else "n"
    if isinstance(default, list):
        return ", ".join(str(v) for v in default)
    return str(default)


def hint(prop: Mapping[str, Any]) -> str:
    """What the field takes, in a few words: kind, limits, format."""
    kind = prop.get("type", "string")
    if kind == "boolean":
        return "y/n"
    if kind == "array":
        words = ["one or more, comma-separated"]
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
