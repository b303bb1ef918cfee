#!/usr/bin/env bash
# make bench, the herd row: BENCH_HERD nodes join at once, on each release's
# control plane with API Priority and Fairness limits low enough that it
# answers 429 (tests/e2e/t_herd.sh's), each node discovery and a TLS
# bootstrap (no kubelet), each herd under a priority level of its own: kjoin's (`kjoin join --tls-bootstrap`) against
# kubeadm's own discovery code followed by the kubelet's own TLS bootstrap
# (the suite's Go drivers discovery and tlsbootstrap). Reports, for each, the
# requests a node made (the API server's audit log counts them, 429s
# included), the 429s, and the time from the start to the last identity.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/cluster.sh"
source "$here/../e2e/t_herd.sh"
NODES=${BENCH_HERD:-100}
current=bench-herd

# The requests the API server saw from bootstrap tokens and anonymous users
# after line $1 of its audit log, and how many were 429s.
audited() {
  tail -n +$(($1 + 1)) "$ROOT/audit.log" | jq -r 'select(.stage == "ResponseComplete") | select((.user.groups // []) | index("system:bootstrappers") or
      index("system:unauthenticated")) | .responseStatus.code' 2>/dev/null |
    awk '{ n++; if ($1 == 429) t++ } END { printf "%d %d\n", n, t }'
}

# The requests the approver made after line $1 of the audit log.
approver_requests() {
  tail -n +$(($1 + 1)) "$ROOT/audit.log" | jq -r 'select(.stage == "ResponseComplete") |
      select(.user.username == "system:serviceaccount:kube-system:kjoin-approver") | .verb' 2>/dev/null | wc -l
}

# herd TOOL: NODES nodes of TOOL at once; prints "requests 429s seconds failed".
# TOOL kjoin: kubeadm's token for all; kjoin-tokens: a token of kubeadm's
# group each, auto-approved; kjoin-bound: a single-use token bound to each
# node, approved by kjoin approver (the token files made before the clock starts).
herd() {
  local tool=$1 i pids=() t0 end last=0 d=$ROOT/$E2E_RELEASE/$1
  mkdir -p "$d"
  for i in $(seq "$NODES"); do
    mkdir -p "$d/n$i"
    case $tool in
      kjoin) echo abcdef.0123456789abcdef >"$d/n$i/token" ;;
      kjoin-tokens) "$KJOIN" token create --kubeconfig "$E2E_ADMIN" --ttl 30m >"$d/n$i/token" ;;
      kjoin-bound) "$KJOIN" token create --kubeconfig "$E2E_ADMIN" --ttl 30m --node-name "herd-$i" --single-use >"$d/n$i/token" ;;
    esac
  done
  [ "$tool" = kubeadm ] || e2e_wait 60 bash -c "kubectl --kubeconfig '$E2E_ADMIN' -n kube-public get configmap cluster-info -o json |
    grep -q jws-kubeconfig-$(cut -c1-6 "$d/n$NODES/token")"
  herd_flow_control "kjoin-herd-$tool" | kc apply -f - >/dev/null || { echo "bench: API Priority and Fairness objects" >&2; exit 1; }
  local from; from=$(wc -l 2>/dev/null <"$ROOT/audit.log" || echo 0)
  t0=$(date +%s.%N)
  for i in $(seq "$NODES"); do
    (
      if [ "$tool" != kubeadm ]; then
        "$KJOIN" join "$E2E_ENDPOINT" --token-file "$d/n$i/token" --discovery-token-ca-cert-hash "$E2E_PIN" \
          --skip-phases preflight,kubelet-start --tls-bootstrap --node-name "herd-$i" --kubeconfig-out "$d/n$i/bootstrap.conf" \
          --kubelet-kubeconfig "$d/n$i/kubelet.conf" --kubelet-pki-dir "$d/n$i/pki" --ca-cert-path "$d/n$i/ca.crt" \
          --discovery-timeout 150s >/dev/null 2>"$d/n$i/err"
      else
        echo abcdef.0123456789abcdef >"$d/n$i/token"
        "$E2E_DRIVERS/discovery" "$E2E_ENDPOINT" "$d/n$i/token" "$E2E_PIN" "$d/n$i/bootstrap.conf" >"$d/n$i/err" 2>&1 &&
          "$E2E_DRIVERS/tlsbootstrap" "$d/n$i/bootstrap.conf" "$d/n$i/kubelet.conf" "$d/n$i/pki" "herd-$i" >>"$d/n$i/err" 2>&1
      fi
      echo "$? $(date +%s.%N)" >"$d/n$i/done"
    ) &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i"; done
  local failed=0 code
  for i in $(seq "$NODES"); do
    read -r code end <"$d/n$i/done"
    [ "$code" = 0 ] || failed=$((failed + 1))
    last=$(awk -v a="$last" -v b="$end" -v t="$t0" 'BEGIN { d = b - t; print (d > a ? d : a) }')
  done
  [ $failed = 0 ] || echo "bench: $failed $tool nodes failed: $(tail -1 "$d/n1/err")" >&2
  [ $failed = 0 ] || tail -1 "$d/n1/err" >"$ROOT/why"
  sleep 1 # the audit log's last lines
  echo "$(audited "$from") $last $failed $(approver_requests "$from")"
  kc delete csr --all >/dev/null 2>&1
  kc delete flowschema,prioritylevelconfiguration "kjoin-herd-$tool" >/dev/null 2>&1
}

