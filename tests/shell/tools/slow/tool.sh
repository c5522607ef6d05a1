#!/usr/bin/env bash
# Waits far longer than any test: only being terminated ends it. "$$ child" goes to the file named in "pids".
set -euo pipefail
source "${MCP_SDK}/tool-sdk.sh"
pids="$(mcp_args_get .pids)"
sleep 600 &
child=$!
printf '%s %s\n' "$$" "${child}" >"${pids}.tmp" && mv "${pids}.tmp" "${pids}"
if [ "$(mcp_args_get '.ask // false')" = true ]; then
  mcp_elicit_confirm "Keep waiting?"
fi
wait "${child}"
