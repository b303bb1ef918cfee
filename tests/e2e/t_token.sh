# kjoin token create/list/delete on the real API, and interop with kubeadm.

kadm() { "$KBIN/kubeadm" --kubeconfig "$E2E_ADMIN" "$@"; }

t_e2e_token_create_is_signed_seen_by_kubeadm_and_joins() {
  local t; new_token t
  local id=${t%%.*}
  KJ_STDOUT_SECRET=1 kj 0 token create "$t" --kubeconfig "$E2E_ADMIN" --ttl 2h --description "e2e made by kjoin" \
    --groups system:bootstrappers:e2e,system:bootstrappers:kubeadm:default-node-token || return 1
  out_has "$t" || return 1
  e2e_wait 20 signed "$id" || { fail "the bootstrap signer did not sign $id"; return 1; }
  kadm token list >"$T/kadm" 2>/dev/null || { fail "kubeadm token list failed"; return 1; }
  local line; line=$(grep "^$id\." "$T/kadm")
  [ -n "$line" ] || { fail "kubeadm does not list $id"; return 1; }
  [[ "$line" == *"authentication,signing"* ]] || fail "kubeadm shows other usages: $line" || return 1
  [[ "$line" == *"e2e made by kjoin"* ]] || fail "kubeadm shows another description: $line" || return 1
  [[ "$line" == *"system:bootstrappers:e2e,system:bootstrappers:kubeadm:default-node-token"* ]] ||
    fail "kubeadm shows other groups: $line" || return 1
  [[ "$line" =~ [[:space:]](1h|119m|120m)[[:space:]] ]] || fail "kubeadm shows another TTL: $line" || return 1
  kj 0 join --skip-phases preflight,kubelet-start "$E2E_ENDPOINT" --token "$t" --discovery-token-ca-cert-hash "$E2E_PIN" \
    --kubeconfig-out "$T/out.conf" --discovery-timeout 30s
}

t_e2e_token_made_by_kubeadm_shows_in_kjoin_list() {
  local t; new_token t
  local id=${t%%.*}
  kadm token create "$t" --usages authentication --ttl 0 --description "e2e made by kubeadm" \
    --groups system:bootstrappers:e2e-kubeadm >/dev/null 2>&1 || { fail "kubeadm token create failed"; return 1; }
  kj 0 token list --kubeconfig "$E2E_ADMIN" -o json || return 1
  jq -e --arg id "$id" '.tokens[] | select(.tokenID == $id) |
      select(.usages == ["authentication"] and .groups == ["system:bootstrappers:e2e-kubeadm"] and
             .description == "e2e made by kubeadm" and .expires == null and .ttl == "<forever>" and
             (.token | endswith("****************")))' "$OUT" >/dev/null ||
    fail "kjoin token list shows it otherwise: $(cat "$OUT")" || return 1
  kj 0 token list --kubeconfig "$E2E_ADMIN" || return 1
  grep "^$id\.\*" "$OUT" | grep -q "<forever>" || fail "text listing lacks the token: $(cat "$OUT")" || return 1
  KJ_STDOUT_SECRET=1 kj 0 token list --kubeconfig "$E2E_ADMIN" --show-secrets
  out_has "$t"
}

t_e2e_token_delete_removes_signature_and_join_ends() {
  local t; new_token t
  local id=${t%%.*}
  KJ_STDOUT_SECRET=1 kj 0 token create "$t" --kubeconfig "$E2E_ADMIN" || return 1
  e2e_wait 20 signed "$id" || { fail "never signed"; return 1; }
  kj 0 token delete "$t" --kubeconfig "$E2E_ADMIN" || return 1
  out_has "bootstrap token \"$id\" deleted" || return 1
  e2e_wait 20 unsigned "$id" || { fail "the signature stayed after delete"; return 1; }
  kj 8 join --skip-phases preflight,kubelet-start "$E2E_ENDPOINT" --token "$t" --discovery-token-ca-cert-hash "$E2E_PIN" \
    --kubeconfig-out "$T/out.conf" --discovery-timeout 60s
}

t_e2e_expired_token_is_cleaned_and_never_joins() {
  local t; new_token t
  local id=${t%%.*}
  KJ_STDOUT_SECRET=1 kj 0 token create "$t" --kubeconfig "$E2E_ADMIN" --ttl 2s || return 1
  gone() { ! kc -n kube-system get secret "bootstrap-token-$id" >/dev/null 2>&1; }
  e2e_wait 30 gone || { fail "the token cleaner did not remove the expired token"; return 1; }
  kj 8 join --skip-phases preflight,kubelet-start "$E2E_ENDPOINT" --token "$t" --discovery-token-ca-cert-hash "$E2E_PIN" \
    --kubeconfig-out "$T/out.conf" --discovery-timeout 60s || return 1
  err_has "it expired, was deleted or was never created"
}

