# kjoin certs with Kubernetes Secrets as the store, on the real apiserver:
# the Secrets' shapes, rotations, compare-and-swap, killed runs, the RFC's
# Job and CronJobs and the RBAC they need.

# cns: a fresh namespace for one test, in $NS; CS: the store flags.
cns() {
  NS=certs-$RANDOM$RANDOM
  kc create namespace "$NS" >/dev/null || { fail "cannot create namespace $NS"; return 1; }
  CS=(--store secrets --kubeconfig "$E2E_ADMIN" --namespace "$NS" --prefix crdb)
}
# rv NAME: the Secret's resourceVersion.
rv() { kc -n "$NS" get secret "$1" -o jsonpath='{.metadata.resourceVersion}'; }
# sdata NAME KEY FILE: a data key of a Secret, decoded into FILE.
sdata() { kc -n "$NS" get secret "$1" -o json | jq -r --arg k "$2" '.data[$k] // empty' | base64 -d >"$3"; }
ann() { kc -n "$NS" get secret "$1" -o json | jq -r --arg k "$2" '.metadata.annotations[$k] // empty'; }
ncerts() { grep -c 'BEGIN CERTIFICATE' "$1"; }
# chains NAME: the leaf of the Secret is signed by a CA in the Secret's own
# ca.crt (validity aside: the tests move the clock years ahead).
chains() {
  sdata "$1" ca.crt "$T/chk.ca" && sdata "$1" tls.crt "$T/chk.crt" &&
    openssl verify -partial_chain -no_check_time -CAfile "$T/chk.ca" "$T/chk.crt" >/dev/null 2>&1 ||
    fail "$1: tls.crt does not chain to its own ca.crt"
}
all_rvs() { echo "$(rv crdb-ca-secret) $(rv crdb-node-secret) $(rv crdb-client-secret)"; }

