#!/usr/bin/env python3
"""A Python tool: its arguments from MCP_TOOL_ARGS_JSON, its questions through `elicitkit ask`, its result on stdout.

Any language works the same way: run `elicitkit ask ...`, read the JSON it prints, look at its exit code.
"""

import json
import os
import subprocess
import sys

ACCEPT, DECLINE, CANCEL, TIMEOUT, NOT_SUPPORTED = 0, 1, 2, 3, 4


def ask(*argv: str) -> dict:
    """Ask the person; the reply is {"action", "content", ...}, or the tool stops saying why."""
    done = subprocess.run(["elicitkit", "ask", *argv], capture_output=True, text=True)
    if done.returncode != ACCEPT:
        why = {DECLINE: "declined", CANCEL: "cancelled", TIMEOUT: "no answer in time", NOT_SUPPORTED: "nobody to ask"}
        print(f"Not restarted: {why.get(done.returncode, done.stderr.strip())}")
        sys.exit(0)
    return json.loads(done.stdout)["content"]


service = json.loads(os.environ["MCP_TOOL_ARGS_JSON"])["service"]
where = ask("choice", f"Restart {service} where?", "staging:Staging", "prod:Production", "--field", "env")["env"]
if where == "prod":
    sure = ask("confirm", f"Restart {service} in production now?", "--title", "Restart production")
    if not sure["value"]:
        print("Not restarted: production was not confirmed")
        sys.exit(0)
print(f"Restarted {service} in {where}")
