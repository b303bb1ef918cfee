#!/usr/bin/env bash
# deps.sh [demo|test|deb|bench]: installs from Debian whatever that command
# needs and the machine lacks, and for test and bench fetches the v1.20
# control plane's source. What the suites run besides kjoin is built by the
# scripts they call (scripts/builds.sh lists them: `make test` starts it
# beside its first suites). Quiet when nothing is missing; a long step
# prints a line at least every 30 s. Services a package enables on install
# (nginx, etcd) are disabled again when this script installed them: the
# suite starts its own on loopback, and the machine must not run them at
# boot because of it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/progress.sh"
what=${1:-test}

demo=(build-essential pkg-config libssl-dev libcurl4-openssl-dev libyaml-dev libjson-c-dev uuid-dev
      nginx-light openssl curl ca-certificates)
test=("${demo[@]}" jq libcmocka-dev clang libclang-rt-dev python3 python3-yaml systemd-container debootstrap util-linux groff-base man-db systemd containerd runc
      etcd-server strace faketime debhelper lintian dpkg-dev gpg gpg-agent)
case $what in
  demo) packages=("${demo[@]}") ;;
  test) packages=("${test[@]}") ;;
  deb) packages=("${demo[@]}" debhelper lintian dpkg-dev python3) ;;
  bench) packages=("${test[@]}" valgrind) ;;
  *) echo "usage: deps.sh [demo|test|deb|bench]" >&2; exit 2 ;;
esac
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# kubectl for the demo: the machine's own if it has one, else Debian's. The
# suite uses the one it builds with each control plane instead.
[ "$what" = demo ] && ! command -v kubectl >/dev/null 2>&1 && missing+=(kubernetes-client)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  log=$(mktemp)
  echo "deps: installing ${missing[*]}" >&2
  progress "deps: apt-get update" "$log" "${sudo[@]}" apt-get update -q || exit 1
  progress "deps: apt-get install (${#missing[@]} packages)" "$log" \
    "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" || exit 1
  rm -f "$log"
  # The suite starts its own nginx, containerd and etcd, on loopback and on
  # a socket of its own; the machine does not run them at boot because of it.
  for unit in nginx-light:nginx containerd:containerd etcd-server:etcd; do
    if [[ " ${missing[*]} " == *" ${unit%%:*} "* ]] && command -v systemctl >/dev/null; then
      "${sudo[@]}" systemctl disable --now --quiet "${unit#*:}.service" 2>/dev/null || true
    fi
  done
fi

# The v1.20 control plane's source (apt), before the tests: they use apt
# themselves, and the builds may run while they do (tests/check.sh).
if [ "$what" = test ] || [ "$what" = bench ]; then
  bash "$here/kube-build.sh" fetch >/dev/null
fi