t_e2e_certs_init_makes_the_selfsigner_secrets() {
  cns || return 1
  kj 0 certs init "${CS[@]}" || return 1
  out_has "ca: created a self-signed CA" || return 1
  kc -n "$NS" get secrets -l app.kubernetes.io/managed-by=kjoin -o json >"$T/s.json" || return 1
  jq -e '[.items[] | {n: .metadata.name, t: .type, k: (.data | keys)}] | sort_by(.n) ==
      [{n: "crdb-ca-secret", t: "Opaque", k: ["ca.crt", "ca.key"]},
       {n: "crdb-client-secret", t: "kubernetes.io/tls", k: ["ca.crt", "tls.crt", "tls.key"]},
       {n: "crdb-node-secret", t: "kubernetes.io/tls", k: ["ca.crt", "tls.crt", "tls.key"]}]' "$T/s.json" >/dev/null ||
    fail "not the self-signer's shapes: $(jq -c '[.items[] | {n: .metadata.name, t: .type}]' "$T/s.json")" || return 1
  jq -e 'all(.items[]; .metadata.annotations["managed-by"] == "kjoin" and .metadata.annotations.needsRegeneration == "False"
      and (.metadata.annotations.creationTime | test("^[0-9-]+T[0-9:]+Z$"))
      and (.metadata.annotations["kjoin.io/data-sha256"] | test("^sha256:[0-9a-f]{64}$"))
      and (.metadata.annotations.duration | test("h")))' "$T/s.json" >/dev/null ||
    fail "the RFC's annotations are missing" || return 1
  [ "$(ann crdb-node-secret duration)" = 8760h0m0s ] || fail "node duration: $(ann crdb-node-secret duration)" || return 1
  chains crdb-node-secret && chains crdb-client-secret || return 1
  sdata crdb-client-secret tls.crt "$T/client.crt"
  openssl x509 -in "$T/client.crt" -noout -subject | grep -q "CN *= *root" || fail "client is not root" || return 1
  # init again (a Helm upgrade runs the Job again): nothing is written.
  local before; before=$(all_rvs)
  kj 0 certs init "${CS[@]}" || return 1
  out_has "already holds a kjoin PKI" || return 1
  [ "$(all_rvs)" = "$before" ] || fail "a second init wrote: $before -> $(all_rvs)" || return 1
  kj 0 certs rotate "${CS[@]}" || return 1
  [ "$(all_rvs)" = "$before" ] || fail "a quiet rotate wrote" || return 1
  kj 0 certs check-expiration "${CS[@]}" -o json || return 1
  jq -e '.rotationDue == false and ([.certificates[].name] | sort) == ["client.root", "node"]' "$OUT" >/dev/null ||
    fail "check-expiration: $(cat "$OUT")" || return 1
  # A further user: its own Secret, in the index, rotated with the rest.
  kj 0 certs issue client "${CS[@]}" --user alice --group devs || return 1
  [ "$(kc -n "$NS" get secret crdb-client-alice-secret -o jsonpath='{.type}')" = kubernetes.io/tls ] ||
    fail "no crdb-client-alice-secret" || return 1
  [ "$(ann crdb-node-secret kjoin.io/certificates)" = client.root,client.alice ] ||
    fail "index: $(ann crdb-node-secret kjoin.io/certificates)" || return 1
  # A user whose Secret name would be invalid: refused before any write.
  before="$(all_rvs) $(rv crdb-client-alice-secret)"
  kj 2 certs issue client "${CS[@]}" --user Bob_2 || return 1
  err_has "cannot be a Secret" || return 1
  [ "$(all_rvs) $(rv crdb-client-alice-secret)" = "$before" ] || fail "a refused issue wrote" || return 1
  # Every request logged with its headers, and no key in any of it.
  kj 10 certs rotate "${CS[@]}" -v 6 --now "$(date -u -d '+360 days' +%Y-%m-%dT%H:%M:%SZ)" || return 1
  out_has "client.alice: issued" || return 1
  grep -q "PUT /api/v1/namespaces/$NS/secrets/crdb-client-alice-secret" "$ERR" || fail "-v 6 shows no request" || return 1
  local key; key=$(kc -n "$NS" get secret crdb-node-secret -o jsonpath='{.data.tls\.key}')
  ! grep -qE "PRIVATE KEY|${key:0:40}" "$OUT" "$ERR" || fail "a private key reached the output" || return 1
  kj 0 certs check-expiration "${CS[@]}" -o json || return 1
  [ "$(jq '.certificates | length' "$OUT")" = 3 ] || fail "check-expiration misses alice" || return 1
}

t_e2e_certs_rotates_leaves_then_the_ca_in_two_runs() {
  cns || return 1
  kj 0 certs init "${CS[@]}" || return 1
  local ca0 node0 client0; read -r ca0 node0 client0 <<<"$(all_rvs)"
  local soon; soon=$(date -u -d '+360 days' +%Y-%m-%dT%H:%M:%SZ)
  kj 10 certs rotate "${CS[@]}" --now "$soon" || return 1
  local ca1 node1 client1; read -r ca1 node1 client1 <<<"$(all_rvs)"
  [ "$ca1" = "$ca0" ] && [ "$node1" != "$node0" ] && [ "$client1" != "$client0" ] ||
    fail "leaves: want node and client rewritten, the CA not: $ca0 $node0 $client0 -> $ca1 $node1 $client1" || return 1
  # The CA inside its window: the bundle first, everywhere; the leaves wait.
  local late; late=$(date -u -d '+9 years' +%Y-%m-%dT%H:%M:%SZ)
  kj 10 certs rotate "${CS[@]}" --now "$late" || return 1
  out_has "ca: rotated" || return 1
  sdata crdb-ca-secret ca.crt "$T/bundle"; sdata crdb-node-secret ca.crt "$T/node.ca"; sdata crdb-node-secret tls.crt "$T/node1.crt"
  [ "$(ncerts "$T/bundle")" = 2 ] && cmp -s "$T/bundle" "$T/node.ca" || fail "the node's ca.crt is not the new bundle" || return 1
  [ "$(ann crdb-node-secret needsRegeneration)" = True ] || fail "node not marked needsRegeneration" || return 1
  chains crdb-node-secret || return 1
  # An hour later: the leaves under the new CA.
  local later; later=$(date -u -d '+9 years 2 hours' +%Y-%m-%dT%H:%M:%SZ)
  kj 10 certs rotate "${CS[@]}" --now "$later" || return 1
  out_has "node: issued (needsRegeneration after a CA rotation)" || return 1
  sdata crdb-node-secret tls.crt "$T/node2.crt"
  [ "$(openssl x509 -in "$T/node1.crt" -noout -issuer)" != "$(openssl x509 -in "$T/node2.crt" -noout -issuer)" ] ||
    fail "the node was not reissued under the new CA" || return 1
  [ "$(ann crdb-node-secret needsRegeneration)" = False ] || fail "needsRegeneration stayed" || return 1
  chains crdb-node-secret && chains crdb-client-secret || return 1
  kj 0 certs rotate "${CS[@]}" --now "$later" || return 1
}

