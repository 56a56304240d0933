#!/usr/bin/env bash
# Runs one of the paired-timing tools and, with --docs, writes its table into Docs/Benchmarks.md:
# builds PRODUCT (release), runs it under `taskset -c 0` with the tool arguments, prints its
# table and the load before and after, and with --docs replaces the block that SCRIPT owns
# (`<!-- SCRIPT --docs: begin -->`) with the date, the command, PLACEMENT, the load and the table.
#
#   Scripts/run-paired-tool.sh PRODUCT SCRIPT PLACEMENT [--docs] [tool arguments]
#
# The scripts that call it: run-loop-scaling.sh, run-round-trip-pairs.sh, run-executor-pairs.sh,
# run-allocation-overhead.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
product="$1" script="$2" placement="$3"
shift 3
docs=0
if [ "${1:-}" = "--docs" ]; then docs=1; shift; fi
swift build -c release --product "$product" 2>&1 | tail -1
tool="$(swift build -c release --show-bin-path)/$product"
load_before=$(uptime | sed 's/.*load average: //')
table=$(taskset -c 0 "$tool" "$@")
load_after=$(uptime | sed 's/.*load average: //')
echo "$table"
echo "load before: $load_before; after: $load_after"
# run-all.sh collects the tables of its run for Scripts/check (thresholds with "paired").
if [ -n "${RUNLOOPKIT_PAIRED_OUT:-}" ]; then printf '%s\n' "$table" > "$RUNLOOPKIT_PAIRED_OUT/$product.md"; fi
if [ "$docs" = 1 ]; then
    python3 Scripts/replace-docs-block.py "$script" <<MD
- date: $(date -u '+%Y-%m-%d %H:%M UTC'); command: \`Benchmarks/Scripts/$script --docs${*:+ $*}\`
- placement: $placement
- load before: $load_before; after: $load_after

$table
MD
fi
