#!/usr/bin/env bash
# e2e tests: kjoin against the real control plane (tests/e2e/cluster.sh):
# kube-apiserver, kube-controller-manager with the bootstrap signer and token
# cleaner, and cluster-info and RBAC made by the real kubeadm.
set -uo pipefail
# A network namespace of the suite's own: the kubelets and the control
# plane it runs take no port of the machine's (10248, 10250, 6443), and none
# the machine runs is theirs. Besides loopback it has one interface of its
# own (a veth pair: the kernel here has no dummy device) with the node's addresses the tests use (192.0.2.2, fd00::2) and the
# default routes kubeadm picks an address from; every other address is
# unreachable by a more specific route, so a connection elsewhere (the
# resolver's included) fails at once instead of vanishing down the veth
# (none of them starts at 0.0.0.0: kubeadm takes any such route for a
# default and looks for its interface).
if [ -z "${KJOIN_E2E_NETNS:-}" ]; then
  # What the run's release needs is built (or found cached) here, first:
  # inside the namespace no module proxy or archive can be reached.
  ( source "$(dirname "$0")/cluster.sh" && e2e_bins ) ||
    { echo "e2e: no control plane binaries for ${E2E_RELEASE:-oldest} (run 'make deps')" >&2; exit 1; }
  exec unshare -n -- env KJOIN_E2E_NETNS=1 bash -c '
    ip link set lo up && ip link add kjoin0 type veth peer name kjoin1 && ip link set kjoin0 up &&
      ip link set kjoin1 up && ip addr add 192.0.2.2/24 dev kjoin0 && ip -6 addr add fd00::2/64 dev kjoin0 nodad &&
      ip route add default dev kjoin0 && ip -6 route add default dev kjoin0 &&
      for r in 1.0.0.0/8 2.0.0.0/7 4.0.0.0/6 8.0.0.0/5 16.0.0.0/4 32.0.0.0/3 64.0.0.0/2 128.0.0.0/1; do
        ip route add unreachable $r || exit 1
      done &&
      ip -6 route add unreachable 2000::/3 && ip -6 route add unreachable fc00::/7 || exit 1
    exec bash "$0" "$@"' "$0" "$@"
fi
here=$(dirname "$0")
source "$here/../integration/lib.sh"   # KJOIN, TOOLS, mkca
source "$here/../lib/harness.sh"
source "$here/cluster.sh"
e2e_bins || { echo "e2e: no control plane binaries (run 'make deps')" >&2; exit 1; }
command -v jq >/dev/null || { echo "e2e: jq missing (run 'make deps')" >&2; exit 1; }

ROOT=$(mktemp -d)
# kubectl's cache stays with the run, even outside tests/check.sh.
export KUBECACHEDIR=${KUBECACHEDIR:-$ROOT/kube-cache}
cleanup() {
  local rc=$?
  # On failure the control plane's logs are kept (the folder is not the
  # suite's temporary one) and named; only their last lines are shown.
  if [ "$rc" -ne 0 ] && [ -n "${E2E_DIR:-}" ]; then
    echo "e2e: the control plane's full logs are in $(e2e_keep_logs "${NAME:-e2e}"); their last lines:" >&2
    CLUSTER_LOG_LINES=3 cluster_logs >&2
  fi
  cluster_down
  rm -rf "$ROOT"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# signed ID: cluster-info carries the bootstrap signer's signature for ID.
signed() { kc -n kube-public get configmap cluster-info -o json | jq -e --arg k "jws-kubeconfig-$1" '.data[$k]' >/dev/null; }
unsigned() { ! signed "$1"; }
secret_of() { echo "${1#*.}"; }
# new_token VAR: a fresh random token into VAR, registered as a secret the logs
# must not show (not via $(...): a subshell would lose the registration).
new_token() {
  local new_token_value
  new_token_value=$("$KJOIN" token generate) || return 1
  SECRETS+=("$(secret_of "$new_token_value")")
  printf -v "$1" %s "$new_token_value"
}

for f in "$here"/t_*.sh; do source "$f"; done

NAME=${E2E_NAME:-e2e-$E2E_VERSION}
echo "$NAME: starting the control plane $E2E_VERSION (kube-apiserver, kube-controller-manager, etcd, kubeadm)"
started=$(date +%s)
cluster_up "$ROOT/cp" || { echo "e2e: the control plane did not start" >&2; exit 1; }
echo "e2e: control plane up at $E2E_SERVER in $(($(date +%s) - started)) s"
SECRETS+=(0123456789abcdef)
e2e_wait 30 signed abcdef || { echo "e2e: the bootstrap signer never signed kubeadm's token" >&2; exit 1; }
nothing() { :; }
run_suite "$NAME" t_e2e_ nothing machine_unchanged
