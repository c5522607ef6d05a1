#!/usr/bin/env bash
set -euo pipefail
source "${MCP_SDK}/tool-sdk.sh"

case "$(mcp_args_get '.mode // "crash"')" in
crash)
	printf 'disk full on /var\nsecond line\n' >&2
	exit 3
	;;
ask)
	# As mcp-bash's 08-elicitation does: with set -e, a question nobody answers ends the script.
	resp="$(mcp_elicit_confirm "Proceed?")"
	printf 'answered: %s' "${resp}"
	;;
raw)
	# The reply exactly as printed (no newline added), and the status, for each kind of answer.
	code=0
	mcp_elicit_confirm "Proceed?" || code=$?
	printf '|%s' "${code}"
	code=0
	mcp_elicit_choice "--title" a b || code=$?
	printf '|%s' "${code}"
	;;
esac
