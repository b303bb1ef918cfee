# Token discovery (sourced by run.sh).

# ---- success paths -----------------------------------------------------------

t_ipv4_spki_pin_and_kubectl() {
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  [ "$(stat -c %a "$T/kubelet.conf")" = 600 ] || fail "mode is not 0600" || return 1
  kubectl --kubeconfig "$T/kubelet.conf" get --raw "$CLUSTER_INFO_PATH" | jq -e '.kind == "ConfigMap"' >/dev/null \
    || fail "kubectl could not use the kubeconfig" || return 1
  [ "$(kubectl --kubeconfig "$T/kubelet.conf" config current-context)" = tls-bootstrap-token-user@kubernetes ] \
    || fail "wrong current-context" || return 1
  [ "$(kubectl --kubeconfig "$T/kubelet.conf" config view --raw -o jsonpath='{.users[0].user.token}')" = "$(cat "$C/token")" ] \
    || fail "token not written in full"
}

t_ipv6_root_pin() {
  kj 0 join --skip-phases preflight,kubelet-start "[::1]:$PORT" --token-file "$C/token" --kubeconfig-out "$T/k.conf" --discovery-token-ca-cert-hash "$ROOT_PIN" || return 1
  err_has "matches pin $ROOT_PIN"
}

t_https_prefix_and_uppercase_pin() {
  kj 0 join --skip-phases preflight,kubelet-start "https://127.0.0.1:$PORT" --token-file "$C/token" --kubeconfig-out "$T/k.conf" \
    --discovery-token-ca-cert-hash "$(echo "$PIN" | tr a-f A-F)"
}

t_several_pins_one_matching() {
  local other; other=sha256:$(printf '0%.0s' {1..64})
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$other,$PIN" --discovery-token-ca-cert-hash "root-sha256:$(printf 'f%.0s' {1..64})"
}

t_json_output() {
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" -o json || return 1
  jq -e --arg p "$PIN" --arg r "$ROOT_PIN" --arg s "$SERVER" --arg k "$T/kubelet.conf" --arg id "$(cut -d. -f1 "$C/token")" '
    .kubeconfig == $k and .server == $s and .clusterName == "kubernetes" and .tokenID == $id and
    (.caCertificates | length) == 1 and .caCertificates[0].pins == [$p, $r] and
    .caCertificates[0].subject == "CN=ca" and .attempts == 1 and (.elapsedMs | type) == "number" and
    (.joinID | test("^[0-9a-f-]{36}$"))' "$OUT" >/dev/null || fail "unexpected JSON: $(cat "$OUT")"
}

# -o json keeps the step lines in the result too (under cloud-init stderr may be lost), -q or not,
# and in the error object of a failed join.
t_json_output_has_the_steps_as_events() {
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" -o json -q || return 1
  [ ! -s "$ERR" ] || fail "-q printed: $(cat "$ERR")" || return 1
  jq -e '(.events | length) >= 4 and (.events | map(.ms | type == "number") | all) and
         (.events | map(.message) | any(startswith("[discovery] Trusting CA")))' "$OUT" >/dev/null ||
    fail "events: $(jq -c .events "$OUT")" || return 1
  kj 4 join --skip-phases preflight,kubelet-start $(join_args) -o json \
    --discovery-token-ca-cert-hash sha256:0000000000000000000000000000000000000000000000000000000000000000 || return 1
  jq -e '.error.events | map(.message) | any(startswith("[discovery] Requesting cluster-info"))' "$OUT" >/dev/null ||
    fail "error events: $(cat "$OUT")"
}

t_audit_id_is_the_join_id() {
  new_cluster audit || return 1
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" -o json || return 1
  local id; id=$(jq -r .joinID "$OUT")
  err_has "Join ID $id" || return 1
  [ "$(grep -c "^$id $CLUSTER_INFO_PATH\$" "$C/nginx/access.log")" -eq 2 ] \
    || fail "both requests must carry Audit-ID $id: $(cat "$C/nginx/access.log")"
}

t_idempotent_rerun() {
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  local before; before=$(stat -c %i:%Y "$T/kubelet.conf")
  sleep 1.1
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "Unchanged" || return 1
  [ "$before" = "$(stat -c %i:%Y "$T/kubelet.conf")" ] || fail "identical file was rewritten"
}

t_refuse_overwrite_then_force() {
  mkdir -p "$T/etc"; echo "something else" >"$T/etc/kubelet.conf"
  kj 5 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" --kubeconfig-out "$T/etc/kubelet.conf" || return 1
  err_has "--force" || return 1
  [ "$(cat "$T/etc/kubelet.conf")" = "something else" ] || fail "file changed without --force" || return 1
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" --kubeconfig-out "$T/etc/kubelet.conf" --force || return 1
  grep -q tls-bootstrap-token-user "$T/etc/kubelet.conf" || fail "not replaced" || return 1
  if ls "$T/etc" | grep -q kjoin-; then fail "temporary file left behind"; fi
}

t_parent_dirs_created() {
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" --kubeconfig-out "$T/a/b/c/kubelet.conf" || return 1
  [ "$(stat -c %a "$T/a/b/c/kubelet.conf")" = 600 ] || fail "mode"
}

t_dry_run_writes_nothing() {
  # Discovery runs for real; the file it would write is shown, its token masked.
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" --dry-run \
    --ca-cert-path "$T/pki/ca.crt" || return 1
  [ ! -e "$T/kubelet.conf" ] && [ ! -e "$T/pki" ] || fail "dry run wrote a file" || return 1
  out_has "[dryrun] Would write file \"$T/kubelet.conf\" (mode 0600) with content:" || return 1
  out_has "[dryrun] Would write file \"$T/pki/ca.crt\" (mode 0644) with content:" || return 1
  out_has "	current-context: tls-bootstrap-token-user@kubernetes" || return 1
  out_has "	    token: $(cut -d. -f1 "$C/token").****************" || return 1
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" --dry-run -o json || return 1
  jq -e --arg p "$T/kubelet.conf" '.dryRun and .kubeconfig == null and (.wouldWrite | length == 1) and .wouldWrite[0].path == $p
      and .wouldWrite[0].mode == "0600" and (.wouldWrite[0].content | test("token: [a-z0-9]{6}[.][*]{16}"))' "$OUT" >/dev/null ||
    fail "json: $(cat "$OUT")" || return 1
  # A bad pin still fails the dry run, as the real join would.
  kj 4 join --skip-phases preflight,kubelet-start $(join_args 3s) --discovery-token-ca-cert-hash "sha256:$(printf '0%.0s' $(seq 64))" \
    --dry-run || return 1
  [ ! -s "$OUT" ] || fail "a failed dry run printed files: $(cat "$OUT")"
}

