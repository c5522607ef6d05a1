"""`elicitkit serve`'s secrets, moved out of its environment before it runs a tool.

Linux shows a process's *initial* environment in `/proc/<pid>/environ` to
anyone who may read it (its user, so every tool it runs), and removing a
variable from `os.environ` later changes nothing there. So `elicitkit serve`,
given a secret (`ELICITKIT_SECRET`, `ELICITKIT_SECRET_FILE` or a FrontMCP variable),
writes them to a pipe and executes itself again (same pid, same arguments,
same stdin and stdout) with an environment that no longer holds them; the new
image reads the pipe once at start and closes it. Neither the server's
`/proc/<pid>/environ` nor a tool's shows a secret, and no child inherits one.

The standard library only: this runs before the server is imported, so the
first image does as little as it can before it is replaced.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Mapping

__all__ = ["MOVED", "hand_over", "taken"]

MOVED = (
    "ELICITKIT_SECRET",
    "MCP_ELICITATION_SECRET",
    "MCP_SESSION_SECRET",
    "MCP_SERVER_SECRET",
    "ELICITKIT_SECRET_FILE",
)  # every variable `_crypto.secrets_from_env` reads a secret from
_PIPE = "ELICITKIT_SECRET_FD"  # in the new image only: the descriptor to read them from


def hand_over(environ: Mapping[str, str] = os.environ) -> None:
    """Execute this program again with the secrets on a pipe, out of its environment.

    Returns, doing nothing, when there is nothing to move, or off POSIX
    (where `exec` does not keep the process). Raises `ValueError` when the
    secrets are larger than a pipe holds, and `OSError` when the program
    cannot be executed again.
    """
    given = {name: environ[name] for name in MOVED if name in environ}
    if not given or os.name != "posix":
        return
    payload = json.dumps(given).encode("utf-8")
    read, write = os.pipe()
    try:
        os.set_blocking(write, False)  # written before the reader exists: it must fit in the pipe at once
        try:
            written = os.write(write, payload)
        except BlockingIOError:
            written = 0
    finally:
        os.close(write)
    if written != len(payload):
        os.close(read)
        raise ValueError(f"the secrets take {len(payload)} bytes, more than can be handed over on a pipe")
    os.set_inheritable(read, True)
    env = {k: v for k, v in environ.items() if k not in MOVED} | {_PIPE: str(read)}
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(*_as_started(), env)


def _as_started() -> tuple[str, list[str]]:
    """What to execute to start this program again as it was started.

    The `elicitkit` script itself when it was started through its own `#!`
    line (so the process keeps its name in `ps`), else the interpreter with
    its original arguments (`python -m elicitkit serve`, `python -X dev ...`).
    """
    script = sys.argv[0]
    if sys.orig_argv[1:] == sys.argv and os.access(script, os.X_OK):
        try:
            with open(script, "rb") as f:
                first = f.readline(4096)
        except OSError:
            first = b""
        if first.startswith(b"#!") and first[2:].split()[:1] == [os.fsencode(sys.orig_argv[0])]:
            return script, sys.argv
    return sys.executable, sys.orig_argv


def taken() -> dict[str, str]:
    """In the new image: the variables `hand_over` moved, read from the pipe and closed; `{}` when none were."""
    named = os.environ.pop(_PIPE, None)
    if named is None:
        return {}
    try:
        fd = int(named)
        if fd <= 2 or not stat.S_ISFIFO(os.fstat(fd).st_mode):
            raise ValueError
    except (ValueError, OSError):
        raise ValueError(f"{_PIPE} must name the pipe elicitkit serve handed its secrets on, not {named!r}") from None
    with os.fdopen(fd, "rb") as pipe:
        moved = json.loads(pipe.read())
    return {name: moved[name] for name in MOVED if isinstance(moved.get(name), str)}
