# Sourced by run-echo.sh, run-many-connections.sh and run-churn.sh: the three echo servers they
# compare, and starting and stopping one. Needs `out` (a results folder) set; builds nothing
# itself beyond asking where the builds are (the caller builds the products first).
#
#   start_server NAME [TAG]  a fresh server (loop, nio or uv) under `taskset -c 0`, its output
#                       in $out/NAME.log ($out/NAME-TAG.log with a TAG, for two at once); sets
#                       server_pid and port (read from "listening on …")
#   stop_server [PID]   SIGTERM to PID (default: server_pid), up to 10 s to exit, then SIGKILL
example_bin=$(cd ../Examples/EchoService && swift build -c release --show-bin-path)
bench_bin=$(swift build -c release --show-bin-path)
declare -A command=(
    [loop]="$example_bin/runloopkit-echo"
    [nio]="$bench_bin/nio-echo"
    [uv]="$bench_bin/uv-echo"
)

start_server() {
    local log="$out/$1${2:+-$2}.log"
    : > "$log"
    taskset -c 0 ${command[$1]} > "$log" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 300); do
        port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log")
        [ -n "$port" ] && return 0
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "$(basename "$0"): $1 did not start: $(cat "$log")" >&2
    exit 1
}

stop_server() {
    local pid="${1:-$server_pid}"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}
