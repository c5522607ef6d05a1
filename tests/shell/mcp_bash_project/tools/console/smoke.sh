#!/usr/bin/env bash
# mcp-bash's scaffolded smoke test: not a tool.
exit 0
