#!/usr/bin/env bash
# Connection churn (issue 31, item 4): TOTAL short connections — connect, one 64-byte request,
# its echo, close — as fast as one client thread with CONCURRENCY connections in flight drives
# them, against runloopkit-echo (its defaults), SwiftNIO's echo (one event-loop thread) and
# libuv's echo.
#
#   Scripts/run-churn.sh [--docs] [--total N] [--concurrency C]
#
# 1. builds (release) runloopkit-echo (Examples/EchoService), nio-echo, uv-echo and echo-many;
# 2. for each server, in one order and then the reverse (the worse of the two is reported): a
#    fresh server under `taskset -c 0`, echo-many churn under `taskset -c 1` (sources
#    127.0.0.2-17, so TIME_WAIT's ports do not run out): connections per second, p50 and p99
#    from the connect call to the last byte of the reply, the server's CPU; afterwards its
#    descriptors (back to where they were within 10 s) and resident set;
# 3. prints the table and saves what the targets judge for Scripts/check (save-readings.py); with
#    --docs, replaces the generated block of Docs/Services.md.
# TOTAL defaults to 1,000,000 and CONCURRENCY to 128; at ~20,000 connections/s a run is ~50 s.
set -euo pipefail
cd "$(dirname "$0")/.."
docs=0 total=1000000 concurrency=128
while [ $# -gt 0 ]; do
    case "$1" in
        --docs) docs=1 ;;
        --total) total="$2"; shift ;;
        --concurrency) concurrency="$2"; shift ;;
        *) echo "run-churn.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
out=.build-results/churn
mkdir -p "$out"
Scripts/install-peers.sh > /dev/null
(cd ../Examples/EchoService && swift build -c release --product runloopkit-echo 2>&1 | tail -1)
for product in nio-echo uv-echo echo-many; do swift build -c release --product "$product" 2>&1 | tail -1; done
ulimit -n "$(ulimit -Hn)"

source Scripts/echo-servers.sh

results="$out/results.txt"
: > "$results"
{
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); load before (uptime): $(uptime | sed 's/.*load average: //')"
    echo "- placement: each server under \`taskset -c 0\` (runloopkit-echo with its defaults, nio-echo on one event-loop thread, uv-echo), echo-many churn (one epoll thread, ${concurrency} connections in flight, sources 127.0.0.2-17) under \`taskset -c 1\`; ${total} connections per run"
} > "$out/header.md"
cat "$out/header.md"
for server in loop nio uv uv nio loop; do
    start_server "$server"
    line=$(taskset -c 1 "$bench_bin/echo-many" churn "$port" "$total" "$concurrency" --sources 16 --server-pid "$server_pid") \
        || { stop_server; echo "run-churn.sh: echo-many failed against $server: $line" >&2; exit 1; }
    stop_server
    echo "$server $line" | tee -a "$results"
done
echo "- load after (uptime): $(uptime | sed 's/.*load average: //')" >> "$out/header.md"

python3 - "$results" "$out/readings.txt" > "$out/table.md" <<'PY'
import sys
readings = open(sys.argv[2], "w")   # what the targets judge, for Scripts/check (save-readings.py)
runs = {}
for line in open(sys.argv[1]):
    server, *fields = line.split()
    runs.setdefault(server, []).append({k: float(v) for k, v in (f.split("=") for f in fields)})
names = {"loop": "runloopkit-echo", "nio": "SwiftNIO echo", "uv": "libuv echo"}
total = int(runs["loop"][0]["connections"])
print(f"#### {total:,} short connections (connect, one request, close; the worse of two orders)\n")
print("| server | connections/s | p50 µs | p99 µs | server CPU per connection | fds before → after | RSS before → after |")
print("|---|---|---|---|---|---|---|")
for s in ("loop", "nio", "uv"):
    r = min(runs[s], key=lambda r: r["connections_per_second"])   # the worse run
    print(f"| {names[s]} | {r['connections_per_second']:,.0f} | {r['p50_us']:,.0f} | {max(x['p99_us'] for x in runs[s]):,.0f} "
          f"| {r['server_cpu_ms'] * 1000 / r['connections']:.1f} µs | {int(r['server_fds_before'])} → {int(r['server_fds_after'])} "
          f"| {r['server_rss_kib_before'] / 1024:.1f} → {r['server_rss_kib_after'] / 1024:.1f} MiB |")
loop, nio = (min(r["connections_per_second"] for r in runs[s]) for s in ("loop", "nio"))
each = "; ".join(names[s] + " " + " / ".join(format(r["connections_per_second"], ",.0f") for r in runs[s]) for s in runs)
print(f"\nruns (connections/s): {each}; the loop's worse run ÷ NIO's worse: {loop / nio:.2f}×")
# The loop's server after every run: descriptors it still holds beyond its start, and its growth.
print(f"loop_fds_left_open={max(r['server_fds_after'] - r['server_fds_before'] for r in runs['loop']):.0f}", file=readings)
print(f"loop_rss_growth_mib={max(r['server_rss_kib_after'] - r['server_rss_kib_before'] for r in runs['loop']) / 1024:.3f}", file=readings)
PY
cat "$out/table.md"
# shellcheck disable=SC2046 # one NAME=VALUE a line, no spaces
Scripts/save-readings.py churn "$(python3 -c "print(f'{$total:,} connections a run, {$concurrency} in flight')")" $(cat "$out/readings.txt")
if [ "$docs" = 1 ]; then
    Scripts/replace-services-block.py run-churn.sh "$out/header.md" "$out/table.md"
fi
