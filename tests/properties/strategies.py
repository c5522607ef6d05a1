"""Strategies the property tests share: JSON values, restricted form schemas, and answers that fit or break them.

A restricted schema is drawn as its author writes it (`{type: object, properties, required}` with every
property shape of the spec: free, formatted and bounded text, numbers and integers with bounds, booleans, the
five choice shapes, defaults). `fitting(prop)` draws a value that breaks none of a property's rules;
`breaking(prop)` one that breaks exactly one rule of it.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from hypothesis import strategies as st

from elicitkit._schema.choices import choices_of

__all__ = [
    "DEEP",
    "JSON_VALUES",
    "TEXT",
    "breaking",
    "field_names",
    "fitting",
    "json_values",
    "properties",
    "schemas",
]

# Any code point, lone surrogates included: what a JSON string may decode to (`"\ud800"` is valid JSON).
TEXT = st.text(st.characters(exclude_categories=()), max_size=30)

JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63).map(lambda n: n**3)  # past every machine integer, past float range too
    | st.floats()  # NaN and the infinities included: Python's json reads them
    | TEXT
)


def json_values(scalars: st.SearchStrategy[Any] = JSON_SCALARS) -> st.SearchStrategy[Any]:
    """Any value Python's `json` can read: objects, arrays, text, numbers of any size, NaN and infinities."""
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
        max_leaves=12,
    )


JSON_VALUES = json_values()


def _nested(depth: int) -> Any:
    value: Any = "bottom"
    for i in range(depth):
        value = [value] if i % 2 else {"v": value}
    return value


DEEP = _nested(5_000)
"""A value nested 5,000 levels deep (deeper than Python's default recursion limit)."""

field_names = st.text(min_size=1, max_size=20).filter(lambda name: not name.startswith("ek:"))
labels = st.text(max_size=30)
_choices = st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=6, unique=True)


def _with_labels(draw: st.DrawFn, prop: dict[str, Any]) -> dict[str, Any]:
    if draw(st.booleans()):
        prop["title"] = draw(labels)
    if draw(st.booleans()):
        prop["description"] = draw(labels)
    return prop


@st.composite
def _text_property(draw: st.DrawFn) -> dict[str, Any]:
    shape = draw(st.sampled_from(["free", "format", "enum", "oneOf", "untyped oneOf", "enumNames"]))
    if shape == "free":
        prop: dict[str, Any] = {"type": "string"}
        low = draw(st.none() | st.integers(0, 20))
        high = draw(st.none() | st.integers(low or 0, 40))
        if low is not None:
            prop["minLength"] = low
        if high is not None:
            prop["maxLength"] = high
    elif shape == "format":
        prop = {"type": "string", "format": draw(st.sampled_from(["email", "uri", "date", "date-time"]))}
    elif shape == "enum":
        prop = {"type": "string", "enum": draw(_choices)}
    elif shape == "enumNames":
        values = draw(_choices)
        prop = {
            "type": "string",
            "enum": values,
            "enumNames": draw(st.lists(labels, min_size=len(values), max_size=len(values))),
        }
    else:
        values = draw(_choices)
        prop = {"oneOf": [{"const": v, "title": draw(labels)} for v in values]}
        if shape == "oneOf":
            prop = {"type": "string", **prop}
    return prop


@st.composite
def _number_property(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["integer", "number"]))
    prop: dict[str, Any] = {"type": kind}
    low = draw(st.none() | st.integers(-(10**6), 10**6))
    high = draw(st.none() | st.integers(low if low is not None else -(10**6), 10**6 + 1))
    # Bounds may be fractional, for integers too, as long as some whole number lies between them.
    if low is not None:
        prop["minimum"] = low - draw(st.sampled_from([0, 0.5]))
    if high is not None:
        prop["maximum"] = high + draw(st.sampled_from([0, 0.25]))
    return prop


@st.composite
def _multi_property(draw: st.DrawFn) -> dict[str, Any]:
    values = draw(_choices)
    if draw(st.booleans()):
        items: dict[str, Any] = {"type": "string", "enum": values}
    else:
        items = {"anyOf": [{"const": v, "title": draw(labels)} for v in values]}
    prop: dict[str, Any] = {"type": "array", "items": items}
    low = draw(st.none() | st.integers(0, len(values)))
    high = draw(st.none() | st.integers(low or 0, len(values) + 2))
    if low is not None:
        prop["minItems"] = low
    if high is not None:
        prop["maxItems"] = high
    return prop


@st.composite
def properties(draw: st.DrawFn) -> dict[str, Any]:
    """One property of a restricted schema, as an author writes it, sometimes with a default that fits it."""
    prop = draw(st.one_of(_text_property(), _number_property(), st.just({"type": "boolean"}), _multi_property()))
    prop = _with_labels(draw, prop)
    if draw(st.booleans()):
        prop["default"] = draw(fitting(wire_of(prop)))
    return prop


@st.composite
def schemas(draw: st.DrawFn, min_fields: int = 1, max_fields: int = 5) -> dict[str, Any]:
    """A restricted schema as an author writes it."""
    props = draw(st.dictionaries(field_names, properties(), min_size=min_fields, max_size=max_fields))
    schema: dict[str, Any] = {"type": "object", "properties": props}
    required = draw(st.lists(st.sampled_from(sorted(props)), unique=True)) if props else []
    if bool(required) or draw(st.booleans()):
        schema["required"] = required
    if draw(st.booleans()):
        schema["title"] = draw(labels)
    return schema


