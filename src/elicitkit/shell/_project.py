"""An mcp-bash project as a whole: where its tools are, what `server.d/` says of the server, `register.json`.

```
project/                      # the folder served: every tool's working directory (MCPBASH_PROJECT_ROOT)
  server.d/
    server.meta.json          # {"name", "title"?, "version"?, "description"?, "instructions"?, "websiteUrl"?}
    server.instructions.md    # instructions, as mcp-bash reads them (server.meta.json's "instructions" wins)
    register.json             # {"version": 1, "tools": [...]}: declared tools instead of the scan
  config/roots.json           # the roots tools see when the client names none (see _roots)
  tools/...                   # see _folder
```

`elicitkit serve` takes a project folder, its `tools/` folder, or a folder
holding several projects (mcp-bash's own `examples/`): each project's tools
run in their own project folder. A project with `server.d/` is an mcp-bash
project, and a failing script fails the call as mcp-bash fails it (a JSON-RPC
error); elsewhere a failing script is an error result the model can read.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elicitkit.shell._folder import FolderError, ShellTool, scan_tools, tool_from_meta

__all__ = ["Project", "ServerInfo", "find_project"]

logger = logging.getLogger("elicitkit.shell")

SERVER_DIR = "server.d"
_REGISTER_KINDS = ("tools", "resources", "resourceTemplates", "prompts", "completions")
_PROJECT_DEPTH = 3  # how deep a folder of projects is searched for them
_REGISTER_MAX = 1024 * 1024  # mcp-bash's MCPBASH_MAX_MANUAL_REGISTRY_BYTES default


@dataclass(frozen=True)
class ServerInfo:
    """What `server.d/server.meta.json` (and `server.instructions.md`) say of the server."""

    name: str | None = None
    title: str | None = None
    version: str | None = None
    description: str | None = None
    instructions: str | None = None
    website_url: str | None = None


@dataclass(frozen=True)
class Project:
    """The folder served: its tools, sorted by name, and what its `server.d/` says."""

    root: Path
    tools: list[ShellTool]
    server: ServerInfo = field(default_factory=ServerInfo)
    mcp_bash: bool = False  # a server.d/ folder: failing scripts fail as mcp-bash fails them


def find_project(folder: str | os.PathLike[str]) -> Project:
    """The project at `folder` (a project, its `tools/`, or a folder of projects) and its tools.

    Raises:
        FolderError: the folder is missing, a metadata file or `register.json`
            is malformed, or two tools share a name; the message names the file.
    """
    root = Path(folder).resolve()
    if not root.is_dir():
        raise FolderError(f"{folder} is not a folder")
    if root.name == "tools" and (root.parent / SERVER_DIR).is_dir():
        root = root.parent  # its tools/ folder given: the project is the folder around it
    homes = [root] if (root / "tools").is_dir() or (root / SERVER_DIR).is_dir() else _projects_under(root)
    if not homes:
        return Project(root, _unique(scan_tools(root, root)))  # the tools folder itself, elicitkit-style
    tools = [tool for home in homes for tool in _tools_of(home)]
    single = homes == [root]
    return Project(
        root,
        _unique(tools),
        server=_server_info(root) if single else ServerInfo(),
        mcp_bash=any((home / SERVER_DIR).is_dir() for home in homes),
    )


def _projects_under(folder: Path) -> list[Path]:
    """The project folders (with a `tools/` folder) below `folder`, as mcp-bash's `examples/` holds them."""
    found: list[Path] = []
    for dirpath, dirnames, _ in os.walk(folder):
        here = Path(dirpath)
        depth = len(here.relative_to(folder).parts)
        # A few levels down (examples/advanced/<project>), not the whole tree of a folder given by mistake.
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")) if depth < _PROJECT_DEPTH else []
        if here != folder and (here / "tools").is_dir():
            found.append(here)
            dirnames[:] = []  # a project's own folders are its own
    return found


def _tools_of(project: Path) -> list[ShellTool]:
    tools_dir = project / "tools"
    declared = _declared_tools(project, tools_dir)
    if declared is not None:
        return declared
    return scan_tools(tools_dir, project) if tools_dir.is_dir() else []


