#!/usr/bin/env bash
# Instruction counts of the allocation counter's modes on autorelease-stress (2.7 M allocations),
# with callgrind: load-independent, so usable on a busy machine.
#   Benchmarks/Scripts/allocation-counter-callgrind.sh
# Prints one line per mode and column: instructions and the ratio to the run without the counter.
# Columns: "preloaded" (the shared object through LD_PRELOAD) and "linked" (the same C file's
# object linked into the executable, so its malloc is the executable's own; the mode then comes
# from RLK_ALLOC_MODE too).
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
cc -O2 -g -ftls-model=initial-exec -c -I Sources/CAllocationCounter/include \
  Sources/CAllocationCounter/allocation_counter.c -o "$work/allocation_counter.o"
cc -O2 -g -c -I Sources/CAllocationCounter/include Sources/CAllocationCounter/side_table.c -o "$work/side_table.o"
swift build -c release --build-path .build-callgrind-linked --product autorelease-stress -Xcc -gdwarf-4 \
  -Xlinker "$work/allocation_counter.o" -Xlinker "$work/side_table.o" > "$work/build.log" 2>&1 \
  || { tail -n 20 "$work/build.log"; exit 1; }
linked="$(swift build -c release --build-path .build-callgrind-linked --show-bin-path)/autorelease-stress"
nm "$linked" > "$work/symbols"
grep -q " T malloc$" "$work/symbols" || { echo "the linked build defines no malloc"; exit 1; }
count() {
  valgrind --tool=callgrind --callgrind-out-file="$work/out" "$@" > /dev/null 2> "$work/err"
  grep -o 'Collected : [0-9]*' "$work/err" | grep -o '[0-9]*$'
}
base="$(count "$stress")"
echo "without the counter: $base instructions"
for mode in off counting sampling:524288 generations; do
  n="$(RLK_ALLOC_MODE=$mode LD_PRELOAD="$work/liballocationcounter.so" count "$stress")"
  echo "preloaded $mode: $n instructions, $(python3 -c "print(f'{$n / $base:.3f}')")x"
  n="$(RLK_ALLOC_MODE=$mode count "$linked")"
  echo "linked $mode: $n instructions, $(python3 -c "print(f'{$n / $base:.3f}')")x"
done
