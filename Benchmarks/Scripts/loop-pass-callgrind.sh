#!/usr/bin/env bash
# Instructions per loop pass with callgrind (load-independent): a release driver makes N passes
# on a loop of a thread of its own (not Loop.main), with 0, 2 and 8 observers for every
# activity; a pass is a `perform` plus `run(mode: .default, timeout: 0)` ("polling pass +
# 1 callout": a whole run of one pass), a repeating timer due on every pass ("due timer fires",
# a run each too), or one pass of a single long run whose source0 signals itself again ("a pass
# within a run": a run's own setup and Exit are not in it). Issue 31's works follow: the due
# timer re-armed by the caller (`setNextFireDate` to a past date, then the pass) with 0 and 2
# hooks each called once per pass (a before-timers and a before-sources observer), beside
# libuv's same work (`uv_timer_start(0)` + `uv_run(NOWAIT)`, 0 and 1 prepare + 1 check, a C
# driver linked with -luv); and the cross-thread round trip (both threads' user space: a loop
# thread runs `run()` with a source0 whose perform writes an ack eventfd, the main thread
# signals, wakes and reads the ack), with its system calls per round trip from `strace -f -c`.
# Instructions per pass are the difference of an 11,000- and a 1,000-pass run divided by 10,000.
#   Benchmarks/Scripts/loop-pass-callgrind.sh [--keep DIR] [--only WORK...]
# With --keep, the drivers and the callgrind outputs (cg.<work>.<hooks>.<passes>) stay in DIR,
# for `callgrind_annotate`. --only limits the runs to the works named (poll, timer, chain,
# rearm, uv-rearm, trip), each with its usual hook counts. With --budget FILE (lines
# "<work> <hooks> <instructions>"), the script fails when a work of the loop costs more than 2%
# over its line: CI runs it with Benchmarks/pass-instructions.budget, so a change that makes the
# pass dearer (a lock call that stopped being inlined cost 317 instructions once) cannot land
# unnoticed. Counts do not depend on load; they change with the compiler and valgrind.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work=""
only=()
budget=""
over=()
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) work="$2"; mkdir -p "$work"; shift 2 ;;
    --only) shift; while [ $# -gt 0 ] && [[ "$1" != --* ]]; do only+=("$1"); shift; done ;;
    --budget) budget="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
    *) echo "loop-pass-callgrind.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "$work" ]; then work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT; fi
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

// loop-pass-driver poll|timer|rearm|trip <hooks> <passes>
let arguments = CommandLine.arguments
let work = arguments[1]
let hooks = Int(arguments[2])!
let passes = Int(arguments[3])!
nonisolated(unsafe) var calloutCount = 0

// The cross-thread round trip: the main thread signals the source of the loop thread, wakes
// it and blocks reading the ack pipe that the source's perform writes (a pipe: Glibc's module
// has no eventfd; the benchmarks' eventfd costs the same two system calls). The loop thread
// publishes its loop and source before it posts `tripReady`; the main thread reads them after.
nonisolated(unsafe) var tripLoop: Loop?
nonisolated(unsafe) var tripSource: LoopSource?
nonisolated(unsafe) var tripAck: Int32 = -1
nonisolated(unsafe) var tripAckWrite: Int32 = -1
nonisolated(unsafe) var tripReady = sem_t()

nonisolated func tripThread(_: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let loop = Loop.current
    let source = LoopSource(label: "ack") {
        var one: UInt64 = 1
        _ = write(tripAckWrite, &one, 8)
    }
    loop.add(source, mode: .default)
    tripLoop = loop
    tripSource = source
    sem_post(&tripReady)
    loop.run()
    return nil
}

func roundTrips() {
    var fds: [Int32] = [-1, -1]
    precondition(pipe(&fds) == 0)
    tripAck = fds[0]
    tripAckWrite = fds[1]
    sem_init(&tripReady, 0, 0)
    var thread = pthread_t()
    precondition(pthread_create(&thread, nil, tripThread, nil) == 0)
    while sem_wait(&tripReady) != 0 {}
    var value: UInt64 = 0
    for _ in 0..<passes {
        tripSource!.signal()
        tripLoop!.wakeUp()
        _ = read(tripAck, &value, 8)
    }
    tripLoop!.stop()
    precondition(pthread_join(thread, nil) == 0)
    calloutCount = passes
}

