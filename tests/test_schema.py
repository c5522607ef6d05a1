"""Python types and raw dicts -> MCP's restricted elicitation schema (SEP-1330 enums, SEP-1034 defaults)."""

from __future__ import annotations

import datetime as dt
import enum
import sys
import typing
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, NotRequired, Required

import pytest
from pydantic import AnyUrl, BaseModel, EmailStr, Field, HttpUrl, SecretStr, create_model
from typing_extensions import TypedDict

from elicitkit._errors import SchemaError
from elicitkit._schema.compile import FormSchema, Titles, compile_schema


class Color(enum.StrEnum):
    RED = "red"
    BLUE = "blue"


class Size(str, enum.Enum):  # noqa: UP042  -- the (str, Enum) spelling is the case under test
    SMALL = "s"
    LARGE = "l"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    street: str


def prop(annotation: Any, default: Any = ..., **field_kwargs: Any) -> dict[str, Any]:
    """The wire property of a one-field model `Form.x: annotation = Field(default, **field_kwargs)`."""
    model = create_model("Form", x=(annotation, Field(default, **field_kwargs)))
    return compile_schema(model).properties["x"]


def refusal(annotation: Any) -> str:
    """The SchemaError message for a one-field model `Form.x: annotation`; it must name the field."""
    with pytest.raises(SchemaError) as caught:
        prop(annotation)
    message = str(caught.value)
    assert "Form.x" in message
    return message


# --- primitives -------------------------------------------------------------------------------


def test_str_int_float_and_bool_become_primitive_properties() -> None:
    assert prop(str) == {"type": "string"}
    assert prop(int) == {"type": "integer"}
    assert prop(float) == {"type": "number"}
    assert prop(bool) == {"type": "boolean"}


def test_a_model_compiles_to_a_flat_object_with_its_required_fields() -> None:
    class Booking(BaseModel):
        name: str
        guests: int
        vip: bool = False

    assert compile_schema(Booking).wire == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "guests": {"type": "integer"},
            "vip": {"type": "boolean", "default": False},
        },
        "required": ["name", "guests"],
    }


def test_a_form_without_required_fields_has_no_required_key() -> None:
    class Prefs(BaseModel):
        theme: str = "dark"

    assert "required" not in compile_schema(Prefs).wire


# --- single select ----------------------------------------------------------------------------


def test_literal_becomes_an_untitled_single_select() -> None:
    assert prop(Literal["prod", "staging"]) == {"type": "string", "enum": ["prod", "staging"]}


def test_str_enum_becomes_a_single_select_of_its_values() -> None:
    assert prop(Color) == {"type": "string", "enum": ["red", "blue"]}


def test_str_mixin_enum_becomes_a_single_select_of_its_values() -> None:
    assert prop(Size) == {"type": "string", "enum": ["s", "l"]}


def test_titles_on_a_literal_make_a_titled_single_select() -> None:
    annotation = Annotated[Literal["prod", "staging"], Titles(prod="Production", staging="Staging")]
    assert prop(annotation) == {
        "type": "string",
        "oneOf": [{"const": "prod", "title": "Production"}, {"const": "staging", "title": "Staging"}],
    }


def test_titles_on_an_enum_are_keyed_by_member_value() -> None:
    assert prop(Annotated[Size, Titles(s="Small", l="Large")]) == {
        "type": "string",
        "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
    }


def test_titles_accept_a_mapping_for_values_that_are_not_identifiers() -> None:
    annotation = Annotated[Literal["prod-eu"], Titles({"prod-eu": "Production (EU)"})]
    assert prop(annotation)["oneOf"] == [{"const": "prod-eu", "title": "Production (EU)"}]


def test_an_untitled_option_falls_back_to_its_value_as_title() -> None:
    annotation = Annotated[Literal["a", "b"], Titles(a="Alpha")]
    assert prop(annotation)["oneOf"] == [{"const": "a", "title": "Alpha"}, {"const": "b", "title": "b"}]


# --- multi select -----------------------------------------------------------------------------


def test_list_of_literal_becomes_an_untitled_multi_select() -> None:
    assert prop(list[Literal["x", "y"]]) == {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}}


def test_list_of_enum_becomes_a_multi_select_of_values() -> None:
    assert prop(list[Color]) == {"type": "array", "items": {"type": "string", "enum": ["red", "blue"]}}


def test_set_of_enum_becomes_a_multi_select_of_values() -> None:
    assert prop(set[Size]) == {"type": "array", "items": {"type": "string", "enum": ["s", "l"]}}


def test_titles_on_a_multi_select_make_items_any_of() -> None:
    assert prop(Annotated[list[Color], Titles(red="Red", blue="Blue")]) == {
        "type": "array",
        "items": {"anyOf": [{"const": "red", "title": "Red"}, {"const": "blue", "title": "Blue"}]},
    }


