#!/usr/bin/env bash
# The pass cost of many registered fd sources, in instructions (callgrind: independent of the
# machine's load), for issue 31 item 3's target "the pass with 100,000 registered ≤ 1.1× the
# pass with 1,000 registered". A release driver registers REGISTERED eventfds as LoopFileSources
# of one loop (each handler reads its eventfd), then, ROUNDS times, makes ACTIVE of them ready
# (spread evenly) and runs polling passes until all ACTIVE were handled (64 ready sources per
# pass at most). Instructions per handled source = the difference of a 220- and a 20-round run
# (setup cancels out) ÷ (200 × ACTIVE).
#
#   Benchmarks/Scripts/many-sources-callgrind.sh [--docs] [--registered "1000 19000"] [--active 1000]
#
# REGISTERED defaults to 1,000 and the most this machine's descriptor limit allows up to 100,000.
# Prints one line per count and the ratio, and saves the ratio for Scripts/check
# (save-readings.py); with --docs, replaces the generated block of Docs/Services.md. About a minute.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
active=1000 registered="" docs=0
while [ $# -gt 0 ]; do
    case "$1" in
        --docs) docs=1 ;;
        --registered) registered="$2"; shift ;;
        --active) active="$2"; shift ;;
        *) echo "many-sources-callgrind.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
ulimit -n "$(ulimit -Hn)"
if [ -z "$registered" ]; then
    most=$(( ($(ulimit -Hn) - 100) / 1000 * 1000 ))
    [ "$most" -gt 100000 ] && most=100000
    registered="1000 $most"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/Sources/many-sources-driver" "$work/Sources/CEventfd/include"
cat > "$work/Package.swift" <<SWIFT
// swift-tools-version:6.1
import PackageDescription
let package = Package(
    name: "many-sources-driver",
    dependencies: [.package(path: "$root")],
    targets: [
        .target(name: "CEventfd"),
        .executableTarget(name: "many-sources-driver",
                          dependencies: ["CEventfd", .product(name: "RunLoopCore", package: "$(basename "$root" | tr '[:upper:]' '[:lower:]')")]),
    ]
)
SWIFT
cat > "$work/Sources/CEventfd/include/CEventfd.h" <<'C'
// eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), which Glibc's Swift module leaves out.
int bench_eventfd(void);
C
cat > "$work/Sources/CEventfd/eventfd.c" <<'C'
#include <sys/eventfd.h>
#include "CEventfd.h"
int bench_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
C
cat > "$work/Sources/many-sources-driver/main.swift" <<'SWIFT'
import CEventfd
import Glibc
import RunLoopCore

// many-sources-driver REGISTERED ACTIVE ROUNDS
let arguments = CommandLine.arguments
let registered = Int(arguments[1])!, active = Int(arguments[2])!, rounds = Int(arguments[3])!
nonisolated(unsafe) var handled = 0

let loop = Loop.current
var sources: [LoopFileSource] = []
for _ in 0..<registered {
    let fd = bench_eventfd()
    precondition(fd >= 0, "eventfd: errno \(errno)")
    let source = LoopFileSource(fd: fd, events: .readable, label: "bench") { _ in
        var value: UInt64 = 0
        _ = read(fd, &value, 8)
        handled &+= 1
    }
    loop.add(source, mode: .default)
    sources.append(source)
}
let step = registered / active
var one: UInt64 = 1
for _ in 0..<rounds {
    let target = handled + active
    for k in 0..<active { _ = write(sources[k * step].fd, &one, 8) }
    while handled < target { loop.run(mode: .default, timeout: 0) }
}
print("handled=\(handled)")
SWIFT
# valgrind 3.19 cannot read clang's DWARF 5 (as in loop-pass-callgrind.sh): DWARF 4 for C.
(cd "$work" && swift build -c release -Xcc -gdwarf-4 > "$work/build.log" 2>&1) || { tail -n 20 "$work/build.log"; exit 1; }
driver="$(cd "$work" && swift build -c release -Xcc -gdwarf-4 --show-bin-path)/many-sources-driver"
instructions() {
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$driver" "$1" "$active" "$2" > /dev/null 2> "$work/cg.log"
    sed -n 's/^summary: //p' "$work/cg.out"
}
out="$root/Benchmarks/.build-results/many-sources"
mkdir -p "$out"
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); callgrind $(valgrind --version | sed 's/valgrind-//'); instructions of the driver's own process (the kernel's epoll work is not counted)" > "$out/header.md"
{
    echo
    echo "| fd sources registered | ready each round | instructions per handled source |"
    echo "|---|---|---|"
} > "$out/table.md"
first="" last=""
for count in $registered; do
    short=$(instructions "$count" 20)
    long=$(instructions "$count" 220)
    value=$(python3 -c "print(f'{($long - $short) / (200 * $active):.1f}')")
    echo "registered=$count active=$active instructions_per_handled_source=$value"
    python3 -c "print(f'| {$count:,} | {$active:,} | $value |')" >> "$out/table.md"
    [ -z "$first" ] && first="$count $value"
    last="$count $value"
done
python3 -c "a, b = '$first'.split(), '$last'.split(); print(f'\\nratio: **{float(b[1]) / float(a[1]):.3f}×** ({int(b[0]):,} registered ÷ {int(a[0]):,} registered, {$active:,} ready per round; target ≤ 1.1×)')" | tee -a "$out/table.md"
ratio=$(python3 -c "a, b = '$first'.split(), '$last'.split(); print(f'{float(b[1]) / float(a[1]):.4f}')")
"$root/Benchmarks/Scripts/save-readings.py" many-sources-callgrind \
    "$(python3 -c "print(f'{${last%% *}:,} registered ÷ {${first%% *}:,}, {$active:,} ready a round, by instructions')")" \
    "instructions_registered_vs_few=$ratio"
if [ "$docs" = 1 ]; then
    "$root/Benchmarks/Scripts/replace-services-block.py" many-sources-callgrind.sh "$out/header.md" "$out/table.md"
fi
