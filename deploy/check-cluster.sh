#!/usr/bin/env bash
# The cluster test: makes the origin's images, starts the cluster (deploy/cluster.sh up), runs
# deploy/check_cluster.py where a client runs, stops everything (also on error or Ctrl-C).
#   OSPREY_BIN=/path/to/osprey deploy/check-cluster.sh [correctness] [failover] [throughput] [sigterm] [uploads]
# Needs: nginx, the vips CLI (libvips-tools), python3, curl; wrk optional; root for the network
# namespaces (else CLUSTER_NET=loopback). Figures are printed as JSON; exit 1 when a check fails.
# Bounded: phase 1 is SOURCES*5*3*COPIES requests, phase 2 at most FAILOVER_SECONDS, phase 3 two
# runs of SOURCES requests and 2 x 5 s of wrk; the whole script is killed after CHECK_TIMEOUT s.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export CLUSTER_DIR=${CLUSTER_DIR:-/tmp/osprey-cluster}
export ORIGIN_DIR=${ORIGIN_DIR:-$CLUSTER_DIR/origin}
CHECK_TIMEOUT=${CHECK_TIMEOUT:-900}
if [[ -z "${OSPREY_BIN:-}" ]]; then
    (cd "$HERE/.." && swift build -c release --product osprey)
    OSPREY_BIN="$(cd "$HERE/.." && swift build -c release --show-bin-path)/osprey"
fi
export OSPREY_BIN
for tool in nginx vipsheader python3 curl; do
    command -v "$tool" >/dev/null || { echo "check-cluster: needs $tool" >&2; exit 2; }
done
trap 'bash "$HERE/cluster.sh" down >/dev/null 2>&1 || true' EXIT INT TERM
bash "$HERE/make-origin.sh" "$ORIGIN_DIR"
bash "$HERE/cluster.sh" up
timeout --signal=TERM "$CHECK_TIMEOUT" bash "$HERE/cluster.sh" client python3 "$HERE/check_cluster.py" "$@" \
    | tee "$CLUSTER_DIR/report.json"