def test_length_limits_on_a_list_become_min_and_max_items() -> None:
    assert prop(list[Color], min_length=1, max_length=2) == {
        "type": "array",
        "items": {"type": "string", "enum": ["red", "blue"]},
        "minItems": 1,
        "maxItems": 2,
    }


# --- optional fields and defaults -------------------------------------------------------------


def test_optional_fields_are_not_required_and_carry_no_null() -> None:
    class Contact(BaseModel):
        phone: str | None = None
        fax: str | None
        name: str

    schema = compile_schema(Contact)
    assert schema.wire == {
        "type": "object",
        "properties": {"phone": {"type": "string"}, "fax": {"type": "string"}, "name": {"type": "string"}},
        "required": ["name"],
    }
    assert schema.nullable == ("fax",)


def test_optional_field_keeps_a_non_null_default() -> None:
    assert prop(int | None, 3) == {"type": "integer", "default": 3}


def test_string_number_and_boolean_defaults_are_rendered() -> None:
    assert prop(str, "hi")["default"] == "hi"
    assert prop(float, 0.5)["default"] == 0.5
    assert prop(bool, False)["default"] is False


def test_enum_default_is_rendered_as_its_value() -> None:
    assert prop(Color, Color.BLUE) == {"type": "string", "enum": ["red", "blue"], "default": "blue"}


def test_set_default_is_rendered_as_a_sorted_list() -> None:
    assert prop(set[Color], {Color.RED, Color.BLUE})["default"] == ["blue", "red"]


def test_date_default_is_rendered_as_an_iso_string() -> None:
    assert prop(dt.date, dt.date(2025, 11, 25)) == {"type": "string", "format": "date", "default": "2025-11-25"}


def test_datetime_default_is_rendered_as_an_iso_string() -> None:
    moment = dt.datetime(2025, 11, 25, 9, 30, tzinfo=dt.UTC)
    assert prop(dt.datetime, moment)["default"] == "2025-11-25T09:30:00+00:00"


# --- formats and constraints ------------------------------------------------------------------


def test_email_str_becomes_an_email_format() -> None:
    assert prop(EmailStr) == {"type": "string", "format": "email"}


def test_any_url_becomes_a_uri_format() -> None:
    assert prop(AnyUrl) == {"type": "string", "format": "uri"}


def test_http_url_becomes_a_uri_format() -> None:
    assert prop(HttpUrl) == {"type": "string", "format": "uri"}


def test_date_becomes_a_date_format() -> None:
    assert prop(dt.date) == {"type": "string", "format": "date"}


def test_datetime_becomes_a_date_time_format() -> None:
    assert prop(dt.datetime) == {"type": "string", "format": "date-time"}


def test_length_limits_on_str_become_min_and_max_length() -> None:
    assert prop(str, min_length=2, max_length=5) == {"type": "string", "minLength": 2, "maxLength": 5}


def test_ge_and_le_become_minimum_and_maximum() -> None:
    assert prop(float, ge=0.5, le=9.5) == {"type": "number", "minimum": 0.5, "maximum": 9.5}


def test_gt_and_lt_on_int_become_inclusive_bounds() -> None:
    assert prop(int, gt=0, lt=10) == {"type": "integer", "minimum": 1, "maximum": 9}


def test_title_and_description_are_rendered() -> None:
    assert prop(str, title="Name", description="Your full name") == {
        "type": "string",
        "title": "Name",
        "description": "Your full name",
    }


def test_a_model_field_alias_is_the_property_key() -> None:
    class Account(BaseModel):
        user_name: str = Field(alias="userName")

    assert compile_schema(Account).wire == {
        "type": "object",
        "properties": {"userName": {"type": "string"}},
        "required": ["userName"],
    }


# --- dataclasses, TypedDicts, caching ---------------------------------------------------------


def test_a_dataclass_compiles_like_a_model() -> None:
    @dataclass
    class Order:
        item: Annotated[str, Field(max_length=20)]
        colors: list[Color] = field(default_factory=lambda: [Color.RED])
        note: str | None = None

    assert compile_schema(Order).wire == {
        "type": "object",
        "properties": {
            "item": {"type": "string", "maxLength": 20},
            "colors": {"type": "array", "items": {"type": "string", "enum": ["red", "blue"]}, "default": ["red"]},
            "note": {"type": "string"},
        },
        "required": ["item"],
    }


def test_a_typed_dict_compiles_with_not_required_keys_optional() -> None:
    class Survey(TypedDict):
        score: Annotated[int, Field(ge=1, le=5)]
        comment: NotRequired[str]

    assert compile_schema(Survey).wire == {
        "type": "object",
        "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 5}, "comment": {"type": "string"}},
        "required": ["score"],
    }


