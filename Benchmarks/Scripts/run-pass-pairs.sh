#!/usr/bin/env bash
# The polling pass against CFRunLoop (0, 2 and 8 observers for every activity) and beside idle
# items (10,000 idle source0s, 10,000 idle fd sources, 100,000 armed timers), paired: chunks of
# the two sides alternate milliseconds apart on one thread on CPU 0, in both orders; each row
# reports both orders' medians and the worse one (issue 12: ≤ 0.1× CFRunLoop; idle items ≤ 1.1×).
#
#   Scripts/run-pass-pairs.sh [--docs] [rounds] [loop passes per chunk]
#
# Builds pass-pairs (release), runs it under `taskset -c 0`; with --docs, replaces its generated
# block in Docs/Benchmarks.md. About 15 s (200 rounds; chunks of 20,000 loop passes, 2,000 CF).
set -euo pipefail
exec "$(dirname "$0")/run-paired-tool.sh" pass-pairs run-pass-pairs.sh \
    "the process under \`taskset -c 0\`; the measuring thread pinned to CPU 0 (a loop of its own thread, not \`Loop.main\`); the idle items in modes of that loop, each side's pass in its own mode" "$@"