t_e2e_certs_secret_edited_with_kubectl_is_detected() {
  cns || return 1
  kj 0 certs init "${CS[@]}" || return 1
  kc -n "$NS" patch secret crdb-node-secret -p '{"data":{"tls.crt":"eA=="}}' >/dev/null || return 1
  local edited; edited=$(rv crdb-node-secret)
  kj 2 certs rotate "${CS[@]}" || return 1
  err_has "tls.crt holds no certificate (it was changed outside kjoin: restore it)" || return 1
  [ "$(rv crdb-node-secret)" = "$edited" ] || fail "kjoin overwrote the edited Secret" || return 1
  kj 2 certs check-expiration "${CS[@]}" || return 1
  # A valid certificate that is not the one kjoin wrote: reissued, and said.
  local c k
  c=$(kc -n "$NS" get secret crdb-client-secret -o jsonpath='{.data.tls\.crt}')
  k=$(kc -n "$NS" get secret crdb-client-secret -o jsonpath='{.data.tls\.key}')
  kc -n "$NS" patch secret crdb-node-secret -p "{\"data\":{\"tls.crt\":\"$c\",\"tls.key\":\"$k\"}}" >/dev/null || return 1
  kj 0 certs check-expiration "${CS[@]}" -o json || return 1
  jq -e '.certificates[] | select(.name == "node") | .rotationDue' "$OUT" >/dev/null || fail "not due after an edit" || return 1
  kj 10 certs rotate "${CS[@]}" || return 1
  out_has "node: issued (changed outside kjoin)" || return 1
  # A new CA put into the CA Secret: the RFC's new CA case.
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/new.key" -out "$T/new.crt" \
    -subj /CN=their-ca -days 3650 -addext basicConstraints=critical,CA:true 2>/dev/null || return 1
  kc -n "$NS" patch secret crdb-ca-secret \
    -p "{\"data\":{\"ca.crt\":\"$(base64 -w0 "$T/new.crt")\",\"ca.key\":\"$(base64 -w0 "$T/new.key")\"}}" >/dev/null || return 1
  kj 10 certs rotate "${CS[@]}" || return 1
  out_has "adopted as a new CA" || return 1
  out_has "node: marked needsRegeneration" || return 1
  sdata crdb-ca-secret ca.crt "$T/bundle"
  [ "$(ncerts "$T/bundle")" = 2 ] || fail "the adopted bundle lacks the CA the leaves chain to" || return 1
  chains crdb-node-secret || return 1
  # A CA Secret holding a key that is not its certificate's: refused.
  kc -n "$NS" patch secret crdb-ca-secret -p "{\"data\":{\"ca.key\":\"$k\"}}" >/dev/null || return 1
  kj 2 certs rotate "${CS[@]}" || return 1
  err_has "ca.key is not the key of its certificate" || return 1
}

