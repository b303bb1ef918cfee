# kjoin join against the real apiserver and its bootstrap signer.

t_e2e_join_kubeadm_token_and_pin() {
  kj 0 join --skip-phases preflight,kubelet-start "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
    --kubeconfig-out "$T/bootstrap.conf" --discovery-timeout 30s || return 1
  # The bootstrap kubeconfig authenticates as the bootstrap token's user.
  kubectl --kubeconfig "$T/bootstrap.conf" auth can-i create certificatesigningrequests >"$T/can" 2>&1
  grep -qx yes "$T/can" || fail "bootstrap kubeconfig cannot create CSRs: $(cat "$T/can")"
}

t_e2e_join_wrong_secret_is_trust_failure() {
  kj 4 join --skip-phases preflight,kubelet-start "$E2E_ENDPOINT" --token abcdef.aaaaaaaaaaaaaaaa --discovery-token-ca-cert-hash "$E2E_PIN" \
    --kubeconfig-out "$T/out.conf" --discovery-timeout 20s || return 1
  [ ! -e "$T/out.conf" ] || fail "a kubeconfig was written"
}

t_e2e_join_wrong_pin_is_trust_failure() {
  kj 4 join --skip-phases preflight,kubelet-start "$E2E_ENDPOINT" --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash sha256:0000000000000000000000000000000000000000000000000000000000000000 \
    --kubeconfig-out "$T/out.conf" --discovery-timeout 20s || return 1
  err_has "pin"
}

# A token the API server does not know ends the join within seconds (exit
# 8), not at the deadline; --wait-for-token keeps kubeadm's wait.
t_e2e_join_unknown_token_ends_at_once() {
  local t; new_token t
  local start=$(date +%s)
  kj 8 join --skip-phases preflight,kubelet-start "$E2E_ENDPOINT" --token "$t" --discovery-token-ca-cert-hash "$E2E_PIN" \
    --kubeconfig-out "$T/out.conf" --discovery-timeout 60s || return 1
  [ $(($(date +%s) - start)) -le 10 ] || fail "took $(($(date +%s) - start)) s" || return 1
  err_has "the API server rejects token id \"${t%%.*}\" (HTTP 401)" && err_has "--wait-for-token" || return 1
  start=$(date +%s)
  kj 3 join --skip-phases preflight,kubelet-start "$E2E_ENDPOINT" --token "$t" --discovery-token-ca-cert-hash "$E2E_PIN" \
    --kubeconfig-out "$T/out.conf" --discovery-timeout 4s --wait-for-token || return 1
  [ $(($(date +%s) - start)) -le 8 ] || fail "took longer than the timeout"
}

t_e2e_join_waits_for_a_token_created_later() {
  local t pid; new_token t
  "$KJOIN" join --skip-phases preflight,kubelet-start "$E2E_ENDPOINT" --token-file <(echo "$t") --discovery-token-ca-cert-hash "$E2E_PIN" \
    --kubeconfig-out "$T/out.conf" --discovery-timeout 40s --wait-for-token >"$T/join.out" 2>"$T/join.err" &
  pid=$!
  sleep 1.5
  KJ_STDOUT_SECRET=1 kj 0 token create --token-file <(echo "$t") --kubeconfig "$E2E_ADMIN" --ttl 10m -o json ||
    { kill $pid; return 1; }
  wait "$pid" || { fail "join exited $?: $(cat "$T/join.err")"; return 1; }
  grep -q "no signature for token id" "$T/join.err" || fail "the join did not wait for the signer" || return 1
  ! grep -qF "$(secret_of "$t")" "$T/join.out" "$T/join.err" || fail "the join printed the token secret"
}

# cluster-info sign reproduces the real signer's value byte for byte.
t_e2e_cluster_info_sign_matches_the_signer() {
  kc -n kube-public get configmap cluster-info -o json >"$T/ci.json" || return 1
  jq -j .data.kubeconfig "$T/ci.json" >"$T/kubeconfig"
  echo abcdef.0123456789abcdef >"$T/token"
  kj 0 cluster-info sign --kubeconfig "$T/kubeconfig" --token-file "$T/token" || return 1
  local mine theirs
  mine=$(jq -r '.data["jws-kubeconfig-abcdef"]' "$OUT"); theirs=$(jq -r '.data["jws-kubeconfig-abcdef"]' "$T/ci.json")
  [ -n "$theirs" ] && [ "$mine" = "$theirs" ] || fail "signature $mine differs from the signer's $theirs" || return 1
  # Built from admin.conf as kubeadm builds it: the same bytes, so the same signature, and no credential.
  kj 0 cluster-info sign --from-kubeconfig "$E2E_ADMIN" --token-file "$T/token" || return 1
  jq -j .data.kubeconfig "$OUT" >"$T/built"
  if [ "$E2E_MINOR" -lt 33 ]; then
    # Until 1.33 client-go wrote "preferences: {}"; kjoin builds as the newest kubeadm does.
    echo "    note [$current]: $E2E_VERSION's kubeadm writes the empty preferences the newest leaves out" >&2
    grep -v '^preferences: {}$' "$T/kubeconfig" | cmp -s "$T/built" - ||
      fail "built cluster-info differs by more than the preferences: $(diff "$T/built" "$T/kubeconfig")"
    return
  fi
  cmp -s "$T/built" "$T/kubeconfig" || fail "built cluster-info differs: $(diff "$T/built" "$T/kubeconfig")" || return 1
  mine=$(jq -r '.data["jws-kubeconfig-abcdef"]' "$OUT")
  [ "$mine" = "$theirs" ] || fail "signature of the built kubeconfig differs"
}

