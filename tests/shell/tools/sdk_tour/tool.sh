#!/usr/bin/env bash
# elicitkit's own helpers with their options; each line printed is "<exit code> <reply JSON>".
set -uo pipefail
source "${MCP_SDK}/tool-sdk.sh"
report() {
  local code=0 reply
  reply="$("$@")" || code=$?
  printf '%s %s\n' "${code}" "${reply}"
}
report ek_string --title "Approver" --min 2 --max 10 --default "Ada" "Who approves?"
report ek_number --integer --min 1 --max 5 "How many replicas?" replicas
report ek_titled_multi_choice --min 1 --default eu "Which regions?" "eu:Europe" "us:United States"
report ek_confirm --field go "Go ahead?"
report ek_url "Sign in to the registry" "https://registry.example.com/login"
report mcp_elicit_url "Sign in again" "https://registry.example.com/login"
