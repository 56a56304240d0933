#!/usr/bin/env bash
# The short subset for CI: the polling passes (0/2/8 hooks; Loop, CFRunLoop, libuv, GLib and
# the 0-hook Foundation RunLoop and SwiftNIO), the owned-reference autorelease and the empty
# push + pop (ours, naive, GNUstep), and the 16- and 256-layer commits (ours, dirty list,
# naive), each sampled 0.5 s, then the regression gate on what was measured.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUNLOOPKIT_BENCH_SECONDS=${RUNLOOPKIT_BENCH_SECONDS:-0.5}
Scripts/run-all.sh --filter '(polling pass .*|autorelease, retained object handed over .*|empty push \+ pop .*|commit: (16|256) dirty.*)' > /dev/null
Scripts/check
