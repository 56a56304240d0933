#!/usr/bin/env bash
# Many connections on one loop (issue 31, item 3): runloopkit-echo (its defaults, idle timers on),
# SwiftNIO's echo on one event-loop thread and libuv's echo, each holding CONNECTIONS connected
# clients of which 1 % are active.
#
#   Scripts/run-many-connections.sh [--docs] [--connections N] [--seconds S]
#
# 1. builds (release) runloopkit-echo (Examples/EchoService), nio-echo, uv-echo and echo-many;
# 2. raises `ulimit -n` to the hard limit; CONNECTIONS defaults to 100,000, or to what the hard
#    limit leaves (each server holds one descriptor per connection, and so does the client);
# 3. for each server, in one order and then the reverse (the worse of the two is reported):
#    a. a fresh server under `taskset -c 0`; echo-many under `taskset -c 1` connects CONNECTIONS
#       clients from 127.0.0.2-5 (256 connecting at a time, each proven served by a probe's
#       echo: the time to accept them all), then 1 % of them run closed-loop 64-byte requests for
#       1 s of warm-up and S seconds (default 5): throughput, p99, the server's CPU per request;
#       the server's resident set before and after connecting, the kernel's slab and TCP buffer
#       pages (both ends of every connection);
#    b. a fresh server: CONNECTIONS connected, 1,000 active — and c. a fresh server: 1,000
#       connected, all active. The server's CPU per request in b over c is the cost of
#       holding CONNECTIONS registered, shown for context: runs seconds apart, which the host's
#       slow periods move (Scripts/run-registered-pairs.sh times it in pairs and judges it);
# 4. prints the tables and saves the targets' ratios for Scripts/check (save-readings.py); with
#    --docs, replaces the generated block of Docs/Services.md.
# About 3 minutes at 19,000 connections on the quiet 2-core machine, 10 under a load of 2-4.
set -euo pipefail
cd "$(dirname "$0")/.."
docs=0 seconds=5 connections=""
while [ $# -gt 0 ]; do
    case "$1" in
        --docs) docs=1 ;;
        --connections) connections="$2"; shift ;;
        --seconds) seconds="$2"; shift ;;
        *) echo "run-many-connections.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
out=.build-results/many-connections
mkdir -p "$out"
Scripts/install-peers.sh > /dev/null
(cd ../Examples/EchoService && swift build -c release --product runloopkit-echo 2>&1 | tail -1)
for product in nio-echo uv-echo echo-many; do swift build -c release --product "$product" 2>&1 | tail -1; done

ulimit -n "$(ulimit -Hn)"
hard=$(ulimit -Hn)
limit_note=""
if [ -z "$connections" ]; then
    connections=100000
    if [ "$hard" -lt $((connections + 100)) ]; then
        connections=$(( (hard - 100) / 1000 * 1000 ))
        limit_note="; 100,000 connections need more descriptors than this machine's hard limit (ulimit -Hn = $hard, no CAP_SYS_RESOURCE to raise it): $connections instead"
    fi
fi
active=$(( connections / 100 ))

source Scripts/echo-servers.sh
grouped() { python3 -c "print(f'{$1:,}')"; }   # 19000 -> 19,000
servers=(loop nio uv)

# run SERVER CONFIG CONNECTIONS ACTIVE: one fresh server, one echo-many run, one result line.
run() {
    start_server "$1"
    local line
    line=$(taskset -c 1 "$bench_bin/echo-many" idle "$port" "$3" "$4" "$seconds" --sources 4 --server-pid "$server_pid") \
        || { stop_server; echo "run-many-connections.sh: echo-many failed against $1 ($2)" >&2; exit 1; }
    stop_server
    echo "$1 $2 $line" | tee -a "$results"
}

results="$out/results.txt"
: > "$results"
{
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); load before (uptime): $(uptime | sed 's/.*load average: //')"
    echo "- machine: $(uname -sr), $(nproc) vCPU; libuv $(pkg-config --modversion libuv); SwiftNIO $(grep -A6 '"identity" : "swift-nio"' Package.resolved | sed -n 's/.*"version" : "\(.*\)".*/\1/p')"
    echo "- placement: each server under \`taskset -c 0\` (runloopkit-echo: its main thread's loop, its defaults; nio-echo: one event-loop thread; uv-echo: uv_default_loop), echo-many (one epoll thread, 127.0.0.2-5 as sources) under \`taskset -c 1\`; ${connections} connections${limit_note}"
} > "$out/header.md"
cat "$out/header.md"
for order in forward reverse; do
    list=("${servers[@]}")
    [ "$order" = reverse ] && list=(uv nio loop)
    for server in "${list[@]}"; do
        run "$server" idle "$connections" "$active"
        run "$server" registered "$connections" 1000
        run "$server" few 1000 1000
    done
done
echo "- load after (uptime): $(uptime | sed 's/.*load average: //')" >> "$out/header.md"

