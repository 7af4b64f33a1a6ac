#!/usr/bin/env bash
# A local Osprey cluster: an origin (nginx serving a directory), N `osprey serve` instances and an
# nginx load balancer with the shared result cache (deploy/nginx/*.conf).
#
#   deploy/cluster.sh up        start everything (idempotent: runs `down` first)
#   deploy/cluster.sh down      stop everything, remove the namespaces
#   deploy/cluster.sh status    processes and addresses
#   deploy/cluster.sh kill I    SIGKILL instance I (1..N)
#   deploy/cluster.sh stop I    SIGTERM instance I and wait for it to exit
#   deploy/cluster.sh start I   (re)start instance I
#   deploy/cluster.sh client CMD...   run CMD where a client of the cluster runs (netns: the
#                                     client namespace), with LB_URL, SINGLE_URL, ORIGIN_URL,
#                                     INSTANCE_URLS exported
#   deploy/cluster.sh env       print those URLs as shell assignments
#
# Environment:
#   OSPREY_BIN     the osprey binary (default: `swift build -c release --product osprey` and its path)
#   CLUSTER_DIR    scratch directory for configs, logs, caches (default /tmp/osprey-cluster)
#   CLUSTER_NET    netns (default when root and `ip netns` works) | loopback
#   ORIGIN_DIR     directory the origin serves (default $CLUSTER_DIR/origin; make it with
#                  deploy/make-origin.sh)
#   INSTANCES      number of instances (default 3)
#   OSPREY_WORKERS, OSPREY_QUEUE  per instance (default 2 and 256)
#   UPLOAD_DIR     the one `--upload-dir` all instances share (default $CLUSTER_DIR/uploads); the
#                  instances run with --upload --upload-put --upload-delete
#   EXTRA_SERVE_ARGS  more `osprey serve` flags
#   S3_STORE=1     a shared bucket instead of the shared directory: moto's S3 server (the venv of
#                  scripts/s3-venv.sh) beside the origin, every instance with --result-store
#                  s3://results/cluster and --upload-dir s3://uploads/cluster (signed, path-style)
#
# netns mode: every host is its own network namespace (osp-c client, osp-lb nginx, osp-o origin,
# osp-1..N instances) on a bridge in namespace osp-sw, addresses in 198.51.100.0/24 (TEST-NET-2,
# RFC 5737: documentation addresses, never routed). These addresses and not 10/8 or 192.168/16:
# osprey's SSRF guard refuses private origin addresses and has no flag to allow them (only
# --allow-loopback-sources); the allow-list (--allowed-source) pins the sources to the origin.
# Loopback mode: everything on 127.0.0.1 ports, instances with --allow-loopback-sources.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
CLUSTER_DIR=${CLUSTER_DIR:-/tmp/osprey-cluster}
ORIGIN_DIR=${ORIGIN_DIR:-$CLUSTER_DIR/origin}
INSTANCES=${INSTANCES:-3}
OSPREY_WORKERS=${OSPREY_WORKERS:-2}
OSPREY_QUEUE=${OSPREY_QUEUE:-256}
EXTRA_SERVE_ARGS=${EXTRA_SERVE_ARGS:-}
UPLOAD_DIR=${UPLOAD_DIR:-$CLUSTER_DIR/uploads}
NET_PREFIX=198.51.100

if [[ -z "${CLUSTER_NET:-}" ]]; then
    if [[ $EUID -eq 0 ]] && ip netns list >/dev/null 2>&1; then CLUSTER_NET=netns; else CLUSTER_NET=loopback; fi
fi

osprey_bin() {
    if [[ -n "${OSPREY_BIN:-}" ]]; then echo "$OSPREY_BIN"; return; fi
    (cd "$ROOT" && swift build -c release --product osprey >&2)
    echo "$(cd "$ROOT" && swift build -c release --show-bin-path)/osprey"
}

# Addresses: host:port of each role.
if [[ $CLUSTER_NET == netns ]]; then
    LB_ADDR=$NET_PREFIX.10; SINGLE_ADDR=$NET_PREFIX.10:81; LB_LISTEN=$NET_PREFIX.10:80; ORIGIN_ADDR=$NET_PREFIX.20; ORIGIN_LISTEN=$NET_PREFIX.20:80
    inst_addr() { echo "$NET_PREFIX.$((10 + $1)):8080"; }
    inst_bind() { echo 0.0.0.0; }
    inst_port() { echo 8080; }
    SOURCE_FLAGS="--allowed-source http://$ORIGIN_ADDR/"
    S3_ADDR=$NET_PREFIX.20:9000
