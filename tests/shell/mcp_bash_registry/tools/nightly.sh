#!/usr/bin/env bash
set -euo pipefail
source "${MCP_SDK}/tool-sdk.sh"
mcp_result_success "$(mcp_json_obj day "$(mcp_args_get '.day // "today"')" status green)"
