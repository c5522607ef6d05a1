#!/usr/bin/env bash
# elicitkit's shell SDK: mcp-bash's tool helpers, by the same names, for tools served by `elicitkit serve`.
#
#   source "${MCP_SDK}/tool-sdk.sh"          # inside a served tool (MCP_SDK is set), as mcp-bash tools do
#   eval "$(elicitkit shell-sdk)"            # or source "$(elicitkit shell-sdk --path)"
#
# Questions go to the server over the call's ask FIFO ($ELICITKIT_ASK): no polling on either side, and the
# answer is validated against the schema before the tool sees it. Needs bash >= 4.1; jq only for
# mcp_args_get / mcp_meta_get and friends, as in mcp-bash. docs/shell.md documents every helper.
#
# Elicitation helpers print the reply, {"action":"accept|decline|cancel|error","content":{...}|null}, with
# "error" (timeout | not_supported | invalid_request | refused) when there was no answer and
# "elicitationId" for links. mcp-bash's return codes are kept: 0 when the person answered (accept, decline
# or cancel), 1 otherwise. The ek_* forms return elicitkit's codes instead: 0 accept, 1 decline,
# 2 cancel, 3 timeout, 4 not supported, 5 any other error (the same as `elicitkit ask`).

MCP_TOOL_CANCELLATION_FILE="${MCP_CANCEL_FILE:-}"

# --- JSON ------------------------------------------------------------------------------------------------