t_e2e_certs_concurrent_rotations_make_one() {
  cns || return 1
  kj 0 certs init "${CS[@]}" || return 1
  local before; before=$(all_rvs)
  local late i pids=(); late=$(date -u -d '+9 years' +%Y-%m-%dT%H:%M:%SZ)
  for i in 1 2 3 4; do
    "$KJOIN" certs rotate "${CS[@]}" --now "$late" -o json >"$T/run.$i" 2>"$T/run.$i.err" &
    pids+=($!)
  done
  wait "${pids[@]}"  # not a bare wait: the control plane runs in the background too
  [ "$(cat "$T"/run.? | jq -s '[.[] | select(.actions | any(startswith("ca: rotated")))] | length')" = 1 ] ||
    fail "not exactly one CA rotation: $(cat "$T"/run.? "$T"/run.?.err)" || return 1
  cat "$T"/run.? | jq -s -e 'all(.[]; .actions | all(startswith("node: issued") | not))' >/dev/null ||
    fail "a racing run reissued the leaves right after the CA rotation" || return 1
  # Each Secret written exactly once: its resourceVersion moved by one write.
  local ca0 node0 client0 ca1 node1 client1
  read -r ca0 node0 client0 <<<"$before"; read -r ca1 node1 client1 <<<"$(all_rvs)"
  kc -n "$NS" get secret crdb-ca-secret -o json | jq -r '.data["ca.crt"]' | base64 -d >"$T/bundle"
  [ "$(ncerts "$T/bundle")" = 2 ] || fail "the bundle holds $(ncerts "$T/bundle") CAs, not 2" || return 1
  [ "$ca1" != "$ca0" ] && [ "$node1" != "$node0" ] && [ "$client1" != "$client0" ] || fail "a Secret was not written" || return 1
  kj 0 certs rotate "${CS[@]}" --now "$late" || return 1
  [ "$(all_rvs)" = "$ca1 $node1 $client1" ] || fail "the set was not settled" || return 1
}

t_e2e_certs_killed_run_is_finished_by_the_next() {
  cns || return 1
  kj 0 certs init "${CS[@]}" || return 1
  local late; late=$(date -u -d '+9 years' +%Y-%m-%dT%H:%M:%SZ)
  KJOIN_CERTS_CRASH_AT=after-ca-secret "$KJOIN" certs rotate "${CS[@]}" --now "$late" >/dev/null 2>&1
  [ $? -eq 99 ] || fail "no kill after the CA Secret" || return 1
  sdata crdb-ca-secret ca.crt "$T/bundle"; sdata crdb-node-secret ca.crt "$T/node.ca"
  [ "$(ncerts "$T/bundle")" = 2 ] && [ "$(ncerts "$T/node.ca")" = 1 ] || fail "not half-rotated" || return 1
  chains crdb-node-secret || return 1
  kj 0 certs check-expiration "${CS[@]}" --now "$late" -o json || return 1
  jq -e '.rotationDue' "$OUT" >/dev/null || fail "a half-rotated set is not due" || return 1
  kj 10 certs rotate "${CS[@]}" --now "$late" || return 1
  out_has "finishing a CA rotation" || return 1
  sdata crdb-node-secret ca.crt "$T/node.ca"; sdata crdb-client-secret ca.crt "$T/client.ca"
  cmp -s "$T/bundle" "$T/node.ca" && cmp -s "$T/bundle" "$T/client.ca" || fail "a leaf lacks the bundle" || return 1
  [ "$(ann crdb-client-secret needsRegeneration)" = True ] || fail "client not marked" || return 1
  # A kill before the node Secret of a later run: finished too.
  local later; later=$(date -u -d '+9 years 2 hours' +%Y-%m-%dT%H:%M:%SZ)
  KJOIN_CERTS_CRASH_AT=before-node-secret "$KJOIN" certs rotate "${CS[@]}" --now "$later" >/dev/null 2>&1
  [ $? -eq 99 ] || fail "no kill before the node Secret" || return 1
  chains crdb-node-secret && chains crdb-client-secret || return 1
  kj 10 certs rotate "${CS[@]}" --now "$later" || return 1
  out_has "node: issued" || return 1
  kj 0 certs rotate "${CS[@]}" --now "$later" || return 1
}