def test_a_total_false_typed_dict_requires_only_its_required_keys() -> None:
    class Filter(TypedDict, total=False):
        query: Required[str]
        limit: int

    assert compile_schema(Filter).wire == {
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["query"],
    }


def test_compiling_the_same_type_twice_returns_the_same_object() -> None:
    class Ping(BaseModel):
        ok: bool

    compiled = compile_schema(Ping)
    assert isinstance(compiled, FormSchema)
    assert compile_schema(Ping) is compiled
    assert compile_schema(compiled) is compiled


# --- refusals of Python types -----------------------------------------------------------------


def test_a_nested_model_is_refused() -> None:
    assert "nested objects" in refusal(Address)


def test_a_list_of_models_is_refused() -> None:
    assert "lists of objects" in refusal(list[Address])


def test_a_free_list_of_strings_is_refused() -> None:
    assert "multi-select of fixed choices" in refusal(list[str])


def test_a_dict_field_is_refused() -> None:
    assert "cannot be asked" in refusal(dict[str, str])


def test_a_union_of_types_is_refused() -> None:
    assert "union" in refusal(int | str)


def test_a_non_string_literal_is_refused() -> None:
    assert "choices must be strings" in refusal(Literal[1, 2])


def test_an_int_enum_is_refused() -> None:
    assert "choices must be strings" in refusal(Priority)


def test_a_secret_str_is_refused_pointing_to_url_mode() -> None:
    assert "URL mode" in refusal(SecretStr)


def test_numeric_bounds_on_text_are_refused() -> None:
    with pytest.raises(SchemaError, match=r"Form\.x.*numbers only"):
        prop(str, ge=1)


def test_a_type_that_is_not_a_form_is_refused() -> None:
    with pytest.raises(SchemaError, match="Cannot ask with 'int'"):
        compile_schema(int)


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="pydantic reads typing.TypedDict from Python 3.12 on")
def test_a_typing_typed_dict_is_refused_on_python_3_11() -> None:
    class Legacy(typing.TypedDict):
        name: str

    with pytest.raises(SchemaError, match=r"Cannot ask with 'Legacy'.*typing_extensions\.TypedDict"):
        compile_schema(Legacy)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="pydantic needs typing_extensions.TypedDict before 3.12")
def test_a_typing_typed_dict_is_a_form_from_python_3_12_on() -> None:
    class Modern(typing.TypedDict):
        name: str

    assert compile_schema(Modern).wire == {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    }


# --- raw dict schemas -------------------------------------------------------------------------

RAW: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 1, "maxLength": 50},
        "email": {"type": "string", "format": "email"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
        "ratio": {"type": "number"},
        "ok": {"type": "boolean", "default": True},
        "env": {"type": "string", "enum": ["prod", "dev"], "default": "dev"},
        "tier": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "minItems": 1, "maxItems": 2},
        "picks": {"type": "array", "items": {"anyOf": [{"const": "p", "title": "P"}]}, "default": ["p"]},
    },
    "required": ["name"],
}


def raw_refusal(**properties: Any) -> str:
    with pytest.raises(SchemaError) as caught:
        compile_schema({"type": "object", "properties": properties})
    return str(caught.value)


def test_a_valid_raw_schema_passes_through_unchanged() -> None:
    schema = compile_schema(RAW)
    assert schema.wire == RAW
    assert schema.adapter is None


def test_legacy_enum_names_become_one_of() -> None:
    legacy = {"type": "string", "enum": ["a", "b"], "enumNames": ["Alpha", "Beta"], "default": "a"}
    assert compile_schema({"type": "object", "properties": {"x": legacy}}).properties["x"] == {
        "type": "string",
        "oneOf": [{"const": "a", "title": "Alpha"}, {"const": "b", "title": "Beta"}],
        "default": "a",
    }


def test_a_raw_root_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(SchemaError, match="root must be"):
        compile_schema({"type": "array", "properties": {}})


def test_an_unknown_raw_root_key_is_refused() -> None:
    with pytest.raises(SchemaError, match=r"unsupported keys \['additionalProperties'\]"):
        compile_schema({"type": "object", "properties": {}, "additionalProperties": False})


def test_a_raw_object_property_is_refused() -> None:
    message = raw_refusal(address={"type": "object", "properties": {}})
    assert "'address'" in message
    assert "type 'object' is not allowed" in message


def test_a_raw_array_without_items_is_refused() -> None:
    message = raw_refusal(tags={"type": "array"})
    assert "'tags'" in message
    assert "needs 'items'" in message


