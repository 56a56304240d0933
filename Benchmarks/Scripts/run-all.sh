#!/usr/bin/env bash
# Runs the benchmarks beside their peers, pinned, and prints the ratio tables.
#
#   Scripts/run-all.sh [--docs] [--rounds N] [--services] [package-benchmark options, e.g. --target X --filter REGEX]
#
# 1. installs the Debian packages of the C peers if missing (install-peers.sh);
# 2. builds the package in release mode, unpinned;
# 3. runs `swift package benchmark` N times (--rounds, default 2) under `taskset -c 0`, the odd
#    rounds with ours before the peers of each work and the even ones after them
#    (RUNLOOPKIT_BENCH_ORDER, Support/BenchOrder); each benchmark's time in an order is the
#    median of that order's rounds (the host slows a vCPU for seconds at a time, so one round
#    can fall in a slow period), and each ratio is the worse order's; the benchmark tool, every benchmark
#    process and every thread they start (loop threads, libuv/GLib/NIO threads) share CPU 0;
#    the round trips also pin their threads to CPU 0 themselves and fail if they are elsewhere;
# 4. writes .build-results/results.md (raw), tables.md and ratios.json (for Scripts/check);
# 5. with --docs, replaces the generated block of Docs/Benchmarks.md with the tables, the
#    machine, the load (uptime) before and after, the placement and the date;
# 6. runs Scripts/run-main-loop.sh, Scripts/run-loop-scaling.sh, Scripts/run-round-trip-pairs.sh,
#    Scripts/run-executor-pairs.sh, Scripts/run-pass-pairs.sh, Scripts/run-due-timer-pairs.sh,
#    Scripts/run-pool-pairs.sh
#    and Scripts/run-allocation-overhead.sh (with --docs, they
#    update their own blocks; their tables also go to .build-results/paired/, for the
#    thresholds of Scripts/check that name them);
# 7. with --services, runs the service targets' tools too (issue 31 items 3 and 4, 15 to 40
#    minutes here with the load): Scripts/many-sources-callgrind.sh, Scripts/run-many-connections.sh,
#    Scripts/run-registered-pairs.sh and Scripts/run-churn.sh; without it, their latest saved readings (save-readings.py) stand;
# 8. runs Scripts/check on the whole run and, with --docs, writes the table of every target that
#    opens Docs/Benchmarks.md (`Scripts/check --targets-md`), with the run's date, machine,
#    command, placement and load (the service targets' rows carry their own run's date and load).
# RUNLOOPKIT_BENCH_SECONDS shortens each benchmark's sampling (default 2 s loop, 1 s others).
set -euo pipefail
cd "$(dirname "$0")/.."
docs=0
rounds=2
services=0
args=()
command="Benchmarks/Scripts/run-all.sh $*"
while [ $# -gt 0 ]; do
    case "$1" in
        --docs) docs=1 ;;
        --rounds) rounds="$2"; shift ;;
        --services) services=1 ;;
        *) args+=("$1") ;;
    esac
    shift
done
out=.build-results
mkdir -p "$out"
# The paired tools of this run save their tables here; Scripts/check judges the thresholds
# that name one by them. Emptied first, so that check never mixes runs.
rm -rf "$out/paired" && mkdir -p "$out/paired"
export RUNLOOPKIT_PAIRED_OUT="$PWD/$out/paired"
Scripts/install-peers.sh
swift build -c release 2>&1 | tail -1
cpu=0   # must match roundTripCPU in Benchmarks/LoopBenchmarks/PinnedThread.swift
{
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- machine: $(uname -sr), $(nproc) vCPU $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(free -g | awk '/^Mem:/ {print $2}') GiB; $(swift --version 2>&1 | grep -o 'Swift version [^ ]*' | head -1); libuv $(pkg-config --modversion libuv), GLib $(pkg-config --modversion glib-2.0), GNUstep base $(dpkg-query -W -f='${Version}' libgnustep-base-dev), SwiftNIO $(grep -A6 '"identity" : "swift-nio"' Package.resolved | sed -n 's/.*"version" : "\(.*\)".*/\1/p')"
    echo "- load before (uptime): $(uptime | sed 's/.*load average: //')"
    echo "- placement: whole run under \`taskset -c $cpu\` (benchmark tool, benchmark processes and every thread they start on CPU $cpu); round trips pin both threads to CPU $cpu"
    echo "- rounds: $rounds, alternately ours first and peers first in each work (each benchmark's time in an order is the median of that order's rounds' p50s; each ratio is the worse order's; \`Scripts/ratios.py\`)"
} > "$out/header.md"
cat "$out/header.md"
: > "$out/results.md"
for round in $(seq 1 "$rounds"); do
    if [ $((round % 2)) = 1 ]; then order=ours-first; else order=peers-first; fi
    echo "<!-- order: $order -->" >> "$out/results.md"
    RUNLOOPKIT_BENCH_ORDER=$order taskset -c "$cpu" swift package benchmark --no-progress --format markdown --scale --time-units nanoseconds \
        ${args[@]+"${args[@]}"} > "$out/round.md" 2>&1 || { tail -20 "$out/round.md"; exit 1; }
    cat "$out/round.md" >> "$out/results.md"
