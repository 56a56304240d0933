#!/usr/bin/env bash
# Runs gtk-commit in a virtual X display, clicks its button, takes a screenshot once the paint
# shows the committed text, closes the window and checks the trace (check-trace.py).
#
#   ./run-under-xvfb.sh [screenshot.png]     (default: ./gtk-commit.png)
#
# Needs Debian's libgtk-4-dev, xvfb, xdotool and imagemagick (`import`); CI installs them.
# Every wait is bounded (10 s); cost: about 3 s after the build.
set -euo pipefail
cd "$(dirname "$0")"
screenshot=${1:-gtk-commit.png}
swift build 2>&1 | tail -n 1
binary="$(swift build --show-bin-path)/gtk-commit"
trace=$(mktemp)
display=:$(( 90 + RANDOM % 9 ))
Xvfb "$display" -screen 0 640x360x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
app=""
cleanup() {
  [ -n "$app" ] && kill "$app" 2>/dev/null || true
  kill "$xvfb" 2>/dev/null || true
  rm -f "$trace" "$trace.stderr"
}
trap cleanup EXIT
export DISPLAY=$display GDK_BACKEND=x11 GSK_RENDERER=cairo NO_AT_BRIDGE=1

# Waits (10 s at most) until the trace has a line matching $1.
wait_for_line() {
  for _ in $(seq 100); do
    grep -q -- "$1" "$trace" && return 0
    sleep 0.1
  done
  echo "run-under-xvfb: no line '$1' within 10 s; the trace:" >&2
  cat "$trace" >&2
  return 1
}

for _ in $(seq 50); do xdpyinfo -display "$display" >/dev/null 2>&1 && break; sleep 0.1; done
# GTK's warnings (no session bus under Xvfb) go to stderr, apart from the trace.
"$binary" >"$trace" 2>"$trace.stderr" &
app=$!
window=$(timeout 10 xdotool search --sync --name "RunLoopKit on GTK" | head -n 1)
wait_for_line '^paint "nothing committed yet"'
# The button is the lower half of the window's content.
eval "$(xdotool getwindowgeometry --shell "$window")"
xdotool mousemove --window "$window" $(( WIDTH / 2 )) $(( HEIGHT * 3 / 4 )) click 1
wait_for_line '^paint "clicked 1 (committed)"'
import -window root -crop "${WIDTH}x${HEIGHT}+${X}+${Y}" +repage "$screenshot"
xdotool windowclose "$window" 2>/dev/null || kill "$app"
for _ in $(seq 50); do kill -0 "$app" 2>/dev/null || break; sleep 0.1; done
kill "$app" 2>/dev/null || true
app=""
cat "$trace"
python3 check-trace.py "$trace"
