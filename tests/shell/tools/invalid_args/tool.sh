#!/usr/bin/env bash
set -euo pipefail
source "${MCP_SDK}/tool-sdk.sh"
count="$(mcp_args_int '.count' --min 1)"
mcp_result_success "$(mcp_json_obj count "${count}")"
