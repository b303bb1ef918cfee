# A hostile or intercepted API server (tests/tools/hostile.py) and a
# less-privileged local user against the API-facing verbs: refresh, the TLS
# bootstrap and token list. Each attack has a control beside it that
# succeeds against the same server, so a refusal is the defence, not a
# broken fixture.

# with_hostile FN: starts hostile.py on $T/h (config $T/h/config.json), sets
# HSERVER, runs FN and stops the server whatever FN returned.
with_hostile() {
  mkdir -p "$T/h"
  echo '{"certs": [["'"$C/server.crt"'", "'"$C/server.key"'"]]}' >"$T/h/config.json"
  python3 "$here/../tools/hostile.py" "$T/h/port" "$T/h" 2>"$T/h/server.log" &
  local pid=$! i rc
  for i in $(seq 100); do [ -s "$T/h/port" ] && break; sleep 0.05; done
  HSERVER="https://127.0.0.1:$(cat "$T/h/port" 2>/dev/null)"
  "$1"; rc=$?
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  return $rc
}
hconf() { cat >"$T/h/config.json"; : >"$T/h/requests.log"; }
requests() { grep -c "${1:-.}" "$T/h/requests.log" 2>/dev/null || true; }

# signed_info FILE BUNDLE: cluster-info for HSERVER carrying BUNDLE.
signed_info() {
  cluster_kubeconfig "$HSERVER" "$2" >"$1.kc"
  "$KJOIN" cluster-info sign --kubeconfig "$1.kc" --token-file "$C/token" >"$1"
}

# node_kubeconfig STYLE CA_FILE: a kubelet.conf trusting CA_FILE, its
# certificate-authority-data written in STYLE (plain, single, double,
# folded, literal, two-line plain).
node_kubeconfig() {
  local b64; b64=$(base64 -w0 <"$2")
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: default-cluster\n  cluster:\n'
  case $1 in
    plain) printf '    certificate-authority-data: %s\n' "$b64" ;;
    single) printf "    certificate-authority-data: '%s'\n" "$b64" ;;
    double) printf '    certificate-authority-data: "%s" # a comment\n' "$b64" ;;
    folded) printf '    certificate-authority-data: >-\n      %s\n' "$b64" ;;
    literal) printf '    certificate-authority-data: |\n\n        %s\n\n    # the CA above\n' "$b64" ;;
    twoline) printf '    certificate-authority-data: %s\n      %s\n' "${b64:0:40}" "${b64:40}" ;;
  esac
  printf '    server: %s\ncontexts:\n- name: default-context\n  context: {cluster: default-cluster, user: default-auth}\n' "$HSERVER"
  printf 'current-context: default-context\nusers:\n- name: default-auth\n  user: {token: none}\n'
}

# 1. An interceptor that shows the real server's certificate on the first
# connection and its own on the next cannot move the node to its CA: the new
# bundle must verify the very handshake the current CA verified.
refresh_interceptor() {
  mkca "$T" evil; mkleaf "$T" evil-srv evil
  signed_info "$T/evil-ci.json" "$T/evil.crt" || return 1
  cat "$T/evil.crt" "$C/ca.crt" >"$T/both.pem"; signed_info "$T/both-ci.json" "$T/both.pem" || return 1
  node_kubeconfig plain "$C/ca.crt" >"$T/kubelet.conf"; cp "$T/kubelet.conf" "$T/before"
  local real='["'"$C/server.crt"'", "'"$C/server.key"'"]' evil='["'"$T/evil-srv.crt"'", "'"$T/evil-srv.key"'"]'
  hconf <<J
{"certs": [$real, $evil], "close": true, "routes": {"GET $CLUSTER_INFO_PATH": {"file": "$T/evil-ci.json"}}}
J
  kj 4 refresh --kubeconfig "$T/kubelet.conf" --ca-cert-path "$T/pki/ca.crt" --timeout 10s || return 1
  err_has "does not verify the API server it came from" || return 1
  cmp -s "$T/kubelet.conf" "$T/before" && [ ! -e "$T/pki/ca.crt" ] || fail "the node's trust moved" || return 1
  [ "$(requests)" = 1 ] || fail "$(requests) requests: a second connection was asked" || return 1
  # The other order: the first handshake is the interceptor's; the current CA refuses it.
  hconf <<J
{"certs": [$evil, $real], "close": true, "routes": {"GET $CLUSTER_INFO_PATH": {"file": "$T/both-ci.json"}}}
J
  kj 4 refresh --kubeconfig "$T/kubelet.conf" --timeout 10s || return 1
  cmp -s "$T/kubelet.conf" "$T/before" || fail "the node's trust moved" || return 1
  # Control: the same interceptor order with the real server on the first
  # connection and a bundle that still holds the current CA is a rotation.
  hconf <<J
{"certs": [$real, $evil], "close": true, "routes": {"GET $CLUSTER_INFO_PATH": {"file": "$T/both-ci.json"}}}
J
  kj 10 refresh --kubeconfig "$T/kubelet.conf" --timeout 10s || return 1
  # The operator's further condition: the new bundle must hold a pinned root.
  cp "$T/before" "$T/kubelet.conf"
  hconf <<J
{"certs": [$real], "routes": {"GET $CLUSTER_INFO_PATH": {"file": "$T/both-ci.json"}}}
J
  # (A pin of a root that is not in the bundle: another CA of the test's own.)
  mkca "$T" unrelated
  kj 4 refresh --kubeconfig "$T/kubelet.conf" --require-ca-pin "$(root_pin "$T/unrelated.crt")" || return 1
  err_has "matches none of the required pins" || return 1
  cmp -s "$T/kubelet.conf" "$T/before" || fail "changed despite the pin" || return 1
  kj 10 refresh --kubeconfig "$T/kubelet.conf" --require-ca-pin "$(root_pin "$T/evil.crt")" || return 1
}
t_hostile_refresh_interceptor_cannot_move_the_ca() { with_hostile refresh_interceptor; }

