"""elicitkit's page templates: every string from a question is escaped, in text and in attributes."""

from __future__ import annotations

from html.parser import HTMLParser

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