__ek_quote() {
	# __ek_quote VALUE: the JSON string literal (quoted) for VALUE, in __ek_q. Every text that enters JSON
	# here goes through it; it sets a variable rather than printing so that helpers need no subshell.
	local s="${1-}" out="" c i
	s="${s//\\/\\\\}"
	s="${s//\"/\\\"}"
	s="${s//$'\n'/\\n}"
	s="${s//$'\r'/\\r}"
	s="${s//$'\t'/\\t}"
	if [[ "${s}" == *[$'\x01'-$'\x1f']* ]]; then
		for ((i = 0; i < ${#s}; i++)); do
			c="${s:i:1}"
			if [[ "${c}" == [$'\x01'-$'\x1f'] ]]; then
				printf -v c '\\u%04x' "'${c}"
			fi
			out+="${c}"
		done
		s="${out}"
	fi
	__ek_q="\"${s}\""
}

mcp_json_escape() {
	# A JSON string literal (quoted) for $1.
	__ek_quote "${1-}"
	printf '%s' "${__ek_q}"
}

mcp_json_obj() {
	# {"k1":"v1",...} from key/value pairs, every value a string.
	if (($# % 2)); then
		printf 'mcp_json_obj: expected key value pairs, got %d arguments\n' "$#" >&2
		exit 1
	fi
	local out="{" sep=""
	while (($#)); do
		__ek_quote "$1"
		out+="${sep}${__ek_q}:"
		__ek_quote "$2"
		out+="${__ek_q}"
		sep=","
		shift 2
	done
	printf '%s}' "${out}"
}

mcp_json_arr() {
	local out="[" sep="" v
	for v in "$@"; do
		__ek_quote "${v}"
		out+="${sep}${__ek_q}"
		sep=","
	done
	printf '%s]' "${out}"
}

__ek_jq() {
	local bin="${MCPBASH_JSON_TOOL_BIN:-}"
	[ -n "${bin}" ] || bin="$(command -v jq || command -v gojq || true)"
	if [ -z "${bin}" ]; then
		printf '%s: needs jq (apt-get install jq)\n' "${FUNCNAME[1]}" >&2
		return 127
	fi
	"${bin}" "$@"
}

# --- arguments and request metadata ----------------------------------------------------------------------

mcp_args_raw() {
	if [ -n "${MCP_TOOL_ARGS_FILE:-}" ] && [ -f "${MCP_TOOL_ARGS_FILE}" ]; then cat "${MCP_TOOL_ARGS_FILE}"; else printf '%s' "${MCP_TOOL_ARGS_JSON:-{\}}"; fi
}

mcp_meta_raw() {
	if [ -n "${MCP_TOOL_META_FILE:-}" ] && [ -f "${MCP_TOOL_META_FILE}" ]; then cat "${MCP_TOOL_META_FILE}"; else printf '%s' "${MCP_TOOL_META_JSON:-{\}}"; fi
}

mcp_args_get() { mcp_args_raw | __ek_jq -rc "$1"; }
mcp_meta_get() { mcp_meta_raw | __ek_jq -rc "$1"; }

mcp_args_require() {
	local value
	value="$(mcp_args_get "$1" 2>/dev/null || true)"
	if [ -z "${value}" ] || [ "${value}" = "null" ]; then
		mcp_fail_invalid_args "${2:-$1 is required}"
	fi
	printf '%s' "${value}"
}

mcp_args_bool() {
	local pointer="$1" has_default=0 default=false value
	shift
	if [ "${1:-}" = "--default" ]; then has_default=1 default="$2"; fi
	value="$(mcp_args_get "${pointer}" 2>/dev/null || true)"
	if [ -z "${value}" ] || [ "${value}" = "null" ]; then
		((has_default)) || mcp_fail_invalid_args "${pointer} is required"
		value="${default}"
	fi
	case "${value}" in true | 1) printf 'true' ;; *) printf 'false' ;; esac
}

mcp_args_int() {
	local pointer="$1" has_default=0 default="" min="" max="" value
	shift
	while (($#)); do
		case "$1" in
		--default) has_default=1 default="$2" ;;
		--min) min="$2" ;;
		--max) max="$2" ;;
		*) break ;;
		esac
		shift 2
	done
	value="$(mcp_args_get "${pointer}" 2>/dev/null || true)"
	if [ -z "${value}" ] || [ "${value}" = "null" ]; then
		((has_default)) || mcp_fail_invalid_args "${pointer} is required"
		value="${default}"
	fi
	[[ "${value}" =~ ^-?[0-9]{1,18}$ ]] || mcp_fail_invalid_args "${pointer} must be an integer"
	# Bounds are the script's: one that is not an integer is the tool's fault, never evaluated as arithmetic
	# (where a $(...) in it would run). Every operand is read in base 10, so 08 is 8, not a bad octal number.
	[[ -z "${min}" || "${min}" =~ ^-?[0-9]{1,18}$ ]] || mcp_fail -32603 "mcp_args_int: --min must be an integer"
	[[ -z "${max}" || "${max}" =~ ^-?[0-9]{1,18}$ ]] || mcp_fail -32603 "mcp_args_int: --max must be an integer"
	if [ -n "${min}" ] && (($(__ek_base10 "${value}") < $(__ek_base10 "${min}"))); then
		mcp_fail_invalid_args "${pointer} must be >= ${min}"
	fi
	if [ -n "${max}" ] && (($(__ek_base10 "${value}") > $(__ek_base10 "${max}"))); then
		mcp_fail_invalid_args "${pointer} must be <= ${max}"
	fi
	printf '%s' "${value}"
}

__ek_base10() {
	# An integer's text (checked by the caller) as bash arithmetic reads it in base 10: -08 is -10#08.
	if [[ "$1" == -* ]]; then printf -- '-10#%s' "${1#-}"; else printf '10#%s' "$1"; fi
}

# --- results ---------------------------------------------------------------------------------------------

mcp_emit_text() { printf '%s' "$1"; }
mcp_emit_json() { printf '%s' "$1"; }

mcp_result_success() {
	# A CallToolResult whose structuredContent is {"success":true,"result":DATA}; DATA must be JSON.
	local data="${1-}" envelope
	if [ -z "${data}" ] || { command -v "${MCPBASH_JSON_TOOL_BIN:-jq}" >/dev/null 2>&1 && ! printf '%s' "${data}" | __ek_jq -e . >/dev/null 2>&1; }; then
		mcp_result_error '{"type":"internal_error","message":"mcp_result_success needs one JSON value"}'
		return 0
	fi
	envelope="{\"success\":true,\"result\":${data}}"
	printf '{"content":[{"type":"text","text":%s}],"structuredContent":%s,"isError":false}\n' \
		"$(mcp_json_escape "${envelope}")" "${envelope}"
}

mcp_result_error() {
	# A CallToolResult with isError and structuredContent {"success":false,"error":ERROR}; ERROR is {type, message}.
	local error="${1:-}" message
	if [ -z "${error}" ] || ! printf '%s' "${error}" | __ek_jq -e 'type == "object"' >/dev/null 2>&1; then
		error="{\"type\":\"internal_error\",\"message\":$(mcp_json_escape "${error:-Unknown error}")}"
	fi
	message="$(printf '%s' "${error}" | __ek_jq -r '.message // "Unknown error" | tostring' 2>/dev/null || printf 'Tool error')"
	printf '{"content":[{"type":"text","text":%s}],"structuredContent":{"success":false,"error":%s},"isError":true}\n' \
		"$(mcp_json_escape "${message}")" "${error}"
}

mcp_error() {
	# mcp_error TYPE MESSAGE [--hint HINT] [--data JSON]
	local type="${1:-internal_error}" message="${2:-Unknown error}" hint="" data="" error
	shift 2 2>/dev/null || shift $#
	while (($#)); do
		case "$1" in --hint) hint="$2" ;; --data) data="$2" ;; esac
		shift 2 2>/dev/null || shift $#
	done
	error="{\"type\":$(mcp_json_escape "${type}"),\"message\":$(mcp_json_escape "${message}")"
	[ -n "${hint}" ] && error+=",\"hint\":$(mcp_json_escape "${hint}")"
	[ -n "${data}" ] && error+=",\"data\":${data}"
	mcp_result_error "${error}}"
}

mcp_fail() {
	# mcp_fail CODE MESSAGE [DATA]: the call fails with that JSON-RPC error; the script exits 1.
	local code="${1:-}" message="${2:-Tool failed}" data="${3:-null}" body
	[[ "${code}" =~ ^-?[0-9]+$ ]] || code=-32603
	body="{\"code\":${code},\"message\":$(mcp_json_escape "${message}"),\"data\":${data}}"
	[ -n "${MCP_TOOL_ERROR_FILE:-}" ] && printf '%s\n' "${body}" >"${MCP_TOOL_ERROR_FILE}"
	printf '%s\n' "${body}"
	printf '%s\n' "${message}" >&2
	exit 1
}

mcp_fail_invalid_args() { mcp_fail -32602 "${1:-Invalid params}" "${2:-null}"; }

# --- progress, logs, cancellation ------------------------------------------------------------------------

mcp_is_cancelled() { [ -n "${MCP_TOOL_CANCELLATION_FILE}" ] && [ -f "${MCP_TOOL_CANCELLATION_FILE}" ]; }

mcp_progress() {
	# mcp_progress PERCENT MESSAGE [TOTAL]
	[ -n "${MCP_PROGRESS_TOKEN:-}" ] && [ -n "${MCP_PROGRESS_STREAM:-}" ] || return 0
	local percent="${1:-0}" total="${3:-null}"
	[[ "${percent}" =~ ^[0-9]+$ ]] || percent=0
	[[ "${total}" =~ ^[0-9]+$ ]] || total=null
	printf '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"%s","progress":%s,"total":%s,"message":%s}}\n' \
		"elicitkit" "${percent}" "${total}" "$(mcp_json_escape "${2-}")" >>"${MCP_PROGRESS_STREAM}" 2>/dev/null || true
}

mcp_log() {
	# mcp_log LEVEL LOGGER JSON
	[ -n "${MCP_LOG_STREAM:-}" ] || return 0
	local level
	level="$(printf '%s' "${1:-info}" | tr '[:upper:]' '[:lower:]')"
	case " ${level} " in " debug " | " info " | " notice " | " warning " | " error " | " critical " | " alert " | " emergency ") ;; *) level=info ;; esac
	printf '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"%s","logger":%s,"data":%s}}\n' \
		"${level}" "$(mcp_json_escape "${2-}")" "${3:-null}" >>"${MCP_LOG_STREAM}" 2>/dev/null || true
}
mcp_log_debug() { mcp_log debug "$1" "$(mcp_json_escape "$2")"; }
mcp_log_info() { mcp_log info "$1" "$(mcp_json_escape "$2")"; }
mcp_log_warn() { mcp_log warning "$1" "$(mcp_json_escape "$2")"; }
mcp_log_error() { mcp_log error "$1" "$(mcp_json_escape "$2")"; }
mcp_debug() { [ -z "${MCPBASH_DEBUG_LOG:-}" ] || printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >>"${MCPBASH_DEBUG_LOG}"; }

# --- elicitation -----------------------------------------------------------------------------------------

__ek_reply_code() {
	# elicitkit's exit code for a reply: 0 accept, 1 decline, 2 cancel, 3 timeout, 4 not supported, 5 error.
	# Read from the reply's start, where the server writes "action" (and "error" after a null content), so
	# a person's answer in "content" (a field named "error" holding "timeout") is never taken for it.
	case "$1" in
	'{"action":"accept",'*) return 0 ;;
	'{"action":"decline","content":null,"error":"not_supported"'*) return 4 ;;
	'{"action":"decline",'*) return 1 ;;
	'{"action":"cancel",'*) return 2 ;;
	'{"action":"error","content":null,"error":"timeout"'*) return 3 ;;
	*) return 5 ;;
	esac
}

