"""Checking one value against one restricted-schema property.

Used for answers (`validation`) and for schema defaults (`rawschema`), so a
default can never be something an answer could not be. Messages name the
rule, never the value.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable
from typing import Any

from elicitkit._schema.choices import choices_of

__all__ = ["check_value", "fits"]

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:[^\s]+$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# RFC 3339: the offset is mandatory.
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def check_value(prop: dict[str, Any], value: Any) -> list[str]:
    """Every rule of `prop` that `value` breaks, as messages that never quote the value."""
    kind = prop["type"]
    if kind == "boolean":
        return [] if isinstance(value, bool) else ["must be true or false"]
    if kind in ("integer", "number"):
        return _check_number(prop, value)
    if kind == "array":
        return _check_array(prop, value)
    if not isinstance(value, str):
        return ["must be text"]
    if not _unicode(value):
        return ["must be Unicode text (it holds a lone surrogate)"]
    options = choices_of(prop)
    if options is not None:
        return [] if value in options else [f"must be one of {', '.join(options)}"]
    problems = []
    if "minLength" in prop and len(value) < prop["minLength"]:
        problems.append(f"must be at least {_count(prop['minLength'], 'character')}")
    if "maxLength" in prop and len(value) > prop["maxLength"]:
        problems.append(f"must be at most {_count(prop['maxLength'], 'character')}")
    fmt = prop.get("format")
    if fmt is not None and not _format_ok(fmt, value):
        problems.append(f"must be a valid {fmt}")
    return problems


def fits(prop: dict[str, Any]) -> Callable[[Any], bool]:
    """A quick test that says whether `value` breaks none of `prop`'s rules (`check_value` finds nothing).

    Answers are checked once per question on the hot path; the usual fields (a yes/no, free text, a choice)
    get a test of one or two operations, the rest go through `check_value`.
    """
    kind = prop["type"]
    if kind == "boolean":
        return lambda value: value is True or value is False
    if kind == "string" and not ("minLength" in prop or "maxLength" in prop or "format" in prop):
        options = choices_of(prop)
        if options is None:
            return lambda value: isinstance(value, str) and _unicode(value)
        allowed = frozenset(options)
        return lambda value: isinstance(value, str) and value in allowed
    return lambda value: not check_value(prop, value)


def _unicode(text: str) -> bool:
    """Whether `text` is Unicode text: a lone surrogate (what `json.loads` makes of `"\\ud800"`) is not, and no
    typed answer, journal or reply could carry it."""
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _check_number(prop: dict[str, Any], value: Any) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ["must be a number"]
    if isinstance(value, float) and not math.isfinite(value):
        return ["must be a finite number"]  # NaN passes every bound by comparing false
    if prop["type"] == "integer" and not (isinstance(value, int) or value.is_integer()):
        return ["must be a whole number"]
    problems = []
    if "minimum" in prop and value < prop["minimum"]:
        problems.append(f"must be at least {prop['minimum']}")
    if "maximum" in prop and value > prop["maximum"]:
        problems.append(f"must be at most {prop['maximum']}")
    return problems


def _check_array(prop: dict[str, Any], value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return ["must be a list of choices"]
    options = choices_of(prop["items"]) or []
    problems = []
    unknown = [v for v in value if v not in options]
    if unknown:
        problems.append(f"every choice must be one of {', '.join(options)}")
    if len(set(value)) != len(value):
        problems.append("must not repeat a choice")
    if "minItems" in prop and len(value) < prop["minItems"]:
        problems.append(f"must have at least {_count(prop['minItems'], 'choice')}")
    if "maxItems" in prop and len(value) > prop["maxItems"]:
        problems.append(f"must have at most {_count(prop['maxItems'], 'choice')}")
    return problems


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _format_ok(fmt: str, value: str) -> bool:
    if fmt == "email":
        return bool(_EMAIL.match(value))
    if fmt == "uri":
        return bool(_URI.match(value))
    try:
        if fmt == "date":
            return bool(_DATE.match(value)) and dt.date.fromisoformat(value) is not None
        if fmt == "date-time":
            return bool(_DATETIME.match(value)) and dt.datetime.fromisoformat(value) is not None
    except ValueError:
        return False
    return True
