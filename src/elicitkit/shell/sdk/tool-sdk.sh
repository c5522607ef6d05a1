#!/usr/bin/env bash
# elicitkit's shell SDK: every helper of mcp-bash's tool SDK, by the same names, arguments, outputs and exit
# codes, for tools served by `elicitkit serve`; plus elicitkit's own ek_* helpers.
#
#   source "${MCP_SDK}/tool-sdk.sh"          # inside a served tool (MCP_SDK is set), as mcp-bash tools do
#   eval "$(elicitkit shell-sdk)"            # or source "$(elicitkit shell-sdk --path)"
#
# Sourcing it turns on `set -euo pipefail`, as mcp-bash's SDK does. Needs bash >= 4.1; jq (or gojq) for the
# helpers that read JSON, as in mcp-bash. docs/shell.md documents every helper and where elicitkit differs.
#
# mcp-bash's elicitation helpers (mcp_elicit*) keep mcp-bash's contract: they print {"action","content"}
# without a newline and return 0 whenever the client answered (accept, decline, cancel, or "error" when the
# client failed the request), 1 when nobody could be asked or nobody answered within
# ${MCPBASH_ELICITATION_TIMEOUT:-30} seconds. The ek_* helpers print elicitkit's reply (with "error" saying
# why nobody answered, "elicitationId" for links) and return 0 accept, 1 decline, 2 cancel, 3 timeout,
# 4 not supported, 5 any other error, like `elicitkit ask`. Questions travel over the call's ask FIFO
# ($ELICITKIT_ASK): no polling on either side, and every answer is validated before the tool sees it.

set -euo pipefail

MCP_TOOL_CANCELLATION_FILE="${MCP_CANCEL_FILE:-}"
MCP_PROGRESS_STREAM="${MCP_PROGRESS_STREAM:-}"
MCP_LOG_STREAM="${MCP_LOG_STREAM:-}"
MCP_PROGRESS_TOKEN="${MCP_PROGRESS_TOKEN:-}"

# --- JSON ------------------------------------------------------------------------------------------------

