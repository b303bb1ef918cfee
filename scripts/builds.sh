#!/usr/bin/env bash
# builds.sh: builds, once per machine, everything the suites run that is not
# kjoin: the two control planes, the middle releases' kubeadm, the node
# lab's images. In the order the suites of tests/check.sh need them, so that
# check.sh can run this in the background from its start and each suite
# waits only for its own part (each script takes a lock: a suite that needs
# a part not yet built waits for it, or builds it, never twice). Quiet when
# everything is built; otherwise each step's progress on stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/progress.sh"
step() { local label=$1; shift; "$@" >/dev/null || { echo "builds: $label FAILED" >&2; exit 1; }; }

# The node lab's images (a Debian root with systemd, containerd, cloud-init;
# and a stock one with cloud-init alone), shared by both releases: fetched
# from the archive more than computed, so beside the Go builds from the start.
images() {
  local log flavor
  log=$(mktemp)
  for flavor in node stock; do
    progress "lab-image: the $flavor image" "$log" bash "$here/lab-image.sh" "$flavor" ||
      { tail -5 "$log" >&2; rm -f "$log"; return 1; }
  done
  rm -f "$log"
}
images &
images_pid=$!
# A failed build ends this script; the images' lane goes with it.
trap 'kill "$images_pid" 2>/dev/null || true' EXIT

step "the newest release's kubectl (integration)" bash "$here/kube-build-mod.sh" kubectl
step "the suite's Go drivers (e2e)" bash "$here/kube-build-mod.sh" drivers
step "the v1.20 control plane (e2e-oldest)" bash "$here/kube-build.sh"
step "the newest control plane (e2e-newest)" bash "$here/kube-build-mod.sh"
# The releases between the two ends, and those before 1.33 where a rule of
# kubeadm's changed: each one's own kubeadm, the reference of the release
# suite (tests/e2e/t_releases.sh).
for v in $(grep -h '^v' "$here/../tests/releases.txt" "$here/../tests/releases-boundaries.txt"); do
  step "kubeadm $v (e2e-newest)" bash "$here/kube-build-release.sh" "$v" kubeadm
done
wait "$images_pid" || { echo "builds: the node lab's images FAILED" >&2; exit 1; }
