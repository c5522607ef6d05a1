#!/usr/bin/env python3
"""A Python tool: arguments from MCP_TOOL_ARGS_JSON, questions through `elicitkit ask`, the result on stdout."""

import json
import os
import subprocess

service = json.loads(os.environ["MCP_TOOL_ARGS_JSON"])["service"]
asked = subprocess.run(["elicitkit", "ask", "confirm", f"Restart {service}?"], capture_output=True, text=True)
if asked.returncode != 0:
    print(f"not restarted (exit {asked.returncode}: {asked.stdout.strip()})")
    raise SystemExit(0)
env = subprocess.run(
    ["elicitkit", "ask", "choice", "Where?", "staging", "prod:Production", "--value"], capture_output=True, text=True
)
print(f"restarted {service} in {env.stdout.strip()} (exit {env.returncode})")
