#!/usr/bin/env bash
echo "disk full on /var" >&2
exit 3
