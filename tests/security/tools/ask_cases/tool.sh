#!/usr/bin/env bash
# Runs each case it is given, a shell SDK helper and its arguments, and prints one JSON line for each:
# {"code": its exit code, "reply": what it printed, "stderr": what it warned}. A case may start with
# MCPBASH_ELICITATION_TIMEOUT=VALUE, set for that helper alone. With "minimal": true it runs as in mcp-bash's
# minimal mode (no jq): a call to jq prints JQ CALLED.
set -uo pipefail
mapfile -d '' cases < <(jq -j '.cases[] | @sh + "\u0000"' <<<"${MCP_TOOL_ARGS_JSON}")
if [ "$(jq -r '.minimal // false' <<<"${MCP_TOOL_ARGS_JSON}")" = true ]; then
  export MCPBASH_MODE=minimal MCPBASH_JSON_TOOL=none MCPBASH_JSON_TOOL_BIN=
  jq() { echo "JQ CALLED"; return 127; }
  gojq() { echo "JQ CALLED"; return 127; }
fi
source "${MCP_SDK}/tool-sdk.sh"
set +e
stderr="$(mktemp)"
for case in "${cases[@]}"; do
  eval "argv=(${case})"
  code=0
  if [[ "${argv[0]}" == MCPBASH_ELICITATION_TIMEOUT=* ]]; then
    reply="$(MCPBASH_ELICITATION_TIMEOUT="${argv[0]#*=}" "${argv[@]:1}" 2>"${stderr}")" || code=$?
  else
    reply="$("${argv[@]}" 2>"${stderr}")" || code=$?
  fi
  command jq -nc --argjson code "${code}" --arg reply "${reply}" --rawfile stderr "${stderr}" \
    '{code: $code, reply: $reply, stderr: $stderr}'
done
rm -f "${stderr}"