__ek_quote() {
	# __ek_quote VALUE: the JSON string literal (quoted) for VALUE, in __ek_q. Every text that enters JSON
	# here goes through it; it sets a variable rather than printing so that helpers need no subshell.
	# Kept small: bash copies a function's whole body on every call, and this one runs for every value.
	local s="${1-}"
	if [[ "${s}" == *[\\\"$'\x01'-$'\x1f']* ]]; then __ek_escape "${s}" && s="${__ek_q}"; fi
	__ek_q="\"${s}\""
}

__ek_escape() {
	# __ek_escape TEXT: TEXT with JSON's escapes (no quotes around it), in __ek_q.
	local s="$1" out="" c i
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
	__ek_q="${s}"
}

__ek_warn() { printf '%s\n' "$1" >&2; }

__ek_jq_bin() {
	# The JSON tool mcp-bash would use, in __ek_jqb; empty (and status 1) when there is none.
	__ek_jqb="${MCPBASH_JSON_TOOL_BIN:-}"
	if [ -z "${__ek_jqb}" ] || ! command -v "${__ek_jqb}" >/dev/null 2>&1; then
		__ek_jqb="$(command -v jq || command -v gojq || true)"
	fi
	[ -n "${__ek_jqb}" ]
}

__ek_jq() {
	if ! __ek_jq_bin; then
		printf '%s: needs jq (apt-get install jq)\n' "${FUNCNAME[1]}" >&2
		return 127
	fi
	"${__ek_jqb}" "$@"
}

__ek_full() {
	# mcp-bash's "full" mode: JSON tooling is there and not switched off.
	[ "${MCPBASH_MODE:-full}" != "minimal" ] && __ek_jq_bin
}

mcp_json_escape() {
	# A JSON string literal (quoted) for $1.
	__ek_quote "${1-}"
	printf '%s' "${__ek_q}"
}

mcp_json_obj() {
	# {"k1":"v1",...} from key/value pairs, every value a string; an odd count ends the script.
	if (($# % 2)); then
		__ek_warn "mcp_json_obj: expected even number of arguments (key value ...), got $#"
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

mcp_is_valid_json() {
	# Exactly one JSON value? Without JSON tooling (mcp-bash's minimal mode) every text is taken as valid.
	__ek_full || return 0
	printf '%s' "${1-}" | "${__ek_jqb}" -e -s 'length == 1' >/dev/null 2>&1
}

mcp_byte_length() { printf '%s' "${1-}" | wc -c | tr -d ' '; }

__ek_uint() {
	# __ek_uint VALUE DEFAULT: VALUE when it is a whole number (spaces around it ignored), else DEFAULT (or 0).
	local value="${1-}" default="${2:-0}"
	value="${value//[[:space:]]/}"
	default="${default//[[:space:]]/}"
	[[ "${default}" =~ ^[0-9]+$ ]] || default=0
	if [[ "${value}" =~ ^[0-9]+$ ]]; then printf '%s' "${value}"; else printf '%s' "${default}"; fi
}

# --- arguments and request metadata ----------------------------------------------------------------------

__ek_payload() {
	# __ek_payload INLINE_VAR FILE_VAR: the file's text when FILE_VAR names one, else INLINE_VAR's (or {}).
	# Read with xtrace off: `bash -x` must not print the arguments into a trace.
	local traced=0 file="${!2:-}"
	case $- in *x*) traced=1 && set +x ;; esac
	if [ -n "${file}" ] && [ -f "${file}" ]; then cat "${file}"; else printf '%s' "${!1:-{\}}"; fi
	if ((traced)); then set -x; fi
}

mcp_args_raw() { __ek_payload MCP_TOOL_ARGS_JSON MCP_TOOL_ARGS_FILE; }
mcp_meta_raw() { __ek_payload MCP_TOOL_META_JSON MCP_TOOL_META_FILE; }

__ek_get() {
	# __ek_get CALLER RAW_FUNCTION FILTER: FILTER applied to the payload, as mcp_args_get / mcp_meta_get.
	local caller="$1" raw="$2" filter="$3" payload result rc=0
	if ! __ek_full; then
		__ek_warn "${caller}: JSON tooling unavailable; use ${raw} instead"
		return 1
	fi
	payload="$("${raw}")"
	result="$(printf '%s' "${payload}" | "${__ek_jqb}" -rc "${filter}" 2>/dev/null)" || rc=$?
	if ((rc)); then
		__ek_warn "${caller}: jq error (rc=${rc}) filter=${filter} payload_len=${#payload}"
		return "${rc}"
	fi
	printf '%s' "${result}"
}

mcp_args_get() { __ek_get mcp_args_get mcp_args_raw "${1-.}"; }
mcp_meta_get() { __ek_get mcp_meta_get mcp_meta_raw "${1-.}"; }

mcp_args_require() {
	local value
	value="$(mcp_args_get "$1" 2>/dev/null || true)"
	if [ -z "${value}" ] || [ "${value}" = "null" ]; then
		mcp_fail_invalid_args "${2:-$1 is required}"
	fi
	printf '%s' "${value}"
}

__ek_missing() {
	# __ek_missing POINTER: the invalid-params failure for a required argument that is absent.
	if [ "${MCPBASH_MODE:-full}" = "minimal" ]; then
		mcp_fail_invalid_args "$1 requires JSON tooling or a default"
	fi
	mcp_fail_invalid_args "$1 is required"
}

mcp_args_bool() {
	local pointer="$1" has_default=0 default=false value
	shift
	if [ "${1:-}" = "--default" ]; then has_default=1 default="${2-}"; fi
	value="$(mcp_args_get "${pointer}" 2>/dev/null || true)"
	if [ -z "${value}" ] || [ "${value}" = "null" ]; then
		((has_default)) || __ek_missing "${pointer}"
		value="${default}"
	fi
	case "${value}" in true | 1) printf 'true' ;; *) printf 'false' ;; esac
}

mcp_args_int() {
	local pointer="$1" has_default=0 default="" min="" max="" value
	shift
	while (($#)); do
		case "$1" in
		--default) has_default=1 default="${2-}" ;;
		--min) min="${2-}" ;;
		--max) max="${2-}" ;;
		*) break ;;
		esac
		shift 2 || shift $#
	done
	# Bounds are the script's: one that is not an integer is the tool's fault, never evaluated as arithmetic
	# (where a $(...) in it would run). Every operand is read in base 10, so 08 is 8, not a bad octal number.
	[[ -z "${min}" || "${min}" =~ ^-?[0-9]{1,18}$ ]] || mcp_fail -32603 "mcp_args_int: --min must be an integer"
	[[ -z "${max}" || "${max}" =~ ^-?[0-9]{1,18}$ ]] || mcp_fail -32603 "mcp_args_int: --max must be an integer"
	if [ -n "${min}" ] && [ -n "${max}" ] && (($(__ek_base10 "${min}") > $(__ek_base10 "${max}"))); then
		mcp_fail_invalid_args "mcp_args_int: --min cannot exceed --max"
	fi
	value="$(mcp_args_get "${pointer}" 2>/dev/null || true)"
	if [ -z "${value}" ] || [ "${value}" = "null" ]; then
		((has_default)) || __ek_missing "${pointer}"
		value="${default}"
	fi
	[[ "${value}" =~ ^-?[0-9]{1,18}$ ]] || mcp_fail_invalid_args "${pointer} must be an integer"
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

# --- progress, logs, cancellation ------------------------------------------------------------------------

mcp_is_cancelled() { [ -n "${MCP_TOOL_CANCELLATION_FILE}" ] && [ -f "${MCP_TOOL_CANCELLATION_FILE}" ]; }

mcp_progress() {
	# mcp_progress PERCENT MESSAGE [TOTAL]: PERCENT is clamped to 0..100; anything not a number is 0.
	[ -n "${MCP_PROGRESS_TOKEN}" ] && [ -n "${MCP_PROGRESS_STREAM}" ] || return 0
	local percent="${1-}" total="${3-}" token
	if [[ "${percent}" =~ ^[0-9]+$ ]]; then
		if ((10#${percent} > 100)); then percent=100; else percent=$((10#${percent})); fi
	else
		percent=0
	fi
	[[ "${total}" =~ ^[0-9]+$ ]] || total=null
	if [[ "${MCP_PROGRESS_TOKEN}" =~ ^[-+]?[0-9]+(\.[0-9]+)?$ ]]; then token="${MCP_PROGRESS_TOKEN}"; else
		__ek_quote "${MCP_PROGRESS_TOKEN}"
		token="${__ek_q}"
	fi
	__ek_quote "${2-}"
	printf '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%s,"total":%s,"message":%s}}\n' \
		"${token}" "${percent}" "${total}" "${__ek_q}" >>"${MCP_PROGRESS_STREAM}" 2>/dev/null || true
}

mcp_log() {
	# mcp_log LEVEL LOGGER JSON: an unknown LEVEL is logged as info, with a warning.
	local level
	level="$(printf '%s' "${1-}" | tr '[:upper:]' '[:lower:]')"
	case " ${level} " in
	" debug " | " info " | " notice " | " warning " | " error " | " critical " | " alert " | " emergency ") ;;
	*)
		__ek_warn "mcp_log: invalid level '${1-}', defaulting to 'info'"
		level=info
		;;
	esac
	[ -n "${MCP_LOG_STREAM}" ] || return 0
	__ek_quote "${2-}"
	printf '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"%s","logger":%s,"data":%s}}\n' \
		"${level}" "${__ek_q}" "${3:-null}" >>"${MCP_LOG_STREAM}" 2>/dev/null || true
}
mcp_log_debug() { mcp_log debug "${1-}" "$(mcp_json_escape "${2-}")"; }
mcp_log_info() { mcp_log info "${1-}" "$(mcp_json_escape "${2-}")"; }
mcp_log_warn() { mcp_log warning "${1-}" "$(mcp_json_escape "${2-}")"; }
mcp_log_error() { mcp_log error "${1-}" "$(mcp_json_escape "${2-}")"; }

mcp_debug() {
	[ -n "${MCPBASH_DEBUG_LOG:-}" ] || return 0
	printf '[%s] %s\n' "$(date +%H:%M:%S 2>/dev/null || printf '??:??:??')" "$*" >>"${MCPBASH_DEBUG_LOG}" 2>/dev/null || true
}

mcp_with_retry() {
	# mcp_with_retry MAX_ATTEMPTS BASE_DELAY [--] COMMAND...: retry COMMAND while it exits 3 or more, waiting
	# BASE_DELAY seconds, doubled each time, plus up to half again at random. Exits 1 and 2 are final.
	# (Its locals are __ek_ names: COMMAND may be a function of the script's, which sees them.)
	local __ek_tries="${1-}" __ek_delay="${2-}" __ek_try=1 __ek_code __ek_wait
	shift 2 || shift $#
	if [ "${1:-}" = "--" ]; then shift; fi
	if ! [[ "${__ek_tries}" =~ ^[0-9]+$ ]]; then
		__ek_warn "mcp_with_retry: max_attempts must be a positive integer"
		return 1
	fi
	if ! [[ "${__ek_delay}" =~ ^[0-9]+\.?[0-9]*$ ]]; then
		__ek_warn "mcp_with_retry: base_delay must be a number"
		return 1
	fi
	while true; do
		__ek_code=0
		"$@" || __ek_code=$?
		if ((__ek_code <= 2)) || ((__ek_try >= 10#${__ek_tries})); then
			return "${__ek_code}"
		fi
		__ek_wait="$(awk -v d="${__ek_delay}" -v r="${RANDOM}" 'BEGIN { printf "%.3f", d + d * (r / 32767) * 0.5 }')"
		mcp_log_debug "retry" "Attempt ${__ek_try}/${__ek_tries} failed (exit ${__ek_code}), retrying in ${__ek_wait}s"
		sleep "${__ek_wait}"
		__ek_delay="$(awk -v d="${__ek_delay}" 'BEGIN { print d * 2 }')"
		__ek_try=$((__ek_try + 1))
	done
}

# --- results and errors ----------------------------------------------------------------------------------

mcp_emit_text() { printf '%s' "${1-}"; }

mcp_emit_json() {
	# The JSON compacted when jq can read it; as given otherwise.
	local compact=""
	if __ek_full; then compact="$(printf '%s' "${1-}" | "${__ek_jqb}" -c . 2>/dev/null || true)"; fi
	printf '%s' "${compact:-${1-}}"
}

mcp_fail() {
	# mcp_fail CODE MESSAGE [DATA]: the call fails with that JSON-RPC error; the script exits 1.
	local code="${1-}" message="${2:-Tool failed}" data="${3-}" data_json=null body
	[[ "${code}" =~ ^[-+]?[0-9]+$ ]] || code=-32603
	code="${code#+}"
	if [ -n "${data}" ]; then
		if __ek_jq_bin; then
			data_json="$(printf '%s' "${data}" | "${__ek_jqb}" -c . 2>/dev/null || true)"
			data_json="${data_json:-null}"
		else
			data_json="${data}"
		fi
	fi
	__ek_quote "${message}"
	body="{\"code\":${code},\"message\":${__ek_q},\"data\":${data_json}}"
	if [ -n "${MCP_TOOL_ERROR_FILE:-}" ]; then printf '%s\n' "${body}" >"${MCP_TOOL_ERROR_FILE}" 2>/dev/null || true; fi
	printf '%s\n' "${body}"
	printf '%s\n' "${message}" >&2
	exit 1
}

mcp_fail_invalid_args() { mcp_fail -32602 "${1:-Invalid params}" "${2-}"; }

mcp_result_success() {
	# mcp_result_success DATA [MAX_TEXT_BYTES]: a CallToolResult whose structuredContent is
	# {"success":true,"result":DATA}; the text is that envelope, or a summary once it is larger than
	# MAX_TEXT_BYTES (${MCPBASH_MAX_TEXT_BYTES:-102400}). DATA must be exactly one JSON value. Returns 0.
	local data="${1-}" max envelope size text
	max="$(__ek_uint "${2-}" "${MCPBASH_MAX_TEXT_BYTES:-102400}")"
	if [ -z "${data}" ]; then
		mcp_result_error '{"type":"internal_error","message":"Empty data passed to mcp_result_success"}'
		return 0
	fi
	if __ek_full; then
		printf '%s' "${data}" | "${__ek_jqb}" -c -s --argjson max "${max}" '
			if length != 1 then
				{content: [{type: "text", text: "Error: input must be single JSON value"}],
				 structuredContent: {success: false, error: {type: "internal_error", message: "Input contained multiple JSON values", count: length}},
				 isError: true}
			else
				{success: true, result: .[0]} as $envelope | ($envelope | tojson) as $text
				| {content: [{type: "text", text: (if ($text | utf8bytelength) <= $max then $text
					elif (.[0] | type) == "array" then "Success: array with \(.[0] | length) items"
					elif (.[0] | type) == "object" then "Success: object with \(.[0] | keys | length) keys"
					else "Success: \(.[0] | tostring | .[0:100])" end)}],
				   structuredContent: $envelope, isError: false}
			end' 2>/dev/null ||
			mcp_result_error '{"type":"internal_error","message":"Invalid JSON passed to mcp_result_success"}'
		return 0
	fi
	envelope="{\"success\":true,\"result\":${data}}"
	size="$(mcp_byte_length "${envelope}")"
	text="Success: response too large for text content"
	if ((size <= max)); then text="${envelope}"; fi
	__ek_quote "${text}"
	printf '{"content":[{"type":"text","text":%s}],"structuredContent":%s,"isError":false}\n' "${__ek_q}" "${envelope}"
	return 0
}

mcp_result_error() {
	# mcp_result_error ERROR_JSON: a CallToolResult with isError and structuredContent
	# {"success":false,"error":ERROR}; ERROR is an object with "type" and "message" (filled in when absent).
	local error="${1-}" message raw
	[ -n "${error}" ] || error='{"type":"internal_error","message":"Unknown error (empty error object)"}'
	if __ek_full; then
		raw="${error}"
		error="$(printf '%s' "${raw}" | "${__ek_jqb}" -c -s '
			if length != 1 then {type: "internal_error", message: "Error payload must be single JSON value", raw: "multiple values: \(length)"}
			elif (.[0] | type) != "object" then {type: "internal_error", message: "Error payload must be an object", raw: (.[0] | tostring)}
			else .[0] + {type: (.[0].type // "internal_error"), message: (.[0].message // "Unknown error")} end' 2>/dev/null)" ||
			error="$(printf '%s' "${raw}" | "${__ek_jqb}" -c -R -s '{type: "internal_error", message: "Invalid error JSON passed to mcp_result_error", raw: .}')"
		printf '%s' "${error}" | "${__ek_jqb}" -c \
			'{content: [{type: "text", text: ((.message // "Unknown error") | tostring)}], structuredContent: {success: false, error: .}, isError: true}'
		return 0
	fi
	message="$(printf '%s' "${error}" | sed -n 's/.*"message"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p')"
	__ek_quote "${message:-Unknown error}"
	message="${__ek_q}"
	__ek_quote "${error}"
	printf '{"content":[{"type":"text","text":%s}],"structuredContent":{"success":false,"error":{"type":"internal_error","message":%s,"raw":%s}},"isError":true}\n' \
		"${message}" "${message}" "${__ek_q}"
	return 0
}

mcp_error() {
	# mcp_error TYPE MESSAGE [--hint HINT] [--data JSON]: mcp_result_error with an error built from its parts.
	local type="${1:-internal_error}" message="${2:-Unknown error}" hint="" data="" error data_json
	shift 2 || shift $#
	while (($#)); do
		case "$1" in
		--hint) hint="${2-}" && { shift 2 || shift $#; } ;;
		--data) data="${2-}" && { shift 2 || shift $#; } ;;
		*) shift ;; # unknown flags are ignored, for flags a later mcp-bash may add
		esac
	done
	__ek_quote "${type}"
	error="{\"type\":${__ek_q}"
	__ek_quote "${message}"
	error+=",\"message\":${__ek_q}"
	if [ -n "${hint}" ]; then __ek_quote "${hint}" && error+=",\"hint\":${__ek_q}"; fi
	if [ -n "${data}" ]; then
		if __ek_full; then
			data_json="$(printf '%s' "${data}" | "${__ek_jqb}" -c . 2>/dev/null)" || {
				__ek_quote "${data}"
				data_json="{\"_invalid_json\":${__ek_q}}"
			}
		else
			data_json="${data}"
		fi
		error+=",\"data\":${data_json}"
	fi
	mcp_log_debug "mcp_error" "type=${type}: ${message}"
	if [ -n "${hint}" ]; then mcp_log_warn "mcp_error" "type=${type} hint: ${message}"; fi
	mcp_result_error "${error}}"
}

mcp_extract_cli_error() {
	# mcp_extract_cli_error STDOUT STDERR EXIT_CODE: the best message a failed command left: its JSON error
	# (.error.message, .error, .message when it says it failed, .errors[0].message), else stderr, else the code.
	local out="${1-}" err="${2-}" code="${3-}" found=""
	if __ek_full && mcp_is_valid_json "${out}"; then
		found="$(printf '%s' "${out}" | "${__ek_jqb}" -r 'first(
			(select(.error | type == "object") | .error.message | values),
			(select(.error | type == "string") | .error),
			(select(.success == false or .ok == false or .status == "error") | .message | values),
			((.errors // [])[0].message | values)) // empty' 2>/dev/null || true)"
	fi
	if [ -n "${found}" ]; then printf '%s' "${found}"; elif [ -n "${err}" ]; then printf '%s' "${err}"; else
		printf 'CLI exited with code %s' "${code}"
	fi
}

__ek_mime() {
	# __ek_mime PATH: the file's MIME type, from file(1) or its extension; application/octet-stream else.
	local mime=""
	if command -v file >/dev/null 2>&1; then mime="$(file --brief --mime-type -- "$1" 2>/dev/null || true)"; fi
	case "${mime}" in
	"" | application/octet-stream | text/plain)
		case "${1##*.}" in
		json) mime=application/json ;; md) mime=text/markdown ;; html | htm) mime=text/html ;;
		csv) mime=text/csv ;; txt | log) mime=text/plain ;; png) mime=image/png ;; jpg | jpeg) mime=image/jpeg ;;
		svg) mime=image/svg+xml ;; pdf) mime=application/pdf ;; *) mime="${mime:-application/octet-stream}" ;;
		esac
		;;
	esac
	printf '%s' "${mime}"
}

