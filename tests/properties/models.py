"""Python types drawn field by field: pydantic models, dataclasses and TypedDicts built from generated fields.

A `Field` is one annotation a user may write, with what the compiled property must say (`expects`) and,
for a type that can be asked, answers that fit it and a check of the value the typed answer then holds.
Types a form cannot ask (`refused`) must be refused with a `SchemaError` naming the field.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NotRequired

from hypothesis import strategies as st
from pydantic import AnyUrl, BaseModel, EmailStr, SecretStr, create_model
from pydantic import Field as PydanticField
from typing_extensions import TypedDict  # pydantic reads only this one before Python 3.12

from elicitkit import Titles
from tests.properties.strategies import fitting

__all__ = ["Field", "build", "fields", "refused_fields"]


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"
    BLUE = "blue"


class Nested(BaseModel):
    x: int


@dataclass(frozen=True)
class Field:
    annotation: Any
    expects: dict[str, Any]
    """Keys the compiled property must carry, with their values."""
    check: Callable[[Any, Any], bool] = lambda sent, got: sent == got
    """Whether the typed answer's value `got` is what the answer `sent` said."""


def _same_text(sent: Any, got: Any) -> bool:
    return bool(str(got) == sent or str(got).rstrip("/") == sent.rstrip("/"))


def _is(tp: type) -> Callable[[Any, Any], bool]:
    return lambda sent, got: isinstance(got, tp)


@st.composite
def _bounded_int(draw: st.DrawFn) -> Field:
    low = draw(st.integers(-1000, 1000))
    high = draw(st.integers(low + 2, low + 2000))
    if draw(st.booleans()):
        return Field(
            Annotated[int, PydanticField(ge=low, le=high)], {"type": "integer", "minimum": low, "maximum": high}
        )
    return Field(
        Annotated[int, PydanticField(gt=low, lt=high)], {"type": "integer", "minimum": low + 1, "maximum": high - 1}
    )


@st.composite
def _bounded_float(draw: st.DrawFn) -> Field:
    low = draw(st.floats(-1e6, 1e6, allow_nan=False))
    high = draw(st.floats(low, 1e6 + 1, allow_nan=False))
    return Field(Annotated[float, PydanticField(ge=low, le=high)], {"type": "number", "minimum": low, "maximum": high})


@st.composite
def _bounded_str(draw: st.DrawFn) -> Field:
    low = draw(st.integers(0, 10))
    high = draw(st.integers(low, 30))
    return Field(
        Annotated[str, PydanticField(min_length=low, max_length=high)],
        {"type": "string", "minLength": low, "maxLength": high},
    )


_OPTIONS = st.lists(
    st.sampled_from(["a", "b", "c", "prod", "staging", "dev eu", "ü"]), min_size=1, max_size=4, unique=True
)


@st.composite
def _literal(draw: st.DrawFn) -> Field:
    options = draw(_OPTIONS)
    tp = Literal[tuple(options)]  # type: ignore[valid-type]
    shape = draw(st.sampled_from(["single", "titled", "list", "set"]))
    if shape == "single":
        return Field(tp, {"type": "string", "enum": options})
    titles = {o: o.upper() for o in options}
    if shape == "titled":
        return Field(
            Annotated[tp, Titles(titles)],
            {"type": "string", "oneOf": [{"const": o, "title": titles[o]} for o in options]},
        )
    if shape == "list":
        return Field(list[tp], {"type": "array", "items": {"type": "string", "enum": options}})  # type: ignore[valid-type]
    return Field(set[tp], {"type": "array"}, lambda sent, got: got == set(sent))  # type: ignore[valid-type]


_PLAIN = st.sampled_from(
    [
        Field(bool, {"type": "boolean"}),
        Field(int, {"type": "integer"}),
        Field(float, {"type": "number"}),
        Field(str, {"type": "string"}),
        Field(EmailStr, {"type": "string", "format": "email"}, lambda sent, got: got.lower() == sent.lower()),
        Field(AnyUrl, {"type": "string", "format": "uri"}, _same_text),
        Field(dt.date, {"type": "string", "format": "date"}, lambda sent, got: got.isoformat() == sent),
        Field(dt.datetime, {"type": "string", "format": "date-time"}, _is(dt.datetime)),
        Field(Colour, {"type": "string", "enum": ["red", "green", "blue"]}, lambda sent, got: got is Colour(sent)),
        Field(
            list[Colour],
            {"type": "array", "items": {"type": "string", "enum": ["red", "green", "blue"]}},
            lambda sent, got: got == [Colour(v) for v in sent],
        ),
    ]
)

fields: st.SearchStrategy[Field] = st.one_of(_PLAIN, _bounded_int(), _bounded_float(), _bounded_str(), _literal())
"""A field type a form can ask."""

refused_fields = st.sampled_from(
    [
        dict[str, int],
        list[str],
        list[int],
        tuple[int, int],
        bytes,
        int | str,
        Nested,
        Literal[1, 2],
        SecretStr,
        Any,
        list[Nested],
        Annotated[str, PydanticField(ge=1)],
        Annotated[bool, PydanticField(min_length=1)],
        Annotated[int, PydanticField(min_length=2)],
        Annotated[int, PydanticField(ge=5, le=1)],
        Annotated[str, PydanticField(min_length=5, max_length=2)],
        Annotated[int, PydanticField(gt=0.5)],  # pydantic's own validator cannot be built
    ]
)
"""A field type a form cannot ask."""

Kind = Literal["pydantic", "dataclass", "typeddict"]
KINDS: tuple[Kind, ...] = ("pydantic", "dataclass", "typeddict")


def build(kind: Kind, name: str, annotations: dict[str, Any], optional: frozenset[str] = frozenset()) -> Any:
    """A type of `kind` with these fields; `optional` ones may be left out (`X | None = None`, `NotRequired`)."""
    if kind == "pydantic":
        spec = {f: ((tp | None, None) if f in optional else (tp, ...)) for f, tp in annotations.items()}
        return create_model(name, **spec)  # type: ignore[call-overload]
    if kind == "dataclass":
        required = [(f, tp) for f, tp in annotations.items() if f not in optional]
        left_out = [(f, tp | None, dataclasses.field(default=None)) for f, tp in annotations.items() if f in optional]
        return dataclasses.make_dataclass(name, [*required, *left_out])
    hints = {f: (NotRequired[tp] if f in optional else tp) for f, tp in annotations.items()}
    return TypedDict(name, hints)  # type: ignore[operator]


def answers_for(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Answers that fit a compiled property (see `strategies.fitting`)."""
    return fitting(prop)
