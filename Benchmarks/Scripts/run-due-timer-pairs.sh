#!/usr/bin/env bash
# The due timer re-armed by the caller against libuv, paired: chunks of passes through libuv and
# through a loop alternate milliseconds apart on one thread on CPU 0, in both orders; each row
# reports both orders' medians and the worse one (issue 31: with 2 hooks ≤ 0.8× libuv).
#
#   Scripts/run-due-timer-pairs.sh [--docs] [rounds] [passes per chunk]
#
# Builds due-timer-pairs (release), runs it under `taskset -c 0`; with --docs, replaces its
# generated block in Docs/Benchmarks.md. About 15 s at a load of 2 (200 rounds × 2 × 20,000).
set -euo pipefail
exec "$(dirname "$0")/run-paired-tool.sh" due-timer-pairs run-due-timer-pairs.sh \
    "the process under \`taskset -c 0\`; the measuring thread pinned to CPU 0 (a loop of its own thread, not \`Loop.main\`)" "$@"