# 2. Every YAML style of certificate-authority-data is rewritten into a file
# that reads back with the new bundle and nothing else changed.
refresh_styles() {
  mkca "$T" next
  cat "$T/next.crt" "$C/ca.crt" >"$T/bundle.pem"; signed_info "$T/ci.json" "$T/bundle.pem" || return 1
  hconf <<J
{"certs": [["$C/server.crt", "$C/server.key"]], "routes": {"GET $CLUSTER_INFO_PATH": {"file": "$T/ci.json"}}}
J
  local style
  for style in plain single double folded literal twoline; do
    node_kubeconfig "$style" "$C/ca.crt" >"$T/$style.conf"
    kj 10 refresh --kubeconfig "$T/$style.conf" || { fail "style $style"; return 1; }
    kubectl --kubeconfig "$T/$style.conf" config view --raw \
      -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' >"$T/$style.b64" 2>"$T/$style.err" ||
      { fail "kubectl cannot read the $style result: $(cat "$T/$style.err")"; return 1; }
    base64 -d <"$T/$style.b64" | cmp -s - "$T/bundle.pem" || { fail "style $style: not the new bundle"; return 1; }
    [ "$(kubectl --kubeconfig "$T/$style.conf" config view -o jsonpath='{.clusters[0].cluster.server}')" = "$HSERVER" ] ||
      { fail "style $style: the server changed"; return 1; }
    kj 0 refresh --kubeconfig "$T/$style.conf" || { fail "style $style: not stable"; return 1; }
    err_has "unchanged (2 certificate(s))" || return 1
  done
  # A CA given as a path cannot be rewritten: exit 2 before anything is asked.
  node_kubeconfig plain "$C/ca.crt" | sed "s|certificate-authority-data: .*|certificate-authority: $C/ca.crt|" >"$T/path.conf"
  : >"$T/h/requests.log"
  kj 2 refresh --kubeconfig "$T/path.conf" || return 1
  err_has "a certificate-authority path is not rewritten" || return 1
  [ "$(requests)" = 0 ] || fail "the server was asked before the input was checked" || return 1
}
t_hostile_refresh_rewrites_every_yaml_style() { with_hostile refresh_styles; }

# bootstrap_conf: a bootstrap kubeconfig for HSERVER with this cluster's CA.
bootstrap_conf() {
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: k\n  cluster: {server: "%s", certificate-authority-data: %s}\n' \
    "$HSERVER" "$(base64 -w0 <"$C/ca.crt")"
  printf 'users:\n- name: b\n  user: {token: %s}\ncontexts:\n- name: b@k\n  context: {cluster: k, user: b}\ncurrent-context: b@k\n' \
    "$(cat "$C/token")"
}
csr_server() { # [SUBJECT] [APPEND]: the CA of this cluster signs every CSR
  hconf <<J
{"certs": [["$C/server.crt", "$C/server.key"]], "csr": {"ca": "$C/ca.crt", "ca_key": "$C/ca.key", "subject": "${1:-}", "append": "${2:-}"}}
J
}
tls_bootstrap() { # EXPECTED PKI_DIR
  kj "$1" tls-bootstrap --bootstrap-kubeconfig "$T/bootstrap.conf" --kubelet-pki-dir "$2" --node-name worker-1 \
    --kubelet-kubeconfig "$T/out/kubelet.conf" --ca-cert-path "$T/out/ca.crt" --timeout 20s
}
nothing_issued() { # PKI_DIR: no certificate, no kubelet.conf
  ! ls "$1"/kubelet-client-2* >/dev/null 2>&1 && [ ! -e "$T/out/kubelet.conf" ] ||
    fail "something was written: $(ls "$1" "$T/out" 2>&1 | tr '\n' ' ')"
}

# 3. A key planted in the PKI directory by another user is never used.
bootstrap_planted_key() {
  bootstrap_conf >"$T/bootstrap.conf"; csr_server
  local open pki as_nobody=(setpriv --reuid nobody --regid nogroup --clear-groups)
  open=$(mktemp -d /tmp/kjoin-hostile.XXXXXX); chmod 755 "$open"; pki=$open/pki
  mkdir "$pki"; chown nobody "$pki"
  "${as_nobody[@]}" openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pki/kubelet-client.key.tmp" 2>/dev/null ||
    { fail "setpriv"; rm -rf "$open"; return 1; }
  local rc=0
  # Their directory.
  tls_bootstrap 2 "$pki" && err_has "the directory $pki is owned by uid $(id -u nobody)" && err_has "chown" || rc=1
  # Root's directory, their key.
  [ $rc = 0 ] && chown root "$pki" && chmod 700 "$pki" && tls_bootstrap 2 "$pki" &&
    err_has "the key of a pending request" && err_has "owned by uid $(id -u nobody)" || rc=1
  # Root's key, but readable by others.
  [ $rc = 0 ] && chown root "$pki/kubelet-client.key.tmp" && chmod 644 "$pki/kubelet-client.key.tmp" &&
    tls_bootstrap 2 "$pki" && err_has "readable by group or others (mode 0644)" || rc=1
  # A symlink in its place (to a key root would otherwise read).
  [ $rc = 0 ] && rm "$pki/kubelet-client.key.tmp" && ln -s "$C/server.key" "$pki/kubelet-client.key.tmp" &&
    tls_bootstrap 2 "$pki" && err_has "not followed" || rc=1
  # A group-writable directory above.
  [ $rc = 0 ] && rm "$pki/kubelet-client.key.tmp" && chmod 775 "$open" && tls_bootstrap 2 "$pki" &&
    err_has "writable by group or others" || rc=1
  # A sticky directory others may write in is no PKI directory (anyone could plant a key there).
  [ $rc = 0 ] && chmod 755 "$open" && chmod 1777 "$pki" && tls_bootstrap 2 "$pki" &&
    err_has "the directory $pki is writable by group or others (mode 1777)" && chmod 700 "$pki" || rc=1
  [ $rc = 0 ] && [ "$(requests POST)" = 0 ] || { fail "a CSR was sent with a refused key"; rc=1; }
  [ $rc = 0 ] && nothing_issued "$pki" || rc=1
  # Control: the same directory, once it is root's alone, bootstraps with a key of ours.
  [ $rc = 0 ] && chmod 755 "$open" && tls_bootstrap 0 "$pki" && [ "$(requests POST)" = 1 ] || rc=1
  rm -rf "$open"
  return $rc
}
t_hostile_tls_bootstrap_refuses_a_planted_key() { with_hostile bootstrap_planted_key; }

# 4. What the server answers is written only as parsed: no trailing key or text.
bootstrap_answers() {
  bootstrap_conf >"$T/bootstrap.conf"
  local foreign; foreign=$(openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 2>/dev/null | awk '{printf "%s\\n", $0}')
  csr_server "" "$foreign"
  tls_bootstrap 4 "$T/pki1" && err_has "something other than certificates" && nothing_issued "$T/pki1" || return 1
  csr_server "" 'trailing \u001b]2;pwned\u0007 text'
  tls_bootstrap 4 "$T/pki2" && nothing_issued "$T/pki2" || return 1
  bootstrap_control
}
t_hostile_tls_bootstrap_writes_only_what_it_checked() { with_hostile bootstrap_answers; }

# 5. Only the subject asked for: one CN, the O values asked, nothing else.
bootstrap_subjects() {
  bootstrap_conf >"$T/bootstrap.conf"
  local subject
  for subject in "/O=system:nodes/CN=system:node:worker-1/CN=system:node:master" \
                 "/O=system:nodes/O=system:masters/CN=system:node:worker-1" \
                 "/O=system:nodes/OU=x/CN=system:node:worker-1" "/CN=system:node:worker-1"; do
    csr_server "$subject"
    tls_bootstrap 4 "$T/pki3" && err_has "subject is not exactly the one asked for" && nothing_issued "$T/pki3" ||
      { fail "subject $subject was accepted"; return 1; }
  done
  bootstrap_control
}
t_hostile_tls_bootstrap_accepts_only_the_subject_asked() { with_hostile bootstrap_subjects; }