def test_a_raw_array_of_objects_is_refused() -> None:
    message = raw_refusal(rows={"type": "array", "items": {"type": "object"}})
    assert "'rows'" in message
    assert "arrays of other things cannot be asked" in message


def test_an_unknown_raw_property_key_is_refused() -> None:
    message = raw_refusal(code={"type": "string", "pattern": "^[0-9]+$"})
    assert "'code'" in message
    assert "['pattern']" in message


def test_an_unknown_raw_format_is_refused() -> None:
    message = raw_refusal(ip={"type": "string", "format": "ipv4"})
    assert "'ip'" in message
    assert "format 'ipv4'" in message


def test_enum_names_of_the_wrong_length_are_refused() -> None:
    message = raw_refusal(env={"type": "string", "enum": ["a", "b"], "enumNames": ["Alpha"]})
    assert "'env'" in message
    assert "one title per 'enum' value" in message


def test_required_naming_a_missing_property_is_refused() -> None:
    with pytest.raises(SchemaError, match=r"'required' names \['b'\] which are not in 'properties'"):
        compile_schema({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]})


def test_non_string_raw_enum_values_are_refused() -> None:
    message = raw_refusal(level={"type": "string", "enum": [1, 2]})
    assert "'level'" in message
    assert "'enum' must be a non-empty list of strings" in message


def test_a_validation_alias_is_the_wire_key_so_answers_validate() -> None:
    class Aliased(BaseModel):
        user_name: str = Field(validation_alias="userName")

    schema = compile_schema(Aliased)
    assert schema.wire["properties"] == {"userName": {"type": "string"}}
    assert schema.wire["required"] == ["userName"]


def test_a_model_whose_annotations_cannot_be_resolved_is_refused_clearly() -> None:
    class Later(BaseModel):
        when: Undefined  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(SchemaError, match=r"could not resolve its annotations.*model_rebuild\(\)"):
        compile_schema(Later)


def test_a_default_that_breaks_its_own_field_is_refused() -> None:
    with pytest.raises(SchemaError, match=r"Raw schema property 'env': the default must be one of staging, prod"):
        compile_schema(
            {
                "type": "object",
                "properties": {"env": {"type": "string", "enum": ["staging", "prod"], "default": "DROP"}},
            }
        )
    with pytest.raises(SchemaError, match=r"Raw schema property 'n': the default must be a number"):
        compile_schema({"type": "object", "properties": {"n": {"type": "integer", "default": "lots"}}})

    class Capped(BaseModel):
        replicas: int = Field(99, le=5)

    with pytest.raises(SchemaError, match=r"Field 'Capped.replicas': the default must be at most 5"):
        compile_schema(Capped)

    class Where(BaseModel):
        env: Literal["staging", "prod"] = "nowhere"  # type: ignore[assignment]

    with pytest.raises(SchemaError, match=r"Field 'Where.env': the default must be one of staging, prod"):
        compile_schema(Where)


def test_bounds_that_admit_no_answer_are_refused() -> None:
    with pytest.raises(SchemaError, match="'minimum' is greater than 'maximum'"):
        compile_schema({"type": "object", "properties": {"n": {"type": "number", "minimum": 5, "maximum": 1}}})
    with pytest.raises(SchemaError, match="'minLength' is greater than 'maxLength'"):
        compile_schema({"type": "object", "properties": {"s": {"type": "string", "minLength": 5, "maxLength": 1}}})
    many = {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 3}
    with pytest.raises(SchemaError, match="'minItems' asks for more choices than the 2 options"):
        compile_schema({"type": "object", "properties": {"tags": many}})


def test_a_root_title_and_description_are_accepted_but_not_sent() -> None:
    raw = {"type": "object", "title": "T", "description": "D", "properties": {"a": {"type": "string"}}}
    assert compile_schema(raw).wire == {"type": "object", "properties": {"a": {"type": "string"}}}


def test_the_schema_cache_is_bounded() -> None:
    from elicitkit._schema import compile as schema_module

    for i in range(schema_module._CACHE_SIZE + 50):
        compile_schema(create_model(f"Dyn{i}", x=(int, ...)))
    assert len(schema_module._cache) == schema_module._CACHE_SIZE


@pytest.mark.parametrize(
    "prop",
    [
        {"type": ["string", "null"]},
        {"type": {}},
        {"type": []},
        {"type": "string", "format": []},
        {"oneOf": None, "format": {}},
    ],
    ids=["type-list", "type-object", "type-empty-list", "format-list", "format-object"],
)
def test_a_raw_property_whose_type_or_format_is_not_a_string_is_refused_naming_it(prop: dict[str, object]) -> None:
    with pytest.raises(SchemaError, match=r"Raw schema property 'f': (type|format) .* (is not allowed|is not one of)"):
        compile_schema({"type": "object", "properties": {"f": prop}})
