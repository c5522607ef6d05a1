"""Redis Cluster store and broker: the Redis store's records and messages, spread over a cluster's shards.

`store="redis+cluster://host:port"` (or `rediss+cluster://` for TLS) names any node of the cluster; redis-py's
`RedisCluster` finds the others, follows slots that move (`MOVED`, `ASK`) and retries through a failover of a
shard (a master that dies while its replica takes over), refreshing its map of the cluster as it goes. Needs
redis-py (`pip install 'elicitkit[redis]'`) and Redis >= 7.0 (sharded pub/sub), or Valkey >= 7.2.

Keys are those of `elicitkit.stores.redis`, with the id in braces, a hash tag: Redis Cluster puts keys whose
tags match in one slot. A run's record, journal and index of questions carry the run id, and so does each of
its rounds' one-time tokens (the engine names them `round:{run id}:...`), so a round is taken (token spent,
answers journaled, questions out of the index) and a run forgotten in one atomic script, as on a standalone
Redis. A question or web inbox entry, read by its own id, has a slot of its own: filing one writes the
record, then its group's index; forgetting one deletes the record, then takes it out of the index. Every
script touches only the keys it is given.

```
{prefix}run:{<run_id>}             {prefix}journal:{<run_id>}      {prefix}run-questions:{<run_id>}
{prefix}once:round:{<run_id>}:...  {prefix}question:{<question_id>}
{prefix}node:{<node>}              {prefix}task:{<task_id>}
{prefix}inbox-entry:{<entry_id>}   {prefix}inbox:{<inbox>}
```

Messages between nodes use sharded pub/sub (`SSUBSCRIBE`, `SPUBLISH`): a channel lives on the shard that
serves its slot, so messages spread over the shards instead of every message reaching every node of the
cluster. `PUBSUB SHARDNUMSUB` on that shard tells who listens, which is how a crashed node is told apart.
A listener whose shard fails over subscribes again on the new master.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio

try:
    import redis.asyncio as aioredis
    from redis.asyncio.cluster import ClusterPubSub
    from redis.exceptions import ClusterError, RedisClusterException, RedisError
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError
except ImportError as error:
    raise ImportError("The Redis Cluster store needs redis-py: pip install 'elicitkit[redis]'") from error

from elicitkit.stores import _redis_scripts as scripts
from elicitkit.stores._redis_client import DEFAULT_PREFIX, _text
from elicitkit.stores.redis import _QUESTIONS, RedisStore, _expiry_arg, _Filing

__all__ = ["RedisClusterBroker", "RedisClusterStore"]

# redis-py types the timeout of `get_sharded_message` as a float; None blocks until a message comes.
_FOREVER: Any = None
# Errors after which a shard's subscription is renewed on whichever node serves its slot now.
_SHARD_LOST = (RedisConnectionError, RedisTimeoutError, RedisClusterException, ClusterError)


class _Cluster(aioredis.RedisCluster):
    """redis-py's `RedisCluster`, initialized by the first command alone: with redis-py 8.1, commands sent
    concurrently to a client that has not met its cluster yet fail (`AttributeError` on a connection that is
    not open)."""

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        await self.initialize()  # returns at once when done; the first callers wait for it together
        return await super().execute_command(*args, **kwargs)


def _connect(url: str, prefix: str) -> aioredis.RedisCluster:
    scheme, separator, rest = url.partition("://")
    if not separator or not scheme.endswith("+cluster"):
        raise ValueError(f"A Redis Cluster URL is redis+cluster://host:port (or rediss+cluster://), not {url!r}")
    if "{" in prefix or "}" in prefix:
        raise ValueError(f"A Redis Cluster key prefix may not contain braces (they make hash tags): {prefix!r}")
    # RESP2, as for a standalone Redis (see elicitkit.stores.redis).
    return _Cluster.from_url(f"{scheme.removesuffix('+cluster')}://{rest}", protocol=2)


class RedisClusterStore(RedisStore):
    """A `Store` in the Redis Cluster at `url` (`redis+cluster://host:port`, any node), keys under `prefix`.

    Behaves as `RedisStore` does. Raises `redis.exceptions.RedisError` when the cluster cannot be reached, or
    a shard has no master for longer than redis-py's retries last; `ValueError` for a URL that does not name a
    cluster or a prefix with braces.
    """

    def __init__(self, url: str, *, prefix: str = DEFAULT_PREFIX) -> None:
        super().__init__(url, prefix=prefix)
        script = self._redis.register_script
        self._cluster_delete_run = script(scripts.CLUSTER_DELETE_RUN)
        self._cluster_take_round = script(scripts.CLUSTER_TAKE_ROUND)
        self._put_filed = script(scripts.CLUSTER_PUT_FILED)
        self._index = script(scripts.CLUSTER_INDEX)
        self._cluster_unfile = script(scripts.CLUSTER_UNFILE)

    def _open(self, url: str) -> aioredis.RedisCluster:
        return _connect(url, self.prefix)

    def _key(self, kind: str, name: str) -> str:
        if kind == "once":  # a token names its own slot: round tokens carry their run's hash tag
            return f"{self.prefix}once:{name}"
        return f"{self.prefix}{kind}:{{{name}}}"

    async def delete_run(self, run_id: str) -> None:
        await self._forget_run(run_id, "")

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
        # A question's record lives in its own slot, not its run's: two steps, the question first (as without).
        await self.put_question(question_id, run_id, question, question_expires_at)
        await self.put_run(run_id, owner, record, expires_at)

    async def delete_owned_run(self, run_id: str, owner: str) -> bool:
        return await self._forget_run(run_id, owner)

    async def _forget_run(self, run_id: str, owner: str) -> bool:
        keys = [self._key("run", run_id), self._key("journal", run_id), self._key(_QUESTIONS.index, run_id)]
        questions = await self._cluster_delete_run(keys=keys, args=[owner])
        if questions is None:
            return False
        await self._delete_records(_QUESTIONS, questions)
        return True

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
        written = await self._cluster_take_round(
            keys=[
                self._key("once", token),
                self._key("journal", run_id),
                self._key("run", run_id),
                self._key(_QUESTIONS.index, run_id),
            ],
            args=[_expiry_arg(expires_at), value, len(entries), *pairs, *answered],
        )
        if written == -1:
            return None
        await self._delete_records(_QUESTIONS, answered)
        return {int(seq) for seq in written}

    async def _delete_records(self, filing: _Filing, ids: Sequence[str | bytes]) -> None:
        if ids:  # one DEL per slot: redis-py splits a multi-key DEL by slot on a cluster
            await self._redis.delete(*(self._key(filing.record, _text(record_id)) for record_id in ids))

    async def _file(self, filing: _Filing, record_id: str, group: str, record: bytes, expires_at: float) -> None:
        expiry = _expiry_arg(expires_at)
        previous = await self._put_filed(
            keys=[self._key(filing.record, record_id)], args=[filing.field, group, record, expiry]
        )
        await self._index(keys=[self._key(filing.index, group)], args=[record_id, expiry])
        if previous is not None and _text(previous) != group:
            await self._redis.srem(self._key(filing.index, _text(previous)), record_id)

    async def _filed(self, filing: _Filing, group: str) -> dict[str, bytes]:
        """The live records of `group`; forgets the ids of those that died or moved."""
        index = self._key(filing.index, group)
        ids = [_text(record_id) for record_id in await self._redis.smembers(index)]
        if not ids:
            return {}
        pipe = self._redis.pipeline()  # one round trip per shard, not per record
        for record_id in ids:
            pipe.hmget(self._key(filing.record, record_id), [filing.field, "record"])
        found: dict[str, bytes] = {}
        gone: list[str] = []
        for record_id, (filed_in, record) in zip(ids, await pipe.execute(), strict=True):
            if isinstance(filed_in, bytes) and filed_in.decode() == group and isinstance(record, bytes):
                found[record_id] = record
            else:
                gone.append(record_id)
        if gone:
            await self._redis.srem(index, *gone)
        return found

    async def _unfile(self, filing: _Filing, record_id: str, *, only_in: str | None = None) -> None:
        group = await self._cluster_unfile(
            keys=[self._key(filing.record, record_id)], args=[filing.field, *([] if only_in is None else [only_in])]
        )
        if group is not None:
            await self._redis.srem(self._key(filing.index, _text(group)), record_id)


class RedisClusterBroker:
    """A `Broker` over a Redis Cluster's sharded pub/sub at `url`, with channel names under `prefix`.

    Delivery is at most once, as with `RedisBroker`: a listener whose shard fails over or whose connection
    drops subscribes again on the node serving its channel's slot, and what was published meanwhile is lost;
    one that cannot within `timeout` seconds raises `redis.exceptions.ConnectionError` from its iteration.
    """

    def __init__(self, url: str, *, prefix: str = DEFAULT_PREFIX, timeout: float = 10.0) -> None:
        self.prefix = prefix
        self.timeout = timeout
        self._cluster = _connect(url, prefix)

    async def publish(self, channel: str, message: bytes) -> int:
        return int(await self._cluster.spublish(self.prefix + channel, message))

    async def listeners(self, channel: str) -> int:
        """`PUBSUB SHARDNUMSUB` on the shard of the channel: a dead process's subscriptions go with it."""
        name = self.prefix + channel
        try:
            counts = await self._shardnumsub(name)
        except _SHARD_LOST:
            # Sent to one node, the command is not retried: the shard may have failed over since the client
            # last looked. Ask again on the cluster's current map.
            await self._cluster.nodes_manager.initialize()
            counts = await self._shardnumsub(name)
        return {_text(listened): int(count) for listened, count in counts}.get(name, 0)

    async def _shardnumsub(self, name: str) -> list[tuple[bytes, int]]:
        node = self._cluster.get_node_from_key(name)
        counts: list[tuple[bytes, int]] = await self._cluster.execute_command(
            "PUBSUB SHARDNUMSUB", name, target_nodes=node
        )
        return counts

    @asynccontextmanager
    async def listen(self, channel: str) -> AsyncIterator[AsyncIterator[bytes]]:
        messages = _ShardMessages(self._cluster, self.prefix + channel, reconnect_for=self.timeout)
        try:
            with anyio.fail_after(self.timeout):
                await self._cluster.initialize()  # a channel's shard is found in the map of slots it loads
                await messages.subscribe()
            yield messages
        finally:
            with anyio.CancelScope(shield=True):
                await messages.aclose(self.timeout)

    async def aclose(self) -> None:
        await self._cluster.aclose()


