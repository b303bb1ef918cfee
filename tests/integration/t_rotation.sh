# CA rotation: bundles with several roots, intermediates and cross-signed
# roots, under the pinned-trust rule (sourced by run.sh).

# rotation_cluster NAME BUNDLE_PARTS...: a cluster whose cluster-info and
# /cacerts carry the concatenation of $C/<part>.crt, with roots "old" and
# "new" (and "new-x", new cross-signed by old) and serving certificates
# srv-old and srv-new. Serves with srv-old first.
rotation_cluster() {
  local name=$1; shift
  C=$ROOT/$name; mkdir -p "$C/www"
  mkca "$C" old; mkca "$C" new; mkxsigned "$C" new old
  mkleaf "$C" srv-old old; mkleaf "$C" srv-new new
  local p; : >"$C/bundle.crt"
  for p in "$@"; do cat "$C/$p.crt" >>"$C/bundle.crt"; done
  cp "$C/bundle.crt" "$C/www/cacerts"
  PORT=$("$TOOLS/freeport"); SERVER="https://127.0.0.1:$PORT"
  "$KJOIN" token generate >"$C/token"; SECRETS+=("$(cut -d. -f2 "$C/token")")
  cluster_kubeconfig "$SERVER" "$C/bundle.crt" >"$C/cluster.kubeconfig"
  "$KJOIN" cluster-info sign --kubeconfig "$C/cluster.kubeconfig" --token-file "$C/token" >"$C/www/cluster-info"
  start_nginx "$C" "$PORT" "$C/srv-old.crt" "$C/srv-old.key"
}
rot_join() { kj "$1" join --skip-phases preflight,kubelet-start "127.0.0.1:$PORT" --token-file "$C/token" --kubeconfig-out "$T/kubelet.conf" --force \
  --discovery-timeout 20s "${@:2}"; }

t_rotation_both_roots_pinned() {
  rotation_cluster rot-both new old || return 1
  local pins; pins="$(root_pin "$C/new.crt"),$(root_pin "$C/old.crt")"
  rot_join 0 --discovery-token-ca-cert-hash "$pins" -o json || return 1
  jq -e '[.caCertificates[].subject] == ["CN=new", "CN=old"]' "$OUT" >/dev/null || fail "both roots: $(cat "$OUT")" || return 1
  restart_nginx "$C" "$C/srv-new.crt" "$C/srv-new.key" || return 1
  rot_join 0 --discovery-token-ca-cert-hash "$pins" || return 1
  kubectl --kubeconfig "$T/kubelet.conf" get --raw "$CLUSTER_INFO_PATH" >/dev/null || fail "kubectl with the new CA"
}

t_rotation_only_old_root_pinned() {
  rotation_cluster rot-old new old || return 1
  rot_join 0 --discovery-token-ca-cert-hash "$(spki_pin "$C/old.crt")" -o json || return 1
  jq -e '[.caCertificates[].subject] == ["CN=old"]' "$OUT" >/dev/null || fail "only the old root: $(cat "$OUT")" || return 1
  err_has "dropping certificate \"CN=new\"" || return 1
  err_has "$(spki_pin "$C/new.crt"), $(root_pin "$C/new.crt")" || return 1
  # The server has moved to the new CA: refused.
  restart_nginx "$C" "$C/srv-new.crt" "$C/srv-new.key" || return 1
  rot_join 4 --discovery-token-ca-cert-hash "$(spki_pin "$C/old.crt")" || return 1
  err_has "against the pinned CA failed"
}

t_rotation_cross_signed_new_root() {
  # [new, new cross-signed by old, old] with only the old root pinned: the
  # cross-signed copy chains to it, so a server on the new CA verifies.
  rotation_cluster rot-x new new-x old || return 1
  restart_nginx "$C" "$C/srv-new.crt" "$C/srv-new.key" || return 1
  rot_join 0 --discovery-token-ca-cert-hash "$(root_pin "$C/old.crt")" -o json || return 1
  # old anchors; the cross-signed new root chains to it; the self-signed new
  # root carries the same, now trusted, key.
  jq -e '(.caCertificates | length) == 3' "$OUT" >/dev/null || fail "old + both new: $(cat "$OUT")" || return 1
  [ "$(grep -c 'Trusting CA "CN=new": issued by a pinned certificate' "$ERR")" -eq 2 ] || fail "new roots not chained" || return 1
  kubectl --kubeconfig "$T/kubelet.conf" get --raw "$CLUSTER_INFO_PATH" >/dev/null || fail "kubectl"
}

