"""Serving a folder of shell tools on an `Elicitation`'s server: `add_shell_tools` (see elicitkit.shell)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError
from mcp_types import CallToolResult, TextContent

from elicitkit import _mcp
from elicitkit._mcp import ToolContext
from elicitkit._servers import seam_for
from elicitkit._timeouts import SERVER_DEFAULT, Timeout, check_seconds
from elicitkit.shell._folder import FolderError, ShellTool
from elicitkit.shell._project import Project, find_project
from elicitkit.shell._runner import SDK_DIR, Options, run_tool

if TYPE_CHECKING:
    from elicitkit._elicitation import Elicitation

__all__ = ["add_project", "add_shell_tools", "sdk_path"]

MCP_BASH_QUESTION_TIMEOUT = 30.0  # seconds mcp-bash's helpers wait for an answer (MCPBASH_ELICITATION_TIMEOUT)


def sdk_path() -> Path:
    """The shell SDK's `tool-sdk.sh` (what `MCP_SDK/tool-sdk.sh` is inside a served tool)."""
    return SDK_DIR / "tool-sdk.sh"


def add_shell_tools(
    hitl: Elicitation,
    folder: str | os.PathLike[str],
    *,
    timeout: float | None = None,
    question_timeout: Timeout = SERVER_DEFAULT,
    inherit_env: bool = False,
    env: Mapping[str, str] | None = None,
) -> list[ShellTool]:
    """Serve every tool in `folder` on `hitl`'s server, asking their questions through `hitl`.

    Args:
        hitl: the server's `Elicitation`.
        folder: an mcp-bash project folder (`tools/`, `server.d/`), its
            `tools/` folder, or a folder holding several projects; tools are
            found in every layout mcp-bash finds them in (see `elicitkit.shell._folder`).
            Tools run with their project folder as their working directory.
        timeout: seconds a tool may run unless its metadata says `timeoutSecs`;
            `None` for no limit. Time spent waiting for a person does not count.
        question_timeout: seconds a question from the shell SDK or `elicitkit
            ask` waits unless it says; by default the server-wide timeout.
            mcp-bash's helpers (`mcp_elicit*`, the file protocol) give up after
            `MCPBASH_ELICITATION_TIMEOUT` seconds (30 by default), and their questions are withdrawn then.
        inherit_env: give tools the server's whole environment instead of a
            minimal one (PATH, HOME, LANG, ...). elicitkit's secrets are never passed.
        env: variables added to every tool's environment.

    Returns:
        The tools added, sorted by name.

    Raises:
        FolderError: the folder, a tool's metadata or `register.json` is
            malformed, or a name is taken; the message names the file.
    """
    project = find_project(folder)
    add_project(hitl, project, timeout=timeout, question_timeout=question_timeout, inherit_env=inherit_env, env=env)
    return project.tools


def add_project(
    hitl: Elicitation,
    project: Project,
    *,
    timeout: float | None = None,
    question_timeout: Timeout = SERVER_DEFAULT,
    inherit_env: bool = False,
    env: Mapping[str, str] | None = None,
) -> None:
    """Serve `project`'s tools on `hitl`'s server (what `add_shell_tools` does once it has found them)."""
    check_seconds(timeout, "timeout")
    server = seam_for(hitl.server)
    options = Options(
        timeout=timeout,
        question_timeout=question_timeout,
        file_question_timeout=mcp_bash_question_timeout(os.environ),
        mcp_bash=project.mcp_bash,
        inherit_env=inherit_env,
        env=env,
    )
    for tool in project.tools:
        try:
            server.add_raw_tool(
                _handler(hitl, tool, project.root, options),
                name=tool.name,
                description=tool.description,
                input_schema=tool.input_schema,
                output_schema=tool.output_schema,
                title=tool.title,
                annotations=tool.annotations,
                meta=tool.meta,
            )
        except ValueError as exc:
            raise FolderError(f"{tool.script}: {exc}") from None


def mcp_bash_question_timeout(environ: Mapping[str, str]) -> float:
    """How long mcp-bash's own helpers wait for an answer: MCPBASH_ELICITATION_TIMEOUT seconds, else 30."""
    given = environ.get("MCPBASH_ELICITATION_TIMEOUT", "")
    try:
        seconds = float(given)
    except ValueError:
        return MCP_BASH_QUESTION_TIMEOUT
    return seconds if 0 < seconds < float("inf") else MCP_BASH_QUESTION_TIMEOUT


def _handler(hitl: Elicitation, tool: ShellTool, project: Path, options: Options) -> _mcp.RawHandler:
    try:
        validator = Draft202012Validator(tool.input_schema)
        validator.check_schema(tool.input_schema)
    except SchemaError as exc:
        raise FolderError(f"{tool.script}: inputSchema is not a valid JSON schema: {exc.message}") from None

    async def call(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        problems = [_problem(error) for error in validator.iter_errors(arguments)]
        if problems:  # the model's mistake to read and correct, as the SDK reports a Python tool's
            text = f"Invalid arguments for tool {tool.name}: " + "; ".join(sorted(problems))
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        return await run_tool(hitl, tool, project, options, arguments, ctx)

    return call


def _problem(error: ValidationError) -> str:
    where = "/".join(str(part) for part in error.absolute_path)
    # The rejected value is the caller's data: name where, and why by keyword, without echoing it.
    return f"{where or '(arguments)'}: fails {error.validator!r}" + (
        f" ({error.message})" if error.validator in ("required", "additionalProperties") else ""
    )
