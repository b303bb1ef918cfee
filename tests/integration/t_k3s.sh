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
  kj 0 join --skip-phases preflight,kubelet-start $(k3s_args) --token "K10$bytes::node:k3s-agent-pw" -o json || return 1
  err_has "matches the bytes of the served bundle" || return 1
  jq -e --arg s "https://127.0.0.1:$PORT" '.flavor == "k3s" and .server == $s and .tokenID == null' "$OUT" >/dev/null \
    || fail "JSON: $(cat "$OUT")" || return 1
  [ "$(kc_user username)" = node ] && [ "$(kc_user password)" = k3s-agent-pw ] || fail "basic auth not written" || return 1
  kj 0 join --skip-phases preflight,kubelet-start $(k3s_args) --token "K10$bytes::$bt" --force -o json || return 1
  [ "$(kc_user token)" = "$bt" ] || fail "bootstrap token not written" || return 1
  jq -e --arg id "${bt%%.*}" '.tokenID == $id' "$OUT" >/dev/null || fail "tokenID" || return 1
  # K3s hashes a one-certificate body's bytes, never its DER (hashCA).
  kj 4 join --skip-phases preflight,kubelet-start $(k3s_args) --token "K10$root::node:k3s-agent-pw" --force || return 1
  # The server's own node-token names user "server"; a K3s agent presents "node" whatever the token names.
  kj 0 join --skip-phases preflight,kubelet-start $(k3s_args) --token "K10$bytes::server:k3s-agent-pw" --force || return 1
  [ "$(kc_user username)" = node ] || fail "the token's user was presented: $(kc_user username)" || return 1
  # K3s compares the hash as written with the lower-case one it computes: upper case never matches.
  kj 2 join --skip-phases preflight,kubelet-start $(k3s_args) --token "K10$(echo "$bytes" | tr a-f A-F)::server:k3s-agent-pw" --force || return 1
  err_has "upper-case" || return 1
  kj 0 join --skip-phases preflight,kubelet-start $(k3s_args) --token "K10::node:k3s-agent-pw" --discovery-token-ca-cert-hash "$PIN" --force || return 1
  err_has "matches pin $PIN" || return 1
  printf 'k3s-agent-pw\n' >"$T/pw"
  kj 0 join --skip-phases preflight,kubelet-start $(k3s_args) --flavor k3s --token-file "$T/pw" --discovery-token-ca-cert-hash "$ROOT_PIN" --force || return 1
  [ "$(kc_user username)" = node ] || fail "a bare password joins as node" || return 1
  kj 2 join --skip-phases preflight,kubelet-start $(k3s_args) --flavor k3s --token-file "$T/pw" || return 1
  err_has "no CA hash" || return 1
  kj 0 join --skip-phases preflight,kubelet-start $(k3s_args) --flavor k3s --token-file "$T/pw" --discovery-token-unsafe-skip-ca-verification --force || return 1
  ! grep -i "verified" "$ERR" | grep -qv "not verified" || fail "the unsafe mode's log says verified: $(grep -i verified "$ERR")" || return 1
  err_has "WARNING"
}

t_k3s_wrong_hash() {
  new_k3s k3swrong || return 1
  SECRETS+=(k3s-agent-pw)
  kj 4 join --skip-phases preflight,kubelet-start $(k3s_args) --token "K10$(printf 'ab%.0s' {1..32})::node:k3s-agent-pw" || return 1
  err_has "the token's CA hash sha256:$(printf 'ab%.0s' {1..32}) matches neither the served bundle's bytes (sha256:$(k3s_hash "$C/ca.crt"))" || return 1
  err_has "$ROOT_PIN" || return 1
  # The hash is right but the pin is not: a pin that was given is never skipped.
  kj 4 join --skip-phases preflight,kubelet-start $(k3s_args) --token "K10$(k3s_hash "$C/ca.crt")::node:k3s-agent-pw" \
    --discovery-token-ca-cert-hash "sha256:$(printf 'ab%.0s' {1..32})"
}