mcp_result_text_with_resource() {
	# mcp_result_text_with_resource DATA [--path FILE [--mime TYPE] [--uri URI]]...: mcp_result_success DATA,
	# with each readable FILE embedded in the result as a resource (written to MCP_TOOL_RESOURCES_FILE).
	local data="${1-}" i sep="" list="[" uri
	local -a paths=() mimes=() uris=()
	shift || true
	while (($#)); do
		case "$1" in
		--path) paths+=("${2-}") && mimes+=("") && uris+=("") ;;
		--mime) if ((${#paths[@]})); then mimes[${#paths[@]} - 1]="${2-}"; fi ;;
		--uri) if ((${#paths[@]})); then uris[${#paths[@]} - 1]="${2-}"; fi ;;
		*)
			mcp_log_debug "sdk" "mcp_result_text_with_resource: unknown flag ignored: $1"
			shift
			continue
			;;
		esac
		shift 2 || shift $#
	done
	if ((${#paths[@]})); then
		if [ -z "${MCP_TOOL_RESOURCES_FILE:-}" ]; then
			mcp_log_warn "sdk" "mcp_result_text_with_resource: MCP_TOOL_RESOURCES_FILE not set, resources will not be embedded"
		else
			for ((i = 0; i < ${#paths[@]}; i++)); do
				if [ -z "${paths[i]}" ]; then continue; fi
				if [ ! -f "${paths[i]}" ] || [ ! -r "${paths[i]}" ]; then
					mcp_log_warn "sdk" "mcp_result_text_with_resource: not a readable file, skipping path=${paths[i]}"
					continue
				fi
				[ -n "${mimes[i]}" ] || mimes[i]="$(__ek_mime "${paths[i]}")"
				uri=null
				if [ -n "${uris[i]}" ]; then __ek_quote "${uris[i]}" && uri="${__ek_q}"; fi
				__ek_quote "${paths[i]}"
				list+="${sep}{\"path\":${__ek_q},"
				__ek_quote "${mimes[i]}"
				list+="\"mimeType\":${__ek_q},\"uri\":${uri}}"
				sep=","
			done
			printf '%s]' "${list}" >"${MCP_TOOL_RESOURCES_FILE}"
		fi
	fi
	mcp_result_success "${data}"
}

mcp_json_truncate() {
	# mcp_json_truncate JSON [MAX_BYTES] [--array-path .a.b]: {"result", "truncated", "kept"?, "total"?} with
	# the array (at --array-path, or the value itself, or its .results) cut to fit MAX_BYTES
	# (${MCPBASH_MAX_TOOL_OUTPUT_SIZE:-10485760}); {"result":null,...,"error":{type,message}} when it cannot.
	local json="" max="" path="" seen=0
	while (($#)); do
		if [ "$1" = "--array-path" ]; then
			if [ -z "${2:-}" ] || [[ "${2}" == --* ]]; then
				printf '{"result":null,"truncated":false,"error":{"type":"invalid_path_syntax","message":"--array-path requires a value"}}'
				return 0
			fi
			path="$2"
			shift 2
			continue
		fi
		case "${seen}" in 0) json="$1" ;; 1) max="$1" ;; esac
		seen=$((seen + 1))
		shift
	done
	max="$(__ek_uint "${max}" "${MCPBASH_MAX_TOOL_OUTPUT_SIZE:-10485760}")"
	if ! __ek_full; then
		printf '{"result":%s,"truncated":false,"_warning":"truncation unavailable in minimal mode"}\n' "${json}"
		return 0
	fi
	if [ -n "${path}" ] && ! [[ "${path}" =~ ^\.[a-zA-Z_][a-zA-Z0-9_]*(\.[a-zA-Z_][a-zA-Z0-9_]*)*$ ]]; then
		"${__ek_jqb}" -n -c --arg p "${path}" '{result: null, truncated: false, error: {type: "invalid_path_syntax",
			message: ("Invalid path syntax: " + $p + " (must be .key or .key.nested format)")}}'
		return 0
	fi
	# The path is checked above to be .key(.key)*: only then is it spliced into the program.
	printf '%s' "${json}" | "${__ek_jqb}" -c -s --argjson max "${max}" --arg path "${path}" '
		def size: tojson | utf8bytelength;
		def fit($keys): getpath($keys) as $array | ($array | length) as $total
			| if $total == 0 then {result: ., truncated: false, kept: 0, total: 0}
			elif size <= $max then {result: ., truncated: false, kept: $total, total: $total}
			elif (setpath($keys; []) | size) > $max then
				{result: null, truncated: false, error: {type: "output_too_large", message: "Response too large (\(setpath($keys; []) | size) bytes) even with empty array at \($path)"}}
			else . as $doc
				| [0, $total] | until(.[0] >= .[1]; ((.[0] + .[1] + 1) / 2 | floor) as $mid
					| if ($doc | setpath($keys; $array[:$mid]) | size) <= $max then [$mid, .[1]] else [.[0], $mid - 1] end)
				| .[0] as $kept | {result: ($doc | setpath($keys; $array[:$kept])), truncated: true, kept: $kept, total: $total}
			end;
		if length != 1 then
			{result: null, truncated: false, error: {type: "invalid_json", message: (if length == 0 then "Empty input: expected exactly one JSON value" else "Multiple JSON values found (\(length)): expected exactly one" end)}}
		else .[0]
		| if $path != "" then ($path | ltrimstr(".") | split(".")) as $keys
			| if getpath($keys) == null then {result: null, truncated: false, error: {type: "path_not_found", message: ("Path not found: " + $path)}}
			elif (getpath($keys) | type) != "array" then {result: null, truncated: false, error: {type: "invalid_array_path", message: ("Path is not an array: " + $path)}}
			else fit($keys) end
		elif size <= $max then {result: ., truncated: false}
		elif type == "array" then
			if (.[0:1] | size) > $max then {result: [], truncated: true, kept: 0, total: length, _warning: "individual items exceed max_bytes"}
			else fit([]) end
		elif type == "object" and (.results | type) == "array" then fit(["results"])
		else {result: null, truncated: false, error: {type: "output_too_large", message: "Response too large (\(size) bytes) and cannot be safely truncated (not an array)"}}
		end end' 2>/dev/null ||
		printf '%s' "${json}" | "${__ek_jqb}" -R -s -c '{result: null, truncated: false, error: {type: "invalid_json", message: "Invalid JSON: parse error", raw: .}}'
}

# --- paths and roots -------------------------------------------------------------------------------------
# The server puts the client's roots (or, when it names none, MCPBASH_ROOTS, config/roots.json, the
# project folder) in MCP_ROOTS_JSON, MCP_ROOTS_PATHS (one path a line) and MCP_ROOTS_COUNT.

mcp_sdk_load_path_helpers() { return 0; } # mcp-bash loads these from its lib/; here they are built in

mcp_path_normalize() {
	# mcp_path_normalize [--physical|--logical] PATH: PATH absolute, without . or .. or a trailing /;
	# --physical (the default) resolves symbolic links too. The path need not exist.
	local physical=1
	while (($#)); do
		case "$1" in
		--physical) physical=1 ;;
		--logical) physical=0 ;;
		--) shift && break ;;
		*) break ;;
		esac
		shift
	done
	local raw="${1:-.}" out=""
	if ((physical)); then out="$(realpath -m -- "${raw}" 2>/dev/null || true)"; else
		out="$(realpath -m -s -- "${raw}" 2>/dev/null || true)"
	fi
	if [ -z "${out}" ]; then # no GNU realpath: fold the path by hand
		local part
		local -a kept=()
		[[ "${raw}" == /* ]] || raw="${PWD}/${raw}"
		IFS=/ read -r -a parts <<<"${raw}"
		for part in "${parts[@]}"; do
			case "${part}" in
			"" | .) ;;
			..) if ((${#kept[@]})); then unset 'kept[${#kept[@]}-1]'; fi ;;
			*) kept+=("${part}") ;;
			esac
		done
		out="/$(IFS=/ && printf '%s' "${kept[*]}")"
	fi
	printf '%s' "${out}"
}

mcp_roots_list() { printf '%s' "${MCP_ROOTS_PATHS:-}"; }
mcp_roots_count() { printf '%s' "${MCP_ROOTS_COUNT:-0}"; }

mcp_roots_contains() {
	# mcp_roots_contains PATH: 0 when PATH (resolved) is a root or inside one. Compared as text, never as a
	# pattern: a root named with * or [ matches only itself.
	local path root prefix
	path="$(mcp_path_normalize --physical "${1-}")"
	while IFS= read -r root; do
		[ -n "${root}" ] || continue
		root="$(mcp_path_normalize --physical "${root}")"
		if [ "${root}" = "/" ] || [ "${path}" = "${root}" ]; then return 0; fi
		prefix="${root%/}/"
		if [ "${path:0:${#prefix}}" = "${prefix}" ]; then return 0; fi
	done <<<"${MCP_ROOTS_PATHS:-}"
	return 1
}

mcp_require_path() {
	# mcp_require_path POINTER [--default-to-single-root] [--allow-empty]: the argument at POINTER as a
	# resolved path, which must be inside the roots when there are any; the call fails (-32602) otherwise.
	local pointer="${1-}" single=0 empty=0 value
	shift || true
	while (($#)); do
		case "$1" in
		--default-to-single-root) single=1 ;;
		--allow-empty) empty=1 ;;
		--) shift && break ;;
		*) break ;;
		esac
		shift
	done
	[ -n "${pointer}" ] || mcp_fail_invalid_args "mcp_require_path: argument pointer is required"
	value="$(mcp_args_get "${pointer}" 2>/dev/null || true)"
	[ "${value}" != "null" ] || value=""
	if [ -z "${value}" ] && ((single)); then
		if [ "$(mcp_roots_count)" = "1" ]; then value="$(mcp_roots_list | head -n 1)"; else
			mcp_fail_invalid_args "${pointer} is required when zero or multiple roots are configured"
		fi
	fi
	if [ -z "${value}" ]; then
		if ((empty)); then return 0; fi
		mcp_fail_invalid_args "${pointer} is required"
	fi
	value="$(mcp_path_normalize --physical "${value}")"
	if [[ "$(mcp_roots_count)" =~ ^[1-9] ]] && ! mcp_roots_contains "${value}"; then
		mcp_fail_invalid_args "${pointer} is outside configured MCP roots"
	fi
	printf '%s' "${value}"
}

# --- configuration ---------------------------------------------------------------------------------------

__ek_config_file() {
	# __ek_config_file PATH: the file's JSON, when it is a readable file holding JSON; status 1 else.
	local text
	[ -f "$1" ] && [ -r "$1" ] || return 1
	text="$(<"$1")"
	if __ek_is_json "${text}"; then printf '%s' "${text}" && return 0; fi
	mcp_log_warn "config" "Invalid JSON in file: $1"
	return 1
}

__ek_is_json() {
	if __ek_jq_bin; then printf '%s' "$1" | "${__ek_jqb}" -e . >/dev/null 2>&1; else [[ "$1" =~ ^[[:space:]]*[\{\[] ]]; fi
}

__ek_merge() {
	# The two objects merged, the second's keys winning; without jq the second alone.
	if __ek_jq_bin; then "${__ek_jqb}" -c -n --argjson a "$1" --argjson b "$2" '$a + $b' 2>/dev/null || printf '%s' "$1"; else
		printf '%s' "$2"
	fi
}

mcp_config_load() {
	# mcp_config_load [--env VAR] [--file PATH] [--example PATH] [--defaults JSON]: MCP_CONFIG_JSON (exported)
	# is the defaults, then the example file, the file and VAR (JSON, or a file's path) merged over them.
	# Returns 1 when nothing was loaded and there are no defaults.
	local env="" file="" example="" defaults="{}" merged loaded=0 value text
	while (($#)); do
		case "$1" in
		--env) env="${2-}" ;;
		--file) file="${2-}" ;;
		--example) example="${2-}" ;;
		--defaults) defaults="${2-}" ;;
		*) shift && continue ;;
		esac
		shift 2 || shift $#
	done
	if [ "${defaults}" != "{}" ] && ! __ek_is_json "${defaults}"; then
		mcp_log_warn "config" "Invalid JSON in --defaults, using {}"
		defaults="{}"
	fi
	merged="${defaults}"
	for value in "${example}" "${file}"; do
		if [ -n "${value}" ] && text="$(__ek_config_file "${value}")"; then
			merged="$(__ek_merge "${merged}" "${text}")"
			loaded=$((loaded + 1))
		fi
	done
	if [ -n "${env}" ] && [ -n "${!env:-}" ]; then
		value="${!env}"
		if __ek_is_json "${value}"; then
			merged="$(__ek_merge "${merged}" "${value}")"
			loaded=$((loaded + 1))
		elif [ -f "${value}" ]; then
			if text="$(__ek_config_file "${value}")"; then
				merged="$(__ek_merge "${merged}" "${text}")"
				loaded=$((loaded + 1))
			fi
		else
			mcp_log_warn "config" "Env var ${env} is neither valid JSON nor a file path"
		fi
	fi
	export MCP_CONFIG_JSON="${merged}"
	if ((loaded)) || [ "${defaults}" != "{}" ]; then return 0; fi
	mcp_log_warn "config" "No configuration sources loaded"
	return 1
}

mcp_config_get() {
	# mcp_config_get JQ_PATH [--default VALUE]: the value at JQ_PATH in MCP_CONFIG_JSON (false and "" are
	# values); the default when it is absent or null, else status 1.
	local path="${1-}" has_default=0 default="" result
	shift || true
	while (($#)); do
		case "$1" in
		--default) has_default=1 default="${2-}" && { shift 2 || shift $#; } ;;
		*) shift ;;
		esac
	done
	if [ -z "${path}" ]; then
		mcp_log_warn "config" "mcp_config_get: path required"
		return 1
	fi
	if __ek_jq_bin; then
		result="$(printf '%s' "${MCP_CONFIG_JSON:-{\}}" | "${__ek_jqb}" -c --arg path "${path}" \
			"[${path}] | if .[0] == null then \"missing\" else \"value\", .[0] end" 2>/dev/null || printf '"missing"')"
		if [ "${result%%$'\n'*}" = '"value"' ]; then
			result="${result#*$'\n'}"
			if [[ "${result}" == \"* ]]; then result="$(printf '%s' "${result}" | "${__ek_jqb}" -r .)"; fi
			printf '%s' "${result}"
			return 0
		fi
	elif [[ "${path}" =~ ^\.([A-Za-z_][A-Za-z0-9_]*)$ ]] &&
		[[ "${MCP_CONFIG_JSON:-}" =~ \"${BASH_REMATCH[1]}\"[[:space:]]*:[[:space:]]*(\"([^\"]*)\"|(-?[0-9]+\.?[0-9]*)|(true|false)) ]]; then
		printf '%s' "${BASH_REMATCH[2]}${BASH_REMATCH[3]}${BASH_REMATCH[4]}"
		return 0
	fi
	if ((has_default)); then printf '%s' "${default}" && return 0; fi
	return 1
}

# --- downloads -------------------------------------------------------------------------------------------

__ek_dl_error() {
	# __ek_dl_error TYPE MESSAGE: mcp_download_safe's failure reply (it always returns 0).
	__ek_quote "$2"
	printf '{"success":false,"error":{"type":"%s","message":%s}}' "$1" "${__ek_q}"
}

__ek_private_ip() {
	# Loopback, private, link-local, unspecified, unique-local or carrier-grade addresses: not the internet.
	case "${1,,}" in
	127.* | 10.* | 192.168.* | 172.1[6-9].* | 172.2[0-9].* | 172.3[0-1].* | 169.254.* | 0.* | 100.6[4-9].* | \
		100.[7-9][0-9].* | 100.1[01][0-9].* | 100.12[0-7].* | ::1 | :: | fe[89ab]?:* | fc*:* | fd*:* | ::ffff:*) return 0 ;;
	esac
	return 1
}

__ek_host_listed() {
	# __ek_host_listed HOST LIST...: HOST is in LIST (an entry ".example.com" or "*.example.com" also takes
	# every name under it).
	local host="$1" entry
	shift
	for entry in "$@"; do
		entry="${entry,,}"
		entry="${entry#\*}"
		if [ "${host}" = "${entry}" ]; then return 0; fi
		if [[ "${entry}" == .* ]] && [ "${host: -${#entry}}" = "${entry}" ]; then return 0; fi
	done
	return 1
}

mcp_download_safe() {
	# mcp_download_safe --url https://... --out PATH [--allow HOST]... [--deny HOST]... [--max-bytes N]
	#   [--timeout SECS (<= 60)] [--user-agent UA] [--retry N] [--retry-delay SECS]
	# HTTPS only, no redirects, only to hosts allowed (--allow, or MCPBASH_HTTPS_ALLOW_HOSTS, or
	# MCPBASH_HTTPS_ALLOW_ALL=true) that resolve to public addresses, pinned to the address checked. Prints
	# {"success":true,"bytes":N,"path":P} or {"success":false,"error":{"type","message"}}; always returns 0.
	local url="" out="" max_bytes="" timeout="" agent="" retry=1 delay=1.0
	local -a allow=() deny=()
	while (($#)); do
		case "$1" in
		--url) url="${2-}" ;;
		--out) out="${2-}" ;;
		--allow) allow+=("${2-}") ;;
		--deny) deny+=("${2-}") ;;
		--max-bytes) max_bytes="${2-}" ;;
		--timeout) timeout="${2-}" ;;
		--user-agent) agent="${2-}" ;;
		--retry) retry="${2-}" ;;
		--retry-delay) delay="${2-}" ;;
		-*) __ek_dl_error invalid_params "Unknown option: $1" && return 0 ;;
		*) __ek_dl_error invalid_params "Unexpected argument: $1" && return 0 ;;
		esac
		shift 2 || shift $#
	done
	[ -n "${url}" ] || { __ek_dl_error invalid_url "--url is required" && return 0; }
	[ -n "${out}" ] || { __ek_dl_error invalid_params "--out is required" && return 0; }
	[[ "${url}" == https://* ]] || { __ek_dl_error invalid_url "URL must use https://" && return 0; }
	if [ -n "${max_bytes}" ] && ! [[ "${max_bytes}" =~ ^[0-9]+$ ]]; then
		__ek_dl_error invalid_params "--max-bytes must be a positive integer" && return 0
	fi
	if [ -n "${timeout}" ]; then
		[[ "${timeout}" =~ ^[0-9]+$ ]] || { __ek_dl_error invalid_params "--timeout must be a positive integer" && return 0; }
		((10#${timeout} <= 60)) || { __ek_dl_error invalid_params "--timeout cannot exceed 60 seconds" && return 0; }
	fi
	if ! [[ "${retry}" =~ ^[0-9]+$ ]] || ((10#${retry} < 1)); then
		__ek_dl_error invalid_params "--retry must be a positive integer" && return 0
	fi
	[[ "${delay}" =~ ^[0-9]*\.?[0-9]+$ ]] || { __ek_dl_error invalid_params "--retry-delay must be a number (e.g., 0.5, 1, 2.0)" && return 0; }
	command -v curl >/dev/null 2>&1 || { __ek_dl_error provider_unavailable "curl is required for HTTPS downloads" && return 0; }

	local rest="${url#https://}" host port
	rest="${rest%%[/?#]*}"
	rest="${rest##*@}"
	if [[ "${rest}" == \[* ]]; then host="${rest%%]*}" && host="${host#[}" && port="${rest#*]}" && port="${port#:}"; else
		host="${rest%%:*}" && port="${rest#"${host}"}" && port="${port#:}"
	fi
	host="${host,,}"
	port="${port:-443}"
	[ -n "${host}" ] && [[ "${port}" =~ ^[0-9]+$ ]] || { __ek_dl_error invalid_url "URL has no valid host" && return 0; }
	local -a allowed=("${allow[@]}") denied=("${deny[@]}")
	IFS=', ' read -r -a more <<<"${MCPBASH_HTTPS_ALLOW_HOSTS:-}" && allowed+=("${more[@]}")
	IFS=', ' read -r -a more <<<"${MCPBASH_HTTPS_DENY_HOSTS:-}" && denied+=("${more[@]}")
	local allow_all=0
	case "${MCPBASH_HTTPS_ALLOW_ALL:-false}" in true | 1 | yes | on) allow_all=1 ;; esac
	# An address written in another form (a bare number, hex, octal) hides what it is: refused.
	if [[ "${host}" =~ ^[0-9x.]+$ ]] && ! [[ "${host}" =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]]; then
		__ek_dl_error host_blocked "Host blocked by policy" && return 0
	fi
	if __ek_host_listed "${host}" "${denied[@]}" || { ((!allow_all)) && ! __ek_host_listed "${host}" "${allowed[@]}"; }; then
		__ek_dl_error host_blocked "Host blocked by policy" && return 0
	fi
	local address="" ip
	if [[ "${host}" =~ ^[0-9.]+$ || "${host}" == *:* ]]; then address="${host}"; else
		while read -r ip _; do
			if __ek_private_ip "${ip}"; then __ek_dl_error host_blocked "Host blocked by policy" && return 0; fi
			address="${address:-${ip}}"
		done < <(getent ahosts "${host}" 2>/dev/null || true)
	fi
	[ -n "${address}" ] || { __ek_dl_error network_error "Network request failed: cannot resolve ${host}" && return 0; }
	if __ek_private_ip "${address}" || [ "${host}" = localhost ]; then __ek_dl_error host_blocked "Host blocked by policy" && return 0; fi
	[[ "${address}" == *:* ]] && address="[${address}]"

	local tmp attempt=1 code status
	tmp="$(mktemp "${TMPDIR:-/tmp}/ek-download.XXXXXX")" || { __ek_dl_error write_error "Could not create temp file" && return 0; }
	local version="unknown"
	local -a curl_args=(--silent --show-error --proto =https --max-redirs 0 --resolve "${host}:${port}:${address}"
		--max-time "${timeout:-15}" --max-filesize "${max_bytes:-10485760}" --user-agent "${agent:-mcpbash/${version} (elicitkit tool-sdk)}"
		--output "${tmp}" --write-out '%{http_code} %{redirect_url}')
	while true; do
		code=0
		status="$(curl "${curl_args[@]}" -- "${url}" 2>"${tmp}.err")" || code=$?
		if ((code == 0)) && [[ "${status}" == 2* ]]; then break; fi
		if ((code == 63)) || [[ "${status}" == 3* ]] || ((attempt >= 10#${retry})); then break; fi
		sleep "$(awk -v d="${delay}" -v r="${RANDOM}" 'BEGIN { printf "%.3f", d + d * (r / 32767) * 0.5 }')"
		delay="$(awk -v d="${delay}" 'BEGIN { print d * 2 }')"
		attempt=$((attempt + 1))
	done
	local detail
	detail="$(head -c 200 "${tmp}.err" 2>/dev/null | tr '\n\t\r' '   ' | tr -d '[:cntrl:]')"
	rm -f "${tmp}.err"
	if ((code == 63)); then
		rm -f "${tmp}"
		__ek_dl_error size_exceeded "Response exceeds max-bytes limit"
	elif [[ "${status}" == 3* ]]; then
		rm -f "${tmp}"
		__ek_quote "${status#* }"
		printf '{"success":false,"error":{"type":"redirect","location":%s,"message":"URL redirects - use canonical URL or add target to allowlist"}}' "${__ek_q}"
	elif ((code != 0)) || [[ "${status}" != 2* ]]; then
		rm -f "${tmp}"
		__ek_dl_error network_error "Network request failed${detail:+: ${detail}}${status:+ (HTTP ${status%% *})}"
	elif [ -n "${max_bytes}" ] && (($(wc -c <"${tmp}") > 10#${max_bytes})); then
		rm -f "${tmp}"
		__ek_dl_error size_exceeded "Response exceeds max-bytes limit"
	elif mv -- "${tmp}" "${out}" 2>/dev/null; then
		__ek_quote "${out}"
		printf '{"success":true,"bytes":%s,"path":%s}' "$(wc -c <"${out}" | tr -d ' ')" "${__ek_q}"
	else
		rm -f "${tmp}"
		__ek_dl_error write_error "Could not write to output path"
	fi
	return 0
}

mcp_download_safe_or_fail() {
	# mcp_download_safe's arguments; prints the path, or fails the call (-32602) saying why.
	local result type message
	result="$(mcp_download_safe "$@")"
	if [[ "${result}" == '{"success":true,'* ]]; then
		if __ek_jq_bin; then printf '%s' "${result}" | "${__ek_jqb}" -j .path; else
			printf '%s' "${result}" | sed -n 's/.*"path":"\([^"]*\)".*/\1/p'
		fi
		return 0
	fi
	if ! __ek_jq_bin; then mcp_fail_invalid_args "Download failed (minimal mode - cannot parse error details)"; fi
	type="$(printf '%s' "${result}" | "${__ek_jqb}" -r '.error.type // "unknown"')"
	message="$(printf '%s' "${result}" | "${__ek_jqb}" -r '.error.message // "Download failed" | gsub("[\t\n]"; " ")')"
	mcp_fail_invalid_args "Download failed (${type}): ${message}"
}

# --- MCP Apps (UI) ---------------------------------------------------------------------------------------

mcp_client_supports_ui() {
	# 0 when the client declared MCP Apps (the io.modelcontextprotocol/ui extension).
	[ "${MCPBASH_CLIENT_SUPPORTS_UI:-0}" = "1" ] && return 0
	[ -n "${MCPBASH_STATE_DIR:-}" ] && [ "$(cat "${MCPBASH_STATE_DIR}/extensions.ui.support" 2>/dev/null || true)" = "1" ]
}

mcp_result_with_ui() {
	# mcp_result_with_ui RESOURCE_URI TEXT [DATA]: for a client with MCP Apps, a result whose text is TEXT and
	# structuredContent DATA (the UI itself is named in the tool's metadata, so RESOURCE_URI is unused);
	# for any other client, mcp_result_success TEXT.
	local text="${2-}" data="${3:-null}"
	if ! mcp_client_supports_ui; then
		__ek_text_result "${text}"
		return 0
	fi
	__ek_jq -n --arg text "${text}" --argjson data "${data}" \
		'{content: [{type: "text", text: $text}], structuredContent: (if $data != null then $data else null end), isError: false}'
}

mcp_result_with_ui_data() {
	# mcp_result_with_ui_data RESOURCE_URI TEXT DATA: as mcp_result_with_ui, DATA required.
	local text="${2-}" data="${3-}"
	if ! mcp_client_supports_ui; then
		__ek_text_result "${text}"
		return 0
	fi
	__ek_jq -n --arg text "${text}" --argjson data "${data}" \
		'{content: [{type: "text", text: $text}], structuredContent: $data, isError: false}'
}

__ek_text_result() {
	# The fallback text as mcp_result_success's result: the JSON it is, or else the text as a JSON string
	# (mcp-bash hands plain text to mcp_result_success, which refuses it as invalid JSON).
	if mcp_is_valid_json "$1" && __ek_jq_bin; then mcp_result_success "$1"; else mcp_result_success "$(mcp_json_escape "$1")"; fi
}

mcp_tool_meta_with_ui() {
	# mcp_tool_meta_with_ui RESOURCE_URI [VISIBILITY]: {"ui":{"resourceUri","visibility":[...]}} for a tool's
	# _meta; VISIBILITY is a comma-separated list of model and app (default: both).
	__ek_jq -n -c --arg uri "${1-}" --arg v "${2:-model,app}" \
		'{ui: {resourceUri: $uri, visibility: ($v | split(",") | map(gsub("^\\s+|\\s+$"; "")))}}'
}

__ek_html() {
	# The text HTML-escaped, in __ek_h.
	__ek_h="${1-}"
	# Replacements quoted: bash 5.2 reads a bare & in one as the text matched.
	__ek_h="${__ek_h//&/"&amp;"}"
	__ek_h="${__ek_h//</"&lt;"}"
	__ek_h="${__ek_h//>/"&gt;"}"
	__ek_h="${__ek_h//\"/"&quot;"}"
	__ek_h="${__ek_h//\'/"&#39;"}"
}

mcp_ui_form() {
	# mcp_ui_form --title T --field NAME:TYPE[:OPT1,OPT2] ... --submit-tool TOOL: a self-contained HTML form
	# (every value escaped) that calls TOOL with the fields when an MCP Apps host shows it.
	local title="" tool="" spec name type options label opt
	local -a fields=()
	while (($#)); do
		case "$1" in
		--title) title="${2-}" ;;
		--field) fields+=("${2-}") ;;
		--submit-tool) tool="${2-}" ;;
		*) shift && continue ;;
		esac
		shift 2 || shift $#
	done
	__ek_html "${title}"
	local html="<!doctype html><html><head><meta charset=\"utf-8\"><title>${__ek_h}</title></head><body><form id=\"f\"><h1>${__ek_h}</h1>"
	for spec in "${fields[@]}"; do
		IFS=: read -r name type options <<<"${spec}"
		type="${type:-text}"
		label="${name//[-_]/ }"
		__ek_html "${label^}"
		label="${__ek_h}"
		__ek_html "${name}"
		name="${__ek_h}"
		html+="<label>${label} "
		case "${type}" in
		textarea) html+="<textarea name=\"${name}\"></textarea>" ;;
		checkbox) html+="<input type=\"checkbox\" name=\"${name}\">" ;;
		select)
			html+="<select name=\"${name}\">"
			IFS=, read -r -a opts <<<"${options}"
			for opt in "${opts[@]}"; do __ek_html "${opt}" && html+="<option>${__ek_h}</option>"; done
			html+="</select>"
			;;
		text | email | number | date) html+="<input type=\"${type}\" name=\"${name}\">" ;;
		*) html+="<input type=\"text\" name=\"${name}\">" ;;
		esac
		html+="</label><br>"
	done
	__ek_quote "${tool}"
	html+="<button>Submit</button></form><script>const tool=${__ek_q//</\\u003c};document.getElementById('f').onsubmit=e=>{e.preventDefault();"
	html+="const a={};for(const el of e.target.elements){if(el.name){a[el.name]=el.type==='checkbox'?el.checked:el.value}}"
	html+="window.parent.postMessage({jsonrpc:'2.0',id:Date.now(),method:'tools/call',params:{name:tool,arguments:a}},'*')}</script></body></html>"
	printf '%s\n' "${html}"
}

mcp_ui_table() {
	# JSON_ARRAY | mcp_ui_table --columns a,b,c [--title T]: a self-contained HTML table of the rows read on
	# stdin (an array of objects), every cell escaped.
	local columns="" title="Data" col cell rows
	while (($#)); do
		case "$1" in
		--columns) columns="${2-}" ;;
		--title) title="${2-}" ;;
		*) shift && continue ;;
		esac
		shift 2 || shift $#
	done
	IFS=, read -r -a cols <<<"${columns}"
	__ek_html "${title}"
	local html="<!doctype html><html><head><meta charset=\"utf-8\"><title>${__ek_h}</title></head><body><h1>${__ek_h}</h1><table><thead><tr>"
	for col in "${cols[@]}"; do __ek_html "${col}" && html+="<th>${__ek_h}</th>"; done
	html+="</tr></thead><tbody>"
	rows="$(cat)"
	if [ -n "${rows}" ]; then
		while IFS= read -r -d $'\x1e' cell; do
			if [ "${cell}" = $'\x1d' ]; then html+="</tr><tr>" && continue; fi
			__ek_html "${cell}"
			html+="<td>${__ek_h}</td>"
		done < <(printf '%s' "${rows}" | __ek_jq -j --arg c "${columns}" '($c | split(",")) as $cols
			| .[] | ("\u001d\u001e", ($cols[] as $k | (.[$k] // "" | if type == "string" then . else tojson end) + "\u001e"))')
		html="${html/<tbody><\/tr>/<tbody>}"
		html+="</tr>"
	fi
	printf '%s</tbody></table></body></html>\n' "${html}"
}

# --- progress from a running command ---------------------------------------------------------------------

mcp_run_with_progress() {
	# mcp_run_with_progress --pattern REGEX [--extract json|match1|ratio] [--total N] [--interval SECS]
	#   [--progress-file FILE] [--stdout FILE] [--stderr-file FILE] [--dry-run] [--quiet] -- COMMAND...
	# Run COMMAND, and turn each line of its stderr (or FILE) matching REGEX into progress: the line's JSON
	# .progress and .message, the first group as a percent (or a count of --total), or groups 1 and 2 as
	# done and all. Prints COMMAND's stdout (or writes it to --stdout) and returns its status; 130 if the
	# call was cancelled meanwhile.
	local pattern="" extract=json interval=0.2 out_file="" progress_file="" total="" dry=0 quiet=0 err_file=""
	while (($#)); do
		case "$1" in
		--pattern) pattern="${2-}" ;;
		--extract) extract="${2-}" ;;
		--interval) interval="${2-}" ;;
		--stdout) out_file="${2-}" ;;
		--progress-file) progress_file="${2-}" ;;
		--total) total="${2-}" ;;
		--stderr-file) err_file="${2-}" ;;
		--dry-run) dry=1 && shift && continue ;;
		--quiet) quiet=1 && shift && continue ;;
		--) shift && break ;;
		*) break ;;
		esac
		shift 2 || shift $#
	done
	[ -n "${pattern}" ] || { __ek_warn "mcp_run_with_progress: --pattern is required" && return 1; }
	case "${extract}" in json | match1 | ratio) ;; *) __ek_warn "mcp_run_with_progress: unknown extract mode '${extract}'" && return 1 ;; esac
	if [ -n "${total}" ] && ! [[ "${total}" =~ ^[1-9][0-9]*$ ]]; then
		__ek_warn "mcp_run_with_progress: --total must be positive integer" && return 1
	fi
	if ! [[ "${interval}" =~ ^[0-9]*\.?[0-9]+$ ]] || ! awk -v i="${interval}" 'BEGIN { exit !(i > 0) }'; then
		__ek_warn "mcp_run_with_progress: --interval must be a positive number" && return 1
	fi
	if [ "${extract}" = json ] && ! __ek_jq_bin; then
		__ek_warn "mcp_run_with_progress: MCPBASH_JSON_TOOL_BIN required for json extraction mode" && return 1
	fi
	local work pid code=0 read_at=0
	work="$(mktemp -d "${TMPDIR:-/tmp}/ek-progress.XXXXXX")"
	local source="${progress_file:-${work}/stderr}"
	if [ -n "${progress_file}" ]; then : >"${progress_file}"; fi
	if [ -n "${err_file}" ]; then : >"${err_file}" 2>/dev/null || mcp_log_warn "mcp_run_with_progress" "cannot write to stderr-file: ${err_file}"; fi
	"$@" >"${work}/stdout" 2>"${work}/stderr" &
	pid=$!
	while kill -0 "${pid}" 2>/dev/null; do
		if mcp_is_cancelled; then
			kill "${pid}" 2>/dev/null || true
			wait "${pid}" 2>/dev/null || true
			rm -rf "${work}"
			return 130
		fi
		read_at="$(__ek_progress_lines "${source}" "${read_at}" "${pattern}" "${extract}" "${total}" "${dry}" "${quiet}" "${err_file}")"
		sleep "${interval}"
	done
	wait "${pid}" || code=$?
	read_at="$(__ek_progress_lines "${source}" "${read_at}" "${pattern}" "${extract}" "${total}" "${dry}" "${quiet}" "${err_file}")"
	if [ -n "${out_file}" ]; then cp -- "${work}/stdout" "${out_file}"; else cat -- "${work}/stdout"; fi
	rm -rf "${work}"
	return "${code}"
}

