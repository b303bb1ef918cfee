# kjoin certs: time travel through a CA's life, rules, user CAs, out-of-band
# changes, kills between writes, the lock (sourced by run.sh).

H=3600
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
# Small lifetimes so a whole CA life fits in a few runs, one every 100h (the minimum):
# CA 1000h (window 300h), node and client 240h (window 40h).
small_pki() {
  kj 0 certs init --dir "$1" --now "$(iso "$2")" --ca-duration 1000h --ca-expiry-window 300h \
    --node-duration 240h --node-expiry-window 40h --client-duration 240h --client-expiry-window 40h \
    --minimum-duration 100h "${@:3}"
}
# verify_at DIR TIME: every leaf verifies against the bundle at TIME, and every key matches.
verify_at() {
  local d=$1 t=$2 f
  openssl verify -attime "$t" -CAfile "$d/ca.crt" "$d/node.crt" "$d/client.root.crt" >/dev/null 2>&1 \
    || fail "openssl verify at $(iso "$t") fails" || return 1
  for f in node client.root ca; do
    [ "$(openssl x509 -in "$d/$f.crt" -noout -pubkey | sha256sum)" = "$(openssl pkey -in "$d/$f.key" -pubout | sha256sum)" ] \
      || fail "$f.key does not match $f.crt" || return 1
  done
}
bundle_count() { grep -c 'BEGIN CERTIFICATE' "$1/ca.crt"; }
# rotate_to DIR T0 FROM TO: runs the job every 100h from FROM to TO (hours after T0),
# each with the exit code the schedule predicts, verifying the set after each run.
declare -A WANT=([100]=0 [200]=10 [300]=0 [400]=10 [500]=0 [600]=10 [700]=10 [800]=10 [900]=0 [1000]=10 \
                 [1100]=0 [1200]=10 [1300]=0 [1400]=10 [1500]=10)
rotate_to() {
  local d=$1 t0=$2 step
  for ((step = $3; step <= $4; step += 100)); do
    kj "${WANT[$step]}" certs rotate --dir "$d" --now "$(iso $((t0 + step * H)))" || { fail "run at ${step}h"; return 1; }
    cp "$OUT" "$T/rotate.$step"
    verify_at "$d" $((t0 + step * H)) || { fail "after the run at ${step}h"; return 1; }
  done
}
issuer_of() { openssl x509 -in "$1" -noout -issuer; }

t_certs_time_travel() {
  local d=$T/pki t0=1700000000
  small_pki "$d" $t0 || return 1
  [ "$(stat -c %a "$d/..data/ca.key")" = 600 ] && [ "$(stat -c %a "$d/..data/node.key")" = 600 ] || fail "key modes" || return 1
  verify_at "$d" $t0 || return 1
  rotate_to "$d" $t0 100 600 || return 1
  grep -q 'nothing to do' "$T/rotate.100" || fail "100h did something" || return 1
  grep -q 'node: issued (due' "$T/rotate.200" || fail "200h: node not reissued" || return 1
  local old_ca; old_ca=$(issuer_of "$d/node.crt")
  rotate_to "$d" $t0 700 700 || return 1
  grep -q 'ca: rotated' "$T/rotate.700" && grep -q 'node: marked needsRegeneration' "$T/rotate.700" \
    || fail "700h: $(cat "$T/rotate.700")" || return 1
  [ "$(bundle_count "$d")" = 2 ] || fail "bundle after the CA rotation" || return 1
  [ "$(issuer_of "$d/node.crt")" = "$old_ca" ] || fail "leaves must wait for the next run" || return 1
  kj 0 certs check-expiration --dir "$d" --now "$(iso $((t0 + 750 * H)))" -o json || return 1
  jq -e '.rotationDue and ([.certificates[].needsRegeneration] | all)' "$OUT" >/dev/null || fail "check: $(cat "$OUT")" || return 1
  rotate_to "$d" $t0 800 900 || return 1
  grep -q 'needsRegeneration after a CA rotation' "$T/rotate.800" || fail "800h: $(cat "$T/rotate.800")" || return 1
  [ "$(issuer_of "$d/node.crt")" != "$old_ca" ] || fail "leaves still under the old CA" || return 1
  [ "$(bundle_count "$d")" = 2 ] || fail "the old CA went too early" || return 1
  rotate_to "$d" $t0 1000 1500 || return 1
  grep -q 'dropped an expired CA' "$T/rotate.1000" || fail "1000h: $(cat "$T/rotate.1000")" || return 1
  grep -q 'ca: rotated' "$T/rotate.1400" || fail "1400h: second CA rotation missing" || return 1
  [ "$(bundle_count "$d")" = 2 ] || fail "bundle after the second rotation" || return 1
  # A dry run changes nothing and exits 0.
  local before; before=$(readlink "$d/..data")
  kj 0 certs rotate --dir "$d" --now "$(iso $((t0 + 1600 * H)))" --dry-run || return 1
  [ "$(readlink "$d/..data")" = "$before" ] || fail "dry run wrote"
}