# The bootstrap kubeconfig kjoin writes is what kubelet uses to ask for its
# client certificate: kubectl makes that CSR, the real controller-manager
# approves (kubeadm's RBAC) and signs it.
t_e2e_bootstrap_kubeconfig_gets_a_csr_signed() {
  kj 0 join --skip-phases preflight,kubelet-start "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
    --kubeconfig-out "$T/bootstrap.conf" --discovery-timeout 30s || return 1
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$T/node.key" 2>/dev/null
  openssl req -new -key "$T/node.key" -subj "/O=system:nodes/CN=system:node:e2e-csr-node" -out "$T/node.csr" 2>/dev/null
  local name="node-csr-e2e-$RANDOM"
  cat >"$T/csr.yaml" <<CSR
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata:
  name: $name
spec:
  request: $(base64 -w0 <"$T/node.csr")
  signerName: kubernetes.io/kube-apiserver-client-kubelet
  usages: [digital signature, key encipherment, client auth]
CSR
  kubectl --kubeconfig "$T/bootstrap.conf" create -f "$T/csr.yaml" >/dev/null || { fail "CSR not created"; return 1; }
  cert_issued() { [ -n "$(kc get csr "$name" -o jsonpath='{.status.certificate}')" ]; }
  e2e_wait 30 cert_issued || { fail "CSR $name was not approved and signed"; return 1; }
  kc get csr "$name" -o jsonpath='{.status.certificate}' | base64 -d >"$T/node.crt"
  openssl verify -CAfile "$E2E_CA" "$T/node.crt" >/dev/null 2>&1 || fail "signed certificate does not chain to the cluster CA"
}

# kjoin's bootstrap-kubelet.conf is byte for byte what kubeadm's own discovery
# code writes for the same token and pin (tests/kube/discovery: the code
# `kubeadm join` runs, built from the newest release's module).
t_e2e_bootstrap_kubeconfig_is_kubeadms_byte_for_byte() {
  # The newest kubeadm's discovery, against either control plane.
  local driver=$E2E_DRIVERS/discovery
  echo abcdef.0123456789abcdef >"$T/token"
  "$driver" "$E2E_ENDPOINT" "$T/token" "$E2E_PIN" "$T/kubeadm.conf" >"$T/driver.log" 2>&1 ||
    { fail "kubeadm's discovery: $(tail -3 "$T/driver.log")"; return 1; }
  kj 0 join --skip-phases preflight,kubelet-start "$E2E_ENDPOINT" --token-file "$T/token" --discovery-token-ca-cert-hash "$E2E_PIN" \
    --kubeconfig-out "$T/kjoin.conf" --discovery-timeout 30s || return 1
  cmp -s "$T/kjoin.conf" "$T/kubeadm.conf" ||
    fail "kjoin's file differs from kubeadm's: $(diff "$T/kjoin.conf" "$T/kubeadm.conf" | sed 's/token: .*/token: <redacted>/' | head -8)" ||
    return 1
  # Many tokens: ids that start with a digit (a quarter of random ones), all
  # digits (a float to YAML), hex- and exponent-like, and random ones. Each
  # file is what client-go's YAML writer makes of it, byte for byte.
  local ids=(0abcde 1b2c3d 9zzzzz 123456 0x1f2e 1e5abc 00000a 2026ab) i=0 tok
  for i in $(seq 8); do ids+=("$("$KJOIN" token generate | cut -d. -f1)"); done
  for id in "${ids[@]}"; do
    tok="$id.$(tr -dc 'a-z0-9' </dev/urandom | head -c 16)"
    [ "$id" = 123456 ] && tok=123456.7890123456789012
    SECRETS+=("${tok#*.}")
    "$KBIN/kubeadm" token create "$tok" --ttl 10m --kubeconfig "$E2E_ADMIN" >/dev/null 2>&1 ||
      { fail "kubeadm token create $id"; return 1; }
    e2e_wait 30 signed "$id" || { fail "the signer never signed $id"; return 1; }
    echo "$tok" >"$T/token"
    "$driver" "$E2E_ENDPOINT" "$T/token" "$E2E_PIN" "$T/kubeadm.conf" >"$T/driver.log" 2>&1 ||
      { fail "kubeadm's discovery ($id): $(tail -3 "$T/driver.log")"; return 1; }
    kj 0 join --skip-phases preflight,kubelet-start "$E2E_ENDPOINT" --token-file "$T/token" --discovery-token-ca-cert-hash "$E2E_PIN" \
      --kubeconfig-out "$T/kjoin-$id.conf" --discovery-timeout 30s || return 1
    cmp -s "$T/kjoin-$id.conf" "$T/kubeadm.conf" ||
      { fail "token id $id: kjoin's file differs from kubeadm's: $(diff "$T/kjoin-$id.conf" "$T/kubeadm.conf" | sed 's/\(token: [^.]*\.\).*/\1<redacted>/' | head -4)"; return 1; }
    "$KBIN/kubeadm" token delete "$id" --kubeconfig "$E2E_ADMIN" >/dev/null 2>&1
  done
}

