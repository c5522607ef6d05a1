"""Redis store: the state shared by every node of a deployment (`RedisBroker`, their messages, is here too;
it lives in `redis_broker`).

Needs redis-py (`pip install 'elicitkit[redis]'`) and Redis >= 6.2 (for `PXAT`).
Every expiring key carries a native TTL, so Redis itself forgets expired runs, their
journals, questions, tokens, heartbeats, tasks and inbox entries, and `sweep()`
has nothing to do: its cost never grows with the number of waiting runs. An
index set lives as long as its longest-lived record and forgets a dead id when
it is read. Operations that touch several keys run as Lua
scripts, which Redis executes atomically. All keys and channels live under a
prefix (`elicitkit:` unless told otherwise):

```
{prefix}run:{run_id}              hash {owner, record}       TTL of the run
{prefix}journal:{run_id}          hash {seq: entry}          TTL of its run
{prefix}question:{question_id}    hash {run, record}         TTL of the question
{prefix}run-questions:{run_id}    set of question ids        TTL of its longest-lived question
{prefix}once:{token}              value it was spent with    TTL of the token's memory
{prefix}node:{node}               "1"                        TTL of the heartbeat
{prefix}task:{task_id}            record                     TTL of the task
{prefix}inbox-entry:{entry_id}    hash {inbox, record}       TTL of the entry
{prefix}inbox:{inbox}             set of entry ids           TTL of its longest-lived entry
```

Scripts compute the question and inbox entry keys they touch from the prefix,
so these classes need a standalone Redis (or Sentinel); `elicitkit.stores.redis_cluster`
has the store and broker for Redis Cluster (`redis+cluster://`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from elicitkit.stores import _redis_scripts as scripts
from elicitkit.stores._redis_client import DEFAULT_PREFIX, _connect, aioredis
from elicitkit.stores.redis_broker import RedisBroker

__all__ = ["RedisBroker", "RedisStore"]


def _pxat(expires_at: float) -> int | None:
    """Milliseconds since the epoch for PXAT/PEXPIREAT; None for a time that never comes."""
    if not math.isfinite(expires_at):
        return None if expires_at > 0 else 1
    return max(1, int(expires_at * 1000))


def _expiry_arg(expires_at: float) -> str:
    at = _pxat(expires_at)
    return "" if at is None else str(at)


@dataclass(frozen=True)
class _Filing:
    """Records filed in groups: a hash `{prefix}{record}:{id}` = {`field`: group, record} per record, and a set
    `{prefix}{index}:{group}` of record ids per group."""

    record: str
    field: str
    index: str


_QUESTIONS = _Filing(record="question", field="run", index="run-questions")
_INBOX = _Filing(record="inbox-entry", field="inbox", index="inbox")


class RedisStore:
    """A `Store` in the Redis at `url` (`redis://host:port/db`), with keys under `prefix`.

    A run's journal lives as long as the run (a journal written for a run that is gone
    goes at once); everything expires natively, so `sweep()` does nothing. Raises
    `redis.exceptions.RedisError` (e.g. `ConnectionError`) when Redis cannot be reached.
    """

    def __init__(self, url: str, *, prefix: str = DEFAULT_PREFIX) -> None:
        self.prefix = prefix
        self._redis: aioredis.Redis | aioredis.RedisCluster = self._open(url)
        script = self._redis.register_script
        self._put_run = script(scripts.PUT_RUN)
        self._put_owned_run = script(scripts.PUT_OWNED_RUN)
        self._put_run_with_question = script(scripts.PUT_RUN_WITH_QUESTION)
        self._claim_run = script(scripts.CLAIM_RUN)
        self._delete_run = script(scripts.DELETE_RUN)
        self._delete_owned_run = script(scripts.DELETE_OWNED_RUN)
        self._append_journal = script(scripts.APPEND_JOURNAL)
        self._file_record = script(scripts.FILE_RECORD)
        self._filed_records = script(scripts.FILED_RECORDS)
        self._unfile_record = script(scripts.UNFILE_RECORD)
        self._take_round = script(scripts.TAKE_ROUND)

    def _open(self, url: str) -> aioredis.Redis | aioredis.RedisCluster:
        return _connect(url)

    def _key(self, kind: str, name: str) -> str:
        return f"{self.prefix}{kind}:{name}"

    async def put_run(self, run_id: str, owner: str, record: bytes, expires_at: float) -> None:
        await self._put_run(
            keys=[self._key("run", run_id), self._key("journal", run_id)],
            args=[owner, record, _expiry_arg(expires_at)],
        )

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
        await self._put_run_with_question(
            keys=[
                self._key("run", run_id),
                self._key("journal", run_id),
                self._key(_QUESTIONS.record, question_id),
                self._key(_QUESTIONS.index, run_id),
            ],
            args=[
                owner,
                record,
                _expiry_arg(expires_at),
                question_id,
                _QUESTIONS.field,
                run_id,
                question,
                _expiry_arg(question_expires_at),
                self._key(_QUESTIONS.index, ""),
            ],
        )

    async def put_owned_run(self, run_id: str, owner: str, record: bytes, expires_at: float) -> str | None:
        other = await self._put_owned_run(
            keys=[self._key("run", run_id), self._key("journal", run_id)],
            args=[owner, record, _expiry_arg(expires_at)],
        )
        return other.decode() if isinstance(other, bytes) else None

    async def get_run(self, run_id: str) -> tuple[str, bytes] | None:
        owner, record = await self._redis.hmget(self._key("run", run_id), ["owner", "record"])
        if not isinstance(owner, bytes) or not isinstance(record, bytes):
            return None
        return owner.decode(), record

    async def claim_run(self, run_id: str, expected_owner: str, new_owner: str) -> bool:
        claimed = await self._claim_run(keys=[self._key("run", run_id)], args=[expected_owner, new_owner])
        return bool(claimed)

    async def delete_run(self, run_id: str) -> None:
        await self._delete_run(
            keys=[self._key("run", run_id), self._key("journal", run_id), self._key(_QUESTIONS.index, run_id)],
            args=[self._key(_QUESTIONS.record, "")],
        )

    async def delete_owned_run(self, run_id: str, owner: str) -> bool:
        deleted = await self._delete_owned_run(
            keys=[self._key("run", run_id), self._key("journal", run_id), self._key(_QUESTIONS.index, run_id)],
            args=[self._key(_QUESTIONS.record, ""), owner],
        )
        return bool(deleted)

    async def append_journal(self, run_id: str, seq: int, entry: bytes) -> bool:
        appended = await self._append_journal(
            keys=[self._key("journal", run_id), self._key("run", run_id)],
            args=[seq, entry],
        )
        return bool(appended)

    async def journal(self, run_id: str) -> dict[int, bytes]:
        entries = await self._redis.hgetall(self._key("journal", run_id))
        return {int(seq): entry for seq, entry in entries.items() if isinstance(entry, bytes)}

    async def put_question(self, question_id: str, run_id: str, record: bytes, expires_at: float) -> None:
        await self._file(_QUESTIONS, question_id, run_id, record, expires_at)

    async def get_question(self, question_id: str) -> tuple[str, bytes] | None:
        run_id, record = await self._redis.hmget(
            self._key(_QUESTIONS.record, question_id), [_QUESTIONS.field, "record"]
        )
        if not isinstance(run_id, bytes) or not isinstance(record, bytes):
            return None
        return run_id.decode(), record

    async def run_questions(self, run_id: str) -> dict[str, bytes]:
        return await self._filed(_QUESTIONS, run_id)

    async def delete_question(self, question_id: str) -> None:
        await self._unfile(_QUESTIONS, question_id)

    async def use_once(self, token: str, expires_at: float, value: bytes = b"1") -> bool:
        # SET NX is atomic; Redis forgets the token at its expiry, after which it is accepted again.
        first = await self._redis.set(self._key("once", token), value, nx=True, pxat=_pxat(expires_at))
        return bool(first)

    async def spent(self, token: str) -> bytes | None:
        value = await self._redis.get(self._key("once", token))
        return value if isinstance(value, bytes) else None

    async def take_round(
        self,
        run_id: str,
        token: str,
        expires_at: float,
        entries: Mapping[int, bytes],
        answered: Sequence[str],
        value: bytes = b"1",
    ) -> set[int] | None:
        pairs = [part for seq, entry in entries.items() for part in (seq, entry)]
        written = await self._take_round(
            keys=[self._key("once", token), self._key("journal", run_id), self._key("run", run_id)],
            args=[
                _expiry_arg(expires_at),
                value,
                self._key(_QUESTIONS.record, ""),
                self._key(_QUESTIONS.index, ""),
                len(entries),
                *pairs,
                *answered,
            ],
        )
        if written == -1:
            return None
        return {int(seq) for seq in written}

    async def put_task(self, task_id: str, record: bytes, expires_at: float) -> None:
        # A plain SET drops the key's earlier TTL: a task that never expires is set without one.
        await self._redis.set(self._key("task", task_id), record, pxat=_pxat(expires_at))

    async def get_task(self, task_id: str) -> bytes | None:
        record = await self._redis.get(self._key("task", task_id))
        return record if isinstance(record, bytes) else None

    async def put_inbox_entry(self, inbox: str, entry_id: str, record: bytes, expires_at: float) -> None:
        await self._file(_INBOX, entry_id, inbox, record, expires_at)

    async def inbox_entries(self, inbox: str) -> dict[str, bytes]:
        return await self._filed(_INBOX, inbox)

    async def delete_inbox_entry(self, inbox: str, entry_id: str) -> None:
        await self._unfile(_INBOX, entry_id, only_in=inbox)

    async def heartbeat(self, node: str, expires_at: float) -> None:
        await self._redis.set(self._key("node", node), b"1", pxat=_pxat(expires_at))

    async def is_alive(self, node: str) -> bool:
        return bool(await self._redis.exists(self._key("node", node)))

    async def sweep(self) -> int:
        """Nothing to sweep: every key expires natively, and an index forgets a dead id when it is read."""
        return 0

    async def aclose(self) -> None:
        await self._redis.aclose()

    async def _file(self, filing: _Filing, record_id: str, group: str, record: bytes, expires_at: float) -> None:
        await self._file_record(
            keys=[self._key(filing.record, record_id), self._key(filing.index, group)],
            args=[record_id, filing.field, group, record, _expiry_arg(expires_at), self._key(filing.index, "")],
        )

    async def _filed(self, filing: _Filing, group: str) -> dict[str, bytes]:
        """The live records of `group`; forgets the ids of those that died or moved."""
        flat: list[bytes] = await self._filed_records(
            keys=[self._key(filing.index, group)],
            args=[self._key(filing.record, ""), filing.field, group],
        )
        return {flat[i].decode(): flat[i + 1] for i in range(0, len(flat), 2)}

    async def _unfile(self, filing: _Filing, record_id: str, *, only_in: str | None = None) -> None:
        await self._unfile_record(
            keys=[self._key(filing.record, record_id)],
            args=[self._key(filing.index, ""), filing.field, record_id, *([] if only_in is None else [only_in])],
        )