nonisolated func makePasses() {
    let loop = Loop.current
    // Observers for every activity, or (rearm) one per pass each: before timers, before sources.
    let installed = (0..<hooks).map { index in
        LoopObserver(activities: work == "rearm" ? (index % 2 == 0 ? .beforeTimers : .beforeSources) : .allActivities,
                     label: "bench") { _, _ in }
    }
    for observer in installed { loop.add(observer, mode: .default) }
    switch work {
    case "rearm":
        let pastDate = loop.clock.now
        let timer = try! LoopTimer(fireAt: pastDate, interval: 3600, label: "bench") { _ in calloutCount &+= 1 }
        loop.add(timer, mode: .default)
        for _ in 0..<passes {
            timer.setNextFireDate(pastDate)
            loop.run(mode: .default, timeout: 0)
        }
        loop.remove(timer, mode: .default)
        timer.invalidate()
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

if work == "trip" {
    roundTrips()
} else {
    var thread = pthread_t()
    precondition(pthread_create(&thread, nil, threadMain, nil) == 0)
    precondition(pthread_join(thread, nil) == 0)
}
precondition(calloutCount == passes, "\(calloutCount) callouts for \(passes) passes")
SWIFT
# libuv's due timer re-armed by the caller: uv_timer_start(0) + uv_run(NOWAIT), with 0 or 2 hooks
# (half uv_prepare_t, half uv_check_t), as Benchmarks/Support/CLibuvPeer does it.
cat > "$work/uv-rearm.c" <<'C'
#include <stdlib.h>
#include <uv.h>
static long callouts;
static void on_timer(uv_timer_t *t) { (void)t; callouts++; }
static void on_hook(uv_prepare_t *h) { (void)h; }
static void on_check(uv_check_t *h) { (void)h; }
int main(int argc, char **argv) {
    int hooks = atoi(argv[2]);
    long passes = atol(argv[3]);
    uv_loop_t loop; uv_loop_init(&loop);
    uv_timer_t timer; uv_timer_init(&loop, &timer);
    uv_prepare_t prepares[8]; uv_check_t checks[8];
    for (int i = 0; i < (hooks + 1) / 2; i++) { uv_prepare_init(&loop, &prepares[i]); uv_prepare_start(&prepares[i], on_hook); }
    for (int i = 0; i < hooks / 2; i++) { uv_check_init(&loop, &checks[i]); uv_check_start(&checks[i], on_check); }
    for (long i = 0; i < passes; i++) {
        uv_timer_start(&timer, on_timer, 0, 0);
        uv_run(&loop, UV_RUN_NOWAIT);
    }
    return callouts == passes ? 0 : 1;
}
C
cc -O2 -g -o "$work/uv-rearm" "$work/uv-rearm.c" -luv
cd "$work"
# valgrind 3.19 (Debian 12) cannot read clang's default DWARF 5.
swift build -c release -Xswiftc -g -Xcc -gdwarf-4 > "$work/build.log" 2>&1 || { tail -n 20 "$work/build.log"; exit 1; }
driver="$(swift build -c release --show-bin-path)/loop-pass-driver"
count() {
  local program="$driver"
  [ "$1" = uv-rearm ] && program="$work/uv-rearm"
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.$1.$2.$3" "$program" "$@" 2> "$work/err" > /dev/null
  grep -o 'Collected : [0-9]*' "$work/err" | grep -o '[0-9]*$'
}
wanted() { [ ${#only[@]} = 0 ] || [[ " ${only[*]} " == *" $1 "* ]]; }
for run in "poll 0" "poll 2" "poll 8" "timer 0" "timer 2" "chain 0" "chain 2" "rearm 0" "rearm 2" "uv-rearm 0" "uv-rearm 2" "trip 0"; do
  set -- $run
  wanted "$1" || continue
  short="$(count "$1" "$2" 1000)"
  long="$(count "$1" "$2" 11000)"
  measured=$(( (long - short) / 10000 ))
  echo "$1, $2 hooks: $measured instructions per pass"
  if [ -n "$budget" ]; then
    allowed="$(awk -v w="$1" -v h="$2" '$1 == w && $2 == h { print $3 }' "$budget")"
    if [ -n "$allowed" ] && [ $(( measured * 100 )) -gt $(( allowed * 102 )) ]; then
      over+=("$1 with $2 hooks: $measured > $allowed + 2%")
    fi
  fi
done
# System calls per round trip (both threads), and per re-armed due-timer pass on each side.
syscalls() {
  local program="$driver"
  [ "$1" = uv-rearm ] && program="$work/uv-rearm"
  strace -f -c -o "$work/strace.$1.$3" "$program" "$@" > /dev/null
  # The calls column of every system call's row (the fourth number; errors may follow it).
  python3 -c 'import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip() and l.split()[0][0].isdigit() and l.split()[-1] != "total"]
print(sum(int(r[3]) for r in rows))' "$work/strace.$1.$3"
}
if command -v strace > /dev/null; then
  for run in "trip 0" "rearm 2" "uv-rearm 2"; do
    set -- $run
    wanted "$1" || continue
    short="$(syscalls "$1" "$2" 1000)"
    long="$(syscalls "$1" "$2" 11000)"
    echo "$1, $2 hooks: $(python3 -c "print(f'{($long - $short) / 10000:g}')") system calls per operation (strace -f -c)"
  done
fi
if [ ${#over[@]} -gt 0 ]; then
  printf 'loop-pass-callgrind.sh: over budget (%s): %s\n' "$budget" "${over[@]}" >&2
  exit 1
fi
[ -z "$budget" ] || echo "every work within 2% of $budget"