def _unique(tools: list[ShellTool]) -> list[ShellTool]:
    by_name: dict[str, ShellTool] = {}
    for tool in tools:
        if tool.name in by_name:
            raise FolderError(f"two tools are named {tool.name!r}: {by_name[tool.name].script} and {tool.script}")
        by_name[tool.name] = tool
    return [by_name[name] for name in sorted(by_name)]


def _server_info(project: Path) -> ServerInfo:
    meta_path = project / SERVER_DIR / "server.meta.json"
    meta: dict[str, Any] = _json_object(meta_path) if meta_path.is_file() else {}
    text = {key: _string(meta, key, meta_path) for key in ("name", "title", "version", "description", "websiteUrl")}
    instructions = _string(meta, "instructions", meta_path)
    instructions_path = project / SERVER_DIR / "server.instructions.md"
    if instructions is None and instructions_path.is_file():
        try:
            instructions = instructions_path.read_text(encoding="utf-8").strip() or None
        except (OSError, UnicodeDecodeError) as exc:
            raise FolderError(f"{instructions_path}: not readable UTF-8 text ({exc})") from None
    return ServerInfo(
        name=text["name"],
        title=text["title"],
        version=text["version"],
        description=text["description"],
        instructions=instructions,
        website_url=text["websiteUrl"],
    )


def _declared_tools(project: Path, tools_dir: Path) -> list[ShellTool] | None:
    """The tools `server.d/register.json` declares; None where it does not say (the folder is scanned)."""
    path = project / SERVER_DIR / "register.json"
    if not path.is_file():
        return None
    if path.stat().st_size > _REGISTER_MAX:
        raise FolderError(f"{path}: larger than {_REGISTER_MAX} bytes")
    if path.read_bytes().startswith(b"\xef\xbb\xbf"):
        raise FolderError(f"{path}: starts with a UTF-8 BOM; save it as UTF-8 without one")
    body = _json_object(path)
    version = body.get("version")
    if isinstance(version, bool) or version != 1:
        raise FolderError(f'{path}: "version" must be 1')
    unknown = sorted(set(body) - {"version", "_meta", *_REGISTER_KINDS})
    if unknown:
        raise FolderError(f"{path}: unknown keys: {', '.join(unknown)}")
    for kind in _REGISTER_KINDS:
        if body.get(kind) is not None and not isinstance(body[kind], list):
            raise FolderError(f"{path}: {kind} must be an array or null")
    others = [kind for kind in _REGISTER_KINDS[1:] if body.get(kind)]
    if others:
        logger.warning("%s: elicitkit serves tools only; %s not served", path, ", ".join(others))
    entries = body.get("tools")
    if entries is None:
        return None
    return [_declared_tool(entry, index, path, project, tools_dir) for index, entry in enumerate(entries)]


def _declared_tool(entry: object, index: int, path: Path, project: Path, tools_dir: Path) -> ShellTool:
    where = Path(f"{path} (tools[{index}])")
    if not isinstance(entry, dict):
        raise FolderError(f"{where}: must be a JSON object")
    relative = entry.get("path")
    if not isinstance(relative, str) or not relative or "name" not in entry:
        raise FolderError(f'{where}: needs a "name" and a "path" (relative to {tools_dir})')
    script = (tools_dir / relative).resolve()
    if not script.is_relative_to(tools_dir.resolve()):
        raise FolderError(f"{where}: path {relative!r} is outside {tools_dir}")
    if not script.is_file():
        raise FolderError(f"{where}: no script at {script}")
    return tool_from_meta(entry, where, script, project)


def _json_object(path: Path) -> dict[str, Any]:
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FolderError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(body, dict):
        raise FolderError(f"{path}: must be a JSON object")
    return body


def _string(meta: dict[str, Any], key: str, where: Path) -> str | None:
    value = meta.get(key)
    if value is not None and not isinstance(value, str):
        raise FolderError(f"{where}: {key} must be a string")
    return value or None