done
echo "- load after (uptime): $(uptime | sed 's/.*load average: //')" | tee -a "$out/header.md"
python3 Scripts/ratios.py "$out/results.md" --json "$out/ratios.json" > "$out/tables.md"
cat "$out/tables.md"
if [ "$docs" = 1 ]; then
    { cat "$out/header.md"; echo; sed 's/^### /#### /' "$out/tables.md"; } | python3 Scripts/replace-docs-block.py run-all.sh
fi
# Loop.main has a tool of its own (package-benchmark never runs on the main thread), and so have
# the drift-proof, paired measurements of loops on two CPUs and of the round trip.
if [ "$docs" = 1 ]; then Scripts/run-main-loop.sh --docs; else Scripts/run-main-loop.sh; fi
if [ "$docs" = 1 ]; then Scripts/run-loop-scaling.sh --docs; else Scripts/run-loop-scaling.sh; fi
if [ "$docs" = 1 ]; then Scripts/run-round-trip-pairs.sh --docs; else Scripts/run-round-trip-pairs.sh; fi
if [ "$docs" = 1 ]; then Scripts/run-executor-pairs.sh --docs; else Scripts/run-executor-pairs.sh; fi
# The polling pass against CFRunLoop and beside idle items, paired (their package-benchmark rows
# time each side seconds apart, in the host's fast and slow periods alike).
if [ "$docs" = 1 ]; then Scripts/run-pass-pairs.sh --docs; else Scripts/run-pass-pairs.sh; fi
# The targets of issue 31, each against its peer in both orders.
if [ "$docs" = 1 ]; then Scripts/run-due-timer-pairs.sh --docs; else Scripts/run-due-timer-pairs.sh; fi
if [ "$docs" = 1 ]; then Scripts/run-pool-pairs.sh --docs; else Scripts/run-pool-pairs.sh; fi
# What the allocation counter's modes cost, each against "off" in the same rounds (issue 16).
if [ "$docs" = 1 ]; then Scripts/run-allocation-overhead.sh --docs; else Scripts/run-allocation-overhead.sh; fi
# The service targets: many connections, the pass cost of many registered, churn (issue 31).
if [ "$services" = 1 ]; then
    for tool in many-sources-callgrind.sh run-many-connections.sh run-registered-pairs.sh run-churn.sh; do
        if [ "$docs" = 1 ]; then "Scripts/$tool" --docs; else "Scripts/$tool"; fi
    done
fi
# The gate on the whole run, and the table of targets that opens Docs/Benchmarks.md.
load_end=$(uptime | sed 's/.*load average: //')
Scripts/check --targets-md "$out/targets.md" > "$out/check.txt" || true
tail -n 4 "$out/check.txt"
if [ "$docs" = 1 ]; then
    {
        grep '^- date: ' "$out/header.md"
        grep '^- machine: ' "$out/header.md"
        echo "- command: \`$command\` (each paired tool's own command is in its block below)"
        echo "- load (uptime, 1 / 5 / 15 min): $(sed -n 's/^- load before (uptime): /before /p' "$out/header.md"); $(sed -n 's/^- load after (uptime): /after package-benchmark /p' "$out/header.md"); after the paired tools $load_end"
        echo "- placement: every process under \`taskset -c 0\`; each tool's threads pinned to CPU 0 (the loop-scaling neighbour to CPU 1)"
        echo "- orders: every package-benchmark row in $rounds rounds (alternately ours first and peers first), every paired tool alternating both orders; each reading is the worse order's"
        echo
        cat "$out/targets.md"
    } | python3 Scripts/replace-docs-block.py targets
fi
