#!/usr/bin/env bash
# mcp-bash's file protocol by hand, as its documentation describes it: write the request atomically,
# then look for the response every 0.1 s. No SDK; nothing elicitkit-specific.
set -euo pipefail
[ "${MCP_ELICIT_SUPPORTED}" = 1 ] || { echo "elicitation unsupported"; exit 0; }
ask() {
  rm -f "${MCP_ELICIT_RESPONSE_FILE}"
  printf '%s' "$1" >"${MCP_ELICIT_REQUEST_FILE}.tmp.$$"
  mv "${MCP_ELICIT_REQUEST_FILE}.tmp.$$" "${MCP_ELICIT_REQUEST_FILE}"
  for _ in $(seq 1 300); do
    if [ -f "${MCP_ELICIT_RESPONSE_FILE}" ]; then cat "${MCP_ELICIT_RESPONSE_FILE}"; rm -f "${MCP_ELICIT_RESPONSE_FILE}"; return 0; fi
    sleep 0.1
  done
  printf '{"action":"error","content":null}'
}
first="$(ask '{"message":"Your name?","schema":{"type":"object","properties":{"name":{"type":"string","minLength":2}},"required":["name"]},"mode":"form"}')"
second="$(ask '{"message":"Pick outputs","schema":{"type":"object","properties":{"choices":{"type":"array","items":{"oneOf":[{"const":"mp4","title":"MP4 Video"},{"const":"mp3","title":"MP3 Audio"}]}}},"required":["choices"]},"mode":"form"}')"
printf '%s\n%s\n' "${first}" "${second}"