__ek_progress_lines() {
	# The complete lines of FILE after byte OFFSET turned into progress; prints the offset read up to.
	local file="$1" offset="$2" pattern="$3" extract="$4" total="$5" dry="$6" quiet="$7" err_file="$8"
	local chunk line pct msg first second
	[ -f "${file}" ] || { printf '%s' "${offset}" && return 0; }
	chunk="$(tail -c +$((offset + 1)) -- "${file}" 2>/dev/null; printf x)"
	chunk="${chunk%x}"
	[[ "${chunk}" == *$'\n'* ]] || { printf '%s' "${offset}" && return 0; }
	chunk="${chunk%$'\n'*}"$'\n'
	offset=$((offset + $(printf '%s' "${chunk}" | wc -c)))
	while IFS= read -r line; do
		if ! [[ "${line}" =~ ${pattern} ]]; then
			if [ -n "${err_file}" ]; then printf '%s\n' "${line}" >>"${err_file}" 2>/dev/null || true; fi
			if ((!quiet)); then mcp_log_debug "mcp_run_with_progress" "subprocess output: ${line}" 2>/dev/null; fi
			continue
		fi
		# The groups first: every [[ =~ ]] below replaces BASH_REMATCH.
		pct="" msg="${line}" first="${BASH_REMATCH[1]:-}" second="${BASH_REMATCH[2]:-}"
		case "${extract}" in
		json)
			local pair
			pair="$(printf '%s' "${line}" | "${__ek_jqb}" -r 'select(.progress != null) | "\(.progress)\t\(.message // "Working...")"' 2>/dev/null || true)"
			if [[ "${pair%%$'\t'*}" =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
				pct="${pair%%$'\t'*}"
				pct="${pct%%.*}"
				msg="${pair#*$'\t'}"
			fi
			;;
		match1)
			if [[ "${first}" =~ ^[0-9]+$ ]]; then
				pct=$((10#${first}))
				if [ -n "${total}" ]; then pct=$((pct * 100 / total)); fi
			fi
			;;
		ratio)
			if [[ "${first}" =~ ^[0-9]+$ && "${second}" =~ ^[1-9][0-9]*$ ]]; then
				pct=$((10#${first} * 100 / 10#${second}))
			fi
			;;
		esac
		[ -n "${pct}" ] || continue
		if ((dry)); then
			__ek_quote "${msg}"
			printf '{"progress":%s,"message":%s}\n' "${pct}" "${__ek_q}" >&2
		else
			mcp_progress "${pct}" "${msg}"
		fi
	done <<<"${chunk%$'\n'}"
	printf '%s' "${offset}"
}
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

__ek_keep=0 # 1 while mcp-bash's helpers ask through the ek_* ones: the reply is kept in __ek_reply, not printed
__ek_mcp_t="" # meanwhile, their timeout (seconds, already checked), sent with the question

__ek_emit() {
	# A reply: printed as one line, or kept for the mcp_elicit* helper asking (no subshell to capture it).
	if ((__ek_keep)); then __ek_reply="$1"; else printf '%s\n' "$1"; fi
}

ek_ask_json() {
	# ek_ask_json REQUEST_JSON: ask, print the reply, return elicitkit's code. No polling: the reply
	# comes on a FIFO of this question's own. REQUEST_JSON is sent as it is: build it with jq, or use
	# the helpers below, which encode every value.
	if [ "${MCP_ELICIT_SUPPORTED:-0}" != "1" ]; then
		__ek_emit '{"action":"decline","content":null,"error":"not_supported"}'
		return 4
	fi
	if [ -z "${ELICITKIT_ASK:-}" ] || [ ! -p "${ELICITKIT_ASK}" ]; then
		__ek_emit '{"action":"error","content":null,"error":"invalid_request","message":"not inside a tool served by elicitkit"}'
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
	__ek_emit "${reply}"
	__ek_reply_code "${reply}"
}


# --- building a question: every value is encoded, none is spliced -----------------------------------------

__ek_refuse() {
	# __ek_refuse MESSAGE: a question the SDK will not send. The reply says why (invalid_request), code 5.
	__ek_quote "$1"
	__ek_emit "{\"action\":\"error\",\"content\":null,\"error\":\"invalid_request\",\"message\":${__ek_q}}"
	return 5
}

__ek_value() {
	# __ek_value KIND OPTION VALUE: VALUE as JSON, in __ek_q. The one way a value enters a request: text is
	# quoted; a number (JSON's grammar), a count (0, 1, 2...) or a boolean (true, false) that is not one is
	# refused, naming OPTION, and never sent. Plain counts are checked with patterns (a regex costs bash a
	# compile on every call); anything else that claims to be a number goes through JSON's grammar.
	case "$1" in
	text) __ek_quote "$3" && return 0 ;;
	count | number) __ek_count "$3" && __ek_q="$3" && return 0 ;;&
	number) __ek_number "$3" && __ek_q="$3" && return 0 ;;
	boolean) [[ "$3" == true || "$3" == false ]] && __ek_q="$3" && return 0 ;;
	esac
	__ek_refuse_value "$@"
}

