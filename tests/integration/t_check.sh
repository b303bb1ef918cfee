# kjoin join --check (sourced by run.sh): discovery, then what the cluster
# says of the join, against nginx answering the four reads as an API server
# would. Nothing on the node changes, whatever the answers.

# check_site NAME VERSION_STATUS NODE_READY CM_STATUS SAR_ALLOWED [MINOR
# [KUBEADM_MINOR]]: a cluster of its own whose API answers so (NODE_READY:
# none, True or False), of release 1.MINOR (36), with a kubeadm-config whose
# ClusterConfiguration says 1.KUBEADM_MINOR when given (else none). With
# CHECK_GROUPS (a JSON array), a SelfSubjectReview says the token has those
# groups; with CHECK_LEASE_HOLDER, kjoin approver's Lease is held by it, renewed now.
check_site() {
  new_cluster "$1" || return 1
  local node='return 404 '\''{"kind":"Status","reason":"NotFound","code":404}'\'';'
  [ "$3" = none ] ||
    node="return 200 '{\"kind\":\"Node\",\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"$3\"}]}}';"
  local cm='return 200 '\''{"kind":"ConfigMap","data":{"kubelet":"kind: KubeletConfiguration\n"}}'\'';'
  [ "$4" = 200 ] || cm='return 404 '\''{"kind":"Status","reason":"NotFound","code":404}'\'';'
  [ "$4" != 403 ] || cm='return 403 '\''{"kind":"Status","reason":"Forbidden","code":403}'\'';'
  cat >"$C/nginx/extra.conf" <<CONF
location = /version { default_type application/json; return $2 '{"major":"1","minor":"${6:-36}","gitVersion":"v1.${6:-36}.3"}'; }
location = /api/v1/nodes/checked { default_type application/json; $node }
location = /api/v1/namespaces/kube-system/configmaps/kubelet-config { default_type application/json; $cm }
$([ -z "${7:-}" ] || echo "location = /api/v1/namespaces/kube-system/configmaps/kubeadm-config { default_type application/json;
  return 200 '{\"kind\":\"ConfigMap\",\"data\":{\"ClusterConfiguration\":\"apiVersion: kubeadm.k8s.io/v1beta3\\nkind: ClusterConfiguration\\nkubernetesVersion: v1.$7.17\\n\"}}'; }")
location = /apis/authorization.k8s.io/v1/selfsubjectaccessreviews {
  default_type application/json; return 201 '{"kind":"SelfSubjectAccessReview","status":{"allowed":$5}}';
}
$([ -z "${CHECK_GROUPS:-}" ] || echo "location = /apis/authentication.k8s.io/v1/selfsubjectreviews { default_type application/json;
  return 201 '{\"kind\":\"SelfSubjectReview\",\"status\":{\"userInfo\":{\"username\":\"system:bootstrap:abcdef\",\"groups\":$CHECK_GROUPS}}}'; }")
$([ -z "${CHECK_LEASE_HOLDER:-}" ] || echo "location = /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kjoin-approver { default_type application/json;
  return 200 '{\"kind\":\"Lease\",\"metadata\":{\"resourceVersion\":\"5\"},\"spec\":{\"holderIdentity\":\"$CHECK_LEASE_HOLDER\",\"leaseDurationSeconds\":15,\"renewTime\":\"$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)\"}}'; }")
CONF
  restart_nginx "$C" "$C/server.crt" "$C/server.key"
}

# check_run RC ARGS...: kjoin join --check for node "checked", and nothing written.
check_run() {
  local want=$1; shift
  kj "$want" join --check --node-name checked $(join_args) --discovery-token-ca-cert-hash "$PIN" "$@" || return 1
  [ ! -e "$T/kubelet.conf" ] || fail "the check wrote the kubeconfig"
}

t_check_all_pass_writes_nothing() {
  check_site check-ok 200 none 200 true || return 1
  local t0; t0=$(date +%s%N)
  check_run 0 || return 1
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  err_has "[check] node name checked free: yes" || return 1
  err_has "[check] The join would succeed: nothing on this node was changed" || return 1
  # Four reads after discovery; well under the join's two TLS requests' worth of a second.
  [ "$ms" -lt 3000 ] || fail "the check took $ms ms" || return 1
  for p in /version /api/v1/nodes/checked configmaps/kubelet-config selfsubjectaccessreviews; do
    grep -q "$p" "$C/nginx/access.log" || fail "the check never asked $p" || return 1
  done
}

t_check_json_names_each_answer() {
  check_site check-json 200 False 200 true || return 1
  check_run 0 -o json || return 1
  jq -e '.check == {tokenValid: true, nodeNameFree: true, kubeletConfig: true, csrAutoApproved: true,
                    clockWithinCA: true, problems: ""} and .kubeconfig == null' "$OUT" >/dev/null ||
    fail "unexpected JSON: $(cat "$OUT")"
}