ek_ask_json() {
	# ek_ask_json REQUEST_JSON: ask, print the reply, return elicitkit's code. No polling: the reply
	# comes on a FIFO of this question's own. REQUEST_JSON is sent as it is: build it with jq, or use
	# the helpers below, which encode every value.
	if [ "${MCP_ELICIT_SUPPORTED:-0}" != "1" ]; then
		printf '{"action":"decline","content":null,"error":"not_supported"}\n'
		return 4
	fi
	if [ -z "${ELICITKIT_ASK:-}" ] || [ ! -p "${ELICITKIT_ASK}" ]; then
		printf '{"action":"error","content":null,"error":"invalid_request","message":"not inside a tool served by elicitkit"}\n'
		return 5
	fi
	local base="${ELICITKIT_CALL_DIR}/q.${BASHPID}.${RANDOM}${RANDOM}" fd reply=""
	printf '%s' "$1" >"${base}.json"
	mkfifo -m 600 "${base}.fifo"
	exec {fd}<>"${base}.fifo"
	printf '%s\n' "${base##*/}" >"${ELICITKIT_ASK}"
	IFS= read -r -u "${fd}" reply || true
	exec {fd}<&-
	rm -f "${base}.json" "${base}.fifo"
	printf '%s\n' "${reply}"
	__ek_reply_code "${reply}"
}

