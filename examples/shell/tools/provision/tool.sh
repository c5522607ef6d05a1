#!/usr/bin/env bash
# elicitkit's own helpers (ek_*): titles, defaults, bounds, formats, the spec's anyOf multi-select, and
# exit codes that say what happened (0 accept, 1 decline, 2 cancel, 3 timeout, 4 not supported, 5 error).
set -euo pipefail
source "${MCP_SDK:?MCP_SDK environment variable not set}/tool-sdk.sh"

name="$(mcp_args_require '.name')"

why() {
	case "$1" in
	1) echo "declined" ;;
	2) echo "cancelled" ;;
	3) echo "nobody answered in time" ;;
	4) echo "this client cannot ask anyone" ;;
	*) echo "the question could not be asked (exit $1)" ;;
	esac
}
stop() { mcp_result_success "$(mcp_json_obj message "Not provisioned: $(why "$1")")"; exit 0; }

# Each helper prints the reply, {"action","content",...}; its exit code says what happened.
reply="$(ek_number --integer --title "Size (GiB)" --min 10 --max 500 --default 20 "How big is ${name}?" gib)" || stop $?
size="$(jq -r '.content.gib' <<<"${reply}")"
reply="$(ek_titled_choice --title Region --default eu "Where?" "eu:Europe (Frankfurt)" "us:US East")" || stop $?
region="$(jq -r '.content.choice' <<<"${reply}")"
reply="$(ek_titled_multi_choice --default pgcrypto "Which extensions?" pgcrypto:pgcrypto postgis:PostGIS vector:pgvector)" || stop $?
extensions="$(jq -r '.content.choices | join(",")' <<<"${reply}")"
reply="$(ek_string --format email --title "Owner's email" "Who owns ${name}?")" || stop $?
owner="$(jq -r '.content.value' <<<"${reply}")"

mcp_result_success "$(mcp_json_obj message "Provisioned ${name}" size_gib "${size}" region "${region}" \
	extensions "${extensions}" owner "${owner}")"
