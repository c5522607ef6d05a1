"""Choice fields in all five SEP-1330 shapes are read by one function, and written the legacy way on demand."""

from __future__ import annotations

import pytest

from elicitkit._fallback import describe_field
from elicitkit._schema import options_of
from elicitkit._schema.choices import multi_select, single_select, with_enum_names

TITLED = {"type": "string", "oneOf": [{"const": "a", "title": "Alpha"}, {"const": "b", "title": "Beta"}]}
LEGACY = {"type": "string", "enum": ["a", "b"], "enumNames": ["Alpha", "Beta"]}


@pytest.mark.parametrize(
    ("prop", "options"),
    [
        ({"type": "string", "enum": ["a", "b"]}, [("a", "a"), ("b", "b")]),
        (TITLED, [("a", "Alpha"), ("b", "Beta")]),
        (LEGACY, [("a", "Alpha"), ("b", "Beta")]),
        ({"type": "string", "enum": ["c"]}, [("c", "c")]),  # a multi-select's untitled items
        ({"anyOf": [{"const": "a", "title": "Alpha"}]}, [("a", "Alpha")]),  # a multi-select's titled items
        ({"type": "string"}, None),
    ],
)
def test_every_choice_shape_reads_as_value_title_pairs(prop: dict[str, object], options: object) -> None:
    assert options_of(prop) == options


def test_the_writers_make_the_current_shapes() -> None:
    assert single_select(["a", "b"], {"a": "Alpha", "b": "Beta"}) == TITLED
    assert single_select(["a"]) == {"type": "string", "enum": ["a"]}
    assert multi_select(["a"], {"a": "Alpha"}) == {
        "type": "array",
        "items": {"anyOf": [{"const": "a", "title": "Alpha"}]},
    }
    assert multi_select(["a"]) == {"type": "array", "items": {"type": "string", "enum": ["a"]}}


def test_titled_singles_are_rewritten_with_enum_names_and_everything_else_is_kept() -> None:
    titled = {**TITLED, "title": "Pick", "default": "b"}
    multi = multi_select(["a"], {"a": "Alpha"})
    schema = {"type": "object", "properties": {"x": titled, "y": multi, "z": {"type": "integer"}}, "required": ["x"]}
    assert with_enum_names(schema) == {
        "type": "object",
        "properties": {"x": {**LEGACY, "title": "Pick", "default": "b"}, "y": multi, "z": {"type": "integer"}},
        "required": ["x"],
    }
    assert schema["properties"]["x"] == titled  # the original is untouched


def test_the_model_reads_legacy_titles_like_current_ones() -> None:
    assert describe_field("x", LEGACY, True) == describe_field("x", TITLED, True)
    assert '"a" (Alpha)' in describe_field("x", LEGACY, True)