# The control-plane line: kubeadm's, with the key given, word for word but the token and the tool.
t_e2e_print_join_command_for_a_control_plane() {
  local key; key=$(printf '%064d' 42)
  KJ_STDOUT_SECRET=1 kj 0 token create --kubeconfig "$E2E_ADMIN" --print-join-command --certificate-key "$key" || return 1
  local ours theirs; ours=$(cat "$OUT")
  theirs=$("$KBIN/kubeadm" token create --print-join-command --certificate-key "$key" --ttl 10m --kubeconfig "$E2E_ADMIN" 2>/dev/null) ||
    { fail "kubeadm token create"; return 1; }
  SECRETS+=("$(sed -n 's/.*--token [a-z0-9]*\.\([a-z0-9]*\).*/\1/p' <<<"$ours")" "$(sed -n 's/.*--token [a-z0-9]*\.\([a-z0-9]*\).*/\1/p' <<<"$theirs")")
  local norm='s/^kubeadm /kjoin /; s/--token [a-z0-9.]* /--token T /; s/  */ /g; s/ *$//'
  [ "$(sed "$norm" <<<"$ours")" = "$(sed "$norm" <<<"$theirs")" ] ||
    fail "the control-plane line differs from kubeadm's: $(sed "$norm" <<<"$ours") / $(sed "$norm" <<<"$theirs")" || return 1
  kj 2 token create --kubeconfig "$E2E_ADMIN" --certificate-key "$key" || return 1
  err_has "--certificate-key is only used with --print-join-command"
}

t_e2e_print_join_command_works_pasted() {
  KJ_STDOUT_SECRET=1 kj 0 token create --kubeconfig "$E2E_ADMIN" --print-join-command || return 1
  local line; line=$(cat "$OUT")
  [[ "$line" == "kjoin join $E2E_ENDPOINT --token "*" --discovery-token-ca-cert-hash $E2E_PIN" ]] ||
    fail "unexpected join command: $line" || return 1
  local t; t=$(sed -E 's/.*--token ([^ ]+).*/\1/' <<<"$line"); SECRETS+=("$(secret_of "$t")")
  read -ra words <<<"${line#kjoin }"
  kj 0 "${words[@]}" --skip-phases preflight,kubelet-start --kubeconfig-out "$T/out.conf" --discovery-timeout 30s
}

t_e2e_token_create_existing_id_is_already_exists() {
  local t; new_token t
  KJ_STDOUT_SECRET=1 kj 0 token create "$t" --kubeconfig "$E2E_ADMIN" || return 1
  kj 6 token create "$t" --kubeconfig "$E2E_ADMIN" || return 1
  err_has "AlreadyExists" || return 1
  ! grep -qF "$(secret_of "$t")" "$OUT" "$ERR" || fail "the secret was echoed"
}

t_e2e_token_delete_missing_is_reported() {
  kj 6 token delete zzzzzz --kubeconfig "$E2E_ADMIN" || return 1
  err_has "token zzzzzz: not found" || return 1
  [ "$(grep -c '^kjoin:' "$ERR")" -eq 1 ] || fail "the failure was printed more than once" || return 1
  # The rest are still deleted, and JSON says which went and which did not.
  local t; new_token t
  KJ_STDOUT_SECRET=1 kj 0 token create "$t" --kubeconfig "$E2E_ADMIN" || return 1
  kj 6 token delete zzzzzz "${t%%.*}" --kubeconfig "$E2E_ADMIN" -o json || return 1
  jq -e --arg id "${t%%.*}" '.deleted == [$id] and .failed == ["zzzzzz"] and .error.code == 6' "$OUT" >/dev/null ||
    fail "delete -o json: $(cat "$OUT")"
}

t_e2e_token_create_refuses_bad_groups_and_usages() {
  kj 2 token create --kubeconfig "$E2E_ADMIN" --groups system:masters || return 1
  err_has "system:bootstrappers:" || return 1
  kj 2 token create --kubeconfig "$E2E_ADMIN" --usages signing,admin || return 1
  err_has "unknown token usage"
}

