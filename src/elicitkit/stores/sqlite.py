"""SQLite store: the embedded, durable default for one machine.

One file, opened in WAL mode, survives process restarts and crashes; its tables
(`SCHEMA`) are created when missing, so a file from an older version gains the
newer ones, and its older tables gain the columns added since (`_migrate`). The
standard library's `sqlite3` is blocking, so every operation runs in a worker
thread; one connection serialised by a lock keeps the store safe to share
between tasks. Pair it with a `MemoryBroker`: the processes that share a machine
do not share memory, so several processes on one file need Redis instead.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import anyio.to_thread

__all__ = ["SQLiteStore"]

T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    record BLOB NOT NULL,
    expires_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS journal (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    entry BLOB NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS questions (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    record BLOB NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS questions_by_run ON questions (run_id);
CREATE TABLE IF NOT EXISTS once (
    token TEXT PRIMARY KEY,
    expires_at REAL NOT NULL,
    value BLOB NOT NULL DEFAULT x'31'
);
CREATE TABLE IF NOT EXISTS nodes (
    node TEXT PRIMARY KEY,
    expires_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY,
    record BLOB NOT NULL,
    expires_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS inbox (
    id TEXT PRIMARY KEY,
    inbox TEXT NOT NULL,
    record BLOB NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS inbox_by_inbox ON inbox (inbox);
"""