python3 - "$results" "$out/readings.txt" > "$out/tables.md" <<'PY'
import sys
readings = open(sys.argv[2], "w")   # the targets' ratios, for Scripts/check (save-readings.py)
runs = {}
for line in open(sys.argv[1]):
    server, config, *fields = line.split()
    values = {k: float(v) for k, v in (f.split("=") for f in fields)}
    runs.setdefault((server, config), []).append(values)

def worst(server, config, key, higher_is_better):
    values = [r[key] for r in runs[(server, config)]]
    return min(values) if higher_is_better else max(values)

def per_connection(r, before, after):
    return (r[after] - r[before]) * 1024 / r["connections"]

def worst_memory(server, before, after, scale=1024):
    return max((r[after] - r[before]) * scale / r["connections"] for r in runs[(server, "idle")])

names = {"loop": "runloopkit-echo", "nio": "SwiftNIO echo", "uv": "libuv echo"}
connections = int(runs[("loop", "idle")][0]["connections"])
active = int(runs[("loop", "idle")][0]["active"])
print(f"#### {connections:,} connections, {active:,} active (the worse of two orders)\n")
print("| server | accept all | server RSS per connection | kernel slab per connection (both ends) | active req/s | p99 µs | server CPU per request (in user space) |")
print("|---|---|---|---|---|---|---|")
for s in ("loop", "nio", "uv"):
    print(f"| {names[s]} | {worst(s, 'idle', 'accept_all_seconds', False):.2f} s | {worst_memory(s, 'server_rss_kib_before', 'server_rss_kib_connected'):,.0f} B "
          f"| {worst_memory(s, 'slab_kib_before', 'slab_kib_connected'):,.0f} B | {worst(s, 'idle', 'requests_per_second', True):,.0f} "
          f"| {worst(s, 'idle', 'p99_us', False):,.0f} | {worst(s, 'idle', 'server_cpu_us_per_request', False):.2f} µs "
          f"({worst(s, 'idle', 'server_user_us_per_request', False):.2f} µs) |")
loop_memory = worst_memory("loop", "server_rss_kib_before", "server_rss_kib_connected")
print("\n| target (issue 31) | measured | holds |")
print("|---|---|---|")
for peer, bound in (("uv", 1.0), ("nio", 0.5)):
    ratio = loop_memory / worst_memory(peer, "server_rss_kib_before", "server_rss_kib_connected")
    print(f"| memory per connection ≤ {bound:g}× {names[peer]} | {ratio:.2f}× | {'yes' if ratio <= bound else 'no'} |")
    print(f"memory_per_connection_vs_{peer}={ratio:.4f}", file=readings)
# Each order (the servers one after another, then in reverse) gives the loop and NIO a run close
# together in time; the worse order's ratio is the reading. Beside it, the loop's worse run over
# NIO's better, which pairs runs of different moments.
per_order = [loop["requests_per_second"] / nio["requests_per_second"]
             for loop, nio in zip(runs[("loop", "idle")], runs[("nio", "idle")])]
throughput = min(per_order)
crossed = worst("loop", "idle", "requests_per_second", True) / max(r["requests_per_second"] for r in runs[("nio", "idle")])
print(f"| active throughput ≥ 1.2× SwiftNIO | {throughput:.3f}× (the worse order; each order {', '.join(f'{r:.3f}×' for r in per_order)}; "
      f"the loop's worse run over NIO's better {crossed:.3f}×) | {'yes' if throughput >= 1.2 else 'no'} |")
print(f"throughput_vs_nio={throughput:.4f}", file=readings)
# What each server can serve with one CPU: NIO's CPU per request over the loop's, per order. The
# throughput above is also bounded by the client, alone on the other CPU with as much kernel work
# per request as a server.
capacity = [nio["server_cpu_us_per_request"] / loop["server_cpu_us_per_request"]
            for loop, nio in zip(runs[("loop", "idle")], runs[("nio", "idle")])]
print(f"| (context) server CPU per request, SwiftNIO ÷ runloopkit-echo | {min(capacity):.2f}× (the worse order; each order "
      f"{', '.join(f'{c:.2f}×' for c in capacity)}) | — |")
for s in ("loop", "nio", "uv"):
    registered = worst(s, "registered", "server_cpu_us_per_request", False)
    few = min(r["server_cpu_us_per_request"] for r in runs[(s, "few")])
    # Separate runs seconds apart: the target is judged in pairs (run-registered-pairs.sh).
    print(f"| (context, runs seconds apart) {names[s]}: CPU per request, {connections:,} registered ÷ 1,000 registered "
          f"(1,000 active) | {registered:.2f} ÷ {few:.2f} µs = {registered / few:.2f}× | — |")
PY
cat "$out/tables.md"
# shellcheck disable=SC2046 # one NAME=VALUE a line, no spaces
Scripts/save-readings.py many-connections "$(printf "%s connections, %s active, %s s" "$(grouped "$connections")" "$(grouped "$active")" "$seconds")" $(cat "$out/readings.txt")
if [ "$docs" = 1 ]; then
    Scripts/replace-services-block.py run-many-connections.sh "$out/header.md" "$out/tables.md"
fi