# The control: the subject asked for (in the other order) and a plain answer.
bootstrap_control() {
  csr_server "/CN=system:node:worker-1/O=system:nodes"
  tls_bootstrap 0 "$T/pki4" || return 1
  local pem="$T/pki4/kubelet-client-current.pem"
  [ "$(grep -c -- '-----BEGIN' "$pem")" = 2 ] || fail "the pair holds $(grep -c -- '-----BEGIN' "$pem") blocks" || return 1
  cmp -s <(openssl x509 -in "$pem" -noout -pubkey) <(openssl pkey -in "$pem" -pubout) ||
    fail "the certificate is not for the key beside it" || return 1
}

# 6. Strings from the cluster reach the terminal only through the sanitiser.
token_list_escapes() {
  local id=esc123 b; b() { printf '%s' "$1" | base64 -w0; }
  cat >"$T/secrets.json" <<J
{"kind": "SecretList", "items": [
 {"metadata": {"name": "bootstrap-token-$id"}, "type": "bootstrap.kubernetes.io/token",
  "data": {"token-id": "$(b $id)", "token-secret": "$(b 0123456789abcdef)", "usage-bootstrap-authentication": "$(b true)",
           "description": "$(printf 'desc\033[2J' | base64 -w0)", "auth-extra-groups": "$(printf 'system:bootstrappers:x\033]0;pwned\007' | base64 -w0)"}},
 {"metadata": {"name": "bootstrap-token-\u001b[31mred"}, "type": "bootstrap.kubernetes.io/token", "data": {}}]}
J
  hconf <<J
{"certs": [["$C/server.crt", "$C/server.key"]], "routes": {"GET /api/v1/namespaces/kube-system/secrets": {"file": "$T/secrets.json"}}}
J
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "%s", certificate-authority-data: %s}\nusers:\n- name: u\n  user: {token: x}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n' \
    "$HSERVER" "$(base64 -w0 <"$C/ca.crt")" >"$T/admin.conf"
  kj 0 token list --kubeconfig "$T/admin.conf" || return 1
  out_has "system:bootstrappers:x?]0;pwned?" && out_has "desc?[2J" && err_has "bootstrap-token-?[31mred" || return 1
  ! grep -q $'\033\|\007' "$OUT" "$ERR" || fail "a control character reached the terminal" || return 1
}
t_hostile_token_list_prints_no_escape_sequences() { with_hostile token_list_escapes; }

# A token where a path belongs is never echoed; a deadline outside join is not "DiscoveryTimeout".
t_hostile_token_shaped_values_are_not_echoed() {
  SECRETS+=(0123456789abcdef)
  kj 2 join --skip-phases preflight,kubelet-start 127.0.0.1:1 --token-file abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "cannot open abcdef.****************" || return 1
  kj 2 join --skip-phases preflight,kubelet-start 127.0.0.1:1 --token-file 'K10abc::server:0123456789abcdef' --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "K10abc::****" || return 1
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "https://127.0.0.1:1", certificate-authority-data: %s}\nusers:\n- name: u\n  user: {token: x}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n' \
    "$(base64 -w0 <"$C/ca.crt")" >"$T/admin.conf"
  kj 3 token create --kubeconfig "$T/admin.conf" --timeout 1s -o json || return 1
  jq -e '.error.reason == "Timeout"' "$OUT" >/dev/null || fail "reason: $(cat "$OUT")" || return 1
}

# kubelet-start against a hostile API server: the Node, /version and the
# ConfigMaps are untrusted JSON. kjoin runs in a mount namespace of its own
# with copy-on-write views of /etc and /var/lib (KJ_PRE, a shell command,
# runs there first), a stand-in kubelet that only tells its version, and a
# runtime socket that is only a name: the ConfigMap's absence stops each run
# (exit 6) before anything is written.
on_scratch_node() {
  mkdir -p "$T/ns/etc.u" "$T/ns/etc.w" "$T/ns/lib.u" "$T/ns/lib.w" "$T/bin"
  printf '#!/bin/sh\necho Kubernetes v1.37.2\n' >"$T/bin/kubelet"; chmod 755 "$T/bin/kubelet"
  cat >"$T/on-node" <<SH
#!/bin/sh
exec unshare -m --propagation private sh -c 'mount -t overlay overlay -o lowerdir=/etc,upperdir=$T/ns/etc.u,workdir=$T/ns/etc.w /etc &&
  mount -t overlay overlay -o lowerdir=/var/lib,upperdir=$T/ns/lib.u,workdir=$T/ns/lib.w /var/lib && eval "\${KJ_PRE:-:}" &&
  PATH=$T/bin:\$PATH exec "\$0" "\$@"' "$KJOIN" "\$@"
SH
  chmod 755 "$T/on-node"
}
kubelet_start_answers() {
  signed_info "$T/ci.json" "$C/ca.crt" || return 1
  on_scratch_node
  printf '{"major": "1", "minor": "37"}' >"$T/version.json"
  local name node i
  local nodes=(
    '{"status": {"conditions": [{"type": null, "status": "True"}]}}'
    '{"status": {"conditions": [{"type": "Ready", "status": null}]}}'
    '{"status": {"conditions": [null, 7, "Ready", [], {"type": 7, "status": false}]}}'
    '{"status": {"conditions": {"type": "Ready", "status": "True"}}}'
    '{"status": null}'
    '[{"status": {"conditions": [{"type": "Ready", "status": "True"}]}}]'
    '"Ready"'
  )
  local versions=('{"major": null, "minor": null}' '{"minor": 37}' '[]' 'null')
  for i in "${!nodes[@]}"; do
    printf '%s' "${nodes[$i]}" >"$T/node.json"
    printf '%s' "${versions[$((i % ${#versions[@]}))]}" >"$T/version.json"
    hconf <<J
{"certs": [["$C/server.crt", "$C/server.key"]], "routes": {"GET $CLUSTER_INFO_PATH": {"file": "$T/ci.json"},
 "GET /version": {"file": "$T/version.json"}, "GET /api/v1/nodes/worker-h": {"file": "$T/node.json"}}}
J
    KJOIN=$T/on-node kj 6 join phase kubelet-start "${HSERVER#https://}" --token-file "$C/token" \
      --discovery-token-ca-cert-hash "$PIN" --node-name worker-h --cri-socket "$T/cri.sock" --discovery-timeout 10s ||
      { fail "node answer $i: ${nodes[$i]}"; return 1; }
    err_has "configmap kube-system/kubelet-config" || return 1
    [ "$(requests "GET /api/v1/nodes/worker-h")" = 1 ] || fail "the Node was not asked for" || return 1
  done
  # The control: a Node that is Ready, in the same server, is refused by name.
  printf '{"status": {"conditions": [{"type": "Ready", "status": "True"}]}}' >"$T/node.json"
  KJOIN=$T/on-node kj 2 join phase kubelet-start "${HSERVER#https://}" --token-file "$C/token" \
    --discovery-token-ca-cert-hash "$PIN" --node-name worker-h --cri-socket "$T/cri.sock" --discovery-timeout 10s || return 1
  err_has "a Node named worker-h is Ready in the cluster already" || return 1
  [ -z "$(find "$T/ns/etc.u" "$T/ns/lib.u" -mindepth 1 2>/dev/null)" ] || fail "written: $(find "$T/ns/etc.u" "$T/ns/lib.u" -mindepth 1 | head -3)"
}
t_hostile_kubelet_start_takes_null_and_wrong_types_calmly() { with_hostile kubelet_start_answers; }