t_rotation_pin_never_flows_up() {
  # Pinning the serving certificate's key anchors only that certificate: its
  # issuer gains no trust, and the unrelated root is dropped.
  rotation_cluster rot-up new old || return 1
  cat "$C/srv-old.crt" "$C/old.crt" >"$C/leafbundle.crt"
  cluster_kubeconfig "$SERVER" "$C/leafbundle.crt" >"$C/cluster.kubeconfig"
  "$KJOIN" cluster-info sign --kubeconfig "$C/cluster.kubeconfig" --token-file "$C/token" >"$C/www/cluster-info"
  rot_join 0 --discovery-token-ca-cert-hash "$(spki_pin "$C/srv-old.crt")" -o json || return 1
  jq -e '[.caCertificates[].subject] == ["CN=srv-old"]' "$OUT" >/dev/null || fail "anchors: $(cat "$OUT")" || return 1
  err_has 'dropping certificate "CN=old"'
}

t_rotation_k3s_bundle_hashes() {
  # K3s' hashCA: several certificates hash the DER of the root of the first
  # one's chain when it verifies, else the bytes. Here the first is the new
  # root itself (no chain: Go's verifier will not reuse the cross-signed copy
  # of a certificate already in the chain), so K3s hashes the bytes.
  rotation_cluster rot-k3s new new-x old || return 1
  restart_nginx "$C" "$C/srv-new.crt" "$C/srv-new.key" || return 1
  SECRETS+=(k3s-agent-pw)
  local new_der old_der
  new_der=$(openssl x509 -in "$C/new.crt" -outform der | sha256sum | cut -d' ' -f1)
  old_der=$(openssl x509 -in "$C/old.crt" -outform der | sha256sum | cut -d' ' -f1)
  kj 0 join --skip-phases preflight,kubelet-start "127.0.0.1:$PORT" --token "K10$(k3s_hash "$C/bundle.crt")::node:k3s-agent-pw" --kubeconfig-out "$T/b.conf" -o json || return 1
  err_has "vouches for all 3 certificate(s)" || return 1
  kj 4 join --skip-phases preflight,kubelet-start "127.0.0.1:$PORT" --token "K10$new_der::node:k3s-agent-pw" --kubeconfig-out "$T/a.conf" || return 1
  kj 4 join --skip-phases preflight,kubelet-start "127.0.0.1:$PORT" --token "K10$old_der::node:k3s-agent-pw" --kubeconfig-out "$T/c.conf" || return 1
  # The broader rule stays under its own name: a root-sha256: pin anchors any root of the bundle.
  kj 0 join --skip-phases preflight,kubelet-start "127.0.0.1:$PORT" --token "K10::node:k3s-agent-pw" --discovery-token-ca-cert-hash "root-sha256:$new_der" \
    --kubeconfig-out "$T/d.conf" -o json || return 1
  jq -e '[.caCertificates[].subject] == ["CN=new"]' "$OUT" >/dev/null || fail "anchors: $(cat "$OUT")" || return 1
  # A server CA first, then its root: K3s hashes the root's DER, and kjoin trusts that root and what it issued.
  mkca "$C" k3s-root; mkca "$C" k3s-ca k3s-root
  mkleaf "$C" srv-k3s k3s-ca
  cat "$C/srv-k3s.crt" "$C/k3s-ca.crt" >"$C/srv-k3s-chain.crt"
  restart_nginx "$C" "$C/srv-k3s-chain.crt" "$C/srv-k3s.key" || return 1
  cat "$C/k3s-ca.crt" "$C/k3s-root.crt" >"$C/www/cacerts"
  local root_der; root_der=$(openssl x509 -in "$C/k3s-root.crt" -outform der | sha256sum | cut -d' ' -f1)
  kj 0 join --skip-phases preflight,kubelet-start "127.0.0.1:$PORT" --token "K10$root_der::node:k3s-agent-pw" --kubeconfig-out "$T/e.conf" || return 1
  err_has 'matches the DER of root "CN=k3s-root"' || return 1
  kj 4 join --skip-phases preflight,kubelet-start "127.0.0.1:$PORT" --token "K10$(k3s_hash "$C/www/cacerts")::node:k3s-agent-pw" --kubeconfig-out "$T/f.conf" || return 1
}

