#!/usr/bin/env python3
# mcp: {"name": "status", "description": "Service status as JSON", "arguments": {"type": "object", "properties": {"service": {"type": "string"}}}}
# No metadata file and no executable bit: the `# mcp:` line describes it, its #! line runs it.
import json
import os

arguments = json.loads(os.environ.get("MCP_TOOL_ARGS_JSON") or "{}")
print(json.dumps({"service": arguments.get("service", "all"), "healthy": True}))
