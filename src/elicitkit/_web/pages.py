"""The pages elicitkit serves: a form, a result, an error. Plain HTML, no JavaScript.

Pages are Jinja2 templates (`templates/`) rendered with autoescaping on, so
every string from a question is escaped without anyone remembering to. Pages
load one stylesheet (`static/style.css`) from elicitkit itself, which the
Content-Security-Policy allows and nothing else.

A refused answer comes back as the GOV.UK Design System shows errors: an
error summary at the top that takes focus as the page loads (no script), a
link from each of its lines to the field, each field marked `aria-invalid`
and described by its hint and its message, and "Error:" before the title.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from functools import cache, lru_cache
from importlib.resources import files
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from elicitkit._core.kinds import MAX_REASON
from elicitkit._web.forms import CONTROLS, FieldView, field_views
from elicitkit._web.messages import in_sentence

__all__ = [
    "CSP",
    "error_page",
    "fields_html",
    "form_page",
    "message_page",
    "problems_of",
    "render_fields",
    "render_summary",
    "stylesheet",
]

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)

CSS = "/elicit/static/style.css"


@cache
def _templates() -> Environment:
    # Built on first use, not on import. StrictUndefined: a misspelt variable is an error, not an empty string.
    environment = Environment(
        loader=PackageLoader("elicitkit._web", "templates"),
        auto_reload=False,  # templates ship with the package: parsed once, never checked again per request
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.globals["controls"] = CONTROLS  # the page's own inputs, named where no field can be
    environment.globals["max_reason"] = MAX_REASON
    return environment


@cache
def stylesheet() -> str:
    return files("elicitkit._web").joinpath("static", "style.css").read_text(encoding="utf-8")


def _render(template: str, **context: Any) -> str:
    return _templates().get_template(template).render(**context)


def _macros() -> Any:
    # The template's module is built once and kept by the template (itself kept by the environment).
    return _templates().get_template("fields.html").module


def render_fields(views: Sequence[FieldView]) -> Markup:
    """The fields' HTML (`fields.html`), for a page to place in its form."""
    return Markup(_macros().fields(views))


def render_summary(problems: Sequence[tuple[str | None, str]], intro: str | None = None) -> Markup:
    """The error summary (`fields.html`): `intro`, then each problem, linked to its field when it has one."""
    return Markup(_macros().summary(problems, intro))


@lru_cache(maxsize=512)
def _blank_fields(schema_text: str, secret: tuple[str, ...], scope: str) -> Markup:
    return render_fields(field_views(json.loads(schema_text), secret=secret, scope=scope))


def fields_html(
    schema: Mapping[str, Any],
    values: Mapping[str, Any] | None = None,
    errors: Mapping[str, str] | None = None,
    secret: Collection[str] = (),
    scope: str = "f",
) -> tuple[Markup, list[FieldView]]:
    """A form's fields as HTML, and their views (empty when nothing was refused).

    A question's form as it first opens (no entries, no errors) is rendered once per schema and kept: a page
    opened by many people, or opened again, costs one template render of its own few lines.
    """
    if values is None and not errors:
        # The schema's text keeps its properties' order, which is the form's order.
        text = json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
        return _blank_fields(text, tuple(secret), scope), []
    views = field_views(schema, values, errors, secret, scope)
    return render_fields(views), views


def problems_of(views: Sequence[FieldView], errors: Mapping[str, str]) -> list[tuple[str | None, str]]:
    """The error summary's lines: the answer's own problem first, then each field's (linked to it), in order."""
    lines: list[tuple[str | None, str]] = [(None, errors[""])] if errors.get("") else []
    for view in views:
        if view.error:
            lines.append((f"#{view.id}", view.error))
        elif view.again:
            lines.append((f"#{view.id}", f"Type {in_sentence(view.label)} again"))
    return lines


def form_page(
    *,
    message: str,
    schema: Mapping[str, Any],
    action: str,
    csrf: str,
    values: Mapping[str, Any] | None = None,
    errors: Mapping[str, str] | None = None,
    secret: Collection[str] = (),
    css: str = CSS,
) -> str:
    """The question as a form, with Submit, Decline and Cancel.

    `errors` (plain-words messages by field, `messages.explain`) make it the page of a refused answer: an
    error summary that takes focus, each field marked and described, and a title that starts "Error:".
    """
    fields, views = fields_html(schema, values, errors, secret)
    problems = problems_of(views, errors or {})
    return _render(
        "form.html",
        title=f"Error: {message}" if problems else message,
        css=css,
        message=message,
        action=action,
        csrf=csrf,
        summary=render_summary(problems) if problems else None,
        fields=fields,
    )


@lru_cache(maxsize=64)
def message_page(title: str, text: str, *, symbol: str = "✓", css: str = CSS) -> str:
    """A page that only says something (thank you, done, an error): the same few pages again and again."""
    return _render("message.html", title=title, text=text, symbol=symbol, css=css)


def error_page(text: str, *, css: str = CSS) -> str:
    return message_page("This link cannot be used", text, symbol="⚠", css=css)
