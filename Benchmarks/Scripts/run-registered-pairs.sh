#!/usr/bin/env bash
# What holding many registered connections adds to the loop's server's CPU per request (issue 31,
# item 3: ≤ 1.1× the same server holding 1,000), timed in pairs, so the host's slow periods
# cannot decide it.
#
#   Scripts/run-registered-pairs.sh [--docs] [--connections N] [--rounds R] [--chunk-ms MS]
#
# 1. builds runloopkit-echo (Examples/EchoService), nio-echo, uv-echo and echo-many (release);
#    raises `ulimit -n` to the hard limit; N defaults to what it leaves the client, which holds
#    both servers' clients (18,000 of a hard limit of 20,000), and must be at least 2,000;
# 2. for runloopkit-echo (its defaults, idle timers on), then SwiftNIO's and libuv's echo as the
#    machine's reference: starts two fresh instances of the server under `taskset -c 0`;
#    `echo-many pairs` under `taskset -c 1` connects N clients to the first and 1,000 to the
#    second, then runs chunks of MS ms (default 100) that alternate strictly between the two
#    servers, R (default 100) of the second's between R + 1 of the first's, 1,000 active clients
#    of one server per chunk (echo-many's pairs.c); each chunk of the second gives two ratios of
#    the first server's CPU per request over the second's, with the chunk before and after it;
# 3. prints the table, saves the loop's reading for Scripts/check (save-readings.py); with
#    --docs, replaces the generated block of Docs/Services.md.
# About 75 s (25 s a server).
set -euo pipefail
cd "$(dirname "$0")/.."
docs=0 rounds=100 chunk_ms=100 connections=""
arguments="$*"
while [ $# -gt 0 ]; do
    case "$1" in
        --docs) docs=1 ;;
        --connections) connections="$2"; shift ;;
        --rounds) rounds="$2"; shift ;;
        --chunk-ms) chunk_ms="$2"; shift ;;
        *) echo "run-registered-pairs.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
active=1000
out=.build-results/registered-pairs
mkdir -p "$out"
(cd ../Examples/EchoService && swift build -c release --product runloopkit-echo 2>&1 | tail -1)
Scripts/install-peers.sh > /dev/null
for product in nio-echo uv-echo echo-many; do swift build -c release --product "$product" 2>&1 | tail -1; done
ulimit -n "$(ulimit -Hn)"
hard=$(ulimit -Hn)
if [ -z "$connections" ]; then
    connections=$(( (hard - active - 1000) / 1000 * 1000 ))
    [ "$connections" -gt 100000 ] && connections=100000
fi
if [ "$connections" -lt $((2 * active)) ]; then
    echo "run-registered-pairs.sh: $connections connections are too few beside $active (ulimit -Hn = $hard): the client needs about $((3 * active + 1000)) descriptors" >&2
    exit 2
fi
source Scripts/echo-servers.sh
grouped() { python3 -c "print(f'{$1:,}')"; }   # 18000 -> 18,000

load_before=$(uptime | sed 's/.*load average: //')
: > "$out/results.txt"
many_pid="" few_pid=""
# No server outlives the script, however it ends.
trap '[ -n "$many_pid" ] && stop_server "$many_pid"; [ -n "$few_pid" ] && stop_server "$few_pid"' EXIT
for server in loop nio uv; do
    start_server "$server" many
    many_pid=$server_pid many_port=$port
    start_server "$server" few
    few_pid=$server_pid few_port=$port
    line=$(taskset -c 1 "$bench_bin/echo-many" pairs "$many_port" "$many_pid" "$few_port" "$few_pid" \
        "$connections" "$active" "$rounds" "$chunk_ms" --sources 4) \
        || { echo "run-registered-pairs.sh: echo-many pairs failed against $server" >&2; exit 1; }
    stop_server "$many_pid"
    stop_server "$few_pid"
    many_pid="" few_pid=""
    echo "$server $line" >> "$out/results.txt"
done
load_after=$(uptime | sed 's/.*load average: //')

{
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); command: \`Benchmarks/Scripts/run-registered-pairs.sh ${arguments}\`"
    echo "- placement: each pair of servers (two fresh instances of one server, their defaults; runloopkit-echo: its main thread's loop; nio-echo: one event-loop thread; uv-echo: uv_default_loop) under \`taskset -c 0\`, echo-many (one epoll thread, 127.0.0.2-5 as sources) under \`taskset -c 1\`; the pairs one server after another"
    echo "- load before: $load_before; after: $load_after"
} > "$out/header.md"
python3 - "$out/results.txt" "$out/readings.txt" > "$out/tables.md" <<'PY'
import sys
names = {"loop": "runloopkit-echo", "nio": "SwiftNIO echo", "uv": "libuv echo"}
rows = []
for line in open(sys.argv[1]):
    server, *fields = line.split()
    rows.append((server, {k: float(v) for k, v in (f.split("=") for f in fields)}))
first = rows[0][1]
n, active = int(first["connections"]), int(first["active"])
print(f"| server CPU per request, {active:,} active ({int(first['rounds'])} chunks with {active:,} registered between "
      f"{int(first['rounds']) + 1} with {n:,}, {int(first['chunk_ms'])} ms each) "
      f"| {n:,} registered, µs (median) | {active:,} registered, µs (median) | {n:,} first, median | {active:,} first, median "
      f"| paired ratio, worse order's median | 25th–75th percentile (that order) |")
print("|---|---:|---:|---:|---:|---:|---:|")
for server, values in rows:
    target = " (target ≤ 1.1×)" if server == "loop" else ""
    print(f"| {names[server]}: {n:,} registered ÷ {active:,}{target} | {values['cpu_us_per_request_many']:.2f} "
          f"| {values['cpu_us_per_request_few']:.2f} | {values['many_first']:.2f}× | {values['few_first']:.2f}× "
          f"| {values['worse']:.2f}× | {values['q25']:.2f}×–{values['q75']:.2f}× |")
    if server == "loop":
        with open(sys.argv[2], "w") as readings:
            print(f"cpu_per_request_registered_vs_few={values['worse']:.4f}", file=readings)
PY
cat "$out/tables.md"
# shellcheck disable=SC2046 # one NAME=VALUE a line, no spaces
Scripts/save-readings.py registered-pairs "$(printf "%s connections against %s, %s active, %s chunks against %s, %s ms each" \
    "$(grouped "$connections")" "$(grouped "$active")" "$(grouped "$active")" "$rounds" "$(( rounds + 1 ))" "$chunk_ms")" $(cat "$out/readings.txt")
if [ "$docs" = 1 ]; then
    Scripts/replace-services-block.py run-registered-pairs.sh "$out/header.md" "$out/tables.md"
fi