# kjoin sync on a node (on_scratch_node's copy-on-write views) against a
# hostile API server: its kubeadm-config and kubelet-config are untrusted
# JSON, the join record an untrusted file. Every refusal before anything is
# written; --check changes nothing and labels the Node; sync writes what
# differs (the record first); a record others may read, another user, a
# forged record and a refused label are each refused by name.
sync_node() { # the node as a join left it, put in place by the next run's KJ_PRE
  local inputs=${1:-'"criSocket": "unix:///run/containerd/containerd.sock", "hostnameOverride": true, "taints": [], "extraArgs": ["node-labels=a=b"]'}
  mkdir -p "$T/node"
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "%s", certificate-authority-data: %s}\nusers:\n- name: u\n  user: {token: x}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n' \
    "$HSERVER" "$(base64 -w0 <"$C/ca.crt")" >"$T/node/kubelet.conf"
  local with=', "kubeletInputs": {'"$inputs"'}'
  [ "$inputs" != none ] || with="" # a record of an earlier kjoin
  printf '{"kind": "KjoinJoinRecord", "joinID": "j", "server": "%s", "nodeName": "worker-s", "files": [], "createdDirs": [],
    "kubeletDirBefore": []%s}' "$HSERVER" "$with" >"$T/node/kjoin-join.json"
  printf 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 110\n' >"$T/node/config.yaml"
  rm -rf "$T/ns"; mkdir -p "$T/ns/etc.u" "$T/ns/etc.w" "$T/ns/lib.u" "$T/ns/lib.w"
  KJ_PRE="mkdir -p /etc/kubernetes /var/lib/kubelet && cp $T/node/kubelet.conf $T/node/kjoin-join.json /etc/kubernetes/ &&
    chmod 600 /etc/kubernetes/kubelet.conf /etc/kubernetes/kjoin-join.json && cp $T/node/config.yaml /var/lib/kubelet/${2:+ && $2}"
}
sync_routes() { # KUBEADM_CONFIG_FILE KUBELET_CONFIG_FILE PATCH_STATUS
  hconf <<J
{"certs": [["$C/server.crt", "$C/server.key"]], "routes": {"GET /version": {"file": "$T/version.json"},
 "GET /api/v1/namespaces/kube-system/configmaps/kubeadm-config": {"file": "$1"},
 "GET /api/v1/namespaces/kube-system/configmaps/kubelet-config": {"file": "$2"},
 "PATCH /api/v1/nodes/worker-s": {"status": $3, "file": "$T/node.json"}}}
J
}
node_config_unchanged() { # the node's config.yaml as the join left it, nothing else of the kubelet's written
  cmp -s "$T/node/config.yaml" "$T/ns/lib.u/kubelet/config.yaml" && [ "$(ls "$T/ns/lib.u/kubelet")" = config.yaml ] ||
    fail "written: $(ls -l "$T/ns/lib.u/kubelet"; cat "$T/ns/lib.u/kubelet/config.yaml")"
}
sync_answers() {
  on_scratch_node
  printf '{"major": "1", "minor": "37"}' >"$T/version.json"
  printf '{"kind": "Node"}' >"$T/node.json"
  printf '{"data": {"ClusterConfiguration": "apiVersion: kubeadm.k8s.io/v1beta4\\nkind: ClusterConfiguration\\nkubernetesVersion: v1.37.2\\n"}}' >"$T/kubeadm.json"
  printf '{"data": {"kubelet": "apiVersion: kubelet.config.k8s.io/v1beta1\\nkind: KubeletConfiguration\\nmaxPods: 90\\n"}}' >"$T/kubelet.json"
  sync_routes "$T/kubeadm.json" "$T/kubelet.json" 200
  # No join record: nothing asked.
  KJOIN=$T/on-node kj 2 sync --check || return 1
  err_has "no join record: this node was not joined by kjoin" && [ "$(requests)" = 0 ] || return 1
  kj 2 sync --check --restart || return 1
  err_has "give one of them" || return 1
  # Hostile answers: each refused, nothing written, the Node not labeled.
  local answer i=0
  for answer in '[]' '{"data": null}' '{"data": {"kubelet": 7}}' '{"data": {"kubelet": "kind: [unclosed"}}' \
    '{"data": {"kubelet": "apiVersion: v1\nkind: Pod\n"}}' '{"data": {"kubelet": "- a list"}}'; do
    printf '%s' "$answer" >"$T/bad.json"
    sync_node; sync_routes "$T/kubeadm.json" "$T/bad.json" 200
    KJOIN=$T/on-node KJ_PRE=$KJ_PRE kj any sync --check -o json || return 1
    [ "$RC" != 0 ] && [ "$RC" != 11 ] && jq -e '.error.message' "$OUT" >/dev/null && [ "$(requests PATCH)" = 0 ] && node_config_unchanged ||
      { fail "kubelet-config answer $i ($answer): exit $RC, $(cat "$OUT")"; return 1; }
    i=$((i + 1))
  done
  sync_node; sync_routes "$T/kubelet.json" "$T/kubelet.json" 200 # a kubeadm-config that is no ClusterConfiguration
  KJOIN=$T/on-node KJ_PRE=$KJ_PRE kj any sync --check || return 1
  [ "$RC" != 0 ] && [ "$RC" != 11 ] && [ "$(requests PATCH)" = 0 ] && node_config_unchanged || { fail "kubeadm-config: exit $RC"; return 1; }
  # The check: exit 11, what differs said, nothing written, the Node labeled drifted.
  sync_node; sync_routes "$T/kubeadm.json" "$T/kubelet.json" 200
  KJOIN=$T/on-node KJ_PRE=$KJ_PRE kj 11 sync --check -o json || return 1
  jq -e '.state == "drifted" and .labeled and (.files[0].changes | index("maxPods: 110 -> 90") != null)
      and (.files | map(.path) == ["/var/lib/kubelet/config.yaml", "/var/lib/kubelet/instance-config.yaml", "/var/lib/kubelet/kubeadm-flags.env"])' \
    "$OUT" >/dev/null && [ "$(requests PATCH)" = 1 ] && node_config_unchanged || { fail "--check: $(cat "$OUT")"; return 1; }
  # A refused label: exit 6, after the rest.
  sync_routes "$T/kubeadm.json" "$T/kubelet.json" 403
  KJOIN=$T/on-node kj 6 sync --check || return 1
  err_has "label the Node" || return 1
  # sync: each file written 0644, the record naming them first.
  sync_routes "$T/kubeadm.json" "$T/kubelet.json" 200
  KJOIN=$T/on-node kj 10 sync -o json || return 1
  local lib=$T/ns/lib.u/kubelet hash
  hash=$(jq -r .hash "$OUT")
  grep -q "^maxPods: 90$" "$lib/config.yaml" && grep -q "containerRuntimeEndpoint" "$lib/instance-config.yaml" &&
    grep -q -- "--node-labels=a=b" "$lib/kubeadm-flags.env" && grep -q -- "--hostname-override=worker-s" "$lib/kubeadm-flags.env" &&
    [ "$(stat -c %a "$lib/config.yaml" "$lib/instance-config.yaml" "$lib/kubeadm-flags.env" | sort -u)" = 644 ] &&
    [ "$(jq -r '.files | map(.path) | sort | join(" ")' "$T/ns/etc.u/kubernetes/kjoin-join.json")" = \
      "/var/lib/kubelet/config.yaml /var/lib/kubelet/instance-config.yaml /var/lib/kubelet/kubeadm-flags.env" ] ||
    { fail "sync wrote: $(ls -l "$lib"; cat "$T/ns/etc.u/kubernetes/kjoin-join.json")"; return 1; }
  KJOIN=$T/on-node kj 0 sync --check || return 1
  out_has "in-sync" || return 1
  # Another node (its own name, address, flags) synced to the same configuration: the same hash.
  sync_node '"criSocket": "unix:///run/containerd/containerd.sock", "hostnameOverride": false, "nodeIP": "10.0.0.9", "taints": [], "extraArgs": []'
  KJOIN=$T/on-node KJ_PRE=$KJ_PRE kj 10 sync -o json || return 1
  [ "$(jq -r .hash "$OUT")" = "$hash" ] && [ "${#hash}" = 64 ] && grep -q -- "--node-ip=10.0.0.9" "$lib/kubeadm-flags.env" ||
    { fail "another node's hash $(jq -r .hash "$OUT"), not $hash"; return 1; }
  # A record others may read, another user, a forged record: refused, nothing asked.
  sync_node "" "chmod 644 /etc/kubernetes/kjoin-join.json"; sync_routes "$T/kubeadm.json" "$T/kubelet.json" 200
  KJOIN=$T/on-node KJ_PRE=$KJ_PRE kj 2 sync --check || return 1
  err_has "kjoin-join.json" && [ "$(requests)" = 0 ] && node_config_unchanged || { fail "a record others may read"; return 1; }
  sync_node; sync_routes "$T/kubeadm.json" "$T/kubelet.json" 200
  KJOIN=$T/on-node KJ_PRE="$KJ_PRE && exec setpriv --reuid nobody --regid nogroup --clear-groups \"\$0\" \"\$@\"" kj 2 sync --check || return 1
  [ "$(requests)" = 0 ] || { fail "another user's sync asked the server"; return 1; }
  sync_node '"criSocket": "s", "hostnameOverride": false, "taints": [], "extraArgs": ["v=2\n--x"]'
  KJOIN=$T/on-node KJ_PRE=$KJ_PRE kj 2 sync --check || return 1
  err_has "kubeletInputs.extraArgs" && [ "$(requests)" = 0 ] && node_config_unchanged || { fail "a forged record"; return 1; }
  # A record of an earlier kjoin (no kubeletInputs): the runtime from the kubelet's files, the flags file left.
  sync_node none; sync_routes "$T/kubeadm.json" "$T/kubelet.json" 200
  KJOIN=$T/on-node KJ_PRE=$KJ_PRE kj 2 sync --check || return 1
  err_has "names no container runtime" && node_config_unchanged || return 1
  sync_node none "printf 'KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=unix:///run/crio/crio.sock\"\\n' >/var/lib/kubelet/kubeadm-flags.env"
  KJOIN=$T/on-node KJ_PRE=$KJ_PRE kj 10 sync -o json || return 1
  jq -e '.flagsKept and (.files | map(.path) == ["/var/lib/kubelet/config.yaml", "/var/lib/kubelet/instance-config.yaml"])' "$OUT" >/dev/null &&
    grep -q 'containerRuntimeEndpoint: "unix:///run/crio/crio.sock"' "$T/ns/lib.u/kubelet/instance-config.yaml" &&
    grep -q "crio.sock" "$T/ns/lib.u/kubelet/kubeadm-flags.env" || { fail "an earlier kjoin's record: $(cat "$OUT")"; return 1; }
  # The join's patches gone since: said, nothing written.
  sync_node '"criSocket": "s", "hostnameOverride": false, "patchesDir": "/nonexistent/patches", "taints": [], "extraArgs": []'
  sync_routes "$T/kubeadm.json" "$T/kubelet.json" 200
  KJOIN=$T/on-node KJ_PRE=$KJ_PRE kj 2 sync || return 1
  err_has "the join's patches: " && err_has "/nonexistent/patches" && node_config_unchanged || return 1
}
t_hostile_sync_refuses_before_it_writes() { with_hostile sync_answers; }

