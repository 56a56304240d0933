#!/usr/bin/env bash
# Executor hops across CPUs (issue 26's placement): the loop's thread and SwiftNIO's thread on
# CPU 1, the calling task and Dispatch's workers on CPU 0, paired chunks in both orders as in
# run-executor-pairs.sh.
#
#   Scripts/run-executor-pairs-two-cpus.sh [--docs] [rounds] [operations per chunk]
set -euo pipefail
rounds="${1:-200}"
if [ "${1:-}" = "--docs" ]; then docs="--docs"; rounds="${2:-200}"; per="${3:-200}"; else docs=""; per="${2:-200}"; fi
exec "$(dirname "$0")/run-paired-tool.sh" executor-pairs run-executor-pairs-two-cpus.sh \
    "the process under \`taskset -c 0\` (the runner task, Dispatch's workers), the loop's thread and SwiftNIO's thread pinned to CPU 1" \
    $docs "$rounds" "$per" 1
