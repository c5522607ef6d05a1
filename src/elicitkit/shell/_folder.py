"""Finding the tools under a `tools/` folder, by every layout mcp-bash finds them in.

```
tools/
  hello/
    tool.meta.json      # {"name", "description", "inputSchema" (or "arguments"), "outputSchema"?, "timeoutSecs"?, ...}
    tool.sh             # the script: any file named tool or tool.<ext> (bash, Python, Node, a binary)
  backup/
    backup.sh           # <name>.sh with <name>.meta.json (or <name>.sh.meta.json) beside it
    backup.meta.json
  report/
    report.py           # no metadata file: a `# mcp: {...}` line in its first 10 lines describes it
```

As mcp-bash does, every file under a tool folder (at any depth) is a tool
when it is executable, ends in `.sh` / `.bash`, or starts with `#!`; hidden
files and folders, `*.meta.json` and `smoke.sh` are not, nor files directly
in `tools/`. A script without the executable bit runs through the
interpreter its `#!` line names, or `bash`. Where mcp-bash would skip a
malformed metadata file silently, elicitkit refuses the folder naming the
file and the reason: a tool that serves the wrong schema is worse than one
that does not start.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elicitkit._errors import ElicitationError

__all__ = ["FolderError", "ShellTool", "scan_tools", "tool_from_meta"]

META = "tool.meta.json"
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
_ANY_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}
_HEADER = re.compile(r"\bmcp:\s*(\{.*)$")
_NOT_TOOLS = {"smoke.sh"}  # mcp-bash's scaffolded smoke test lives beside tool.sh


class FolderError(ElicitationError, ValueError):
    """A tools folder, or a tool in it, cannot be served as it is; the message names the file and the reason."""


@dataclass(frozen=True)
class ShellTool:
    """One tool: where it lives, how it is run, and what it says of itself."""

    name: str
    script: Path
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=lambda: dict(_ANY_ARGUMENTS))
    output_schema: dict[str, Any] | None = None
    title: str | None = None
    annotations: dict[str, Any] | None = None
    timeout: float | None = None  # seconds of the script's own running time; None: the server's default
    metadata: dict[str, Any] = field(default_factory=dict[str, Any])
    meta: dict[str, Any] | None = None  # the tool's `_meta` in tools/list (an MCP Apps UI, for one)
    interpreter: tuple[str, ...] = ()  # what runs a script without the executable bit: its #! line, or bash
    project: Path | None = None  # its working directory (MCPBASH_PROJECT_ROOT); None: the folder served

    @property
    def command(self) -> list[str]:
        return [*self.interpreter, str(self.script)]


def scan_tools(tools_dir: Path, project: Path) -> list[ShellTool]:
    """Every tool under `tools_dir`, in mcp-bash's layouts, unsorted.

    Raises:
        FolderError: a metadata file is malformed, or a `tool.meta.json` has no script beside it.
    """
    found: list[ShellTool] = []
    for folder, files in _tool_folders(tools_dir):
        used: set[str] = set()
        for script in files:
            if not _is_script(script):
                continue
            meta_path = _meta_for(script)
            if meta_path is not None:
                used.add(meta_path.name)
            found.append(_tool(script, meta_path, project))
        if (folder / META).is_file() and META not in used:
            raise FolderError(f"{folder} has {META} but no tool script (tool.sh, tool.py, ...) beside it")
    return found


def tool_from_meta(meta: dict[str, Any], where: Path, script: Path, project: Path) -> ShellTool:
    """A tool described by `meta` (a `*.meta.json` or a `register.json` entry at `where`), run from `script`."""
    name = meta.get("name", _default_name(script))
    return ShellTool(
        name=_checked_name(name, where),
        script=script,
        description=_text(meta, "description", where) or "",
        input_schema=_input_schema(meta, where),
        output_schema=_schema(meta, "outputSchema", where),
        title=_text(meta, "title", where),
        annotations=_object(meta, "annotations", where),
        timeout=_timeout(meta, where),
        metadata=meta,
        meta=_object(meta, "_meta", where),
        interpreter=interpreter_for(script),
        project=project,
    )


def interpreter_for(script: Path) -> tuple[str, ...]:
    """What runs `script`: nothing before it when it is executable, else its `#!` line's program, else bash."""
    if os.access(script, os.X_OK):
        return ()
    try:
        with script.open("rb") as f:
            first = f.readline(512)
    except OSError as exc:
        raise FolderError(f"{script}: cannot be read ({exc.strerror})") from None
    if first.startswith(b"#!"):
        # As the kernel reads it: the program, then everything after it as one argument.
        program, _, argument = first[2:].decode("utf-8", "replace").strip().partition(" ")
        if program:
            return (program, argument.strip()) if argument.strip() else (program,)
    return ("bash",)


def _tool_folders(tools_dir: Path) -> Iterator[tuple[Path, list[Path]]]:
    """Each folder under `tools_dir` (not `tools_dir` itself, nothing hidden) with its files, sorted."""
    for dirpath, dirnames, filenames in os.walk(tools_dir):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        folder = Path(dirpath)
        if folder == tools_dir:
            continue
        yield folder, [folder / f for f in sorted(filenames) if not f.startswith(".")]


def _is_script(path: Path) -> bool:
    if path.name.endswith(".meta.json") or path.name in _NOT_TOOLS or not path.is_file():
        return False
    if os.access(path, os.X_OK) or path.suffix in (".sh", ".bash"):
        return True
    try:
        with path.open("rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


def _meta_for(script: Path) -> Path | None:
    """`<file>.meta.json`, else `<stem>.meta.json` (so tool.sh's is tool.meta.json), as mcp-bash looks."""
    for candidate in (script.with_name(script.name + ".meta.json"), script.with_name(script.stem + ".meta.json")):
        if candidate.is_file():
            return candidate
    return None


def _tool(script: Path, meta_path: Path | None, project: Path) -> ShellTool:
    if meta_path is not None:
        return tool_from_meta(_read_meta(meta_path), meta_path, script, project)
    header = _header(script)
    if header is not None:
        return tool_from_meta(header, script, script, project)
    return ShellTool(
        name=_checked_name(_default_name(script), script),
        script=script,
        interpreter=interpreter_for(script),
        project=project,
    )


def _default_name(script: Path) -> str:
    # mcp-bash names a tool without metadata after its file; elicitkit's tool/ folders after the folder.
    return script.parent.name if script.stem == "tool" else script.stem


def _read_meta(path: Path) -> dict[str, Any]:
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FolderError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise FolderError(f"{path}: must be a JSON object")
    return meta


def _header(script: Path) -> dict[str, Any] | None:
    """The JSON after `mcp:` in a script's first 10 lines (mcp-bash's inline metadata), if any."""
    try:
        with script.open("rb") as f:
            lines = [f.readline(4096) for _ in range(10)]
    except OSError:
        return None
    for raw in lines:
        match = _HEADER.search(raw.decode("utf-8", "replace").strip())
        if match is None:
            continue
        try:
            meta = json.loads(match.group(1))
        except json.JSONDecodeError as exc:
            raise FolderError(f"{script}: the '# mcp:' line is not JSON ({exc})") from None
        if not isinstance(meta, dict):
            raise FolderError(f"{script}: the '# mcp:' line must hold a JSON object")
        return meta
    return None


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


def _input_schema(meta: dict[str, Any], where: Path) -> dict[str, Any]:
    # mcp-bash reads "arguments" where there is no "inputSchema" (its older name, still in its tests).
    key = "inputSchema" if meta.get("inputSchema") is not None else "arguments"
    return _schema(meta, key, where) or dict(_ANY_ARGUMENTS)


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
