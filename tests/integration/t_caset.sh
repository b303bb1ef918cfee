# kjoin certs ca-set: a control plane's CAs under an organisation's root; a
# node pinning the root joins before and after the intermediate and the
# cluster CAs rotate (sourced by run.sh).

# caset DIR LAYOUT ROOT_DIR [FLAGS]: ca-set with the root ROOT_DIR/org.crt and .key.
caset() { kj "${CASET_RC:-0}" certs ca-set --dir "$1" --layout "$2" --root-cert "$3/org.crt" --root-key "$3/org.key" "${@:4}"; }
new_org() { mkdir -p "$1" && mkca "$1" org; }
# first_cert FILE: the first PEM certificate of a bundle.
first_cert() { openssl x509 -in "$1"; }
key_matches() {
  [ "$(openssl x509 -in "$1" -noout -pubkey | sha256sum)" = "$(openssl pkey -in "$2" -pubout 2>/dev/null | sha256sum)" ]
}
# set_ok DIR: every CA file's first certificate verifies to the org root
# through the file's own chain, and its key matches it.
set_ok() {
  local d=$1 f
  for f in "$d"/server-ca "$d"/client-ca "$d"/request-header-ca "$d"/etcd/peer-ca "$d"/etcd/server-ca; do
    openssl verify -x509_strict -CAfile "$ORG/org.crt" -untrusted "$f.crt" <(first_cert "$f.crt") >/dev/null 2>&1 \
      || fail "${f#"$d"/}.crt does not verify to the root" || return 1
    key_matches "$f.crt" "$f.key" || fail "${f#"$d"/}.key does not match" || return 1
  done
}
pins_of() { jq -r '.pins.rootSha256 + " " + .pins.sha256' "$1"; }

# serve_set C BUNDLE KEY [restart]: nginx serving a certificate of the server
# CA (BUNDLE's first, KEY its key) with the chain to the root, cluster-info
# signed with BUNDLE as its CA data, and /cacerts (K3s); sets PORT, SERVER; C/token.
serve_set() {
  local c=$1 bundle=$2 restart=${4:-}
  mkdir -p "$c/www"
  first_cert "$bundle" >"$c/sca.crt"
  cp "$3" "$c/sca.key"
  mkleaf "$c" server sca
  # The chain up to (not including) the root: a node that joined before a
  # rotation still trusts the server by its root. (The markers matched whole:
  # a base64 line holds "END" about once in 4,000 lines.)
  { cat "$c/server.crt"; openssl crl2pkcs7 -nocrl -certfile "$bundle" | openssl pkcs7 -print_certs |
      awk '/^-----BEGIN CERTIFICATE-----$/{n++} n<=2' |
      sed -n '/^-----BEGIN CERTIFICATE-----$/,/^-----END CERTIFICATE-----$/p'; } >"$c/server-chain.crt"
  cp "$bundle" "$c/www/cacerts"
  [ -f "$c/token" ] || { "$KJOIN" token generate >"$c/token"; chmod 600 "$c/token"; }
  SECRETS+=("$(cut -d. -f2 "$c/token")")
  local try
  for try in 1 2 3; do
    [ -n "$restart" ] || PORT=$("$TOOLS/freeport")
    SERVER="https://127.0.0.1:$PORT"
    cluster_kubeconfig "$SERVER" "$bundle" >"$c/cluster.kubeconfig"
    "$KJOIN" cluster-info sign --kubeconfig "$c/cluster.kubeconfig" --token-file "$c/token" >"$c/www/cluster-info"
    [ -n "$restart" ] && { restart_nginx "$c" "$c/server-chain.crt" "$c/server.key"; return; }
    # A port can be taken between freeport and nginx (a busy machine): try another.
    start_nginx "$c" "$PORT" "$c/server-chain.crt" "$c/server.key" 2>"$c/start.err" && return 0
    grep -q "Address already in use" "$c/start.err" || break
  done
  cat "$c/start.err" >&2
  return 1
}
caset_join() { kj "${2:-0}" join --skip-phases preflight,kubelet-start "127.0.0.1:$PORT" --token-file "$C/token" --discovery-token-ca-cert-hash "$1" \
  --kubeconfig-out "$T/kubelet.conf" --force --discovery-timeout 10s; }

