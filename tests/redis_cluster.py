"""A real Redis Cluster for tests: three masters and a replica each, on free loopback ports.

```python
cluster = RedisCluster(tmp_path / "cluster")
cluster.start_blocking()              # returns once every node says cluster_state:ok and every replica is synced
master = cluster.master_of(b"key")    # the master serving that key's slot now
await cluster.fail_over(master)       # SIGKILL it, promote its replica (CLUSTER FAILOVER TAKEOVER), wait for ok
await cluster.rejoin(master)          # start it again on its port: it comes back as the new master's replica
cluster.stop_blocking()
```

Each node is a `RedisServer` started with `--cluster-enabled yes`; `redis-cli --cluster create` (Debian's
redis-tools, which redis-server depends on) assigns the slots and pairs each master with a replica. Nothing is
persisted, so a node killed and started again comes back empty and resyncs from its master.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import anyio.to_thread
import redis

from tests.redis_server import RedisServer, free_port

__all__ = ["RedisCluster"]

MASTERS = 3
POLL = 0.02  # seconds between looks at the cluster's state while it settles
# Small enough that a killed master is flagged FAIL quickly; large enough that a loaded 2-core machine does not
# flag a busy node by mistake (a test promotes the replica itself rather than waiting for this timeout).
NODE_TIMEOUT_MS = 2000


class RedisCluster:
    """Six `redis-server` processes in cluster mode: three masters holding every slot, each with a replica.

    Raises `RuntimeError` when redis-server or redis-cli is missing, or the cluster does not settle in
    `timeout` seconds.
    """

    def __init__(self, directory: Path, *, binary: str | None = None, timeout: float = 30.0) -> None:
        if shutil.which("redis-cli") is None:
            raise RuntimeError(
                "redis-cli is missing: it comes with Debian's redis-server (apt-get install redis-server)"
            )
        options = [
            "--cluster-enabled", "yes",
            "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
            # A replica may always be promoted, however long it has been apart from its master.
            "--cluster-replica-validity-factor", "0",
            # A replica (re)joining is synced at once, not after Redis's default 5 s wait for other replicas.
            "--repl-diskless-sync-delay", "0",
        ]  # fmt: skip
        self.timeout = timeout
        # The cluster bus gets a free port of its own (by default it is the node's port + 10000, maybe taken).
        self.nodes = [
            RedisServer(directory / f"node-{i}", binary=binary, options=[*options, "--cluster-port", str(free_port())])
            for i in range(MASTERS * 2)
        ]

    @property
    def url(self) -> str:
        """The store URL of the cluster: any one node is enough for the client to find the others."""
        return f"redis+cluster://127.0.0.1:{self.nodes[0].port}"

    def start_blocking(self) -> None:
        """Start every node, create the cluster and wait until it serves every slot. Needs no event loop."""
        for node in self.nodes:
            node.start_blocking()
        addresses = [f"127.0.0.1:{node.port}" for node in self.nodes]
        created = subprocess.run(
            ["redis-cli", "--cluster", "create", *addresses, "--cluster-replicas", "1", "--cluster-yes"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=self.timeout,
            check=False,
        )
        if created.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed:\n{created.stdout}\n{created.stderr}")
        self._settle_blocking()

    def stop_blocking(self) -> None:
        for node in self.nodes:
            node.stop_blocking()

    def master_of(self, key: bytes) -> RedisServer:
        """The running node that serves `key`'s slot now (the answer moves with a failover)."""
        for node in self._running():
            with _client(node) as client:
                slot = int(client.execute_command("CLUSTER KEYSLOT", key))
                for start, end, master, *_ in client.execute_command("CLUSTER SLOTS"):
                    if start <= slot <= end:
                        return self._node_on(int(master[1]))
        raise RuntimeError("no running node knows the cluster's slots")

    def replica_of(self, master: RedisServer) -> RedisServer:
        """The running replica of `master`."""
        with _client(master) as client:
            replica = client.info("replication").get("slave0")
        if not isinstance(replica, dict):
            raise RuntimeError(f"the master on port {master.port} has no replica")
        return self._node_on(int(replica["port"]))

    async def synced(self, master: RedisServer) -> None:
        """Wait until `master`'s replica has every write `master` took so far: Redis replicates asynchronously,
        and a master killed before its replica caught up loses its last writes (Redis's own guarantee)."""
        with _client(master) as client:
            written = int(client.info("replication")["master_repl_offset"])

            def caught_up() -> bool:
                replica = client.info("replication").get("slave0")
                return isinstance(replica, dict) and int(replica["offset"]) >= written

            with anyio.fail_after(self.timeout):
                await self._until(caught_up)

    async def fail_over(self, master: RedisServer) -> RedisServer:
        """Kill `master` with SIGKILL, promote its replica at once (as Redis does by itself once the master has
        been unreachable for the node timeout), and wait until every running node serves every slot again.
        Returns the new master."""
        replica = self.replica_of(master)
        await master.kill()
        with _client(replica) as client:
            # TAKEOVER, not FORCE: a forced failover needs the other masters' votes, which they sometimes refuse
            # to a cluster only just created (its epochs still settling); the automatic one waits out a timeout.
            await anyio.to_thread.run_sync(lambda: client.execute_command("CLUSTER FAILOVER", "TAKEOVER"))
        with anyio.fail_after(self.timeout):
            await self._until(lambda: self._is_master(replica) and self._settled())
        return replica

    async def rejoin(self, node: RedisServer) -> None:
        """Start a killed node again on its port; wait until it is a synced replica and the cluster is ok."""
        await node.start()
        with anyio.fail_after(self.timeout):
            await self._until(self._settled)

    def _settle_blocking(self) -> None:
        deadline = time.monotonic() + self.timeout
        pause = threading.Event()
        while not self._settled():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Redis Cluster did not settle within {self.timeout:g} s")
            pause.wait(POLL)

    async def _until(self, settled: Callable[[], bool]) -> None:
        """Poll `settled` (on a worker thread: it asks the nodes) until it holds; callers bound the wait."""
        while True:
            if await anyio.to_thread.run_sync(settled):
                return
            await anyio.sleep(POLL)

    def _settled(self) -> bool:
        """Every running node says cluster_state:ok, has every slot on a running master and knows every other
        running node as connected; every replica's link to its master is up and synced."""
        running = self._running()
        ports = {node.port for node in running}
        try:
            for node in running:
                with _client(node) as client:
                    if client.execute_command("CLUSTER INFO")["cluster_state"] != "ok":
                        return False
                    if any(int(master[1]) not in ports for _, _, master, *_ in client.execute_command("CLUSTER SLOTS")):
                        return False
                    known = client.execute_command("CLUSTER NODES").values()
                    if sum(1 for peer in known if peer["connected"] and "fail" not in peer["flags"]) != len(running):
                        return False
                    replication = client.info("replication")
                    if replication["role"] == "slave" and (
                        replication["master_link_status"] != "up" or replication["master_sync_in_progress"]
                    ):
                        return False
        except (redis.RedisError, OSError):
            return False
        return True

    def _is_master(self, node: RedisServer) -> bool:
        with _client(node) as client:
            return bool(client.info("replication")["role"] == "master")

    def _running(self) -> list[RedisServer]:
        return [node for node in self.nodes if node.running]

    def _node_on(self, port: int) -> RedisServer:
        return next(node for node in self.nodes if node.port == port)


def _client(node: RedisServer) -> redis.Redis:
    return redis.Redis(host="127.0.0.1", port=node.port, socket_timeout=5)
