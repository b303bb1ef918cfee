#!/usr/bin/env bash
# Installs from Debian whatever kjoin's build, tests and demo need and the
# machine lacks (clang for libFuzzer included). Quiet when nothing
# is missing.
set -euo pipefail

packages=(build-essential pkg-config libssl-dev libcurl4-openssl-dev libyaml-dev libjson-c-dev
          uuid-dev libcmocka-dev nginx-light openssl curl jq)
packages+=(clang libclang-rt-dev python3 cloud-init)  # libFuzzer; cloud-init checks the docs
packages+=(debhelper lintian dpkg-dev)  # make deb, and its test
packages+=(valgrind)  # make bench counts instructions
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# kubectl: the machine's own if it has one, else Debian's kubernetes-client.
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}" >&2
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The real control plane for the e2e tests (etcd from Debian; the rest built
# from Debian's kubernetes source package once per machine, then cached).
[ -n "${1:-}" ] || bash "$(dirname "$0")/kube-build.sh" >/dev/null
