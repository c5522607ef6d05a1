"""elicitkit's page templates: every string from a question is escaped, in text and in attributes; a refused answer
says what to do, in the page's own words, and is marked for assistive technology; no choice is made for the person."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import pytest

from elicitkit._schema import authored
from elicitkit._web.messages import WHOLE, explain
from elicitkit._web.pages import error_page, form_page, message_page, stylesheet

HOSTILE = "<script>alert(1)</script>\"'&"


class Tags(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_every_question_string_is_escaped_in_text_and_attributes() -> None:
    prop = {"type": "string", "title": HOSTILE, "description": HOSTILE, "default": HOSTILE}
    choice = {"type": "string", "enum": [HOSTILE], "enumNames": [HOSTILE]}
    schema = {"type": "object", "properties": {"free": prop, "pick": choice, HOSTILE: {"type": "boolean"}}}
    html = form_page(
        message=HOSTILE, schema=schema, action=HOSTILE, csrf=HOSTILE, errors={"free": HOSTILE, "": HOSTILE}
    )
    page = Tags(html)
    assert [tag for tag, _ in page.tags].count("script") == 0
    # Parsed back, every attribute and text holds the string exactly as the question had it.
    # heading, general error, label, help, the field's error (in the summary), the option
    assert [text.strip() for text in page.text].count(HOSTILE) >= 6
    assert f"Error: {HOSTILE}" in page.text  # the title
    assert f" {HOSTILE}" in page.text  # the field's error, after its hidden "Error:"
    inputs = {attrs.get("name"): attrs for tag, attrs in page.tags if tag == "input"}
    assert inputs["free"]["value"] == HOSTILE
    assert inputs["ek:csrf"]["value"] == HOSTILE
    assert inputs[HOSTILE]["type"] == "radio"  # a field name, round-tripped through the attribute (a yes/no)
    assert ("form", {"method": "post", "action": HOSTILE, "autocomplete": "off"}) in page.tags
    assert ("input", {"type": "radio", "id": "f-pick", "name": "pick", "value": HOSTILE}) in page.tags


def test_legacy_enum_names_show_as_option_titles() -> None:
    schema = {"type": "object", "properties": {"env": {"type": "string", "enum": ["a"], "enumNames": ["Alpha"]}}}
    page = Tags(form_page(message="m", schema=schema, action="/", csrf="c"))
    assert ("input", {"type": "radio", "id": "f-env", "name": "env", "value": "a"}) in page.tags
    assert "Alpha" in page.text


def test_secret_fields_are_password_inputs_never_prefilled() -> None:
    schema = {"type": "object", "properties": {"key": {"type": "string", "default": "sk-1"}}}
    html = form_page(message="m", schema=schema, action="/", csrf="c", values={"key": "sk-2"}, secret=["key"])
    assert "sk-1" not in html
    assert "sk-2" not in html
    assert ("input", {"id": "f-key", "name": "key", "type": "password", "autocomplete": "off"}) in Tags(html).tags


def test_message_and_error_pages_escape_and_load_only_the_own_stylesheet() -> None:
    for html in (message_page(HOSTILE, HOSTILE, symbol=HOSTILE), error_page(HOSTILE)):
        page = Tags(html)
        assert [tag for tag, _ in page.tags].count("script") == 0
        assert HOSTILE in page.text
        assert [attrs for tag, attrs in page.tags if tag == "link"] == [
            {"rel": "stylesheet", "href": "/elicit/static/style.css"}
        ]
    assert "color-scheme" in stylesheet()


# --- errors people can act on ------------------------------------------------------------------------------

RELEASE = {
    "type": "object",
    "properties": {
        "service": {"type": "string", "title": "Service", "minLength": 2, "maxLength": 40, "description": "A name."},
        "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 64, "default": 3},
        "share": {"type": "number", "title": "Canary share", "minimum": 0},
        "region": {"type": "string", "title": "Region", "enum": ["eu", "us"]},
        "approved": {"type": "boolean", "title": "Approved"},
        "checks": {"type": "array", "title": "Checks", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 1},
        "contact": {"type": "string", "title": "Contact", "format": "email"},
        "site": {"type": "string", "title": "Site", "format": "uri"},
        "day": {"type": "string", "title": "Day", "format": "date"},
        "key": {"type": "string", "title": "API key"},
    },
    "required": ["service", "region", "approved", "checks", "key"],
}


@pytest.mark.parametrize(
    ("content", "messages"),
    [
        (
            {},
            {
                "service": "Enter service",
                "region": "Choose region",
                "approved": "Choose yes or no for approved",
                "checks": "Choose at least 1 option for checks",
                "key": "Enter API key",  # an acronym keeps its capitals
            },
        ),
        (
            {"service": "x", "replicas": 500, "share": -1, "region": "mars", "checks": ["a", "z"]},
            {
                "service": "Service must be between 2 and 40 characters",
                "replicas": "Replicas must be between 1 and 64",
                "share": "Canary share must be 0 or more",
                "region": "Choose region from the options shown",
                "checks": "Choose checks from the options shown",
            },
        ),
        (
            {"replicas": "eight", "share": "half", "contact": "ops", "site": "example", "day": "2026-02-30"},
            {
                "replicas": "Replicas must be a whole number between 1 and 64",
                "share": "Canary share must be a number 0 or more",
                "contact": "Enter contact as an email address, like name@example.com",
                "site": "Enter site as a full web address, like https://example.com",
                "day": "Enter day as a real date",
            },
        ),
        # A rule the schema cannot state (a pattern, the tool's own check): where to look, never the rule's text.
        (
            {"service": "Checkout!"},
            {"service": "Service is not accepted as entered: check it against the hint and enter it again"},
        ),
        ({"key": "k"}, {"key": "API key is not accepted as entered: check it and enter it again"}),
    ],
)
def test_a_refused_field_is_told_what_to_do_in_words_written_from_its_schema(
    content: dict[str, Any], messages: dict[str, str]
) -> None:
    assert explain(RELEASE, content, list(messages)) == messages


def test_a_refusal_naming_no_field_is_one_message_for_the_whole_answer() -> None:
    assert explain(RELEASE, {"service": "ok"}, ["", "service"]) == {
        "service": "Service is not accepted as entered: check it against the hint and enter it again",
        "": WHOLE,
    }


def test_the_validators_text_never_reaches_the_page() -> None:
    validator = "String should match pattern '^[a-z0-9-]+$'"
    errors = explain(RELEASE, {"service": "Checkout!"}, ["service"])
    html = form_page(message="m", schema=RELEASE, action="/", csrf="c", values={"service": "Checkout!"}, errors=errors)
    assert validator not in html
    assert "pattern" not in html


def test_a_refused_form_has_an_error_summary_that_takes_focus_and_links_to_each_field() -> None:
    errors = {"service": "Enter service", "approved": "Choose yes or no for approved"}
    html = form_page(message="Ship?", schema=RELEASE, action="/", csrf="c", values={}, errors=errors, secret=["key"])
    page = Tags(html)
    assert "Error: Ship?" in page.text  # the title
    summary = next(attrs for tag, attrs in page.tags if attrs.get("class") == "error-summary")
    assert summary | {"autofocus": None, "tabindex": "-1", "role": "alert"} == summary
    links = [attrs["href"] for tag, attrs in page.tags if tag == "a"]
    # Each field's error, in the form's order; then the secret to type again.
    assert links == ["#f-service", "#f-approved", "#f-key"]
    assert [
        text for text in page.text if text in ("Enter service", "Choose yes or no for approved", "Type API key again")
    ] == ["Enter service", "Choose yes or no for approved", "Type API key again"]
    controls = {attrs["id"]: attrs for tag, attrs in page.tags if tag == "input" and "id" in attrs}
    assert controls["f-service"]["aria-invalid"] == "true"
    assert controls["f-service"]["aria-describedby"] == "f-service-hint f-service-error"
    assert controls["f-approved"]["aria-invalid"] == "true"
    assert "aria-invalid" not in controls["f-share"]
    assert controls["f-key"]["aria-describedby"] == "f-key-again"  # "type this again", though not in error
    groups = {attrs.get("aria-describedby") for tag, attrs in page.tags if tag == "fieldset"}
    assert "f-approved-error" in groups
    assert "f-checks-hint" in groups  # "Choose at least 1."


def test_a_form_as_first_opened_has_no_summary_no_error_and_a_plain_title() -> None:
    page = Tags(form_page(message="Ship?", schema=RELEASE, action="/", csrf="c"))
    assert not [attrs for tag, attrs in page.tags if "aria-invalid" in attrs or attrs.get("class") == "error-summary"]
    assert "Ship?" in page.text
    assert "Error: Ship?" not in page.text


def test_no_choice_is_made_for_the_person() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "enum": ["eu", "us"]},
            "zone": {"type": "string", "enum": ["a", "b", "c", "d", "e", "f"]},
            "tier": {"type": "string", "enum": ["x", "y"]},
            "approved": {"type": "boolean"},
            "notify": {"type": "boolean"},
            "canary": {"type": "boolean", "default": False},
            "plan": {"type": "string", "enum": ["free", "pro"], "default": "pro"},
        },
        "required": ["region", "zone", "approved"],
    }
    page = Tags(form_page(message="m", schema=schema, action="/", csrf="c"))
    inputs = [
        (attrs.get("name"), attrs.get("type"), attrs.get("value"), "checked" in attrs)
        for tag, attrs in page.tags
        if tag == "input"
    ]
    # A short required choice: radios, none chosen.
    assert [i for i in inputs if i[0] == "region"] == [
        ("region", "radio", "eu", False),
        ("region", "radio", "us", False),
    ]
    # An optional one without a default can be left unanswered ("No answer", where the form starts).
    assert [i for i in inputs if i[0] == "tier"][-1] == ("tier", "radio", "", True)
    # A yes/no without a default: Yes and No, neither ticked; optional, it may be left unanswered.
    assert [i for i in inputs if i[0] == "approved"] == [
        ("approved", "radio", "true", False),
        ("approved", "radio", "false", False),
    ]
    assert [i for i in inputs if i[0] == "notify"][-1] == ("notify", "radio", "", True)
    # With a default, the default is what is chosen (a checkbox for a yes/no).
    assert [i for i in inputs if i[0] == "canary"] == [
        ("canary", "hidden", "false", False),
        ("canary", "checkbox", "true", False),
    ]
    assert ("plan", "radio", "pro", True) in inputs
    # A long choice: a select whose first option is empty, and chosen.
    options = [attrs for tag, attrs in page.tags if tag == "option"]
    assert options[0] == {"value": ""}
    assert not any("selected" in o for o in options)
    assert "Choose one" in page.text
    # Optional fields say so; required ones carry no mark.
    assert page.text.count("(optional)") == 4  # tier, notify, plan (canary is a single checkbox), the decline reason
    assert "Decline tells the tool no; Cancel closes the question without saying yes or no." in page.text


def test_a_tool_s_own_validator_is_quoted_in_its_author_s_words_and_pydantic_s_own_text_never() -> None:
    assert authored("Value error, root may not own a branch") == "root may not own a branch"
    assert authored("Assertion failed, replicas must be even") == "replicas must be even"
    assert authored("String should match pattern '^[a-z0-9-]+$'") is None
    said = {"service": "checkout is frozen this week"}
    assert explain(RELEASE, {"service": "checkout"}, ["service"], said) == {
        "service": "Service is not accepted: checkout is frozen this week"
    }
