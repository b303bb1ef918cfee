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
