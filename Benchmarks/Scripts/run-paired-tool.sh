#!/usr/bin/env bash
# Runs one of the paired-timing tools and, with --docs, writes its table into Docs/Benchmarks.md:
# builds PRODUCT (release), runs it under `taskset -c 0` with the tool arguments, prints its
# table and the load before and after, and with --docs replaces the block that SCRIPT owns
# (`<!-- SCRIPT --docs: begin -->`) with the date, the command, PLACEMENT, the load and the table.
#
#   Scripts/run-paired-tool.sh PRODUCT SCRIPT PLACEMENT [--docs] [--processes N] ... [tool arguments]
#
# The options come before the tool's arguments, in any order; a later one wins, so a calling
# script can put its default first and pass its own caller's options after it. With
# --processes N (N > 1), runs the tool in N processes one after another, prints each one's table
# and writes the merged one (Scripts/merge-paired-tables.py: per ratio cell, the median of the
# processes' medians and their range), so no one process's layout decides a reading.
#
# The scripts that call it: run-loop-scaling.sh, run-round-trip-pairs.sh, run-executor-pairs.sh,
# run-pass-pairs.sh, run-due-timer-pairs.sh, run-pool-pairs.sh, run-allocation-overhead.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
product="$1" script="$2" placement="$3"
shift 3
docs=0 processes=1
while [ $# -gt 0 ]; do
    case "$1" in
        --docs) docs=1; shift ;;
        --processes) processes="${2:-}"; shift $(( $# > 1 ? 2 : 1 )) ;;
        *) break ;;
    esac
done
case "$processes" in
    ''|*[!0-9]*|0) echo "run-paired-tool.sh: --processes needs a count above 0, not '$processes'" >&2; exit 2 ;;
esac
swift build -c release --product "$product" 2>&1 | tail -1
tool="$(swift build -c release --show-bin-path)/$product"
load_before=$(uptime | sed 's/.*load average: //')
if [ "$processes" = 1 ]; then
    table=$(taskset -c 0 "$tool" "$@")
    process_note=""
else
    tables=$(mktemp -d)
    trap 'rm -rf "$tables"' EXIT
    for process in $(seq 1 "$processes"); do
        taskset -c 0 "$tool" "$@" > "$tables/$process.md"
        echo "process $process of $processes:"
        cat "$tables/$process.md"
    done
    table=$(python3 Scripts/merge-paired-tables.py "$tables"/*.md)
    echo "merged:"
    process_note="- processes: $processes, one after another; each ratio is the median of the processes' medians, the lowest and highest in parentheses"
fi
load_after=$(uptime | sed 's/.*load average: //')
echo "$table"
echo "load before: $load_before; after: $load_after"
# run-all.sh collects the tables of its run for Scripts/check (thresholds with "paired").
if [ -n "${RUNLOOPKIT_PAIRED_OUT:-}" ]; then printf '%s\n' "$table" > "$RUNLOOPKIT_PAIRED_OUT/$product.md"; fi
if [ "$docs" = 1 ]; then
    python3 Scripts/replace-docs-block.py "$script" <<MD
- date: $(date -u '+%Y-%m-%d %H:%M UTC'); command: \`Benchmarks/Scripts/$script --docs${*:+ $*}\`
- placement: $placement${process_note:+
$process_note}
- load before: $load_before; after: $load_after

$table
MD
fi