__ek_count() {
	# __ek_count VALUE: VALUE is a whole number written as JSON writes it (0, 1, 2..., no sign, no leading zero).
	[[ -n "$1" && "$1" != *[!0123456789]* && ("$1" == 0 || "$1" != 0*) ]]
}

__ek_number() {
	# __ek_number VALUE: VALUE is a number in JSON's grammar.
	local number='^-?(0|[1-9][0123456789]*)(\.[0123456789]+)?([eE][+-]?[0123456789]+)?$'
	[[ "$1" =~ ${number} ]]
}

__ek_refuse_value() {
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
	[ -z "${__ek_title}${__ek_desc}" ] ||
		{ __ek_put title text --title "${__ek_title}" && __ek_put description text --description "${__ek_desc}"; }
}

__ek_with_timeout() {
	# __ek_with_timeout SECONDS OPTION: ',"timeout":SECONDS' in __ek_t; when SECONDS is empty, the timeout of
	# the mcp_elicit* helper asking (checked there), or nothing.
	__ek_t=""
	[ -n "$1" ] || { [ -z "${__ek_mcp_t}" ] || __ek_t=",\"timeout\":${__ek_mcp_t}"; return 0; }
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

ek_confirm() {
	__ek_parse "$@"
	shift "${__ek_shift}"
	__ek_field boolean || return
	[ -z "${__ek_default}" ] || __ek_put default boolean --default "${__ek_default}" || return
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

# --- mcp-bash's elicitation helpers: its names, arguments, content keys, output and return codes ------------

__ek_mcp_ask() {
	# __ek_mcp_ask NAME TIMEOUT HELPER ARG...: ask through HELPER (an ek_* helper, `--` put before ARG so that
	# no argument is read as an option; TIMEOUT goes with the question), and answer as mcp-bash's NAME does: the reply
	# {"action","content"} without a newline; 0 when the client answered (an error it returned is
	# {"action":"error"}), 1 when nobody could be asked or nobody answered in time.
	local name="$1" timeout="$2" helper="$3" code=0
	shift 3
	# A whole number of seconds (the usual case) is checked here; anything else by __ek_seconds.
	if [ "${MCP_ELICIT_SUPPORTED:-0}" != "1" ] || [ -z "${ELICITKIT_ASK:-}" ] || [ ! -p "${ELICITKIT_ASK}" ] || {
		[[ -z "${timeout}" || "${timeout}" == 0* || "${timeout}" == *[!0123456789]* ]] && ! __ek_seconds "${timeout}"
	}; then
		__ek_mcp_unasked "${name}" "${timeout}"
		return 1
	fi
	__ek_keep=1 __ek_reply="" __ek_mcp_t="${timeout}"
	"${helper}" -- "$@" || code=$?
	__ek_keep=0 __ek_mcp_t=""
	case "${code}" in
	0 | 1 | 2) printf '%s' "${__ek_reply}" ;; # the person's own answer, as the server wrote it
	*) __ek_mcp_failed "${name}" "${code}" "${__ek_reply}" || return 1 ;;
	esac
}

