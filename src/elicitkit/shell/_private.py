"""A call's private folder on disk: checked before it is trusted, and no file in it opened through a link.

The tool writes in its call folder, so no name there can be taken on trust: it
may be a symbolic link to anywhere the server can reach. Every file the server
opens in the folder is opened relative to the folder's own descriptor (taken
once, when the folder is made, so the folder cannot be swapped under the
server) with `O_NOFOLLOW`, and must be a plain file (or a FIFO, for FIFOs)
owned by the server's user. A reply is written to a temporary created with
`O_CREAT | O_EXCL | O_NOFOLLOW` under a random name and renamed into place, so
nothing the tool planted is ever written through. Before anything the tool
wrote is read, the folder itself is checked: owned by the server's user and
writable by no one else.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["PrivateFolder", "Refused"]

logger = logging.getLogger("elicitkit.shell")

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LINK_ERRORS = (errno.ELOOP, errno.EMLINK)  # what O_NOFOLLOW gives for a link: Linux and macOS, FreeBSD
_FRESH = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_TEMPORARY_TRIES = 8


class Refused(Exception):
    """A name in the call folder, or the folder itself, is not what the server will use; says why."""


class PrivateFolder:
    """A folder only this user can enter (mode 0700), and the only ways the server touches what is in it."""

    def __init__(self, parent: str | None = None) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="elicitkit-call-", dir=parent))
        self._fd = os.open(self.path, _DIR)
        self._removed = False
        self.check()

    def check(self) -> None:
        """Raise `Refused` unless the folder is owned by this server's user and writable by no one else."""
        st = os.fstat(self._fd)
        if st.st_uid != os.geteuid():
            raise Refused(f"the call folder is owned by uid {st.st_uid}, not this server's user")
        if st.st_mode & 0o022:
            mode = stat.S_IMODE(st.st_mode)
            raise Refused(f"the call folder is writable by other users (mode {mode:04o}); it must be 0700")

    def mkfifo(self, name: str) -> None:
        os.mkfifo(name, 0o600, dir_fd=self._fd)

    def exists(self, name: str) -> bool:
        """Whether anything is at `name` (a link too, which is then refused when read)."""
        try:
            os.stat(name, dir_fd=self._fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        return True

    def read(self, name: str) -> bytes:
        """The plain file `name`, which the tool wrote; `Refused` for a link, anything else, or an unsafe folder."""
        self.check()
        fd = self._open(name, os.O_RDONLY | os.O_NONBLOCK)
        try:
            _own(fd, name, stat.S_ISREG, "a plain file")
            with os.fdopen(fd, "rb", closefd=False) as f:
                return f.read()
        finally:
            os.close(fd)

    def take(self, name: str) -> bytes:
        """Read `name` and remove it, whatever it turned out to be (a refused link is removed, not followed)."""
        try:
            return self.read(name)
        finally:
            self.unlink(name)

    def open_fifo(self, name: str, flags: int) -> int:
        """A descriptor on the FIFO `name`; `Refused` for a link or anything that is not a FIFO."""
        fd = self._open(name, flags | os.O_NONBLOCK)
        try:
            _own(fd, name, stat.S_ISFIFO, "a FIFO")
        except Refused:
            os.close(fd)
            raise
        return fd

    def write_atomically(self, name: str, text: str) -> None:
        """Put `text` at `name`: written to a fresh temporary, then renamed over whatever `name` is (never followed)."""
        data = text.encode("utf-8")
        for _ in range(_TEMPORARY_TRIES):
            temporary = f".{name}.{secrets.token_hex(8)}.tmp"
            try:
                fd = os.open(temporary, _FRESH, 0o600, dir_fd=self._fd)
            except FileExistsError:  # something (a link the tool planted?) has this very name: pick another
                logger.warning("shell tool: %s was already in the call folder; the reply uses another name", temporary)
                continue
            break
        else:
            raise Refused(f"no fresh temporary name for {name} in the call folder")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            if self._is_link(name):
                logger.warning(
                    "shell tool: %s was a symbolic link; the reply replaces the link, not what it names", name
                )
            os.replace(temporary, name, src_dir_fd=self._fd, dst_dir_fd=self._fd)
        except BaseException:
            self.unlink(temporary)
            raise

    def touch(self, name: str) -> None:
        """Create `name` if it is not there; a link at `name` is refused, and nothing it names is created."""
        fd = self._open(name, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK)
        os.close(fd)

    def unlink(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=self._fd)

    def remove(self) -> None:
        """Remove the folder and everything in it; a folder the tool moved away is left where it went."""
        if self._removed:
            return
        self._removed = True
        try:
            same = os.path.samestat(os.lstat(self.path), os.fstat(self._fd))
        except OSError:
            same = False
        os.close(self._fd)
        if same:
            shutil.rmtree(self.path, ignore_errors=True)
        else:
            logger.warning("shell tool: the call folder %s was moved or replaced; it is not removed", self.path)

    def _open(self, name: str, flags: int) -> int:
        try:
            return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=self._fd)
        except OSError as exc:
            if exc.errno in _LINK_ERRORS and self._is_link(name):
                raise Refused(f"{name} is a symbolic link; write the file itself in the call folder") from None
            raise

    def _is_link(self, name: str) -> bool:
        try:
            return stat.S_ISLNK(os.stat(name, dir_fd=self._fd, follow_symlinks=False).st_mode)
        except FileNotFoundError:
            return False


def _own(fd: int, name: str, kind: Callable[[int], bool], what: str) -> None:
    st = os.fstat(fd)
    if not kind(st.st_mode):
        raise Refused(f"{name} is not {what}")
    if st.st_uid != os.geteuid():
        raise Refused(f"{name} is owned by uid {st.st_uid}, not this server's user")
