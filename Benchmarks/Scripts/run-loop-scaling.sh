#!/usr/bin/env bash
# Loops on two CPUs, paired: a loop on CPU 0 times chunks of polling passes alternately with a
# second loop busy on CPU 1 and with it parked, so each ratio compares chunks milliseconds apart
# (the host's slow periods last seconds). Loop and libuv (the machine's own reference).
#
#   Scripts/run-loop-scaling.sh [--docs] [rounds] [passes per chunk]
#
# Builds loop-scaling (release), runs it under `taskset -c 0` (its neighbour thread pins itself to
# CPU 1); with --docs, replaces the generated block of Docs/Benchmarks.md's "Loops on two CPUs".
set -euo pipefail
cd "$(dirname "$0")/.."
docs=0
if [ "${1:-}" = "--docs" ]; then docs=1; shift; fi
Scripts/install-peers.sh
swift build -c release --product loop-scaling 2>&1 | tail -1
tool="$(swift build -c release --show-bin-path)/loop-scaling"
load_before=$(uptime | sed 's/.*load average: //')
table=$(taskset -c 0 "$tool" "$@")
load_after=$(uptime | sed 's/.*load average: //')
echo "$table"
if [ "$docs" = 1 ]; then
    python3 Scripts/replace-docs-block.py run-loop-scaling.sh <<MD
- date: $(date -u '+%Y-%m-%d %H:%M UTC'); command: \`Benchmarks/Scripts/run-loop-scaling.sh --docs${*:+ $*}\`
- placement: the process under \`taskset -c 0\`; the measured thread pinned to CPU 0, the neighbour to CPU 1
- load before: $load_before; after: $load_after

$table
MD
fi
