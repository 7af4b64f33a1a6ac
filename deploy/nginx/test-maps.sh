#!/usr/bin/env bash
# Checks osprey-maps.conf: runs nginx on a loopback port with the maps and compares
# $osprey_source / $osprey_accept_class for sample URLs and Accept headers. Needs nginx, curl.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PORT=${PORT:-18999}
T=$(mktemp -d)
cat >"$T/nginx.conf" <<CONF
daemon off; worker_processes 1; pid $T/nginx.pid; error_log $T/error.log;
events {}
http { include $HERE/osprey-maps.conf; access_log off;
  client_body_temp_path $T/b; proxy_temp_path $T/p; fastcgi_temp_path $T/f; uwsgi_temp_path $T/u; scgi_temp_path $T/s;
  server { listen 127.0.0.1:$PORT; location / { return 200 "\$osprey_source|\$osprey_accept_class"; } } }
CONF
nginx -c "$T/nginx.conf" & NPID=$!
trap 'kill $NPID 2>/dev/null; wait $NPID 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.1; done
fails=0
check() {  # uri accept expected
    local got; got=$(curl -s -H "Accept: $2" "http://127.0.0.1:$PORT$1")
    if [[ $got == "$3" ]]; then echo "ok   $1 [$2] -> $got"; else echo "FAIL $1 [$2] -> $got, expected $3"; fails=$((fails + 1)); fi
}
check "/unsafe/300x200/http://a.com/x.jpg" "" "http:/a.com/x.jpg|legacy"
check "/AbCdEfGhIjKlMnOpQrStUvWxYz0=/fit-in/-300x-200/left/top/smart/filters:format(webp):quality(80)/http://a.com/x.jpg" "" "http:/a.com/x.jpg|legacy"
check "/unsafe/trim/10x20:300x400/full-fit-in/x200/filters:blur(2)/a.com/dir/x.jpg?v=1" "" "a.com/dir/x.jpg|legacy"
check "/unsafe/origxorig/http%3A%2F%2Fa.com%2Fx.jpg" "" "http:/a.com/x.jpg|legacy"
check "/unsafe/0x0/center/middle/https://a.com/x.jpg" "" "https:/a.com/x.jpg|legacy"
check "/imgproxy/SIG/rs:fill:300:200/g:sm/plain/http://a.com/x.jpg@webp" "" "http:/a.com/x.jpg|legacy"
check "/imgproxy/SIG/plain/http://a.com/x.jpg" "" "http:/a.com/x.jpg|legacy"
check "/imgproxy/SIG/pr:thumb/aHR0cDovL2EuY29tL3guanBn.webp" "" "aHR0cDovL2EuY29tL3guanBn|legacy"
check "/imgproxy/SIG/w:300/aHR0cDovL2E/uY29tL3guanBn" "" "aHR0cDovL2E/uY29tL3guanBn|legacy"
check "/image/0123456789abcdef0123456789abcdef/photo.jpg" "" "0123456789abcdef0123456789abcdef|legacy"
check "/unsafe/300x200/0123456789abcdef0123456789abcdef" "" "0123456789abcdef0123456789abcdef|legacy"
check "/image" "" "/image|legacy"
check "/x" "image/avif,image/webp,*/*" "/x|avif"
check "/x" "image/webp,*/*" "/x|webp"
check "/x" "image/avif;q=0,image/webp" "/x|webp"
check "/x" "image/avif;q=0.0, image/webp;q=0" "/x|legacy"
check "/x" "*/*" "/x|legacy"
((fails == 0)) || { echo "$fails failed"; exit 1; }
echo "all map checks passed"