t_check_ready_node_of_the_name_refused() {
  check_site check-ready 200 True 200 true || return 1
  check_run 2 || return 1
  err_has "a Node named checked is Ready in the cluster already" || return 1
  err_has "[check] node name checked free: no"
}

t_check_says_every_problem_at_once() {
  check_site check-all 200 True 404 false || return 1
  check_run 2 -o json || return 1
  jq -e '.error.check.nodeNameFree == false and .error.check.kubeletConfig == false and
         .error.check.csrAutoApproved == false and .error.check.tokenValid == true and .error.phase == "check"' \
    "$OUT" >/dev/null || fail "unexpected JSON error: $(cat "$OUT")" || return 1
  grep -q 'Ready in the cluster already.*no configmap kube-system/kubelet-config.*kubectl certificate approve' "$ERR" ||
    fail "not every problem in one message: $(cat "$ERR")"
}

t_check_csr_not_approved_by_the_cluster() {
  check_site check-csr 200 none 200 false || return 1
  check_run 6 || return 1
  err_has "the kubelet's CSR would wait for kubectl certificate approve"
}

t_check_rejected_token_exit_8() {
  check_site check-401 401 none 200 true || return 1
  check_run 8 || return 1
  err_has "the API server rejects the token (HTTP 401)"
}

t_check_refuses_what_it_cannot_check() {
  check_site check-usage 200 none 200 true || return 1
  check_run 2 --dry-run || return 1
  err_has "not of one phase or a dry run" || return 1
  # Refused before any request.
  ! grep -q . "$C/nginx/access.log" || fail "a refused check asked the cluster: $(cat "$C/nginx/access.log")"
}

t_check_asks_the_release_s_own_configmap() {
  check_site check-120 200 none 200 true 20 || return 1
  check_run 6 || return 1
  err_has "kube-system/kubelet-config-1.20" || return 1
  grep -q "configmaps/kubelet-config-1.20$" "$C/nginx/access.log" || fail "1.20's ConfigMap was not asked"
}

# The ConfigMap is the one kubeadm-config's release reads, not the API
# server's (mid-upgrade, or an API server upgraded alone): 1.20's
# kubelet-config-1.20 though the API server is 1.36 and kubelet-config is there.
t_check_asks_the_kubeadm_release_s_configmap() {
  check_site check-120k 200 none 200 true 36 20 || return 1
  check_run 6 || return 1
  err_has "kube-system/kubelet-config-1.20" || return 1
  grep -q "configmaps/kubeadm-config" "$C/nginx/access.log" && grep -q "configmaps/kubelet-config-1.20$" "$C/nginx/access.log" &&
    ! grep -q "configmaps/kubelet-config$" "$C/nginx/access.log" || fail "not 1.20's ConfigMap: $(grep configmaps "$C/nginx/access.log")"
}

# 1.23's and 1.24's kubeadm read kubelet-config, and where that is not
# there or not readable with the token, kubelet-config-1.MINOR: so does the
# check. The release after (1.36) does not fall back on a Forbidden.
t_check_1_23_reads_either_configmap() {
  check_site check-123a 200 none 200 true 36 23 || return 1
  check_run 0 || return 1
  ! grep -q "configmaps/kubelet-config-1.23" "$C/nginx/access.log" || fail "asked for 1.23's though kubelet-config is there" || return 1
  local status
  for status in 404 403; do
    check_site "check-123-$status" 200 none "$status" true 36 23 || return 1
    check_run 6 || return 1
    err_has "kube-system/kubelet-config or kubelet-config-1.23" || return 1
    grep -q "configmaps/kubelet-config$" "$C/nginx/access.log" && grep -q "configmaps/kubelet-config-1.23$" "$C/nginx/access.log" ||
      fail "kubelet-config $status: not both asked: $(grep configmaps "$C/nginx/access.log")" || return 1
  done
  check_site check-136-403 200 none 403 true 36 36 || return 1
  check_run 6 || return 1
  err_has "Forbidden" || return 1
  ! grep -q "configmaps/kubelet-config-1" "$C/nginx/access.log" || fail "1.36 fell back to a versioned ConfigMap"
}

t_check_waits_ten_seconds_at_most() {
  local port t0 s; port=$("$TOOLS/freeport")
  t0=$(date +%s)
  kj 3 join --check "127.0.0.1:$port" --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" --discovery-timeout 1m || return 1
  s=$(( $(date +%s) - t0 ))
  err_has "discovery timed out after 10s" || return 1
  [ "$s" -le 14 ] || fail "the check waited $s s"
}

