"""Checking an accepted answer against its question, before the tool sees it.

Every problem is collected (not just the first) as a `Problem(path, message)`.
Messages name the field and the rule, never the submitted value.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from pydantic import ValidationError

from elicitkit.errors import InvalidElicitationContent, Problem
from elicitkit.schema import FormSchema

__all__ = ["check_content", "to_data"]

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:[^\s]+$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?$")


def check_content(schema: FormSchema, content: Any) -> list[Problem]:
    """Every way `content` breaks `schema`; empty when it fits."""
    if not isinstance(content, dict):
        return [Problem("", "an accepted answer must carry an object of field values")]
    problems: list[Problem] = []
    properties = schema.properties
    for key in content:
        if key not in properties:
            problems.append(Problem(str(key), "unknown field"))
    for key in schema.required:
        if key not in content:
            problems.append(Problem(key, "required field is missing"))
    for key, prop in properties.items():
        if key in content:
            problems.extend(Problem(key, m) for m in _check_value(prop, content[key]))
    return problems


def to_data(schema: FormSchema, content: Any) -> Any:
    """Validate `content` and build the typed answer.

    Raises:
        InvalidElicitationContent: with every problem found.
    """
    problems = check_content(schema, content)
    if problems:
        raise InvalidElicitationContent(problems)
    if schema.adapter is None:
        data = {k: p["default"] for k, p in schema.properties.items() if "default" in p}
        data.update(content)
        return data
    filled = dict(content)
    for key in schema.nullable:
        filled.setdefault(key, None)
    try:
        return schema.adapter.validate_python(filled)
    except ValidationError as exc:
        # The schema check passed, so these come from the type's own validators.
        raise InvalidElicitationContent(
            [Problem(".".join(str(p) for p in err["loc"]), err["msg"]) for err in exc.errors(include_input=False)]
        ) from None


def _check_value(prop: dict[str, Any], value: Any) -> list[str]:
    kind = prop["type"]
    if kind == "boolean":
        return [] if isinstance(value, bool) else ["must be true or false"]
    if kind in ("integer", "number"):
        return _check_number(prop, value)
    if kind == "array":
        return _check_array(prop, value)
    if not isinstance(value, str):
        return ["must be text"]
    options = _choices(prop)
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


def _check_number(prop: dict[str, Any], value: Any) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ["must be a number"]
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
    options = _choices(prop["items"]) or []
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


def _choices(prop: dict[str, Any]) -> list[str] | None:
    if "enum" in prop:
        return list(prop["enum"])
    for key in ("oneOf", "anyOf"):
        if key in prop:
            return [option["const"] for option in prop[key]]
    return None


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