t_k3s_malformed_tokens() {
  local t hex; hex=$(printf 'ab%.0s' {1..32})
  SECRETS+=(sekrit-pw)
  for t in "K10abc::node:sekrit-pw" "K10${hex}a::node:sekrit-pw" "K10$(printf 'xy%.0s' {1..32})::node:sekrit-pw" \
           "K10::" "K10::node" "K10::node:" "K10sekrit-pw" "K10::ABCDEF.0123456789abcdef"; do
    kj 2 join --skip-phases preflight,kubelet-start 127.0.0.1:1 --token "$t" --kubeconfig-out "$T/k.conf" || return 1
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
  kj 4 join --skip-phases preflight,kubelet-start $(k3s_args) --token "K10$(k3s_hash "$C/ca.crt")::node:k3s-agent-pw" || return 1
  kj 0 join --skip-phases preflight,kubelet-start $(k3s_args) --token "K10$(k3s_hash "$C/www/cacerts")::node:k3s-agent-pw" || return 1
  # The DER of the one root is not what K3s hashes; as an explicit root-sha256: pin it is.
  kj 4 join --skip-phases preflight,kubelet-start $(k3s_args) --token "K10${ROOT_PIN#root-sha256:}::node:k3s-agent-pw" || return 1
  kj 0 join --skip-phases preflight,kubelet-start $(k3s_args) --token "K10::node:k3s-agent-pw" --discovery-token-ca-cert-hash "$ROOT_PIN" || return 1
  [ "$(kjoin_ca_root_pin "$C/www/cacerts")" = "$ROOT_PIN" ] || fail "ca-hash root pin changed with the wrapping"
}
kjoin_ca_root_pin() { "$KJOIN" ca-hash --only root-sha256 "$1"; }

t_k3s_flavor_override() {
  new_k3s k3sflavor || return 1
  kj 0 join --skip-phases preflight,kubelet-start $(k3s_args) --token-file "$C/token" --flavor k3s --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "Requesting https://127.0.0.1:$PORT/cacerts" || return 1
  SECRETS+=(k3s-agent-pw)
  kj 2 join --skip-phases preflight,kubelet-start $(k3s_args) --token "K10::node:k3s-agent-pw" --flavor kubeadm --discovery-token-ca-cert-hash "$PIN" || return 1
  kj 2 join --skip-phases preflight,kubelet-start $(k3s_args) --token "K10::node:k3s-agent-pw" --flavor k3s3 || return 1
  kj 2 join --skip-phases preflight,kubelet-start $(k3s_args) --token "K10::node:k3s-agent-pw" --tls-bootstrap-token "$(cat "$C/token")"
}

t_k3s_token_scrubbed_from_ps() {
  local dead cmdline; dead=$("$TOOLS/freeport")
  SECRETS+=(k3s-agent-pw)
  cmdline=$(cmdline_while_running 'K10::****' "$KJOIN" join --skip-phases preflight,kubelet-start "127.0.0.1:$dead" --token "K10::node:k3s-agent-pw" \
    --discovery-token-ca-cert-hash "$PIN" --kubeconfig-out "$T/k.conf" --discovery-timeout 3s)
  [[ "$cmdline" == *"--token K10::****"* && "$cmdline" != *k3s-agent-pw* ]] || fail "argv not scrubbed: $cmdline"
}

# Where the token and the server come from, as `k3s agent` reads them:
# K3S_TOKEN_FILE and --token-file whole and trimmed (a blank first line is
# fine; a second line is part of the password), K3S_URL https://host meaning
# port 443 with any path ignored, and a 300-byte password.
t_k3s_token_sources_as_k3s_reads_them() {
  new_k3s k3ssrc || return 1
  local bytes pw long; bytes=$(k3s_hash "$C/ca.crt"); pw=k3s-agent-pw
  long=$(head -c 300 /dev/zero | tr '\0' p)
  SECRETS+=("$pw" "$long")
  printf '\n\n  K10%s::server:%s  \n\n' "$bytes" "$pw" >"$T/node-token"
  kj 0 join --skip-phases preflight,kubelet-start $(k3s_args) --token-file "$T/node-token" || return 1
  [ "$(kc_user password)" = "$pw" ] || fail "trimmed password: $(kc_user password)" || return 1
  K3S_TOKEN_FILE=$T/node-token kj 0 join --skip-phases preflight,kubelet-start $(k3s_args) --force || return 1
  # A second line belongs to the password, as K3s reads it.
  printf 'K10%s::server:%s\nmore\n' "$bytes" "$pw" >"$T/two-lines"
  kj 0 join --skip-phases preflight,kubelet-start $(k3s_args) --token-file "$T/two-lines" --force || return 1
  [ "$(kc_user password)" = "$pw"$'\n'more ] || fail "the second line was dropped" || return 1
  # A 300-byte password, as K3s takes it.
  kj 0 join --skip-phases preflight,kubelet-start $(k3s_args) --token "K10$bytes::node:$long" --force || return 1
  [ "$(kc_user password)" = "$long" ] || fail "the long password changed" || return 1
  # K3S_URL: the path is ignored; without a port it means 443 (nothing listens there: a timeout naming it).
  K3S_URL="https://127.0.0.1:$PORT/some/path" K3S_TOKEN="K10$bytes::node:$pw" \
    kj 0 join --skip-phases preflight,kubelet-start --kubeconfig-out "$T/url.conf" --discovery-timeout 20s || return 1
  K3S_URL="https://127.0.0.1/x" K3S_TOKEN="K10$bytes::node:$pw" \
    kj 3 join --skip-phases preflight,kubelet-start --kubeconfig-out "$T/443.conf" --discovery-timeout 1s || return 1
  err_has "127.0.0.1:443" || return 1
  K3S_URL="http://127.0.0.1:$PORT" K3S_TOKEN="K10$bytes::node:$pw" kj 2 join --skip-phases preflight,kubelet-start --kubeconfig-out "$T/http.conf" || return 1
}

