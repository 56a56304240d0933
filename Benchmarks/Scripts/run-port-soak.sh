#!/usr/bin/env bash
# The port soak (root package's port-soak): producers on other threads sending to one
# LoopPortSource, first with the library's defaults (capacity 1,024, one message per pass), then
# with other queue limits beside it, and once unbounded (the old default) to show what the bound
# prevents.
#
#   Scripts/run-port-soak.sh [--docs] [--seconds S]
#
# 1. builds port-soak (release, root package);
# 2. runs it for S seconds (default 3) per row, under `taskset -c 0,1` (consumer and producers
#    share the two CPUs): defaults with 1 and 4 producers; 4 producers with capacity 256 and
#    4,096; 4 producers unbounded;
# 3. prints the table; with --docs, replaces the generated block of Docs/Services.md.
# About 40 s (the unbounded row drains for up to 30 s).
set -euo pipefail
cd "$(dirname "$0")/.."
docs=0 seconds=3
while [ $# -gt 0 ]; do
    case "$1" in
        --docs) docs=1 ;;
        --seconds) seconds="$2"; shift ;;
        *) echo "run-port-soak.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
out=.build-results/port-soak
mkdir -p "$out"
(cd .. && swift build -c release --product port-soak 2>&1 | tail -1)
root_bin=$(cd .. && swift build -c release --show-bin-path)
{
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); load before (uptime): $(uptime | sed 's/.*load average: //')"
    echo "- placement: port-soak under \`taskset -c 0,1\` (the consumer's LoopThread and the producers share both CPUs); ${seconds} s of producers per row"
} > "$out/header.md"
soak="$out/soak.txt"
: > "$soak"
run() { taskset -c 0,1 "$root_bin/port-soak" --seconds "$seconds" "$@" | tail -1 | tee -a "$soak"; }
run --producers 1
run --producers 4
run --producers 4 --capacity 256
run --producers 4 --capacity 4096
run --producers 4 --capacity unbounded
echo "- load after (uptime): $(uptime | sed 's/.*load average: //')" >> "$out/header.md"

python3 - "$soak" > "$out/table.md" <<'PY'
import re, sys
print("| producers | queue limit | messages/s handled (drain included) | sent = handled | sends that waited for room | RSS start → max → end | drained in |")
print("|---|---|---|---|---|---|---|")
pattern = re.compile(r"(\d+) producers, capacity (\w+), (\d+) per pass, [\d.]+ s: sent (\d+), handled (\d+) \(([^)]*)\), (\d+) messages/s, "
                     r"(\d+) sends waited for room; RSS start ([\d.]+) MiB, max ([\d.]+) MiB, end ([\d.]+) MiB; drained in ([\d.]+) s")
for line in open(sys.argv[1]):
    m = pattern.search(line)
    if not m:
        continue
    limit = m[2] if m[2] == "unbounded" else f"{int(m[2]):,}" + (" (default)" if m[2] == "1024" else "")
    print(f"| {m[1]} | {limit} | {int(m[7]):,} | {'yes' if m[4] == m[5] else 'NO'} ({m[6]}) | {int(m[8]):,} | "
          f"{m[9]} → {m[10]} → {m[11]} MiB | {m[12]} s |")
PY
cat "$out/header.md" "$out/table.md"
if [ "$docs" = 1 ]; then
    Scripts/replace-services-block.py run-port-soak.sh "$out/header.md" "$out/table.md"
fi
