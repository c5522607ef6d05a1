#!/usr/bin/env bash
# Questions no person can be asked: each gets an error reply and reaches nobody. "<exit code> <reply JSON>".
set -uo pipefail
source "${MCP_SDK}/tool-sdk.sh"
report() {
  local code=0 reply
  reply="$("$@")" || code=$?
  printf '%s %s\n' "${code}" "${reply}"
}
report ek_ask_json 'not json'
report ek_ask_json '{"message":"Which?","mode":"form"}'
report ek_ask_json '{"message":"Which?","mode":"form","schema":{"type":"object","properties":{"a":{"type":"object"}}}}'
report ek_ask_json '{"message":"Which?","mode":"form","schema":{"type":"object","properties":{}},"timeout":-1}'
report ek_url "Open this" "http://registry.example.com/login"
# A line on the ask FIFO that names no question is ignored; the next question is answered as usual.
printf '../../etc/passwd\n' >"${ELICITKIT_ASK}"
# mcp-bash's file protocol with a request that is not JSON: the response says so.
printf '{"message":' >"${MCP_ELICIT_REQUEST_FILE}.tmp" && mv "${MCP_ELICIT_REQUEST_FILE}.tmp" "${MCP_ELICIT_REQUEST_FILE}"
until [ -f "${MCP_ELICIT_RESPONSE_FILE}" ]; do sleep 0.05; done
printf 'file %s\n' "$(cat "${MCP_ELICIT_RESPONSE_FILE}")"
report ek_confirm "Still there?"