t_e2e_certs_job_manifests_apply_and_rbac_is_exact() {
  cns || return 1
  # CronJobs are batch/v1 from 1.21 (and only that from 1.25); v1.20 serves batch/v1beta1.
  local cronjob_api=batch/v1
  [ "$E2E_MINOR" -lt 21 ] && cronjob_api=batch/v1beta1
  kj 0 certs manifests --job --image registry.example/kjoin:0.1 --namespace "$NS" --prefix crdb \
    --cronjob-api "$cronjob_api" || return 1
  cp "$OUT" "$T/m.yaml"
  kc apply --dry-run=server -f "$T/m.yaml" >"$T/apply" 2>&1 || fail "dry-run apply: $(cat "$T/apply")" || return 1
  grep -c "(server dry run)" "$T/apply" | grep -qx 6 || fail "not 6 objects: $(cat "$T/apply")" || return 1
  grep -q 'schedule: "0 3 1 \* \*"' "$T/m.yaml" && grep -q 'schedule: "30 1 1 \* \*"' "$T/m.yaml" ||
    fail "schedules: $(grep schedule "$T/m.yaml")" || return 1
  grep -q '\*/11' "$T/m.yaml" && { fail "a month step"; return 1; }
  kc apply -f "$T/m.yaml" >/dev/null 2>&1 || fail "apply failed" || return 1
  local sa=system:serviceaccount:$NS:crdb-certs q want
  while IFS='|' read -r q want; do
    [ "$(kc -n "$NS" auth can-i $q --as "$sa")" = "$want" ] || fail "can-i $q: want $want" || return 1
  done <<'EOF'
get secret/crdb-ca-secret|yes
update secret/crdb-node-secret|yes
update secret/crdb-client-secret|yes
create secrets|yes
get secret/someone-elses|no
list secrets|no
delete secret/crdb-ca-secret|no
update secret/someone-elses|no
EOF
  # The run as that service account: its token, nothing more.
  local tok
  if [ "$E2E_MINOR" -ge 24 ]; then
    # Since 1.24 no token Secret is made for a service account: the TokenRequest API gives one.
    tok=$(kc -n "$NS" create token crdb-certs --duration 1h) || { fail "kubectl create token"; return 1; }
  else
    e2e_wait 20 kc -n "$NS" get secret -o name --field-selector type=kubernetes.io/service-account-token || return 1
    tok=$(kc -n "$NS" get secrets -o json | jq -r '.items[] | select(.metadata.annotations["kubernetes.io/service-account.name"] == "crdb-certs") | .data.token' | head -1 | base64 -d)
  fi
  [ -n "$tok" ] || fail "no token for the service account" || return 1
  SECRETS+=("$tok")
  e2e_token_kubeconfig "$E2E_SERVER" "$E2E_CA" "$tok" >"$T/sa.conf"
  local AS=(--store secrets --kubeconfig "$T/sa.conf" --namespace "$NS")
  kj 0 certs init "${AS[@]}" --prefix crdb --minimum-duration 744h || return 1
  kj 0 certs rotate "${AS[@]}" --prefix crdb --only leaves --rotated-exit-code 0 --now "$(date -u -d '+340 days' +%Y-%m-%dT%H:%M:%SZ)" || return 1
  out_has "node: issued" || return 1
  kj 0 certs check-expiration "${AS[@]}" --prefix crdb || return 1
  kj 6 certs init "${AS[@]}" --prefix other || return 1
  err_has "Forbidden" || return 1
}

