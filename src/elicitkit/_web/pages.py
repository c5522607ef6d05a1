"""The pages elicitkit serves: a form, a result, an error. Plain HTML, no JavaScript.

Pages are Jinja2 templates (`templates/`) rendered with autoescaping on, so
every string from a question is escaped without anyone remembering to. Pages
load one stylesheet (`static/style.css`) from elicitkit itself, which the
Content-Security-Policy allows and nothing else.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from functools import cache
from importlib.resources import files
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from elicitkit._web.forms import CONTROLS, field_views

__all__ = ["CSP", "error_page", "form_page", "message_page", "stylesheet"]

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)

CSS = "/elicit/static/style.css"


@cache
def _templates() -> Environment:
    # Built on first use, not on import. StrictUndefined: a misspelt variable is an error, not an empty string.
    environment = Environment(
        loader=PackageLoader("elicitkit._web", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.globals["controls"] = CONTROLS  # the page's own inputs, named where no field can be
    return environment


@cache
def stylesheet() -> str:
    return files("elicitkit._web").joinpath("static", "style.css").read_text(encoding="utf-8")


def _render(template: str, **context: Any) -> str:
    return _templates().get_template(template).render(**context)


def form_page(
    *,
    message: str,
    schema: Mapping[str, Any],
    action: str,
    csrf: str,
    values: Mapping[str, Any] | None = None,
    errors: Mapping[str, Sequence[str]] | None = None,
    secret: Collection[str] = (),
    css: str = CSS,
) -> str:
    """The question as a form, with Submit, Decline and Cancel."""
    return _render(
        "form.html",
        title=message,
        css=css,
        message=message,
        action=action,
        csrf=csrf,
        general_errors=(errors or {}).get("", ()),
        fields=field_views(schema, values, errors, secret),
    )


def message_page(title: str, text: str, *, symbol: str = "✓", css: str = CSS) -> str:
    return _render("message.html", title=title, text=text, symbol=symbol, css=css)


def error_page(text: str, *, css: str = CSS) -> str:
    return message_page("This link cannot be used", text, symbol="⚠", css=css)
