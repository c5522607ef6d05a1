#!/usr/bin/env bash
set -euo pipefail
source "${MCP_SDK}/tool-sdk.sh"
mcp_log_info build "starting"
mcp_progress 50 "half way" 100
mcp_progress 100 "done" 100
echo "built"