def wire_of(prop: dict[str, Any]) -> dict[str, Any]:
    """A property as validation reads it: `type` implied by `oneOf`, legacy `enumNames` as `oneOf`."""
    out = {"type": "string", **prop}
    if "enumNames" in out:
        out["oneOf"] = [{"const": v, "title": t} for v, t in zip(out.pop("enum"), out.pop("enumNames"), strict=True)]
    return out


def _whole_range(prop: dict[str, Any]) -> tuple[int | None, int | None]:
    low, high = prop.get("minimum"), prop.get("maximum")
    return (None if low is None else math.ceil(low)), (None if high is None else math.floor(high))


_FORMATS: dict[str, st.SearchStrategy[str]] = {
    "email": st.from_regex(r"[a-z]{1,8}(\.[a-z]{1,8})?@[a-z]{1,8}\.(com|org|net)", fullmatch=True),
    "uri": st.from_regex(r"https://[a-z]{1,10}\.example(/[a-z0-9]{1,8}){0,2}", fullmatch=True),
    "date": st.dates().map(dt.date.isoformat),
    "date-time": st.datetimes(timezones=st.just(dt.UTC)).map(dt.datetime.isoformat),
}
_NOT_FORMATS: dict[str, st.SearchStrategy[str]] = {
    "email": st.sampled_from(["", "alice", "alice@", "@example.com", "alice@example", "a b@example.com"]),
    "uri": st.sampled_from(["", "example.com", "://x", "http:", "1http://x", "https://a b"]),
    "date": st.sampled_from(["", "2024-13-01", "2024-02-30", "24-01-01", "2024/01/01", "yesterday"]),
    "date-time": st.sampled_from(["", "2024-01-01", "2024-01-01T10:00:00", "2024-01-01T25:00:00Z", "now"]),
}


def fitting(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A value that breaks none of `prop`'s rules (`prop` in wire form)."""
    kind = prop["type"]
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        low, high = _whole_range(prop)
        return st.integers(low, high)
    if kind == "number":
        floats = st.floats(prop.get("minimum"), prop.get("maximum"), allow_nan=False, allow_infinity=False)
        low, high = _whole_range(prop)
        return floats if low is not None and high is not None and low > high else floats | st.integers(low, high)
    if kind == "array":
        options = choices_of(prop["items"]) or []
        return st.lists(
            st.sampled_from(options),
            unique=True,
            min_size=prop.get("minItems", 0),
            max_size=min(prop.get("maxItems", len(options)), len(options)),
        )
    choices = choices_of(prop)
    if choices is not None:
        return st.sampled_from(choices)
    if "format" in prop:
        return _FORMATS[prop["format"]]
    return st.text(min_size=prop.get("minLength", 0), max_size=prop.get("maxLength", 40))


def breaking(prop: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A value that breaks exactly one kind of rule of `prop` (`prop` in wire form)."""
    kind = prop["type"]
    wrong_type: dict[str, st.SearchStrategy[Any]] = {
        "boolean": st.sampled_from([0, 1, "true", None, [True]]),
        "integer": st.sampled_from(["1", None, True, [1], {"n": 1}]),
        "number": st.sampled_from(["1.5", None, False, [1.5]]),
        "array": st.sampled_from(["a", None, [1], {"a": True}]),
        "string": st.sampled_from([1, None, True, ["a"], {"a": "b"}]),
    }
    ways = [wrong_type[kind]]
    if kind in ("integer", "number"):
        ways.append(st.sampled_from([math.nan, math.inf, -math.inf]))
        low, high = _whole_range(prop)
        if low is not None:
            ways.append(st.integers(max_value=low - 1))
        if high is not None:
            ways.append(st.integers(min_value=high + 1))
        if kind == "integer":
            ways.append(st.sampled_from([n + 0.5 for n in (low, high, 0) if n is not None]))
    elif kind == "array":
        options = choices_of(prop["items"]) or []
        ways.append(st.text(min_size=1, max_size=12).filter(lambda v: v not in options).map(lambda v: [v]))
        if prop.get("maxItems", 2) >= 2:
            ways.append(st.sampled_from(options).map(lambda o: [o, o]))
        if prop.get("minItems", 0) > 0:
            ways.append(st.just(options[: prop["minItems"] - 1]))
        if prop.get("maxItems", len(options)) < len(options):
            ways.append(st.just(options[: prop["maxItems"] + 1]))
    elif choices_of(prop) is not None:
        options = choices_of(prop) or []
        ways.append(st.text(max_size=12).filter(lambda v: v not in options))
    elif "format" in prop:
        ways.append(_NOT_FORMATS[prop["format"]])
    else:
        ways.append(st.just("\ud800" + "a" * max(prop.get("minLength", 0) - 1, 0)))  # no Unicode text
        if prop.get("minLength", 0) > 0:
            ways.append(st.text(min_size=prop["minLength"] - 1, max_size=prop["minLength"] - 1))
        if "maxLength" in prop:
            ways.append(st.text(min_size=prop["maxLength"] + 1, max_size=prop["maxLength"] + 3))
    return st.one_of(ways)
