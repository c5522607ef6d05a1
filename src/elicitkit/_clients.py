"""Which elicitation modes a client really supports: declared capabilities, corrected by overrides.

Some hosts declare `elicitation` and never render it, or decline everything;
a `ClientOverride` matches them by `clientInfo.name` (a glob, case-insensitive)
and optionally a version range, and states the modes they really support.

```python
Elicitation(server, client_overrides=[
    ClientOverride("acme-desktop", modes=()),                       # declares it, never shows it
    ClientOverride("acme-ide", versions=">=2.0,<2.4", modes=("form",)),
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

__all__ = ["APPS_EXTENSION", "VIEW_MIME", "ClientOverride", "Mode", "declared_modes", "declares_apps", "modes_for"]


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
    """The modes a client really supports, whatever it declares.

    Args:
        name: glob matched against `clientInfo.name`, case-insensitively.
        modes: the elicitation modes the client really shows; `()` for none.
        versions: optional comma-separated range such as ">=1.2,<2"; compared
            on the numeric release (pre-release tags are ignored).
    """

    name: str
    modes: Sequence[Mode] = ()
    versions: str | None = None
    _clauses: tuple[tuple[str, tuple[int, ...]], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        unknown = set(self.modes) - {"form", "url"}
        if unknown:
            raise ValueError(f"ClientOverride modes must be 'form' and/or 'url', not {sorted(unknown)}")
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


def modes_for(
    overrides: Sequence[ClientOverride], info: Implementation | None, caps: ClientCapabilities | None
) -> frozenset[Mode]:
    """The first matching override's modes, else the declared ones."""
    for override in overrides:
        if override.matches(info):
            return frozenset(override.modes)
    return declared_modes(caps)
