#!/usr/bin/env bash
# Instruction counts of the allocation counter's modes on autorelease-stress (2.7 M allocations),
# through LD_PRELOAD, with callgrind: load-independent, so usable on a busy machine.
#   Benchmarks/Scripts/allocation-counter-callgrind.sh
# Prints one line per mode: instructions and the ratio to the run without the counter.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# valgrind 3.19 (Debian 12) cannot read clang's default DWARF 5.
swift build -c release --build-path .build-callgrind --product autorelease-stress -Xcc -gdwarf-4 > "$work/build.log" 2>&1 \
  || { tail -n 20 "$work/build.log"; exit 1; }
stress="$(swift build -c release --build-path .build-callgrind --show-bin-path)/autorelease-stress"
Benchmarks/Scripts/build-allocation-counter.sh "$work/liballocationcounter.so" > /dev/null
count() {
  valgrind --tool=callgrind --callgrind-out-file="$work/out" "$@" > /dev/null 2> "$work/err"
  grep -o 'Collected : [0-9]*' "$work/err" | grep -o '[0-9]*$'
}
base="$(count "$stress")"
echo "not preloaded: $base instructions"
for mode in off counting sampling:524288 generations; do
  n="$(RLK_ALLOC_MODE=$mode LD_PRELOAD="$work/liballocationcounter.so" count "$stress")"
  echo "$mode: $n instructions, $(python3 -c "print(f'{$n / $base:.3f}')")x"
done
