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
exec "$(dirname "$0")/run-paired-tool.sh" round-trip-pairs run-round-trip-pairs.sh \
    "the process under \`taskset -c 0\`; the runner and both responders pinned to CPU 0" "$@"
