#!/usr/bin/env bash
# make bench, the download-certs row: `kjoin join phase
# control-plane-prepare/download-certs` against `kubeadm join phase
# control-plane-prepare download-certs` (the newest release built for the
# tests), on the same control plane, from the same kube-system/kubeadm-certs
# Secret (kubeadm's own upload-certs), interleaved, each run into a fresh
# certificates directory (the cluster's certificatesDir points into this
# run's scratch root, so nothing of the machine's is touched). Reports the
# median and p90 of each and their peak RSS. BENCH_CERTS_RUNS runs each (20).
# A second row adds the certs step: the node's own seven pairs, each tool's
# two runs (download-certs, then certs) against kubeadm's two. (The
# kubeconfig step writes into /etc/kubernetes, which a benchmark on this
# machine must not touch.)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# Both tools write under /etc/kubernetes too (kjoin its control-plane record,
# kubeadm its files): the row runs in a mount namespace of its own where /etc
# is a copy-on-write view, so the machine's /etc is never touched.
if [ -z "${BENCH_CERTS_VIEW:-}" ]; then
  view=$(mktemp -d)
  mkdir -p "$view/upper" "$view/work"
  BENCH_CERTS_VIEW=$view unshare --mount --propagation private bash -c \
    'mount -t overlay overlay -o lowerdir=/etc,upperdir="$0/upper",workdir="$0/work" /etc && exec bash "$1"' "$view" "$0"
  rc=$?
  rm -rf "$view"
  exit $rc
fi
source "$here/cluster.sh"
source "$here/../e2e/t_node.sh"
source "$here/../e2e/t_controlplane.sh"
RUNS=${BENCH_CERTS_RUNS:-20}
current=bench-certs
bench_node_cluster # kubeadm's download reads the kubelet's ConfigMap too
pki=$ROOT/pki
{ cat "$E2E_DIR/kubeadm.yaml"; echo "certificatesDir: $pki"; } >"$T/kubeadm-pki.yaml"
"$KBIN/kubeadm" init phase upload-config kubeadm --config "$T/kubeadm-pki.yaml" --kubeconfig "$E2E_ADMIN" >"$T/upload-config.log" 2>&1 ||
  { echo "bench: kubeadm upload-config: $(tail -2 "$T/upload-config.log")" >&2; exit 1; }
cp_shared_pki "$T/src" && cp_upload "$T/src" || { echo "bench: kubeadm upload-certs failed" >&2; exit 1; }
printf '%s\n' "$CP_KEY" >"$T/key" && chmod 0600 "$T/key"
args=("$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" --control-plane)
kjoin_run=(sh -c 'rm -rf "$0" && exec "$@"' "$pki" "$KJOIN" join phase control-plane-prepare/download-certs "${args[@]}"
           --certificate-key-file "$T/key" -q)
kubeadm_run=(sh -c 'rm -rf "$0" && exec "$@" >/dev/null' "$pki" "$KBIN/kubeadm" join phase control-plane-prepare download-certs
             "${args[@]}" --certificate-key "$CP_KEY")
"${kjoin_run[@]}" && cmp -s "$T/src/etcd/ca.key" "$pki/etcd/ca.key" || { echo "bench: kjoin's download-certs failed" >&2; exit 1; }
"${kubeadm_run[@]}" && cmp -s "$T/src/etcd/ca.key" "$pki/etcd/ca.key" || { echo "bench: kubeadm's download-certs failed" >&2; exit 1; }
get() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" <<<"$2"; }
row() { # TITLE: measure kjoin_run against kubeadm_run and print the row
  local m k a
  m=$("$TOOLS/measure" "$RUNS" "${kjoin_run[@]}" ::: "${kubeadm_run[@]}") || { echo "bench: a run failed" >&2; exit 1; }
  k=$(sed -n 1p <<<"$m"); a=$(sed -n 2p <<<"$m")
  awk -v km="$(get median_ms "$k")" -v am="$(get median_ms "$a")" -v kp="$(get p90_ms "$k")" -v ap="$(get p90_ms "$a")" \
      -v kr="$(get peak_rss_kib "$k")" -v ar="$(get peak_rss_kib "$a")" -v v="$E2E_VERSION" -v n="$RUNS" -v t="$1" 'BEGIN {
    printf "%s %s, %d runs each: kjoin %.1f ms (p90 %.1f), kubeadm %.1f ms (p90 %.1f): time %.2fx; peak RSS kjoin %d KiB, kubeadm %d KiB (%.2fx)\n",
           t, v, n, km, kp, am, ap, km / am, kr, ar, kr / ar }'
}
row download-certs
node=(--node-name cp-bench --apiserver-advertise-address 192.0.2.2)
kjoin_run=(bash -c 'rm -rf "$0" && "$1" join phase control-plane-prepare/download-certs "${@:3}" --certificate-key-file "$2" &&
           exec "$1" join phase control-plane-prepare/certs "${@:3}"' "$pki" "$KJOIN" "$T/key" "${args[@]}" -q "${node[@]}")
kubeadm_run=(bash -c 'rm -rf "$0" && "$1" join phase control-plane-prepare download-certs "${@:4}" --certificate-key "$2" >/dev/null &&
             exec "$1" join phase control-plane-prepare certs "${@:4}" --node-name cp-bench --apiserver-advertise-address 192.0.2.2 >/dev/null'
             "$pki" "$KBIN/kubeadm" "$CP_KEY" _ "${args[@]}")
"${kjoin_run[@]}" && [ -s "$pki/etcd/peer.key" ] || { echo "bench: kjoin's prepare failed" >&2; exit 1; }
"${kubeadm_run[@]}" && [ -s "$pki/etcd/peer.key" ] || { echo "bench: kubeadm's prepare failed" >&2; exit 1; }
row "download-certs + certs"
