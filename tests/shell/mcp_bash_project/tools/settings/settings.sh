#!/usr/bin/env bash
# The <file>.meta.json layout; config, truncation, retry, JSON and download helpers.
set -euo pipefail
source "${MCP_SDK}/tool-sdk.sh"

mcp_config_load --example config/settings.example.json --env FIELD_DESK_CONFIG --defaults '{"region":"us-east","owner":"ops"}'
region="$(mcp_config_get .region)"
owner="$(mcp_config_get .owner)"
dry="$(mcp_config_get .dryRun)"
missing="$(mcp_config_get .missing --default fallback)"
truncated="$(mcp_json_truncate "$(mcp_config_get .items)" 12)"
attempts=0
flaky() { attempts=$((attempts + 1)); [ "${attempts}" -ge 2 ] || return 3; }
mcp_with_retry 3 0.01 -- flaky
download="$(mcp_download_safe --url https://example.com/data.json --out "${TMPDIR:-/tmp}/field-desk.json")"
mcp_emit_json "$(jq -cn --arg r "${region}" --arg o "${owner}" --arg d "${dry}" --arg m "${missing}" \
	--argjson t "${truncated}" --argjson a "${attempts}" --argjson dl "${download}" --arg obj "$(mcp_json_obj k 'v "q"')" \
	'{region: $r, owner: $o, dryRun: $d, missing: $m, truncated: $t, attempts: $a, download: $dl, obj: $obj}')"
