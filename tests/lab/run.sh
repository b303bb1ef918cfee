#!/usr/bin/env bash
# The node lab suite: nodes booted by a real systemd, joined by cloud-init
# with kjoin's .deb, on a network of the lab's own, against the real control
# plane of one release (E2E_RELEASE=oldest|newest, as tests/e2e/run.sh).
# Needs root, systemd-nspawn and the image (scripts/lab-image.sh).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../integration/lib.sh"   # KJOIN, TOOLS
source "$here/../lib/harness.sh"
source "$here/../e2e/cluster.sh"
source "$here/lab.sh"
source "$here/mirror.sh"
e2e_bins || { echo "lab: no control plane binaries (run 'make deps')" >&2; exit 1; }
REPO=$(cd "$here/../.." && pwd)

ROOT=$(mktemp -d)
LAB_DIR=$ROOT/nodes
export KUBECACHEDIR=${KUBECACHEDIR:-$ROOT/kube-cache}
NAME=${E2E_NAME:-lab-$E2E_VERSION}
cleanup() {
  local rc=$?
  lab_down
  lab_mirror_down
  # Nothing of the lab stays: no node, cgroup or bridge.
  local left p
  left=$(ls -d /sys/fs/cgroup/*/kjlab-* 2>/dev/null; ip -br link show "$LAB_BRIDGE" 2>/dev/null)
  for p in "$LAB_DIR"/*/nspawn.pid; do [ -f "$p" ] && kill -0 "$(cat "$p")" 2>/dev/null && left+=" nspawn $(cat "$p")"; done
  pgrep -f "$ROOT/mirror" >/dev/null && left+=" the mirror's nginx or gpg-agent"
  [ -z "$left" ] || { echo "lab: left behind: $left" >&2; rc=1; }
  if [ "$rc" -ne 0 ] && [ -n "${E2E_DIR:-}" ]; then
    local keep; keep=$(e2e_keep_logs "$NAME")
    cp -r "$LAB_DIR" "$keep/nodes" 2>/dev/null
    echo "lab: logs (the control plane's, each node's console) are in $keep" >&2
  fi
  cluster_down
  rm -rf "$ROOT"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM


LAB_IMAGE=$(bash "$REPO/scripts/lab-image.sh") || { echo "lab: no node image" >&2; exit 1; }
LAB_STOCK_IMAGE=$(bash "$REPO/scripts/lab-image.sh" stock) || { echo "lab: no stock image" >&2; exit 1; }
# kjoin as a user installs it: the packages make deb builds.
LAB_DEBS=$ROOT/debs
mkdir -p "$LAB_DEBS"
# The packages the integration suite built from this tree are reused when
# nothing they are made of is newer.
pkgs=$REPO/build/packages
if [ -z "${LAB_DEB_DIR:-}" ] && ls "$pkgs"/kjoin_*.deb >/dev/null 2>&1 &&
   [ -z "$(find "$REPO/pkg" "$REPO/cmd" "$REPO/include" "$REPO/dist" "$REPO/debian" "$REPO/Makefile" -newer "$(ls "$pkgs"/kjoin_*.deb | head -1)" \
          -not -path "$REPO/debian/tmp*" -not -path "$REPO/debian/kjoin*" -not -path "$REPO/debian/libkjoin*" -not -path "$REPO/debian/.debhelper*" \
          -type f 2>/dev/null | head -1)" ]; then
  LAB_DEB_DIR=$pkgs
fi
if [ -n "${LAB_DEB_DIR:-}" ]; then
  cp "$LAB_DEB_DIR"/kjoin_*.deb "$LAB_DEB_DIR"/libkjoin0_*.deb "$LAB_DEBS/"
else
  (cd "$REPO" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE -u OPT -u BUILD make -s deb >"$ROOT/deb.log" 2>&1) ||
    { echo "lab: make deb failed: $(tail -3 "$ROOT/deb.log")" >&2; exit 1; }
  cp "$REPO"/build/packages/kjoin_*.deb "$REPO"/build/packages/libkjoin0_*.deb "$LAB_DEBS/"
fi

for f in "$here"/t_*.sh; do source "$f"; done

# The kernel settings a kubelet makes its own at its start (its setupKernelTunables), where /proc/sys
# is writable: a lab node's is not, and its kubelet then fails to start unless the host's already are
# the kubelet's (as the e2e suite's kubelets leave them on a machine that ran it first).
sysctl -qw vm.overcommit_memory=1 vm.panic_on_oom=0 kernel.panic=10 kernel.panic_on_oops=1 ||
  { echo "lab: the kubelet's kernel settings could not be made" >&2; exit 1; }
echo "$NAME: a bridge of the lab's own, then the control plane $E2E_VERSION on $LAB_HOST"
lab_net_up || { echo "lab: cannot make the bridge $LAB_BRIDGE" >&2; exit 1; }
started=$(date +%s)
E2E_HOST=$LAB_HOST cluster_up "$ROOT/cp" || { echo "lab: the control plane did not start" >&2; exit 1; }
echo "lab: control plane up at $E2E_SERVER in $(($(date +%s) - started)) s"
SECRETS+=(0123456789abcdef)
e2e_wait 30 kc -n kube-public get configmap cluster-info -o name || exit 1
e2e_kubelet_configmap || { echo "lab: the cluster's kubelet configuration could not be made" >&2; exit 1; }
nothing() { :; }
# LAB_PREFIX=bench_lab_: make bench's rows that need the lab instead of the tests.
run_suite "$NAME" "${LAB_PREFIX:-t_lab_}" nothing
