#!/usr/bin/env bash
# The main job: build the osprey CLI and run images through the whole pipeline, with no internet:
# the repository's sample image over file:// (and over HTTP from a loopback origin this script
# starts when python3 is present, also through `osprey serve` when curl is too). Results go to ./out/.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

swift build --product osprey
osprey="$(swift build --product osprey --show-bin-path)/osprey"
rm -rf out && mkdir -p out
sample="file://$(pwd)/Examples/sample.jpg"
spec="resize:320x200:fill,round:24,format:webp:80"

echo "==> osprey info Examples/sample.jpg"
"$osprey" info Examples/sample.jpg

echo "==> osprey fetch (first time: loaded, decoded, processed, cached)"
"$osprey" fetch "$sample" --process "$spec" --cache-dir out/cache --out out/processed
echo "==> osprey fetch again (served from the disk cache)"
"$osprey" fetch "$sample" --process "$spec" --cache-dir out/cache --json
echo "==> osprey fetch with another processor (the cached original is reused, nothing is loaded)"
"$osprey" fetch "$sample" --process "downsample:400x400,grayscale,border:6:ff6600,format:png" --cache-dir out/cache --out out/processed

if command -v python3 >/dev/null 2>&1; then
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
    python3 -m http.server "$port" --bind 127.0.0.1 --directory Examples >/dev/null 2>&1 &
    origin=$!
    trap 'kill $origin 2>/dev/null || true' EXIT
    for _ in $(seq 50); do python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/sample.jpg')" 2>/dev/null && break; sleep 0.1; done
    echo "==> osprey fetch over HTTP from a loopback origin (duplicates share one download)"
    "$osprey" fetch "http://127.0.0.1:$port/sample.jpg" "http://127.0.0.1:$port/sample.jpg" --process "thumbnail:128" --cache-dir out/cache --out out/processed
fi

if command -v python3 >/dev/null 2>&1 && command -v curl >/dev/null 2>&1; then
    echo "==> osprey serve: a thumbor-signed URL (libthumbor's algorithm) from a loopback origin"
    key="demo-thumbor-key"
    "$osprey" serve --port 0 --allow-loopback-sources --cache-dir out/serve-cache --thumbor-key "$key" > out/serve.log 2>&1 &
    server=$!
    trap 'kill $origin $server 2>/dev/null || true' EXIT
    for _ in $(seq 100); do grep -q "listening on" out/serve.log 2>/dev/null && break; sleep 0.1; done
    base=$(grep -o 'http://[0-9.:]*' out/serve.log | head -1)
    # What libthumbor's CryptoURL(key).generate(width=300, height=200, smart=True, image_url=...) makes:
    # HMAC-SHA1 of the path after the signature, URL-safe base64 with padding.
    path="300x200/smart/http://127.0.0.1:$port/sample.jpg"
    signature=$(python3 -c 'import base64,hashlib,hmac,sys; print(base64.urlsafe_b64encode(hmac.new(sys.argv[1].encode(), sys.argv[2].encode(), hashlib.sha1).digest()).decode())' "$key" "$path")
    echo "GET $base/$signature/$path"
    curl -sS -o out/served.webp -D - -H "Accept: image/webp,image/*" "$base/$signature/$path" | grep -iE '^(HTTP|content-type|vary|etag|cache-control)'
    "$osprey" info out/served.webp
    echo "GET again with If-None-Match (304, nothing processed):"
    etag=$(curl -sS -D - -o /dev/null -H "Accept: image/webp,image/*" "$base/$signature/$path" | grep -i '^etag:' | cut -d' ' -f2 | tr -d '\r')
    curl -sS -o /dev/null -w '%{http_code}\n' -H "Accept: image/webp,image/*" -H "If-None-Match: $etag" "$base/$signature/$path"
    echo "GET a tampered URL (403 with a one-line reason):"
    curl -sS "$base/$signature/301x200/smart/http://127.0.0.1:$port/sample.jpg"
    kill -TERM $server && wait $server || true
fi

echo "==> osprey cache stats"
"$osprey" cache stats --cache-dir out/cache
echo "==> osprey convert (no cache): blur and rotate to PNG"
"$osprey" convert Examples/sample.jpg out/sample-rotated.png --thumbnail 300 --process "blur:1.5,rotate:90"
echo "processed images: $(pwd)/out/processed, disk cache: $(pwd)/out/cache"