t_token_env_and_flags() {
  KJOIN_TOKEN=$(cat "$C/token") kj 0 join --skip-phases preflight,kubelet-start "127.0.0.1:$PORT" --kubeconfig-out "$T/k.conf" --discovery-token-ca-cert-hash "$PIN" || return 1
  local other; other=$("$KJOIN" token generate); SECRETS+=("${other#*.}")
  kj 0 join --skip-phases preflight,kubelet-start "127.0.0.1:$PORT" --discovery-token "$(cat "$C/token")" --tls-bootstrap-token "$other" \
    --kubeconfig-out "$T/k2.conf" --discovery-token-ca-cert-hash "$PIN" || return 1
  [ "$(kubectl --kubeconfig "$T/k2.conf" config view --raw -o jsonpath='{.users[0].user.token}')" = "$other" ] \
    || fail "--tls-bootstrap-token not written"
}

t_numeric_looking_token_round_trips() {
  # Unquoted, 123456.1234567890123456 would be a YAML float: the emitter must quote it.
  local tok=123456.1234567890123456
  SECRETS+=(1234567890123456)
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" --tls-bootstrap-token "$tok" || return 1
  [ "$(kubectl --kubeconfig "$T/kubelet.conf" config view --raw -o jsonpath='{.users[0].user.token}')" = "$tok" ] \
    || fail "token changed on the way through YAML"
}

t_cluster_name() {
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" --cluster-name prod.example || return 1
  [ "$(kubectl --kubeconfig "$T/kubelet.conf" config current-context)" = tls-bootstrap-token-user@prod.example ] || fail "context"
}

t_reordered_header_verifies() {
  local c; new_cluster reorder || return 1; c=$C
  resign "$c" "{\"kid\":\"$(cut -d. -f1 "$c/token")\",\"alg\":\"HS256\"}" sha256
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN"
}

t_unsafe_mode_warns() {
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-unsafe-skip-ca-verification -v 1 || return 1
  err_has "WARNING" && err_has "unsafe" || return 1
  ! grep -i "verified" "$ERR" | grep -qv "not verified" || fail "the unsafe mode's log says verified: $(grep -i verified "$ERR")"
}

t_pinned_intermediate_and_chain() {
  C=$ROOT/chain; mkdir -p "$C"
  mkca "$C" root; mkca "$C" inter root; mkleaf "$C" server inter
  cat "$C/root.crt" "$C/inter.crt" >"$C/bundle.crt"; cat "$C/server.crt" "$C/inter.crt" >"$C/chain.crt"
  PORT=$("$TOOLS/freeport"); "$KJOIN" token generate >"$C/token"; SECRETS+=("$(cut -d. -f2 "$C/token")")
  cluster_kubeconfig "https://127.0.0.1:$PORT" "$C/bundle.crt" >"$C/cluster.kubeconfig"
  mkdir -p "$C/www"; "$KJOIN" cluster-info sign --kubeconfig "$C/cluster.kubeconfig" --token-file "$C/token" >"$C/www/cluster-info"
  start_nginx "$C" "$PORT" "$C/chain.crt" "$C/server.key" || return 1
  # The intermediate's key pinned alone anchors by itself.
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$(spki_pin "$C/inter.crt")" --dry-run -o json || return 1
  jq -e '.caCertificates | length == 1 and .[0].subject == "CN=inter"' "$OUT" >/dev/null || fail "anchor set: $(cat "$OUT")" || return 1
  err_has 'dropping certificate "CN=root"' || return 1
  # The root pinned: the intermediate is trusted because the root issued it.
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$(root_pin "$C/root.crt")" -o json || return 1
  jq -e '.caCertificates | length == 2' "$OUT" >/dev/null || fail "both should be trusted" || return 1
  err_has 'Trusting CA "CN=inter": issued by a pinned certificate'
}

t_first_endpoint_down() {
  local dead; dead=$("$TOOLS/freeport")
  kj 0 join --skip-phases preflight,kubelet-start "127.0.0.1:$dead" "127.0.0.1:$PORT" --token-file "$C/token" --kubeconfig-out "$T/k.conf" \
    --discovery-token-ca-cert-hash "$PIN" -o json || return 1
  jq -e --arg e "127.0.0.1:$PORT" '.endpoint == $e' "$OUT" >/dev/null || fail "wrong endpoint"
}

t_server_down_then_up() {
  C=$ROOT/late; mkdir -p "$C"; mkca "$C" ca; mkleaf "$C" server ca
  PORT=$("$TOOLS/freeport"); "$KJOIN" token generate >"$C/token"; SECRETS+=("$(cut -d. -f2 "$C/token")")
  cluster_kubeconfig "https://127.0.0.1:$PORT" "$C/ca.crt" >"$C/cluster.kubeconfig"; mkdir -p "$C/www"
  "$KJOIN" cluster-info sign --kubeconfig "$C/cluster.kubeconfig" --token-file "$C/token" >"$C/www/cluster-info"
  ( sleep 1.5; start_nginx "$C" "$PORT" "$C/server.crt" "$C/server.key" ) &
  kj 0 join --skip-phases preflight,kubelet-start $(join_args 30s) --discovery-token-ca-cert-hash "$(spki_pin "$C/ca.crt")" -o json
  local rc=$?; wait
  [ $rc -eq 0 ] || return 1
  jq -e '.attempts > 1' "$OUT" >/dev/null || fail "expected retries" || return 1
  err_has "Retrying"
}

# ---- failures ----------------------------------------------------------------

t_wrong_pin() {
  kj 4 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "sha256:$(printf 'ab%.0s' {1..32})" || return 1
  err_has "no certificate of the CA bundle matches" && err_has "$PIN"
}

t_root_pin_of_leaf_does_not_match() {
  # root-sha256 names a root's DER; the serving certificate is no root of the bundle.
  kj 4 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$(root_pin "$C/server.crt")"
}

t_wrong_secret() {
  local id; id=$(cut -d. -f1 "$C/token")
  SECRETS+=(0000000000000000)
  kj 4 join --skip-phases preflight,kubelet-start "127.0.0.1:$PORT" --token "$id.0000000000000000" --kubeconfig-out "$T/k.conf" --discovery-token-ca-cert-hash "$PIN" -v 1 || return 1
  err_has "does not match" || return 1
  # Retried exactly twice; the same failure said once (folded), each next attempt at -v 1.
  [ "$(grep -c "Next attempt at" "$ERR")" -eq 2 ] || fail "a bad signature is retried exactly twice" || return 1
  [ "$(grep -c Retrying "$ERR")" -eq 1 ] || fail "the same failure was said more than once"
}

