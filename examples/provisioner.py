"""provisioner: a tool that survives restarts and runs on several nodes.

    ELICITKIT_SECRET=$(python -c 'import secrets; print(secrets.token_hex(32))') \
    ELICITKIT_STORE=sqlite:///provisioner.db python examples/provisioner.py --http 8000

Run several copies against one Redis (`ELICITKIT_STORE=redis://localhost:6379/0`)
behind a load balancer: an answer may land on any of them. The VM is created
exactly once per run, however often the run is resumed or replayed. Without
`ELICITKIT_SECRET` it refuses to start: a durable store is never kept unsealed
by accident.
"""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import Context, MCPServer

from elicitkit import Accepted, Elicitation

server = MCPServer("provisioner")
hitl = Elicitation(server, store=os.environ.get("ELICITKIT_STORE", "sqlite:///provisioner.db"))


def create_vm(name: str, size: str) -> dict[str, str]:
    """Stands in for a cloud API call that must not happen twice."""
    return {"id": f"vm-{name}", "size": size}


@server.tool()
async def provision(name: str, ctx: Context) -> str:
    """Create a VM after a person approves it and picks a size."""
    size = await hitl.choice(ctx, f"Size for {name}?", ["small", "medium", "large"], default="small")
    if not isinstance(size, Accepted):
        return f"{name} was not provisioned."
    vm = await hitl.step(ctx, "create-vm", lambda: create_vm(name, size.data))
    go = await hitl.confirm(ctx, f"{vm['id']} is ready. Open it to the internet?")
    exposed = isinstance(go, Accepted) and go.data
    return f"{vm['id']} ({vm['size']}) is up" + (" and public." if exposed else ", private.")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", port=int(sys.argv[2]))
    else:
        server.run()
