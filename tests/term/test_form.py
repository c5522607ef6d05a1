"""Walking a form: field after field, back a field, a review where any field can be changed, then send."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pytest

from elicitkit._term.form import BACK, OMIT, Field, Outcome, content_of, fields_of, fill, shown

pytestmark = pytest.mark.anyio

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name"},
        "team": {
            "type": "string",
            "oneOf": [{"const": "ops", "title": "Operations"}, {"const": "dev", "title": "Dev"}],
        },
        "first_name": {"type": "string"},
    },
    "required": ["name"],
}


class Script:
    """An asker answering from a list: a value, BACK or OMIT per field, and review picks."""

    def __init__(self, *steps: Any) -> None:
        self.steps = list(steps)
        self.asked: list[tuple[str, Any]] = []

    async def field(self, field: Field, current: Any) -> Any:
        self.asked.append((field.name, current))
        return self.steps.pop(0)

    async def review(self, fields: Sequence[Field], values: Mapping[str, Any]) -> int | Literal["send"] | Outcome:
        self.asked.append(("review", dict(values)))
        step: int | Literal["send"] | Outcome = self.steps.pop(0)
        return step


def test_fields_are_labelled_by_title_then_by_their_name_in_words() -> None:
    fields = fields_of(SCHEMA)
    assert [f.label for f in fields] == ["Name", "Team", "First name"]
    assert [f.kind for f in fields] == ["text", "choice", "text"]
    assert [f.required for f in fields] == [True, False, False]
    assert (
        fields_of({"properties": {"camelCase": {"type": "string"}, "b": {"type": "boolean"}}})[0].label == "Camel case"
    )


@pytest.mark.parametrize("name", ["value", "choice", "confirmed"])
def test_a_helpers_lone_untitled_field_is_not_labelled_with_its_key(name: str) -> None:
    [field] = fields_of({"properties": {name: {"type": "boolean"}}})
    assert field.label == "Your answer"


async def test_back_returns_to_the_previous_field_with_its_answer_and_off_the_first_field_leaves_the_form() -> None:
    fields = fields_of(SCHEMA)
    script = Script("Ada", BACK, "Grace", "dev", OMIT, "send")
    values = await fill(script, fields)
    assert values == {"name": "Grace", "team": "dev", "first_name": OMIT}
    assert script.asked[:3] == [("name", OMIT), ("team", OMIT), ("name", "Ada")]
    assert content_of(values) == {"name": "Grace", "team": "dev"}
    assert await fill(Script(BACK), fields) == "back"


async def test_the_review_changes_any_field_and_can_still_decline_or_cancel() -> None:
    fields = fields_of(SCHEMA)
    script = Script("Ada", "ops", "x", 1, "dev", "back", BACK, "send")
    values = await fill(script, fields)
    assert values == {"name": "Ada", "team": "dev", "first_name": "x"}
    assert script.asked[4] == ("team", "ops")  # changed from the review, its answer so far shown
    assert script.asked[6] == ("first_name", "x")  # Esc in the review: the last field again; Esc there keeps it
    assert await fill(Script("Ada", "ops", "x", "decline"), fields) == "decline"
    assert await fill(Script("Ada", "ops", "x", "cancel"), fields) == "cancel"


async def test_a_one_field_form_has_no_review() -> None:
    assert await fill(Script(True), fields_of({"properties": {"value": {"type": "boolean"}}})) == {"value": True}


def test_values_are_read_back_as_the_person_knows_them() -> None:
    team, multi = fields_of(SCHEMA)[1], Field("c", {"type": "array", "items": {"enum": ["a", "b"]}}, False, "C")
    assert shown(team, "dev") == "Dev"
    assert shown(multi, ["a", "b"]) == "a, b"
    assert shown(multi, []) == "(none)"
    assert shown(Field("b", {"type": "boolean"}, False, "B"), False) == "no"
    assert shown(team, OMIT) == "(left out)"
