# Sourced by scripts/gallery.sh (the docs screenshot, which builds no benchmark): a loopback HTTP origin.
#   start_origin DIR LOG [NICE]
# serves DIR with `python3 -m http.server` on 127.0.0.1 at a free port (at nice NICE, default 0),
# logging to LOG, and sets `server_pid` and `port` (exits 1 when it does not start in 10 s).
# The caller kills "$server_pid" (its EXIT trap).
start_origin() {
    nice -n "${3:-0}" python3 -m http.server 0 --bind 127.0.0.1 --directory "$1" >"$2" 2>&1 &
    server_pid=$!
    port=""
    for _ in $(seq 1 100); do
        port="$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$2" | head -1)"
        [ -n "$port" ] && return 0
        sleep 0.1
    done
    echo "error: the loopback origin did not start" >&2
    exit 1
}
