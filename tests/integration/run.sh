#!/usr/bin/env bash
# Integration tests: the real kjoin binary against Debian's nginx on loopback,
# with certificates made here, and the written kubeconfig handed to kubectl.
set -uo pipefail
here=$(dirname "$0")
source "$here/lib.sh"
source "$here/../lib/harness.sh"
source "$here/../lib/throwaway.sh"
need jq

ROOT=$(mktemp -d)
# kubectl's cache stays with the run, even outside tests/check.sh.
export KUBECACHEDIR=${KUBECACHEDIR:-$ROOT/kube-cache}
export NGINX_REGISTRY=$ROOT/nginx-started
cleanup() {
  local rc=$?
  stop_registered "$ROOT" || rc=1
  rm -rf "$ROOT"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# cmdline_while_running MARK CMD...: starts CMD, and prints its command line
# as ps shows it once MARK appears there (or after 2 s), then stops it.
cmdline_while_running() {
  local mark=$1 pid i cmdline=""; shift
  "$@" >/dev/null 2>&1 &
  pid=$!
  for i in $(seq 40); do
    cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)
    [[ "$cmdline" == *"$mark"* ]] && break
    sleep 0.05
  done
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  echo "$cmdline"
}

# new_cluster NAME: a fresh cluster in $ROOT/NAME (see setup_cluster); sets C.
new_cluster() {
  C=$ROOT/$1
  setup_cluster "$C" || return 1
  SECRETS+=("$(cut -d. -f2 "$C/token")")
}
join_args() { echo "127.0.0.1:$PORT --token-file $C/token --kubeconfig-out $T/kubelet.conf --discovery-timeout ${1:-20s}"; }
b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }

# resign C HEADER_JSON DIGEST [CONTENT_FILE]: replaces the token's signature
# with one over HEADER_JSON made with openssl (HMAC-DIGEST, key = secret).
resign() {
  local c=$1 header=$2 digest=$3 content=${4:-$1/cluster.kubeconfig}
  local id secret h p sig
  id=$(cut -d. -f1 "$c/token"); secret=$(cut -d. -f2 "$c/token")
  h=$(printf '%s' "$header" | b64url); p=$(b64url <"$content")
  sig=$(printf '%s.%s' "$h" "$p" | openssl dgst "-$digest" -mac HMAC -macopt "key:$secret" -binary | b64url)
  sed -i "s|\"jws-kubeconfig-$id\":\"[^\"]*\"|\"jws-kubeconfig-$id\":\"$h..$sig\"|" "$c/www/cluster-info"
}

for f in "$here"/t_*.sh; do source "$f"; done

# ---- runner --------------------------------------------------------------------

new_cluster main || { echo "cannot start the main test cluster" >&2; exit 1; }
MAIN_C=$C MAIN_PORT=$PORT MAIN_PIN=$PIN MAIN_ROOT_PIN=$ROOT_PIN MAIN_SERVER=$SERVER
restore_main() { C=$MAIN_C PORT=$MAIN_PORT PIN=$MAIN_PIN ROOT_PIN=$MAIN_ROOT_PIN SERVER=$MAIN_SERVER; }
run_suite integration t_ restore_main machine_unchanged
