# The TLS bootstrap against the real control plane, and the real kubelet as
# the consumer of what kjoin writes (sourced by run.sh).

# bootstrap_conf FILE: a bootstrap kubeconfig from a real join.
bootstrap_conf() {
  "$KJOIN" join --skip-phases preflight,kubelet-start "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
    --kubeconfig-out "$1" --discovery-timeout 30s --force 2>/dev/null
}
# tls_args NODE: where a node's files go, under $T.
tls_args() {
  echo "--node-name $1 --kubelet-kubeconfig $T/$1/kubelet.conf --kubelet-pki-dir $T/$1/pki --ca-cert-path $T/$1/ca.crt"
}
node_yaml() { printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n' "$1"; }

t_e2e_tls_bootstrap_gives_the_node_its_identity() {
  bootstrap_conf "$T/bootstrap.conf" || return 1
  kj 0 join --skip-phases preflight,kubelet-start "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
    --kubeconfig-out "$T/bootstrap.conf" --force --tls-bootstrap $(tls_args e2e-node-1) --discovery-timeout 60s -o json || return 1
  jq -e '.tlsBootstrap.changed and (.tlsBootstrap.csrName | startswith("node-csr-"))' "$OUT" >/dev/null || fail "$(cat "$OUT")" || return 1
  local d=$T/e2e-node-1
  [ -L "$d/pki/kubelet-client-current.pem" ] || fail "no current link" || return 1
  [ "$(stat -c %a "$d/pki/$(readlink "$d/pki/kubelet-client-current.pem")")" = 600 ] || fail "pem mode" || return 1
  [ "$(stat -c %a "$d/ca.crt")" = 644 ] && [ "$(stat -c %a "$d/kubelet.conf")" = 600 ] || fail "modes" || return 1
  [ ! -e "$d/pki/kubelet-client.key.tmp" ] || fail "the pending key was left" || return 1
  openssl x509 -in "$d/pki/kubelet-client-current.pem" -noout -subject | grep -q "CN = system:node:e2e-node-1" ||
    fail "subject" || return 1
  # kubelet.conf works as system:node:e2e-node-1: its own Node yes, another's no (NodeRestriction).
  node_yaml e2e-node-1 | kubectl --kubeconfig "$d/kubelet.conf" create -f - >/dev/null || fail "own Node refused" || return 1
  node_yaml e2e-node-2 | kubectl --kubeconfig "$d/kubelet.conf" create -f - >/dev/null 2>"$T/forbidden" &&
    { fail "another node's Node was allowed"; return 1; }
  grep -q "forbidden" "$T/forbidden" || fail "$(cat "$T/forbidden")" || return 1
  # A second run does nothing.
  local before; before=$(ls "$d/pki" | sort | sha256sum)
  kj 0 tls-bootstrap --bootstrap-kubeconfig "$T/bootstrap.conf" $(tls_args e2e-node-1) --timeout 30s -o json || return 1
  jq -e '.changed == false' "$OUT" >/dev/null || fail "second run changed: $(cat "$OUT")" || return 1
  [ "$(ls "$d/pki" | sort | sha256sum)" = "$before" ] || fail "second run wrote" || return 1
  kc delete node e2e-node-1 >/dev/null 2>&1
}

# Other agents ask other signers; nothing approves those by itself, so a
# denial and a missed deadline can be shown.
agent_args() {
  echo "--csr-signer kubernetes.io/kube-apiserver-client --csr-subject CN=$1,O=agents --node-name $1 $(tls_args "$1" | sed 's/--node-name [^ ]* //')"
}
pending_csr() { kc get csr -o json | jq -r --arg s kubernetes.io/kube-apiserver-client '.items[] | select(.spec.signerName == $s and (.status.conditions == null)) | .metadata.name' | head -1; }

t_e2e_tls_bootstrap_denied_is_a_trust_failure() {
  bootstrap_conf "$T/bootstrap.conf" || return 1
  "$KJOIN" tls-bootstrap --bootstrap-kubeconfig "$T/bootstrap.conf" $(agent_args agent-denied) --timeout 60s \
    >"$T/deny.out" 2>"$T/deny.err" &
  local pid=$! name=""
  have_csr() { name=$(pending_csr); [ -n "$name" ]; }
  e2e_wait 30 have_csr || { kill "$pid"; fail "no CSR appeared"; return 1; }
  kc certificate deny "$name" >/dev/null || { kill "$pid"; return 1; }
  wait "$pid"; local rc=$?
  [ $rc = 4 ] || fail "exit $rc, want 4: $(cat "$T/deny.err")" || return 1
  grep -q "was denied" "$T/deny.err" || fail "$(cat "$T/deny.err")" || return 1
  kc delete csr "$name" >/dev/null
}

t_e2e_tls_bootstrap_timeout_then_rerun_picks_up_its_csr() {
  bootstrap_conf "$T/bootstrap.conf" || return 1
  kj 3 tls-bootstrap --bootstrap-kubeconfig "$T/bootstrap.conf" $(agent_args agent-late) --timeout 3s || return 1
  err_has "stays on the cluster" || return 1
  local name; name=$(pending_csr)
  [ -n "$name" ] || fail "the CSR is gone" || return 1
  [ -e "$T/agent-late/pki/kubelet-client.key.tmp" ] || fail "the pending key is gone" || return 1
  "$KJOIN" tls-bootstrap --bootstrap-kubeconfig "$T/bootstrap.conf" $(agent_args agent-late) --timeout 60s \
    >"$T/late.out" 2>"$T/late.err" &
  local pid=$!
  picked() { grep -q "made by an earlier run" "$T/late.err"; }
  e2e_wait 30 picked || { kill "$pid"; fail "the re-run did not find its CSR: $(cat "$T/late.err")"; return 1; }
  kc certificate approve "$name" >/dev/null || { kill "$pid"; return 1; }
  wait "$pid" || { fail "re-run exit $?: $(cat "$T/late.err")"; return 1; }
  openssl x509 -in "$T/agent-late/pki/kubelet-client-current.pem" -noout -subject | grep -q "O = agents, CN = agent-late" ||
    fail "subject: $(openssl x509 -in "$T/agent-late/pki/kubelet-client-current.pem" -noout -subject)" || return 1
  kc delete csr "$name" >/dev/null
}

t_e2e_tls_bootstrap_refuses_bad_input() {
  bootstrap_conf "$T/bootstrap.conf" || return 1
  kj 2 tls-bootstrap --bootstrap-kubeconfig "$T/bootstrap.conf" --node-name Bad_Name --timeout 5s || return 1
  err_has '--node-name "bad_name" is not a valid node name' || return 1
  kj 2 tls-bootstrap --bootstrap-kubeconfig "$T/bootstrap.conf" --csr-subject O=x --timeout 5s || return 1
  kj 2 tls-bootstrap --bootstrap-kubeconfig "$T/bootstrap.conf" --csr-usages "client auth,everything" || return 1
  kj 2 tls-bootstrap --bootstrap-kubeconfig "$T/bootstrap.conf" --csr-signer example.com/x $(tls_args n1) || return 1
  err_has "needs a --csr-subject" || return 1
  kj 2 tls-bootstrap --rotate --bootstrap-kubeconfig "$T/bootstrap.conf" || return 1
  kj 2 tls-bootstrap --bootstrap-kubeconfig "$E2E_ADMIN" $(tls_args n2) --timeout 5s || return 1
  err_has "holds no bootstrap token" || return 1
}

# The real kubelet: it bootstraps from what kjoin join writes, and it uses
# kjoin's certificate without asking for one of its own. (Kubelets from 1.31
# refuse a host with cgroup v1, as machines here may be, unless told.)
kubelet_start() { # NAME BOOTSTRAP KUBECONFIG CERTDIR
  local root=$T/kubelet-$1
  mkdir -p "$root/plugins" "$root/lib.upper" "$root/lib.work"
  # The kubelet's device manager writes /var/lib/kubelet/device-plugins
  # whatever --root-dir says: it runs in a mount namespace of its own, over a
  # copy-on-write /var/lib, so the machine's is never touched. (unshare
  # execs: the kubelet keeps the pid e2e_start records.)
  e2e_start "kubelet-$1" unshare --mount --propagation private sh -c \
    'mount -t overlay overlay -o "lowerdir=/var/lib,upperdir=$1/lib.upper,workdir=$1/lib.work" /var/lib && shift && exec "$@"' \
    kubelet "$root" "$KBIN/kubelet" --bootstrap-kubeconfig="$2" --kubeconfig="$3" --cert-dir="$4" \
    --root-dir="$root" --hostname-override="$1" --fail-swap-on=false --cgroups-per-qos=false \
    --enforce-node-allocatable= $(e2e_before 27 --container-runtime=remote) --container-runtime-endpoint=unix:///nonexistent.sock \
    --volume-plugin-dir="$root/plugins" --v=2 $(e2e_from 31 --fail-cgroupv1=false)
}
kubelet_stop() { local pid; eval "pid=\${E2E_PID_kubelet_${1//-/_}:-}"; [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; return 0; }
csrs_for() { kc get csr -o json | jq --arg u "system:node:$1" '[.items[] | select(.spec.username == $u or (.spec.request | @base64d | contains($u)))] | length'; }

t_e2e_real_kubelet_and_kjoin_agree() {
  bootstrap_conf "$T/bootstrap.conf" || return 1
  # 1. kubelet bootstraps from kjoin's bootstrap-kubelet.conf.
  kubelet_start kl-one "$T/bootstrap.conf" "$T/kl-one.conf" "$T/kl-one-pki"
  got_cert() { [ -e "$T/kl-one-pki/kubelet-client-current.pem" ]; }
  e2e_wait 60 got_cert; local rc=$?
  kubelet_stop kl-one
  [ $rc = 0 ] || { fail "kubelet got no certificate: $(tail -5 "$E2E_DIR/kubelet-kl-one.log")"; return 1; }
  # kjoin names a CSR as kubelet does: given kubelet's key, it finds kubelet's own CSR.
  mkdir -p "$T/kl-one/pki"
  openssl pkey -in "$T/kl-one-pki/kubelet-client-current.pem" -out "$T/kl-one/pki/kubelet-client.key.tmp"
  kj 0 tls-bootstrap --bootstrap-kubeconfig "$T/bootstrap.conf" $(tls_args kl-one) --timeout 30s || return 1
  err_has "made by an earlier run with this key" || return 1
  # 2. kubelet uses kjoin's certificate and asks for none.
  kj 0 tls-bootstrap --bootstrap-kubeconfig "$T/bootstrap.conf" $(tls_args kl-two) --timeout 60s || return 1
  local before; before=$(kc get csr -o name | sort)
  kubelet_start kl-two "$T/bootstrap.conf" "$T/kl-two/kubelet.conf" "$T/kl-two/pki"
  decided() { grep -q "skipping bootstrap\|Using bootstrap kubeconfig" "$E2E_DIR/kubelet-kl-two.log"; }
  e2e_wait 30 decided; rc=$?
  sleep 1
  kubelet_stop kl-two
  [ $rc = 0 ] || { fail "kubelet never looked at its kubeconfig: $(grep -v FLAG "$E2E_DIR/kubelet-kl-two.log" | head -5)"; return 1; }
  grep -q "exists and is valid, skipping bootstrap" "$E2E_DIR/kubelet-kl-two.log" ||
    fail "kubelet did not accept kjoin's kubelet.conf: $(grep bootstrap "$E2E_DIR/kubelet-kl-two.log" | head -3)" || return 1
  [ "$(kc get csr -o name | sort)" = "$before" ] || fail "kubelet made a CSR of its own" || return 1
  kc delete node kl-one kl-two >/dev/null 2>&1; return 0
}

# --rotate renews with the current identity once the set share of the life is
# gone (the e2e controller-manager signs for 1h, backdated 5 min: about 92%
# of the life is left just after issue).
t_e2e_tls_bootstrap_rotate_renews_with_the_current_certificate() {
  bootstrap_conf "$T/bootstrap.conf" || return 1
  kj 0 tls-bootstrap --bootstrap-kubeconfig "$T/bootstrap.conf" $(tls_args e2e-rot) --timeout 60s || return 1
  local d=$T/e2e-rot first; first=$(readlink "$d/pki/kubelet-client-current.pem")
  local paths; paths=$(tls_args e2e-rot | sed 's/--node-name [^ ]* //')
  kj 0 tls-bootstrap --rotate $paths --timeout 30s || return 1
  err_has "not due yet: nothing to do" || return 1
  sleep 1  # a new timestamped file name
  kj 10 tls-bootstrap --rotate $paths --renew-before 95% --timeout 60s -o json || return 1
  jq -e '.changed and .nodeName == "e2e-rot"' "$OUT" >/dev/null || fail "$(cat "$OUT")" || return 1
  local second; second=$(readlink "$d/pki/kubelet-client-current.pem")
  [ "$first" != "$second" ] && [ -e "$d/pki/$first" ] || fail "not switched to a new file ($first -> $second)" || return 1
  ! cmp -s "$d/pki/$first" "$d/pki/$second" || fail "same certificate" || return 1
  # The renewal was asked by the node itself, not the bootstrap token.
  kc get csr -o json | jq -e '[.items[] | select(.spec.username == "system:node:e2e-rot")] | length >= 1' >/dev/null ||
    fail "no CSR made by system:node:e2e-rot" || return 1
  kubectl --kubeconfig "$d/kubelet.conf" get --raw /api >/dev/null || fail "the renewed kubelet.conf does not work"
}

# kjoin refresh against the real cluster-info: a new CA added to the bundle
# is followed without a new pin; a bundle that would not verify the server is refused.
set_cluster_info_ca() { # PEM_FILE
  local kubeconfig
  kubeconfig=$(kc -n kube-public get configmap cluster-info -o json | jq -r .data.kubeconfig |
    sed "s|certificate-authority-data: .*|certificate-authority-data: $(base64 -w0 <"$1")|")
  kc -n kube-public get configmap cluster-info -o json | jq --arg k "$kubeconfig" '.data.kubeconfig = $k' |
    kc replace -f - >/dev/null
}
t_e2e_refresh_follows_cluster_info() {
  bootstrap_conf "$T/node.conf" || return 1
  kj 0 refresh --kubeconfig "$T/node.conf" || return 1
  mkca "$T" next; mkca "$T" evil
  cat "$T/next.crt" "$E2E_CA" >"$T/both.crt"
  set_cluster_info_ca "$T/both.crt" || return 1
  kj 10 refresh --kubeconfig "$T/node.conf" -o json
  local rc=$?
  set_cluster_info_ca "$T/evil.crt"
  cp "$T/node.conf" "$T/kept"
  kj 4 refresh --kubeconfig "$T/node.conf"; local rc2=$?
  set_cluster_info_ca "$E2E_CA" || return 1
  [ $rc = 0 ] && [ $rc2 = 0 ] || return 1
  cmp -s "$T/node.conf" "$T/kept" || fail "a refused refresh changed the file" || return 1
  kubectl --kubeconfig "$T/node.conf" config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' |
    base64 -d | grep -c "BEGIN CERTIFICATE" | grep -qx 2 || fail "the new CA was not followed" || return 1
  kubectl --kubeconfig "$T/node.conf" get --raw /api >/dev/null || fail "the refreshed bootstrap kubeconfig does not work"
}

# kill -9 at random instants of a bootstrap: what is left is the old state or
# the new, and the next run finishes the job.
t_e2e_tls_bootstrap_killed_at_random_instants() {
  bootstrap_conf "$T/bootstrap.conf" || return 1
  local d=$T/e2e-kill i pid link
  for i in $(seq 12); do
    "$KJOIN" tls-bootstrap --bootstrap-kubeconfig "$T/bootstrap.conf" $(tls_args e2e-kill) --timeout 30s >/dev/null 2>&1 &
    pid=$!
    sleep "0.$(( RANDOM % 40 ))"
    kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    if [ -L "$d/pki/kubelet-client-current.pem" ]; then
      link=$(readlink -f "$d/pki/kubelet-client-current.pem")
      [ -s "$link" ] || { fail "the current link points at nothing after kill $i"; return 1; }
      [ "$(openssl x509 -in "$link" -noout -pubkey | sha256sum)" = "$(openssl pkey -in "$link" -pubout | sha256sum)" ] ||
        { fail "the current certificate and key differ after kill $i"; return 1; }
    fi
  done
  kj 0 tls-bootstrap --bootstrap-kubeconfig "$T/bootstrap.conf" $(tls_args e2e-kill) --timeout 60s || return 1
  kubectl --kubeconfig "$d/kubelet.conf" get --raw /api >/dev/null || fail "the set after the kills does not work" || return 1
  kj 0 tls-bootstrap --bootstrap-kubeconfig "$T/bootstrap.conf" $(tls_args e2e-kill) --timeout 30s -o json || return 1
  jq -e '.changed == false' "$OUT" >/dev/null || fail "not idempotent after the kills"
}