t_ca_hash_structure() {
  local d=$T
  mkca "$d" root; mkca "$d" inter root; mkleaf "$d" leaf inter; mkca "$d" other
  cat "$d/root.crt" "$d/inter.crt" "$d/leaf.crt" "$d/other.crt" >"$d/bundle.crt"
  kj 0 ca-hash "$d/bundle.crt" -o json || return 1
  jq -e --arg f "$(k3s_hash "$d/bundle.crt")" --arg rp "$(root_pin "$d/root.crt")" --arg ip "$(spki_pin "$d/inter.crt")" '
    .fileSha256 == $f and [.certificates[].role] == ["root", "intermediate", "leaf", "root"] and
    .certificates[0].pins[1] == $rp and .certificates[1].pins == [$ip] and
    .certificates[1].issuer == "CN=root" and (.certificates[2].notAfter | test("^20[0-9]{2}-"))' "$OUT" >/dev/null \
    || fail "structure: $(cat "$OUT")" || return 1
  kj 0 ca-hash "$d/bundle.crt" || return 1
  out_has "intermediate, issuer CN=root" && out_has "leaf, issuer CN=inter"
}

# serve_bundle PARTS...: cluster-info now carries those roots (the serving certificate unchanged).
serve_bundle() {
  local p; : >"$C/bundle.crt"
  for p in "$@"; do cat "$C/$p.crt" >>"$C/bundle.crt"; done
  cluster_kubeconfig "$SERVER" "$C/bundle.crt" >"$C/cluster.kubeconfig"
  "$KJOIN" cluster-info sign --kubeconfig "$C/cluster.kubeconfig" --token-file "$C/token" >"$C/www/cluster-info"
}
ca_subjects() { # KUBECONFIG: the subjects of its CA data, in order
  kubectl --kubeconfig "$1" config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d |
    awk '/^-----BEGIN /{c=""} {c=c $0 "\n"} /^-----END /{printf "%s", c | "openssl x509 -noout -subject"; close("openssl x509 -noout -subject")}' |
    sed 's/subject=//' | tr '\n' ';'
}

# kjoin refresh follows a CA rotation served in cluster-info, without a new token or pin.
t_refresh_follows_a_ca_rotation() {
  rotation_cluster ca-refresh old || return 1
  mkca "$C" evil
  rot_join 0 --discovery-token-ca-cert-hash "$(spki_pin "$C/old.crt")" || return 1
  local k=$T/kubelet.conf
  kj 0 refresh --kubeconfig "$k" || return 1
  err_has "unchanged (1 certificate(s))" || return 1
  # 1. The rotation starts: new and old served, the server still on the old CA.
  serve_bundle new old
  cp "$k" "$T/before"
  kj 10 refresh --kubeconfig "$k" --ca-cert-path "$T/pki/ca.crt" -o json || return 1
  jq -e '.changed and .caCertificates == 2' "$OUT" >/dev/null || fail "$(cat "$OUT")" || return 1
  [ "$(ca_subjects "$k")" = "CN = new;CN = old;" ] || fail "bundle: $(ca_subjects "$k")" || return 1
  diff <(grep -v certificate-authority-data "$T/before") <(grep -v certificate-authority-data "$k") >/dev/null ||
    fail "refresh changed more than the CA data" || return 1
  [ "$(stat -c %a "$k")" = 600 ] && [ "$(stat -c %a "$T/pki/ca.crt")" = 644 ] || fail "modes" || return 1
  # 2. The server moves to the new CA, the old one leaves the bundle.
  restart_nginx "$C" "$C/srv-new.crt" "$C/srv-new.key" || return 1
  serve_bundle new
  kj 10 refresh --kubeconfig "$k" || return 1
  [ "$(ca_subjects "$k")" = "CN = new;" ] || fail "bundle: $(ca_subjects "$k")" || return 1
  kubectl --kubeconfig "$k" get --raw "$CLUSTER_INFO_PATH" >/dev/null || fail "kubectl after the rotation" || return 1
  # 3. A bundle that would not verify the server is refused; the file is untouched.
  serve_bundle evil
  cp "$k" "$T/good"
  kj 4 refresh --kubeconfig "$k" || return 1
  err_has "does not verify the API server it came from" || return 1
  cmp -s "$k" "$T/good" || fail "the file changed" || return 1
  # 4. A server the file does not trust is not asked at all: the TLS check fails first.
  serve_bundle new
  mkleaf "$C" srv-evil evil
  restart_nginx "$C" "$C/srv-evil.crt" "$C/srv-evil.key" || return 1
  kj 4 refresh --kubeconfig "$k" --timeout 5s || return 1
  cmp -s "$k" "$T/good" || fail "the file changed" || return 1
  # 5. A kubeconfig without CA data is a usage error.
  kj 2 refresh --kubeconfig "$C/token" || return 1
}
