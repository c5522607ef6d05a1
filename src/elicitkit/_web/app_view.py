"""elicitkit's form inside the chat: one self-contained HTML document, served as an MCP Apps view.

The view (`static/app_view.html`, `.css`, `.js`) is static: it holds no question. The host renders it in a
sandboxed frame beside a tool call and hands it the call's result over postMessage; the result of a call that
asks carries the pending question (`elicitationPending`, as the fallback writes it), and the view renders its
form from the schema and answers through the fallback tool. Its script and stylesheet are inlined, and its own
Content-Security-Policy admits exactly those two by their hashes and nothing else: no request leaves the frame.
Every string it shows comes from the server or the host and reaches the page as text, never as HTML.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from importlib import resources
from typing import Any

from elicitkit._clients import VIEW_MIME
from elicitkit._fallback import VIEW_URI

__all__ = ["VIEW_META", "VIEW_MIME", "VIEW_NAME", "VIEW_URI", "view_csp", "view_html"]

VIEW_NAME = "elicitkit-form"
VIEW_META: dict[str, Any] = {
    # No origins at all: the view fetches nothing, embeds nothing and loads nothing from elsewhere.
    "ui": {"csp": {"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []}}
}
"""The view resource's `_meta`: what MCP Apps hosts read to set the frame's CSP (and its permissions: none)."""


def _static(name: str) -> str:
    return resources.files("elicitkit._web").joinpath("static", name).read_text(encoding="utf-8")


def _hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


@functools.cache
def view_csp() -> str:
    """The view's own policy: its inline script and stylesheet by hash; nothing else, from anywhere."""
    return (
        f"default-src 'none'; script-src {_hash(_static('app_view.js'))}; style-src {_hash(_static('app_view.css'))}; "
        "img-src 'none'; font-src 'none'; connect-src 'none'; media-src 'none'; object-src 'none'; "
        "frame-src 'none'; worker-src 'none'; form-action 'none'; base-uri 'none'"
    )


@functools.cache
def view_html() -> str:
    """The view's document, its script and stylesheet inlined."""
    page = _static("app_view.html")
    # Replaced one at a time, the policy first: none of the three can hold another's placeholder by accident.
    return (
        page.replace("{csp}", view_csp(), 1)
        .replace("{style}", _static("app_view.css"), 1)
        .replace("{script}", _static("app_view.js"), 1)
    )
