#!/usr/bin/env bash
# Docs/Testing.md's table "Side by side with swift-clocks' TestClock": the twelve shapes, each run
# N times (default 10,000) on each side, one side per process, in both orders (the virtual loop
# first, then TestClock first): failures and hung runs of each order, and the worse wall time.
# Prints the Markdown table, headed by the date, the machine's cores and its load average.
#
# Usage: Comparisons/AsyncTestClocks/run-comparison.sh [runs] [parallel]
#   parallel: runs under way at once per side (Swift Testing runs tests in parallel); default 1.
# Debug builds on both sides, as `swift test` builds tests. About 15 minutes on 2 busy cores.
set -euo pipefail
cd "$(dirname "$0")"
export PATH="/opt/swift/usr/bin:$PATH"
runs=${1:-10000}
parallel=${2:-1}
swift build 2>&1 | tail -n 1 >&2
bin="$(swift build --show-bin-path)/async-test-clocks"
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
started="$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
for order in "virtual-loop testclock testclock-serial" "testclock-serial testclock virtual-loop"; do
  for side in $order; do
    echo "== $side ($runs runs per shape, $parallel at once)" >&2
    "$bin" "$side" --runs "$runs" --parallel "$parallel" | sed "s/^/${order%% *}\t/" | tee -a "$raw" >&2
  done
done
python3 - "$raw" "$runs" "$parallel" "$started" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'EOF'
import sys
raw, runs, parallel, started, load_end = sys.argv[1:]
rows = {}   # shape -> side -> [(failed, hung, seconds), per order]
shapes = []
for line in open(raw):
    first, side, shape, _, _, failed, hung, seconds, *rest = line.rstrip("\n").split("\t")
    if shape not in rows:
        shapes.append(shape)
        rows[shape] = {}
    rows[shape].setdefault(side, {})[first] = (int(failed), int(hung), float(seconds))
sides = [("virtual-loop", "withVirtualLoop"), ("testclock", "TestClock"), ("testclock-serial", "TestClock + withMainSerialExecutor")]
orders = ["virtual-loop", "testclock-serial"]

def cell(results):
    counts = " · ".join(f"{results[o][0]}" + (f" (+{results[o][1]} hung)" if results[o][1] else "") for o in orders)
    return counts, f"{max(results[o][2] for o in orders):.1f}"

print(f"{int(runs):,} runs of each shape on each side, {parallel} at once; {started}, {load_end} at the end.")
print("Failures are given for each order (the virtual loop's process first · TestClock's first); the time is the worse of the two.\n")
header = "| shape | " + " | ".join(f"{name}: failed | s" for _, name in sides) + " |"
print(header)
print("|---|" + "---:|---:|" * len(sides))
totals = {side: [0, 0, 0.0] for side, _ in sides}
for shape in shapes:
    cells = []
    for side, _ in sides:
        counts, seconds = cell(rows[shape][side])
        cells += [counts, seconds]
        for o in orders:
            totals[side][0] += rows[shape][side][o][0]
            totals[side][1] += rows[shape][side][o][1]
        totals[side][2] += max(rows[shape][side][o][2] for o in orders)
    print(f"| {shape} | " + " | ".join(cells) + " |")
cells = []
for side, _ in sides:
    failed, hung, seconds = totals[side]
    cells += [f"**{failed}**" + (f" (+{hung} hung)" if hung else ""), f"**{seconds:.1f}**"]
print("| **all twelve, both orders** | " + " | ".join(cells) + " |")
EOF
