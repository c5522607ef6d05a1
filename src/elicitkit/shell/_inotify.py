"""Waking up when a file lands in a folder, without polling: Linux's inotify, read on the event loop.

mcp-bash's file protocol has a tool write `elicit.request` atomically (a
temporary file renamed into place); elicitkit learns of it from the kernel the
moment the rename happens, instead of looking every 100 ms. No thread, no
dependency: three libc calls through ctypes, and the descriptor is awaited
with `anyio.wait_readable`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys
from pathlib import Path

import anyio

__all__ = ["FolderWatch", "available"]

_IN_CLOSE_WRITE = 0x00000008
_IN_MOVED_TO = 0x00000080
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; the name follows, NUL-padded to `len`


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1  # noqa: B018 - probing that the symbol exists
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _libc()


def available() -> bool:
    """True where the kernel can tell elicitkit about new files (Linux)."""
    return _LIBC is not None


class FolderWatch:
    """Names of files written (closed after writing) or renamed into one folder, as they happen."""

    def __init__(self, folder: Path) -> None:
        if _LIBC is None:
            raise OSError(errno.ENOSYS, "inotify is not available on this system")
        fd = _LIBC.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        if _LIBC.inotify_add_watch(fd, os.fsencode(folder), _IN_CLOSE_WRITE | _IN_MOVED_TO) < 0:
            code = ctypes.get_errno()
            os.close(fd)
            raise OSError(code, f"cannot watch {folder}")
        self._fd: int | None = fd
        self._pending: list[str] = []

    async def next_name(self) -> str:
        """The next file name that landed in the folder (waits for one)."""
        while not self._pending:
            if self._fd is None:
                raise anyio.ClosedResourceError
            await anyio.wait_readable(self._fd)
            try:
                data = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                continue
            self._pending.extend(_names(data))
        return self._pending.pop(0)

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            anyio.notify_closing(fd)  # a task waiting on it wakes with ClosedResourceError
            os.close(fd)


def _names(data: bytes) -> list[str]:
    names = []
    offset = 0
    while offset + _EVENT.size <= len(data):
        _, _, _, length = _EVENT.unpack_from(data, offset)
        start = offset + _EVENT.size
        raw = data[start : start + length].rstrip(b"\0")
        if raw:
            names.append(os.fsdecode(raw))
        offset = start + length
    return names