class SQLiteStore:
    """A `Store` in one SQLite file at `path` (created if missing; its directory must exist).

    A run's journal lives as long as the run: `delete_run` removes it, and `sweep`
    removes the journal of a run that has expired or was never stored.
    Raises `sqlite3.Error` when the file cannot be opened or written.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        # One connection shared by the worker threads; `_lock` makes sure only one uses it at a time. Opened now, so
        # a file that cannot be used fails here; `aclose` closes it and the next operation opens it again.
        self._db: sqlite3.Connection | None = _connect(self.path)

    async def put_run(self, run_id: str, owner: str, record: bytes, expires_at: float) -> None:
        await self._write(
            "INSERT OR REPLACE INTO runs (id, owner, record, expires_at) VALUES (?, ?, ?, ?)",
            (run_id, owner, record, expires_at),
        )

    async def get_run(self, run_id: str) -> tuple[str, bytes] | None:
        rows = await self._read(
            "SELECT owner, record FROM runs WHERE id = ? AND expires_at > ?",
            (run_id, time.time()),
        )
        return (rows[0][0], rows[0][1]) if rows else None

    async def claim_run(self, run_id: str, expected_owner: str, new_owner: str) -> bool:
        changed = await self._write(
            "UPDATE runs SET owner = ? WHERE id = ? AND owner = ? AND expires_at > ?",
            (new_owner, run_id, expected_owner, time.time()),
        )
        return changed == 1

    async def delete_run(self, run_id: str) -> None:
        def delete(db: sqlite3.Connection) -> None:
            with _transaction(db):
                _forget_run(db, run_id)

        await self._run(delete)

    async def put_run_with_question(
        self,
        run_id: str,
        owner: str,
        record: bytes,
        expires_at: float,
        question_id: str,
        question: bytes,
        question_expires_at: float,
    ) -> None:
        def put(db: sqlite3.Connection) -> None:
            with _transaction(db):
                db.execute(
                    "INSERT OR REPLACE INTO runs (id, owner, record, expires_at) VALUES (?, ?, ?, ?)",
                    (run_id, owner, record, expires_at),
                )
                db.execute(
                    "INSERT OR REPLACE INTO questions (id, run_id, record, expires_at) VALUES (?, ?, ?, ?)",
                    (question_id, run_id, question, question_expires_at),
                )

        await self._run(put)

    async def put_owned_run(self, run_id: str, owner: str, record: bytes, expires_at: float) -> str | None:
        def put(db: sqlite3.Connection) -> str | None:
            with _transaction(db):
                row = db.execute(
                    "SELECT owner FROM runs WHERE id = ? AND expires_at > ?", (run_id, time.time())
                ).fetchone()
                if row is not None and row[0] != owner:
                    return str(row[0])
                db.execute(
                    "INSERT OR REPLACE INTO runs (id, owner, record, expires_at) VALUES (?, ?, ?, ?)",
                    (run_id, owner, record, expires_at),
                )
                return None

        other: str | None = await self._run(put)
        return other

    async def delete_owned_run(self, run_id: str, owner: str) -> bool:
        def delete(db: sqlite3.Connection) -> bool:
            with _transaction(db):
                row = db.execute(
                    "SELECT owner FROM runs WHERE id = ? AND expires_at > ?", (run_id, time.time())
                ).fetchone()
                if row is not None and row[0] != owner:
                    return False
                _forget_run(db, run_id)
                return True

        deleted: bool = await self._run(delete)
        return deleted

    async def append_journal(self, run_id: str, seq: int, entry: bytes) -> bool:
        inserted = await self._write(_APPEND, (run_id, seq, entry))
        return inserted == 1

    async def journal(self, run_id: str) -> dict[int, bytes]:
        rows = await self._read("SELECT seq, entry FROM journal WHERE run_id = ?", (run_id,))
        return dict(rows)

    async def put_question(self, question_id: str, run_id: str, record: bytes, expires_at: float) -> None:
        await self._write(
            "INSERT OR REPLACE INTO questions (id, run_id, record, expires_at) VALUES (?, ?, ?, ?)",
            (question_id, run_id, record, expires_at),
        )

    async def get_question(self, question_id: str) -> tuple[str, bytes] | None:
        rows = await self._read(
            "SELECT run_id, record FROM questions WHERE id = ? AND expires_at > ?",
            (question_id, time.time()),
        )
        return (rows[0][0], rows[0][1]) if rows else None

    async def run_questions(self, run_id: str) -> dict[str, bytes]:
        rows = await self._read(
            "SELECT id, record FROM questions WHERE run_id = ? AND expires_at > ?",
            (run_id, time.time()),
        )
        return dict(rows)

    async def delete_question(self, question_id: str) -> None:
        await self._write(_FORGET_QUESTION, (question_id,))

    async def use_once(self, token: str, expires_at: float, value: bytes = b"1") -> bool:
        inserted = await self._write(_SPEND, (token, expires_at, value, time.time()))
        return inserted == 1

    async def spent(self, token: str) -> bytes | None:
        rows = await self._read("SELECT value FROM once WHERE token = ? AND expires_at > ?", (token, time.time()))
        return rows[0][0] if rows else None

    async def take_round(
        self,
        run_id: str,
        token: str,
        expires_at: float,
        entries: Mapping[int, bytes],
        answered: Sequence[str],
        value: bytes = b"1",
    ) -> set[int] | None:
        def take(db: sqlite3.Connection) -> set[int] | None:
            with _transaction(db):
                if db.execute(_SPEND, (token, expires_at, value, time.time())).rowcount != 1:
                    return None
                written = {seq for seq, entry in entries.items() if db.execute(_APPEND, (run_id, seq, entry)).rowcount}
                db.executemany(_FORGET_QUESTION, [(question_id,) for question_id in answered])
                return written

        taken: set[int] | None = await self._run(take)
        return taken

    async def put_task(self, task_id: str, record: bytes, expires_at: float) -> None:
        await self._write(
            "INSERT OR REPLACE INTO tasks (id, record, expires_at) VALUES (?, ?, ?)", (task_id, record, expires_at)
        )

    async def get_task(self, task_id: str) -> bytes | None:
        rows = await self._read("SELECT record FROM tasks WHERE id = ? AND expires_at > ?", (task_id, time.time()))
        return rows[0][0] if rows else None

    async def put_inbox_entry(self, inbox: str, entry_id: str, record: bytes, expires_at: float) -> None:
        await self._write(
            "INSERT OR REPLACE INTO inbox (id, inbox, record, expires_at) VALUES (?, ?, ?, ?)",
            (entry_id, inbox, record, expires_at),
        )

    async def inbox_entries(self, inbox: str) -> dict[str, bytes]:
        rows = await self._read(
            "SELECT id, record FROM inbox WHERE inbox = ? AND expires_at > ?",
            (inbox, time.time()),
        )
        return dict(rows)

    async def delete_inbox_entry(self, inbox: str, entry_id: str) -> None:
        await self._write("DELETE FROM inbox WHERE id = ? AND inbox = ?", (entry_id, inbox))

    async def heartbeat(self, node: str, expires_at: float) -> None:
        await self._write("INSERT OR REPLACE INTO nodes (node, expires_at) VALUES (?, ?)", (node, expires_at))

    async def is_alive(self, node: str) -> bool:
        rows = await self._read("SELECT 1 FROM nodes WHERE node = ? AND expires_at > ?", (node, time.time()))
        return bool(rows)

    async def sweep(self) -> int:
        now = time.time()

        def sweep(db: sqlite3.Connection) -> int:
            with _transaction(db):
                swept = db.execute("DELETE FROM runs WHERE expires_at <= ?", (now,)).rowcount
                swept += db.execute("DELETE FROM journal WHERE run_id NOT IN (SELECT id FROM runs)").rowcount
                for table in ("questions", "once", "nodes", "tasks", "inbox"):
                    swept += db.execute(f"DELETE FROM {table} WHERE expires_at <= ?", (now,)).rowcount
            return swept

        return await self._run(sweep)

    async def aclose(self) -> None:
        """Close the connection (at once, not when the garbage collector gets to it); using the store reopens it."""

        def close() -> None:
            with self._lock:
                db, self._db = self._db, None
                if db is not None:
                    db.close()

        await anyio.to_thread.run_sync(close)

    async def _read(self, sql: str, params: tuple[object, ...]) -> list[tuple[Any, ...]]:
        return await self._run(lambda db: db.execute(sql, params).fetchall())

    async def _write(self, sql: str, params: tuple[object, ...]) -> int:
        return await self._run(lambda db: db.execute(sql, params).rowcount)

    async def _run(self, operation: Callable[[sqlite3.Connection], T]) -> T:
        def locked() -> T:
            with self._lock:
                if self._db is None:
                    self._db = _connect(self.path)
                return operation(self._db)

        return await anyio.to_thread.run_sync(locked)


# One statement, so atomic: it inserts a new token or revives one whose memory expired, never a live one.
_SPEND = (
    "INSERT INTO once (token, expires_at, value) VALUES (?, ?, ?)"
    " ON CONFLICT (token) DO UPDATE SET expires_at = excluded.expires_at, value = excluded.value"
    " WHERE once.expires_at <= ?"
)
_APPEND = "INSERT OR IGNORE INTO journal (run_id, seq, entry) VALUES (?, ?, ?)"
_FORGET_QUESTION = "DELETE FROM questions WHERE id = ?"


def _connect(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        # In WAL mode NORMAL loses nothing when the process dies (only on power loss) and saves an fsync per write.
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(SCHEMA)
        _migrate(db)
    except BaseException:
        db.close()
        raise
    return db


def _migrate(db: sqlite3.Connection) -> None:
    """Bring the tables of a file from an older version up to `SCHEMA`."""
    if _has_column(db, "once", "value"):
        return
    with _transaction(db):
        # Asked again under the write lock: another process may have migrated the file meanwhile.
        if not _has_column(db, "once", "value"):
            # A token spent before values were kept reads back as b"1", what `use_once` records by default.
            db.execute("ALTER TABLE once ADD COLUMN value BLOB NOT NULL DEFAULT x'31'")


def _has_column(db: sqlite3.Connection, table: str, column: str) -> bool:
    return any(row[1] == column for row in db.execute(f"PRAGMA table_info({table})"))


def _forget_run(db: sqlite3.Connection, run_id: str) -> None:
    db.execute("DELETE FROM runs WHERE id = ?", (run_id,))
    db.execute("DELETE FROM journal WHERE run_id = ?", (run_id,))
    db.execute("DELETE FROM questions WHERE run_id = ?", (run_id,))


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """BEGIN ... COMMIT around a block, ROLLBACK if it raises (the connection is in autocommit mode)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