else
    LB_ADDR=127.0.0.1:18080; SINGLE_ADDR=127.0.0.1:18079; LB_LISTEN=$LB_ADDR; ORIGIN_ADDR=127.0.0.1:18090; ORIGIN_LISTEN=$ORIGIN_ADDR
    inst_addr() { echo "127.0.0.1:$((18080 + $1))"; }
    inst_bind() { echo 127.0.0.1; }
    inst_port() { echo $((18080 + $1)); }
    SOURCE_FLAGS="--allow-loopback-sources --allowed-source http://$ORIGIN_ADDR/"
    S3_ADDR=127.0.0.1:18095
fi

# Runs "$@" in namespace $1 (netns mode) or here.
in_ns() {
    local ns=$1; shift
    if [[ $CLUSTER_NET == netns ]]; then ip netns exec "osp-$ns" "$@"; else "$@"; fi
}

export_urls() {
    export LB_URL="http://$LB_ADDR" SINGLE_URL="http://$SINGLE_ADDR" ORIGIN_URL="http://$ORIGIN_ADDR"
    local urls="" i
    for ((i = 1; i <= INSTANCES; i++)); do urls+="http://$(inst_addr $i) "; done
    export INSTANCE_URLS="${urls% }" CLUSTER_DIR CLUSTER_NET INSTANCES UPLOAD_DIR
}

