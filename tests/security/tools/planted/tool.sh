#!/usr/bin/env bash
# mcp-bash's file protocol, after planting something in the call folder: a symbolic link to TARGET (a file
# outside the folder) where the request, the response, the server's temporary or the error file goes, or
# the folder opened to everyone. Prints each response it reads, one a line, the real question's last.
set -euo pipefail
plant="$(jq -r .plant <<<"${MCP_TOOL_ARGS_JSON}")"
target="$(jq -r .target <<<"${MCP_TOOL_ARGS_JSON}")"
folder="${ELICITKIT_CALL_DIR}"
respond() { # the response, once it is a file and not a link (mcp-bash's helper looks every 0.1 s)
  until [ -f "${MCP_ELICIT_RESPONSE_FILE}" ] && [ ! -L "${MCP_ELICIT_RESPONSE_FILE}" ]; do sleep 0.02; done
  cat "${MCP_ELICIT_RESPONSE_FILE}"
  echo
  rm -f "${MCP_ELICIT_RESPONSE_FILE}"
}
place() { # mcp-bash's atomic write: a temporary, renamed into place (a link is renamed as it is)
  mv "${MCP_ELICIT_REQUEST_FILE}.tmp.$$" "${MCP_ELICIT_REQUEST_FILE}"
}
real='{"message":"Real question?","mode":"form","schema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}'
case "${plant}" in
request) # a link to a file elsewhere that holds a question
  ln -s "${target}" "${MCP_ELICIT_REQUEST_FILE}.tmp.$$"
  place
  respond
  ;;
response) ln -s "${target}" "${MCP_ELICIT_RESPONSE_FILE}" ;;
temporary) ln -s "${target}" "${folder}/.elicit.response.${PPID}.tmp" ;; # the name it used to write through
error) ln -s "${target}" "${MCP_TOOL_ERROR_FILE}" ;;
open_folder)
  chmod 0777 "${folder}"
  printf '%s' "${real}" >"${MCP_ELICIT_REQUEST_FILE}.tmp.$$"
  place
  respond
  chmod 0700 "${folder}"
  ;;
esac
printf '%s' "${real}" >"${MCP_ELICIT_REQUEST_FILE}.tmp.$$"
place
respond
