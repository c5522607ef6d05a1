"""What a client really shows: its declared capabilities, corrected by overrides.

Some hosts declare `elicitation` and never render it, or decline everything;
some declare MCP Apps and render no view. A `ClientOverride` matches them by
`clientInfo.name` (a glob, case-insensitive) and optionally a version range,
and states what they really show: the elicitation modes, whether they render
elicitkit's view in the chat, or both; what it leaves out stays as declared.

```python
Elicitation(server, client_overrides=[
    ClientOverride("acme-desktop", modes=()),                       # declares it, never shows it
    ClientOverride("acme-ide", versions=">=2.0,<2.4", modes=("form",)),
    ClientOverride("acme-chat", apps=False),                        # declares MCP Apps, renders no view
])
```
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from mcp_types import ClientCapabilities, Implementation

from elicitkit._core.kinds import Mode

__all__ = [
    "APPS_EXTENSION",
    "VIEW_MIME",
    "ClientOverride",
    "Mode",
    "apps_for",
    "declared_modes",
    "declares_apps",
    "modes_for",
]


_CLAUSE = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*([0-9][0-9A-Za-z.\-+]*)\s*$")
_OPS: dict[str, Callable[[tuple[int, ...], tuple[int, ...]], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}


def _version(text: str) -> tuple[int, ...]:
    """The numeric release of a version string: "1.4.2-beta" -> (1, 4, 2)."""
    release = re.match(r"\d+(\.\d+)*", text.strip().lstrip("vV"))
    return tuple(int(p) for p in release.group(0).split(".")) if release else ()


def _pad(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)), b + (0,) * (width - len(b))


@dataclass(frozen=True)
class ClientOverride:
    """What a client really shows, whatever it declares.

    Args:
        name: glob matched against `clientInfo.name`, case-insensitively.
        modes: the elicitation modes the client really shows; `()` for none; None (the default): as declared.
        versions: optional comma-separated range such as ">=1.2,<2"; compared
            on the numeric release (pre-release tags are ignored).
        apps: whether the client really renders elicitkit's form view in the chat (MCP Apps, docs/apps.md):
            False for a host that declares the apps extension and renders nothing, True for one that renders
            views without declaring it; None (the default): as declared.

    Raises:
        ValueError: an unknown mode, a version range that cannot be read, or an override that states nothing
            (neither `modes` nor `apps`).
    """

    name: str
    modes: Sequence[Mode] | None = None
    versions: str | None = None
    apps: bool | None = None
    _clauses: tuple[tuple[str, tuple[int, ...]], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.modes is None and self.apps is None:
            raise ValueError(
                f"ClientOverride({self.name!r}) states nothing: give the modes the client really shows "
                "(modes=() for none) and/or whether it renders elicitkit's view (apps=False)"
            )
        unknown = set(self.modes or ()) - {"form", "url"}
        if unknown:
            raise ValueError(f"ClientOverride modes must be 'form' and/or 'url', not {sorted(unknown)}")
        if self.apps is not None and type(self.apps) is not bool:
            raise ValueError(f"ClientOverride apps must be True, False or None, not {self.apps!r}")
        clauses = []
        for part in (self.versions or "").split(","):
            if not part.strip():
                continue
            match = _CLAUSE.match(part)
            if match is None:
                raise ValueError(f"Cannot read version range {self.versions!r}: use e.g. '>=1.2,<2'")
            clauses.append((match.group(1), _version(match.group(2))))
        object.__setattr__(self, "_clauses", tuple(clauses))

    def matches(self, info: Implementation | None) -> bool:
        if info is None or not fnmatchcase(info.name.lower(), self.name.lower()):
            return False
        if not self._clauses:
            return True
        have = _version(info.version or "")
        if not have:
            return False
        return all(_OPS[op](*_pad(have, want)) for op, want in self._clauses)


def declared_modes(caps: ClientCapabilities | None) -> frozenset[Mode]:
    """The modes a capability object declares. A bare `elicitation: {}` means form; so does
    `experimental.elicitation`, where clients from before elicitation was standard declare it."""
    if caps is None:
        return _NONE
    elicitation = caps.elicitation
    if elicitation is None:
        experimental = caps.experimental
        early = experimental.get("elicitation") if isinstance(experimental, dict) else None
        return _FORM if isinstance(early, dict) else _NONE
    if elicitation.url is None:
        return _FORM
    return _BOTH if elicitation.form is not None else _URL


# Read once per question: the four answers, built once.
_NONE: frozenset[Mode] = frozenset()
_FORM: frozenset[Mode] = frozenset({"form"})
_URL: frozenset[Mode] = frozenset({"url"})
_BOTH: frozenset[Mode] = frozenset({"form", "url"})


APPS_EXTENSION = "io.modelcontextprotocol/ui"
"""MCP Apps: a client that declares this extension renders a tool's HTML view (`_meta.ui.resourceUri`) in the chat."""
VIEW_MIME = "text/html;profile=mcp-app"
"""The MIME type of an MCP Apps view, as `resources/read` serves it and as clients list it in `mimeTypes`."""


def declares_apps(caps: ClientCapabilities | None) -> bool:
    """Whether a capability object declares MCP Apps with HTML views (`extensions["io.modelcontextprotocol/ui"]`;
    a client that lists its `mimeTypes` must list the HTML view's)."""
    extensions = caps.extensions if caps is not None else None
    settings = extensions.get(APPS_EXTENSION) if isinstance(extensions, dict) else None
    if not isinstance(settings, dict):
        return False
    mimes = settings.get("mimeTypes")
    return not isinstance(mimes, list) or VIEW_MIME in mimes


def _override(overrides: Sequence[ClientOverride], info: Implementation | None) -> ClientOverride | None:
    """The first override that matches the client (the one that speaks for it), if any."""
    for override in overrides:
        if override.matches(info):
            return override
    return None


def modes_for(
    overrides: Sequence[ClientOverride], info: Implementation | None, caps: ClientCapabilities | None
) -> frozenset[Mode]:
    """The first matching override's modes, else (or when it states none) the declared ones."""
    override = _override(overrides, info) if overrides else None
    if override is None or override.modes is None:
        return declared_modes(caps)
    return frozenset(override.modes)


def apps_for(overrides: Sequence[ClientOverride], info: Implementation | None, caps: ClientCapabilities | None) -> bool:
    """Whether the client renders elicitkit's view: the first matching override says, else (or when it does not
    say) what the client declares."""
    override = _override(overrides, info) if overrides else None
    if override is None or override.apps is None:
        return declares_apps(caps)
    return override.apps
