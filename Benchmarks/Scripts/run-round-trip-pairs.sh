#!/usr/bin/env bash
# The cross-thread round trip against its eventfd floor, paired: chunks of round trips through
# the floor and through a loop alternate milliseconds apart (the host's slow periods last
# seconds), every thread on CPU 0.
#
#   Scripts/run-round-trip-pairs.sh [--docs] [rounds] [round trips per chunk]
#
# Builds round-trip-pairs (release), runs it under `taskset -c 0` (its threads also pin
# themselves to CPU 0); with --docs, replaces the generated block of Docs/Benchmarks.md's
# "The cross-thread round trip, timed in pairs".
set -euo pipefail
cd "$(dirname "$0")/.."
docs=0
if [ "${1:-}" = "--docs" ]; then docs=1; shift; fi
swift build -c release --product round-trip-pairs 2>&1 | tail -1
tool="$(swift build -c release --show-bin-path)/round-trip-pairs"
load_before=$(uptime | sed 's/.*load average: //')
table=$(taskset -c 0 "$tool" "$@")
load_after=$(uptime | sed 's/.*load average: //')
echo "$table"
if [ "$docs" = 1 ]; then
    python3 Scripts/replace-docs-block.py run-round-trip-pairs.sh <<MD
- date: $(date -u '+%Y-%m-%d %H:%M UTC'); command: \`Benchmarks/Scripts/run-round-trip-pairs.sh --docs${*:+ $*}\`
- placement: the process under \`taskset -c 0\`; the runner and both responders pinned to CPU 0
- load before: $load_before; after: $load_after

$table
MD
fi
