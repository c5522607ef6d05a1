"""What a person types at the terminal becomes the field's value, or a reason it cannot."""

from __future__ import annotations

from typing import Any

import pytest

from elicitkit._term.fields import hint, initial_text, parse_field

TITLED = {"type": "string", "oneOf": [{"const": "ops", "title": "Operations"}, {"const": "dev", "title": "Dev"}]}
MULTI = {"type": "array", "items": {"type": "string", "enum": ["lint", "unit", "e2e"]}, "minItems": 1}


@pytest.mark.parametrize(
    ("prop", "text", "value"),
    [
        ({"type": "string", "minLength": 2}, "Ada", "Ada"),
        ({"type": "integer", "minimum": 18}, "30", 30),
        ({"type": "number"}, "2.5", 2.5),
        ({"type": "boolean"}, "Y", True),
        ({"type": "boolean"}, "no", False),
        (TITLED, "2", "dev"),
        (TITLED, "Operations", "ops"),
        (TITLED, "dev", "dev"),
        (MULTI, "1, 3", ["lint", "e2e"]),
        (MULTI, "1 3", ["lint", "e2e"]),
        (MULTI, "LINT  e2e", ["lint", "e2e"]),
        (TITLED, "operations", "ops"),
        (TITLED, "DEV", "dev"),
        ({"type": "array", "items": {"anyOf": [{"const": "fs", "title": "Full stack"}]}}, "full stack", ["fs"]),
        ({"type": "string", "enum": ["a", "b"], "enumNames": ["Alpha", "Beta"]}, "Beta", "b"),
        ({"type": "string", "format": "date"}, "2026-11-23", "2026-11-23"),
    ],
)
def test_typed_text_becomes_the_fields_value(prop: dict[str, Any], text: str, value: Any) -> None:
    assert parse_field(prop, text, required=True) == (True, value)


@pytest.mark.parametrize(
    ("prop", "text", "reason"),
    [
        ({"type": "string", "minLength": 2}, "A", "at least 2 characters"),
        ({"type": "integer", "maximum": 99}, "120", "at most 99"),
        ({"type": "integer"}, "1.5", "whole number"),
        ({"type": "number"}, "many", "must be a number"),
        ({"type": "boolean"}, "maybe", "answer y or n"),
        (TITLED, "3", "choose 1-2"),
        (MULTI, "1,1", "must not repeat"),
        ({"type": "string", "format": "email"}, "not-an-address", "valid email"),
        ({"type": "string", "minLength": 1}, "   ", "required"),
        ({"type": "number"}, "nan", "finite"),
        ({"type": "number"}, "inf", "finite"),
    ],
)
def test_text_that_breaks_the_field_says_why_without_quoting_it(prop: dict[str, Any], text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason) as refused:
        parse_field(prop, text, required=True)
    assert text.strip() == "" or text not in str(refused.value)


def test_an_empty_optional_field_is_left_out() -> None:
    assert parse_field({"type": "string"}, "", required=False) == (False, None)
    assert parse_field({"type": "integer", "default": 3}, "", required=False) == (False, None)


def test_clearing_a_default_sends_the_empty_value_where_the_field_takes_one() -> None:
    assert parse_field({"type": "string", "default": "x"}, "", required=False) == (True, "")
    assert parse_field({**MULTI, "minItems": 0, "default": ["lint"]}, "", required=False) == (True, [])
    assert parse_field({"type": "array", "items": {"type": "string", "enum": ["a"]}}, "", required=True) == (True, [])


def test_large_integers_stay_exact_and_options_match_by_value_before_position() -> None:
    assert parse_field({"type": "integer"}, "12345678901234567890", required=True) == (True, 12345678901234567890)
    numbered = {"type": "string", "enum": ["5", "1"], "default": "1"}
    assert parse_field(numbered, initial_text(numbered), required=True) == (True, "1")
    assert parse_field(numbered, "2", required=True) == (True, "1")  # no option is "2": the second one


def test_defaults_are_prefilled_as_the_person_would_type_them() -> None:
    assert initial_text({"type": "boolean", "default": True}) == "y"
    assert initial_text({**MULTI, "default": ["lint", "unit"]}) == "lint, unit"
    assert initial_text({"type": "integer", "default": 30}) == "30"
    assert initial_text({"type": "string"}) == ""


def test_hints_name_the_kind_and_its_limits() -> None:
    assert hint({"type": "integer", "minimum": 18, "maximum": 99}) == "a whole number ≥ 18 ≤ 99"
    assert hint({"type": "string", "format": "email", "maxLength": 40}) == "an email address, at most 40 characters"
    assert hint(MULTI) == "numbers or names, e.g. 1,3, at least 1"
    assert hint({"type": "boolean", "default": True}) == "Y/n"
    assert hint({"type": "boolean", "default": False}) == "y/N"
    assert hint({"type": "boolean"}) == "y/n"
    assert hint(TITLED) == "choose one"
