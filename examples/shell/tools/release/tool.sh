#!/usr/bin/env bash
# An mcp-bash tool, unchanged: mcp-bash's helper names, content keys and return codes, and jq, nothing else.
set -euo pipefail
source "${MCP_SDK:?MCP_SDK environment variable not set}/tool-sdk.sh"

version="$(mcp_args_require '.version')"

stop() { mcp_result_success "$(mcp_json_obj message "Stopped at $1: $2")"; exit 0; }

resp="$(mcp_elicit_confirm "Release ${version}?")"
action="$(jq -r '.action' <<<"${resp}")"
[ "${action}" = accept ] || stop confirm "${action}"
[ "$(jq -r '.content.confirmed' <<<"${resp}")" = true ] || stop confirm "not confirmed"

resp="$(mcp_elicit_choice "Which channel?" stable beta nightly)"
action="$(jq -r '.action' <<<"${resp}")"
[ "${action}" = accept ] || stop channel "${action}"
channel="$(jq -r '.content.choice' <<<"${resp}")"

resp="$(mcp_elicit_titled_choice "Which build?" "full:Full (with symbols)" "slim:Slim")"
action="$(jq -r '.action' <<<"${resp}")"
[ "${action}" = accept ] || stop build "${action}"
build="$(jq -r '.content.choice' <<<"${resp}")"

resp="$(mcp_elicit_multi_choice "Which checks must pass?" lint unit e2e)"
action="$(jq -r '.action' <<<"${resp}")"
[ "${action}" = accept ] || stop checks "${action}"
checks="$(jq -r '.content.choices | join(",")' <<<"${resp}")"

mcp_result_success "$(mcp_json_obj message "Released ${version}" channel "${channel}" build "${build}" checks "${checks}")"
