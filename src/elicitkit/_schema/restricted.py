"""Checking a hand-written `requestedSchema` against MCP's restricted subset.

The spec allows a flat object whose properties are strings, numbers,
integers, booleans and SEP-1330 enums. A raw schema outside that subset is
refused with the property and the reason, and so is one past elicitkit's size
limits (`limits`: fields, choices, text lengths, bytes). The legacy titled-enum form
(`enum` + `enumNames`) is accepted: elicitkit reads it as the current `oneOf`
form, and the client gets the schema as the server wrote it (`as_written`).
Schemas compiled from Python types pass through the same checks, so a default
is always something an answer could be, and no field takes a name reserved for
the controls elicitkit's pages add to a form (`PAGE_CONTROLS`).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping
from typing import Any

from elicitkit._errors import SchemaError
from elicitkit._schema.choices import choices_of
from elicitkit._schema.limits import (
    MAX_FIELDS,
    MAX_LABEL,
    MAX_OPTIONS,
    MAX_TEXT,
    Refuse,
    check_count,
    check_size,
    check_text,
)
from elicitkit._schema.values import check_value

__all__ = ["PAGE_CONTROLS", "as_written", "check_raw_schema"]

PAGE_CONTROLS = "ek:"
"""The prefix of the controls elicitkit's pages post beside a question's fields (`ek:csrf`, `ek:action`,
`ek:token`): no property may start with it, so no field a question asks for can pose as the page's own."""

_COMMON = {"type", "title", "description", "default"}
_ALLOWED = {
    "string": _COMMON | {"minLength", "maxLength", "format", "enum", "enumNames", "oneOf"},
    "number": _COMMON | {"minimum", "maximum"},
    "integer": _COMMON | {"minimum", "maximum"},
    "boolean": _COMMON,
    "array": _COMMON | {"items", "minItems", "maxItems"},
}
_FORMATS = {"email", "uri", "date", "date-time"}
_ROOT_TEXT = (
    ("$schema", "'$schema'", MAX_LABEL),
    ("title", "'title'", MAX_LABEL),
    ("description", "'description'", MAX_TEXT),
)
_PROPERTY_TEXT = (
    ("title", "'title'", MAX_LABEL),
    ("description", "'description'", MAX_TEXT),
    ("default", "'default'", MAX_TEXT),
)


def _raw_label(name: str) -> str:
    return f"Raw schema property {name!r}"


def check_raw_schema(
    schema: Mapping[str, Any], label: Callable[[str], str] = _raw_label, root: str = "Raw schema"
) -> dict[str, Any]:
    """Return the wire form of a schema, or raise `SchemaError` naming what is wrong.

    `label(name)` names a property in error messages, `root` the schema. A root
    `title` or `description` is accepted and dropped: the wire's `requestedSchema` has neither.
    """

    def refuse(reason: str) -> SchemaError:
        return SchemaError(f"{root}: {reason}")

    extra = set(schema) - {"type", "properties", "required", "$schema", "title", "description"}
    if schema.get("type") != "object" or extra:
        raise refuse(f"unsupported keys {sorted(extra)}" if extra else 'the root must be {"type": "object", ...}')
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        raise refuse("'properties' must be an object of property schemas")
    check_count(len(properties), MAX_FIELDS, "fields", refuse)
    if not all(isinstance(k, str) for k in properties):
        raise refuse("'properties' must be an object of property schemas")
    if "$schema" in schema and not isinstance(schema["$schema"], str):
        raise refuse("'$schema' must be a string (the dialect's URI)")
    for key, what, most in _ROOT_TEXT:
        check_text(schema.get(key), what, most, refuse)
    for name in properties:
        check_text(name, "a field name", MAX_LABEL, refuse)
    reserved = [name for name in properties if name.startswith(PAGE_CONTROLS)]
    if reserved:
        raise SchemaError(
            f"{label(reserved[0])}: names starting with {PAGE_CONTROLS!r} are reserved for the controls of "
            "elicitkit's pages; rename the field"
        )
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise refuse("'required' must be a list of property names")
    missing = [r for r in required if r not in properties]
    if missing:
        raise refuse(f"'required' names {missing} which are not in 'properties'")
    wire: dict[str, Any] = {"type": "object", "properties": {k: _property(k, v, label) for k, v in properties.items()}}
    if required:
        wire["required"] = list(required)
    check_size(wire, refuse)
    return wire