# serve_pki DIR: nginx with DIR's node certificate, cluster-info with DIR's CA bundle.
serve_pki() {
  local d=$1
  C=$T/srv; mkdir -p "$C/www"; PORT=$("$TOOLS/freeport")
  "$KJOIN" token generate >"$C/token"; SECRETS+=("$(cut -d. -f2 "$C/token")")
  cluster_kubeconfig "https://127.0.0.1:$PORT" "$d/ca.crt" >"$C/cluster.kubeconfig"
  "$KJOIN" cluster-info sign --kubeconfig "$C/cluster.kubeconfig" --token-file "$C/token" >"$C/www/cluster-info"
  start_nginx "$C" "$PORT" "$d/node.crt" "$d/node.key"
}
pki_join() { kj "$1" join --skip-phases preflight,kubelet-start "127.0.0.1:$PORT" --token-file "$C/token" --kubeconfig-out "$T/j.conf" --force "${@:2}"; }

t_certs_join_while_both_roots_in_bundle() {
  local now t0 d old new
  now=$(date +%s)
  # Phase A: just after the CA rotation, leaves still from the old CA.
  d=$T/a; t0=$((now - 750 * H))
  small_pki "$d" $t0 || return 1
  old=$(root_pin "$d/ca.crt")
  rotate_to "$d" $t0 100 700 || return 1
  new=$("$KJOIN" ca-hash --only root-sha256 "$d/ca.crt" | head -1)
  [ "$new" != "$old" ] || fail "no new root" || return 1
  serve_pki "$d" || return 1
  pki_join 0 --discovery-token-ca-cert-hash "$old" || return 1
  pki_join 0 --discovery-token-ca-cert-hash "$new,$old" -o json || return 1
  jq -e '(.caCertificates | length) == 2' "$OUT" >/dev/null || fail "both roots written" || return 1
  pki_join 4 --discovery-token-ca-cert-hash "$new" || return 1
  stop_nginx "$C"
  # Phase B: the next run, leaves reissued under the new CA, old CA still in the bundle.
  d=$T/b; t0=$((now - 850 * H))
  small_pki "$d" $t0 || return 1
  old=$(root_pin "$d/ca.crt")
  rotate_to "$d" $t0 100 800 || return 1
  new=$("$KJOIN" ca-hash --only root-sha256 "$d/ca.crt" | head -1)
  serve_pki "$d" || return 1
  pki_join 0 --discovery-token-ca-cert-hash "$new" || return 1
  pki_join 0 --discovery-token-ca-cert-hash "$old,$new" || return 1
  pki_join 4 --discovery-token-ca-cert-hash "$old"
}