__ek_mcp_code() {
	# mcp-bash's codes: 0 when the person answered, 1 when nobody did.
	case "$1" in 0 | 1 | 2) return 0 ;; *) return 1 ;; esac
}

# --- building a question: every value is encoded, none is spliced -----------------------------------------

__ek_refuse() {
	# __ek_refuse MESSAGE: a question the SDK will not send. The reply says why (invalid_request), code 5.
	__ek_quote "$1"
	printf '{"action":"error","content":null,"error":"invalid_request","message":%s}\n' "${__ek_q}"
	return 5
}

__ek_value() {
	# __ek_value KIND OPTION VALUE: VALUE as JSON, in __ek_q. The one way a value enters a request: text is
	# quoted; a number (JSON's grammar), a count (0, 1, 2...) or a boolean (true, false) that is not one is
	# refused, naming OPTION, and never sent.
	local number='^-?(0|[1-9][[:digit:]]*)(\.[[:digit:]]+)?([eE][+-]?[[:digit:]]+)?$' count='^(0|[1-9][[:digit:]]*)$'
	case "$1" in
	text) __ek_quote "$3" && return 0 ;;
	number) [[ "$3" =~ ${number} ]] && __ek_q="$3" && return 0 ;;
	count) [[ "$3" =~ ${count} ]] && __ek_q="$3" && return 0 ;;
	boolean) [[ "$3" == true || "$3" == false ]] && __ek_q="$3" && return 0 ;;
	esac
	local want="a number"
	case "$1" in count) want="a whole number (0 or more)" ;; boolean) want="true or false" ;; esac
	__ek_refuse "$2 must be ${want}, not '$3'"
}

__ek_put() {
	# __ek_put KEY KIND OPTION VALUE: "KEY":VALUE added to the field being built (__ek_prop); an empty VALUE
	# adds nothing. KEY is always the SDK's own word.
	[ -n "$4" ] || return 0
	__ek_value "$2" "$3" "$4" || return
	__ek_prop+=",\"$1\":${__ek_q}"
}

__ek_field() {
	# __ek_field TYPE: start the field (__ek_prop) with its type and what every field takes: title, description.
	__ek_prop="\"type\":\"$1\""
	__ek_put title text --title "${__ek_title}" && __ek_put description text --description "${__ek_desc}"
}