__ek_mcp_failed() {
	# __ek_mcp_failed NAME CODE REPLY: what mcp-bash's NAME answers when the ek_* helper returned CODE (3-5).
	local reply="$3"
	case "$2" in
	3)
		__ek_warn "$1: Timeout waiting for user response"
		printf '{"action":"error","content":null}'
		return 1
		;;
	4) printf '{"action":"decline","content":null}' ;; # the client cannot show this kind: mcp-bash's decline
	*)
		# The client failed the request, or the question could not be asked: mcp-bash's "error", answered.
		# Why, on stderr: the reply's "message" (its last member), as the JSON string it is, on one line.
		if [[ "${reply}" == *'"message":"'*'"}' ]]; then
			reply="${reply#*\"message\":}"
			__ek_warn "$1: ${reply:0:${#reply}-1}"
		fi
		printf '{"action":"error","content":null}'
		;;
	esac
}

__ek_seconds() {
	# __ek_seconds VALUE: VALUE is a positive number of seconds in JSON's grammar with no sign and no
	# exponent (5, 0.5, 30.25), so that the ek_* helper asked never refuses it itself (its refusal would come
	# back as a client's error, status 0). Patterns, not a regex: this runs on every question.
	local whole="${1%%.*}" frac=""
	[[ "$1" == *.* ]] && { frac="${1#*.}" && [ -n "${frac}" ] || return 1; }
	__ek_count "${whole}" && [[ "${frac}" != *[!0123456789]* && "$1" != 0 && "${1//[0.]/}" != "" ]]
}

