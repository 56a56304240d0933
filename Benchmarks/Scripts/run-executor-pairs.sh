#!/usr/bin/env bash
# Executor hops onto a loop against hops onto a SwiftNIO event loop, paired: chunks of the same
# work on each executor alternate milliseconds apart (the host's slow periods last seconds),
# every thread on CPU 0.
#
#   Scripts/run-executor-pairs.sh [--docs] [rounds] [operations per chunk]
#
# Builds executor-pairs (release), runs it under `taskset -c 0` (SwiftNIO's thread also pins
# itself to CPU 0); with --docs, replaces the generated block of Docs/Benchmarks.md's
# "Executor hops, timed in pairs".
set -euo pipefail
exec "$(dirname "$0")/run-paired-tool.sh" executor-pairs run-executor-pairs.sh \
    "the process under \`taskset -c 0\`: the runner task, the loop's thread, SwiftNIO's thread and Dispatch's workers share CPU 0" "$@"