# kubeadm's timeouts.kubernetesAPICall bounds each API call, its retries
# included: an API server that answers 503 to every read ends the check
# within the call's bound, not the check's 10 s; without the bound it waits
# them out. (The JoinConfiguration's other timeouts are proven in e2e.)
check_config() { # FILE [TIMEOUTS_YAML]
  printf 'apiVersion: kubeadm.k8s.io/v1beta4\nkind: JoinConfiguration\ndiscovery:\n  bootstrapToken:\n    token: %s\n    apiServerEndpoint: "127.0.0.1:%s"\n    caCertHashes: ["%s"]\nnodeRegistration: {name: checked}\ntimeouts:\n  discovery: 20s\n%s' \
    "$(cat "$C/token")" "$PORT" "$PIN" "${2:-}" >"$1"
}
t_check_kubernetes_api_call_timeout_bounds_each_call() {
  check_site check-503 503 none 200 true || return 1
  check_config "$T/bounded.yaml" "  kubernetesAPICall: 2s
"
  local t0 ms
  t0=$(date +%s%N)
  kj 3 join --check --config "$T/bounded.yaml" --kubeconfig-out "$T/kubelet.conf" || return 1
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  err_has "timed out after the call's own 2000 ms" || return 1
  [ "$ms" -ge 2000 ] && [ "$ms" -lt 6000 ] || fail "the bounded check took $ms ms" || return 1
  # The same without the bound: the check's own 10 s.
  check_config "$T/unbounded.yaml"
  t0=$(date +%s%N)
  kj 3 join --check --config "$T/unbounded.yaml" --kubeconfig-out "$T/kubelet.conf" || return 1
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  [ "$ms" -ge 9000 ] || fail "the unbounded check ended after $ms ms" || return 1
  ! grep -q "the call's own" "$ERR" || fail "a bound was named where none was set"
}

# Node-bound tokens (docs/token.md): the API server says who the token is.
BOUND_TO_OTHER='["system:bootstrappers","system:bootstrappers:kjoin:bound","system:bootstrappers:kjoin:node:w7:example","system:authenticated"]'
BOUND_TO_CHECKED='["system:bootstrappers","system:bootstrappers:kjoin:bound","system:bootstrappers:kjoin:node:checked","system:authenticated"]'

t_check_token_bound_to_another_node_refused() {
  CHECK_GROUPS=$BOUND_TO_OTHER check_site check-bound-other 200 none 200 false || return 1
  check_run 2 || return 1
  err_has "the token is bound to node w7.example: it cannot join as checked"
}

t_check_bound_token_with_an_approver_passes() {
  CHECK_GROUPS=$BOUND_TO_CHECKED CHECK_LEASE_HOLDER=cp-1_5b0c check_site check-bound-ok 200 none 200 false || return 1
  check_run 0 -o json || return 1
  jq -e '.check.csrAutoApproved == false and .check.approver == "cp-1_5b0c" and .check.problems == ""' "$OUT" >/dev/null ||
    fail "unexpected JSON: $(cat "$OUT")" || return 1
  grep -q "selfsubjectreviews" "$C/nginx/access.log" || fail "the check never asked who the token is"
}

# A node whose clock is two hours ahead (faketime) reads the Lease against
# the API server's clock (its Date): the approver renewed it just now.
t_check_bound_token_read_by_the_servers_clock() {
  CHECK_GROUPS=$BOUND_TO_CHECKED CHECK_LEASE_HOLDER=cp-1_5b0c check_site check-bound-skew 200 none 200 false || return 1
  local real=$KJOIN KJOIN=$T/kjoin-ahead
  printf '#!/bin/sh\nASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" FAKETIME_DONT_FAKE_MONOTONIC=1 exec faketime -f +2h '%s' "$@"\n' \
    "$real" >"$KJOIN" && chmod +x "$KJOIN" || return 1
  # (kjoin itself runs ahead: a CA it makes starts two hours from now)
  local start
  "$KJOIN" certs init --dir "$T/ahead" >/dev/null 2>&1 &&
    start=$(date -d "$(openssl x509 -in "$T/ahead/ca.crt" -noout -startdate | cut -d= -f2)" +%s) &&
    [ "$start" -ge "$(($(date +%s) + 7000))" ] || fail "faketime does not run kjoin two hours ahead" || return 1
  check_run 0 -o json || return 1
  jq -e '.check.approver == "cp-1_5b0c" and .check.problems == ""' "$OUT" >/dev/null || fail "unexpected JSON: $(cat "$OUT")"
}

t_check_bound_token_without_an_approver_fails() {
  CHECK_GROUPS=$BOUND_TO_CHECKED check_site check-bound-none 200 none 200 false || return 1
  check_run 6 || return 1
  err_has "no kjoin approver has run on the cluster" || return 1
  ! grep -q "kubectl certificate approve" "$ERR" || fail "a bound token's check sends the operator to approve by hand"
}
