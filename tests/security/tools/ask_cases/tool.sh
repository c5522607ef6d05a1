#!/usr/bin/env bash
# Runs each case it is given, a shell SDK helper and its arguments, and prints "<exit code> <reply>" for
# each. With "minimal": true it runs as in mcp-bash's minimal mode (no jq): a call to jq prints JQ CALLED.
set -uo pipefail
mapfile -d '' cases < <(jq -j '.cases[] | @sh + "\u0000"' <<<"${MCP_TOOL_ARGS_JSON}")
if [ "$(jq -r '.minimal // false' <<<"${MCP_TOOL_ARGS_JSON}")" = true ]; then
  export MCPBASH_MODE=minimal MCPBASH_JSON_TOOL=none MCPBASH_JSON_TOOL_BIN=
  jq() { echo "JQ CALLED"; return 127; }
  gojq() { echo "JQ CALLED"; return 127; }
fi
source "${MCP_SDK}/tool-sdk.sh"
for case in "${cases[@]}"; do
  eval "argv=(${case})"
  code=0
  reply="$("${argv[@]}")" || code=$?
  printf '%s %s\n' "${code}" "${reply}"
done
