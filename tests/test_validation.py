"""Checking an accepted answer against its question, and building the typed value."""

from __future__ import annotations

import datetime as dt
import enum
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NotRequired

import pytest
from pydantic import AnyUrl, BaseModel, EmailStr, Field, field_validator
from typing_extensions import TypedDict

from elicitkit._errors import InvalidElicitationContent, Problem
from elicitkit._schema.compile import Titles, compile_schema
from elicitkit._schema.validate import check_content, to_data
from elicitkit._schema.values import check_value, fits


class Color(enum.StrEnum):
    RED = "red"
    BLUE = "blue"


class Signup(BaseModel):
    name: str = Field(min_length=2, max_length=10)
    age: int = Field(ge=18, le=99)
    ratio: float = 0.5
    agree: bool
    color: Color = Color.RED
    tier: Annotated[Literal["free", "pro"], Titles(free="Free", pro="Pro")] = "free"
    tags: set[Literal["a", "b", "c"]] = Field(min_length=1, max_length=2)
    email: EmailStr | None = None
    site: AnyUrl | None = None
    born: dt.date | None = None
    seen: dt.datetime | None = None


VALID: dict[str, Any] = {"name": "Ada", "age": 36, "agree": True, "tags": ["a"]}
SECRET = "s3cr3t-value"


def problems(changes: dict[str, Any], schema: Any = Signup) -> list[Problem]:
    """The problems with VALID updated by `changes` (a value of `...` removes the key)."""
    content = {**VALID, **changes}
    return check_content(compile_schema(schema), {k: v for k, v in content.items() if v is not ...})


# --- valid content ----------------------------------------------------------------------------


def test_valid_content_has_no_problems() -> None:
    assert problems({}) == []


def test_valid_content_builds_the_model_with_its_defaults() -> None:
    content = {**VALID, "born": "1815-12-10", "seen": "2025-11-25T09:30:00Z", "color": "blue"}
    assert to_data(compile_schema(Signup), content) == Signup(
        name="Ada",
        age=36,
        agree=True,
        tags={"a"},
        born=dt.date(1815, 12, 10),
        seen=dt.datetime(2025, 11, 25, 9, 30, tzinfo=dt.UTC),
        color=Color.BLUE,
    )


def test_valid_content_builds_a_dataclass() -> None:
    @dataclass
    class Ticket:
        title: str
        urgent: bool = False

    assert to_data(compile_schema(Ticket), {"title": "Fix"}) == Ticket(title="Fix")


def test_valid_content_builds_a_typed_dict_leaving_not_required_keys_out() -> None:
    class Survey(TypedDict):
        score: int
        comment: NotRequired[str]

    assert to_data(compile_schema(Survey), {"score": 4}) == {"score": 4}


def test_content_is_read_by_model_alias() -> None:
    class Account(BaseModel):
        user_name: str = Field(alias="userName")

    assert to_data(compile_schema(Account), {"userName": "ada"}).user_name == "ada"


def test_a_missing_optional_field_without_default_becomes_none() -> None:
    class Contact(BaseModel):
        name: str
        fax: str | None

    assert to_data(compile_schema(Contact), {"name": "Ada"}) == Contact(name="Ada", fax=None)


def test_a_missing_optional_dataclass_field_without_default_becomes_none() -> None:
    @dataclass
    class Contact:
        fax: int | None

    assert to_data(compile_schema(Contact), {}) == Contact(fax=None)


def test_raw_schema_data_is_the_content_with_defaults_filled() -> None:
    raw = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "size": {"type": "string", "enum": ["s", "l"], "default": "s"},
            "count": {"type": "integer", "default": 1},
        },
    }
    assert to_data(compile_schema(raw), {"name": "Ada", "count": 3}) == {"name": "Ada", "size": "s", "count": 3}


def test_a_whole_float_is_accepted_for_an_integer_and_an_int_for_a_number() -> None:
    assert problems({"age": 40.0, "ratio": 1}) == []


# --- one problem of each kind -----------------------------------------------------------------


def test_text_of_the_wrong_type_is_reported() -> None:
    assert problems({"name": 12}) == [Problem("name", "must be text")]


def test_a_number_out_of_range_is_reported() -> None:
    assert problems({"age": 120}) == [Problem("age", "must be at most 99")]
    assert problems({"age": 17}) == [Problem("age", "must be at least 18")]


def test_text_below_min_length_is_reported() -> None:
    assert problems({"name": "A"}) == [Problem("name", "must be at least 2 characters")]


