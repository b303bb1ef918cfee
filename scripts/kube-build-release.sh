#!/usr/bin/env bash
# Builds one release's own binaries (VERSION, as v1.36.3; BINARY... of
# kubeadm, kube-apiserver, kube-controller-manager, kube-scheduler, kubelet,
# kubectl; kubeadm alone by default) from Go modules, with the machine's Go
# at /usr/local/go: kubeadm is the reference the release suite
# (tests/e2e/t_releases.sh) compares kjoin's files with, the rest the whole
# control plane of a middle release (make test-release). Each release is a
# module of its own made here (k8s.io/kubernetes at VERSION, its staging
# modules at the matching v0.x), cached outside the checkout by version, so
# only the first run on a machine pays the build. Prints the directory of
# the binaries on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/progress.sh"
version=${1:?usage: kube-build-release.sh VERSION [BINARY...] (as v1.36.3 kubeadm)}
shift
bins=("${@:-kubeadm}")
[[ $version =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || { echo "kube-build-release: \"$version\" is not vMAJOR.MINOR.PATCH" >&2; exit 2; }
minor=${BASH_REMATCH[1]}
staging=v0.${version#v1.}

export PATH="${KJOIN_GO_BIN:-/usr/local/go/bin}:$PATH" # (KJOIN_GO_BIN: the suite's stand-in)
command -v go >/dev/null || { echo "kube-build-release: no Go at /usr/local/go" >&2; exit 1; }
cache=${KJOIN_RELEASE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kjoin/release-$version}
# Before 1.23 Kubernetes pins reflect2 v1.0.1 (and json-iterator v1.1.10 or
# .11), whose map iterator crashes under Go 1.18 on: kubeadm panics at its
# first JSON. Those releases get the two versions 1.23 moved to. The recipe
# is stamped beside the binaries (none is "stock"): a cache built by another
# one is rebuilt.
replaces= recipe=stock
if [ "$minor" -lt 23 ]; then
  replaces=$'\tgithub.com/json-iterator/go => github.com/json-iterator/go v1.1.12\n\tgithub.com/modern-go/reflect2 => github.com/modern-go/reflect2 v1.0.2\n'
  recipe="json-iterator v1.1.12, reflect2 v1.0.2"
fi
stamped() { [ "$(cat "$cache/recipe" 2>/dev/null || echo stock)" = "$recipe" ]; }
missing=()
for b in "${bins[@]}"; do
  case $b in kubeadm | kube-apiserver | kube-controller-manager | kube-scheduler | kubelet | kubectl) ;;
  *) echo "kube-build-release: \"$b\" is not a binary of the release" >&2; exit 2 ;; esac
  [ -x "$cache/$b" ] && stamped || missing+=("$b")
done
if [ ${#missing[@]} = 0 ]; then echo "$cache"; exit 0; fi
build_lock "kube-build-release $version" "$cache"
if ! stamped; then
  for b in kubeadm kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl recipe; do rm -f "$cache/$b"; done
fi
missing=()
for b in "${bins[@]}"; do [ -x "$cache/$b" ] || missing+=("$b"); done
if [ ${#missing[@]} = 0 ]; then echo "$cache"; exit 0; fi

export CGO_ENABLED=0 GOFLAGS="-modcacherw -buildvcs=false" GOTOOLCHAIN=local
log=$(mktemp "${TMPDIR:-/tmp}/kjoin-kube-build-release.XXXXXX")
export XDG_CONFIG_HOME; XDG_CONFIG_HOME=$(mktemp -d "${TMPDIR:-/tmp}/kjoin-go-config.XXXXXX")
trap 'rm -rf "$log" "$XDG_CONFIG_HOME"' EXIT
mkdir -p "$cache/mod"
cd "$cache/mod"
echo "kube-build-release: building ${missing[*]} $version (kubeadm alone about 2 minutes on 2 cores, the whole control plane about 8; once per machine)" >&2
# k8s.io/kubernetes's go.mod points its staging modules at its own tree;
# a module that requires it points them at their published versions.
gomod=$(go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
[ -f "$gomod" ] || { echo "kube-build-release: the module proxy has no k8s.io/kubernetes $version" >&2; exit 1; }
{
  echo "module kjoin.test/kubeadm$minor"
  echo
  grep -m1 '^go ' "$gomod"
  echo
  echo "require k8s.io/kubernetes $version"
  echo
  echo "replace ("
  sed -n 's|^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*|\t\1 => \1 '"$staging"'|p' "$gomod"
  printf '%s' "$replaces"
  echo ")"
} >go.mod.new
# (a go.mod of another recipe: its go.sum is tidied again)
cmp -s go.mod.new go.mod || rm -f go.sum
mv go.mod.new go.mod
# The module needs only what the binaries asked for import (an older
# release's proxy may lack a module the others need).
want=$( { ls "$cache" 2>/dev/null | grep -vx mod; printf '%s\n' "${missing[@]}"; } | grep -x -E 'kubeadm|kube-apiserver|kube-controller-manager|kube-scheduler|kubelet|kubectl' | sort -u)
tools=$(printf 'package tools\n\nimport (\n'; for b in $want; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$b"; done; printf ')\n')
# Tidied once for this go.mod and these imports: the stamp is written only
# after a tidy that succeeded, so a failed one (no proxy reachable) leaves
# nothing a later run takes for done.
tidied=$(printf '%s\n%s' "$(cat go.mod)" "$tools")
if [ "$tidied" != "$(cat tidied 2>/dev/null)" ] || [ ! -s go.sum ]; then
  rm -f tidied
  printf '%s\n' "$tools" >tools.go
  progress "kube-build-release: modules" "$log" go mod tidy || exit 1
  printf '%s\n' "$tidied" >tidied
fi
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
ldflags+=" -X $pkg.buildDate=1970-01-01T00:00:00Z"
ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=$version -X k8s.io/client-go/pkg/version.gitMajor=1"
ldflags+=" -X k8s.io/client-go/pkg/version.gitMinor=$minor"
for b in "${missing[@]}"; do
  progress "kube-build-release: $b $version" "$log" go build -trimpath -ldflags "$ldflags" -o "$cache/$b.part" \
    "k8s.io/kubernetes/cmd/$b" || exit 1
  mv "$cache/$b.part" "$cache/$b"
done
printf '%s\n' "$recipe" >"$cache/recipe"
echo "$cache"
