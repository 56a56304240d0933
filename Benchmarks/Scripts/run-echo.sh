#!/usr/bin/env bash
# The echo service beside SwiftNIO and libuv (the port soak is Scripts/run-port-soak.sh).
#
#   Scripts/run-echo.sh [--docs] [--rounds N] [--seconds S] [--connections "200 1000"]
#
# 1. builds (release) runloopkit-echo (the example package Examples/EchoService), nio-echo,
#    uv-echo and echo-load (this package); installs libuv1-dev if missing (install-peers.sh);
# 2. for each connection count, N interleaved rounds (default 5; the servers' order rotates each
#    round): start one server under `taskset -c 0`, run echo-load under `taskset -c 1` (warm-up
#    1 s, then S seconds, default 3, 64-byte messages, closed loop), stop the server;
# 3. prints per-round figures and the median ratios against NIO and libuv (throughput: higher
#    is better for the loop; p99: lower is better);
# 4. with --docs, replaces the generated block of Docs/Services.md with the tables.
set -euo pipefail
cd "$(dirname "$0")/.."
docs=0 rounds=5 seconds=3 counts="200 1000"
while [ $# -gt 0 ]; do
    case "$1" in
        --docs) docs=1 ;;
        --rounds) rounds="$2"; shift ;;
        --seconds) seconds="$2"; shift ;;
        --connections) counts="$2"; shift ;;
        *) echo "run-echo.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
out=.build-results/echo
mkdir -p "$out"
Scripts/install-peers.sh
(cd ../Examples/EchoService && swift build -c release --product runloopkit-echo 2>&1 | tail -1)
for product in nio-echo uv-echo echo-load; do swift build -c release --product "$product" 2>&1 | tail -1; done
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
source Scripts/echo-servers.sh
servers=(loop nio uv)

results="$out/rounds.txt"
: > "$results"
{
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- machine: $(uname -sr), $(nproc) vCPU $(lscpu | sed -n 's/^Model name: *//p' | head -1); libuv $(pkg-config --modversion libuv); SwiftNIO $(grep -A6 '"identity" : "swift-nio"' Package.resolved | sed -n 's/.*"version" : "\(.*\)".*/\1/p')"
    echo "- load before (uptime): $(uptime | sed 's/.*load average: //')"
    echo "- placement: each server under \`taskset -c 0\` (runloopkit-echo: its main thread's loop; nio-echo: one event-loop thread; uv-echo: uv_default_loop on its main thread); echo-load (one epoll thread, closed loop, 64-byte messages, every echo compared) under \`taskset -c 1\`; ${rounds} interleaved rounds of 1 s warm-up + ${seconds} s per server and connection count"
} > "$out/header.md"
cat "$out/header.md"
for connections in $counts; do
    for round in $(seq 1 "$rounds"); do
        shift_by=$(( (round - 1) % ${#servers[@]} ))
        order=("${servers[@]:$shift_by}" "${servers[@]:0:$shift_by}")
        for server in "${order[@]}"; do
            start_server "$server"
            line=$(taskset -c 1 "$bench_bin/echo-load" "$port" "$connections" "$seconds" 64 1) || { stop_server; echo "run-echo.sh: echo-load failed against $server" >&2; exit 1; }
            stop_server
            echo "$connections $round $server $line" | tee -a "$results"
        done
    done
done
echo "- load after (uptime): $(uptime | sed 's/.*load average: //')" | tee -a "$out/header.md"

python3 - "$results" > "$out/tables.md" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    connections, round_, server, *fields = line.split()
    values = dict(f.split("=") for f in fields)
    rows.setdefault(int(connections), {}).setdefault(int(round_), {})[server] = (float(values["requests_per_second"]), float(values["p99_us"]), float(values["p50_us"]))
print("#### Echo: runloopkit-echo vs SwiftNIO and libuv (median of the per-round ratios)\n")
print("| connections | loop req/s | NIO req/s | libuv req/s | throughput loop/NIO | loop/libuv | p99 loop µs | p99 NIO µs | p99 libuv µs | p99 loop/NIO | loop/libuv |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for connections, rounds in sorted(rows.items()):
    med = lambda server, i: statistics.median(r[server][i] for r in rounds.values())
    ratio = lambda i, peer: statistics.median(r["loop"][i] / r[peer][i] for r in rounds.values())
    span = lambda i, peer: (min(r["loop"][i] / r[peer][i] for r in rounds.values()), max(r["loop"][i] / r[peer][i] for r in rounds.values()))
    t_nio, t_uv, p_nio, p_uv = ratio(0, "nio"), ratio(0, "uv"), ratio(1, "nio"), ratio(1, "uv")
    print(f"| {connections} | {med('loop',0):,.0f} | {med('nio',0):,.0f} | {med('uv',0):,.0f} | **{t_nio:.2f}×** ({span(0,'nio')[0]:.2f}–{span(0,'nio')[1]:.2f}) | {t_uv:.2f}× | {med('loop',1):.0f} | {med('nio',1):.0f} | {med('uv',1):.0f} | **{p_nio:.2f}×** ({span(1,'nio')[0]:.2f}–{span(1,'nio')[1]:.2f}) | {p_uv:.2f}× |")
print(f"\n{len(next(iter(rows.values())))} rounds per connection count; targets (issue 13): throughput ≥ 1.1× NIO, p99 ≤ 0.9× NIO.\n")
PY
cat "$out/tables.md"
if [ "$docs" = 1 ]; then
    Scripts/replace-services-block.py run-echo.sh "$out/header.md" "$out/tables.md"
fi
