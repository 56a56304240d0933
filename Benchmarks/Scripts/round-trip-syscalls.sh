#!/usr/bin/env bash
# What one cross-thread round trip costs each responder of round-trip-pairs, free of the
# machine's load: system calls per round trip (`strace -f -c`, both threads) and user-space
# instructions per round trip (callgrind, both threads), each the difference of an 11,000- and a
# 1,000-trip run divided by 10,000. The floor that proves how close a loop can come to the
# bare-read ping-pong.
#   Benchmarks/Scripts/round-trip-syscalls.sh [--keep DIR]
# With --keep, the strace and callgrind outputs (strace.<peer>.<n>, cg.<peer>.<n>) stay in DIR.
# About 3 minutes with both builds done (valgrind runs the responders' threads one at a time).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == "--keep" ]]; then
  work="$2"; mkdir -p "$work"
else
  work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
fi
swift build -c release --product round-trip-pairs 2>&1 | tail -1
tool="$(swift build -c release --show-bin-path)/round-trip-pairs"
# valgrind 3.19 (Debian 12) cannot read clang's default DWARF 5: a build of its own for callgrind.
swift build -c release --build-path .build-callgrind --product round-trip-pairs -Xcc -gdwarf-4 2>&1 | tail -1
traced="$(swift build -c release --build-path .build-callgrind --show-bin-path)/round-trip-pairs"
calls() {
  strace -f -c -o "$work/strace.$1.$2" "$tool" --trips "$1" "$2" > /dev/null
  # The calls column of every system call's row (the fourth number; errors may follow it).
  python3 -c 'import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip() and l.split()[0][0].isdigit() and l.split()[-1] != "total"]
print(sum(int(r[3]) for r in rows))' "$work/strace.$1.$2"
}
instructions() {
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.$1.$2" "$traced" --trips "$1" "$2" 2> "$work/err" > /dev/null
  grep -o 'Collected : [0-9]*' "$work/err" | grep -o '[0-9]*$'
}
echo "| responder | system calls per round trip | user-space instructions per round trip |"
echo "|---|---:|---:|"
for peer in "Loop" "eventfd ping-pong via epoll" "eventfd ping-pong, bare read" "libuv" "GLib"; do
  c1="$(calls "$peer" 1000)"; c2="$(calls "$peer" 11000)"
  i1="$(instructions "$peer" 1000)"; i2="$(instructions "$peer" 11000)"
  echo "| $peer | $(python3 -c "print(f'{($c2 - $c1) / 10000:g}')") | $(( (i2 - i1) / 10000 )) |"
done
