#!/usr/bin/env bash
# mcp-bash's UI helpers (mcp_client_supports_ui, mcp_result_with_ui, mcp_ui_form, ...) live in tool-sdk.sh,
# which loads them as mcp-bash's does; a tool that sources this file as well gets the same functions.
if ! declare -F mcp_client_supports_ui >/dev/null 2>&1; then
	# shellcheck source=tool-sdk.sh disable=SC1091
	source "$(dirname "${BASH_SOURCE[0]}")/tool-sdk.sh"
fi