t_certs_rules_checked_before_writing() {
  kj 2 certs init --dir "$T/p1" --ca-expiry-window 100h --minimum-duration 200h --ca-duration 1000h || return 1
  err_has "the CA expiry window (100h0m0s) must not be less than the minimum duration (200h0m0s): short by 100h0m0s" || return 1
  kj 2 certs init --dir "$T/p2" --node-duration 200h --node-expiry-window 150h --minimum-duration 100h || return 1
  err_has "node duration minus its expiry window (50h0m0s)" || return 1
  [ ! -e "$T/p1" ] && [ ! -e "$T/p2" ] || fail "wrote before validating" || return 1
  kj 0 certs init --dir "$T/p3" --key-type ed25519 || return 1
  kj 2 certs init --dir "$T/p3" || return 1
  err_has "already holds a kjoin PKI" || return 1
  kj 0 certs init --dir "$T/p4" --key-type rsa2048 --user alice --san db.example.com --san 10.0.0.7 || return 1
  openssl x509 -in "$T/p4/node.crt" -noout -ext subjectAltName | grep -q 'DNS:db.example.com, IP Address:10.0.0.7' \
    || fail "SANs" || return 1
  [ "$(openssl x509 -in "$T/p4/client.alice.crt" -noout -subject)" = "subject=CN = alice" ] || fail "client CN" || return 1
  openssl verify -CAfile "$T/p3/ca.crt" "$T/p3/node.crt" >/dev/null || fail "ed25519 chain" || return 1
  kj 0 certs issue client --dir "$T/p4" --user bob --group system:masters --group dev || return 1
  [ "$(openssl x509 -in "$T/p4/client.bob.crt" -noout -subject)" = "subject=CN = bob, O = system:masters, O = dev" ] \
    || fail "groups: $(openssl x509 -in "$T/p4/client.bob.crt" -noout -subject)" || return 1
  kj 0 certs issue node --dir "$T/p4" --name db2 --san db2.example.com || return 1
  openssl verify -CAfile "$T/p4/ca.crt" "$T/p4/node.db2.crt" "$T/p4/client.bob.crt" >/dev/null || fail "issued certs" || return 1
  kj 2 certs issue node --dir "$T/p4" || return 1
  kj 2 certs rotate --dir "$T/none" || return 1
  kj 2 certs rotate --dir "$T/p4" --now yesterday
}

t_certs_user_provided_intermediate() {
  local x=$T/ext
  mkdir -p "$x"; mkca "$x" extroot; mkca "$x" extinter extroot
  cat "$x/extinter.crt" "$x/extroot.crt" >"$x/chain.crt"
  kj 0 certs init --dir "$T/pki" --ca-cert "$x/chain.crt" --ca-key "$x/extinter.key" || return 1
  [ "$(bundle_count "$T/pki")" = 2 ] || fail "chain not kept" || return 1
  openssl verify -CAfile "$x/extroot.crt" -untrusted "$T/pki/ca.crt" "$T/pki/node.crt" >/dev/null || fail "chain to the external root" || return 1
  # Near its end (the external CA lives 3650 days): a warning, never a new CA;
  # the leaves, due by then, are reissued but cut at the CA's end (exit 10).
  kj 10 certs rotate --dir "$T/pki" --now "$(iso $(( $(date +%s) + 3640 * 86400 )))" || return 1
  out_has "the CA you provided expires" || return 1
  [ "$(bundle_count "$T/pki")" = 2 ] || fail "the user's CA was replaced" || return 1
  out_has "shortened to end with its CA" || return 1
  kj 0 certs manifests --dir "$T/pki" --namespace db --prefix crdb || return 1
  jq -e '[.items[].metadata.name] == ["crdb-node-secret", "crdb-client-secret"]' "$OUT" >/dev/null \
    || fail "no CA secret for a user CA: $(jq -c '[.items[].metadata.name]' "$OUT")"
}