# The server name is checked against the subject alternative names only, as
# Go checks it: a certificate with the name only in its CN is refused, saying why.
t_k3s_legacy_common_name_refused() {
  new_k3s k3scn || return 1
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$C/cn.key" 2>/dev/null
  openssl req -new -key "$C/cn.key" -subj "/CN=127.0.0.1" -out "$C/cn.csr" 2>/dev/null
  printf 'extendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' >"$C/cn.ext"
  openssl x509 -req -in "$C/cn.csr" -CA "$C/ca.crt" -CAkey "$C/ca.key" -CAcreateserial -days 30 -extfile "$C/cn.ext" \
    -out "$C/cn.crt" 2>/dev/null || return 1
  restart_nginx "$C" "$C/cn.crt" "$C/cn.key" || return 1
  SECRETS+=(k3s-agent-pw)
  kj 4 join --skip-phases preflight,kubelet-start $(k3s_args) --token "K10$(k3s_hash "$C/ca.crt")::node:k3s-agent-pw" || return 1
  err_has "legacy Common Name field" || return 1
  kj 4 join --skip-phases preflight,kubelet-start "127.0.0.1:$PORT" --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" --kubeconfig-out "$T/k.conf" || return 1
  err_has "legacy Common Name field" || return 1
}

# PEM blocks that are not plain CERTIFICATE blocks are skipped, as K3s reads /cacerts, and never trusted.
t_k3s_other_pem_blocks_are_skipped() {
  new_k3s k3sblocks || return 1
  mkca "$C" stray
  { sed 's/CERTIFICATE/X509 CERTIFICATE/' "$C/stray.crt"
    printf -- '-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\n%s\n-----END CERTIFICATE-----\n' \
      "$(openssl x509 -in "$C/stray.crt" -outform der | base64 -w64)"
    cat "$C/ca.crt"; } >"$C/www/cacerts"
  SECRETS+=(k3s-agent-pw)
  kj 0 join --skip-phases preflight,kubelet-start $(k3s_args) --token "K10$(k3s_hash "$C/www/cacerts")::node:k3s-agent-pw" -o json || return 1
  jq -e '[.caCertificates[].subject] == ["CN=ca"]' "$OUT" >/dev/null || fail "trusted: $(jq -c '.caCertificates' "$OUT")" || return 1
}

# A K3s agent starts its kubelet itself: with the default phases, a K3s join
# is discovery alone, and says so; the token may come on standard input and
# is read once.
t_k3s_default_phases_are_discovery_alone() {
  new_k3s k3sphases || return 1
  local bytes; bytes=$(k3s_hash "$C/ca.crt")
  SECRETS+=(k3s-agent-pw)
  echo "K10$bytes::node:k3s-agent-pw" >"$T/token"
  kj 0 join $(k3s_args) --token-file - -o json <"$T/token" || return 1
  err_has "A K3s cluster: its agent starts the kubelet, so only discovery runs" || return 1
  ! grep -q "preflight" "$ERR" || fail "a node phase ran for K3s: $(cat "$ERR")" || return 1
  jq -e '.flavor == "k3s" and .node.phases == []' "$OUT" >/dev/null || fail "JSON: $(cat "$OUT")" || return 1
  [ "$(kc_user password)" = k3s-agent-pw ] || fail "the token from standard input was not used" || return 1
}
