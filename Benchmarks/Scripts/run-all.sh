#!/usr/bin/env bash
# Runs every benchmark target (release build, as the plugin does) and prints the ratio tables
# of Docs/Benchmarks.md. Raw results go to $1 (default .build-results/, gitignored).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.build-results}
mkdir -p "$out"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); load: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/results.md"
swift package benchmark --no-progress --format markdown --scale --time-units nanoseconds >> "$out/results.md" 2>&1
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/results.md"
python3 Scripts/ratio-tables.py "$out/results.md"