t_caset_k3s_root_pin_joins_across_intermediate_rotation() {
  ORG=$T/org C=$T/cluster
  local set=$T/tls pins before after bad
  new_org "$ORG" || return 1
  caset "$set" k3s "$ORG" --intermediate -o json || return 1
  pins=$(pins_of "$OUT")
  [ "${pins% *}" = "$(root_pin "$ORG/org.crt")" ] || fail "root-sha256 pin is not openssl's: $pins" || return 1
  [ "${pins#* }" = "$(spki_pin "$ORG/org.crt")" ] || fail "sha256 pin is not openssl's: $pins" || return 1
  [ "$("$KJOIN" ca-hash --only root-sha256 "$set/server-ca.crt")" = "${pins% *}" ] || fail "ca-hash disagrees" || return 1
  jq -e '.written and (.rotated|not) and (.intermediate|startswith("CN=kjoin-intermediate-ca@")) and
         ([.cas[].bundle] == [3,3,3,3,3])' "$OUT" >/dev/null || fail "JSON: $(cat "$OUT")" || return 1
  set_ok "$set" || return 1
  [ "$(grep -c 'BEGIN PRIVATE KEY' "$set/service.key")" = 1 ] || fail "service.key" || return 1
  [ "$(stat -c %a "$set/server-ca.key" "$set/server-ca.crt" "$set/service.key" | sort -u)" = 600 ] || fail "modes" || return 1
  serve_set "$C" "$set/server-ca.crt" "$set/server-ca.key" || return 1
  caset_join "${pins% *}" || return 1
  err_has "matches pin ${pins% *}" || return 1
  kubectl --kubeconfig "$T/kubelet.conf" get --raw "$CLUSTER_INFO_PATH" >/dev/null || fail "kubectl before" || return 1
  cp "$T/kubelet.conf" "$T/before.conf"
  caset_join "${pins#* }" || return 1
  SECRETS+=(k3s-node-pw)
  local k3s_hash=${pins% *}; k3s_hash=${k3s_hash#root-sha256:}
  kj 0 join --skip-phases preflight,kubelet-start "127.0.0.1:$PORT" --token "K10$k3s_hash::node:k3s-node-pw" --kubeconfig-out "$T/k3s.conf" || return 1
  err_has "matches the DER of root \"CN=org\"" || return 1
  before=$(sha256sum "$set/server-ca.crt")

  # The rotation: a new intermediate and new CAs; the pins stay.
  caset "$set" k3s "$ORG" --intermediate --rotate -o json || return 1
  [ "$(pins_of "$OUT")" = "$pins" ] || fail "the pins changed: $(pins_of "$OUT")" || return 1
  jq -e '.written and .rotated and ([.cas[].bundle] == [5,5,5,5,5])' "$OUT" >/dev/null || fail "JSON: $(cat "$OUT")" || return 1
  after=$(sha256sum "$set/server-ca.crt")
  [ "$before" != "$after" ] || fail "server-ca.crt unchanged" || return 1
  set_ok "$set" || return 1
  [ "$(grep -c 'BEGIN PRIVATE KEY' "$set/service.key")" = 2 ] || fail "service.key lacks the previous key" || return 1
  # The new bundle still trusts the server's old certificate (the previous CA is kept).
  cluster_kubeconfig "$SERVER" "$set/server-ca.crt" >"$C/cluster.kubeconfig"
  "$KJOIN" cluster-info sign --kubeconfig "$C/cluster.kubeconfig" --token-file "$C/token" >"$C/www/cluster-info"
  caset_join "${pins% *}" || return 1
  serve_set "$C" "$set/server-ca.crt" "$set/server-ca.key" restart || return 1
  caset_join "${pins% *}" || return 1
  kubectl --kubeconfig "$T/kubelet.conf" get --raw "$CLUSTER_INFO_PATH" >/dev/null || fail "kubectl after" || return 1
  # A node that joined before the rotation trusts the new server by the root.
  kubectl --kubeconfig "$T/before.conf" get --raw "$CLUSTER_INFO_PATH" >/dev/null || fail "kubectl, old kubeconfig" || return 1
  # Another organisation's root pin is refused.
  bad=$T/other; new_org "$bad" || return 1
  caset_join "$(root_pin "$bad/org.crt")" 4 || return 1
  err_has "no certificate of the CA bundle matches"
}

# sums DIR: every file of a set and its bytes, to show that nothing changed.
sums() { (cd "$1" && find . -type f ! -name .kjoin-certs.lock | sort | xargs sha256sum); }

t_caset_kubeadm_layout_and_rotation() {
  ORG=$T/org C=$T/cluster
  local d=$T/etc pins f
  new_org "$ORG" || return 1
  caset "$d" kubeadm "$ORG" --intermediate -o json || return 1
  pins=$(pins_of "$OUT")
  jq -e '([.cas[].file] == ["pki/ca.crt","pki/front-proxy-ca.crt","pki/etcd/ca.crt"]) and ([.cas[].bundle] == [1,1,1])
         and .bundleFile == "pki/ca-bundle.crt" and .bundle == 3' "$OUT" >/dev/null || fail "JSON: $(cat "$OUT")" || return 1
  for f in ca front-proxy-ca etcd/ca; do
    # One certificate per CA file: kube-controller-manager's signer takes no more.
    [ "$(grep -c 'BEGIN CERTIFICATE' "$d/pki/$f.crt")" = 1 ] || fail "$f.crt is a bundle" || return 1
    openssl verify -x509_strict -CAfile "$ORG/org.crt" -untrusted "$d/pki/ca-bundle.crt" "$d/pki/$f.crt" >/dev/null 2>&1 \
      || fail "$f.crt does not verify to the root" || return 1
    key_matches "$d/pki/$f.crt" "$d/pki/$f.key" || fail "$f.key" || return 1
    openssl x509 -in "$d/pki/$f.crt" -noout -ext basicConstraints | grep -q "pathlen:0" || fail "$f: no pathlen:0" || return 1
  done
  cmp -s <(first_cert "$d/pki/ca-bundle.crt") <(first_cert "$d/pki/ca.crt") || fail "ca-bundle.crt starts elsewhere" || return 1
  [ "$(openssl pkey -in "$d/pki/sa.key" -pubout)" = "$(cat "$d/pki/sa.pub")" ] || fail "sa.pub is not sa.key's" || return 1
  cp "$d/pki/sa.pub" "$T/sa.pub.before"
  serve_set "$C" "$d/pki/ca-bundle.crt" "$d/pki/ca.key" || return 1
  caset_join "${pins#* }" || return 1
  caset "$d" kubeadm "$ORG" --intermediate --rotate || return 1
  out_has "rotated to a new kubeadm set" || return 1
  out_has "${pins#* }" || return 1
  [ "$(grep -c 'BEGIN PUBLIC KEY' "$d/pki/sa.pub")" = 2 ] || fail "sa.pub holds $(grep -c 'BEGIN PUBLIC KEY' "$d/pki/sa.pub") keys" || return 1
  [ "$(openssl pkey -in "$d/pki/sa.key" -pubout)" = "$(openssl pkey -pubin -in "$d/pki/sa.pub")" ] || fail "new sa.pub first" || return 1
  grep -qF "$(sed -n 2p "$T/sa.pub.before")" "$d/pki/sa.pub" || fail "the previous service-account key is gone" || return 1
  [ "$(grep -c 'BEGIN CERTIFICATE' "$d/pki/ca-bundle.crt")" = 5 ] || fail "ca-bundle.crt lacks the previous CA" || return 1
  [ "$(grep -c 'BEGIN CERTIFICATE' "$d/pki/ca.crt")" = 1 ] || fail "ca.crt became a bundle" || return 1
  serve_set "$C" "$d/pki/ca-bundle.crt" "$d/pki/ca.key" restart || return 1
  caset_join "${pins#* }" || return 1
  caset_join "${pins% *}" || return 1
  # A second rotation keeps one previous generation, not all.
  caset "$d" kubeadm "$ORG" --intermediate --rotate || return 1
  [ "$(grep -c 'BEGIN CERTIFICATE' "$d/pki/ca-bundle.crt")" = 5 ] || fail "ca-bundle.crt grows" || return 1
  [ "$(grep -c 'BEGIN PUBLIC KEY' "$d/pki/sa.pub")" = 2 ] || fail "sa.pub grows" || return 1
  # A bundle file that is not the CA's is refused.
  first_cert "$d/pki/front-proxy-ca.crt" >"$d/pki/ca-bundle.crt"
  CASET_RC=2 caset "$d" kubeadm "$ORG" --rotate || return 1
  err_has "ca-bundle.crt does not start with the CA of"
}

t_caset_idempotent_and_refusals() {
  ORG=$T/org
  local d=$T/tls other=$T/other sums0
  new_org "$ORG" || return 1
  caset "$d" k3s "$ORG" --intermediate || return 1
  sums0=$(sums "$d")
  # A re-run changes nothing.
  caset "$d" k3s "$ORG" --intermediate || return 1
  out_has "already holds the k3s set" || return 1
  [ "$(sums "$d")" = "$sums0" ] || fail "a re-run rewrote files" || return 1
  local CASET_RC=2
  # A typo is an error, not another layout.
  caset "$T/x" k3 "$ORG" || return 1
  err_has 'k3s or kubeadm, not "k3"' || return 1
  # Another root: refused, nothing written.
  new_org "$other" || return 1
  caset "$d" k3s "$other" --rotate || return 1
  err_has "is not under the root" || return 1
  caset "$d" k3s "$other" || return 1
  [ "$(sums "$d")" = "$sums0" ] || fail "a refused run wrote" || return 1
  # Nothing to rotate.
  caset "$T/empty" k3s "$ORG" --rotate || return 1
  err_has "holds no k3s set to rotate" || return 1
  # An incomplete set.
  cp -a "$d" "$T/partial" && rm "$T/partial/etcd/peer-ca.key"
  caset "$T/partial" k3s "$ORG" || return 1
  err_has "but not etcd/peer-ca.key" || return 1
  # A key that is not the CA's.
  cp -a "$d" "$T/swapped" && cp "$d/client-ca.key" "$T/swapped/server-ca.key"
  caset "$T/swapped" k3s "$ORG" --rotate || return 1
  err_has "server-ca.key is not the key of the CA" || return 1
  # A symlink where a key belongs is not followed.
  cp -a "$d" "$T/linked" && rm "$T/linked/server-ca.key" && ln -s "$d/server-ca.key" "$T/linked/server-ca.key"
  caset "$T/linked" k3s "$ORG" --rotate || return 1
  err_has "a symlink is not followed" || return 1
  # A key readable by others.
  cp -a "$d" "$T/open" && chmod 644 "$T/open/client-ca.key"
  caset "$T/open" k3s "$ORG" --rotate || return 1
  err_has "client-ca.key must be owned by this user or root and readable by no one else" || return 1
  # A directory others may write.
  mkdir -m 777 "$T/shared" && chmod 777 "$T/shared"
  caset "$T/shared" k3s "$ORG" || return 1
  err_has "writable by group or others" || return 1
  # The root file must end with a self-signed root; the key must be its.
  mkca "$ORG" sub org
  caset "$T/n1" k3s "$ORG" --root-cert "$ORG/sub.crt" --root-key "$ORG/sub.key" || return 1
  err_has "which is not self-signed" || return 1
  caset "$T/n2" k3s "$ORG" --root-key "$other/org.key" || return 1
  err_has "is not the key of the CA" || return 1
  # An organisation intermediate given with its chain signs; the pin is still the root's.
  cat "$ORG/sub.crt" "$ORG/org.crt" >"$ORG/sub-chain.crt"
  CASET_RC=0 caset "$T/n3" k3s "$ORG" --root-cert "$ORG/sub-chain.crt" --root-key "$ORG/sub.key" -o json || return 1
  jq -e --arg p "$(root_pin "$ORG/org.crt")" '.pins.rootSha256 == $p and .signer == "CN=sub"' "$OUT" >/dev/null \
    || fail "JSON: $(cat "$OUT")" || return 1
  # A root key others can read is used, with a warning.
  chmod 640 "$ORG/sub.key"
  CASET_RC=0 caset "$T/n9" k3s "$ORG" --root-cert "$ORG/sub-chain.crt" --root-key "$ORG/sub.key" || return 1
  err_has "WARNING: the root's key $ORG/sub.key is readable by group or others" || return 1
  # An encrypted key is refused without a prompt.
  openssl pkey -in "$ORG/org.key" -aes256 -passout pass:pw -out "$ORG/enc.key" 2>/dev/null
  timeout 10 "$KJOIN" certs ca-set --dir "$T/n4" --layout k3s --root-cert "$ORG/org.crt" --root-key "$ORG/enc.key" \
    </dev/null >/dev/null 2>"$T/enc.err"
  [ $? = 2 ] && grep -q "encrypted key must be decrypted" "$T/enc.err" || fail "encrypted key: $(cat "$T/enc.err")" || return 1
  # Lifetimes past the issuer's are refused; the default fits.
  caset "$T/n5" k3s "$ORG" --ca-duration 100000h || return 1
  err_has "would outlive its issuer" || return 1
  caset "$T/n6" k3s "$ORG" --intermediate-duration 1000h || return 1
  err_has "needs an intermediate" || return 1
  [ ! -e "$T/n5/server-ca.crt" ] || fail "a refused run wrote" || return 1
  # A root that may not sign sub-CAs cannot take an intermediate.
  openssl req -x509 -new -key "$ORG/org.key" -subj "/CN=org0" -days 3650 -out "$ORG/org0.crt" \
    -addext basicConstraints=critical,CA:TRUE,pathlen:0 -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
  caset "$T/n7" k3s "$ORG" --root-cert "$ORG/org0.crt" --intermediate || return 1
  err_has "path length" || return 1
  kj 2 certs ca-set --dir "$T/n8" --layout k3s --root-cert "$ORG/org.crt" || return 1
  err_has "needs --dir, --layout, --root-cert and --root-key" || return 1
  kj 2 certs ca-set --dir "$T/n8" --layout k3s --root-cert "$ORG/org.crt" --root-key "$ORG/org.key" --only ca
}

t_caset_killed_runs_are_finished() {
  ORG=$T/org
  local d=$T/tls sums0
  new_org "$ORG" || return 1
  caset "$d" k3s "$ORG" --intermediate || return 1
  sums0=$(sums "$d")
  # Killed once the new set is staged: nothing in place has changed; the next run puts it in place.
  KJOIN_CERTS_CRASH_AT=ca-set-staged CASET_RC=99 caset "$d" k3s "$ORG" --intermediate --rotate || return 1
  [ "$(sums "$d" | grep -v kjoin-ca-set)" = "$sums0" ] || fail "a file changed before the moves" || return 1
  caset "$d" k3s "$ORG" --intermediate --rotate || return 1
  out_has "finished the k3s set" || return 1
  [ ! -e "$d/.kjoin-ca-set.new" ] || fail "the stage is left" || return 1
  [ "$(grep -c BEGIN "$d/server-ca.crt")" = 5 ] || fail "not the rotated set" || return 1
  set_ok "$d" || return 1
  # Killed half-way through the moves: a mix on disk, finished by a plain run.
  KJOIN_CERTS_CRASH_AT=ca-set-moving CASET_RC=99 caset "$d" k3s "$ORG" --intermediate --rotate || return 1
  if set_ok "$d" 2>/dev/null; then fail "expected server-ca.crt moved, its key not"; return 1; fi
  caset "$d" k3s "$ORG" || return 1
  out_has "finished the k3s set" || return 1
  set_ok "$d" || return 1
  # A stage without its mark (killed while staging) is discarded.
  sums0=$(sums "$d")
  mkdir -m 700 "$d/.kjoin-ca-set.new" && echo junk >"$d/.kjoin-ca-set.new/0"
  caset "$d" k3s "$ORG" || return 1
  out_has "already holds" || return 1
  [ ! -e "$d/.kjoin-ca-set.new" ] && [ "$(sums "$d")" = "$sums0" ] || fail "the unmarked stage was used" || return 1
}