class _ShardMessages:
    """The messages of one shard channel, as bytes; follows its slot to a new master after a failover."""

    def __init__(self, cluster: aioredis.RedisCluster, name: str, *, reconnect_for: float) -> None:
        self._cluster = cluster
        self._name = name
        self._reconnect_for = reconnect_for
        self._pubsub: ClusterPubSub = cluster.pubsub()
        self.resubscribed = anyio.Event()
        """Set each time the subscription is back after it was lost (a fresh Event per loss)."""
        self.resubscriptions = 0
        """How many times the subscription came back: what was published to it meanwhile is lost."""

    async def subscribe(self) -> None:
        """SSUBSCRIBE on the node serving the channel's slot; returns once its reply is in, which precedes every
        message published after it. A node that is gone (its shard failing over) is retried on the cluster's
        current map for `reconnect_for` seconds, then its error is raised."""
        started = time.monotonic()
        delay = 0.01
        while True:
            try:
                await self._pubsub.ssubscribe(self._name)
                while True:
                    message = await self._pubsub.get_sharded_message(timeout=_FOREVER)
                    if message is None:
                        raise RedisConnectionError(f"no shard serves {self._name}")
                    if message["type"] == "ssubscribe":
                        return
            except _SHARD_LOST:
                if time.monotonic() - started >= self._reconnect_for:
                    raise
            # Until the slot has a master again this node misses what is published to it, and forwarders take
            # its runs over: retry briskly, each time on a fresh map of the cluster.
            await anyio.sleep(delay)
            delay = min(delay * 2, 0.1)
            with suppress(RedisError, OSError):
                await self._pubsub.aclose()
            with suppress(*_SHARD_LOST):
                await self._cluster.nodes_manager.initialize()
            self._pubsub = self._cluster.pubsub()

    def __aiter__(self) -> _ShardMessages:
        return self

    async def __anext__(self) -> bytes:
        while True:
            try:
                message = await self._pubsub.get_sharded_message(timeout=_FOREVER)
                if message is None or message["type"] == "sunsubscribe":
                    # The slot moved (a failover, a resharding) and Redis dropped the subscription.
                    raise RedisConnectionError(f"the subscription to {self._name} was dropped")
            except _SHARD_LOST:
                if self.resubscribed.is_set():
                    self.resubscribed = anyio.Event()
                with suppress(RedisError, OSError):
                    await self._pubsub.aclose()
                self._pubsub = self._cluster.pubsub()
                await self.subscribe()
                self.resubscriptions += 1
                self.resubscribed.set()
                continue
            if message["type"] == "smessage":
                data: bytes = message["data"]
                return data

    async def aclose(self, timeout: float) -> None:
        # Wait for SUNSUBSCRIBE's reply, so that once we return nobody counts this listener.
        with anyio.move_on_after(timeout), suppress(RedisError, OSError):
            await self._pubsub.sunsubscribe(self._name)
            while True:
                message: dict[str, Any] | None = await self._pubsub.get_sharded_message(timeout=timeout)
                if message is None or message["type"] == "sunsubscribe":
                    break
        await self._pubsub.aclose()