# What the release's own `kubeadm config print join-defaults` prints, edited
# to this cluster, is what `kjoin join --config` takes: each field honoured
# or named as not applying. v1.20's kubeadm prints v1beta2, which kjoin
# refuses by name (it reads v1beta3 and v1beta4, as kubeadm does since 1.26).
t_e2e_join_config_from_kubeadm_join_defaults() {
  "$KBIN/kubeadm" config print join-defaults >"$T/defaults.yaml" 2>"$T/kubeadm.err" ||
    { fail "kubeadm config print join-defaults: $(cat "$T/kubeadm.err")"; return 1; }
  if grep -q "^apiVersion: kubeadm.k8s.io/v1beta2" "$T/defaults.yaml"; then
    echo "    note [$current]: $E2E_VERSION's kubeadm prints v1beta2, which kjoin refuses by name" >&2
    kj 2 join --skip-phases preflight,kubelet-start --config "$T/defaults.yaml" || return 1
    err_has "kubeadm.k8s.io/v1beta2" || return 1
    return 0
  fi
  grep -q "^apiVersion: kubeadm.k8s.io/v1beta4" "$T/defaults.yaml" || fail "not v1beta4: $(head -1 "$T/defaults.yaml")" || return 1
  # This cluster's endpoint, token and pin, where kubeadm's documentation says to put them.
  sed -e "s|apiServerEndpoint: .*|apiServerEndpoint: \"$E2E_ENDPOINT\"|" \
      -e "s|unsafeSkipCAVerification: true|caCertHashes: [\"$E2E_PIN\"]|" \
      -e "s|caCertPath: .*|caCertPath: $T/pki/ca.crt|" "$T/defaults.yaml" >"$T/join.yaml"
  kj 0 join --skip-phases preflight,kubelet-start --config "$T/join.yaml" --kubeconfig-out "$T/bootstrap.conf" -o json || return 1
  # Discovery alone writes its kubeconfig, and caCertPath as --ca-cert-path would (one input, one meaning):
  # the cluster's CA.
  [ -s "$T/bootstrap.conf" ] && [ -s "$T/pki/ca.crt" ] && ! grep -q "kubelet-start" "$ERR" &&
    [ "$(openssl x509 -in "$T/pki/ca.crt" -noout -fingerprint -sha256)" = "$(openssl x509 -in "$E2E_CA" -noout -fingerprint -sha256)" ] ||
    fail "no kubeconfig, or caCertPath not the cluster's CA: $(cat "$ERR")" || return 1
  # Every field kubeadm printed that kjoin does not act on is named; the ones
  # it honours are not (criSocket is the worker join's: tests/e2e/t_node.sh;
  # the timeouts bound their stages, imagePullPolicy and imagePullSerial the control-plane pulls).
  local field
  ! grep -q "criSocket" "$ERR" || fail "criSocket was called ignored" || return 1
  for field in upgradeManifests; do
    grep -q "$field (line [0-9]*) does not apply" "$ERR" || fail "$field was not named as not applying" || return 1
  done
  for field in imagePullPolicy imagePullSerial controlPlaneComponentHealthCheck kubeletHealthCheck etcdAPICall kubernetesAPICall \
               tlsBootstrap discovery; do
    ! grep -q "$field (line [0-9]*) does not apply" "$ERR" || fail "$field, honoured, was called ignored" || return 1
  done
  # The token from the file authenticates: the written kubeconfig can ask for a CSR.
  kubectl --kubeconfig "$T/bootstrap.conf" auth can-i create certificatesigningrequests >"$T/can" 2>&1
  grep -qx yes "$T/can" || fail "the kubeconfig from --config cannot create CSRs: $(cat "$T/can")"
}
