#!/usr/bin/env bash
# Builds the newest Kubernetes release the suite tests against (the version
# tests/kube/go.mod requires) from Go modules, with the machine's own Go at
# /usr/local/go: kube-apiserver, kube-controller-manager, kube-scheduler,
# kubeadm, kubelet, kubectl, and the suite's Go drivers of tests/kube. The binaries are cached
# outside the checkout, keyed by version and go.sum, so only the first run
# on a machine pays the build. Prints the cache directory on stdout.
#
# kube-build-mod.sh [BINARY...|drivers]: only those (the integration suite
# needs kubectl alone, the oldest release's e2e the drivers); all by default.
# A run that finds another one building waits for it (scripts/progress.sh
# build_lock), so the suite may start the builds in the background.
#
# Debian's v1.20 build (scripts/kube-build.sh) needs Debian's Go instead:
# each script puts its own Go first on PATH, so neither shadows the other.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mod=$here/../tests/kube
source "$here/progress.sh"

export PATH="/usr/local/go/bin:$PATH"
command -v go >/dev/null || { echo "kube-build-mod: no Go at /usr/local/go" >&2; exit 1; }
version=$(awk '($1 == "k8s.io/kubernetes" && $2 ~ /^v/) {print $2} ($1 == "require" && $2 == "k8s.io/kubernetes") {print $3}' "$mod/go.mod" | head -1)
[ -n "$version" ] || { echo "kube-build-mod: tests/kube/go.mod requires no k8s.io/kubernetes" >&2; exit 1; }
key=$(sha256sum <"$mod/go.sum" | cut -c1-12)
# The suite's own drivers are rebuilt (from Go's build cache: seconds) when their sources change.
dkey=$(cat $(find "$mod" -name "*.go" | sort) | sha256sum | cut -c1-12)
cache=${KJOIN_KUBE_MOD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kjoin/kubernetes-$version-$key}
bins=(kube-apiserver kube-controller-manager kube-scheduler kubeadm kubelet kubectl)
drivers=$(cd "$mod" && ls -d */ 2>/dev/null | tr -d / || true)

want=("${@:-${bins[@]}}")
[ $# -gt 0 ] || want+=(drivers)
for b in "${want[@]}"; do
  [[ " ${bins[*]} drivers " == *" $b "* ]] || { echo "kube-build-mod: \"$b\" is none of ${bins[*]} drivers" >&2; exit 2; }
done
missing_bins() {
  local b
  for b in "${want[@]}"; do [ "$b" = drivers ] || [ -x "$cache/$b" ] || echo "$b"; done
}
drivers_current() {
  [[ " ${want[*]} " != *" drivers "* ]] || [ "$(cat "$cache/drivers.key" 2>/dev/null)" = "$dkey" ]
}
if [ -z "$(missing_bins)" ] && drivers_current; then echo "$cache"; exit 0; fi
build_lock kube-build-mod "$cache"
if [ -z "$(missing_bins)" ] && drivers_current; then echo "$cache"; exit 0; fi

minor=${version#v1.}; minor=${minor%%.*}
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
ldflags+=" -X $pkg.buildDate=1970-01-01T00:00:00Z"
ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=$version -X k8s.io/client-go/pkg/version.gitMajor=1"
ldflags+=" -X k8s.io/client-go/pkg/version.gitMinor=$minor"
export CGO_ENABLED=0 GOFLAGS="-modcacherw -buildvcs=false" GOTOOLCHAIN=local
log=$(mktemp "${TMPDIR:-/tmp}/kjoin-kube-build-mod.XXXXXX")
# Go keeps telemetry counters under the user's configuration directory: a
# temporary one, so that the build leaves nothing there (only its caches).
export XDG_CONFIG_HOME; XDG_CONFIG_HOME=$(mktemp -d "${TMPDIR:-/tmp}/kjoin-go-config.XXXXXX")
trap 'rm -rf "$log" "$XDG_CONFIG_HOME"' EXIT
cd "$mod"
mapfile -t missing < <(missing_bins)
if [ ${#missing[@]} -gt 0 ]; then
  # Only what is missing is built: a binary added to the list later does not
  # rebuild the others (each lands under its name only once it is whole).
  echo "kube-build-mod: building ${missing[*]} $version with $(go version | cut -d' ' -f3) (about 7 minutes on 2 cores for all, once per machine)" >&2
  mkdir -p "$cache"
  progress "kube-build-mod: modules" "$log" go mod download || exit 1
  for b in "${missing[@]}"; do
    progress "kube-build-mod: $b" "$log" go build -trimpath -ldflags "$ldflags" -o "$cache/$b.part" "k8s.io/kubernetes/cmd/$b" || exit 1
    mv "$cache/$b.part" "$cache/$b"
  done
fi
if ! drivers_current; then
  mkdir -p "$cache"
  for d in $drivers; do
    progress "kube-build-mod: the suite's driver $d" "$log" go build -trimpath -o "$cache/$d" "./$d" || exit 1
  done
  echo "$dkey" >"$cache/drivers.key"
fi
echo "$cache"
