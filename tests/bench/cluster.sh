# What the bench rows on a real control plane share (sourced by herd.sh and
# node.sh): the suites' harness and cluster, a scratch root for the run, and
# the control plane taken down on any exit.
bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$bench_dir/../integration/lib.sh"
source "$bench_dir/../lib/harness.sh"
source "$bench_dir/../e2e/cluster.sh"
ROOT=$(mktemp -d)
export KUBECACHEDIR=${KUBECACHEDIR:-$ROOT/kube-cache}
cleanup() { cluster_down; rm -rf "$ROOT"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# bench_node_cluster: the newest control plane, the suites' containerd and
# kubelet ConfigMap (node_setup of tests/e2e/t_node.sh, sourced by the
# caller), and a scratch $T; exits the row when any of it fails.
bench_node_cluster() {
  export E2E_RELEASE=newest
  cluster_up "$ROOT/cp" >/dev/null || { echo "bench: the control plane did not start" >&2; exit 1; }
  T=$ROOT/setup; mkdir -p "$T"
  node_setup || exit 1
}
