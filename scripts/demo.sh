#!/usr/bin/env bash
# make demo: the main job end to end on loopback. A control plane's side is
# played by kjoin's own companion commands and Debian's nginx; the node's
# side is `kjoin join`; kubectl then uses the kubeconfig it wrote.
set -euo pipefail
source "$(dirname "$0")/../tests/integration/lib.sh"

d=$(mktemp -d)
trap 'stop_nginx "$d"; rm -rf "$d"' EXIT
export KUBECACHEDIR=$d/kube-cache # kubectl's cache goes with the demo, not into ~/.kube
# Bold headings only on a terminal, and never with NO_COLOR (https://no-color.org).
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
  step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
  step() { printf '\n== %s\n' "$*"; }
fi
show() { printf '$ %s\n' "$*" >&2; "$@"; }

step "Control plane: a CA and a serving certificate for 127.0.0.1 (openssl)"
mkca "$d" kubernetes
mkleaf "$d" apiserver kubernetes
port=$("$TOOLS/freeport")
echo "API server endpoint: 127.0.0.1:$port"

step "Control plane: a bootstrap token, kept in a file so it stays out of ps"
"$KJOIN" token generate >"$d/token"
chmod 600 "$d/token"
echo "token id: $(cut -d. -f1 "$d/token") (the secret is not shown)"

step "Control plane: sign cluster-info for that token, as the bootstrap signer does"
cluster_kubeconfig "https://127.0.0.1:$port" "$d/kubernetes.crt" >"$d/cluster.kubeconfig"
mkdir -p "$d/www"
show "$KJOIN" cluster-info sign --kubeconfig "$d/cluster.kubeconfig" --token-file "$d/token" >"$d/www/cluster-info"
head -c 160 "$d/www/cluster-info"; echo " ..."

step "Control plane: serve it over TLS with nginx on 127.0.0.1:$port"
start_nginx "$d" "$port" "$d/apiserver.crt" "$d/apiserver.key"

step "Control plane: the pin to hand to joining nodes"
show "$KJOIN" ca-hash "$d/kubernetes.crt"
pin=$("$KJOIN" ca-hash --only sha256 "$d/kubernetes.crt")

step "Node: join"
show "$KJOIN" join --skip-phases preflight,kubelet-start "127.0.0.1:$port" --token-file "$d/token" \
  --discovery-token-ca-cert-hash "$pin" --kubeconfig-out "$d/etc/kubernetes/bootstrap-kubelet.conf"
ls -l "$d/etc/kubernetes/bootstrap-kubelet.conf"
sed "s/token: .*/token: $(cut -d. -f1 "$d/token").****************   # (masked for the demo)/" \
  "$d/etc/kubernetes/bootstrap-kubelet.conf" | sed 's/\(certificate-authority-data: .\{40\}\).*/\1.../'

step "Node: kubectl uses the written kubeconfig (TLS verified against the pinned CA)"
show kubectl --kubeconfig "$d/etc/kubernetes/bootstrap-kubelet.conf" get --raw \
  /api/v1/namespaces/kube-public/configmaps/cluster-info | head -c 160; echo " ..."

step "Node: a second run is idempotent"
show "$KJOIN" join --skip-phases preflight,kubelet-start "127.0.0.1:$port" --token-file "$d/token" \
  --discovery-token-ca-cert-hash "$pin" --kubeconfig-out "$d/etc/kubernetes/bootstrap-kubelet.conf" -o json

step "Done: nginx stopped, temporary files removed"
