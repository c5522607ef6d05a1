"""How large a question's schema may be: limits no real form reaches, which keep what a person is shown small.

Every schema is held to them where every schema is checked
(`restricted.check_raw_schema`), so a raw schema, one built from Python types,
the helpers' one-field forms and the `elicit` tool's schemas all meet the same
limits, and a schema past one is refused with a `SchemaError` naming it.

| limit | at most |
| --- | --- |
| fields in one question | `MAX_FIELDS` (100) |
| choices of one field (`enum`, `oneOf`, a multi-select's `items`) | `MAX_OPTIONS` (500) |
| characters of a field's name or title, a choice's value or title, `$schema` | `MAX_LABEL` (1,000) |
| characters of a description or a text default | `MAX_TEXT` (10,000) |
| bytes of the whole schema as compact JSON (UTF-8) | `MAX_BYTES` (64 KiB) |
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from elicitkit._errors import SchemaError
from elicitkit._timeouts import is_text

__all__ = [
    "MAX_BYTES",
    "MAX_FIELDS",
    "MAX_LABEL",
    "MAX_OPTIONS",
    "MAX_TEXT",
    "check_count",
    "check_size",
    "check_text",
    "not_text",
]

MAX_FIELDS = 100
MAX_OPTIONS = 500
MAX_LABEL = 1_000
MAX_TEXT = 10_000
MAX_BYTES = 64 * 1024

Refuse = Callable[[str], SchemaError]
"""Builds the error, prefixed with what is refused (the schema, or one of its properties)."""


def check_count(count: int, most: int, what: str, refuse: Refuse) -> None:
    """Refuse more than `most` of `what` ("fields", "choices"), before any of them is looked at."""
    if count > most:
        raise refuse(f"{count:,} {what}, over elicitkit's limit of {most:,}")


def check_text(value: Any, what: str, most: int, refuse: Refuse) -> None:
    """Refuse a string `value` longer than `most` characters, or one that is no Unicode text (anything else is for
    the caller to check)."""
    if not isinstance(value, str):
        return
    if len(value) > most:
        raise refuse(f"{what} is {len(value):,} characters, over elicitkit's limit of {most:,}")
    if not value.isascii():
        try:
            value.encode()
        except UnicodeEncodeError:
            # A lone surrogate: Python strings may hold one, no JSON sent to a client can.
            raise refuse(f"{what} is not Unicode text (it holds a lone surrogate)") from None


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)
"""Built once: every ask of a raw schema is measured, and building an encoder costs more than encoding a form."""


def check_size(schema: Mapping[str, Any], refuse: Refuse) -> None:
    """Refuse a schema over `MAX_BYTES` as compact JSON."""
    size = len(_COMPACT.encode(schema).encode())
    if size > MAX_BYTES:
        raise refuse(f"{size:,} bytes as JSON, over elicitkit's limit of {MAX_BYTES:,} bytes for one question")


def not_text(value: Any, where: str) -> str | None:
    """Where in a raw schema a name or a text cannot be written out, if anywhere."""
    if isinstance(value, str):
        return None if is_text(value) else where
    if isinstance(value, Mapping):
        for key, item in value.items():
            name = f"{where}[{key!r}]"
            if isinstance(key, str) and not is_text(key):
                return name
            found = not_text(item, name)
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = not_text(item, f"{where}[{i}]")
            if found is not None:
                return found
    return None
