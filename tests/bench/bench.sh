#!/usr/bin/env bash
# make bench: kjoin against its floor, on loopback with Debian's nginx. The
# floor is one curl process making the same two requests (unverified, then
# verified with the CA). Runs are interleaved (kjoin, curl, kjoin, ...) and
# every kjoin run writes a fresh output path. Rows:
#   join          median, p90, peak RSS and instructions against curl
#   bundle N      the same with a cluster-info CA bundle of N chained
#                 certificates, listed leaf-most first (N = 1, 10, 100)
#   1 MiB         a cluster-info of about 1 MiB: peak RSS against curl
#   silent        15 endpoints that accept TCP and never answer, then a good one
#   herd          HERD clients at once against cluster-info that is 403, then
#                 404, then there: requests and handshakes per client, and
#                 the last join after the data appeared, beside kubeadm's
#                 fixed 5 s poll on the same timeline
#   worker        kjoin join against kubeadm join to the Node registered, on
#                 the newest control plane with containerd and the kubelet
#                 (tests/bench/node.sh)
#   download-certs  kjoin's control-plane download-certs against kubeadm's,
#                 from one kubeadm-certs Secret (tests/bench/certs.sh)
#   control-plane kjoin join --control-plane against kubeadm join
#                 --control-plane, each on a fresh booted node of the node lab
#                 joining one cluster of kubeadm init, to the node's four
#                 components answering, with peak RSS (tests/lab/t_ha.sh)
#   herd-api      BENCH_HERD nodes (100) at once on each release's API server
#                 with API Priority and Fairness rejecting: kjoin's discovery
#                 and TLS bootstrap against kubeadm's discovery code and the
#                 kubelet's TLS bootstrap (tests/bench/herd.sh)
#   herd-bound    the same herd with a token each: kubeadm's group (the
#                 controller manager approves) against tokens bound to their
#                 node (kjoin approver approves): the last identity of each,
#                 their ratio, the approver's requests and peak RSS
# A benchmark, not a test: it reports the figures and the targets, and fails
# only when a run fails. BENCH_N runs per row (200), HERD clients (200).
set -euo pipefail
source "$(dirname "$0")/../integration/lib.sh"
N=${BENCH_N:-200}
HERD=${HERD:-200}
OUTAGE=${OUTAGE:-10}    # seconds: 403 for the first half, then 404
export NGINX_REGISTRY

d=$(mktemp -d)
NGINX_REGISTRY=$d/registry
SILENT_PID=
cleanup() {
  [ -n "$SILENT_PID" ] && kill "$SILENT_PID" 2>/dev/null && wait "$SILENT_PID" 2>/dev/null
  stop_registered "$d" || echo "bench: the processes above were left running and are now killed" >&2
  rm -rf "$d"
}
trap cleanup EXIT
have_valgrind=$(command -v valgrind || true)

# instructions CMD...: instructions one run executes (valgrind), or "-".
instructions() {
  [ -n "$have_valgrind" ] || { echo -; return; }
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

get() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" <<<"$2"; }

# row LABEL DIR CA_FILE RUNS: kjoin and curl, interleaved, against DIR's server.
row() {
  local label=$1 dir=$2 ca=$3 runs=$4
  local url="https://127.0.0.1:$PORT$CLUSTER_INFO_PATH"
  local join=("$KJOIN" join --skip-phases preflight,kubelet-start "127.0.0.1:$PORT" --token-file "$dir/token" --discovery-token-ca-cert-hash "$PIN"
              --kubeconfig-out "$dir/out/{n}/kubelet.conf")
  local floor=(curl -sk "$url" --next --cacert "$ca" "$url")
  "$TOOLS/measure" 5 "${join[@]}" ::: "${floor[@]}" >/dev/null
  rm -rf "$dir/out"
  local m; m=$("$TOOLS/measure" "$runs" "${join[@]}" ::: "${floor[@]}")
  local k c; k=$(sed -n 1p <<<"$m"); c=$(sed -n 2p <<<"$m")
  rm -rf "$dir/out"
  local ki ci; ki=$(instructions "${join[@]/\{n\}/x}"); ci=$(instructions "${floor[@]}")
  awk -v l="$label" -v km="$(get median_ms "$k")" -v cm="$(get median_ms "$c")" \
      -v kp="$(get p90_ms "$k")" -v cp="$(get p90_ms "$c")" \
      -v kr="$(get peak_rss_kib "$k")" -v cr="$(get peak_rss_kib "$c")" -v ki="$ki" -v ci="$ci" 'BEGIN {
    ir = (ki == "-" || ci == "-") ? "-" : sprintf("%.2fx", ki / ci)
    printf "%-12s kjoin %6.2f ms (p90 %6.2f)  curl %6.2f ms (p90 %6.2f)  time %.2fx  RSS %+6d KiB  instr %s (%s / %s)\n",
           l, km, kp, cm, cp, km / cm, kr - cr, ir, ki, ci }'
}

