"""Choice fields, read and written in one place.

The restricted schema has five choice shapes (SEP-1330):

| shape | property |
| --- | --- |
| untitled single | `{type: string, enum: [...]}` |
| titled single | `{type: string, oneOf: [{const, title}]}` |
| legacy titled single | `{type: string, enum: [...], enumNames: [...]}` (2025-06-18) |
| untitled multi | `{type: array, items: {type: string, enum: [...]}}` |
| titled multi | `{type: array, items: {anyOf: [{const, title}]}}` |

`options_of` reads every one of them (for validation, pages, the model's
text and the CLI); `single_select` and `multi_select` write them;
`with_enum_names` turns titled singles into the legacy form for clients that
negotiated a revision before titled `oneOf` existed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["TITLED_ONE_OF_SINCE", "choices_of", "multi_select", "options_of", "single_select", "with_enum_names"]

TITLED_ONE_OF_SINCE = "2025-11-25"
"""The first revision whose clients read titled single-selects as `oneOf`; older ones read `enumNames`."""


def options_of(prop: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    """`(value, title)` for each option of a single-select property or a multi-select's `items`.

    None when `prop` offers no fixed choices. An untitled option's title is its value.
    """
    if "enum" in prop:
        values = list(prop["enum"])
        titles = prop.get("enumNames") or values
        return list(zip(values, titles, strict=False))
    for key in ("oneOf", "anyOf"):
        if key in prop:
            return [(option["const"], option["title"]) for option in prop[key]]
    return None


def choices_of(prop: Mapping[str, Any]) -> list[str] | None:
    """The values a single-select property (or a multi-select's `items`) admits; None for a free field."""
    if "enum" in prop:
        values: list[str] = prop["enum"]
        return values
    for key in ("oneOf", "anyOf"):
        if key in prop:
            return [option["const"] for option in prop[key]]
    return None


def _titled(values: Sequence[str], titles: Mapping[str, str]) -> list[dict[str, str]]:
    return [{"const": v, "title": titles.get(v, v)} for v in values]


def single_select(values: Sequence[str], titles: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A single-select property: untitled `enum`, or titled `oneOf` when `titles` is given."""
    if titles is None:
        return {"type": "string", "enum": list(values)}
    return {"type": "string", "oneOf": _titled(values, titles)}


def multi_select(values: Sequence[str], titles: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A multi-select property: `items.enum`, or titled `items.anyOf` when `titles` is given."""
    if titles is None:
        return {"type": "array", "items": {"type": "string", "enum": list(values)}}
    return {"type": "array", "items": {"anyOf": _titled(values, titles)}}


def with_enum_names(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` with each titled single-select written the legacy way (`enum` + `enumNames`).

    Multi-selects are left as they are: the revisions that need this form have none.
    """
    properties = {}
    for name, prop in schema["properties"].items():
        options = prop.get("oneOf") if prop.get("type") == "string" else None
        if options:
            prop = {k: v for k, v in prop.items() if k != "oneOf"}
            prop["enum"] = [option["const"] for option in options]
            prop["enumNames"] = [option["title"] for option in options]
        properties[name] = prop
    return {**schema, "properties": properties}