def as_written(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A checked raw schema as the client gets it: the server's own properties, unchanged.

    Only what the wire's `requestedSchema` cannot carry goes (a root `title` or
    `description`), and a choice property without `type` gets the `"string"` it implies.
    """
    properties = {
        name: copy.deepcopy(dict(prop) if "type" in prop else {"type": "string", **prop})
        for name, prop in schema["properties"].items()
    }
    wire: dict[str, Any] = {"type": "object", "properties": properties}
    if "$schema" in schema:
        wire = {"$schema": schema["$schema"], **wire}
    if schema.get("required"):
        wire["required"] = list(schema["required"])
    return wire


def _property(name: str, prop: Any, label: Callable[[str], str]) -> dict[str, Any]:
    def refuse(reason: str) -> SchemaError:
        return SchemaError(f"{label(name)}: {reason}")

    if not isinstance(prop, Mapping):
        raise refuse("must be an object")
    kind = prop.get("type")
    if kind is None and "oneOf" in prop:
        kind = "string"
    if not isinstance(kind, str) or kind not in _ALLOWED:
        if isinstance(kind, list):
            raise refuse(
                f"type {kind!r} is not allowed: a form field has one type (string, number, integer, boolean or "
                "a multi-select array); leave it out of 'required' to make it optional rather than adding null"
            )
        raise refuse(f"type {kind!r} is not allowed (string, number, integer, boolean or a multi-select array)")
    unknown = set(prop) - _ALLOWED[kind]
    if unknown:
        raise refuse(f"keys {sorted(unknown)} are not part of the restricted schema")
    out = dict(prop)
    out["type"] = kind
    for key in ("title", "description"):
        if key in prop and not isinstance(prop[key], str):
            raise refuse(f"{key!r} must be a string")
    for key, what, most in _PROPERTY_TEXT:
        check_text(prop.get(key), what, most, refuse)
    if kind == "string":
        _string(prop, out, refuse)
    elif kind in ("number", "integer"):
        for key in ("minimum", "maximum"):
            if key in prop and not _finite_number(prop[key]):
                raise refuse(f"{key!r} must be a finite number")
    elif kind == "array":
        _array(prop, out, refuse)
    _consistent(out, refuse)
    return out


def _finite_number(value: Any) -> bool:
    """A bound a form can carry: NaN or an infinity is no JSON, and NaN would let every answer through."""
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int) and not isinstance(value, bool)


def _consistent(prop: dict[str, Any], refuse: Any) -> None:
    """Bounds that admit some answer, and a default that is one."""
    for low, high in (("minLength", "maxLength"), ("minimum", "maximum"), ("minItems", "maxItems")):
        if low in prop and high in prop and prop[low] > prop[high]:
            raise refuse(f"{low!r} is greater than {high!r}")
    if prop["type"] == "array":
        count = len(choices_of(prop["items"]) or [])
        if prop.get("minItems", 0) > count:
            raise refuse(f"'minItems' asks for more choices than the {count} options")
    if "default" in prop:
        problems = check_value(prop, prop["default"])
        if problems:
            raise refuse(f"the default {'; '.join(problems)}")


def _string(prop: Mapping[str, Any], out: dict[str, Any], refuse: Any) -> None:
    for key in ("minLength", "maxLength"):
        if key in prop and (isinstance(prop[key], bool) or not isinstance(prop[key], int) or prop[key] < 0):
            raise refuse(f"{key!r} must be a non-negative integer")
    if "format" in prop and (not isinstance(prop["format"], str) or prop["format"] not in _FORMATS):
        raise refuse(f"format {prop['format']!r} is not one of {sorted(_FORMATS)}")
    if "enum" in prop and "oneOf" in prop:
        raise refuse("use either 'enum' or 'oneOf', not both")
    if "enumNames" in prop and "enum" not in prop:
        raise refuse("'enumNames' needs 'enum'")
    if "enum" in prop:
        values = _strings(prop["enum"], refuse, "'enum' must be a non-empty list of strings")
        if "enumNames" in prop:
            names = _strings(prop["enumNames"], refuse, "'enumNames' must be a list of strings")
            if len(names) != len(values):
                raise refuse("'enumNames' must have one title per 'enum' value")
            del out["enum"], out["enumNames"]
            out["oneOf"] = [{"const": v, "title": t} for v, t in zip(values, names, strict=True)]
    if "oneOf" in prop:
        _titled(prop["oneOf"], refuse, "'oneOf'")


def _array(prop: Mapping[str, Any], out: dict[str, Any], refuse: Any) -> None:
    items = prop.get("items")
    if not isinstance(items, Mapping):
        raise refuse("a multi-select needs 'items' with 'enum' or 'anyOf' choices")
    if set(items) == {"type", "enum"} and items["type"] == "string":
        _strings(items["enum"], refuse, "'items.enum' must be a non-empty list of strings")
    elif set(items) == {"anyOf"}:
        _titled(items["anyOf"], refuse, "'items.anyOf'")
    else:
        raise refuse(
            "'items' must be {type: string, enum: [...]} or {anyOf: [{const, title}]}; "
            "arrays of other things cannot be asked"
        )
    for key in ("minItems", "maxItems"):
        if key in prop and (isinstance(prop[key], bool) or not isinstance(prop[key], int) or prop[key] < 0):
            raise refuse(f"{key!r} must be a non-negative integer")
    out["items"] = dict(items)


def _strings(value: Any, refuse: Refuse, reason: str) -> list[str]:
    if not isinstance(value, list) or not value:
        raise refuse(reason)
    check_count(len(value), MAX_OPTIONS, "choices", refuse)
    if not all(isinstance(v, str) for v in value):
        raise refuse(reason)
    for text in value:
        check_text(text, "a choice", MAX_LABEL, refuse)
    return list(value)


def _titled(value: Any, refuse: Refuse, where: str) -> None:
    if not isinstance(value, list) or not value:
        raise refuse(f"{where} must be a non-empty list of {{const, title}}")
    check_count(len(value), MAX_OPTIONS, "choices", refuse)
    for option in value:
        if not (isinstance(option, Mapping) and set(option) == {"const", "title"}):
            raise refuse(f"{where} entries must be exactly {{const, title}}")
        if not isinstance(option["const"], str) or not isinstance(option["title"], str):
            raise refuse(f"{where} 'const' and 'title' must be strings")
        check_text(option["const"], "a choice", MAX_LABEL, refuse)
        check_text(option["title"], "a choice's title", MAX_LABEL, refuse)