def test_text_above_max_length_is_reported() -> None:
    assert problems({"name": "A" * 11}) == [Problem("name", "must be at most 10 characters")]


def test_an_unknown_enum_value_is_reported() -> None:
    assert problems({"color": "green"}) == [Problem("color", "must be one of red, blue")]


def test_an_unknown_titled_enum_value_is_reported() -> None:
    assert problems({"tier": "gold"}) == [Problem("tier", "must be one of free, pro")]


def test_an_unknown_multi_select_choice_is_reported() -> None:
    assert problems({"tags": ["z"]}) == [Problem("tags", "every choice must be one of a, b, c")]


def test_a_repeated_multi_select_choice_is_reported() -> None:
    assert problems({"tags": ["a", "a"]}) == [Problem("tags", "must not repeat a choice")]


def test_too_few_or_too_many_choices_are_reported() -> None:
    assert problems({"tags": []}) == [Problem("tags", "must have at least 1 choice")]
    assert problems({"tags": ["a", "b", "c"]}) == [Problem("tags", "must have at most 2 choices")]


def test_a_multi_select_that_is_not_a_list_is_reported() -> None:
    assert problems({"tags": "a"}) == [Problem("tags", "must be a list of choices")]


def test_a_bad_email_is_reported() -> None:
    assert problems({"email": "not-an-email"}) == [Problem("email", "must be a valid email")]


def test_a_bad_uri_is_reported() -> None:
    assert problems({"site": "not a uri"}) == [Problem("site", "must be a valid uri")]


def test_a_bad_or_impossible_date_is_reported() -> None:
    assert problems({"born": "10/12/1815"}) == [Problem("born", "must be a valid date")]
    assert problems({"born": "2025-02-30"}) == [Problem("born", "must be a valid date")]


def test_a_bad_date_time_is_reported() -> None:
    assert problems({"seen": "yesterday at noon"}) == [Problem("seen", "must be a valid date-time")]


def test_a_missing_required_field_is_reported() -> None:
    assert problems({"agree": ...}) == [Problem("agree", "required field is missing")]


def test_an_unknown_key_is_reported() -> None:
    assert problems({"extra": 1}) == [Problem("extra", "unknown field")]


def test_content_that_is_not_an_object_is_reported_for_the_whole_answer() -> None:
    assert check_content(compile_schema(Signup), ["Ada"]) == [
        Problem("", "an accepted answer must carry an object of field values")
    ]


def test_an_integer_given_a_fraction_is_reported() -> None:
    assert problems({"age": 2.5}) == [Problem("age", "must be a whole number")]


def test_a_bool_given_for_a_number_is_reported() -> None:
    assert problems({"ratio": True}) == [Problem("ratio", "must be a number")]


def test_text_given_for_a_bool_is_reported() -> None:
    assert problems({"agree": "yes"}) == [Problem("agree", "must be true or false")]


def test_raw_schema_content_is_checked_against_legacy_enum_names() -> None:
    raw = {"type": "object", "properties": {"env": {"type": "string", "enum": ["a"], "enumNames": ["A"]}}}
    assert check_content(compile_schema(raw), {"env": "b"}) == [Problem("env", "must be one of a")]


# --- reporting --------------------------------------------------------------------------------


def test_every_problem_is_collected_at_once() -> None:
    found = problems({"name": "A", "age": 2.5, "agree": ..., "tags": ["a", "a"], "email": "x", "extra": 1})
    assert set(found) == {
        Problem("extra", "unknown field"),
        Problem("agree", "required field is missing"),
        Problem("name", "must be at least 2 characters"),
        Problem("age", "must be a whole number"),
        Problem("tags", "must not repeat a choice"),
        Problem("email", "must be a valid email"),
    }


def test_invalid_content_raises_with_every_problem() -> None:
    with pytest.raises(InvalidElicitationContent) as caught:
        to_data(compile_schema(Signup), {"name": 1, "age": 0, "agree": True, "tags": ["a"]})
    assert caught.value.problems == [Problem("name", "must be text"), Problem("age", "must be at least 18")]
    assert "name: must be text" in str(caught.value)


def test_messages_never_contain_the_submitted_value() -> None:
    content = {
        "name": SECRET,
        "age": SECRET,
        "agree": SECRET,
        "color": SECRET,
        "tags": [SECRET],
        "email": SECRET,
        "site": SECRET,
        "born": SECRET,
        "seen": SECRET,
    }
    with pytest.raises(InvalidElicitationContent) as caught:
        to_data(compile_schema(Signup), content)
    assert len(caught.value.problems) == len(content)
    assert SECRET not in str(caught.value)