# serve DIR CA_BUNDLE [PAD_BYTES]: a cluster whose cluster-info names
# CA_BUNDLE (its first certificate's issuer chain ends at DIR/../main's ca),
# served with main's server certificate; PAD_BYTES of YAML comment make the
# cluster-info bigger. Sets PORT.
serve() {
  local dir=$1 bundle=$2 pad=${3:-0}
  mkdir -p "$dir/www"
  cp "$d/main/token" "$dir/token"
  PORT=$("$TOOLS/freeport")
  { cluster_kubeconfig "https://127.0.0.1:$PORT" "$bundle"
    [ "$pad" -gt 0 ] && head -c "$pad" /dev/zero | tr '\0' x | fold -w 100 | sed 's/^/# /'; true; } >"$dir/cluster.kubeconfig"
  "$KJOIN" cluster-info sign --kubeconfig "$dir/cluster.kubeconfig" --token-file "$dir/token" >"$dir/www/cluster-info"
  start_nginx "$dir" "$PORT" "$d/main/server.crt" "$d/main/server.key"
}

# chain DIR N: N certificates, the pinned root first issuing the next, each
# issuing the next; DIR/chain.pem lists them leaf-most first.
chain() {
  local dir=$1 n=$2 i prev=ca
  mkdir -p "$dir"; cp "$d/main/ca.crt" "$d/main/ca.key" "$dir/"
  cp "$dir/ca.crt" "$dir/chain.pem"
  for i in $(seq 2 "$n"); do
    mkca "$dir" "i$i" "$prev"
    cat "$dir/i$i.crt" "$dir/chain.pem" >"$dir/chain.tmp" && mv "$dir/chain.tmp" "$dir/chain.pem"
    prev=i$i
  done
}

setup_cluster "$d/main"
MAIN_PORT=$PORT
echo "kjoin $("$KJOIN" version | cut -d' ' -f2), $N runs per row, nginx on 127.0.0.1, $(nproc) cores"
echo "targets: time <= 0.90x curl, RSS <= +1024 KiB, instructions <= 2x curl at 100 certificates"
row join "$d/main" "$d/main/ca.crt" "$N"

for n in 1 10 100; do
  chain "$d/chain$n" "$n"
  serve "$d/chain$n" "$d/chain$n/chain.pem"
  row "bundle $n" "$d/chain$n" "$d/chain$n/chain.pem" $((N / 4 > 10 ? N / 4 : 10))
done

serve "$d/big" "$d/main/ca.crt" 990000
row "1 MiB" "$d/big" "$d/main/ca.crt" $((N / 4 > 10 ? N / 4 : 10))
printf '%-12s cluster-info %d bytes\n' "" "$(stat -c %s "$d/big/www/cluster-info")"

# 15 silent endpoints before the good one.
PORT=$MAIN_PORT
silent_listeners 15 "$d/silent"
eps=(); for p in $(cat "$d/silent"); do eps+=("127.0.0.1:$p"); done
one=("$KJOIN" join --skip-phases preflight,kubelet-start "127.0.0.1:$PORT" --token-file "$d/main/token" --discovery-token-ca-cert-hash "$PIN"
     --kubeconfig-out "$d/main/s/{n}/k.conf")
raced=("$KJOIN" join --skip-phases preflight,kubelet-start "${eps[@]}" "127.0.0.1:$PORT" --token-file "$d/main/token" --discovery-token-ca-cert-hash "$PIN"
       --kubeconfig-out "$d/main/s/{n}/k.conf")
m=$("$TOOLS/measure" 5 "${raced[@]}" ::: "${one[@]}")
awk -v r="$(get median_ms "$(sed -n 1p <<<"$m")")" -v o="$(get median_ms "$(sed -n 2p <<<"$m")")" 'BEGIN {
  printf "%-12s 15 silent + 1 good: %.0f ms; one good join %.1f ms + 15 x 250 ms stagger = %.0f ms (before: 15 x 10 s)\n",
         "silent", r, o, o + 3750 }'
kill "$SILENT_PID"; wait "$SILENT_PID" 2>/dev/null || true; SILENT_PID=