__ek_mcp_unasked() {
	# __ek_mcp_unasked NAME TIMEOUT: why a mcp_elicit* helper could not ask, as mcp-bash says it (stderr)
	# and answers it (stdout).
	if [ "${MCP_ELICIT_SUPPORTED:-0}" != "1" ]; then
		__ek_warn "$1: Client does not support elicitation"
		printf '{"action":"decline","content":null}'
		return
	fi
	if [ -z "${ELICITKIT_ASK:-}" ] || [ ! -p "${ELICITKIT_ASK}" ]; then
		__ek_warn "$1: Elicitation environment not configured"
	else
		__ek_warn "$1: the timeout must be a positive number of seconds, not '$2' (MCPBASH_ELICITATION_TIMEOUT)"
	fi
	printf '{"action":"error","content":null}'
}

__ek_form_ask() {
	# __ek_form_ask [--timeout S] [--] MESSAGE SCHEMA_JSON|URL MODE: ek_ask_json for a caller's schema or URL.
	# The schema travels as text, which the server reads as exactly one JSON object: whatever it holds, it
	# cannot reach outside the schema.
	local message schema
	__ek_parse "$@"
	shift "${__ek_shift}"
	__ek_with_timeout "${__ek_timeout}" --timeout || return
	__ek_quote "${1-}"
	message="${__ek_q}"
	__ek_quote "${2-}"
	schema="${__ek_q}"
	if [ "${3-}" = url ]; then
		ek_ask_json "{\"message\":${message},\"mode\":\"url\",\"url\":${schema}${__ek_t}}"
	else
		ek_ask_json "{\"message\":${message},\"mode\":\"form\",\"schema\":${schema}${__ek_t}}"
	fi
}