t_certs_manifests() {
  kj 0 certs init --dir "$T/pki" || return 1
  kj 0 certs manifests --dir "$T/pki" --namespace crdb --prefix cockroachdb || return 1
  jq -e '.kind == "List" and ([.items[] | .metadata.name] == ["cockroachdb-ca-secret", "cockroachdb-node-secret", "cockroachdb-client-secret"])
         and ([.items[] | .type] == ["Opaque", "kubernetes.io/tls", "kubernetes.io/tls"])
         and ([.items[] | .metadata.namespace] | unique == ["crdb"])
         and ([.items[] | .metadata.annotations["managed-by"]] | unique == ["kjoin"])
         and (.items[1].data | keys == ["ca.crt", "tls.crt", "tls.key"]) and (.items[0].data | keys == ["ca.crt", "ca.key"])' "$OUT" >/dev/null \
    || fail "manifests: $(jq -c '[.items[] | {n: .metadata.name, t: .type, k: (.data | keys)}]' "$OUT")" || return 1
  jq -r '.items[1].data["tls.crt"]' "$OUT" | base64 -d | openssl x509 -noout -subject | grep -q 'CN = node' || fail "tls.crt"
}

# A name swapped outside kjoin is tampering, never a CA to adopt; adopting one is explicit.
t_certs_out_of_band_change_refused_adopt_ca_explicit() {
  kj 0 certs init --dir "$T/pki" --now 2026-01-01T00:00:00Z || return 1
  mkca "$T" foreign
  local before; before=$(cat "$T/pki/ca.crt" | sha256sum)
  cp "$T/foreign.crt" "$T/pki/ca.crt.new"; mv "$T/pki/ca.crt.new" "$T/pki/ca.crt"
  kj 2 certs rotate --dir "$T/pki" --now 2026-01-02T00:00:00Z || return 1
  err_has "ca.crt is not kjoin's link into the current generation (it is a regular file)" || return 1
  kj 2 certs check-expiration --dir "$T/pki" || return 1
  # Swapped symlinks (ca.crt -> the key) are tampering too.
  rm "$T/pki/ca.crt"; ln -s ..data/ca.key "$T/pki/ca.crt"
  kj 2 certs rotate --dir "$T/pki" --now 2026-01-02T00:00:00Z || return 1
  err_has "a symlink to ..data/ca.key" || return 1
  rm "$T/pki/ca.crt"; ln -s ..data/ca.crt "$T/pki/ca.crt"
  [ "$(cat "$T/pki/ca.crt" | sha256sum)" = "$before" ] || fail "restoring the link did not restore the CA" || return 1
  kj 0 certs rotate --dir "$T/pki" --now 2026-01-02T00:00:00Z || return 1
  # adopt-ca: the new CA first, the old one kept until the leaves are reissued under it.
  chmod 600 "$T/foreign.key"
  kj 0 certs adopt-ca --dir "$T/pki" --ca-cert "$T/foreign.crt" --ca-key "$T/foreign.key" --now 2026-01-02T00:00:00Z || return 1
  out_has "adopted" && out_has "marked needsRegeneration" || return 1
  [ "$(bundle_count "$T/pki")" = 2 ] || fail "ca.crt should hold the adopted and the old CA" || return 1
  kj 10 certs rotate --dir "$T/pki" --now 2026-01-03T00:00:00Z || return 1
  openssl verify -CAfile "$T/foreign.crt" "$T/pki/node.crt" >/dev/null || fail "leaves not reissued under the adopted CA" || return 1
  chmod 664 "$T/foreign.key"
  kj 2 certs adopt-ca --dir "$T/pki" --ca-cert "$T/foreign.crt" --ca-key "$T/foreign.key" || return 1
  err_has "writable by group or others" || return 1
  kj 2 certs adopt-ca --dir "$T/pki" --ca-cert "$T/foreign.crt" || return 1
}

