"""Finding the tools in a folder, laid out as mcp-bash lays them out.

```
project/                  # the folder served (the working directory of every tool)
  tools/
    hello/
      tool.meta.json      # {"name", "description", "inputSchema", "outputSchema"?, "timeoutSecs"?, ...}
      tool.sh             # any executable named tool or tool.<ext>: bash, Python, Node, a binary
```

`elicitkit serve` takes the project folder or its `tools/` folder itself. A
tool folder without `tool.meta.json` still serves, named after the folder,
taking any arguments.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elicitkit._errors import ElicitationError

__all__ = ["FolderError", "ShellTool", "find_tools"]

META = "tool.meta.json"
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
_ANY_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}


class FolderError(ElicitationError, ValueError):
    """A tools folder, or a tool in it, cannot be served as it is; the message names the file and the reason."""


@dataclass(frozen=True)
class ShellTool:
    """One executable tool: where it lives and what it says of itself."""

    name: str
    script: Path
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=lambda: dict(_ANY_ARGUMENTS))
    output_schema: dict[str, Any] | None = None
    title: str | None = None
    annotations: dict[str, Any] | None = None
    timeout: float | None = None  # seconds of the script's own running time; None: the server's default
    metadata: dict[str, Any] = field(default_factory=dict[str, Any])


def find_tools(folder: str | os.PathLike[str]) -> tuple[Path, list[ShellTool]]:
    """The project root (the tools' working directory) and the tools under it, sorted by name.

    Raises:
        FolderError: the folder is missing, a `tool.meta.json` is malformed, a
            tool has no executable, or two tools share a name.
    """
    root = Path(folder).resolve()
    if not root.is_dir():
        raise FolderError(f"{folder} is not a folder")
    tools_dir = root / "tools" if (root / "tools").is_dir() else root
    project = root
    found: dict[str, ShellTool] = {}
    for meta_or_dir in sorted(tools_dir.iterdir()):
        if not meta_or_dir.is_dir() or meta_or_dir.name.startswith("."):
            continue
        tool = _tool_in(meta_or_dir)
        if tool is None:
            continue
        if tool.name in found:
            raise FolderError(f"two tools are named {tool.name!r}: {found[tool.name].script} and {tool.script}")
        found[tool.name] = tool
    return project, [found[name] for name in sorted(found)]


def _tool_in(folder: Path) -> ShellTool | None:
    meta_path = folder / META
    script = _script_in(folder)
    if not meta_path.is_file():
        return None if script is None else ShellTool(name=_checked_name(folder.name, folder), script=script)
    if script is None:
        raise FolderError(f"{folder} has {META} but no executable tool script (tool.sh, tool.py, ... with +x)")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FolderError(f"{meta_path}: not readable JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise FolderError(f"{meta_path}: must be a JSON object")
    return ShellTool(
        name=_checked_name(meta.get("name", folder.name), meta_path),
        script=script,
        description=_text(meta, "description", meta_path) or "",
        input_schema=_schema(meta, "inputSchema", meta_path) or dict(_ANY_ARGUMENTS),
        output_schema=_schema(meta, "outputSchema", meta_path),
        title=_text(meta, "title", meta_path),
        annotations=_object(meta, "annotations", meta_path),
        timeout=_timeout(meta, meta_path),
        metadata=meta,
    )


def _script_in(folder: Path) -> Path | None:
    candidates = sorted(p for p in folder.iterdir() if p.is_file() and (p.name == "tool" or p.stem == "tool"))
    runnable = [p for p in candidates if p.name != META and os.access(p, os.X_OK)]
    if not runnable:
        non_exec = [p.name for p in candidates if p.name != META]
        if non_exec:
            raise FolderError(f"{folder / non_exec[0]} is not executable: chmod +x it")
        return None
    if len(runnable) > 1:
        raise FolderError(f"{folder} has several tool scripts ({', '.join(p.name for p in runnable)}); keep one")
    return runnable[0]


def _checked_name(name: object, where: Path) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise FolderError(f"{where}: the tool name {name!r} must be 1-128 letters, digits, '_', '-' or '.'")
    return name


def _text(meta: dict[str, Any], key: str, where: Path) -> str | None:
    value = meta.get(key)
    if value is not None and not isinstance(value, str):
        raise FolderError(f"{where}: {key} must be a string")
    return value


def _object(meta: dict[str, Any], key: str, where: Path) -> dict[str, Any] | None:
    value = meta.get(key)
    if value is not None and not isinstance(value, dict):
        raise FolderError(f"{where}: {key} must be a JSON object")
    return value


def _schema(meta: dict[str, Any], key: str, where: Path) -> dict[str, Any] | None:
    schema = _object(meta, key, where)
    if schema is not None and schema.get("type", "object") != "object":
        raise FolderError(f'{where}: {key} must describe an object ("type": "object")')
    return None if schema is None else {"type": "object", **schema}


def _timeout(meta: dict[str, Any], where: Path) -> float | None:
    value = meta.get("timeoutSecs")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise FolderError(f"{where}: timeoutSecs must be a positive number of seconds")
    return float(value)