def test_a_model_validator_failure_becomes_a_problem_on_its_field() -> None:
    class Booking(BaseModel):
        code: str

        @field_validator("code")
        @classmethod
        def code_is_upper(cls, value: str) -> str:
            if not value.isupper():
                raise ValueError("must be upper case")
            return value

    with pytest.raises(InvalidElicitationContent) as caught:
        to_data(compile_schema(Booking), {"code": SECRET})
    [problem] = caught.value.problems
    assert problem.path == ["code"]
    assert problem.dotted == "code"
    assert "must be upper case" in problem.message
    assert SECRET not in str(caught.value)


def test_a_date_time_without_an_offset_is_refused() -> None:
    schema = compile_schema({"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}})
    assert check_content(schema, {"at": "2026-11-21T10:00:00"}) == [Problem("at", "must be a valid date-time")]
    assert check_content(schema, {"at": "2026-11-21T10:00:00+01:00"}) == []


def test_a_format_validators_message_never_quotes_the_answer() -> None:
    class Contact(BaseModel):
        email: EmailStr

    with pytest.raises(InvalidElicitationContent) as info:
        to_data(compile_schema(Contact), {"email": "secret-name@reserved.invalid"})
    assert [(p.path, p.message) for p in info.value.problems] == [(["email"], "must be a valid email")]
    assert "secret-name" not in str(info.value)
    assert "reserved" not in str(info.value)


# --- the quick check answers that fit take -----------------------------------------------------

PROPS: list[dict[str, Any]] = [
    {"type": "boolean"},
    {"type": "string"},
    {"type": "string", "enum": ["red", "green"]},
    {"type": "string", "oneOf": [{"const": "eu", "title": "Europe"}, {"const": "us", "title": "US"}]},
    {"type": "string", "minLength": 2, "maxLength": 3},
    {"type": "string", "format": "email"},
    {"type": "integer", "minimum": 1, "maximum": 5},
    {"type": "number"},
    {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 1},
]
VALUES: list[Any] = [
    True,
    False,
    0,
    1,
    1.0,
    2.5,
    float("nan"),
    "",
    "red",
    "eu",
    "abc",
    "abcd",
    "a@b.co",
    "1",
    None,
    ["a"],
    ["a", "b"],
    ["a", "a"],
    {"k": "v"},
    ["red"],
]


@pytest.mark.parametrize("prop", PROPS, ids=lambda prop: "-".join(str(v) for v in prop.values())[:40])
def test_the_quick_check_agrees_with_the_full_one_on_every_value(prop: dict[str, Any]) -> None:
    """Answers that fit skip building messages: the quick test must say yes exactly when no rule is broken."""
    quick = fits(prop)
    for value in VALUES:
        assert quick(value) is (check_value(prop, value) == []), (prop, value)


def test_an_answer_breaking_a_rule_the_quick_check_looks_at_still_gets_every_problem() -> None:
    schema = compile_schema(Signup)
    assert check_content(schema, {**VALID}) == []  # the quick check is built and cached on the schema
    assert check_content(schema, {**VALID, "agree": 1, "extra": 2}) == [
        Problem("extra", "unknown field"),
        Problem("agree", "must be true or false"),
    ]
    assert check_content(schema, {k: v for k, v in VALID.items() if k != "name"}) == [
        Problem("name", "required field is missing")
    ]


def test_a_problems_path_is_a_list_and_its_dotted_form_one_string() -> None:
    assert Problem(["tags", 1], "must be one of a, b").path == ["tags", 1]
    assert Problem(["tags", 1], "must be one of a, b").dotted == "tags.1"
    assert Problem(["tags", 1], "must be one of a, b").field == "tags"
    assert Problem("a.b", "unknown field").path == ["a.b"]  # a string is one field's name, never split
    assert Problem("", "not an object").path == [] and Problem([], "x").dotted == ""
    assert Problem("age", "too old") == Problem(["age"], "too old")
    assert len({Problem("age", "too old"), Problem(["age"], "too old")}) == 1
    assert Problem(["age"], "must be a number").to_json() == {"path": ["age"], "message": "must be a number"}
    assert str(Problem(["tags", 1], "bad")) == "tags.1: bad"


def test_changing_the_list_a_problem_gave_does_not_change_the_problem() -> None:
    problem = Problem(["age"], "too old")
    problem.path.append("x")
    assert problem.path == ["age"]
