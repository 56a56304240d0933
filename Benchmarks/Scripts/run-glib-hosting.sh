#!/usr/bin/env bash
# Main-thread work under GLib's main loop (issue 30, items 2 and 8; Docs/Hosting.md): hop
# latency of a @MainActor job enqueued from another thread, and an idle loop's wake-ups, for
# each mode of glib-hosting (hosted Loop.main, the swift-cross-ui tickler, g_main_context_invoke);
# then the cost of a polling pass hosted in GLib beside GLib's own idle source and the loop's
# native pass. One process per order — hosted first, then hosted last — each printing its own
# tables with the load average at each row; report the worse.
#
#   Scripts/run-glib-hosting.sh [hops] [idle seconds] [passes]
#   (default: 200 hops, 10 s idle, 2,100,000 passes)
#
# Builds glib-hosting (release) and runs it under `taskset -c 0`. Cost with the defaults: about
# 2 × (3 × (200 × 25 ms + 10 s) + 3 s) ≈ 96 s after the build.
set -euo pipefail
cd "$(dirname "$0")/.."
hops=${1:-200}
idle=${2:-10}
passes=${3:-2100000}
swift build -c release --product glib-hosting 2>&1 | tail -n 1
binary="$(swift build -c release --show-bin-path)/glib-hosting"
for orders in "hosted,tickler,invoke hosted,glib,native" "invoke,tickler,hosted native,glib,hosted"; do
  set -- $orders
  echo "order: $1; passes: $2 (loadavg before: $(cut -d' ' -f1-3 /proc/loadavg))"
  taskset -c 0 "$binary" --hops "$hops" --idle-seconds "$idle" --order "$1" --passes "$passes" --pass-order "$2"
done
