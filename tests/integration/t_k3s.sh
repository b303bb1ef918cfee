# K3s tokens and /cacerts (sourced by run.sh).

k3s_args() { echo "127.0.0.1:$PORT --kubeconfig-out $T/kubelet.conf --discovery-timeout ${1:-20s}"; }
kc_user() { kubectl --kubeconfig "$T/kubelet.conf" config view --raw -o jsonpath="{.users[0].user.$1}"; }

new_k3s() {
  new_cluster "$1" || return 1
  cp "$C/ca.crt" "$C/www/cacerts"
}

t_k3s_token_forms() {
  new_k3s k3sforms || return 1
  local bytes root bt; bytes=$(k3s_hash "$C/ca.crt"); root=${ROOT_PIN#root-sha256:}; bt=$(cat "$C/token")
  SECRETS+=(k3s-agent-pw)
  kj 0 join $(k3s_args) --token "K10$bytes::node:k3s-agent-pw" -o json || return 1
  err_has "matches the bytes of the served bundle" || return 1
  jq -e --arg s "https://127.0.0.1:$PORT" '.flavor == "k3s" and .server == $s and .tokenID == null' "$OUT" >/dev/null \
    || fail "JSON: $(cat "$OUT")" || return 1
  [ "$(kc_user username)" = node ] && [ "$(kc_user password)" = k3s-agent-pw ] || fail "basic auth not written" || return 1
  kj 0 join $(k3s_args) --token "K10$root::$bt" --force -o json || return 1
  err_has 'matches the DER of root "CN=ca"' || return 1
  [ "$(kc_user token)" = "$bt" ] || fail "bootstrap token not written" || return 1
  jq -e --arg id "${bt%%.*}" '.tokenID == $id' "$OUT" >/dev/null || fail "tokenID" || return 1
  kj 0 join $(k3s_args) --token "K10$(echo "$bytes" | tr a-f A-F)::server:k3s-agent-pw" --force || return 1
  kj 0 join $(k3s_args) --token "K10::node:k3s-agent-pw" --discovery-token-ca-cert-hash "$PIN" --force || return 1
  err_has "matches pin $PIN" || return 1
  printf 'k3s-agent-pw\n' >"$T/pw"
  kj 0 join $(k3s_args) --flavor k3s --token-file "$T/pw" --discovery-token-ca-cert-hash "$ROOT_PIN" --force || return 1
  [ "$(kc_user username)" = node ] || fail "a bare password joins as node" || return 1
  kj 2 join $(k3s_args) --flavor k3s --token-file "$T/pw" || return 1
  err_has "no CA hash" || return 1
  kj 0 join $(k3s_args) --flavor k3s --token-file "$T/pw" --discovery-token-unsafe-skip-ca-verification --force || return 1
  ! grep -i "verified" "$ERR" | grep -qv "not verified" || fail "the unsafe mode's log says verified: $(grep -i verified "$ERR")" || return 1
  err_has "WARNING"
}

t_k3s_wrong_hash() {
  new_k3s k3swrong || return 1
  SECRETS+=(k3s-agent-pw)
  kj 4 join $(k3s_args) --token "K10$(printf 'ab%.0s' {1..32})::node:k3s-agent-pw" || return 1
  err_has "matches neither the served bundle's bytes ($(k3s_hash "$C/ca.crt"))" || return 1
  err_has "$ROOT_PIN" || return 1
  # The hash is right but the pin is not: a pin that was given is never skipped.
  kj 4 join $(k3s_args) --token "K10$(k3s_hash "$C/ca.crt")::node:k3s-agent-pw" \
    --discovery-token-ca-cert-hash "sha256:$(printf 'ab%.0s' {1..32})"
}

t_k3s_malformed_tokens() {
  local t hex; hex=$(printf 'ab%.0s' {1..32})
  SECRETS+=(sekrit-pw)
  for t in "K10abc::node:sekrit-pw" "K10${hex}a::node:sekrit-pw" "K10$(printf 'xy%.0s' {1..32})::node:sekrit-pw" \
           "K10::" "K10::node" "K10::node:" "K10sekrit-pw" "K10::ABCDEF.0123456789abcdef"; do
    kj 2 join 127.0.0.1:1 --token "$t" --kubeconfig-out "$T/k.conf" || return 1
  done
}

t_k3s_rewrapped_pem() {
  # The same certificate re-wrapped: K3s' single-certificate hash (the bytes)
  # changes, the root's DER hash does not.
  new_k3s k3swrap || return 1
  { printf 'some text\r\n-----BEGIN CERTIFICATE-----\r\n'
    openssl x509 -in "$C/ca.crt" -outform der | base64 -w76 | sed 's/$/\r/'
    printf -- '-----END CERTIFICATE-----\r\n\r\n'; } >"$C/www/cacerts"
  SECRETS+=(k3s-agent-pw)
  kj 4 join $(k3s_args) --token "K10$(k3s_hash "$C/ca.crt")::node:k3s-agent-pw" || return 1
  kj 0 join $(k3s_args) --token "K10$(k3s_hash "$C/www/cacerts")::node:k3s-agent-pw" || return 1
  kj 0 join $(k3s_args) --token "K10${ROOT_PIN#root-sha256:}::node:k3s-agent-pw" || return 1
  kj 0 join $(k3s_args) --token "K10::node:k3s-agent-pw" --discovery-token-ca-cert-hash "$ROOT_PIN" || return 1
  [ "$(kjoin_ca_root_pin "$C/www/cacerts")" = "$ROOT_PIN" ] || fail "ca-hash root pin changed with the wrapping"
}
kjoin_ca_root_pin() { "$KJOIN" ca-hash --only root-sha256 "$1"; }

t_k3s_flavor_override() {
  new_k3s k3sflavor || return 1
  kj 0 join $(k3s_args) --token-file "$C/token" --flavor k3s --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "Requesting https://127.0.0.1:$PORT/cacerts" || return 1
  SECRETS+=(k3s-agent-pw)
  kj 2 join $(k3s_args) --token "K10::node:k3s-agent-pw" --flavor kubeadm --discovery-token-ca-cert-hash "$PIN" || return 1
  kj 2 join $(k3s_args) --token "K10::node:k3s-agent-pw" --flavor k3s3 || return 1
  kj 2 join $(k3s_args) --token "K10::node:k3s-agent-pw" --tls-bootstrap-token "$(cat "$C/token")"
}

t_k3s_token_scrubbed_from_ps() {
  local dead cmdline; dead=$("$TOOLS/freeport")
  SECRETS+=(k3s-agent-pw)
  cmdline=$(cmdline_while_running 'K10::****' "$KJOIN" join "127.0.0.1:$dead" --token "K10::node:k3s-agent-pw" \
    --discovery-token-ca-cert-hash "$PIN" --kubeconfig-out "$T/k.conf" --discovery-timeout 3s)
  [[ "$cmdline" == *"--token K10::****"* && "$cmdline" != *k3s-agent-pw* ]] || fail "argv not scrubbed: $cmdline"
}
