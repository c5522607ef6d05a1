"""Shell tools ask people too: a folder of executable tools served with elicitkit's questions.

```python
server = MCPServer("ops")
hitl = Elicitation(server)
add_shell_tools(hitl, "ops/")       # ops/tools/<name>/{tool.meta.json, tool.sh}, as mcp-bash lays them out
```

`elicitkit serve DIR` does the same from the command line. Tools ask through
mcp-bash's file protocol (`MCP_ELICIT_REQUEST_FILE`), elicitkit's shell SDK
(`source "$MCP_SDK/tool-sdk.sh"`) or `elicitkit ask`; every question goes
through `hitl.elicit`. See docs/shell.md.

Like `elicitkit` itself, the package imports its parts on first use: programs
running inside a tool (`elicitkit ask`) start without loading the server.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from elicitkit.shell._add import add_shell_tools, sdk_path
    from elicitkit.shell._folder import FolderError, ShellTool

_HOMES = {
    "FolderError": "elicitkit.shell._folder",
    "ShellTool": "elicitkit.shell._folder",
    "add_shell_tools": "elicitkit.shell._add",
    "sdk_path": "elicitkit.shell._add",
}

__all__ = ["FolderError", "ShellTool", "add_shell_tools", "sdk_path"]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'elicitkit.shell' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
