#!/usr/bin/env bash
# make bench: N joins against nginx on loopback beside the floor, one curl
# process making the same two requests (unverified, then verified with the
# CA). Prints median and p90 wall time and peak RSS, and the ratios to the
# targets (median within 1.3x of curl, peak RSS within 2 MiB of curl's).
# A benchmark, not a test: it reports, it does not fail on the figures.
set -euo pipefail
source "$(dirname "$0")/../integration/lib.sh"
N=${BENCH_N:-200}

d=$(mktemp -d)
trap 'stop_nginx "$d"; rm -rf "$d"' EXIT
setup_cluster "$d"
url="https://127.0.0.1:$PORT$CLUSTER_INFO_PATH"
join=("$KJOIN" join "127.0.0.1:$PORT" --token-file "$d/token" --discovery-token-ca-cert-hash "$PIN"
      --kubeconfig-out "$d/out/kubelet.conf")
floor=(curl -sk "$url" --next --cacert "$d/ca.crt" "$url")

"${join[@]}" >/dev/null 2>&1   # first run writes; the rest are idempotent re-runs
for i in 1 2 3; do "$TOOLS/measure" 5 "${join[@]}" >/dev/null; "$TOOLS/measure" 5 "${floor[@]}" >/dev/null; done

echo "kjoin $("$KJOIN" version | cut -d' ' -f2), $N runs each, nginx on 127.0.0.1:$PORT, $(nproc) cores"
k=$("$TOOLS/measure" "$N" "${join[@]}")
c=$("$TOOLS/measure" "$N" "${floor[@]}")
printf '%-42s %s\n' "kjoin join (2 TLS requests + checks)" "$k" "curl -sk URL --next --cacert CA URL" "$c"
get() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" <<<"$2"; }
awk -v km="$(get median_ms "$k")" -v cm="$(get median_ms "$c")" \
    -v kr="$(get peak_rss_kib "$k")" -v cr="$(get peak_rss_kib "$c")" 'BEGIN {
  printf "median: kjoin/curl = %.2fx (target <= 1.30x)\n", km / cm
  printf "peak RSS: kjoin - curl = %+d KiB (target <= +2048 KiB)\n", kr - cr }'