# The store trusts nothing it did not write: another user's directory or files, symlinks it did not make.
t_certs_store_checks_owners_modes_and_links() {
  kj 0 certs init --dir "$T/pki" --now 2026-01-01T00:00:00Z || return 1
  chmod 777 "$T/pki"
  kj 2 certs rotate --dir "$T/pki" || return 1
  err_has "writable by group or others (mode 0777)" || return 1
  # Sticky changes nothing for a store: others could still create names in it.
  chmod 1777 "$T/pki"
  kj 2 certs rotate --dir "$T/pki" || return 1
  err_has "writable by group or others (mode 1777)" || return 1
  chmod 700 "$T/pki"
  # A generation-looking symlink to a directory that must survive the cleanup of leftovers.
  mkdir -p "$T/precious"; echo keep >"$T/precious/file"
  ln -s "$T/precious" "$T/pki/..gen-1-deadbeef"
  mkdir "$T/pki/..gen-2-notkjoin"
  kj 0 certs rotate --dir "$T/pki" --now 2026-01-02T00:00:00Z || return 1
  [ "$(cat "$T/precious/file")" = keep ] || fail "a symlinked directory was emptied" || return 1
  [ -L "$T/pki/..gen-1-deadbeef" ] && [ -d "$T/pki/..gen-2-notkjoin" ] || fail "removed what kjoin did not make" || return 1
  rm "$T/pki/..gen-1-deadbeef"; rmdir "$T/pki/..gen-2-notkjoin"
  # The lock file is never followed.
  rm "$T/pki/.kjoin-certs.lock"; ln -s "$T/precious/file" "$T/pki/.kjoin-certs.lock"
  kj 2 certs rotate --dir "$T/pki" || return 1
  err_has "a symlink: remove it" || return 1
  rm "$T/pki/.kjoin-certs.lock"
  # The store directory itself is not followed either.
  ln -s "$T/pki" "$T/pki-link"
  kj 2 certs rotate --dir "$T/pki-link" || return 1
  err_has "a symlink is not followed" || return 1
  # A key readable by others is reported, and rewritten 0600.
  chmod 644 "$T/pki/"..data/node.key
  kj 0 certs check-expiration --dir "$T/pki" --now 2026-01-02T00:00:00Z || return 1
  kj 10 certs rotate --dir "$T/pki" --now 2027-06-01T00:00:00Z || return 1
  out_has "node.key is readable by group or others (mode 0644)" || return 1
  [ "$(stat -L -c %a "$T/pki/node.key")" = 600 ] || fail "the key was not rewritten 0600" || return 1
  # Another (non-root) user's directory is refused: the service-user scenario.
  # (Debian's own unprivileged user: the suite creates no account on the machine.)
  # (in a directory the service user can reach; the suite's own is private)
  local open; open=$(mktemp -d /tmp/kjoin-theirs.XXXXXX); chmod 755 "$open"
  cp -a "$T/pki" "$open/theirs"; chown -R nobody "$open/theirs"
  # The service user plants a generation-looking link to a directory root must not empty.
  setpriv --reuid nobody --regid nogroup --clear-groups ln -s "$T/precious" "$open/theirs/..gen-3-0badcafe" ||
    { fail "setpriv"; rm -rf "$open"; return 1; }
  local rc=0
  kj 2 certs rotate --dir "$open/theirs" --now 2027-06-01T00:00:00Z &&
    err_has "is owned by uid $(id -u nobody), not by this user (uid 0) or root" &&
    kj 2 certs init --dir "$open/theirs/sub" || rc=1
  rm -rf "$open"
  [ "$(cat "$T/precious/file")" = keep ] || fail "root followed the service user's link" || return 1
  return $rc
}

# The state file is untrusted input: each malformed shape is a clear error naming the field, never a crash.
t_certs_state_file_malformed_shapes() {
  kj 0 certs init --dir "$T/pki" --now 2026-01-01T00:00:00Z || return 1
  local state; state=$(readlink -f "$T/pki/kjoin-certs.json")
  cp "$state" "$T/good.json"
  local case expect
  while IFS='|' read -r case expect; do
    jq "$case" "$T/good.json" >"$state"
    kj 2 certs rotate --dir "$T/pki" --now 2026-01-02T00:00:00Z || { fail "case $case"; return 1; }
    err_has "$expect" || { fail "case $case"; return 1; }
  done <<'CASES'
.certificates.node.sans = [null]|certificates.node.sans holds an entry that is not a DNS name
.certificates.node.sans = "x"|certificates.node.sans must be a list
.certificates.x = .certificates.node|certificates.x is not a name kjoin gives
.certificates["../outside"] = .certificates.node|is not a name kjoin gives
.settings.keyType = "rsa1024"|settings.keyType is not a key type kjoin makes
.settings.nodeDuration = -5|settings.nodeDuration is out of range
.settings.caDuration = "87600h"|settings.caDuration must be a whole number
.certificates.node.fingerprint = 7|certificates.node.fingerprint must be a string
del(.certificates.ca)|certificates.ca is missing
.version = 2|version is not 1
.certificates.node.managedBy = "user"|may be user only for the CA
CASES
  printf '{"version":1}\0garbage' >"$state"
  kj 2 certs rotate --dir "$T/pki" || return 1
  err_has "not one JSON object" || return 1
  [ ! -e "$T/outside.crt" ] || fail "wrote outside the directory"
}

