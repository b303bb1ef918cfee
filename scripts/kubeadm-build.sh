#!/usr/bin/env bash
# Builds one release's own kubeadm (VERSION, as v1.36.3) from Go modules,
# with the machine's Go at /usr/local/go: the reference the release suite
# (tests/e2e/releases.sh) compares kjoin's files with. Each release is a
# module of its own made here (k8s.io/kubernetes at VERSION, its staging
# modules at the matching v0.x), cached outside the checkout by version,
# so only the first run on a machine pays the build. Prints the binary's
# path on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/progress.sh"
version=${1:?usage: kubeadm-build.sh VERSION (as v1.36.3)}
[[ $version =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || { echo "kubeadm-build: \"$version\" is not vMAJOR.MINOR.PATCH" >&2; exit 2; }
minor=${BASH_REMATCH[1]}
staging=v0.${version#v1.}

export PATH="/usr/local/go/bin:$PATH"
command -v go >/dev/null || { echo "kubeadm-build: no Go at /usr/local/go" >&2; exit 1; }
cache=${KJOIN_KUBEADM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kjoin/kubeadm-$version}
if [ -x "$cache/kubeadm" ]; then echo "$cache/kubeadm"; exit 0; fi

export CGO_ENABLED=0 GOFLAGS="-modcacherw -buildvcs=false" GOTOOLCHAIN=local
log=$(mktemp "${TMPDIR:-/tmp}/kjoin-kubeadm-build.XXXXXX")
export XDG_CONFIG_HOME; XDG_CONFIG_HOME=$(mktemp -d "${TMPDIR:-/tmp}/kjoin-go-config.XXXXXX")
trap 'rm -rf "$log" "$XDG_CONFIG_HOME"' EXIT
mkdir -p "$cache/mod"
cd "$cache/mod"
echo "kubeadm-build: building kubeadm $version (about 10 minutes on 2 cores, once per machine)" >&2
# k8s.io/kubernetes's go.mod points its staging modules at its own tree;
# a module that requires it points them at their published versions.
gomod=$(go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
[ -f "$gomod" ] || { echo "kubeadm-build: the module proxy has no k8s.io/kubernetes $version" >&2; exit 1; }
{
  echo "module kjoin.test/kubeadm$minor"
  echo
  grep -m1 '^go ' "$gomod"
  echo
  echo "require k8s.io/kubernetes $version"
  echo
  echo "replace ("
  sed -n 's|^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*|\t\1 => \1 '"$staging"'|p' "$gomod"
  echo ")"
} >go.mod
printf 'package tools\n\nimport _ "k8s.io/kubernetes/cmd/kubeadm"\n' >tools.go
progress "kubeadm-build: modules" "$log" go mod tidy || exit 1
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
ldflags+=" -X $pkg.buildDate=1970-01-01T00:00:00Z"
progress "kubeadm-build: kubeadm $version" "$log" go build -trimpath -ldflags "$ldflags" -o "$cache/kubeadm.part" \
  k8s.io/kubernetes/cmd/kubeadm || exit 1
mv "$cache/kubeadm.part" "$cache/kubeadm"
echo "$cache/kubeadm"