# Certificates with a negative serial number (RFC 5280 forbids them; Go's
# crypto/x509, and so kubelet and K3s agents, refuses to parse them): as the
# server's certificate, in cluster-info's CA bundle, and in a K3s /cacerts
# body. Each has a control that joins through the same server.
neg_cert() { # NAME ISSUER SERIAL: a certificate for 127.0.0.1 (a CA when ISSUER is -)
  local n=$1 issuer=$2 serial=$3
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$T/$n.key" 2>/dev/null
  if [ "$issuer" = - ]; then
    openssl req -x509 -new -key "$T/$n.key" -subj "/CN=$n" -days 30 -set_serial "$serial" -out "$T/$n.crt" \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
  else
    openssl req -new -key "$T/$n.key" -subj "/CN=$n" -out "$T/$n.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' >"$T/$n.ext"
    openssl x509 -req -in "$T/$n.csr" -CA "$issuer.crt" -CAkey "$issuer.key" -set_serial "$serial" -days 30 \
      -extfile "$T/$n.ext" -out "$T/$n.crt" 2>/dev/null
  fi
}
negative_serials() {
  local hp=${HSERVER#https://} args=(--skip-phases preflight,kubelet-start --kubeconfig-out "$T/k.conf" --discovery-timeout 10s)
  neg_cert neg-srv "$C/ca" -9 && neg_cert pos-srv "$C/ca" 9 || return 1
  signed_info "$T/ci.json" "$C/ca.crt" || return 1
  for srv in pos-srv neg-srv; do
    hconf <<J
{"certs": [["$T/$srv.crt", "$T/$srv.key"]], "routes": {"GET $CLUSTER_INFO_PATH": {"file": "$T/ci.json"}}}
J
    local want=0; [ $srv = neg-srv ] && want=4
    kj $want join "$hp" --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" "${args[@]}" --force || return 1
  done
  err_has "a negative serial number, which RFC 5280 forbids" || return 1
  # The CA of cluster-info with a negative serial.
  neg_cert neg-ca - -7 && neg_cert neg-ca-srv "$T/neg-ca" 11 || return 1
  signed_info "$T/ci-neg.json" "$T/neg-ca.crt" || return 1
  hconf <<J
{"certs": [["$T/neg-ca-srv.crt", "$T/neg-ca-srv.key"]], "routes": {"GET $CLUSTER_INFO_PATH": {"file": "$T/ci-neg.json"}}}
J
  kj 4 join "$hp" --token-file "$C/token" --discovery-token-ca-cert-hash "$(spki_pin "$T/neg-ca.crt")" "${args[@]}" || return 1
  err_has "certificate 1 of the CA bundle has a negative serial number" || return 1
  # K3s: /cacerts holding it, with its hash in the token; the control holds the test CA.
  SECRETS+=(k3s-neg-pw)
  for ca in "$C/ca.crt" "$T/neg-ca.crt"; do
    local crt=$T/pos-srv.crt key=$T/pos-srv.key want=0
    [ "$ca" = "$T/neg-ca.crt" ] && crt=$T/neg-ca-srv.crt key=$T/neg-ca-srv.key want=4
    hconf <<J
{"certs": [["$crt", "$key"]], "routes": {"GET /cacerts": {"file": "$ca"}}}
J
    kj $want join "$hp" --token "K10$(sha256sum "$ca" | cut -c1-64)::node:k3s-neg-pw" "${args[@]}" --force || return 1
  done
  err_has "negative serial number" || return 1
  ! grep -qF "$(base64 -w0 "$T/neg-ca.crt")" "$T/k.conf" || fail "the kubeconfig holds the negative-serial CA"
}
t_hostile_negative_serial_numbers_are_refused() { with_hostile negative_serials; }

# Every place a whole join writes is checked before anything is read from
# the cluster or written: a /var/lib/kubelet that is a symlink (a data disk)
# or group-writable, a bootstrap kubeconfig in a shared sticky directory.
# The control, with the same server, gets as far as the cluster's ConfigMap.
destinations() {
  signed_info "$T/ci.json" "$C/ca.crt" || return 1
  on_scratch_node
  printf '{"minor": "37"}' >"$T/version.json"; printf '{}' >"$T/node.json"
  hconf <<J
{"certs": [["$C/server.crt", "$C/server.key"]], "routes": {"GET $CLUSTER_INFO_PATH": {"file": "$T/ci.json"},
 "GET /version": {"file": "$T/version.json"}, "GET /api/v1/nodes/worker-d": {"file": "$T/node.json"}}}
J
  local join=(join "${HSERVER#https://}" --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" --node-name worker-d
    --cri-socket "$T/cri.sock" --ignore-preflight-errors all --discovery-timeout 10s)
  KJ_PRE="mkdir -p /var/lib/data-disk && rm -rf /var/lib/kubelet && ln -s /var/lib/data-disk /var/lib/kubelet" \
    KJOIN=$T/on-node kj 2 "${join[@]}" || return 1
  err_has "/var/lib/kubelet/config.yaml cannot be written there" || return 1
  err_has "a symlink is not followed" || return 1
  KJ_PRE="rm -rf /var/lib/kubelet && mkdir /var/lib/kubelet && chmod 775 /var/lib/kubelet" KJOIN=$T/on-node kj 2 "${join[@]}" || return 1
  err_has "/var/lib/kubelet/config.yaml cannot be written there" || return 1
  local clean="rm -rf /var/lib/kubelet /var/lib/data-disk"
  KJ_PRE=$clean KJOIN=$T/on-node kj 2 "${join[@]}" --kubeconfig-out /tmp/kjoin-bootstrap.conf || return 1
  err_has "/tmp/kjoin-bootstrap.conf cannot be written there" || return 1
  [ "$(requests)" = 0 ] || fail "the cluster was asked before the destinations were checked" || return 1
  [ ! -e /tmp/kjoin-bootstrap.conf ] || fail "the token went to /tmp" || return 1
  KJ_PRE=$clean KJOIN=$T/on-node kj 6 "${join[@]}" || return 1
  err_has "configmap kube-system/kubelet-config" || return 1
  [ -z "$(find "$T/ns/etc.u" -mindepth 1 2>/dev/null)" ] || fail "written: $(find "$T/ns/etc.u" -mindepth 1 | head -3)"
}
t_hostile_destinations_checked_before_anything() { with_hostile destinations; }

# A token cluster-info was never signed for: the server is asked whether it
# knows the token at all, only over TLS verified against the pinned CA, and a
# token it rejects (401) ends the join at once with its own exit code; one it
# accepts, or --wait-for-token, keeps the wait. A server the pins do not vouch
# for (or no pin at all) is never shown the token.
token_rejected() {
  local start
  cluster_kubeconfig "$HSERVER" "$C/ca.crt" >"$T/unsigned.kc"
  jq -n --rawfile kc "$T/unsigned.kc" '{kind: "ConfigMap", apiVersion: "v1", metadata: {name: "cluster-info"}, data: {kubeconfig: $kc}}' \
    >"$T/unsigned.json"
  printf '{"kind": "Status", "status": "Failure", "reason": "Unauthorized", "code": 401}' >"$T/401.json"
  printf '{"major": "1", "minor": "37"}' >"$T/version.json"
  local real='["'"$C/server.crt"'", "'"$C/server.key"'"]' ci='"GET '"$CLUSTER_INFO_PATH"'": {"file": "'"$T/unsigned.json"'"}'
  hconf <<J
{"certs": [$real], "routes": {$ci, "GET /version": {"status": 401, "file": "$T/401.json"}}}
J
  start=$(date +%s)
  kj 8 join --skip-phases preflight,kubelet-start "127.0.0.1:${HSERVER##*:}" --token-file "$C/token" \
    --discovery-token-ca-cert-hash "$PIN" --discovery-timeout 60s -o json || return 1
  [ $(($(date +%s) - start)) -le 15 ] || fail "a rejected token took $(($(date +%s) - start)) s" || return 1
  err_has "rejects token id" || return 1
  jq -e '.error.code == 8 and .error.reason == "TokenRejected"' "$OUT" >/dev/null || fail "the JSON error: $(cat "$OUT")" || return 1
  [ "$(requests 'GET /version')" -ge 1 ] || fail "the server was not asked" || return 1
  # --wait-for-token: the same server, the wait goes on to the deadline.
  : >"$T/h/requests.log"
  kj 3 join --skip-phases preflight,kubelet-start "127.0.0.1:${HSERVER##*:}" --token-file "$C/token" \
    --discovery-token-ca-cert-hash "$PIN" --discovery-timeout 3s --wait-for-token || return 1
  [ "$(requests 'GET /version')" = 0 ] || fail "--wait-for-token still asked" || return 1
  # A token the server accepts: not signed yet, so the wait goes on.
  hconf <<J
{"certs": [$real], "routes": {$ci, "GET /version": {"status": 200, "file": "$T/version.json"}}}
J
  kj 3 join --skip-phases preflight,kubelet-start "127.0.0.1:${HSERVER##*:}" --token-file "$C/token" \
    --discovery-token-ca-cert-hash "$PIN" --discovery-timeout 3s || return 1
  [ "$(requests 'GET /version')" -ge 1 ] || fail "the server was not asked" || return 1
  # A pin the CA does not match, and no pin at all: never asked, never shown the token.
  mkca "$T" other
  hconf <<J
{"certs": [$real], "routes": {$ci, "GET /version": {"status": 401, "file": "$T/401.json"}}}
J
  kj 3 join --skip-phases preflight,kubelet-start "127.0.0.1:${HSERVER##*:}" --token-file "$C/token" \
    --discovery-token-ca-cert-hash "$(spki_pin "$T/other.crt")" --discovery-timeout 3s || return 1
  kj 3 join --skip-phases preflight,kubelet-start "127.0.0.1:${HSERVER##*:}" --token-file "$C/token" \
    --discovery-token-unsafe-skip-ca-verification --discovery-timeout 3s || return 1
  [ "$(requests 'GET /version')" = 0 ] || fail "a server the pins do not vouch for was asked with the token" || return 1
}
t_hostile_rejected_token_ends_the_join_at_once() { with_hostile token_rejected; }

# A server URL with userinfo: the host a request reaches is the one after the
# '@' (libcurl's parse), so "https://127.0.0.1:1@HOST" is no local endpoint
# and may not skip the operator's proxy. Every such URL is refused: in a
# signed cluster-info (exit 4, before any request to it), in a kubeconfig
# cluster-info sign is given (exit 2), and at the transport for any other (an etcd
# Pod's annotation): the unit suites cover that one.
t_hostile_server_url_with_userinfo_refused() {
  new_cluster userinfo || return 1
  cluster_kubeconfig "https://127.0.0.1:1@127.0.0.1:$PORT" "$C/ca.crt" >"$C/cluster.kubeconfig"
  kj 2 cluster-info sign --kubeconfig "$C/cluster.kubeconfig" --token-file "$C/token" || return 1
  err_has "no user name or password (userinfo)" || return 1
  # Signed anyway, as a careless control plane would: the join refuses it.
  local id; id=$(cut -d. -f1 "$C/token")
  printf '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cluster-info","namespace":"kube-public"},"data":{"jws-kubeconfig-%s":"x","kubeconfig":%s}}' \
    "$id" "$(jq -Rs . <"$C/cluster.kubeconfig")" >"$C/www/cluster-info"
  resign "$C" "{\"alg\":\"HS256\",\"kid\":\"$id\"}" sha256
  HTTPS_PROXY=http://127.0.0.1:9 kj 4 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "userinfo" || return 1
  [ ! -e "$T/kubelet.conf" ] || fail "a kubeconfig was written" || return 1
  # The control: the same cluster-info with the plain server joins.
  cluster_kubeconfig "https://127.0.0.1:$PORT" "$C/ca.crt" >"$C/cluster.kubeconfig"
  "$KJOIN" cluster-info sign --kubeconfig "$C/cluster.kubeconfig" --token-file "$C/token" >"$C/www/cluster-info" || return 1
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN"
}

# A join refused after discovery tells the cluster why: a join report POSTed
# as a CSR for kjoin's report signer, labelled, with the phase, exit code,
# reason and token ID and never the token's secret; a server that refuses
# the report changes nothing of the join's outcome but says so. kjoin reports
# shows a hostile list's strings printable, skips what is not a report, and a
# server's answer that is not a list is exit 6.
reports_hostile() {
  signed_info "$T/ci.json" "$C/ca.crt" || return 1
  on_scratch_node
  printf '{"minor": "37"}' >"$T/version.json"; printf '{}' >"$T/node.json"
  printf '{"kind": "Status", "status": "Failure", "reason": "Forbidden", "code": 403}' >"$T/403.json"
  local routes='"GET '"$CLUSTER_INFO_PATH"'": {"file": "'"$T/ci.json"'"}, "GET /version": {"file": "'"$T/version.json"'"},
    "GET /api/v1/nodes/worker-r": {"file": "'"$T/node.json"'"}' csrs=/apis/certificates.k8s.io/v1/certificatesigningrequests
  hconf <<J
{"certs": [["$C/server.crt", "$C/server.key"]], "routes": {$routes, "POST $csrs": {"status": 201, "file": "$T/node.json"}}}
J
  : >"$T/h/bodies.log"
  local join=(join "${HSERVER#https://}" --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" --node-name worker-r
    --cri-socket "$T/cri.sock" --ignore-preflight-errors all --discovery-timeout 10s -o json)
  KJOIN=$T/on-node kj 6 "${join[@]}" || return 1
  err_has "configmap kube-system/kubelet-config" && err_has "[report] The cluster was told of this failure" || return 1
  jq -e '.error.reported and .error.phase == "kubelet-start"' "$OUT" >/dev/null || fail "-o json: $(cat "$OUT")" || return 1
  [ "$(requests "POST $csrs")" = 1 ] || fail "report POSTs: $(requests "POST $csrs")" || return 1
  jq -e --arg id "$(jq -r .error.joinID "$OUT")" '.spec.signerName == "kjoin.io/join-report"
      and .metadata.labels["kjoin.io/join-report"] == "true" and .metadata.name == "kjoin-report-" + $id
      and .metadata.annotations["kjoin.io/phase"] == "kubelet-start" and .metadata.annotations["kjoin.io/exit-code"] == "6"
      and .metadata.annotations["kjoin.io/node"] == "worker-r"
      and (.metadata.annotations["kjoin.io/reason"] | contains("kubelet-config"))' "$T/h/bodies.log" >/dev/null ||
    fail "the report filed: $(head -c 800 "$T/h/bodies.log")" || return 1
  ! grep -qF "$(cut -d. -f2 "$C/token")" "$T/h/bodies.log" || fail "the report carries the token's secret" || return 1
  # Discovery without a pin (the unsafe mode) established no trust: whoever answered is told nothing.
  : >"$T/h/requests.log"
  KJOIN=$T/on-node kj 6 "${join[@]:0:4}" "${join[@]:6}" --discovery-token-unsafe-skip-ca-verification || return 1
  [ "$(requests "POST $csrs")" = 0 ] && jq -e '.error.reported == false' "$OUT" >/dev/null ||
    fail "the unsafe mode filed a report: $(requests "POST $csrs") POSTs, $(cat "$OUT")" || return 1
  # The report refused (403): the join's exit and reason as before, and it says the cluster was not told.
  hconf <<J
{"certs": [["$C/server.crt", "$C/server.key"]], "routes": {$routes, "POST $csrs": {"status": 403, "file": "$T/403.json"}}}
J
  KJOIN=$T/on-node kj 6 "${join[@]}" || return 1
  err_has "configmap kube-system/kubelet-config" && err_has "[report] WARNING: The cluster was not told of this failure" ||
    return 1
  jq -e '.error.reported == false' "$OUT" >/dev/null || fail "-o json: $(cat "$OUT")" || return 1
  # kjoin reports against a hostile list; then an answer that is no list.
  hconf <<J
{"certs": [["$C/server.crt", "$C/server.key"]], "routes": {"GET $csrs": {"file": "$here/../../testdata/fuzz/reports/hostile.json"}}}
J
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "%s", certificate-authority-data: %s}\nusers:\n- name: u\n  user: {token: x}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n' \
    "$HSERVER" "$(base64 -w0 <"$C/ca.crt")" >"$T/admin.conf"
  kj 0 reports --kubeconfig "$T/admin.conf" || return 1
  [ "$(grep -c '^n1' "$OUT")" = 2 ] && out_has "n1?[31m" || fail "kjoin reports: $(cat "$OUT")" || return 1
  ! grep -q $'\033\|\007' "$OUT" "$ERR" || fail "a control character reached the terminal" || return 1
  kj 0 reports --kubeconfig "$T/admin.conf" --node n1 -o json || return 1
  jq -e '.reports | length == 1 and .[0].exitCode == null and .[0].created == null' "$OUT" >/dev/null ||
    fail "kjoin reports -o json: $(head -c 500 "$OUT")" || return 1
  # A page at a time: the second asked for with the first's continue token (percent-encoded), both listed.
  jq -c '.metadata.continue = "p2+/=" | .items |= .[:1]' "$here/../../testdata/fuzz/reports/two.json" >"$T/page1.json"
  jq -c '.items |= .[1:]' "$here/../../testdata/fuzz/reports/two.json" >"$T/page2.json"
  hconf <<J
{"certs": [["$C/server.crt", "$C/server.key"]], "routes": {"GET $csrs?limit=100": {"file": "$T/page1.json"},
 "GET $csrs?limit=100&continue=p2%2B%2F%3D": {"file": "$T/page2.json"}}}
J
  kj 0 reports --kubeconfig "$T/admin.conf" -o json || return 1
  jq -e '[.reports[].name] == ["kjoin-report-2222", "kjoin-report-1111"]' "$OUT" >/dev/null &&
    [ "$(requests "GET $csrs")" = 2 ] || fail "two pages: $(head -c 300 "$OUT"); $(cat "$T/h/requests.log")" || return 1
  # A list that names itself as its next page does not go on for ever: exit 6.
  hconf <<J
{"certs": [["$C/server.crt", "$C/server.key"]], "routes": {"GET $csrs": {"file": "$T/page1.json"}}}
J
  kj 6 reports --kubeconfig "$T/admin.conf" || return 1
  err_has "does not end" && [ "$(requests "GET $csrs")" = 2 ] || fail "a page naming itself next: $(requests "GET $csrs") requests" || return 1
  hconf <<J
{"certs": [["$C/server.crt", "$C/server.key"]], "routes": {"GET $csrs": {"file": "$here/../../testdata/fuzz/reports/not-a-list.json"}}}
J
  kj 6 reports --kubeconfig "$T/admin.conf" || return 1
  err_has "not a list of certificate signing requests"
}
t_hostile_failed_join_reports_and_reports_lists_safely() { with_hostile reports_hostile; }

