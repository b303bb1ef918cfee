#!/usr/bin/env bash
# Builds the real control plane the e2e tests run: kube-apiserver,
# kube-controller-manager, kubeadm and kubelet from Debian's `kubernetes`
# source package, with Debian's Go. The binaries are cached outside the
# checkout, keyed by version, so only the first run on a machine pays the
# ~5 minute build. Prints the cache directory on stdout.
#
# kube-build.sh fetch: only the part that uses apt (Debian's Go, the source
# package), kept in CACHE.src for the build: the suite runs it before its
# tests, which use apt themselves, and the compile later in the background.
#
# Known traps handled here:
# - the vendored modern-go/reflect2 v1.0.1 crashes under Go >= 1.18
#   ("unexpected fault address" when a map is encoded): Debian's v1.0.2
#   replaces it;
# - the build must not reach the network: GOPROXY=off, GOFLAGS=-mod=vendor.
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-1.20.5+really1.20.2}
cache=${KJOIN_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kjoin/kubernetes-${KUBE_VERSION}}
bins=(kube-apiserver kube-controller-manager kubeadm kubelet kubectl)

have_all() {
  local b
  for b in "${bins[@]}"; do [ -x "$cache/$b" ] || return 1; done
}
if have_all; then echo "$cache"; exit 0; fi

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive

here=$(cd "$(dirname "$0")" && pwd)
source "$here/progress.sh"
build_lock kube-build "$cache"
if have_all; then echo "$cache"; exit 0; fi

added_src=""
work=$(mktemp -d "${TMPDIR:-/tmp}/kjoin-kube-build.XXXXXX")
trap 'rm -rf "$work"; [ -z "$added_src" ] || "${sudo[@]}" rm -f "$added_src"' EXIT

# The source, once: fetched with apt and prepared here, built below.
srcdir=$cache.src
if [ ! -f "$srcdir/ready" ]; then
  # A deb-src source for the machine's own suite, if it has none: the same
  # archive as its deb entry (scripts/apt-src.sh reads it from apt's sources).
  # It is removed again once the source is here: the machine is left as found.
  if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    src=$(bash "$here/apt-src.sh") || { echo "kube-build: cannot derive a deb-src source from apt's sources" >&2; exit 1; }
    echo "kube-build: adding a deb-src source beside the machine's deb source, for this build" >&2
    ext=sources; [[ $src == deb-src* ]] && ext=list
    added_src=/etc/apt/sources.list.d/kjoin-src.$ext
    echo "$src" | "${sudo[@]}" tee "$added_src" >/dev/null
  fi
  need=(dpkg-dev golang-go golang-github-modern-go-reflect2-dev make rsync)
  missing=()
  for p in "${need[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  "${sudo[@]}" apt-get update -qq
  if [ ${#missing[@]} -gt 0 ]; then
    progress "kube-build: apt-get install ${missing[*]}" "$work/apt.log" \
      "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" || exit 1
  fi
  rm -rf "$srcdir"; mkdir -p "$srcdir"; cd "$srcdir"
  echo "kube-build: fetching the kubernetes source package $KUBE_VERSION (once per machine)" >&2
  apt-get source -qq --download-only "kubernetes=${KUBE_VERSION}*" >/dev/null 2>&1 ||
    apt-get source -qq --download-only kubernetes >/dev/null
  dpkg-source -x --no-check ./*.dsc src >/dev/null
  reflect2=/usr/share/gocode/src/github.com/modern-go/reflect2
  [ -d "$reflect2" ] || { echo "kube-build: $reflect2 missing" >&2; exit 1; }
  rm -rf src/vendor/github.com/modern-go/reflect2
  cp -r "$reflect2" src/vendor/github.com/modern-go/reflect2
  find src/vendor/github.com/modern-go/reflect2 -name '*_test.go' -delete
  touch ready
fi
[ "${1:-}" = fetch ] && exit 0
cd "$srcdir/src"

# Debian's own Go, whatever else is on PATH (a newer Go in /usr/local/go
# cannot build this release).
export PATH="/usr/lib/go/bin:$PATH"
echo "kube-build: building ${bins[*]} v1.20.2 with Debian's $(go version | cut -d' ' -f3) (about 5 minutes on 2 cores)" >&2
export CGO_ENABLED=0 GOPROXY=off GOFLAGS=-mod=vendor GO111MODULE=on
export GOCACHE="$work/gocache" GOPATH="$work/gopath"
export KUBE_GIT_VERSION="v1.20.2" KUBE_GIT_TREE_STATE=clean
what=""
for b in "${bins[@]}"; do what+="cmd/$b "; done
progress kube-build "$work/build.log" make WHAT="${what% }" || exit 1

mkdir -p "$cache.part"
for b in "${bins[@]}"; do
  f=$(find _output -type f -name "$b" -perm -u+x | head -1)
  [ -n "$f" ] || { echo "kube-build: $b was not built" >&2; exit 1; }
  install -m 0755 "$f" "$cache.part/$b"
done
rm -rf "$cache"
mv "$cache.part" "$cache"
rm -rf "$srcdir"
echo "$cache"