# A kubeconfig whose credential is a bootstrap token: authenticated, but may
# not read Secrets.
t_e2e_forbidden_names_the_resource() {
  kj 0 join --skip-phases preflight,kubelet-start "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
    --kubeconfig-out "$T/bootstrap.conf" --discovery-timeout 30s || return 1
  kj 6 token list --kubeconfig "$T/bootstrap.conf" || return 1
  err_has "Forbidden" && err_has "secrets"
}

t_e2e_wrong_ca_in_kubeconfig_is_trust_failure() {
  mkca "$T" other
  e2e_kubeconfig "$E2E_SERVER" "$T/other.crt" "$E2E_DIR/admin.crt" "$E2E_DIR/admin.key" >"$T/wrong-ca.conf"
  kj 4 token list --kubeconfig "$T/wrong-ca.conf" || return 1
  err_has "TLS verification"
}

t_e2e_unreachable_server_times_out() {
  local port; port=$("$TOOLS/freeport")
  e2e_kubeconfig "https://127.0.0.1:$port" "$E2E_CA" "$E2E_DIR/admin.crt" "$E2E_DIR/admin.key" >"$T/closed.conf"
  local start=$(date +%s)
  kj 3 token list --kubeconfig "$T/closed.conf" --timeout 2s || return 1
  [ $(($(date +%s) - start)) -le 5 ] || fail "took longer than the timeout"
}

t_e2e_exec_credentials_are_refused_by_name() {
  sed 's/^users:$/users:\n- name: ex\n  user:\n    exec: {command: \/bin\/true, apiVersion: client.authentication.k8s.io\/v1beta1}/' \
    "$E2E_ADMIN" | sed 's/user: admin}/user: ex}/' >"$T/exec.conf"
  kj 2 token list --kubeconfig "$T/exec.conf" || return 1
  err_has '"exec"'
}

t_e2e_kubeconfig_from_environment() {
  KUBECONFIG="$E2E_ADMIN:/nonexistent" kj 0 token list -v 1 || return 1
  out_has "abcdef.****************" || return 1
  err_has "[api] Using $E2E_ADMIN, context \"admin@e2e\", server $E2E_SERVER"
}

# Tokens made by either tool are used and deleted by the other.
t_e2e_tokens_cross_tools_use_and_delete() {
  local a b; new_token a; new_token b
  # kubeadm makes one, kjoin joins with it and deletes it.
  kadm token create "$a" --ttl 10m >/dev/null 2>&1 || { fail "kubeadm token create"; return 1; }
  e2e_wait 20 signed "${a%%.*}" || { fail "kubeadm's token never signed"; return 1; }
  kj 0 join --skip-phases preflight,kubelet-start "$E2E_ENDPOINT" --token "$a" --discovery-token-ca-cert-hash "$E2E_PIN" --kubeconfig-out "$T/a.conf" \
    --discovery-timeout 30s || return 1
  kj 0 token delete "${a%%.*}" --kubeconfig "$E2E_ADMIN" || return 1
  # (Listed into a file first: under pipefail, grep -q ending the pipe early would fail the list.)
  kadm token list >"$T/list-a" 2>/dev/null || { fail "kubeadm token list"; return 1; }
  ! grep -q "^${a%%.*}\." "$T/list-a" || fail "kubeadm still lists the token kjoin deleted" || return 1
  # kjoin makes one, kubeadm lists and deletes it; then nothing joins with it.
  KJ_STDOUT_SECRET=1 kj 0 token create "$b" --kubeconfig "$E2E_ADMIN" --ttl 10m || return 1
  kadm token list >"$T/list-b" 2>/dev/null || { fail "kubeadm token list"; return 1; }
  grep -q "^${b%%.*}\." "$T/list-b" || fail "kubeadm does not list kjoin's token" || return 1
  kadm token delete "${b%%.*}" >/dev/null 2>&1 || { fail "kubeadm token delete of kjoin's token"; return 1; }
  kj 0 token list --kubeconfig "$E2E_ADMIN" -o json || return 1
  ! jq -e --arg id "${b%%.*}" '.tokens[] | select(.tokenID == $id)' "$OUT" >/dev/null ||
    fail "kjoin still lists the token kubeadm deleted" || return 1
  e2e_wait 20 unsigned "${b%%.*}" || { fail "the signature stayed"; return 1; }
  kj 8 join --skip-phases preflight,kubelet-start "$E2E_ENDPOINT" --token "$b" --discovery-token-ca-cert-hash "$E2E_PIN" --kubeconfig-out "$T/b.conf" \
    --discovery-timeout 3s
}
