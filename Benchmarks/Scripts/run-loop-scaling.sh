#!/usr/bin/env bash
# Loops on two CPUs, paired: a loop on CPU 0 times chunks of polling passes alternately with a
# second loop busy on CPU 1 and with it parked, so each ratio compares chunks milliseconds apart
# (the host's slow periods last seconds). Loop and libuv (the machine's own reference).
#
#   Scripts/run-loop-scaling.sh [--docs] [rounds] [passes per chunk]
#
# Builds loop-scaling (release), runs it under `taskset -c 0` (its neighbour thread pins itself to
# CPU 1); with --docs, replaces the generated block of Docs/Benchmarks.md's two-CPU table.
set -euo pipefail
scripts="$(dirname "$0")"
"$scripts/install-peers.sh"
exec "$scripts/run-paired-tool.sh" loop-scaling run-loop-scaling.sh \
    "the process under \`taskset -c 0\`; the measured thread pinned to CPU 0, the neighbour to CPU 1" "$@"
