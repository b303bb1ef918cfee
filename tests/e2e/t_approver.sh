# Node-bound tokens and kjoin approver against the real control plane: a
# bound worker joins to a registered Node once; another name is refused
# before anything is written (1.27+: SelfSubjectReview) or denied within
# seconds (older); hostile CSRs denied; kubeadm's tokens untouched; the Lease
# handed over when its holder dies; install and uninstall exact. Sourced by
# run.sh.

# approver_up NAME [FLAGS...]: kjoin approver install (once a test), then an
# approver NAME in the background with its own credentials; its log
# $T/approver-NAME.log, its pid APPROVER_PIDS[NAME], its /healthz port
# APPROVER_HEALTHZ[NAME].
declare -A APPROVER_PIDS APPROVER_HEALTHZ
approver_up() {
  local name=$1; shift
  if [ ! -s "$T/approver.conf" ]; then
    "$KJOIN" approver install --kubeconfig "$E2E_ADMIN" --approver-kubeconfig "$T/approver.conf" >"$T/install.out" 2>&1 ||
      { fail "approver install: $(tail -3 "$T/install.out")"; return 1; }
  fi
  local port; port=$("$TOOLS/freeport")
  "$KJOIN" approver run --kubeconfig "$T/approver.conf" --identity "$name" --healthz-bind-address "127.0.0.1:$port" \
    "$@" >"$T/approver-$name.log" 2>&1 &
  APPROVER_PIDS[$name]=$!
  APPROVER_HEALTHZ[$name]=$port
  e2e_wait 20 curl -sf "http://127.0.0.1:$port/healthz" ||
    { fail "approver $name never answered /healthz: $(tail -3 "$T/approver-$name.log")"; return 1; }
}
# approver_down: every approver of the test stopped (SIGTERM: each exits 0),
# then uninstalled.
approver_down() {
  local name rc=0
  for name in "${!APPROVER_PIDS[@]}"; do
    local pid=${APPROVER_PIDS[$name]}
    if e2e_alive "$pid"; then
      kill -TERM "$pid"; wait "$pid" || { fail "approver $name exited $? on SIGTERM"; rc=1; }
    else
      wait "$pid" 2>/dev/null
    fi
    unset "APPROVER_PIDS[$name]"
  done
  "$KJOIN" approver uninstall --kubeconfig "$E2E_ADMIN" --approver-kubeconfig "$T/approver.conf" >"$T/uninstall.out" 2>&1 ||
    { fail "approver uninstall: $(tail -3 "$T/uninstall.out")"; rc=1; }
  return $rc
}
# bound_token FILE NODE [FLAGS...]: a token bound to NODE, into FILE (mode 0600).
bound_token() {
  local file=$1 node=$2; shift 2
  "$KJOIN" token create --kubeconfig "$E2E_ADMIN" --node-name "$node" --ttl 10m -o json "$@" >"$T/create.json" 2>"$T/create.err" ||
    { fail "token create --node-name $node: $(tail -2 "$T/create.err")"; return 1; }
  SECRETS+=("$(jq -r .token "$T/create.json" | cut -d. -f2)")
  (umask 077; jq -r .token "$T/create.json" >"$file")
}
# csr_of TOKEN_ID: the CSRs a token made, as JSON lines {name, reason, message}.
csr_of() {
  kc get csr -o json | jq -c --arg u "system:bootstrap:$1" '.items[] | select(.spec.username == $u and .spec.signerName != "kjoin.io/join-report") |
    {name: .metadata.name, cn: .spec.request, reason: ((.status.conditions // [])[0].reason // ""),
     message: ((.status.conditions // [])[0].message // "")}'
}
# decided TOKEN_ID REASON: every CSR of the token has REASON.
decided() { local out; out=$(csr_of "$1"); [ -n "$out" ] && ! echo "$out" | jq -e --arg r "$2" 'select(.reason != $r)' >/dev/null; }

# ---- a bound worker joins once ---------------------------------------------

node_scenario_bound() {
  local before=$NODE_BEFORE id; id=$(cut -c1-6 "$T/bound.token")
  node_join "$E2E_ENDPOINT" --token-file "$T/bound.token" --discovery-token-ca-cert-hash "$E2E_PIN" --node-name e2e-bound \
    --cri-socket "$NODE_CRI" --ignore-preflight-errors "$NODE_IGNORE" --discovery-timeout 60s || return 1
  kubelet_down
  [ "$JOIN_RC" = 0 ] || { fail "bound join exit $JOIN_RC: $(tail -3 "$T/join.err"); kubelet: $(tail -2 "$T/kubelet.log")"; return 1; }
  kubectl --kubeconfig "$E2E_ADMIN" get node e2e-bound >/dev/null 2>&1 || { fail "no Node e2e-bound"; return 1; }
  openssl x509 -in /var/lib/kubelet/pki/kubelet-client-current.pem -noout -subject | grep -q "CN = system:node:e2e-bound" ||
    { fail "the kubelet's certificate is not e2e-bound's"; return 1; }
  "$KJOIN" reset >/dev/null 2>&1 && [ "$(node_dirs)" = "$before" ] || fail "reset left files"
}

t_e2e_approver_bound_token_joins_its_node_once() {
  node_setup && approver_up a || { approver_down; return 1; }
  local rc=0 id
  bound_token "$T/bound.token" e2e-bound --single-use || { approver_down; return 1; }
  id=$(cut -c1-6 "$T/bound.token")
  # Its Secret names the node for people; the token list shows the binding, unused.
  [ "$(kc -n kube-system get secret "bootstrap-token-$id" -o jsonpath='{.metadata.labels.kjoin\.io/node-name}')" = e2e-bound ] ||
    { fail "the Secret lacks its node label"; rc=1; }
  "$KJOIN" token list --kubeconfig "$E2E_ADMIN" >"$T/list" 2>&1 && grep "^$id\." "$T/list" | grep -q "e2e-bound (single use, unused)" ||
    { fail "token list: $(grep "^$id" "$T/list")"; rc=1; }
  in_node node_scenario_bound || rc=1
  decided "$id" KjoinBoundToken || { fail "the CSR was not approved by kjoin approver: $(csr_of "$id")"; rc=1; }
  secret_gone() { ! kc -n kube-system get secret "bootstrap-token-$1" >/dev/null 2>&1; }
  e2e_wait 20 secret_gone "$id" || { fail "the spent token's Secret stayed after its Node registered"; rc=1; }
  grep -q "approved CSR .*token $id is bound to node e2e-bound" "$T/approver-a.log" &&
    grep -q "token $id was for one use: deleted its Secret" "$T/approver-a.log" ||
    { fail "approver log: $(tail -3 "$T/approver-a.log")"; rc=1; }
  # Spent: a second join with it is refused (exit 8), once the signer took its signature away.
  e2e_wait 20 unsigned "$id" || { fail "the spent token's signature stayed"; rc=1; }
  kj 8 join --skip-phases preflight,kubelet-start "$E2E_ENDPOINT" --token-file "$T/bound.token" \
    --discovery-token-ca-cert-hash "$E2E_PIN" --kubeconfig-out "$T/again.conf" --discovery-timeout 30s || rc=1
  kc delete node e2e-bound >/dev/null 2>&1
  approver_down || rc=1
  return $rc
}

# ---- another name: refused before writing, or denied in seconds -------------

node_scenario_wrong_name() {
  local t0; t0=$(date +%s)
  KUBELET_MAY_EXIT=1 node_join "$E2E_ENDPOINT" --token-file "$T/bound.token" --discovery-token-ca-cert-hash "$E2E_PIN" \
    --node-name e2e-w8 --cri-socket "$NODE_CRI" --ignore-preflight-errors "$NODE_IGNORE" --discovery-timeout 120s || return 1
  kubelet_down
  local took=$(($(date +%s) - t0))
  if [ "$E2E_MINOR" -ge 27 ]; then
    # The API server says who the token is: refused before anything is written.
    [ "$JOIN_RC" = 2 ] || { fail "exit $JOIN_RC, want 2: $(tail -3 "$T/join.err")"; return 1; }
    join_err "the token is bound to node e2e-w7: it cannot join as e2e-w8" || return 1
    nothing_written
  else
    # No SelfSubjectReview: the approver denies the kubelet's CSR, the join reads it at once.
    [ "$JOIN_RC" = 8 ] || { fail "exit $JOIN_RC, want 8: $(tail -3 "$T/join.err")"; return 1; }
    join_err "this CSR asks for e2e-w8" || return 1
    [ "$took" -lt 60 ] || { fail "the denial took $took s to end the join"; return 1; }
    "$KJOIN" reset >/dev/null 2>&1 && [ "$(node_dirs)" = "$NODE_BEFORE" ] || fail "reset left files"
  fi
}

t_e2e_approver_wrong_name_refused_or_denied() {
  node_setup && approver_up a || { approver_down; return 1; }
  local rc=0 id
  bound_token "$T/bound.token" e2e-w7 || { approver_down; return 1; }
  id=$(cut -c1-6 "$T/bound.token")
  in_node node_scenario_wrong_name || rc=1
  if [ "$E2E_MINOR" -lt 27 ]; then
    csr_of "$id" | jq -e 'select(.reason == "KjoinTokenBound" and (.message | contains("is bound to node e2e-w7; this CSR asks for e2e-w8")))' \
      >/dev/null || { fail "kubectl get csr lacks the denial: $(csr_of "$id")"; rc=1; }
  else
    [ -z "$(csr_of "$id")" ] || { fail "a CSR was made: $(csr_of "$id")"; rc=1; }
  fi
  # The cluster sees the refusal either way: the join's own report (refused in kubelet-start, exit 2, or
  # its CSR denied, exit 8) and, before 1.27, the approver's denials (one a CSR the kubelet asked for).
  "$KJOIN" reports --kubeconfig "$E2E_ADMIN" --node e2e-w8 -o json >"$T/reports.json" 2>"$T/reports.err" || rc=1
  local want='[.reports[] | select(.tokenID == $id) | .phase] | sort == ["kubelet-start"]'
  [ "$E2E_MINOR" -ge 27 ] || want='([.reports[] | select(.tokenID == $id) | .phase] | unique == ["approver", "kubelet-wait-bootstrap"])
      and ([.reports[] | select(.phase == "approver") | .exitCode == 8 and (.reason | contains("this CSR asks for e2e-w8"))] | all)'
  jq -e --arg id "$id" "$want" "$T/reports.json" >/dev/null ||
    { fail "kjoin reports --node e2e-w8: $(head -c 700 "$T/reports.json" "$T/reports.err")"; rc=1; }
  ! kc get node e2e-w8 >/dev/null 2>&1 || { fail "a Node e2e-w8 registered"; rc=1; }
  kc -n kube-system delete secret "bootstrap-token-$id" >/dev/null 2>&1
  approver_down || rc=1
  return $rc
}

# ---- hostile CSRs, and kubeadm's token untouched ----------------------------

# csr_post TOKEN NAME SIGNER USAGES_JSON KEYALG SUBJ [SAN]: a CSR made with TOKEN's credentials.
csr_post() {
  local token=$1 name=$2 signer=$3 usages=$4 alg=$5 subj=$6 san=${7:-}
  case $alg in
    ec) openssl ecparam -name prime256v1 -genkey -noout -out "$T/$name.key" 2>/dev/null ;;
    rsa) openssl genrsa -out "$T/$name.key" 2048 2>/dev/null ;;
  esac
  openssl req -new -key "$T/$name.key" -subj "$subj" ${san:+-addext "subjectAltName=$san"} -out "$T/$name.csr" 2>/dev/null ||
    { fail "openssl req $name"; return 1; }
  jq -n --arg n "$name" --arg s "$signer" --argjson u "$usages" --arg r "$(base64 -w0 "$T/$name.csr")" \
    '{apiVersion: "certificates.k8s.io/v1", kind: "CertificateSigningRequest", metadata: {name: $n},
      spec: {signerName: $s, usages: $u, request: $r}}' >"$T/$name.json"
  kubectl --kubeconfig /dev/null --server "$E2E_SERVER" --certificate-authority "$E2E_CA" --token "$token" create -f "$T/$name.json" \
    >"$T/$name.out" 2>&1 || { fail "create csr $name: $(cat "$T/$name.out")"; return 1; }
}
csr_reason() { kc get csr "$1" -o jsonpath='{.status.conditions[0].reason}' 2>/dev/null; }
# csr_is NAME REASON: the CSR's first condition has REASON (asked anew each time: for e2e_wait).
csr_is() { [ "$(csr_reason "$1")" = "$2" ]; }
csr_message() { kc get csr "$1" -o jsonpath='{.status.conditions[0].message}' 2>/dev/null; }

t_e2e_approver_hostile_csrs_denied_kubeadm_tokens_untouched() {
  approver_up a || { approver_down; return 1; }
  local rc=0 t k=kubelet u='["digital signature","client auth"]' signer=kubernetes.io/kube-apiserver-client-kubelet
  bound_token "$T/bound.token" e2e-h7 || { approver_down; return 1; }
  t=$(cat "$T/bound.token")
  csr_post "$t" e2e-h-sans "$signer" "$u" ec "/O=system:nodes/CN=system:node:e2e-h7" "DNS:kubernetes.default" &&
    csr_post "$t" e2e-h-rsa "$signer" "$u" rsa "/O=system:nodes/CN=system:node:e2e-h7" &&
    csr_post "$t" e2e-h-usages "$signer" '["digital signature","client auth","server auth"]' ec "/O=system:nodes/CN=system:node:e2e-h7" &&
    csr_post "$t" e2e-h-masters "$signer" "$u" ec "/O=system:masters/CN=system:node:e2e-h7" &&
    csr_post "$t" e2e-h-prefix "$signer" "$u" ec "/O=system:nodes/CN=system:node:e2e-h7x" &&
    csr_post "$t" e2e-h-good "$signer" "$u" ec "/O=system:nodes/CN=system:node:e2e-h7" &&
    csr_post abcdef.0123456789abcdef e2e-h-kubeadm "$signer" '["digital signature","key encipherment","client auth"]' ec \
      "/O=system:nodes/CN=system:node:e2e-k1" ||
    { approver_down; return 1; }
  local want=(e2e-h-sans "no subject alternative names" e2e-h-rsa "ECDSA P-256" e2e-h-usages "usages"
              e2e-h-masters "the subject is not" e2e-h-prefix "this CSR asks for e2e-h7x") i
  for ((i = 0; i < ${#want[@]}; i += 2)); do
    e2e_wait 20 csr_is "${want[i]}" KjoinTokenBound ||
      { fail "${want[i]} not denied: $(csr_reason "${want[i]}")"; rc=1; continue; }
    csr_message "${want[i]}" | grep -qF "${want[i+1]}" || { fail "${want[i]}: $(csr_message "${want[i]}")"; rc=1; }
  done
  e2e_wait 20 csr_is e2e-h-good KjoinBoundToken || { fail "the good CSR: $(csr_reason e2e-h-good)"; rc=1; }
  # kubeadm's token: the controller manager's approval, never the approver's decision (the usages
  # every release's controller manager approves: key encipherment too before 1.22).
  e2e_wait 20 csr_is e2e-h-kubeadm AutoApproved || { fail "kubeadm's CSR: $(csr_reason e2e-h-kubeadm)"; rc=1; }
  ! grep -q "e2e-h-kubeadm" "$T/approver-a.log" || { fail "the approver touched kubeadm's CSR"; rc=1; }
  kc delete csr e2e-h-sans e2e-h-rsa e2e-h-usages e2e-h-masters e2e-h-prefix e2e-h-good e2e-h-kubeadm >/dev/null 2>&1
  kc -n kube-system delete secret "bootstrap-token-${t%%.*}" >/dev/null 2>&1
  approver_down || rc=1
  return $rc
}

# ---- one acts; the holder killed, another takes over -------------------------

holder() { kc -n kube-system get lease kjoin-approver -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }

t_e2e_approver_lease_handed_over_and_api_restarts_survived() {
  local fast=(--leader-elect-lease-duration 6s --leader-elect-renew-deadline 4s --leader-elect-retry-period 1s --resync-period 5s)
  holder_is() { [ "$(holder)" = "$1" ]; }
  approver_up a "${fast[@]}" && e2e_wait 10 holder_is a && approver_up b "${fast[@]}" ||
    { fail "a never held the Lease: $(holder)"; approver_down; return 1; }
  local rc=0 t u='["digital signature","client auth"]' signer=kubernetes.io/kube-apiserver-client-kubelet
  bound_token "$T/bound.token" e2e-l7 || { approver_down; return 1; }
  t=$(cat "$T/bound.token")
  # The holder's machine stops (no release of the Lease): b approves within one lease duration.
  kill -KILL "${APPROVER_PIDS[a]}"
  local t0; t0=$(date +%s)
  csr_post "$t" e2e-l-one "$signer" "$u" ec "/O=system:nodes/CN=system:node:e2e-l7" || { approver_down; return 1; }
  e2e_wait 15 csr_is e2e-l-one KjoinBoundToken ||
    { fail "no approval after the holder died: $(csr_reason e2e-l-one); holder $(holder)"; rc=1; }
  local took=$(($(date +%s) - t0))
  # one lease duration after a's last renewal, plus a retry period and the approval
  [ "$took" -le 10 ] || { fail "the handover took $took s (lease 6 s)"; rc=1; }
  [ "$(holder)" = b ] || { fail "holder $(holder), want b"; rc=1; }
  grep -q "b holds Lease kjoin-approver" "$T/approver-b.log" || { fail "b's log: $(tail -2 "$T/approver-b.log")"; rc=1; }
  ! grep -q "e2e-l-one" "$T/approver-a.log" || { fail "a acted after its death"; rc=1; }
  # The API server restarts: b keeps watching and approving.
  cp_stop kube-apiserver && cp_start kube-apiserver || { fail "the API server did not come back"; approver_down; return 1; }
  csr_post "$t" e2e-l-two "$signer" "$u" ec "/O=system:nodes/CN=system:node:e2e-l7" || { approver_down; return 1; }
  e2e_wait 30 csr_is e2e-l-two KjoinBoundToken || { fail "no approval after the restart: $(csr_reason e2e-l-two)"; rc=1; }
  curl -sf "http://127.0.0.1:${APPROVER_HEALTHZ[b]}/healthz" | grep -qx ok || { fail "b's /healthz"; rc=1; }
  # b stops: it gives up the Lease (no holder), exits 0.
  kill -TERM "${APPROVER_PIDS[b]}"; wait "${APPROVER_PIDS[b]}" || { fail "b exited $?"; rc=1; }
  unset "APPROVER_PIDS[b]"
  [ -z "$(holder)" ] || { fail "b kept the Lease: $(holder)"; rc=1; }
  kc delete csr e2e-l-one e2e-l-two >/dev/null 2>&1
  kc -n kube-system delete secret "bootstrap-token-${t%%.*}" >/dev/null 2>&1
  approver_down || rc=1
  return $rc
}

# ---- token create's refusals; install and uninstall exact --------------------

t_e2e_approver_token_refusals_install_uninstall_exact() {
  local rc=0
  kj 2 token create --kubeconfig "$E2E_ADMIN" --node-name e2e-x --groups system:bootstrappers:kubeadm:default-node-token &&
    err_has "cannot carry system:bootstrappers:kubeadm:default-node-token" || rc=1
  kj 2 token create --kubeconfig "$E2E_ADMIN" --node-name "bad_name" && err_has "is not a valid node name" || rc=1
  kj 2 token create --kubeconfig "$E2E_ADMIN" --single-use && err_has "--single-use needs --node-name" || rc=1
  # A cluster that approves any name for bootstrap tokens: a binding would be none.
  kc create clusterrolebinding e2e-all-bootstrappers-autoapprove \
    --clusterrole system:certificates.k8s.io:certificatesigningrequests:nodeclient --group system:bootstrappers >/dev/null || return 1
  kj 2 token create --kubeconfig "$E2E_ADMIN" --node-name e2e-x && err_has "approves a node client certificate of any name" || rc=1
  kc delete clusterrolebinding e2e-all-bootstrappers-autoapprove >/dev/null
  ! kc -n kube-system get secrets -l kjoin.io/bound=true -o name | grep -q . || { fail "a refused bound token was made"; rc=1; }
  # install twice (idempotent), then uninstall: nothing of kjoin's left.
  kj 0 approver install --kubeconfig "$E2E_ADMIN" --approver-kubeconfig "$T/approver.conf" &&
    kj 0 approver install --kubeconfig "$E2E_ADMIN" --approver-kubeconfig "$T/approver.conf" -o json || rc=1
  [ "$(stat -c %a "$T/approver.conf")" = 600 ] || { fail "approver.conf mode $(stat -c %a "$T/approver.conf")"; rc=1; }
  # Its credentials are the account's, and least privilege: no Secrets read, no other signer approved.
  local as=(kubectl --kubeconfig "$T/approver.conf") q want got
  for q in "yes watch certificatesigningrequests.certificates.k8s.io" "yes update certificatesigningrequests.certificates.k8s.io --subresource approval" \
      "no get secrets -n kube-system" "yes delete secrets -n kube-system" "no create certificatesigningrequests.certificates.k8s.io" \
      "yes get nodes" "no list nodes"; do
    want=${q%% *}
    got=$("${as[@]}" auth can-i ${q#* } 2>/dev/null)
    [ "$got" = "$want" ] || { fail "the approver: can-i ${q#* }: $got, docs/token.md says $want"; rc=1; }
  done
  # The approval plugin's check, by deed (kubectl cannot ask it of signers): the kubelet's signer only.
  local u='["digital signature","client auth"]'
  csr_admin() { # NAME SIGNER SUBJ: a CSR an admin makes
    openssl ecparam -name prime256v1 -genkey -noout -out "$T/$1.key" 2>/dev/null &&
      openssl req -new -key "$T/$1.key" -subj "$3" -out "$T/$1.csr" 2>/dev/null &&
      jq -n --arg n "$1" --arg s "$2" --argjson u "$u" --arg r "$(base64 -w0 "$T/$1.csr")" \
        '{apiVersion: "certificates.k8s.io/v1", kind: "CertificateSigningRequest", metadata: {name: $n},
          spec: {signerName: $s, usages: $u, request: $r}}' | kc create -f - >/dev/null
  }
  csr_admin e2e-r-kubelet kubernetes.io/kube-apiserver-client-kubelet "/O=system:nodes/CN=system:node:e2e-r" &&
    csr_admin e2e-r-client kubernetes.io/kube-apiserver-client "/CN=e2e-r" || { fail "admin CSRs"; rc=1; }
  "${as[@]}" certificate approve e2e-r-kubelet >/dev/null 2>&1 || { fail "the approver cannot approve the kubelet's signer"; rc=1; }
  "${as[@]}" certificate approve e2e-r-client >"$T/client.out" 2>&1 && { fail "the approver approved signer kube-apiserver-client"; rc=1; }
  grep -q "not permitted to approve requests with signerName" "$T/client.out" || { fail "approve client: $(cat "$T/client.out")"; rc=1; }
  kc delete csr e2e-r-kubelet e2e-r-client >/dev/null 2>&1
  local managed="clusterroles,clusterrolebindings,serviceaccounts,secrets,roles,rolebindings"
  [ "$(kc get clusterroles,clusterrolebindings -l app.kubernetes.io/managed-by=kjoin -o name | wc -l)" = 5 ] ||
    { fail "install made: $(kc get clusterroles,clusterrolebindings -l app.kubernetes.io/managed-by=kjoin -o name | tr '\n' ' ')"; rc=1; }
  kj 0 approver uninstall --kubeconfig "$E2E_ADMIN" --approver-kubeconfig "$T/approver.conf" || rc=1
  [ -z "$(kc get "$managed" -A -l app.kubernetes.io/managed-by=kjoin -o name)" ] ||
    { fail "uninstall left: $(kc get "$managed" -A -l app.kubernetes.io/managed-by=kjoin -o name | tr '\n' ' ')"; rc=1; }
  [ ! -e "$T/approver.conf" ] || { fail "uninstall left the kubeconfig"; rc=1; }
  kc get clusterrolebinding kubeadm:node-autoapprove-bootstrap >/dev/null || { fail "uninstall removed kubeadm's"; rc=1; }
  return $rc
}
