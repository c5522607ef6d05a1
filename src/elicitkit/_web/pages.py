"""The pages elicitkit serves: a form, a result, an error. Plain HTML, no JavaScript.

Every string from a question is escaped here or in `forms`. Pages load one
stylesheet from elicitkit itself, which the Content-Security-Policy allows and
nothing else.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from html import escape
from typing import Any

from elicitkit._web.forms import render_fields

__all__ = ["CSP", "STYLESHEET", "error_page", "form_page", "message_page"]

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)

STYLESHEET = """
:root { color-scheme: light dark; --accent: #2f5fd0; --bad: #b3261e; }
* { box-sizing: border-box; }
body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; padding: 2rem 1rem;
       background: Canvas; color: CanvasText; }
main { max-width: 34rem; margin: 0 auto; }
.card { border: 1px solid color-mix(in srgb, CanvasText 18%, transparent); border-radius: 12px; padding: 1.5rem; }
.brand { font-size: .8rem; letter-spacing: .06em; text-transform: uppercase; opacity: .65; margin: 0 0 .5rem; }
h1 { font-size: 1.35rem; margin: 0 0 1.25rem; white-space: pre-wrap; overflow-wrap: anywhere; }
.field { margin: 0 0 1.1rem; border: 0; padding: 0; }
.field > label, legend { display: block; font-weight: 600; margin-bottom: .3rem; padding: 0; }
input[type=text], input[type=email], input[type=url], input[type=password], input[type=number],
input[type=date], input[type=datetime-local], select {
  width: 100%; padding: .55rem .65rem; font: inherit; border-radius: 8px;
  border: 1px solid color-mix(in srgb, CanvasText 30%, transparent); background: Field; color: FieldText; }
label.check { display: flex; gap: .5rem; align-items: center; font-weight: 400; margin: .25rem 0; }
.help { font-size: .85rem; opacity: .75; margin: .25rem 0 0; }
.error { color: var(--bad); font-size: .9rem; margin: .3rem 0 0; }
.actions { display: flex; gap: .6rem; flex-wrap: wrap; margin-top: 1.5rem; }
button { font: inherit; padding: .55rem 1.1rem; border-radius: 8px; cursor: pointer;
         border: 1px solid color-mix(in srgb, CanvasText 30%, transparent); background: transparent; color: inherit; }
button.primary { background: var(--accent); border-color: var(--accent); color: white; }
.note { font-size: .85rem; opacity: .7; margin-top: 1.25rem; }
.status { font-size: 2.2rem; margin: 0 0 .5rem; }
"""


CSS = "/elicit/static/style.css"


def _page(title: str, body: str, css: str) -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{escape(title)}</title>"
        f'<link rel="stylesheet" href="{escape(css, quote=True)}">'
        f'</head><body><main><div class="card"><p class="brand">elicitkit</p>{body}</div></main></body></html>'
    )


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
    general = "".join(f'<p class="error" role="alert">{escape(e)}</p>' for e in (errors or {}).get("", ()))
    fields = render_fields(schema, values, errors, secret)
    body = (
        f"<h1>{escape(message)}</h1>{general}"
        f'<form method="post" action="{escape(action, quote=True)}" autocomplete="off">'
        f'<input type="hidden" name="_csrf" value="{escape(csrf, quote=True)}">'
        f"{fields}"
        '<div class="actions">'
        '<button class="primary" type="submit" name="_action" value="accept">Submit</button>'
        '<button type="submit" name="_action" value="decline" formnovalidate>Decline</button>'
        '<button type="submit" name="_action" value="cancel" formnovalidate>Cancel</button>'
        "</div></form>"
        '<p class="note">What you enter here goes to the tool directly, not through the assistant.</p>'
    )
    return _page(message, body, css)


def message_page(title: str, text: str, *, symbol: str = "✓", css: str = CSS) -> str:
    body = f'<p class="status" aria-hidden="true">{escape(symbol)}</p><h1>{escape(title)}</h1><p>{escape(text)}</p>'
    return _page(title, body, css)


def error_page(text: str, *, css: str = CSS) -> str:
    return message_page("This link cannot be used", text, symbol="⚠", css=css)