t_tampered_kubeconfig() {
  new_cluster tamper || return 1
  sed -i 's|server: https://127.0.0.1|server: https://127.0.0.2|' "$C/www/cluster-info"
  kj 4 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "does not match the cluster-info kubeconfig" || return 1
  [ ! -e "$T/kubelet.conf" ] || fail "kubeconfig written after a failed join"
}

t_missing_signature_times_out() {
  new_cluster nosig || return 1
  local other; other=$("$KJOIN" token generate); SECRETS+=("${other#*.}")
  "$KJOIN" cluster-info sign --kubeconfig "$C/cluster.kubeconfig" --token "$other" >"$C/www/cluster-info"
  kj 3 join --skip-phases preflight,kubelet-start $(join_args 2s) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "no signature for token id"
}

t_empty_signature_fails_at_once() {
  new_cluster emptysig || return 1
  sed -i "s|\"jws-kubeconfig-\([a-z0-9]*\)\":\"[^\"]*\"|\"jws-kubeconfig-\1\":\"\"|" "$C/www/cluster-info"
  kj 4 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "invalid for this cluster or has expired" || return 1
  if grep -q Retrying "$ERR"; then fail "an empty signature must not be retried"; fi
}

t_alg_none_rejected() {
  new_cluster algnone || return 1
  resign "$C" "{\"alg\":\"none\",\"kid\":\"$(cut -d. -f1 "$C/token")\"}" sha256
  kj 4 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has 'algorithm "none" is not allowed'
}

t_hs512_rejected() {
  new_cluster hs512 || return 1
  resign "$C" "{\"alg\":\"HS512\",\"kid\":\"$(cut -d. -f1 "$C/token")\"}" sha512
  kj 4 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has 'algorithm "HS512" is not allowed'
}

t_wrong_kid_rejected() {
  new_cluster kid || return 1
  resign "$C" '{"alg":"HS256","kid":"zzzzzz"}' sha256
  kj 4 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has 'key id "zzzzzz" is not the token id'
}

t_two_clusters_rejected() {
  new_cluster two || return 1
  cluster_kubeconfig "$SERVER" "$C/ca.crt" yes >"$C/cluster.kubeconfig"
  kj 2 cluster-info sign --kubeconfig "$C/cluster.kubeconfig" --token-file "$C/token" || return 1
  err_has "must hold exactly one cluster, it holds 2" || return 1
  # Signed anyway (as a careless control plane would): the join must refuse it.
  local id secret h p sig
  id=$(cut -d. -f1 "$C/token")
  printf '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cluster-info","namespace":"kube-public"},"data":{"jws-kubeconfig-%s":"x","kubeconfig":%s}}' \
    "$id" "$(jq -Rs . <"$C/cluster.kubeconfig")" >"$C/www/cluster-info"
  resign "$C" "{\"alg\":\"HS256\",\"kid\":\"$id\"}" sha256
  kj 4 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "exactly one cluster"
}

t_server_cert_from_other_ca() {
  new_cluster otherca || return 1
  mkca "$C" rogue; mkleaf "$C" rogueserver rogue
  stop_nginx "$C"; start_nginx "$C" "$PORT" "$C/rogueserver.crt" "$C/rogueserver.key" || return 1
  kj 4 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "TLS verification" && err_has "against the pinned CA failed"
}

t_extra_ca_in_bundle_refused() {
  # kubeadm's hole: a token holder signs [real CA, own CA] and serves a
  # certificate from its own CA. Only the pinned CA may anchor.
  new_cluster extraca || return 1
  mkca "$C" evil; mkleaf "$C" evilserver evil
  cat "$C/ca.crt" "$C/evil.crt" >"$C/bundle.crt"
  cluster_kubeconfig "$SERVER" "$C/bundle.crt" >"$C/cluster.kubeconfig"
  "$KJOIN" cluster-info sign --kubeconfig "$C/cluster.kubeconfig" --token-file "$C/token" >"$C/www/cluster-info"
  stop_nginx "$C"; start_nginx "$C" "$PORT" "$C/evilserver.crt" "$C/evilserver.key" || return 1
  kj 4 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has 'dropping certificate "CN=evil"' && err_has "$(spki_pin "$C/evil.crt")" && err_has "against the pinned CA failed"
}

t_san_mismatch() {
  new_cluster san || return 1
  mkleaf "$C" other ca DNS:api.example.com
  stop_nginx "$C"; start_nginx "$C" "$PORT" "$C/other.crt" "$C/other.key" || return 1
  kj 4 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "mismatch"
}

t_server_down_for_good() {
  local dead start elapsed; dead=$("$TOOLS/freeport")
  start=$(date +%s%N)
  kj 3 join --skip-phases preflight,kubelet-start "127.0.0.1:$dead" --token-file "$C/token" --kubeconfig-out "$T/k.conf" \
    --discovery-token-ca-cert-hash "$PIN" --discovery-timeout 2s || return 1
  elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
  err_has "timed out after 2s" || return 1
  [ "$elapsed" -ge 1900 ] && [ "$elapsed" -le 3500 ] || fail "took ${elapsed}ms for a 2s deadline"
}

t_not_found_retried_until_timeout() {
  new_cluster notfound || return 1
  rm "$C/www/cluster-info"
  kj 3 join --skip-phases preflight,kubelet-start $(join_args 1500ms) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "404"
}

t_unauthorized_fails_at_once() {
  # 401 will not heal by waiting (anonymous auth is off): exit 1 long before the 20 s deadline.
  new_cluster unauth || return 1
  echo 'return 401;' >"$C/nginx/cluster-info.conf"
  stop_nginx "$C"; start_nginx "$C" "$PORT" "$C/server.crt" "$C/server.key" || return 1
  local start elapsed; start=$(date +%s%N)
  kj 1 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
  err_has "HTTP 401 (the server refuses anonymous requests" || return 1
  [ "$elapsed" -lt 5000 ] || fail "took ${elapsed}ms"
}

t_body_over_1mib() {
  new_cluster huge || return 1
  head -c $((1024 * 1024 + 10)) /dev/zero | tr '\0' ' ' >"$C/www/cluster-info"
  kj 4 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "exceeds 1048576 bytes"
}

t_garbage_json() {
  new_cluster garbage || return 1
  printf '{"kind":"ConfigMap","data":{"kubeconfig": nope' >"$C/www/cluster-info"
  kj 4 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "not valid JSON"
}

