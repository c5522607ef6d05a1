#!/usr/bin/env bash
# Committed without the executable bit, as several of mcp-bash's own examples are: it runs through bash.
source "${MCP_SDK:?MCP_SDK environment variable not set}/tool-sdk.sh"

service="$(mcp_args_require '.service')"

stop() {
	mcp_result_success "$(mcp_json_obj message "Stopped at $1: $2")"
	exit 0
}

resp="$(mcp_elicit_confirm "Deploy ${service}?")"
[ "$(jq -r .action <<<"${resp}")" = accept ] || stop confirm "$(jq -r .action <<<"${resp}")"
[ "$(jq -r .content.confirmed <<<"${resp}")" = true ] || stop confirm "not confirmed"

resp="$(mcp_elicit_string "Who approves?" approver)"
[ "$(jq -r .action <<<"${resp}")" = accept ] || stop approver "$(jq -r .action <<<"${resp}")"
approver="$(jq -r .content.approver <<<"${resp}")"

resp="$(mcp_elicit_choice "Which environment?" staging production)"
[ "$(jq -r .action <<<"${resp}")" = accept ] || stop environment "$(jq -r .action <<<"${resp}")"
environment="$(jq -r .content.choice <<<"${resp}")"

resp="$(mcp_elicit_titled_choice "Which strategy?" "rolling:Rolling (one node at a time)" "blue-green:Blue/green")"
[ "$(jq -r .action <<<"${resp}")" = accept ] || stop strategy "$(jq -r .action <<<"${resp}")"
strategy="$(jq -r .content.choice <<<"${resp}")"

resp="$(mcp_elicit_multi_choice "Which checks?" smoke load)"
[ "$(jq -r .action <<<"${resp}")" = accept ] || stop checks "$(jq -r .action <<<"${resp}")"
checks="$(jq -r '.content.choices | join(",")' <<<"${resp}")"

resp="$(mcp_elicit_titled_multi_choice "Who is told?" "ops:Operations" "sec:Security")"
[ "$(jq -r .action <<<"${resp}")" = accept ] || stop notify "$(jq -r .action <<<"${resp}")"
notify="$(jq -r '.content.choices | join(",")' <<<"${resp}")"

resp="$(mcp_elicit "Rollout window?" '{"type":"object","properties":{"minutes":{"type":"integer","minimum":5}},"required":["minutes"]}')"
[ "$(jq -r .action <<<"${resp}")" = accept ] || stop window "$(jq -r .action <<<"${resp}")"
minutes="$(jq -r .content.minutes <<<"${resp}")"

mcp_result_success "$(jq -cn --arg s "${service}" --arg a "${approver}" --arg e "${environment}" --arg t "${strategy}" \
	--arg c "${checks}" --arg n "${notify}" --argjson m "${minutes}" \
	'{service: $s, approver: $a, environment: $e, strategy: $t, checks: $c, notify: $n, minutes: $m}')"
