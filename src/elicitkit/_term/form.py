"""A form as the person walks it: field after field, back a field, a review where any field can be changed, send.

Sans-IO: `fill` drives an `Asker` (the arrow-key widgets, or the plain
numbered prompts) and holds the answers; how each field is shown and read is
the asker's business. `Field` says once what a schema property is to a person:
its label, its kind, its options, its default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from elicitkit._schema.choices import options_of

__all__ = ["BACK", "OMIT", "Asker", "Expired", "Field", "Outcome", "content_of", "fields_of", "fill", "shown"]


class _Mark:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


BACK: Any = _Mark("BACK")
"""What an asker returns when the person goes back (Esc, or `<` in plain mode)."""
OMIT: Any = _Mark("OMIT")
"""An optional field left empty: it is left out of the answer, so its default applies."""


class Expired(Exception):
    """The question's deadline passed while it was being asked: the asker closes it."""


Kind = Literal["boolean", "choice", "checks", "text"]
Outcome = Literal["back", "decline", "cancel"]


@dataclass(frozen=True)
class Field:
    """One property of the requested schema, as the person sees it."""

    name: str
    prop: Mapping[str, Any]
    required: bool
    label: str

    @property
    def kind(self) -> Kind:
        if self.prop.get("type") == "boolean":
            return "boolean"
        if self.prop.get("type") == "array":
            return "checks"
        return "choice" if options_of(self.prop) is not None else "text"

    @property
    def options(self) -> list[tuple[str, str]]:
        """`(value, title)` of a choice or of a multi-select's items; empty for other fields."""
        source = self.prop.get("items", {}) if self.kind == "checks" else self.prop
        return options_of(source) or []

    @property
    def default(self) -> Any:
        return self.prop.get("default", OMIT)


def fields_of(schema: Mapping[str, Any]) -> list[Field]:
    """The form's fields in the schema's order.

    A property without a title is labelled from its name (`first_name` → "First name"); a lone untitled field
    (the helpers' `value`, `choice`, `confirmed`) is just "Your answer": the question's message already asks it.
    """
    required = set(schema.get("required", []))
    properties: Mapping[str, Any] = schema.get("properties", {})
    lone = len(properties) == 1
    fields = []
    for name, prop in properties.items():
        title = prop.get("title")
        label = str(title) if title else "Your answer" if lone else _words(name)
        fields.append(Field(name, prop, name in required, label))
    return fields


def _words(name: str) -> str:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").replace("-", " ").strip()
    return spaced[:1].upper() + spaced[1:].lower() if spaced else name


def shown(field: Field, value: Any) -> str:
    """A value as the person reads it back: titles for options, yes/no, `(left out)`."""
    if value is OMIT:
        return "(left out)"
    titles = dict(field.options)
    if field.kind == "boolean":
        return "yes" if value else "no"
    if field.kind == "checks":
        return ", ".join(titles.get(v, v) for v in value) or "(none)"
    if field.kind == "choice":
        return titles.get(value, str(value))
    return str(value) if value != "" else "(empty)"


class Asker(Protocol):
    """How fields are shown and read: the arrow-key widgets, or plain numbered prompts."""

    async def field(self, field: Field, current: Any) -> Any:
        """The field's value, `OMIT`, or `BACK`; `current` is its value so far (`OMIT`: none yet)."""
        ...

    async def review(self, fields: Sequence[Field], values: Mapping[str, Any]) -> int | Literal["send"] | Outcome:
        """`"send"`, a field's index to change it, `"decline"`, `"cancel"`, or `"back"` (to the last field)."""
        ...


async def fill(asker: Asker, fields: Sequence[Field]) -> dict[str, Any] | Outcome:
    """Walk the form; the values by field name (`OMIT` for those left out), or how the person left it.

    Esc on the first field goes back to before the form (`"back"`). A form of two fields or more ends with a
    review, where any field can be changed before sending.
    """
    values: dict[str, Any] = {}
    at = 0
    while at < len(fields):
        got = await asker.field(fields[at], values.get(fields[at].name, OMIT))
        if got is BACK:
            if at == 0:
                return "back"
            at -= 1
            continue
        values[fields[at].name] = got
        at += 1
    if len(fields) < 2:
        return values
    while True:
        pick = await asker.review(fields, values)
        if pick == "send":
            return values
        if pick in ("decline", "cancel"):
            return pick
        index = len(fields) - 1 if pick == "back" else pick
        assert isinstance(index, int)
        got = await asker.field(fields[index], values[fields[index].name])
        if got is not BACK:
            values[fields[index].name] = got


def content_of(values: Mapping[str, Any]) -> dict[str, Any]:
    """The answer's content: every value but those left out."""
    return {name: value for name, value in values.items() if value is not OMIT}
