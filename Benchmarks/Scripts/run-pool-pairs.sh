#!/usr/bin/env bash
# The fresh-object works against the naive Swift pool, paired: chunks of each alternate
# milliseconds apart on one thread on CPU 0, in both orders; each row reports both orders'
# medians and the worse one (issue 31: a fresh object per pool ≤ 1.0× the naive pool in either
# order).
#
#   Scripts/run-pool-pairs.sh [--docs] [rounds] [objects per chunk]
#
# Builds pool-pairs (release), runs it under `taskset -c 0`; with --docs, replaces its
# generated block in Docs/Benchmarks.md. About 20 s at a load of 2 (400 rounds × 2 × 20,000).
set -euo pipefail
exec "$(dirname "$0")/run-paired-tool.sh" pool-pairs run-pool-pairs.sh \
    "the process under \`taskset -c 0\`; the measuring thread pinned to CPU 0" "$@"