t_usage_errors_before_network() {
  # Nothing listens on the port: each of these must fail fast with exit 2.
  local dead; dead=$("$TOOLS/freeport")
  local good="127.0.0.1:$dead"
  kj 2 join --skip-phases preflight,kubelet-start "$good" --token "abcdef.0123456789ABCDEF" --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "malformed secret of token abcdef" || return 1
  kj 2 join --skip-phases preflight,kubelet-start "$good" --token-file "$C/token" --discovery-token-ca-cert-hash sha256:1234 || return 1
  kj 2 join --skip-phases preflight,kubelet-start "$good" --token-file "$C/token" --discovery-token-ca-cert-hash md5:$(printf 'a%.0s' {1..32}) || return 1
  kj 2 join --skip-phases preflight,kubelet-start "$good" --token-file "$C/token" || return 1
  err_has "unsafe" || return 1
  kj 2 join --skip-phases preflight,kubelet-start "::1:6443" --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" || return 1
  kj 2 join --skip-phases preflight,kubelet-start "127.0.0.1" --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" || return 1
  kj 2 join --skip-phases preflight,kubelet-start "http://127.0.0.1:6443" --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" || return 1
  kj 2 join --skip-phases preflight,kubelet-start "$good" --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" --discovery-timeout 5 || return 1
  kj 2 join --skip-phases preflight,kubelet-start "$good" --token-file "$T/no-such-file" --discovery-token-ca-cert-hash "$PIN" || return 1
  kj 2 join --skip-phases preflight,kubelet-start "$good" --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" --bogus || return 1
  kj 2 join --skip-phases preflight,kubelet-start --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" || return 1
  kj 2 join --skip-phases preflight,kubelet-start "$good" --discovery-token-ca-cert-hash "$PIN" -o json || return 1
  jq -e '.error.code == 2 and .error.reason == "InvalidInput"' "$OUT" >/dev/null || fail "JSON error shape: $(cat "$OUT")" ||
    return 1
  # --ignore-preflight-errors given again adds up, as kubeadm's: past what kjoin holds, refused by name.
  local many; many=$(printf 'x%.0s' {1..3000})
  kj 2 join --skip-phases preflight,kubelet-start "$good" --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" \
    --ignore-preflight-errors "$many" --ignore-preflight-errors "$many" || return 1
  err_has "--ignore-preflight-errors names more than 4095 characters of checks"
}

t_token_flag_scrubbed_from_ps() {
  local dead cmdline; dead=$("$TOOLS/freeport")
  cmdline=$(cmdline_while_running '****' "$KJOIN" join --skip-phases preflight,kubelet-start "127.0.0.1:$dead" --token "$(cat "$C/token")" \
    --discovery-token-ca-cert-hash "$PIN" --kubeconfig-out "$T/k.conf" --discovery-timeout 3s)
  [[ "$cmdline" == *"--token $(cut -d. -f1 "$C/token").****************"* ]] || fail "argv not scrubbed: $cmdline"
}

