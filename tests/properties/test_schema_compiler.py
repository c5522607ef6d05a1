"""Properties of the schema compiler: whatever a server hands it, it gets a restricted form schema or a clear
`SchemaError`, never another exception, and what it compiles is what the spec allows and what was written."""

from __future__ import annotations

import json
from typing import Annotated, Any

from hypothesis import example, given, reject
from hypothesis import strategies as st
from pydantic import Field as PydanticField

from elicitkit import SchemaError
from elicitkit._schema import check_raw_schema, compile_schema
from elicitkit._schema.choices import choices_of
from elicitkit._schema.values import check_value
from tests.properties.models import KINDS, Field, build, fields, refused_fields
from tests.properties.strategies import JSON_VALUES, TEXT, json_values, schemas, wire_of

_KEYWORDS = [
    "type", "title", "description", "default", "minLength", "maxLength", "format", "enum", "enumNames",
    "oneOf", "anyOf", "const", "minimum", "maximum", "items", "minItems", "maxItems", "properties", "required",
]  # fmt: skip
_PLAUSIBLE = st.one_of(
    st.sampled_from(["string", "number", "integer", "boolean", "array", "object", "null", "email", "uri", "date"]),
    st.sampled_from([0, 1, -1, 2.5, float("nan"), float("inf"), -float("inf"), True, 10**400, "", [], {}]),
    st.lists(TEXT, max_size=3),
    st.lists(st.fixed_dictionaries({"const": TEXT, "title": TEXT}), max_size=3),
    st.fixed_dictionaries({"type": st.just("string"), "enum": st.lists(TEXT, max_size=3)}),
    JSON_VALUES,
)
_LOOSE_PROPERTY = st.dictionaries(st.sampled_from(_KEYWORDS), _PLAUSIBLE, max_size=5)
_LOOSE_SCHEMA = st.fixed_dictionaries(
    {"type": st.sampled_from(["object", "object", "array", None])},
    optional={
        "properties": st.dictionaries(TEXT, _LOOSE_PROPERTY | JSON_VALUES, max_size=4) | JSON_VALUES,
        "required": st.lists(TEXT, max_size=3) | JSON_VALUES,
        "title": TEXT | JSON_VALUES,
        "$schema": TEXT | JSON_VALUES,
        "additionalProperties": st.booleans(),
    },
)

_TYPES = {"string", "number", "integer", "boolean", "array"}
_ALLOWED = {
    "string": {"minLength", "maxLength", "format", "enum", "oneOf"},
    "number": {"minimum", "maximum"},
    "integer": {"minimum", "maximum"},
    "boolean": set(),
    "array": {"items", "minItems", "maxItems"},
}


def assert_restricted(wire: dict[str, Any]) -> None:
    """`wire` is MCP's restricted form schema: a flat object of primitive properties, every default fitting."""
    assert set(wire) <= {"type", "properties", "required"}
    assert wire["type"] == "object"
    assert set(wire.get("required", [])) <= set(wire["properties"])
    # What goes to a client is JSON: no NaN or infinity (which `json` writes but no JSON parser reads).
    json.dumps(wire, allow_nan=False)
    for prop in wire["properties"].values():
        kind = prop["type"]
        assert kind in _TYPES
        assert set(prop) <= {"type", "title", "description", "default"} | _ALLOWED[kind]
        for key in ("title", "description"):
            assert isinstance(prop.get(key, ""), str)
        for key in ("minLength", "maxLength", "minItems", "maxItems"):
            assert key not in prop or (type(prop[key]) is int and prop[key] >= 0)
        for key in ("minimum", "maximum"):
            assert key not in prop or type(prop[key]) in (int, float)
        if kind == "array":
            items = prop["items"]
            assert items.keys() == {"type", "enum"} or items.keys() == {"anyOf"}
        options = choices_of(prop["items"] if kind == "array" else prop)
        if options is not None:
            assert options and all(isinstance(o, str) for o in options)
        if "default" in prop:
            assert check_value(prop, prop["default"]) == []


def compiled_or_refused(schema: Any) -> dict[str, Any] | None:
    """The wire form of `schema`, or None when it is refused with a `SchemaError` (any other exception fails)."""
    try:
        return compile_schema(schema).wire
    except SchemaError as exc:
        assert str(exc)
        return None


@given(JSON_VALUES | _LOOSE_SCHEMA)
@example({"type": "object", "properties": {"n": {"type": "number", "minimum": float("nan")}}})
@example({"type": "object", "properties": {"n": {"type": "integer", "maximum": float("inf")}}})
@example({"type": "object", "properties": {"n": {"type": "integer", "minimum": 10**400}}})
@example({"type": "object", "properties": {"s": {"type": "string", "enum": ["a", "a"]}}})
def test_any_json_value_as_a_raw_schema_compiles_to_a_restricted_schema_or_is_refused(schema: Any) -> None:
    if not isinstance(schema, dict):
        return
    wire = compiled_or_refused(schema)
    if wire is None:
        return
    assert_restricted(wire)
    # Stable: what compiled compiles again to itself, as read and as sent.
    form = compile_schema(schema)
    assert check_raw_schema(wire) == wire
    assert check_raw_schema(form.requested()) == wire