t_certs_sans_are_names_not_config() {
  kj 2 certs init --dir "$T/a" --san 'a.example,IP:10.9.9.9,DNS:*.evil' || return 1
  err_has "is neither a DNS name nor an IP address" || return 1
  kj 2 certs init --dir "$T/b" --san '*.evil' || return 1
  local many=() i
  for i in $(seq 14); do many+=(--san "node-$i.example"); done
  kj 2 certs init --dir "$T/c" "${many[@]}" || return 1
  err_has "at most 13" || return 1
  [ ! -e "$T/a" ] && [ ! -e "$T/c/kjoin-certs.json" ] || fail "a refused init wrote" || return 1
  kj 0 certs init --dir "$T/d/e/f" --san db.example --san 10.9.9.9 --san fd00::1 || return 1
  [ "$(stat -c %a "$T/d/e")" = 700 ] || fail "parents not created 0700" || return 1
  openssl x509 -in "$T/d/e/f/node.crt" -noout -ext subjectAltName | tail -1 >"$T/san"
  grep -q "DNS:db.example, IP Address:10.9.9.9, IP Address:FD00:0:0:0:0:0:0:1" "$T/san" || fail "$(cat "$T/san")"
}

t_certs_not_yet_valid_is_due() {
  kj 0 certs init --dir "$T/pki" --now 2026-06-01T00:00:00Z || return 1
  kj 0 certs check-expiration --dir "$T/pki" --now 2026-05-01T00:00:00Z -o json || return 1
  jq -e '[.certificates[] | select(.notYetValid and .rotationDue)] | length == 2' "$OUT" >/dev/null || fail "$(cat "$OUT")" || return 1
  kj 10 certs rotate --dir "$T/pki" --now 2026-05-01T00:00:00Z || return 1
  out_has "not valid yet" || return 1
}

t_certs_init_killed_is_finished_by_the_next_init() {
  local point
  for point in files swap; do
    KJOIN_CERTS_CRASH_AT=$point "$KJOIN" certs init --dir "$T/pki-$point" >/dev/null 2>&1
    [ $? -eq 99 ] || fail "no crash at $point" || return 1
    kj 0 certs init --dir "$T/pki-$point" || { fail "init after a kill at $point"; return 1; }
    kj 0 certs check-expiration --dir "$T/pki-$point" || return 1
    [ "$(ls -d "$T/pki-$point"/..gen-* | wc -l)" = 1 ] || fail "leftovers after $point" || return 1
  done
}

# Readers see one generation, even while rotations switch them.
t_certs_readers_during_rotations() {
  local t0 i; t0=$(date -u -d 2026-01-01 +%s)
  small_pki "$T/pki" "$t0" || return 1
  (for i in $(seq 40); do "$KJOIN" certs check-expiration --dir "$T/pki" -o json >/dev/null 2>"$T/reader.err" || { echo bad >>"$T/bad"; cat "$T/reader.err" >>"$T/bad"; }; done) &
  local reader=$!
  for i in $(seq 12); do
    "$KJOIN" certs rotate --dir "$T/pki" --now "$(iso $((t0 + i * 100 * H)))" >/dev/null 2>&1
  done
  wait "$reader"
  [ ! -s "$T/bad" ] || fail "a reader failed: $(head -3 "$T/bad")"
}

