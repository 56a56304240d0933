#!/usr/bin/env bash
# Instructions per loop pass with callgrind (load-independent): a release driver makes N passes
# on a loop of a thread of its own (not Loop.main), with 0, 2 and 8 observers for every
# activity; a pass is a `perform` plus `run(mode: .default, timeout: 0)` ("polling pass +
# 1 callout": a whole run of one pass), a repeating timer due on every pass ("due timer fires",
# a run each too), or one pass of a single long run whose source0 signals itself again ("a pass
# within a run": a run's own setup and Exit are not in it). Instructions per pass are the
# difference of an 11,000- and a 1,000-pass run divided by 10,000.
#   Benchmarks/Scripts/loop-pass-callgrind.sh [--keep DIR]
# With --keep, the driver and the callgrind outputs (cg.<work>.<hooks>.<passes>) stay in DIR,
# for `callgrind_annotate`.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
if [[ "${1:-}" == "--keep" ]]; then
  work="$2"; mkdir -p "$work"
else
  work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/Sources/loop-pass-driver"
cat > "$work/Package.swift" <<SWIFT
// swift-tools-version:6.1
import PackageDescription
let package = Package(
    name: "loop-pass-driver",
    dependencies: [.package(path: "$root")],
    targets: [.executableTarget(name: "loop-pass-driver",
                                dependencies: [.product(name: "RunLoopCore", package: "$(basename "$root")")])]
)
SWIFT
cat > "$work/Sources/loop-pass-driver/main.swift" <<'SWIFT'
import Glibc
import RunLoopCore

// loop-pass-driver poll|timer <hooks> <passes>
let arguments = CommandLine.arguments
let work = arguments[1]
let hooks = Int(arguments[2])!
let passes = Int(arguments[3])!
nonisolated(unsafe) var calloutCount = 0

nonisolated func makePasses() {
    let loop = Loop.current
    let installed = (0..<hooks).map { _ in
        LoopObserver(activities: .allActivities, label: "bench") { _, _ in }
    }
    for observer in installed { loop.add(observer, mode: .default) }
    switch work {
    case "poll":
        for _ in 0..<passes {
            loop.perform(inMode: .default, label: "bench") { calloutCount &+= 1 }
            loop.run(mode: .default, timeout: 0)
        }
    case "chain":
        let target = passes
        nonisolated(unsafe) var again: LoopSource? = nil
        let source = LoopSource(label: "bench") {
            calloutCount &+= 1
            if calloutCount == target { loop.stop() } else { again?.signal() }
        }
        again = source
        loop.add(source, mode: .default)
        source.signal()
        loop.run(mode: .default, timeout: 3600)
        loop.remove(source, mode: .default)
        again = nil
    default:
        let timer = try! LoopTimer(fireAt: loop.clock.now, interval: 1e-9, label: "bench") { _ in
            calloutCount &+= 1
        }
        loop.add(timer, mode: .default)
        for _ in 0..<passes { loop.run(mode: .default, timeout: 0) }
        loop.remove(timer, mode: .default)
        timer.invalidate()
    }
    for observer in installed {
        loop.remove(observer, mode: .default)
        observer.invalidate()
    }
}

nonisolated func threadMain(_: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    makePasses()
    return nil
}

var thread = pthread_t()
precondition(pthread_create(&thread, nil, threadMain, nil) == 0)
precondition(pthread_join(thread, nil) == 0)
precondition(calloutCount == passes, "\(calloutCount) callouts for \(passes) passes")
SWIFT
cd "$work"
# valgrind 3.19 (Debian 12) cannot read clang's default DWARF 5.
swift build -c release -Xswiftc -g -Xcc -gdwarf-4 > "$work/build.log" 2>&1 || { tail -n 20 "$work/build.log"; exit 1; }
driver="$(swift build -c release --show-bin-path)/loop-pass-driver"
count() {
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.$1.$2.$3" "$driver" "$@" 2> "$work/err" > /dev/null
  grep -o 'Collected : [0-9]*' "$work/err" | grep -o '[0-9]*$'
}
for run in "poll 0" "poll 2" "poll 8" "timer 0" "timer 2" "chain 0" "chain 2"; do
  set -- $run
  short="$(count "$1" "$2" 1000)"
  long="$(count "$1" "$2" 11000)"
  echo "$1, $2 hooks: $(( (long - short) / 10000 )) instructions per pass"
done
