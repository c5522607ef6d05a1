"""The shape of the source tree: imports go one way, and no module grows past one concept."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "elicitkit"
MAX_LINES = 400


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in SRC.rglob("*.py")}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every elicitkit module `name` imports, including imports under `if TYPE_CHECKING:` and inside functions."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found.add(target if target in known else base)
    return {m for m in found if m in known and m != name}


def test_no_import_cycle_inside_the_package() -> None:
    modules = _modules()
    graph = {name: _imports(name, path, set(modules)) for name, path in modules.items()}
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert cycles == [], "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_sans_io_core_imports_neither_the_sdk_nor_an_event_loop() -> None:
    modules = _modules()
    for name, path in modules.items():
        if not name.startswith("elicitkit._core"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                for imported in names:
                    root = imported.split(".")[0]
                    assert root not in {"mcp", "mcp_types", "anyio", "asyncio", "starlette", "pydantic"}, (
                        f"{name} imports {imported}"
                    )
                    if root == "elicitkit":
                        assert imported.startswith("elicitkit._core"), f"{name} imports {imported}"


# Long for a reason other than holding two concepts, each said here.
WIDE = {
    # The object users hold: one documented method per feature of the public API, each a call into the part that
    # does the work (`Asking`, `Links`, `Hooks`, the engine). Splitting it would only scatter the API.
    "elicitkit._elicitation": 800,
    # The one module allowed to touch the SDK's internals: every seam elicitkit needs of the SDK lives here, by rule.
    "elicitkit._mcp": 420,
    # Every way an answer arrives (a retry, the model, a task, a page, a channel, another node), each branch saying
    # what became of it: to its caller, and to the `lookup_pending` and `publish` stage watchers.
    "elicitkit._engine.answers": 410,
}


def test_no_module_is_longer_than_one_concept() -> None:
    lengths = {name: len(p.read_text().splitlines()) for name, p in _modules().items()}
    long = {name: n for name, n in lengths.items() if n > WIDE.get(name, MAX_LINES)}
    assert long == {}


def test_only_the_mcp_module_touches_sdk_internals() -> None:
    for name, path in _modules().items():
        if name == "elicitkit._mcp":
            continue
        text = path.read_text()
        assert "._lowlevel_server" not in text and "._security" not in text and "._connection" not in text, name


def test_only_the_web_package_imports_what_its_pages_say() -> None:
    """The pages' wording (`_web.messages`) is theirs: what the engine needs of a refusal lives in `_schema`."""
    modules = _modules()
    for name, path in modules.items():
        if not name.startswith("elicitkit._web"):
            assert "elicitkit._web.messages" not in _imports(name, path, set(modules)), name
