#!/usr/bin/env bash
# What the allocation counter costs timed benchmarks (issue 16, item 5): the polling pass and the
# fresh-object autorelease works, run plain, with the counter counting and with it sampling
# (loaded with LD_PRELOAD, mode from RLK_ALLOC_MODE), interleaved over N rounds, all under
# `taskset -c 0`. Prints each mode's median p50 per work and its ratio to plain.
#
#   Scripts/run-allocation-overhead.sh [rounds]      (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
out=.build-results/allocation-overhead
mkdir -p "$out"
Scripts/build-allocation-counter.sh "$out/liballocationcounter.so" >/dev/null
swift build -c release --product LoopBenchmarks 2>&1 | tail -1
swift build -c release --product AutoreleaseBenchmarks 2>&1 | tail -1
preload="$PWD/$out/liballocationcounter.so"

# One run of the works in one mode; writes its ratios.json (the works' own times are in it).
run_mode() {
    local mode=$1 round=$2 file="$out/$1-$2"
    local env=()
    if [ "$mode" != plain ]; then env=(env "LD_PRELOAD=$preload" "RLK_ALLOC_MODE=$mode"); fi
    {
        taskset -c 0 "${env[@]}" swift package benchmark --target LoopBenchmarks \
            --filter 'polling pass \+ 1 callout, 0 hooks · (Loop|libuv)' \
            --format markdown --scale --time-units nanoseconds --no-progress
        taskset -c 0 "${env[@]}" swift package benchmark --target AutoreleaseBenchmarks \
            --filter '(fresh object, push|1000 fresh objects).* · (Autorelease|naive Swift pool)' \
            --format markdown --scale --time-units nanoseconds --no-progress
    } > "$file.md" 2>&1
    python3 Scripts/ratios.py "$file.md" --json "$file.json" > /dev/null
}

for round in $(seq 1 "$rounds"); do
    for mode in plain counting sampling; do run_mode "$mode" "$round"; done
done

python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
works = {}
for mode in ("plain", "counting", "sampling"):
    for r in range(1, rounds + 1):
        for row in json.load(open(f"{out}/{mode}-{r}.json")).values():
            works.setdefault(row["work"], {}).setdefault(mode, {})[r] = row["ours_ns"]
print(f"| work (median of {rounds} interleaved rounds, p50 ns per operation) | plain | counting | sampling |")
print("|---|---:|---:|---:|")
for work, modes in works.items():
    plain = statistics.median(modes["plain"].values())
    cells = [f"{plain:.1f}"]
    for mode in ("counting", "sampling"):
        value = statistics.median(modes[mode].values())
        cells.append(f"{value:.1f} ({value / plain:.3f}×)")
    print(f"| {work} | " + " | ".join(cells) + " |")
PY