for release in oldest newest; do
  export E2E_RELEASE=$release KBIN=
  mkdir -p "$ROOT/$release"
  cat >"$ROOT/policy.yaml" <<YAML
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
  userGroups: ["system:bootstrappers", "system:unauthenticated"]
- level: Metadata
  users: ["system:serviceaccount:kube-system:kjoin-approver"]
- level: None
YAML
  E2E_APISERVER_FLAGS="--audit-log-path=$ROOT/audit.log --audit-policy-file=$ROOT/policy.yaml" \
    cluster_up "$ROOT/$release/cp" >/dev/null || { echo "bench: the $release control plane did not start" >&2; exit 1; }
  e2e_wait 30 bash -c "kubectl --kubeconfig '$E2E_ADMIN' -n kube-public get configmap cluster-info -o json | grep -q jws-kubeconfig-abcdef" ||
    { echo "bench: the bootstrap signer never signed the token" >&2; exit 1; }
  read -r kr k429 klast kfail <<<"$(herd kjoin)"
  read -r gr g429 glast gfail <<<"$(herd kubeadm)"
  # A token each: kubeadm's group auto-approved by the controller manager,
  # against tokens bound to their node and approved by kjoin approver.
  read -r tr t429 tlast tfail <<<"$(herd kjoin-tokens)"
  "$KJOIN" approver install --kubeconfig "$E2E_ADMIN" --approver-kubeconfig "$ROOT/approver.conf" >/dev/null 2>&1 ||
    { echo "bench: kjoin approver install failed" >&2; exit 1; }
  "$KJOIN" approver run --kubeconfig "$ROOT/approver.conf" --healthz-bind-address "" >"$ROOT/approver.log" 2>&1 &
  approver=$!
  e2e_wait 30 bash -c "kubectl --kubeconfig '$E2E_ADMIN' -n kube-system get lease kjoin-approver -o jsonpath='{.spec.holderIdentity}' | grep -q ." ||
    { echo "bench: the approver never held its Lease" >&2; exit 1; }
  read -r br b429 blast bfail bapprover <<<"$(herd kjoin-bound)"
  kill -0 "$approver" 2>/dev/null ||
    { echo "bench: kjoin approver exited during the herd: $(grep -v '^\[approver\] approved' "$ROOT/approver.log" | tail -3)" >&2; exit 1; }
  arss=$(awk '/VmHWM/ { print $2 / 1024 }' "/proc/$approver/status")
  kill -TERM "$approver"; wait "$approver"
  "$KJOIN" approver uninstall --kubeconfig "$E2E_ADMIN" --approver-kubeconfig "$ROOT/approver.conf" >/dev/null 2>&1
  awk -v v="$E2E_VERSION" -v n="$NODES" -v tr="$tr" -v tl="$tlast" -v tf="$tfail" -v br="$br" -v bl="$blast" -v bf="$bfail" \
      -v ba="$bapprover" -v rss="$arss" 'BEGIN {
    printf "%-12s %s, %d nodes at once, a token each: auto-approved %.1f requests a node (%d failed), last identity %.1f s; ",
           "herd-bound", v, n, tr / n, tf, tl
    printf "bound and approved by kjoin approver %.1f requests a node (%d failed), last identity %.1f s (%.2fx); the approver: %d requests, peak RSS %.1f MiB\n",
           br / n, bf, bl, bl / tl, ba, rss }'
  # The newest kubelet's TLS-bootstrap code asks for the usages its own
  # release's signer takes; an old signer may refuse them all (kjoin asks for
  # what the server's release signs).
  why=$(cut -c1-160 "$ROOT/why" 2>/dev/null | tr -d '"')
  awk -v v="$E2E_VERSION" -v n="$NODES" -v kr="$kr" -v k429="$k429" -v kl="$klast" -v kf="$kfail" -v gr="$gr" \
      -v g429="$g429" -v gl="$glast" -v gf="$gfail" -v why="$why" 'BEGIN {
    printf "%-12s %s, %d nodes at once, API Priority and Fairness rejecting: kjoin %.1f requests a node (%d 429s, %d failed), last identity %.1f s; ",
           "herd-api", v, n, kr / n, k429, kf, kl
    if (gf == n) printf "kubeadm discovery + the kubelet'"'"'s TLS bootstrap: every node failed (\"%s\")\n", why
    else printf "kubeadm discovery + the kubelet'"'"'s TLS bootstrap %.1f requests a node (%d 429s, %d failed), last identity %.1f s\n", gr / n, g429, gf, gl }'
  rm -f "$ROOT/why"
  cluster_down
done