t_certs_killed_between_writes_leaves_old_or_new() {
  local point d fp_before fp_after
  for point in files swap cleanup; do
    d=$T/kill-$point
    kj 0 certs init --dir "$d" --now 2026-01-01T00:00:00Z --node-duration 240h --node-expiry-window 40h \
      --client-duration 240h --client-expiry-window 40h --minimum-duration 100h || return 1
    fp_before=$(cat "$d/ca.crt" "$d/node.crt" "$d/node.key" "$d/client.root.crt" | sha256sum)
    KJOIN_CERTS_CRASH_AT=$point "$KJOIN" certs rotate --dir "$d" --now 2026-01-10T00:00:00Z >/dev/null 2>&1
    [ $? -eq 99 ] || fail "no crash at $point" || return 1
    verify_at "$d" "$(date -u -d 2026-01-10 +%s)" || { fail "inconsistent after a kill at $point"; return 1; }
    fp_after=$(cat "$d/ca.crt" "$d/node.crt" "$d/node.key" "$d/client.root.crt" | sha256sum)
    case $point in
      files|swap) [ "$fp_after" = "$fp_before" ] || fail "kill at $point: not the old set" || return 1 ;;
      cleanup) [ "$fp_after" != "$fp_before" ] || fail "kill at $point: not the new set" || return 1 ;;
    esac
    # The next run finishes the work (or finds nothing to do) and leaves one generation.
    "$KJOIN" certs rotate --dir "$d" --now 2026-01-10T00:00:00Z >/dev/null 2>&1
    verify_at "$d" "$(date -u -d 2026-01-10 +%s)" || return 1
    [ "$(ls -d "$d"/..gen-* | wc -l)" = 1 ] || fail "old generations left after $point" || return 1
  done
}

t_certs_lock_prevents_interleaving() {
  kj 0 certs init --dir "$T/pki" || return 1
  flock "$T/pki/.kjoin-certs.lock" sleep 5 &
  local holder=$! i
  for i in $(seq 50); do  # until the holder really has it
    flock -n "$T/pki/.kjoin-certs.lock" true || break
    sleep 0.1
  done
  kj 1 certs rotate --dir "$T/pki" || return 1
  err_has "another kjoin certs run holds" || return 1
  wait $holder
  kj 0 certs rotate --dir "$T/pki"
}

# ..data naming a generation that is gone is tampering: a clear exit 2, not a retry loop.
t_certs_missing_generation_is_tampering() {
  kj 0 certs init --dir "$T/pki" || return 1
  local g; g=$(readlink "$T/pki/..data")
  mv "$T/pki/$g" "$T/elsewhere"
  kj 2 certs check-expiration --dir "$T/pki" || return 1
  err_has "..data names $g, which does not exist" || return 1
  kj 2 certs rotate --dir "$T/pki" || return 1
  [ -d "$T/elsewhere" ] || fail "the moved generation was touched"
}

# The kill points are the suite's: a release build (make all, as installed)
# does not exit on KJOIN_CERTS_CRASH_AT or kill itself on
# KJOIN_JOIN_CRASH_AT, while the suite's own build does.
t_certs_release_build_has_no_test_hooks() {
  [ -x "${RELEASE_KJOIN:-}" ] || { fail "no release build to run (RELEASE_KJOIN)"; return 1; }
  KJOIN_CERTS_CRASH_AT=files "$RELEASE_KJOIN" certs init --dir "$T/release" >/dev/null 2>&1 ||
    fail "the release build stopped at KJOIN_CERTS_CRASH_AT (exit $?)" || return 1
  KJOIN_CERTS_CRASH_AT=files "$KJOIN" certs init --dir "$T/suite" >/dev/null 2>&1
  [ $? -eq 99 ] || fail "the suite's build has no kill point" || return 1
  ! kill_points "$RELEASE_KJOIN" || fail "the release binary names a kill point"
}