net_up() {
    [[ $CLUSTER_NET == netns ]] || return 0
    ip netns add osp-sw
    ip -n osp-sw link add br0 type bridge
    ip -n osp-sw link set br0 up
    ip -n osp-sw link set lo up
    local hosts="c:5 lb:10 o:20" i
    for ((i = 1; i <= INSTANCES; i++)); do hosts+=" $i:$((10 + i))"; done
    local h name num
    for h in $hosts; do
        name=${h%%:*}; num=${h##*:}
        ip netns add "osp-$name"
        ip link add "osp-$name-p" netns osp-sw type veth peer name eth0 netns "osp-$name"
        ip -n osp-sw link set "osp-$name-p" master br0 up
        ip -n "osp-$name" link set lo up
        ip -n "osp-$name" addr add "$NET_PREFIX.$num/24" dev eth0
        ip -n "osp-$name" link set eth0 up
    done
}

net_down() {
    local ns
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^osp-' || true); do
        ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
        ip netns del "$ns" 2>/dev/null || true
    done
}

pidfile() { echo "$CLUSTER_DIR/run/$1.pid"; }

start_bg() {  # name ns cmd...
    local name=$1 ns=$2; shift 2
    # directly in the background (no function/subshell in between), so that $! is the process
    # itself (`ip netns exec` execs it): kill/SIGKILL reach the server, not a wrapper
    if [[ $CLUSTER_NET == netns ]]; then
        ip netns exec "osp-$ns" "$@" >"$CLUSTER_DIR/log/$name.out" 2>&1 &
    else
        "$@" >"$CLUSTER_DIR/log/$name.out" 2>&1 &
    fi
    echo $! >"$(pidfile "$name")"
}

wait_http() {  # url [seconds]
    local url=$1 deadline=$((SECONDS + ${2:-30}))
    until in_ns c curl -fsS -o /dev/null --max-time 2 "$url" 2>/dev/null; do
        if ((SECONDS > deadline)); then echo "cluster: $url did not answer" >&2; return 1; fi
        sleep 0.3
    done
}

write_origin_conf() {
    local user_line=""; [[ $EUID -eq 0 ]] && user_line="user root;"
    cat >"$CLUSTER_DIR/conf/origin.conf" <<EOF
$user_line
daemon off;
worker_processes 1;
pid $CLUSTER_DIR/run/origin-nginx.pid;
error_log $CLUSTER_DIR/log/origin-error.log warn;
events { worker_connections 1024; }
http {
    access_log $CLUSTER_DIR/log/origin-access.log;
    client_body_temp_path $CLUSTER_DIR/tmp/o-body; proxy_temp_path $CLUSTER_DIR/tmp/o-proxy;
    fastcgi_temp_path $CLUSTER_DIR/tmp/o-fcgi; uwsgi_temp_path $CLUSTER_DIR/tmp/o-uwsgi; scgi_temp_path $CLUSTER_DIR/tmp/o-scgi;
    types { image/jpeg jpg jpeg; image/png png; image/webp webp; image/gif gif; image/avif avif; }
    server {
        listen $ORIGIN_LISTEN;
        root $ORIGIN_DIR;
        location = /img/ { autoindex on; access_log off; }
    }
}
EOF
}

write_lb_conf() {
    local user_line=""; [[ $EUID -eq 0 ]] && user_line="user root;"
    local servers="" i
    for ((i = 1; i <= INSTANCES; i++)); do servers+="        server $(inst_addr $i) max_fails=2 fail_timeout=3s;"$'\n'; done
    cat >"$CLUSTER_DIR/conf/lb.conf" <<EOF
$user_line
daemon off;
worker_processes 1;
pid $CLUSTER_DIR/run/lb-nginx.pid;
error_log $CLUSTER_DIR/log/lb-error.log warn;
events { worker_connections 4096; }
http {
    include $HERE/nginx/osprey-maps.conf;
    client_body_temp_path $CLUSTER_DIR/tmp/lb-body; proxy_temp_path $CLUSTER_DIR/tmp/lb-proxy;
    fastcgi_temp_path $CLUSTER_DIR/tmp/lb-fcgi; uwsgi_temp_path $CLUSTER_DIR/tmp/lb-uwsgi; scgi_temp_path $CLUSTER_DIR/tmp/lb-scgi;
    proxy_cache_path $CLUSTER_DIR/nginx-cache levels=1:2 keys_zone=osprey:16m max_size=2g inactive=1d use_temp_path=off;
    log_format osprey '\$msec \$status cache=\$upstream_cache_status upstream="\$upstream_addr" '
                      'upstream_status="\$upstream_status" rt=\$request_time bytes=\$body_bytes_sent '
                      'source="\$osprey_source" accept=\$osprey_accept_class uri="\$request_uri"';
    upstream osprey {
        hash \$osprey_source consistent;
$servers        keepalive 32;
        keepalive_timeout 60s;
    }
    upstream osprey_upload {
        least_conn;
$servers        keepalive 16;
    }
    upstream osprey_single {   # instance 1 alone, for the throughput comparison
        server $(inst_addr 1);
        keepalive 32;
    }
    server {
        listen $LB_LISTEN;
        access_log $CLUSTER_DIR/log/lb-access.log osprey;
        location = /nginx-health { access_log off; return 200 "ok\n"; }
        location / {
            proxy_pass http://osprey;
            include $HERE/nginx/osprey-proxy.conf;
            add_header X-Osprey-Source \$osprey_source always;   # debug: the hash key
        }
        # thumbor's upload API: never cached; instances share $UPLOAD_DIR, so a new upload (no
        # source to hash on yet) goes to the least busy one, an id's requests follow the ring
        location = /image { proxy_pass http://osprey_upload; include $HERE/nginx/osprey-upload.conf; }
        location ^~ /image/ { proxy_pass http://osprey; include $HERE/nginx/osprey-upload.conf; }
    }
    server {   # no cache, one instance: the baseline
        listen $SINGLE_ADDR;
        access_log $CLUSTER_DIR/log/single-access.log osprey;
        location / {
            proxy_pass http://osprey_single;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Accept \$osprey_accept;
            proxy_read_timeout 60s;
        }
    }
}
EOF
}

start_instance() {
    local i=$1 bin
    bin=$(osprey_bin)
    mkdir -p "$CLUSTER_DIR/cache/$i" "$UPLOAD_DIR"
    local storage=(--upload-dir "$UPLOAD_DIR") keys=()
    if [[ ${S3_STORE:-0} == 1 ]]; then
        storage=(--s3-endpoint "http://$S3_ADDR" --s3-path-style --result-store s3://results/cluster
            --upload-dir s3://uploads/cluster)
        read -r -a keys <"$CLUSTER_DIR/conf/s3.keys"
    fi
    # shellcheck disable=SC2086
    start_bg "osprey-$i" "$i" env "${keys[@]}" "$bin" serve --host "$(inst_bind $i)" --port "$(inst_port $i)" \
        --cache-dir "$CLUSTER_DIR/cache/$i" --workers "$OSPREY_WORKERS" --queue "$OSPREY_QUEUE" \
        --instance-name "osprey-$i" --drain-seconds "${OSPREY_DRAIN_SECONDS:-2}" \
        --upload --upload-put --upload-delete "${storage[@]}" \
        $SOURCE_FLAGS $EXTRA_SERVE_ARGS
    wait_http "http://$(inst_addr $i)/health/ready" 60
}

stop_pid() {  # name signal
    local f; f=$(pidfile "$1")
    [[ -f $f ]] || return 0
    local pid; pid=$(cat "$f")
    kill "-$2" "$pid" 2>/dev/null || true
    local n=0
    while kill -0 "$pid" 2>/dev/null && ((n < 150)); do sleep 0.1; n=$((n + 1)); done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$f"
}

start_store() {  # moto with signature checks on, its buckets and key (conf/s3.keys)
    local venv
    venv=$(bash "$ROOT/scripts/s3-venv.sh")
    start_bg moto o env INITIAL_NO_AUTH_ACTION_COUNT=3 "$venv/bin/moto_server" -H "${S3_ADDR%:*}" -p "${S3_ADDR##*:}"
    wait_http "http://$S3_ADDR/moto-api/" 60
    in_ns c "$venv/bin/python" "$ROOT/Tests/S3/moto_setup.py" "http://$S3_ADDR" results uploads \
        | python3 -c 'import json,sys; k=json.load(sys.stdin); print("AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s" % (k["accessKeyID"], k["secretAccessKey"]))' \
        >"$CLUSTER_DIR/conf/s3.keys"
}

up() {
    down >/dev/null 2>&1 || true
    [[ -d $ORIGIN_DIR ]] || { echo "cluster: no origin directory $ORIGIN_DIR (run deploy/make-origin.sh)" >&2; exit 1; }
    mkdir -p "$CLUSTER_DIR"/{conf,log,run,tmp,cache,nginx-cache}
    rm -rf "$CLUSTER_DIR"/nginx-cache/* "$CLUSTER_DIR"/cache/* "$CLUSTER_DIR"/log/* "$CLUSTER_DIR"/uploads
    osprey_bin >/dev/null
    net_up
    write_origin_conf; write_lb_conf
    start_bg origin o nginx -c "$CLUSTER_DIR/conf/origin.conf"
    [[ ${S3_STORE:-0} == 1 ]] && start_store
    local i
    for ((i = 1; i <= INSTANCES; i++)); do start_instance "$i"; done
    start_bg lb lb nginx -c "$CLUSTER_DIR/conf/lb.conf"
    wait_http "http://$ORIGIN_ADDR/img/" 20 || true
    wait_http "http://$LB_ADDR/nginx-health" 20
    echo "cluster up ($CLUSTER_NET): nginx http://$LB_ADDR (one instance, no cache: http://$SINGLE_ADDR), origin http://$ORIGIN_ADDR, instances: $(export_urls; echo "$INSTANCE_URLS")"
}

down() {
    local f name
    if [[ -d $CLUSTER_DIR/run ]]; then
        for f in "$CLUSTER_DIR"/run/*.pid; do
            [[ -e $f ]] || continue
            name=$(basename "$f" .pid)
            case $name in *-nginx) continue ;; esac
            stop_pid "$name" TERM
        done
    fi
    net_down
}

status() {
    local f
    for f in "$CLUSTER_DIR"/run/*.pid; do
        [[ -e $f ]] || continue
        case $f in *-nginx.pid) continue ;; esac   # nginx's own pid files (same processes)
        local pid; pid=$(cat "$f")
        if kill -0 "$pid" 2>/dev/null; then echo "$(basename "$f" .pid) pid $pid running"; else echo "$(basename "$f" .pid) pid $pid dead"; fi
    done
    export_urls; env | grep -E '^(LB_URL|SINGLE_URL|ORIGIN_URL|INSTANCE_URLS)=' | sort
}

cmd=${1:-}; shift || true
case $cmd in
    up) up ;;
    down) down ;;
    status) status ;;
    kill) stop_pid "osprey-$1" KILL ;;
    stop) stop_pid "osprey-$1" TERM ;;
    start) start_instance "$1" ;;
    client) export_urls; in_ns c "$@" ;;
    env) export_urls; echo "LB_URL=$LB_URL SINGLE_URL=$SINGLE_URL ORIGIN_URL=$ORIGIN_URL INSTANCE_URLS='$INSTANCE_URLS'" ;;
    *) sed -n '2,30p' "$0"; exit 2 ;;
esac