__ek_with_timeout() {
	# __ek_with_timeout SECONDS OPTION: ',"timeout":SECONDS' in __ek_t, or nothing when SECONDS is empty.
	__ek_t=""
	[ -n "$1" ] || return 0
	__ek_value number "$2" "$1" || return
	__ek_t=",\"timeout\":${__ek_q}"
}

__ek_ask() {
	# __ek_ask FIELD MESSAGE: ask for the one field built in __ek_prop, required unless it has a default.
	local field message required=""
	__ek_with_timeout "${__ek_timeout}" --timeout || return
	__ek_quote "$1"
	field="${__ek_q}"
	__ek_quote "$2"
	message="${__ek_q}"
	[ -n "${__ek_default}" ] || required=",\"required\":[${field}]"
	ek_ask_json "{\"message\":${message},\"mode\":\"form\",\"schema\":{\"type\":\"object\",\"properties\":{${field}:{${__ek_prop}}}${required}}${__ek_t}}"
}

# Options every question helper takes before its message:
#   --title T  --description D  --default V  --min N  --max N  --format F (email|uri|date|date-time)
#   --timeout SECONDS  --field NAME (the content key; mcp-bash's names by default)
__ek_parse() {
	__ek_title="" __ek_desc="" __ek_default="" __ek_min="" __ek_max="" __ek_format="" __ek_timeout="" __ek_field=""
	__ek_shift=0
	while (($#)); do
		case "$1" in
		--title) __ek_title="$2" ;;
		--description) __ek_desc="$2" ;;
		--default) __ek_default="$2" ;;
		--min) __ek_min="$2" ;;
		--max) __ek_max="$2" ;;
		--format) __ek_format="$2" ;;
		--timeout) __ek_timeout="$2" ;;
		--field) __ek_field="$2" ;;
		--) ((__ek_shift += 1)) && break ;;
		*) break ;;
		esac
		(($# >= 2)) || break
		shift 2
		((__ek_shift += 2))
	done
}

__ek_options() {
	# __ek_options TITLED(0|1) OPTION...: in __ek_opts, the options as JSON: strings, or for value:Title
	# {"const","title"} objects (the title is the value when there is no colon).
	local titled="$1" sep="" opt
	__ek_opts=""
	shift
	for opt in "$@"; do
		if ((titled)); then
			__ek_quote "${opt%%:*}"
			__ek_opts+="${sep}{\"const\":${__ek_q},\"title\":"
			__ek_quote "${opt#*:}"
			__ek_opts+="${__ek_q}}"
		else
			__ek_quote "${opt}"
			__ek_opts+="${sep}${__ek_q}"
		fi
		sep=","
	done
}

mcp_elicit() {
	# mcp_elicit MESSAGE SCHEMA_JSON [TIMEOUT] [MODE]: mcp-bash's core call (MODE url takes the URL as SCHEMA).
	# The schema travels as text, which the server reads as exactly one JSON object: whatever SCHEMA_JSON
	# holds, it cannot reach outside the schema.
	local message code=0
	__ek_with_timeout "${3:-}" TIMEOUT || return 1
	__ek_quote "${1-}"
	message="${__ek_q}"
	__ek_quote "${2-}"
	if [ "${4:-form}" = "url" ]; then
		ek_ask_json "{\"message\":${message},\"mode\":\"url\",\"url\":${__ek_q}${__ek_t}}" || code=$?
	else
		ek_ask_json "{\"message\":${message},\"mode\":\"form\",\"schema\":${__ek_q}${__ek_t}}" || code=$?
	fi
	__ek_mcp_code "${code}"
}

mcp_elicit_url() {
	# mcp_elicit_url MESSAGE URL [TIMEOUT]: the reply carries the link's "elicitationId".
	mcp_elicit "${1-}" "${2-}" "${3:-}" url
}

ek_confirm() {
	__ek_parse "$@"
	shift "${__ek_shift}"
	__ek_field boolean && __ek_put default boolean --default "${__ek_default}" || return
	__ek_ask "${__ek_field:-confirmed}" "${1-}"
}

ek_string() {
	__ek_parse "$@"
	shift "${__ek_shift}"
	__ek_field string && __ek_put minLength count --min "${__ek_min}" && __ek_put maxLength count --max "${__ek_max}" &&
		__ek_put format text --format "${__ek_format}" && __ek_put default text --default "${__ek_default}" || return
	__ek_ask "${__ek_field:-${2:-value}}" "${1-}"
}

ek_number() {
	# ek_number [--integer] [options] MESSAGE [FIELD]
	local kind=number
	if [ "${1:-}" = "--integer" ]; then kind=integer && shift; fi
	__ek_parse "$@"
	shift "${__ek_shift}"
	__ek_field "${kind}" && __ek_put minimum number --min "${__ek_min}" && __ek_put maximum number --max "${__ek_max}" &&
		__ek_put default number --default "${__ek_default}" || return
	__ek_ask "${__ek_field:-${2:-value}}" "${1-}"
}

__ek_choice() {
	# __ek_choice TITLED(0|1) [options] MESSAGE OPTION...
	local titled="$1" message
	shift
	__ek_parse "$@"
	shift "${__ek_shift}"
	message="${1-}"
	shift
	__ek_field string || return
	__ek_options "${titled}" "$@"
	if ((titled)); then __ek_prop+=",\"oneOf\":[${__ek_opts}]"; else __ek_prop+=",\"enum\":[${__ek_opts}]"; fi
	__ek_put default text --default "${__ek_default}" || return
	__ek_ask "${__ek_field:-choice}" "${message}"
}

__ek_choices() {
	# __ek_choices TITLED(0|1) [options] MESSAGE OPTION...; --default takes a comma-separated list.
	local titled="$1" message rest defaults="" sep=""
	shift
	__ek_parse "$@"
	shift "${__ek_shift}"
	message="${1-}"
	shift
	__ek_field array || return
	__ek_options "${titled}" "$@"
	if ((titled)); then
		__ek_prop+=",\"items\":{\"anyOf\":[${__ek_opts}]}"
	else
		__ek_prop+=",\"items\":{\"type\":\"string\",\"enum\":[${__ek_opts}]}"
	fi
	__ek_put minItems count --min "${__ek_min}" && __ek_put maxItems count --max "${__ek_max}" || return
	if [ -n "${__ek_default}" ]; then
		# Split on commas as `IFS=, read -a` would (a final empty value is dropped), newlines kept.
		rest="${__ek_default}"
		while [ -n "${rest}" ]; do
			__ek_quote "${rest%%,*}"
			defaults+="${sep}${__ek_q}"
			sep=","
			if [[ "${rest}" == *,* ]]; then rest="${rest#*,}"; else rest=""; fi
		done
		__ek_prop+=",\"default\":[${defaults}]"
	fi
	__ek_ask "${__ek_field:-choices}" "${message}"
}

ek_choice() { __ek_choice 0 "$@"; }
ek_titled_choice() { __ek_choice 1 "$@"; }
ek_multi_choice() { __ek_choices 0 "$@"; }
ek_titled_multi_choice() { __ek_choices 1 "$@"; }

ek_url() {
	# ek_url [--timeout S] MESSAGE URL
	local message
	__ek_parse "$@"
	shift "${__ek_shift}"
	__ek_with_timeout "${__ek_timeout}" --timeout || return
	__ek_quote "${1-}"
	message="${__ek_q}"
	__ek_quote "${2-}"
	ek_ask_json "{\"message\":${message},\"mode\":\"url\",\"url\":${__ek_q}${__ek_t}}"
}

# mcp-bash's names: the same content keys (confirmed, value, choice, choices) and return codes, plus the
# options above; a titled multi-select goes out as the spec's items.anyOf.
__ek_as_mcp() {
	local code=0
	"$@" || code=$?
	__ek_mcp_code "${code}"
}
mcp_elicit_confirm() { __ek_as_mcp ek_confirm "$@"; }
mcp_elicit_string() { __ek_as_mcp ek_string "$@"; }
mcp_elicit_number() { __ek_as_mcp ek_number "$@"; }
mcp_elicit_choice() { __ek_as_mcp ek_choice "$@"; }
mcp_elicit_titled_choice() { __ek_as_mcp ek_titled_choice "$@"; }
mcp_elicit_multi_choice() { __ek_as_mcp ek_multi_choice "$@"; }
mcp_elicit_titled_multi_choice() { __ek_as_mcp ek_titled_multi_choice "$@"; }
