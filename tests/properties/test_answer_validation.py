"""Properties of answer validation: an answer that fits its question is taken (and becomes the typed answer),
one that breaks a rule is refused naming the field, and nothing a client sends makes validation raise anything
but `InvalidElicitationContent`."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from elicitkit import InvalidElicitationContent
from elicitkit._errors import Problem
from elicitkit._schema import check_content, compile_schema, problems_in, to_data
from elicitkit._schema.compile import FormSchema
from tests.properties.models import KINDS, Field, build, fields
from tests.properties.strategies import DEEP, JSON_VALUES, TEXT, breaking, fitting, schemas

_ACTIONS = st.sampled_from(["accept", "decline", "cancel"]) | TEXT


@st.composite
def fitting_answers(draw: st.DrawFn, form: FormSchema) -> dict[str, Any]:
    """Every required field, and some of the others, each with a value that fits."""
    answer = {}
    for name, prop in form.properties.items():
        if name in form.required or draw(st.booleans()):
            answer[name] = draw(fitting(prop))
    return answer


@given(schemas(), st.data())
@settings(max_examples=300)
def test_an_answer_that_fits_a_raw_schema_is_taken_with_the_defaults_filled_in(
    schema: dict[str, Any], data: st.DataObject
) -> None:
    form = compile_schema(schema)
    answer = data.draw(fitting_answers(form))
    assert check_content(form, answer) == []
    assert problems_in(form, "accept", answer) is None
    taken = to_data(form, answer)
    defaults = {name: prop["default"] for name, prop in form.properties.items() if "default" in prop}
    assert taken == {**defaults, **answer}


@given(schemas(), st.data())
@settings(max_examples=300)
def test_an_answer_breaking_one_rule_of_one_field_is_refused_naming_that_field(
    schema: dict[str, Any], data: st.DataObject
) -> None:
    form = compile_schema(schema)
    answer = data.draw(fitting_answers(form))
    field = data.draw(st.sampled_from(sorted(form.properties)))
    answer[field] = data.draw(breaking(form.properties[field]))
    problems = check_content(form, answer)
    assert problems, (field, answer[field])
    assert {p.dotted for p in problems} == {field}
    assert all(p.message for p in problems)
    refused = problems_in(form, "accept", answer)
    assert refused is not None and refused.problems == problems
    assert problems_in(form, "decline", answer) is None  # only an accept carries content


@given(schemas(), st.data())
def test_a_missing_required_field_or_an_unknown_one_is_refused_naming_it(
    schema: dict[str, Any], data: st.DataObject
) -> None:
    form = compile_schema(schema)
    answer = data.draw(fitting_answers(form))
    if bool(form.required) and data.draw(st.booleans()):
        field = data.draw(st.sampled_from(form.required))
        del answer[field]
        expected = Problem(field, "required field is missing")
    else:
        field = data.draw(TEXT.filter(lambda name: name not in form.properties))
        answer[field] = data.draw(JSON_VALUES)
        expected = Problem(field, "unknown field")
    assert check_content(form, answer) == [expected]


@given(schemas(), JSON_VALUES, _ACTIONS)
@settings(max_examples=300)
@example({"type": "object", "properties": {"n": {"type": "number"}}}, {"n": math.nan}, "accept")
@example({"type": "object", "properties": {"n": {"type": "integer", "maximum": 5}}}, {"n": math.inf}, "accept")
@example({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}, {"n": -(10**400)}, "accept")
@example({"type": "object", "properties": {"n": {"type": "number", "maximum": 1.5}}}, {"n": 10**400}, "accept")
@example({"type": "object", "properties": {"s": {"type": "string", "maxLength": 3}}}, {"s": "\ud800"}, "accept")
def test_any_json_answer_is_taken_or_refused_with_the_problems_never_another_error(
    schema: dict[str, Any], answer: Any, action: str
) -> None:
    form = compile_schema(schema)
    problems = check_content(form, answer)
    assert all(isinstance(p, Problem) and p.message for p in problems)
    refused = problems_in(form, action, answer)
    if action != "accept":
        assert refused is None
    elif problems:
        assert refused is not None and refused.problems == problems
    try:
        to_data(form, answer)
    except InvalidElicitationContent as exc:
        assert exc.problems == problems
    else:
        assert problems == []


def test_an_answer_nested_deeper_than_python_recurses_is_refused_naming_the_field() -> None:
    # Not a hypothesis example: hypothesis prints its examples, and printing this one recurses too deep.
    text = compile_schema({"type": "object", "properties": {"s": {"type": "string"}}})
    multi = compile_schema(
        {"type": "object", "properties": {"s": {"type": "array", "items": {"enum": ["a"], "type": "string"}}}}
    )
    for form, answer in ((text, {"s": DEEP}), (multi, {"s": [DEEP]}), (text, DEEP)):
        refused = problems_in(form, "accept", answer)
        assert refused is not None
        assert [p.dotted for p in refused.problems] == (["s"] if answer is not DEEP else [""])


@given(st.sampled_from(KINDS), st.lists(fields, min_size=1, max_size=5), st.data())
@settings(max_examples=300)
def test_an_answer_that_fits_a_typed_schema_becomes_the_typed_answer(
    kind: str, drawn: list[Field], data: st.DataObject
) -> None:
    names = [f"f{i}" for i in range(len(drawn))]
    optional = frozenset(data.draw(st.lists(st.sampled_from(names), unique=True)))
    tp = build(kind, "Typed", dict(zip(names, (f.annotation for f in drawn), strict=True)), optional)  # type: ignore[arg-type]
    form = compile_schema(tp)
    answer = data.draw(fitting_answers(form))
    typed = to_data(form, answer)
    read = typed.get if isinstance(typed, dict) else lambda name: getattr(typed, name)
    for name, field in zip(names, drawn, strict=True):
        if name in answer:
            assert field.check(answer[name], read(name)), (name, answer[name], read(name))
        else:
            assert name in optional and read(name) is None


@given(st.sampled_from(KINDS), st.lists(fields, min_size=1, max_size=4), st.data())
@settings(max_examples=200)
def test_an_answer_breaking_a_typed_schema_is_refused_naming_the_field(
    kind: str, drawn: list[Field], data: st.DataObject
) -> None:
    names = [f"f{i}" for i in range(len(drawn))]
    tp = build(kind, "Typed", dict(zip(names, (f.annotation for f in drawn), strict=True)))  # type: ignore[arg-type]
    form = compile_schema(tp)
    answer = data.draw(fitting_answers(form))
    field = data.draw(st.sampled_from(names))
    answer[field] = data.draw(breaking(form.properties[field]))
    try:
        to_data(form, answer)
    except InvalidElicitationContent as exc:
        assert exc.problems and {p.dotted for p in exc.problems} == {field}
    else:
        raise AssertionError(f"{answer[field]!r} was taken for {form.properties[field]}")


class Note(BaseModel):
    text: str


def test_text_holding_a_lone_surrogate_is_refused_alike_for_a_raw_and_a_typed_schema() -> None:
    # `json.loads` makes one of `"\ud800"`: a channel's callback may carry it, no typed answer or reply can.
    raw = compile_schema({"type": "object", "properties": {"text": {"type": "string"}}})
    for form in (raw, compile_schema(Note)):
        refused = problems_in(form, "accept", {"text": "ok \ud800"})
        assert refused is not None
        assert refused.problems == [Problem("text", "must be Unicode text (it holds a lone surrogate)")]
        assert problems_in(form, "accept", {"text": "ok \U0001f600"}) is None
