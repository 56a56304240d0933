#!/usr/bin/env bash
# The hostile-client suite (Examples/EchoService's echo-hostile, plain C written apart from both
# servers) against runloopkit-echo and, as the reference, SwiftNIO's echo (nio-echo), each with
# its defaults. Not a benchmark: each case says whether the bytes came back, how the
# connection ended and what the server kept afterwards.
#
#   Scripts/run-hostile.sh [--docs]
#
# 1. builds (release) echo-hostile and runloopkit-echo (Examples/EchoService) and nio-echo;
# 2. runs the suite against each server, the loop's first, then NIO's, then the loop's again
#    (a case the loop passes must pass in both of its runs);
# 3. prints one table, the two servers side by side; with --docs, replaces the generated block
#    of Docs/Services.md with it.
# About 45 s (each run about 15-22 s: the never-reader cases wait for the loop's 5 s grace).
set -euo pipefail
cd "$(dirname "$0")/.."
docs=0
while [ $# -gt 0 ]; do
    case "$1" in
        --docs) docs=1 ;;
        *) echo "run-hostile.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
out=.build-results/hostile
mkdir -p "$out"
(cd ../Examples/EchoService && swift build -c release --product echo-hostile 2>&1 | tail -1 \
    && swift build -c release --product runloopkit-echo 2>&1 | tail -1)
swift build -c release --product nio-echo 2>&1 | tail -1
example_bin=$(cd ../Examples/EchoService && swift build -c release --show-bin-path)
bench_bin=$(swift build -c release --show-bin-path)

{
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); load before (uptime): $(uptime | sed 's/.*load average: //')"
    echo "- machine: $(uname -sr), $(nproc) vCPU; SwiftNIO $(grep -A6 '"identity" : "swift-nio"' Package.resolved | sed -n 's/.*"version" : "\(.*\)".*/\1/p'); both servers with their defaults, on loopback"
} > "$out/header.md"
"$example_bin/echo-hostile" --report-only -- "$example_bin/runloopkit-echo" | tee "$out/loop-1.txt"
"$example_bin/echo-hostile" --report-only -- "$bench_bin/nio-echo" | tee "$out/nio.txt"
"$example_bin/echo-hostile" --report-only -- "$example_bin/runloopkit-echo" | tee "$out/loop-2.txt"
echo "- load after (uptime): $(uptime | sed 's/.*load average: //')" >> "$out/header.md"

python3 - "$out/loop-1.txt" "$out/loop-2.txt" "$out/nio.txt" > "$out/table.md" <<'PY'
import sys

def results(path):
    rows = {}
    for line in open(path, encoding="utf-8"):
        if line.startswith("RESULT\t"):
            _, name, expected, observed, verdict = line.rstrip("\n").split("\t")
            rows[name] = (expected, observed, verdict)
    return rows

first, second, nio = (results(p) for p in sys.argv[1:4])
print("| case | expected | runloopkit-echo | SwiftNIO echo |")
print("|---|---|---|---|")
for name, (expected, observed, verdict) in first.items():
    again = second.get(name, ("", "", "missing"))[2]
    loop_verdict = verdict if verdict == again else f"{verdict} / {again} in the second run"
    nio_observed, nio_verdict = nio.get(name, ("", "not run", "—"))[1:]
    # The observation without the case's description (before the first ": "), which the
    # first column already gives.
    short = lambda text: text.split(": ", 1)[1] if ": " in text else text
    print(f"| {name} | {expected} | {loop_verdict}: {short(observed)} | {nio_verdict}: {short(nio_observed)} |")
passed = lambda rows: sum(1 for r in rows.values() if r[2] == "pass")
print(f"\nrunloopkit-echo passed {passed(first)} and {passed(second)} of {len(first)} cases in its two runs; SwiftNIO's echo {passed(nio)} of {len(nio)}.")
PY
cat "$out/table.md"
if [ "$docs" = 1 ]; then
    Scripts/replace-services-block.py run-hostile.sh "$out/header.md" "$out/table.md"
fi