# kubeadm's ContainerRuntimeVersion (its 1.35 on; here by the kubelet's
# release): the runtime's answer to the CRI's RuntimeConfig, asked over
# HTTP/2 on its socket. A stand-in runtime (tests/tools/fake_cri.py)
# answers each way; kjoin join phase preflight, every other check ignored.
# cri_check MODE KUBELET_VERSION: the finding as -o json has it, in $T/cri.json;
# the runtime's connections in $T/cri.log.
cri_check() {
  rm -f "$T/cri.sock" "$T/cri.log"
  python3 "$here/../tools/fake_cri.py" "$T/cri.sock" "$1" "$T/cri.log" 2>"$T/cri.err" &
  local pid=$! i
  for i in $(seq 50); do [ -S "$T/cri.sock" ] && break; sleep 0.1; done
  mkdir -p "$T/bin" && printf '#!/bin/sh\necho Kubernetes %s\n' "$2" >"$T/bin/kubelet" && chmod 755 "$T/bin/kubelet"
  PATH=$T/bin:$PATH kj 0 join phase preflight 127.0.0.1:1 --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" \
    --cri-socket "unix://$T/cri.sock" --ignore-preflight-errors all -o json
  local rc=$?
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  jq -c '[.node.preflight[] | select(.name == "ContainerRuntimeVersion") | {level, message}]' "$OUT" >"$T/cri.json"
  return $rc
}
cri_says() { # LEVEL TEXT: the one finding
  jq -e --arg l "$1" --arg t "$2" 'length == 1 and .[0].level == $l and (.[0].message | contains($t))' "$T/cri.json" >/dev/null ||
    fail "ContainerRuntimeVersion: $(cut -c1-400 "$T/cri.json")"
}
t_hostile_runtime_config_check_as_kubeadm() {
  local asked="does not implement the CRI method RuntimeConfig (unknown method RuntimeConfig for service runtime.v1.RuntimeService)"
  # A runtime without the method: a warning with the kubelet 1.37, an error from 1.38 (kubeadm's plan).
  cri_check unimplemented v1.37.2 && cri_says warning "$asked" || return 1
  cri_check unimplemented v1.38.0 && cri_says ignored "$asked" || return 1
  err_has "the kubelet 1.38 no longer falls back to the cgroupDriver of its configuration" || return 1
  # One with it: nothing said. Before 1.35 the runtime is not asked (only the CRI check's connection).
  cri_check implemented v1.37.2 && [ "$(cat "$T/cri.json")" = "[]" ] || fail "implemented: $(cat "$T/cri.json")" || return 1
  cri_check unimplemented v1.34.0 && [ "$(cat "$T/cri.json")" = "[]" ] && [ "$(wc -l <"$T/cri.log")" = 1 ] ||
    fail "kubelet 1.34: $(cat "$T/cri.json"), $(wc -l <"$T/cri.log") connections" || return 1
  # What is no gRPC answer is an error (kubeadm's "could not check"), named: no grpc-status, one that is
  # no code, an HTTP/1.1 answer, a runtime that never answers (the check's own 5 s bound).
  local mode
  for mode in no-status bad-status http1 silent; do
    cri_check "$mode" v1.37.2 && cri_says ignored "could not check whether the container runtime implements the CRI method RuntimeConfig" ||
      { fail "mode $mode"; return 1; }
  done
  # A hostile message: a token in it keeps only its id, and it is cut to its cap.
  SECRETS+=(0123456789abcdef)
  cri_check hostile v1.37.2 && cri_says warning "does not implement the CRI method RuntimeConfig (abcdef.****************" || return 1
  [ "$(jq -r '.[0].message | length' "$T/cri.json")" -lt 800 ] || fail "the runtime's message was not capped" || return 1
}
