#!/usr/bin/env bash
set -euo pipefail
source "${MCP_SDK}/tool-sdk.sh"

mcp_log_info build "starting"
mcp_progress 10 "Preparing"
out="$(mcp_run_with_progress --pattern '^([0-9]+)/([0-9]+)' --extract ratio --interval 0.05 -- \
	bash -c 'echo "1/4 compiled" >&2; echo "3/4 linked" >&2; echo artifact.tar')"
mcp_progress 100 "Done"
mcp_emit_text "built ${out}"
