"""The roots a shell tool works within: the client's, or mcp-bash's fallbacks when it names none.

A tool sees them as mcp-bash hands them over: `MCP_ROOTS_JSON` (`[{"uri",
"name", "path"}]`), `MCP_ROOTS_PATHS` (one absolute path a line) and
`MCP_ROOTS_COUNT`. On 2025-11-25 the client is asked (`roots/list`) on each
call when it declares roots; 2026-07-28 has no server-to-client requests, so
there, and for a client without roots, mcp-bash's fallbacks apply in its
order: `MCPBASH_ROOTS` (colon-separated, relative to the project), the
project's `config/roots.json` (`{"roots": [{"path", "name"?}]}`), and the
project folder itself. Every root is resolved (links followed) and must
exist; one that does not is left out, with a warning.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import anyio

from elicitkit import _mcp
from elicitkit._mcp import ToolContext

__all__ = ["Root", "roots_env", "roots_for"]

logger = logging.getLogger("elicitkit.shell")

ASK_CLIENT_WITHIN = 5.0  # seconds a client may take to list its roots before the fallbacks are used


@dataclass(frozen=True)
class Root:
    path: Path
    name: str

    @property
    def uri(self) -> str:
        return "file://" + quote(str(self.path))


async def roots_for(ctx: ToolContext, project: Path, environ: Mapping[str, str]) -> list[Root]:
    """The roots of this call: the client's when it names any, else mcp-bash's fallbacks."""
    uris: list[str] | None = None
    try:
        with anyio.move_on_after(ASK_CLIENT_WITHIN):
            uris = await _mcp.list_roots(_mcp.request_context(ctx))
    except Exception as exc:  # the client failed roots/list: mcp-bash keeps to its fallbacks, quietly
        logger.debug("shell tool: roots/list failed (%s); using the project's roots", exc)
    if uris:
        return _unique([root for uri in uris if (root := _from_uri(uri)) is not None])
    return fallback_roots(project, environ)


def fallback_roots(project: Path, environ: Mapping[str, str]) -> list[Root]:
    """`MCPBASH_ROOTS`, else `config/roots.json`, else the project folder."""
    given = environ.get("MCPBASH_ROOTS", "")
    if given.strip():
        return _unique([r for p in given.split(":") if p and (r := _local(project / p, p, "MCPBASH_ROOTS"))])
    config = project / "config" / "roots.json"
    if config.is_file():
        found = _unique([r for entry in _config_entries(config) if (r := _config_root(project, entry, config))])
        if found:
            return found
    return [Root(project.resolve(), project.name)]


def roots_env(roots: list[Root]) -> dict[str, str]:
    """The variables mcp-bash gives a tool for its roots."""
    listed: list[dict[str, Any]] = [{"uri": r.uri, "name": r.name, "path": str(r.path)} for r in roots]
    return {
        "MCP_ROOTS_JSON": json.dumps(listed, ensure_ascii=False),
        "MCP_ROOTS_PATHS": "\n".join(str(r.path) for r in roots),
        "MCP_ROOTS_COUNT": str(len(roots)),
    }


def _from_uri(uri: str) -> Root | None:
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        logger.warning("shell tool: ignored a root that is not a local file:// URI")
        return None
    path = unquote(parts.path)
    return _local(Path(path), path, "the client's roots")


def _local(path: Path, given: str, source: str, name: str | None = None) -> Root | None:
    resolved = path.resolve()
    if not resolved.is_dir() or not os.access(resolved, os.R_OK):
        logger.warning("shell tool: %s: %s is not a readable folder; left out", source, given)
        return None
    return Root(resolved, name or resolved.name or str(resolved))


def _config_entries(config: Path) -> list[Any]:
    try:
        body = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        logger.warning("shell tool: %s is not readable JSON (%s); using the project folder", config, exc)
        return []
    entries = body.get("roots") if isinstance(body, dict) else None
    return entries if isinstance(entries, list) else []


def _config_root(project: Path, entry: object, config: Path) -> Root | None:
    path = entry.get("path") if isinstance(entry, dict) else None
    if not isinstance(path, str) or not path:
        logger.warning("shell tool: %s: an entry without a path; left out", config)
        return None
    name = entry.get("name") if isinstance(entry, dict) else None
    return _local(project / path, path, str(config), name if isinstance(name, str) and name else None)


def _unique(roots: list[Root]) -> list[Root]:
    seen: dict[Path, Root] = {}
    for root in roots:
        seen.setdefault(root.path, root)
    return list(seen.values())
