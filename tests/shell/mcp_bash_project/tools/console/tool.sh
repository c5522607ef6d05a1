#!/usr/bin/env bash
# MCP Apps helpers: a structured result for hosts that show the UI, plain text for the rest.
set -euo pipefail
source "${MCP_SDK}/tool-sdk.sh"

if mcp_client_supports_ui; then ui=yes; else ui=no; fi
form="$(mcp_ui_form --title "Log <entry>" --field "kind:select:call,mail" --submit-tool log-entry | grep -c '&lt;entry&gt;')"
meta="$(mcp_tool_meta_with_ui "ui://field-desk/console" "model, app")"
mcp_result_with_ui "" "Console (ui=${ui}, escaped=${form}, meta=${meta})" '{"nodes":16}'