mcp_elicit() {
	# mcp_elicit MESSAGE SCHEMA_JSON [TIMEOUT] [MODE]: mcp-bash's core call; MODE url takes the URL as SCHEMA.
	local mode="${4:-form}"
	[ "${mode}" = url ] || mode=form
	__ek_mcp_ask mcp_elicit "${3:-${MCPBASH_ELICITATION_TIMEOUT:-30}}" __ek_form_ask "${1-}" "${2-}" "${mode}"
}

mcp_elicit_url() {
	# mcp_elicit_url MESSAGE URL [TIMEOUT]: the reply also carries the link's "elicitationId".
	__ek_mcp_ask mcp_elicit_url "${3:-${MCPBASH_ELICITATION_TIMEOUT:-30}}" __ek_form_ask "${1-}" "${2-}" url
}

mcp_elicit_string() { __ek_mcp_ask mcp_elicit "${MCPBASH_ELICITATION_TIMEOUT:-30}" ek_string "${1-}" "${2:-value}"; }
mcp_elicit_confirm() { __ek_mcp_ask mcp_elicit "${MCPBASH_ELICITATION_TIMEOUT:-30}" ek_confirm "${1-}"; }
mcp_elicit_choice() { __ek_mcp_ask mcp_elicit "${MCPBASH_ELICITATION_TIMEOUT:-30}" ek_choice "$@"; }
mcp_elicit_titled_choice() { __ek_mcp_ask mcp_elicit "${MCPBASH_ELICITATION_TIMEOUT:-30}" ek_titled_choice "$@"; }
mcp_elicit_multi_choice() { __ek_mcp_ask mcp_elicit "${MCPBASH_ELICITATION_TIMEOUT:-30}" ek_multi_choice "$@"; }
mcp_elicit_titled_multi_choice() { __ek_mcp_ask mcp_elicit "${MCPBASH_ELICITATION_TIMEOUT:-30}" ek_titled_multi_choice "$@"; }
# elicitkit's own, on mcp-bash's contract (mcp-bash has no number helper): a number, in content's "value".
mcp_elicit_number() { __ek_mcp_ask mcp_elicit "${MCPBASH_ELICITATION_TIMEOUT:-30}" ek_number "${1-}" "${2:-value}"; }
