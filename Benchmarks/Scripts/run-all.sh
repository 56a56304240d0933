#!/usr/bin/env bash
# Runs the benchmarks beside their peers, pinned, and prints the ratio tables.
#
#   Scripts/run-all.sh [--docs] [package-benchmark options, e.g. --target X --filter REGEX]
#
# 1. installs the Debian packages of the C peers if missing (install-peers.sh);
# 2. builds the package in release mode, unpinned;
# 3. runs `swift package benchmark` under `taskset -c 0`: the benchmark tool, every benchmark
#    process and every thread they start (loop threads, libuv/GLib/NIO threads) share CPU 0;
#    the round trips also pin their threads to CPU 0 themselves and fail if they are elsewhere;
# 4. writes .build-results/results.md (raw), tables.md and ratios.json (for Scripts/check);
# 5. with --docs, replaces the generated block of Docs/Benchmarks.md with the tables, the
#    machine, the load (uptime) before and after, the placement and the date.
# RUNLOOPKIT_BENCH_SECONDS shortens each benchmark's sampling (default 2 s loop, 1 s others).
set -euo pipefail
cd "$(dirname "$0")/.."
docs=0
args=()
for arg in "$@"; do
    if [ "$arg" = "--docs" ]; then docs=1; else args+=("$arg"); fi
done
out=.build-results
mkdir -p "$out"
Scripts/install-peers.sh
swift build -c release 2>&1 | tail -1
cpu=0   # must match roundTripCPU in Benchmarks/LoopBenchmarks/PinnedThread.swift
{
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- machine: $(uname -sr), $(nproc) vCPU $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(free -g | awk '/^Mem:/ {print $2}') GiB; $(swift --version 2>&1 | grep -o 'Swift version [^ ]*' | head -1); libuv $(pkg-config --modversion libuv), GLib $(pkg-config --modversion glib-2.0), GNUstep base $(dpkg-query -W -f='${Version}' libgnustep-base-dev), SwiftNIO $(grep -A6 '"identity" : "swift-nio"' Package.resolved | sed -n 's/.*"version" : "\(.*\)".*/\1/p')"
    echo "- load before (uptime): $(uptime | sed 's/.*load average: //')"
    echo "- placement: whole run under \`taskset -c $cpu\` (benchmark tool, benchmark processes and every thread they start on CPU $cpu); round trips pin both threads to CPU $cpu"
} > "$out/header.md"
cat "$out/header.md"
taskset -c "$cpu" swift package benchmark --no-progress --format markdown --scale --time-units nanoseconds \
    ${args[@]+"${args[@]}"} > "$out/results.md" 2>&1 || { tail -20 "$out/results.md"; exit 1; }
echo "- load after (uptime): $(uptime | sed 's/.*load average: //')" | tee -a "$out/header.md"
python3 Scripts/ratios.py "$out/results.md" --json "$out/ratios.json" > "$out/tables.md"
cat "$out/tables.md"
if [ "$docs" = 1 ]; then
    { cat "$out/header.md"; echo; sed 's/### /#### /g' "$out/tables.md"; } > "$out/block.md"
    python3 Scripts/replace-docs-block.py run-all.sh "$out/block.md"
fi
# Loop.main has a tool of its own (package-benchmark never runs on the main thread).
if [ "$docs" = 1 ]; then Scripts/run-main-loop.sh --docs; else Scripts/run-main-loop.sh; fi
