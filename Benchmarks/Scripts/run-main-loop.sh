#!/usr/bin/env bash
# The polling pass on Loop.main beside libuv's, which package-benchmark cannot measure (its
# benchmarks never run on the main thread).
#
#   Scripts/run-main-loop.sh [--docs] [rounds] [reps] [passes]
#
# 1. builds main-loop-pass (release); installs libuv1-dev if missing (install-peers.sh);
# 2. counts the system calls of 1,000 and of 11,000 passes on Loop.main with `strace -f -c`
#    and prints the difference per pass, by call;
# 3. runs main-loop-pass under `taskset -c 0` (default 3 rounds × 7 reps × 100,000 passes);
# 4. with --docs, replaces the generated block of Docs/Benchmarks.md's Loop.main table.
set -euo pipefail
cd "$(dirname "$0")/.."
docs=0
if [ "${1:-}" = "--docs" ]; then docs=1; shift; fi
Scripts/install-peers.sh
command -v strace >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace; }
swift build -c release --product main-loop-pass 2>&1 | tail -1
tool="$(swift build -c release --show-bin-path)/main-loop-pass"
out=.build-results/main-loop
mkdir -p "$out"

# System calls per pass: the difference of two runs, so start-up calls cancel out.
strace -f -c -o "$out/strace-1000.txt" "$tool" --passes-only 1000
strace -f -c -o "$out/strace-11000.txt" "$tool" --passes-only 11000
syscalls=$(python3 - "$out/strace-1000.txt" "$out/strace-11000.txt" <<'PY'
import sys
def calls(path):
    table = {}
    for line in open(path):
        parts = line.split()
        if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] not in ("total",):
            table[parts[-1]] = int(parts[3])
    return table
small, large = calls(sys.argv[1]), calls(sys.argv[2])
per_pass = {name: (large.get(name, 0) - small.get(name, 0)) / 10000 for name in large}
per_pass = {name: count for name, count in per_pass.items() if count >= 0.001}
total = sum(per_pass.values())
detail = ", ".join(f"`{name}` {count:g}" for name, count in sorted(per_pass.items())) or "none"
print(f"{total:g} per pass ({detail})")
PY
)
echo "Loop.main system calls: $syscalls"

load_before=$(uptime | sed 's/.*load average: //')
table=$(taskset -c 0 "$tool" "$@")
load_after=$(uptime | sed 's/.*load average: //')
echo "$table"

if [ "$docs" = 1 ]; then
    cat > "$out/block.md" <<MD
- date: $(date -u '+%Y-%m-%d %H:%M UTC'); command: \`Benchmarks/Scripts/run-main-loop.sh --docs${*:+ $*}\`
- placement: the whole process under \`taskset -c 0\` (the own-thread loop's pthread too)
- load before: $load_before; after: $load_after
- system calls per \`Loop.main\` pass (\`strace -f -c\`, 11,000 passes minus 1,000): $syscalls

$table
MD
    python3 Scripts/replace-docs-block.py run-main-loop.sh "$out/block.md"
fi