# The herd.
h=$d/herd; mkdir -p "$h/www" "$h/runs"
cp "$d/main/token" "$h/token"
PORT=$("$TOOLS/freeport")
cluster_kubeconfig "https://127.0.0.1:$PORT" "$d/main/ca.crt" >"$h/cluster.kubeconfig"
"$KJOIN" cluster-info sign --kubeconfig "$h/cluster.kubeconfig" --token-file "$h/token" >"$h/cluster-info"
mkdir -p "$h/nginx"
echo "if (-f $h/www/forbidden) { return 403; }" >"$h/nginx/cluster-info.conf"
touch "$h/www/forbidden"
NGINX_CONNECTIONS=$((HERD * 2 + 64)) start_nginx "$h" "$PORT" "$d/main/server.crt" "$d/main/server.key"
now() { date +%s.%N; }
t0=$(now)
pids=()
for i in $(seq "$HERD"); do
  ( s=$(now); "$KJOIN" join --skip-phases preflight,kubelet-start "127.0.0.1:$PORT" --token-file "$h/token" --discovery-token-ca-cert-hash "$PIN" \
      --kubeconfig-out "$h/runs/$i/k.conf" --discovery-timeout 60s >/dev/null 2>&1; echo "$? $s $(now)" >"$h/runs/$i.done" ) &
  pids+=($!)
done
sleep "$(awk -v o="$OUTAGE" 'BEGIN { print o / 2 }')"
rm -f "$h/www/forbidden"                        # 404: the ConfigMap is not there yet
sleep "$(awk -v o="$OUTAGE" -v t0="$t0" -v t="$(now)" 'BEGIN { w = t0 + o - t; print (w > 0 ? w : 0) }')"
mv "$h/cluster-info" "$h/www/cluster-info"; ready=$(now)
for p in "${pids[@]}"; do wait "$p" || true; done
failed=$(cat "$h"/runs/*.done | awk '$1 != 0' | wc -l)
awk -v ready="$ready" -v clients="$HERD" -v failed="$failed" '
  # The busiest 100 ms: how bunched the requests arrive (lock-step puts every client in one).
  function bucket(t, counts,   b) { b = int((t - ready) * 10 + 1000); counts[b]++ }  # mawk: int() of small numbers only
  function busiest(counts,   b, m) { m = 0; for (b in counts) if (counts[b] > m) m = counts[b]; return m }
  FILENAME ~ /conn.log$/ { req[$1]++; if (!seen[$1 " " $2]++) hs[$1]++; total++; bucket($6, kb); next }
  { s = $2; e = $3; if (e - ready > last) last = e - ready
    # kubeadm: a GET at s, s+5, ... until one after the data, then its second GET.
    k = 0; while (s + 5 * k < ready) { bucket(s + 5 * k, kub); k++ }
    bucket(s + 5 * k, kub); bucket(s + 5 * k, kub)
    kreq += k + 1; klast = (s + 5 * k - ready > klast) ? s + 5 * k - ready : klast }
  END {
    for (c in req) { n++; if (req[c] > maxreq) maxreq = req[c]; if (hs[c] > maxhs) maxhs = hs[c] }
    printf "%-12s %d clients (%d failed), %d requests (%.1f per client, at most %d), handshakes per client at most %d; last join %.2f s after the data; busiest 100 ms: %d requests\n",
           "herd", clients, failed, total, total / clients, maxreq, maxhs, last, busiest(kb)
    printf "%-12s kubeadm fixed 5 s poll on the same timeline: %d requests, last join %.2f s after the data; busiest 100 ms: %d requests (lock-step)\n",
           "", kreq + clients, klast, busiest(kub) }' "$h/nginx/conn.log" "$h"/runs/*.done

# The whole worker join against kubeadm's, to the Node registered (tests/bench/node.sh).
bash "$(dirname "$0")/node.sh"

# The control-plane join's download-certs against kubeadm's (tests/bench/certs.sh).
bash "$(dirname "$0")/certs.sh"

# The whole control-plane join against kubeadm's, on the node lab (tests/lab/t_ha.sh).
E2E_RELEASE=newest LAB_PREFIX=bench_lab_ E2E_NAME=bench-lab KJOIN="$KJOIN" TOOLS="$TOOLS" \
  bash "$(dirname "$0")/../lab/run.sh" | grep -v -e '^ok ' -e ': 1 passed, 0 failed$'

# A herd on the real API servers (tests/bench/herd.sh).
bash "$(dirname "$0")/herd.sh"