@given(schemas(min_fields=0))
def test_a_valid_restricted_schema_compiles_to_what_was_written(schema: dict[str, Any]) -> None:
    form = compile_schema(schema)
    assert_restricted(form.wire)
    assert form.wire["properties"] == {name: wire_of(prop) for name, prop in schema["properties"].items()}
    assert form.required == schema.get("required", [])
    sent = form.requested()
    assert set(sent["properties"]) == set(schema["properties"])
    for name, prop in schema["properties"].items():
        assert sent["properties"][name] == {"type": "string", **prop}  # as written; `oneOf` alone implies text
    assert compile_schema(sent).wire == form.wire


@given(st.sampled_from(KINDS), st.lists(fields, min_size=1, max_size=5), st.data())
def test_a_type_built_from_fields_a_form_can_ask_compiles_to_their_properties(
    kind: str, drawn: list[Field], data: st.DataObject
) -> None:
    names = [f"f{i}" for i in range(len(drawn))]
    optional = frozenset(data.draw(st.lists(st.sampled_from(names), unique=True)))
    tp = build(kind, "Drawn", dict(zip(names, (f.annotation for f in drawn), strict=True)), optional)  # type: ignore[arg-type]
    form = compile_schema(tp)
    assert_restricted(form.wire)
    assert form.required == [n for n in names if n not in optional]
    for name, field in zip(names, drawn, strict=True):
        prop = form.properties[name]
        assert {k: unordered(prop.get(k)) for k in field.expects} == unordered(field.expects), (name, prop)


def unordered(value: Any) -> Any:
    """`value` with its lists read as sets: choices come in the order of the `Literal` typing hands back, and
    typing caches `Literal["a", "b"] | None` and `list[Literal["a", "b"]]` as equal to those of `["b", "a"]`."""
    if isinstance(value, dict):
        return {k: unordered(v) for k, v in value.items()}
    if isinstance(value, list):
        return sorted(json.dumps(unordered(v), sort_keys=True) for v in value)
    return value


@given(
    st.sampled_from(KINDS),
    st.lists(fields, max_size=3),
    refused_fields,
    st.integers(0, 3),
)
def test_a_type_with_a_field_a_form_cannot_ask_is_refused_naming_that_field(
    kind: str, good: list[Field], bad: Any, at: int
) -> None:
    annotations: list[Any] = [f.annotation for f in good]
    at = min(at, len(annotations))
    annotations.insert(at, bad)
    names = [f"f{i}" for i in range(len(annotations))]
    try:
        tp = build(kind, "Refused", dict(zip(names, annotations, strict=True)))  # type: ignore[arg-type]
    except Exception:  # pydantic refused to build the type itself: nothing to ask with
        reject()
    try:
        compile_schema(tp)
    except SchemaError as exc:
        assert f"f{at}" in str(exc), str(exc)
    else:
        raise AssertionError(f"{bad!r} was compiled")


@given(json_values(st.none() | st.booleans() | st.integers() | TEXT))
def test_anything_else_given_as_a_schema_is_refused_as_a_schema_error(value: Any) -> None:
    if isinstance(value, dict):
        return
    try:
        compile_schema(value)
    except SchemaError as exc:
        assert "Cannot ask with" in str(exc)
    else:
        raise AssertionError(f"{value!r} was compiled")


@given(st.sampled_from(["name", "title", "description", "choice", "choice title", "default", "$schema"]))
def test_text_holding_a_lone_surrogate_anywhere_in_a_schema_is_refused_as_a_schema_error(where: str) -> None:
    bad = "ok \ud800"
    prop: dict[str, Any] = {"type": "string"}
    name = bad if where == "name" else "field"
    schema: dict[str, Any] = {"type": "object", "properties": {name: prop}}
    if where in ("title", "description", "default"):
        prop[where] = bad
    elif where == "choice":
        prop["enum"] = ["a", bad]
    elif where == "choice title":
        prop["oneOf"] = [{"const": "a", "title": bad}]
    elif where == "$schema":
        schema["$schema"] = bad
    try:
        compile_schema(schema)
    except SchemaError as exc:
        assert "lone surrogate" in str(exc)
    else:
        raise AssertionError("compiled")


def test_a_dataclass_or_typeddict_pydantic_cannot_validate_is_refused_as_a_schema_error() -> None:
    # A pydantic model with such a field cannot even be defined; a dataclass or a TypedDict can.
    for kind in ("dataclass", "typeddict"):
        tp = build(kind, "Odd", {"count": Annotated[int, PydanticField(gt=0.5)]})
        try:
            compile_schema(tp)
        except SchemaError as exc:
            assert "Cannot ask with 'Odd'" in str(exc) and "count" in str(exc)
        else:
            raise AssertionError("compiled")
