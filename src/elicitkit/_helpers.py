"""One-field forms for the common questions: confirm, text, choice, choices.

Each builds a cached `FormSchema` with a single property, `value`; the helper
methods on `Elicitation` ask it and unwrap it, so `Accepted.data` is the bare value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal

from elicitkit._schema.choices import multi_select, single_select
from elicitkit._schema.compile import FormSchema
from elicitkit._schema.restricted import check_raw_schema

__all__ = [
    "FIELD",
    "TextFormat",
    "choice_schema",
    "choices_schema",
    "confirm_schema",
    "split_options",
    "text_schema",
]

FIELD = "value"

TextFormat = Literal["email", "uri", "date", "date-time"]


def split_options(options: Sequence[str] | Mapping[str, str]) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """Split options into (values, titles); titles is None for a plain list of values."""
    if isinstance(options, Mapping):
        return tuple(options), tuple(options.values())
    if isinstance(options, str):
        raise TypeError("options must be a list of strings, not a single string")
    return tuple(options), None


def _single(prop: dict[str, Any], required: bool) -> FormSchema:
    raw: dict[str, Any] = {"type": "object", "properties": {FIELD: prop}}
    if required:
        raw["required"] = [FIELD]
    return FormSchema(wire=check_raw_schema(raw), source=raw, adapter=None)  # built by elicitkit: not `written`


def _common(prop: dict[str, Any], title: str | None, description: str | None, default: Any) -> dict[str, Any]:
    if title is not None:
        prop["title"] = title
    if description is not None:
        prop["description"] = description
    if default is not None:
        prop["default"] = list(default) if isinstance(default, tuple) else default
    return prop


@lru_cache(maxsize=256)
def confirm_schema(title: str | None, description: str | None, default: bool) -> FormSchema:
    return _single(_common({"type": "boolean"}, title, description, default), required=False)


@lru_cache(maxsize=256)
def text_schema(
    title: str | None,
    description: str | None,
    min_length: int | None,
    max_length: int | None,
    fmt: TextFormat | None,
    default: str | None,
) -> FormSchema:
    prop: dict[str, Any] = {"type": "string"}
    if min_length is not None:
        prop["minLength"] = min_length
    if max_length is not None:
        prop["maxLength"] = max_length
    if fmt is not None:
        prop["format"] = fmt
    return _single(_common(prop, title, description, default), required=default is None)


@lru_cache(maxsize=256)
def choice_schema(
    values: tuple[str, ...],
    titles: tuple[str, ...] | None,
    title: str | None,
    description: str | None,
    default: str | None,
) -> FormSchema:
    _check_default(values, () if default is None else (default,))
    prop = single_select(values, None if titles is None else dict(zip(values, titles, strict=True)))
    return _single(_common(prop, title, description, default), required=default is None)


@lru_cache(maxsize=256)
def choices_schema(
    values: tuple[str, ...],
    titles: tuple[str, ...] | None,
    title: str | None,
    description: str | None,
    min_items: int | None,
    max_items: int | None,
    default: tuple[str, ...] | None,
) -> FormSchema:
    _check_default(values, default or ())
    prop = multi_select(values, None if titles is None else dict(zip(values, titles, strict=True)))
    if min_items is not None:
        prop["minItems"] = min_items
    if max_items is not None:
        prop["maxItems"] = max_items
    return _single(_common(prop, title, description, default), required=default is None)


def _check_default(values: tuple[str, ...], defaults: Sequence[str]) -> None:
    unknown = [d for d in defaults if d not in values]
    if unknown:
        raise ValueError(f"default {unknown!r} is not among the options {list(values)!r}")
