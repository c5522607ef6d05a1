"""The Python code blocks of README.md and docs/*.md, as tests/test_doc_blocks.py runs them.

A block is every ```` ```python ```` fence (or ```` ```py ````, ```` ```python3 ````, at any indentation). The line just before a fence may hold a marker, an HTML
comment a reader never sees:

- `<!-- fragment -->`: a piece that cannot run alone (one option of several, a call that needs a
  workspace of yours); it is not run, only counted.
- `<!-- fragment of examples/NAME.py -->`: a piece of a runnable file the page points to; every
  line of it must appear in that file, so the two cannot drift apart.

Every other block is a program, in one of three shapes:

- a **pytest module**: it defines `test_*` functions (and may make a server to test);
- a **server**: it makes `server = MCPServer(...)` (or `FastMCP(...)`) and ends by serving it
  (`server.run(...)`), as a reader's copy would;
- a **script**: anything else.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

ROOT = Path(__file__).resolve().parents[1]

Kind = Literal["server", "pytest", "script", "fragment"]

_FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?:python3?|py)(?:[ \t].*)?$")
_MARKER = re.compile(r"^\s*<!--\s*fragment(?:\s+of\s+(?P<of>\S+))?\s*-->\s*$")
_SERVERS = {"MCPServer", "FastMCP"}


@dataclass(frozen=True)
class Block:
    """One fenced Python block: where it is, its code (dedented), and what kind of program it is."""

    path: Path
    line: int  # of the opening fence, 1-based
    code: str
    fragment: bool
    fragment_of: str | None

    @property
    def name(self) -> str:
        return f"{shown(self.path)}:{self.line}"

    @property
    def tree(self) -> ast.Module:
        return ast.parse(self.code, filename=self.name)

    @property
    def kind(self) -> Kind:
        if self.fragment:
            return "fragment"
        try:
            body = self.tree.body
        except SyntaxError:
            return "script"  # run as it is, so the failure is Python's own message
        if any(isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name.startswith("test_") for s in body):
            return "pytest"
        if any(_makes_a_server(statement) for statement in body):
            return "server"
        return "script"

    def split_serving(self) -> tuple[ast.Module, ast.stmt | None]:
        """The module without its last statement when that statement serves the server, and that statement."""
        tree = self.tree
        last = tree.body[-1] if tree.body else None
        if last is not None and _serves(last):
            return ast.Module(body=tree.body[:-1], type_ignores=[]), last
        return tree, None

    @property
    def serves_over_stdio(self) -> bool:
        """Whether its last line serves over stdio (`server.run()`), where anything it prints breaks the protocol."""
        serving = self.split_serving()[1]
        calls = [n for n in ast.walk(serving) if isinstance(n, ast.Call)] if serving is not None else []
        return any(_transport(call) in (None, "stdio") for call in calls)


def shown(path: Path) -> str:
    """A page's name as a failure shows it: relative to the repository."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(paths: list[Path] | None = None) -> list[Block]:
    """Every ```` ```python ```` block of the given pages (README.md and docs/*.md by default), in order."""
    found: list[Block] = []
    for path in paths if paths is not None else documents():
        lines = path.read_text(encoding="utf-8").splitlines()
        index = 0
        while index < len(lines):
            fence = _FENCE.match(lines[index])
            if fence is None:
                index += 1
                continue
            indent = fence["indent"]
            end = next(
                (i for i in range(index + 1, len(lines)) if lines[i].strip() == "```"),
                None,
            )
            if end is None:
                raise ValueError(f"{shown(path)}:{index + 1}: a ```python fence that is never closed")
            code = "\n".join(line.removeprefix(indent) for line in lines[index + 1 : end]) + "\n"
            before = next((lines[i] for i in range(index - 1, -1, -1) if lines[i].strip()), "")
            marker = _MARKER.match(before)
            found.append(
                Block(
                    path=path,
                    line=index + 1,
                    code=code,
                    fragment=marker is not None,
                    fragment_of=marker["of"] if marker is not None else None,
                )
            )
            index = end + 1
    return found


def _makes_a_server(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "server" for t in statement.targets)
        and isinstance(statement.value, ast.Call)
        and isinstance(statement.value.func, ast.Name)
        and statement.value.func.id in _SERVERS
    )


def _serves(statement: ast.stmt) -> bool:
    """`server.run(...)`, alone or as the body of `if __name__ == "__main__":`."""
    if isinstance(statement, ast.If):
        return all(_serves(s) for s in statement.body) and not statement.orelse
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and isinstance(statement.value.func, ast.Attribute)
        and statement.value.func.attr == "run"
        and isinstance(statement.value.func.value, ast.Name)
        and statement.value.func.value.id == "server"
    )


def _transport(call: ast.Call) -> str | None:
    given = [*call.args[:1], *(k.value for k in call.keywords if k.arg == "transport")]
    return str(given[0].value) if given and isinstance(given[0], ast.Constant) else None
