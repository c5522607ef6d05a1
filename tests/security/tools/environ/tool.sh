#!/usr/bin/env bash
# What /proc shows of the environment of this tool, of its parent (the server: /proc/$PPID/environ) and of
# every ancestor it can read, one line each: "<pid> <base64 of its environ file>", or "<pid> unreadable".
set -uo pipefail
pid=$$
while [ "${pid}" -gt 0 ]; do
  if environ="$(base64 -w0 <"/proc/${pid}/environ" 2>/dev/null)"; then
    echo "${pid} ${environ:-empty}"
  else
    echo "${pid} unreadable"
  fi
  pid="$(awk '/^PPid:/ { print $2 }' "/proc/${pid}/status")"
done
