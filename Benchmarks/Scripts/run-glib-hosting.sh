#!/usr/bin/env bash
# Main-thread work under GLib's main loop (issue 30, item 8; Docs/Hosting.md): hop latency of a
# job enqueued from another thread, and an idle loop's wake-ups, for each mode of glib-hosting,
# in one process per order — every order given runs, each printing its own table with the load
# average at each row.
#
#   Scripts/run-glib-hosting.sh [hops] [idle seconds] [order ...]
#   (default: 200 hops, 10 s idle, orders "tickler,invoke" and "invoke,tickler")
#
# Builds glib-hosting (release) and runs it under `taskset -c 0`.
set -euo pipefail
cd "$(dirname "$0")/.."
hops=${1:-200}
idle=${2:-10}
shift $(( $# > 2 ? 2 : $# ))
orders=("$@")
[ ${#orders[@]} -gt 0 ] || orders=("tickler,invoke" "invoke,tickler")
swift build -c release --product glib-hosting 2>&1 | tail -n 1
binary="$(swift build -c release --show-bin-path)/glib-hosting"
for order in "${orders[@]}"; do
  echo "order: $order (loadavg before: $(cut -d' ' -f1-3 /proc/loadavg))"
  taskset -c 0 "$binary" --hops "$hops" --idle-seconds "$idle" --order "$order"
done