t_e2e_certs_ca_secret_the_user_provides() {
  cns || return 1
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/ca.key" -out "$T/ca.crt" \
    -subj /CN=org-ca -days 3650 -addext basicConstraints=critical,CA:true 2>/dev/null || return 1
  kj 2 certs init "${CS[@]}" --ca-secret org-ca || return 1
  err_has "the CA Secret $NS/org-ca does not exist" || return 1
  kc -n "$NS" create secret generic org-ca --from-file=ca.crt="$T/ca.crt" --from-file=ca.key="$T/ca.key" >/dev/null || return 1
  local before; before=$(rv org-ca)
  kj 0 certs init "${CS[@]}" --ca-secret org-ca || return 1
  out_has "using the CA Secret you provided" || return 1
  kc -n "$NS" get secret crdb-ca-secret >/dev/null 2>&1 && { fail "kjoin made its own CA Secret"; return 1; }
  sdata crdb-node-secret tls.crt "$T/node.crt"
  openssl verify -CAfile "$T/ca.crt" "$T/node.crt" >/dev/null 2>&1 || fail "the node is not issued by the user's CA" || return 1
  kj 10 certs rotate "${CS[@]}" --now "$(date -u -d '+360 days' +%Y-%m-%dT%H:%M:%SZ)" || return 1
  [ "$(rv org-ca)" = "$before" ] || fail "kjoin wrote the user's CA Secret" || return 1
  kj 0 certs manifests --job --image k:1 --namespace "$NS" --prefix crdb --ca-secret org-ca || return 1
  grep -q "rotate-ca" "$OUT" && { fail "a CA CronJob for a CA the user provides"; return 1; }
  grep -A3 "resourceNames" "$OUT" | grep -q "org-ca" || fail "the Role cannot read org-ca" || return 1
  # A CA Secret whose key is another's.
  openssl ecparam -name prime256v1 -genkey -noout -out "$T/other.key" 2>/dev/null
  kc -n "$NS" create secret generic bad-ca --from-file=ca.crt="$T/ca.crt" --from-file=ca.key="$T/other.key" >/dev/null
  kj 2 certs init "${CS[@]}" --prefix bad --ca-secret bad-ca || return 1
  err_has "ca.key is not the key of its certificate" || return 1
}

t_e2e_certs_refuses_what_is_not_its_own() {
  cns || return 1
  kj 2 certs rotate "${CS[@]}" || return 1
  err_has "holds no kjoin PKI" || return 1
  kc -n "$NS" create secret generic crdb-node-secret --from-literal=x=y >/dev/null || return 1
  local before; before=$(rv crdb-node-secret)
  kj 2 certs rotate "${CS[@]}" || return 1
  err_has "is not kjoin's" || return 1
  kj 2 certs init "${CS[@]}" || return 1
  [ "$(rv crdb-node-secret)" = "$before" ] || fail "kjoin wrote a Secret that is not its own" || return 1
  kj 2 certs init --store secrets --kubeconfig "$E2E_ADMIN" --namespace "Bad_NS" || return 1
  err_has "invalid namespace" || return 1
  kj 2 certs init --store secrets --kubeconfig "$E2E_ADMIN" --namespace "$NS" --prefix Crdb || return 1
  err_has "invalid Secret name prefix" || return 1
  kj 2 certs init --store secrets --dir "$T/d" --kubeconfig "$E2E_ADMIN" || return 1
  kj 2 certs init --dir "$T/d" --kubeconfig "$E2E_ADMIN" || return 1
  kj 2 certs rotate --store secret --kubeconfig "$E2E_ADMIN" || return 1
  err_has "--store takes dir or secrets" || return 1
  kj 2 certs rotate "${CS[@]}" --only everything || return 1
  kj 2 certs issue client "${CS[@]}" --user Alice_1 || return 1
  # A user that cannot be a Secret name: refused before the CA Secret is made.
  kj 2 certs init --store secrets --kubeconfig "$E2E_ADMIN" --namespace "$NS" --prefix other --user Bob_2 || return 1
  err_has "cannot be a Secret" || return 1
  kc -n "$NS" get secret other-ca-secret >/dev/null 2>&1 && { fail "a refused init made the CA Secret"; return 1; }
  return 0
}
