#!/usr/bin/env bash
# Instructions per operation of the pool's fresh-object works beside the naive Swift pool, with
# callgrind (load-independent): a release driver compiles Benchmarks/Tools/PoolPairs/Works.swift,
# the very operations pool-pairs times (AutoreleaseBenchmarks has the same), and runs one work N times on a thread of
# its own (the naive pool a local variable of the loop, as there). Instructions per operation are the difference of a 110,000- and a 10,000-operation
# run divided by 100,000 (the 1,000-object work: per object).
#   Benchmarks/Scripts/pool-callgrind.sh [--keep DIR]
# With --keep, the driver and the callgrind outputs (cg.<work>.<count>) stay in DIR, for
# `callgrind_annotate`. About 2 minutes with the driver built.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
if [[ "${1:-}" == "--keep" ]]; then
  work="$2"; mkdir -p "$work"
else
  work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/Sources/pool-driver"
# The driver compiles pool-pairs' works (Tools/PoolPairs/Works.swift) into itself, so it depends
# on the root package only and the naive pool sits in the module of its loop, as there.
cp "$root/Benchmarks/Tools/PoolPairs/Works.swift" "$work/Sources/pool-driver/"
cat > "$work/Package.swift" <<SWIFT
// swift-tools-version:6.1
import PackageDescription
let package = Package(
    name: "pool-driver",
    dependencies: [.package(path: "$root")],
    targets: [.executableTarget(name: "pool-driver", dependencies: [.product(name: "Autorelease", package: "$(basename "$root")")])]
)
SWIFT
cat > "$work/Sources/pool-driver/main.swift" <<'SWIFT'
import Glibc

// pool-driver fresh|naive-fresh|drain|naive-drain <operations>
let arguments = CommandLine.arguments
nonisolated(unsafe) var work = arguments[1]
nonisolated(unsafe) var count = Int(arguments[2])!

func threadMain(_: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    var naive = NaivePool()
    switch work {
    case "fresh": for _ in 0..<count { freshObjectInOwnPool() }
    case "naive-fresh": for _ in 0..<count { naive.freshObjectInOwnPool() }
    case "drain": for _ in 0..<count / 1000 { thousandFreshObjectsThenPop() }
    case "naive-drain": for _ in 0..<count / 1000 { naive.thousandFreshObjectsThenPop() }
    default: fatalError("unknown work \(work)")
    }
    return nil
}

var thread = pthread_t()
precondition(pthread_create(&thread, nil, threadMain, nil) == 0)
precondition(pthread_join(thread, nil) == 0)
SWIFT
cd "$work"
# valgrind 3.19 (Debian 12) cannot read clang's default DWARF 5.
swift build -c release -Xswiftc -g -Xcc -gdwarf-4 > "$work/build.log" 2>&1 || { tail -n 20 "$work/build.log"; exit 1; }
driver="$(swift build -c release --show-bin-path)/pool-driver"
count() {
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.$1.$2" "$driver" "$@" 2> "$work/err" > /dev/null
  grep -o 'Collected : [0-9]*' "$work/err" | grep -o '[0-9]*$'
}
for name in fresh naive-fresh drain naive-drain; do
  short="$(count "$name" 10000)"
  long="$(count "$name" 110000)"
  echo "$name: $(( (long - short) / 100000 )) instructions per object"
done
