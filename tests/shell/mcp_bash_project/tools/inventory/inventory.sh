#!/usr/bin/env bash
# The <name>.sh + <name>.meta.json layout; the roots helpers and an embedded resource.
set -euo pipefail
source "${MCP_SDK}/tool-sdk.sh"

if ! path="$(mcp_require_path '.path' --default-to-single-root)"; then exit 1; fi
if [ -d "${path}" ]; then path="${path}/inventory.txt"; fi
if ! mcp_roots_contains "${path}"; then
	mcp_error permission_denied "Path is outside allowed roots" --hint "Try a path within: $(mcp_roots_list)"
	exit 0
fi
lines="$(wc -l <"${path}" | tr -d ' ')"
mcp_result_text_with_resource "$(jq -cn --arg p "${path}" --argjson n "${lines}" --argjson c "$(mcp_roots_count)" \
	'{path: $p, lines: $n, roots: $c}')" --path "${path}" --mime text/plain
