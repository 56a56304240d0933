#!/usr/bin/env bash
# Builds the allocation counter as a shared object for LD_PRELOAD (Docs/Memory.md):
#   Benchmarks/Scripts/build-allocation-counter.sh [output.so]
#   RLK_ALLOC_MODE=counting LD_PRELOAD=$PWD/liballocationcounter.so some-program
# Linked into a Swift program instead (product LoopAllocationCounter) it needs no script.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-liballocationcounter.so}"
cc -O2 -g -fPIC -shared -ftls-model=initial-exec \
  -I "$here/Sources/CAllocationCounter/include" \
  "$here/Sources/CAllocationCounter/allocation_counter.c" "$here/Sources/CAllocationCounter/side_table.c" \
  -o "$out"
echo "built $out"
