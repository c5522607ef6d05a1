"""Where elicitkit keeps its state, and how its nodes talk: pick one with a URL.

| URL                          | Store         | Broker         | For                                   |
|------------------------------|---------------|----------------|---------------------------------------|
| `None`, `memory://`          | `MemoryStore` | `MemoryBroker` | one process; lost when it ends        |
| `sqlite:///state.db`         | `SQLiteStore` | `MemoryBroker` | one process on one machine, durable   |
| `redis://host:port/db`       | `RedisStore`  | `RedisBroker`  | many nodes sharing one Redis          |
| `redis+cluster://host:port`  | `RedisClusterStore` | `RedisClusterBroker` | many nodes sharing a Redis Cluster |

- **memory** keeps everything in dicts: the fastest, and the default.
- **sqlite** keeps one file (`sqlite:///state.db` is relative to the working
  directory, `sqlite:////var/lib/app/state.db` absolute, as in SQLAlchemy); runs
  survive a restart or a crash of the process.
- **redis** shares runs, journals, questions, tasks and inbox entries between
  nodes, with native TTLs, and carries answers between them over pub/sub. It
  needs the `redis` extra: `pip install 'elicitkit[redis]'`; its classes live
  in `elicitkit.stores.redis`.
- **redis+cluster** is the same on a Redis Cluster (or a Valkey cluster), any
  node of it named in the URL (`rediss+cluster://` for TLS); its classes live in
  `elicitkit.stores.redis_cluster`.

Every backend implements the `Store` and `Broker` protocols of
`elicitkit.stores.base`; bring your own by implementing them. A broker that
also implements `PresenceBroker` (Redis does) lets a node tell a crashed owner
within a fraction of a second instead of waiting out its heartbeat; a store that
also implements `FencedStore` (all three do) renews or forgets a run in one round
trip, fenced by its owner, instead of a read and a write; one that also
implements `RoundStore` (all three do) takes a round of answers (journal, spent
token, answered questions) in one step instead of one per part; one that also
implements `FirstRoundStore` (all three do) records a run with its first
question in one step instead of two. All three also
agree on what the protocols leave open (the contract tests pin it):

- a run's journal lives as long as the run: `delete_run` removes it, and once
  the run has expired `sweep()` does (Redis expires it with the run, and drops
  a journal written for a run that is already gone);
- a question expires on its own expiry, not its run's;
- a task and each web inbox entry expire on their own expiry, and `delete_run`
  leaves them alone; an entry filed again under another inbox moves there;
- a one-time token is refused until its `expires_at`, and until then `spent`
  returns the value it was first spent with (byte for byte; a refused spend
  changes nothing); then it is forgotten, with its value, and accepted again:
  give it an expiry no earlier than what it guards;
- `math.inf` as an expiry means "never".
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from elicitkit._deployment import warn_if_several_nodes

from .base import Broker, FencedStore, FirstRoundStore, PresenceBroker, RoundStore, Store
from .memory import MemoryBroker, MemoryStore
from .sqlite import SQLiteStore

__all__ = [
    "Broker",
    "FencedStore",
    "FirstRoundStore",
    "MemoryBroker",
    "MemoryStore",
    "PresenceBroker",
    "RoundStore",
    "SQLiteStore",
    "Store",
    "open_store",
]

SUPPORTED = "memory://, sqlite:///path.db, redis://host:port/db or redis+cluster://host:port"
_REDIS_SCHEMES = ("redis", "rediss", "unix")
_REDIS_CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")


def open_store(url: str | None) -> tuple[Store, Broker]:
    """The store and broker that `url` names (see the table above); `None` means memory.

    Raises `ValueError` for a URL no backend handles, and `ImportError` for a Redis
    URL when redis-py is not installed.
    """
    if url is None:
        return MemoryStore(), MemoryBroker()
    scheme = urlsplit(url).scheme
    if scheme == "memory":
        if url.rstrip("/") != "memory:":
            raise ValueError(f"A memory store takes no location: use 'memory://', not {url!r}")
        return MemoryStore(), MemoryBroker()
    if scheme == "sqlite":
        if not url.startswith("sqlite:///") or url == "sqlite:///":
            raise ValueError(
                f"A SQLite store URL names a file: 'sqlite:///relative.db' or 'sqlite:////absolute.db', not {url!r}"
            )
        return SQLiteStore(url.removeprefix("sqlite:///")), MemoryBroker()
    if scheme in _REDIS_SCHEMES:
        from .redis import RedisBroker, RedisStore

        return RedisStore(url), RedisBroker(url)
    if scheme in _REDIS_CLUSTER_SCHEMES:
        from .redis_cluster import RedisClusterBroker, RedisClusterStore

        return RedisClusterStore(url), RedisClusterBroker(url)
    raise ValueError(f"Unknown store URL {url!r}: use {SUPPORTED}")


def durable_store(store: str | Store | None) -> str | None:
    """What kind of store `Elicitation(store=...)` names when it keeps records beyond the process (`"SQLite"`,
    `"Redis"`, or the class name of a `Store` of yours, which elicitkit cannot see into), without opening it;
    None for the memory store (and for a URL no backend handles, which `open_store` refuses)."""
    if store is None or isinstance(store, MemoryStore):
        return None
    if not isinstance(store, str):
        return type(store).__name__
    scheme = urlsplit(store).scheme
    if scheme == "sqlite":
        return "SQLite"
    return "Redis" if scheme in _REDIS_SCHEMES + _REDIS_CLUSTER_SCHEMES else None


def store_and_broker(store: str | Store | None, broker: Broker | None) -> tuple[Store, Broker]:
    """What `Elicitation(store=..., broker=...)` ends up with: a URL's own broker unless one is given; a store
    object given without a broker reaches no other node (and says so, unless it can only be local anyway)."""
    if store is None:
        warn_if_several_nodes()  # the default, memory, where the environment says several nodes serve
    if isinstance(store, str) or store is None:
        opened, own = open_store(store)
        return opened, broker or own
    if broker is None and not isinstance(store, MemoryStore | SQLiteStore):
        logging.getLogger("elicitkit").warning(
            "elicitkit: a %s was given without a broker, so nodes cannot reach each other: an answer that "
            "lands on another node replays the run there. Pass broker= (e.g. RedisBroker(url)) or store=URL.",
            type(store).__name__,
        )
    return store, broker or MemoryBroker()