# The certificate key (the cluster's CA keys' key) is scrubbed as a token is.
t_token_certificate_key_scrubbed_from_ps() {
  local dead cmdline key=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
  dead=$("$TOOLS/freeport")
  SECRETS+=("$key")
  cmdline=$(cmdline_while_running '****' "$KJOIN" join phase control-plane-prepare/download-certs "127.0.0.1:$dead" \
    --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" --control-plane --certificate-key "$key" --discovery-timeout 3s)
  [[ "$cmdline" == *"--certificate-key ****"* && "$cmdline" != *"$key"* ]] || fail "argv not scrubbed: $cmdline"
}

t_secret_absent_from_bad_token_messages() {
  # A secret with one bad character must not be echoed back.
  SECRETS+=("0123456789abcdeF")
  kj 2 join --skip-phases preflight,kubelet-start "127.0.0.1:1" --token "abcdef.0123456789abcdeF" --discovery-token-ca-cert-hash "$PIN" -o json
}

t_companion_commands() {
  kj 0 token generate || return 1
  grep -Eq '^[a-z0-9]{6}\.[a-z0-9]{16}$' "$OUT" || fail "token format" || return 1
  kj 0 ca-hash "$C/ca.crt" --only sha256 || return 1
  [ "$(cat "$OUT")" = "$PIN" ] || fail "ca-hash differs from openssl: $(cat "$OUT") vs $PIN" || return 1
  kj 0 ca-hash - -o json <"$C/ca.crt" || return 1
  jq -e --arg r "$ROOT_PIN" '.certificates[0].pins[1] == $r and .certificates[0].role == "root"' "$OUT" >/dev/null || fail "ca-hash json" || return 1
  kj 2 ca-hash "$C/token" || return 1
  kj 2 cluster-info sign --kubeconfig "$C/cluster.kubeconfig" || return 1
  kj 2 cluster-info sign --kubeconfig "$C/token" --token-file "$C/token"
}

# cluster-info is public: sign never publishes a user or a credential.
t_cluster_info_sign_never_publishes_credentials() {
  local data field
  data=$(base64 -w0 <"$C/ca.crt")
  for field in "token: $(cat "$C/token")" "client-key-data: a2V5" "password: hunter2" "tokenFile: /t" "exec: {command: x}"; do
    { cluster_kubeconfig "$SERVER" "$C/ca.crt" | sed '/^users: null$/d'
      printf 'users:
- name: admin
  user:
    %s
' "$field"; } >"$T/creds.kubeconfig"
    kj 2 cluster-info sign --kubeconfig "$T/creds.kubeconfig" --token-file "$C/token" || return 1
    err_has "carries a credential (users[0].user.${field%%:*} at line" || return 1
    [ ! -s "$OUT" ] || fail "printed a ConfigMap" || return 1
  done
  # A credential outside users, and a user entry without one, are refused too.
  cluster_kubeconfig "$SERVER" "$C/ca.crt" | sed "s|^    server:|    token: $(cat "$C/token")\n    server:|" >"$T/odd.kubeconfig"
  kj 2 cluster-info sign --kubeconfig "$T/odd.kubeconfig" --token-file "$C/token" || return 1
  err_has "clusters[0].cluster.token at line" || return 1
  { cluster_kubeconfig "$SERVER" "$C/ca.crt" | sed '/^users: null$/d'; printf 'users:\n- name: u\n  user: {}\n'; } >"$T/user.kubeconfig"
  kj 2 cluster-info sign --kubeconfig "$T/user.kubeconfig" --token-file "$C/token" || return 1
  err_has "has user entries" || return 1
  # --from-kubeconfig keeps the server and CA of an admin kubeconfig and drops the rest.
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$T/admin.key" 2>/dev/null
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: k\n  cluster: {server: "%s", certificate-authority-data: %s}\nusers:\n- name: admin\n  user: {client-key-data: %s, client-certificate-data: %s}\ncontexts:\n- name: admin@k\n  context: {cluster: k, user: admin}\ncurrent-context: admin@k\n' \
    "$SERVER" "$data" "$(base64 -w0 <"$T/admin.key")" "$data" >"$T/admin.conf"
  kj 0 cluster-info sign --from-kubeconfig "$T/admin.conf" --token-file "$C/token" || return 1
  jq -j .data.kubeconfig "$OUT" >"$T/published"
  cluster_kubeconfig "$SERVER" "$C/ca.crt" | cmp -s - "$T/published" || fail "not kubeadm's shape: $(cat "$T/published")" || return 1
  ! grep -q "$(base64 -w0 <"$T/admin.key" | cut -c1-40)" "$OUT" || fail "the key was published" || return 1
  cp "$OUT" "$C/www/cluster-info"
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  kj 2 cluster-info sign --from-kubeconfig "$T/admin.conf" --kubeconfig "$T/published" --token-file "$C/token" || return 1
  err_has "one of them"
}


# Every input means what the user meant: a typo is an error at once, never a
# silent switch to K3s; kubeadm's own command lines work or are refused by name.
t_token_typo_is_usage_error_not_k3s() {
  local good; good=$(cat "$C/token")
  local t requests; requests=$(wc -l <"$C/nginx/access.log")
  printf '\xef\xbb\xbf%s\n' "$good" >"$T/bom"
  for t in "${good}x" "${good%?}" "${good} " "$(tr a-z A-Z <<<"$good")"; do
    kj 2 join --skip-phases preflight,kubelet-start 127.0.0.1:$PORT --token "$t" --discovery-token-ca-cert-hash "$PIN" --kubeconfig-out "$T/k" || return 1
    err_has "[a-z0-9]{6}.[a-z0-9]{16}" || return 1
  done
  kj 2 join --skip-phases preflight,kubelet-start 127.0.0.1:$PORT --token-file "$T/bom" --discovery-token-ca-cert-hash "$PIN" --kubeconfig-out "$T/k" || return 1
  # Refused before the network: the server saw no request (not a wall clock,
  # which a loaded machine stretches).
  [ "$(wc -l <"$C/nginx/access.log")" -eq "$requests" ] || fail "a typo reached the server"
}

t_token_k3s_only_when_said() {
  local out="--kubeconfig-out $T/k --discovery-timeout 2s"
  # A bare password is a malformed bootstrap token unless K3s is named.
  kj 2 join --skip-phases preflight,kubelet-start 127.0.0.1:$PORT $out --token just-a-password --discovery-token-unsafe-skip-ca-verification || return 1
  err_has "[a-z0-9]{6}.[a-z0-9]{16}" || return 1
  # K3S_TOKEN (what K3s agents are given) says K3s: /cacerts is asked (404 on this kubeadm-style server).
  : >"$C/nginx/access.log"
  K3S_TOKEN=just-a-password kj 3 join --skip-phases preflight,kubelet-start 127.0.0.1:$PORT $out --discovery-token-unsafe-skip-ca-verification || return 1
  err_has "K3s cluster (K3S_TOKEN is set)" || return 1
  grep -q ' /cacerts$' "$C/nginx/access.log" || fail "K3S_TOKEN did not select K3s discovery" || return 1
  # K3S_URL stands for the endpoint.
  : >"$C/nginx/access.log"
  K3S_URL=https://127.0.0.1:$PORT K3S_TOKEN=just-a-password kj 3 join --skip-phases preflight,kubelet-start $out \
    --discovery-token-unsafe-skip-ca-verification || return 1
  grep -q ' /cacerts$' "$C/nginx/access.log" || fail "K3S_URL was not used" || return 1
  err_has "K3s cluster (K3S_URL is set)" || return 1
  # With a discovery file, a stray K3S_TOKEN is named as the reason.
  K3S_TOKEN=just-a-password kj 2 join --skip-phases preflight,kubelet-start --discovery-file "$T/none.yaml" --kubeconfig-out "$T/k" || return 1
  err_has "K3s was chosen (K3S_TOKEN is set); set the --flavor to kubeadm" || return 1
  # --flavor kubeadm overrides both.
  K3S_URL=https://127.0.0.1:1 K3S_TOKEN=just-a-password kj 0 join --skip-phases preflight,kubelet-start $(join_args) --flavor kubeadm \
    --discovery-token-ca-cert-hash "$PIN"
}

t_token_kubeadm_command_lines() {
  # The line kubeadm token create --print-join-command prints, with the usual
  # provisioning extras; discovery alone, as the phases to skip say.
  kj 0 join 127.0.0.1:$PORT --token "$(cat "$C/token")" --discovery-token-ca-cert-hash "$PIN" \
    --node-name worker-1 --cri-socket /run/containerd/containerd.sock --ignore-preflight-errors=all \
    --skip-phases preflight,kubelet-start --patches /etc/kubeadm/patches --v=5 --kubeconfig-out "$T/kubelet.conf" \
    -o json || return 1
  ! grep -q "does not apply\|\[patches\]" "$ERR" || fail "a flag kjoin uses was called ignored, or discovery read the patches" || return 1
  jq -e '.nodeName == "worker-1" and .node.phases == []' "$OUT" >/dev/null ||
    fail "--node-name is not in the result, or a node phase ran" || return 1
  kj 2 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" --node-name Worker_1 || return 1
  err_has '--node-name "worker_1" is not a valid node name' || return 1
  # A phase kubeadm does not have is refused by name, before anything runs.
  kj 2 join --skip-phases preflight,kubelet-strat $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has 'unknown phase "kubelet-strat"' || return 1
  # kubeadm's control-plane phases are accepted and mean nothing on a worker.
  kj 0 join --skip-phases preflight,kubelet-start,control-plane-prepare/all,control-plane-join $(join_args) \
    --discovery-token-ca-cert-hash "$PIN" || return 1
  local f
  kj 2 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" --apiserver-bind-port=6443 || return 1
  err_has "--apiserver-bind-port is for a control-plane join: add --control-plane" || return 1
  local p
  for p in 0 65536 6443x ""; do
    kj 2 join phase control-plane-prepare/certs $(join_args) --discovery-token-ca-cert-hash "$PIN" --control-plane \
      "--apiserver-bind-port=$p" || return 1
    err_has "--apiserver-bind-port \"$p\" is not a port (1-65535)" || return 1
  done
  kj 2 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" --apiserver-advertise-address=10.0.0.2 || return 1
  err_has "--apiserver-advertise-address is for a control-plane join: add --control-plane" || return 1
  # An advertise address that is none: refused before anything is asked of the cluster.
  kj 2 join phase control-plane-prepare/certs $(join_args) --discovery-token-ca-cert-hash "$PIN" --control-plane \
    --apiserver-advertise-address=10.0.0.2.1 || return 1
  err_has 'the API server'"'"'s advertise address "10.0.0.2.1" is not an IP address' || return 1
  # The whole control-plane join: a key that is none, a dry run (none yet), its kubelet-start alone.
  kj 2 join $(join_args) --discovery-token-ca-cert-hash "$PIN" --control-plane --certificate-key-file "$C/token" || return 1
  err_has "must be 64 hex digits" || return 1
  # The key file: a secret, readable by its owner alone (as a loose admin.conf
  # is refused); a character that is no hex digit, a second line, each said.
  printf '%064d\n' 1 >"$T/loose.key" && chmod 0644 "$T/loose.key"
  kj 2 join $(join_args) --discovery-token-ca-cert-hash "$PIN" --control-plane --certificate-key-file "$T/loose.key" || return 1
  err_has "is readable by group or others (mode 0644)" || return 1
  { printf '%063dg\n' 1 >"$T/hex.key" && printf '%064d\n%064d\n' 1 2 >"$T/two.key" && chmod 0600 "$T/hex.key" "$T/two.key"; } || return 1
  kj 2 join $(join_args) --discovery-token-ca-cert-hash "$PIN" --control-plane --certificate-key-file "$T/hex.key" || return 1
  err_has "character 64 is not a hex digit" || return 1
  kj 2 join $(join_args) --discovery-token-ca-cert-hash "$PIN" --control-plane --certificate-key-file "$T/two.key" || return 1
  err_has "it has more than one word or line" || return 1
  # "-": standard input, a pipe from a secret store (no file modes to check): the key is read, and the
  # join goes on (to its preflight, which this machine fails).
  kj 2 join $(join_args) --discovery-token-ca-cert-hash "$PIN" --control-plane --certificate-key-file - \
    < <(printf '%064d\n' 1) || return 1
  ! grep -q "certificate key" "$ERR" || fail "the key from standard input: $(cat "$ERR")" || return 1
  # A control-plane dry run reads the cluster as the join would: this one is no kubeadm cluster. Nothing is
  # left of its dry-run directory.
  local before; before=$(ls -d /tmp/kjoin-join-dryrun.* 2>/dev/null | wc -l)
  kj 2 join $(join_args) --discovery-token-ca-cert-hash "$PIN" --control-plane --dry-run --skip-phases preflight || return 1
  err_has "the cluster has no kubeadm ClusterConfiguration" || return 1
  [ "$(ls -d /tmp/kjoin-join-dryrun.* 2>/dev/null | wc -l)" = "$before" ] || fail "a dry-run directory was left" || return 1
  kj 2 join phase kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" --control-plane || return 1
  err_has "a control-plane node's kubelet-start runs within its whole join, not alone" || return 1
  kj 2 join phase check-etcd $(join_args) --discovery-token-ca-cert-hash "$PIN" --control-plane || return 1
  err_has "the cluster has no kubeadm ClusterConfiguration" || return 1 # a phase of its own now: kubeadm's cluster only
  kj 2 join --skip-phases control-plane-prepare/etcd $(join_args) --discovery-token-ca-cert-hash "$PIN" --control-plane || return 1
  err_has 'unknown phase "control-plane-prepare/etcd"' || return 1
  kj 2 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" "--certificate-key=0123" || return 1
  err_has "--certificate-key is for a control-plane join: add --control-plane" || return 1
  kj 2 join phase control-plane-prepare/download-certs $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "control-plane-prepare is a control-plane join's phase: set --control-plane" || return 1
  kj 2 join phase control-plane-prepare/download-certs $(join_args) --discovery-token-ca-cert-hash "$PIN" --control-plane || return 1
  err_has "download-certs needs --certificate-key" || return 1
  # kubeadm's own spelling of a sub-phase, two words: the same step, not an endpoint named download-certs.
  kj 2 join phase control-plane-prepare download-certs $(join_args) --discovery-token-ca-cert-hash "$PIN" --control-plane || return 1
  err_has "download-certs needs --certificate-key" || return 1
  kj 2 join phase control-plane-prepare nonexistent $(join_args) --discovery-token-ca-cert-hash "$PIN" --control-plane || return 1
  ! grep -q "download-certs needs" "$ERR" || fail "an unknown second word was taken as a step" || return 1
  kj 2 join phase control-plane-prepare/nonexistent $(join_args) --discovery-token-ca-cert-hash "$PIN" --control-plane || return 1
  err_has 'unknown phase "control-plane-prepare/nonexistent"' || return 1
  kj 2 join phase control-plane-join/update-status $(join_args) --discovery-token-ca-cert-hash "$PIN" --control-plane || return 1
  err_has "control-plane-join (/all, /mark-control-plane) and wait-control-plane" || return 1
  # kubeadm 1.37's control-plane-join (and /all) is its mark-control-plane: accepted, with its dry run
  kj 2 join phase control-plane-join/all $(join_args) --discovery-token-ca-cert-hash "$PIN" --control-plane --dry-run || return 1
  err_has "the cluster has no kubeadm ClusterConfiguration" || return 1
  kj 2 join phase control-plane-join/mark-control-plane $(join_args) --discovery-token-ca-cert-hash "$PIN" --control-plane \
    --dry-run || return 1
  err_has "the cluster has no kubeadm ClusterConfiguration" || return 1
  # A K3s cluster has no kubeadm-certs: refused before anything is asked of it.
  kj 2 join phase control-plane-prepare/download-certs "127.0.0.1:1" --token "K10$(printf '%064d' 0)::server:pw" \
    --control-plane --certificate-key "$(printf '%064d' 1)" || return 1
  err_has "a K3s cluster has no kubeadm control-plane join" || return 1
}

# Every flag a command's --help lists is one it takes (a verb's table once
# outgrew the parser, and the flags past it were refused as "needs a
# value"): each given, with a value when it takes one, then --help.
t_every_flag_help_lists_is_taken() {
  local verb flag arg out rc=0 n=0
  for verb in join reset "token create" "token list" "token delete" "token generate" "approver run" "approver install" \
    reports ca-hash "cluster-info sign" tls-bootstrap refresh "certs init" "certs rotate" "certs adopt-ca" \
    "certs check-expiration" "certs manifests" "certs ca-set" "certs certificate-key" "certs upload-certs" "images list" sync; do
    while read -r flag arg; do
      [ -n "$flag" ] || continue
      n=$((n + 1))
      # shellcheck disable=SC2086
      out=$("$KJOIN" $verb "$flag" ${arg:+1} --help 2>&1 >/dev/null)
      ! grep -q "unknown flag\|needs a value\|takes no value\|more than the" <<<"$out" ||
        { fail "kjoin $verb $flag${arg:+ 1}: $out"; rc=1; }
    done < <("$KJOIN" $verb --help | sed -n 's/^  \(-[a-z], \)\{0,1\} *\(--[a-z0-9-]*\)\( [A-Z]\)\{0,1\}.*/\2 \3/p')
  done
  [ "$n" -ge 200 ] || { fail "only $n flags found in the commands' --help"; rc=1; }
  return $rc
}

t_token_cli_says_what_is_wrong() {
  local good; good=$(cat "$C/token")
  # An abbreviation is not a flag (--node is not --node-name); --kubeconfig is kubeadm's own, not --kubeconfig-out's.
  kj 2 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" --node "$T/x" || return 1
  err_has "unknown flag --node;" || return 1
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" --kubeconfig "$T/x" || return 1
  [ ! -e "$T/x" ] && err_has "--kubeconfig is kubeadm's admin kubeconfig" || fail "--kubeconfig wrote or was silent" || return 1
  # An unknown flag's value is never echoed (it may be the secret).
  kj 2 join --skip-phases preflight,kubelet-start $(join_args) --tokn="$good" || return 1
  err_has "unknown flag --tokn (did you mean --token?); see --help" || return 1
  # A slip of the keyboard gets the name meant: a command, a flag, a phase.
  kj 2 joni || return 1
  err_has 'unknown command "joni" (did you mean "join"?)' || return 1
  kj 2 join --skip-phase preflight 127.0.0.1:1 || return 1
  err_has "unknown flag --skip-phase (did you mean --skip-phases?)" || return 1
  kj 2 join --skip-phases preflgiht $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has 'unknown phase "preflgiht" (did you mean "preflight"?)' || return 1
  kj 2 join --zzzzzz 127.0.0.1:1 || return 1
  err_has "unknown flag --zzzzzz; see --help" || return 1 # nothing near: no guess
  # Every flag's problem at once, as kubeadm validates its command line.
  kj 2 join 127.0.0.1:1 --token-file "$C/token" --discovery-timeout 5x --discovery-token-ca-cert-hash sha256:zz || return 1
  err_has 'invalid duration "5x"' && err_has 'invalid CA pin "sha256:zz"' || return 1
  # A missing pin is said before anything runs, the node's preflight included (kubeadm says it first too).
  kj 2 join 127.0.0.1:1 --token-file "$C/token" || return 1
  err_has "token discovery without a CA pin is unsafe: set --discovery-token-ca-cert-hash" || return 1
  ! grep -q '^\[preflight\]' "$ERR" || fail "preflight ran before the missing pin was said" || return 1
  # -o json's error says the join ID and where it failed; a failed preflight has a reason of its own and its checks.
  kj 2 join $(join_args) --discovery-token-ca-cert-hash "$PIN" --cri-socket "unix://$T/no.sock" -o json || return 1
  jq -e '.error.reason == "PreflightFailed" and .error.code == 2 and .error.phase == "preflight" and
      (.error.failedChecks | index("CRI") != null) and (.error.joinID | test("^[0-9a-f-]{36}$"))' "$OUT" >/dev/null ||
    fail "preflight's JSON error: $(cat "$OUT")" || return 1
  kj 3 join --skip-phases preflight,kubelet-start 127.0.0.1:1 --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" \
    --discovery-timeout 1s -o json || return 1
  jq -e '.error.phase == "discovery" and .error.reason == "DiscoveryTimeout" and .error.troubleshooting == "connection refused"' \
    "$OUT" >/dev/null || fail "discovery's JSON error: $(cat "$OUT")" || return 1
  # kubeadm reset's flags, phases and ResetConfiguration (nothing of kjoin's on this machine: nothing to undo).
  kj 0 reset --dry-run || return 1
  out_has "No join of kjoin's on this node" || return 1
  kj 0 reset phase preflight || return 1
  kj 2 reset phase update-status || return 1
  err_has 'unknown phase "update-status"' || return 1
  kj 2 reset --skip-phases cleanup-nodes || return 1
  err_has '(did you mean "cleanup-node"?)' || return 1
  printf 'apiVersion: kubeadm.k8s.io/v1beta4\nkind: ResetConfiguration\ndryRun: true\nforce: true\nskipPhases: [remove-etcd-member]\ncriSocket: unix:///run/containerd/containerd.sock\n' >"$T/reset.yaml"
  kj 0 reset --config "$T/reset.yaml" || return 1
  err_has "force (line 4) does not apply to kjoin: ignored" || return 1
  printf 'apiVersion: kubeadm.k8s.io/v1beta4\nkind: ResetConfiguration\ndryrun: true\n' >"$T/reset.yaml"
  kj 2 reset --config "$T/reset.yaml" || return 1
  err_has "unknown field ResetConfiguration.dryrun at line 3" || return 1
  # The phases: listed by --help (exit 0), named when one is missing (exit 2).
  kj 0 join phase --help || return 1
  out_has "kubelet-wait-bootstrap" && out_has "control-plane-prepare/download-certs   the shared CAs" || return 1
  ! grep -qF "control-plane-join/etcd" "$OUT" || fail "another name of etcd-join was listed" || return 1
  kj 2 join phase || return 1
  err_has "kjoin join phase needs the phase's name (kjoin join phase --help lists them)" || return 1
  ! grep -q '"NAME"' "$ERR" || fail "the placeholder was taken for a phase" || return 1
  # -o json wins wherever it stands, even after the error.
  kj 2 join --skip-phases preflight,kubelet-start 127.0.0.1:$PORT/api --token-file "$C/token" -o json || return 1
  jq -e '.error.code == 2 and (.error.message | contains("a path is not allowed"))' "$OUT" >/dev/null ||
    fail "no JSON error: $(cat "$OUT")" || return 1
  [ "$(grep -c '^kjoin:' "$ERR")" -eq 1 ] || fail "the failure was printed $(grep -c '^kjoin:' "$ERR") times" || return 1
  local cmd
  for cmd in "certs rotate" "certs frobnicate" "ca-hash $T/missing.crt" "token create --ttl=-1s"; do
    kj 2 $cmd -o json || return 1
    jq -e '.error.code == 2' "$OUT" >/dev/null || fail "kjoin $cmd -o json: no JSON error" || return 1
  done
  # Limits are named.
  kj 2 join --skip-phases preflight,kubelet-start $(for i in $(seq 17); do echo 127.0.0.1:$i; done) --token-file "$C/token" || return 1
  err_has "at most 16 endpoints" || return 1
  # A token pasted as the endpoint is not echoed.
  kj 2 join --skip-phases preflight,kubelet-start "$good" --token-file "$C/token" || return 1
  ! grep -qF "${good#*.}" "$ERR" || fail "the endpoint's secret was echoed" || return 1
  # Group help lists the verbs and exits 0.
  kj 0 token --help || return 1
  out_has "create" && out_has "delete" || return 1
  kj 2 token frobnicate || return 1
  # cluster-info's group help names its one verb, exit 0 (the man page and completion are made from it)
  kj 0 cluster-info --help || return 1
  out_has "sign" || return 1
  kj 2 cluster-info frobnicate
}

t_token_no_core_dump_and_version_json() {
  kj 0 version -o json || return 1
  jq -e '(.version | length > 0) and (.libraries.openssl | startswith("3.")) and (.libraries.libcurl | length > 0) and .kubernetes.oldest == "1.20" and .kubernetes.newest == "1.37"' "$OUT" >/dev/null || fail "version -o json: $(cat "$OUT")" || return 1
  kj 2 version --bogus || return 1 # a flag version does not take is refused, not ignored
  kj 2 version -o yaml || return 1
  # A running join is not dumpable (core dumps would carry the token).
  "$KJOIN" join --skip-phases preflight,kubelet-start 127.0.0.1:$PORT --token-file "$C/token" --discovery-token-unsafe-skip-ca-verification \
    --flavor k3s --kubeconfig-out "$T/k" --discovery-timeout 3s >/dev/null 2>&1 &
  local pid=$! i
  for i in $(seq 40); do
    [ "$(awk '/^Name:/ {print $2}' "/proc/$pid/status" 2>/dev/null)" = kjoin ] && break
    sleep 0.05
  done
  local limit; limit=$(awk '/Max core file size/ {print $5}' "/proc/$pid/limits" 2>/dev/null)
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  [ "$limit" = 0 ] || fail "core file size limit is \"$limit\", not 0"
}

# -v 4 shows each request with its trust mode and status; the default shows none.
t_verbose_levels_show_requests() {
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" -v 4 || return 1
  err_has "[http] GET https://127.0.0.1:$PORT$CLUSTER_INFO_PATH (server not verified): HTTP 200" || return 1
  err_has "[http] GET https://127.0.0.1:$PORT$CLUSTER_INFO_PATH (pinned CA): HTTP 200" || return 1
  ! grep -qE '^\[http\]   [A-Za-z-]+: ' "$ERR" || fail "response headers at -v 4" || return 1
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" -v 6 || return 1
  grep -qE '^\[http\]   Content-Length: [0-9]+' "$ERR" || fail "no response headers at -v 6: $(grep http "$ERR" | head -3)" || return 1
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  ! grep -q '^\[http\]' "$ERR" || fail "requests logged at -v 0" || return 1
  # -q: errors only, but a warning about an unpinned CA still shows.
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" -q || return 1
  [ ! -s "$ERR" ] || fail "-q printed: $(head -2 "$ERR")" || return 1
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-unsafe-skip-ca-verification --force -q || return 1
  [ "$(grep -vc WARNING "$ERR")" = 0 ] && err_has "WARNING" || fail "-q with the unsafe mode: $(cat "$ERR")"
}

# The secrets the environment gives kjoin are taken and dropped: a child it
# runs (here preflight's kubelet, asked its version: a stand-in that keeps
# its environment) inherits neither the token nor the certificate key
# (t_token_env_and_flags: the join still reads the token).
t_token_env_secrets_not_inherited() {
  local bin=$T/bin key; key=$(printf '%064d' 5)
  mkdir -p "$bin" && printf '#!/bin/sh\nenv >%s/kubelet.env\necho "Kubernetes v1.37.2"\n' "$T" >"$bin/kubelet" &&
    chmod 0755 "$bin/kubelet" || return 1
  PATH=$bin:$PATH KJOIN_TOKEN=$(cat "$C/token") KJOIN_CERTIFICATE_KEY=$key \
    "$KJOIN" join --skip-phases kubelet-start --ignore-preflight-errors all "127.0.0.1:$PORT" \
    --kubeconfig-out "$T/env.conf" --discovery-token-ca-cert-hash "$PIN" >"$T/env.out" 2>"$T/env.err"
  [ -s "$T/kubelet.env" ] || fail "preflight did not run the stand-in kubelet: $(tail -2 "$T/env.err")" || return 1
  ! grep -q "KJOIN_TOKEN\|KJOIN_CERTIFICATE_KEY\|${key}" "$T/kubelet.env" ||
    fail "a child inherited a secret: $(grep -o '^KJOIN_[A-Z_]*' "$T/kubelet.env" | tr '\n' ' ')"
}

# A certificate key given where its file goes (--certificate-key-file KEY, on
# join and on certs upload-certs) is never echoed: the error, -o json and the
# logs show it masked, and ps shows argv without it (a pin, 64 hex digits
# too, is still shown: test_util's kjoin_mask_keys cases). (A file of that name holds a key, so the join
# reads it and goes on to discovery, where ps can look.)
t_token_certificate_key_given_as_a_file_never_echoed() {
  local dead cmdline key=fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210
  dead=$("$TOOLS/freeport")
  SECRETS+=("$key")
  kj 2 join "127.0.0.1:$dead" --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" --control-plane \
    --certificate-key-file "$key" --discovery-timeout 3s -v 5 -o json || return 1
  err_has "the certificate key file ****************************************************************" || return 1
  jq -e '.error.message | test("file [*]{64}: ")' "$OUT" >/dev/null || fail "-o json: $(cat "$OUT")" || return 1
  kj 2 certs upload-certs --certificate-key-file "$key" --kubeconfig "$T/none.conf" -o json || return 1
  err_has "****************************************************************" || return 1
  # Still running (discovery of a dead port): argv shows the flag, no key.
  mkdir -p "$T/cwd" && echo "$key" >"$T/cwd/$key" && chmod 0600 "$T/cwd/$key"
  cmdline=$(cd "$T/cwd" && cmdline_while_running '--certificate-key-file ****' "$KJOIN" join phase control-plane-prepare/download-certs \
    "127.0.0.1:$dead" --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" --control-plane --certificate-key-file "$key" \
    --discovery-timeout 3s)
  [[ "$cmdline" == *"--certificate-key-file ****"* && "$cmdline" != *"$key"* ]] || fail "argv not scrubbed: $cmdline"
}

# upload-certs --config: this node's kubeadm configuration, read (and refused
# when malformed: exit 2) before any API server is asked.
t_token_upload_certs_config_refused_before_the_cluster() {
  printf 'apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\ncertificatesDir: [x\n' >"$T/bad.yaml"
  kj 2 certs upload-certs --config "$T/bad.yaml" --kubeconfig "$T/none.conf" || return 1
  err_has "--config $T/bad.yaml: YAML error" || return 1
  printf 'apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\ncertificatesDir: ../pki\n' >"$T/rel.yaml"
  kj 2 certs upload-certs --config "$T/rel.yaml" --kubeconfig "$T/none.conf" || return 1
  err_has "certificatesDir is not an absolute" || return 1
  kj 2 certs upload-certs --config "$T/missing.yaml" --kubeconfig "$T/none.conf" || return 1
  err_has "cannot open $T/missing.yaml"
}
