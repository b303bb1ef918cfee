# One node-name rule for every path (sourced by run.sh): the host name, or
# --node-name, trimmed and lower-cased as kubeadm does, then a DNS-1123
# subdomain; checked once, before anything is read from the cluster or
# written. Each run has a UTS namespace of its own, so the machine's host
# name is never changed.

# kj_as_host HOST RC ARGS...: kj with the host name HOST.
kj_as_host() {
  local host=$1; shift
  cat >"$T/as-host" <<'SH'
#!/bin/sh
exec unshare -u sh -c 'printf %s "$KJ_HOST" >/proc/sys/kernel/hostname && exec "$KJ_REAL" "$@"' kjoin "$@"
SH
  chmod +x "$T/as-host"
  KJ_HOST=$host KJ_REAL=$KJOIN KJOIN=$T/as-host kj "$@"
}

# The three paths a name takes: discovery alone, the whole join, and
# discovery with kjoin's own TLS bootstrap.
name_paths() {
  case $1 in
    discovery) echo "--skip-phases preflight,kubelet-start" ;;
    whole) echo "" ;;
    tls) echo "--skip-phases preflight,kubelet-start --tls-bootstrap --kubelet-pki-dir $T/pki --kubelet-kubeconfig $T/node.conf" ;;
  esac
}

t_node_name_bad_host_names_refused_before_anything() {
  local host lower path requests
  requests=$(wc -l <"$C/nginx/access.log")
  for host in Node_1 a-.b a..b; do
    lower=$(printf %s "$host" | tr A-Z a-z)
    for path in discovery whole tls; do
      # shellcheck disable=SC2046
      kj_as_host "$host" 2 join $(name_paths $path) $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
      err_has "the host name \"$lower\" is not a valid node name" || return 1
      err_has "set --node-name" || return 1
    done
  done
  # Nothing was asked of the cluster, nothing written.
  [ "$(wc -l <"$C/nginx/access.log")" -eq "$requests" ] || fail "the cluster was asked before the name was checked" || return 1
  [ ! -e "$T/kubelet.conf" ] && [ ! -e "$T/pki" ] && [ ! -e "$T/node.conf" ] || fail "a file was written" || return 1
}

t_node_name_given_names_checked_the_same_way() {
  local long path requests
  long=$(printf 'a%.0s' $(seq 254))
  requests=$(wc -l <"$C/nginx/access.log")
  for path in discovery whole tls; do
    # shellcheck disable=SC2046
    kj_as_host worker-1 2 join $(name_paths $path) $(join_args) --discovery-token-ca-cert-hash "$PIN" --node-name "$long" || return 1
    err_has "--node-name has 254 characters: a node name has at most 253" || return 1
    # shellcheck disable=SC2046
    kj_as_host worker-1 2 join $(name_paths $path) $(join_args) --discovery-token-ca-cert-hash "$PIN" --node-name "a..b" || return 1
    err_has "--node-name \"a..b\" is not a valid node name: it has an empty label" || return 1
  done
  [ "$(wc -l <"$C/nginx/access.log")" -eq "$requests" ] || fail "the cluster was asked before the name was checked" || return 1
  # A valid given name rescues a host name that is not one.
  kj_as_host Node_1 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" \
    --node-name worker-2 -o json || return 1
  jq -e '.nodeName == "worker-2"' "$OUT" >/dev/null || fail "nodeName: $(jq -c .nodeName "$OUT")" || return 1
}

t_node_name_upper_case_host_is_lower_cased_once() {
  # kubeadm's rule: the host name lower-cased; -o json has the one name.
  kj_as_host Worker-A.Example 0 join --skip-phases preflight,kubelet-start $(join_args) \
    --discovery-token-ca-cert-hash "$PIN" -o json || return 1
  jq -e '.nodeName == "worker-a.example" and ([.. | .nodeName? // empty] | unique | length == 1)' "$OUT" >/dev/null ||
    fail "node names: $(jq -c '[.. | .nodeName? // empty]' "$OUT")" || return 1
  # The whole join and the TLS bootstrap take the same name: they get past
  # the name (to the kubelet, which this machine lacks, and to the CSR,
  # which nginx cannot take) and name no name error.
  rm -f "$T/kubelet.conf"
  kj_as_host Worker-A.Example 2 join $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  ! grep -q "node name" "$ERR" || fail "the whole join refused the name: $(cat "$ERR")" || return 1
  kj_as_host Worker-A.Example 0 join --skip-phases preflight,kubelet-start $(join_args) --force \
    --discovery-token-ca-cert-hash "$PIN" --node-name " WORKER-A.example " -o json || return 1
  jq -e '.nodeName == "worker-a.example"' "$OUT" >/dev/null || fail "a given name is not lower-cased and trimmed" || return 1
}

t_node_flags_values_refused_before_anything() {
  # A value the kubelet's flags file cannot carry (systemd drops a whole
  # environment file that is not UTF-8) is exit 2 before the cluster is asked.
  local requests; requests=$(wc -l <"$C/nginx/access.log")
  kj 2 join $(join_args) --discovery-token-ca-cert-hash "$PIN" --node-name worker-1 --cri-socket "$(printf '/run/c\377.sock')" || return 1
  err_has "kubelet argument container-runtime-endpoint has a value" || return 1
  kj 2 join $(join_args) --discovery-token-ca-cert-hash "$PIN" --node-name worker-1 --cri-socket '/run/a b.sock' || return 1
  [ "$(wc -l <"$C/nginx/access.log")" -eq "$requests" ] || fail "the cluster was asked before the flags were checked" || return 1
  [ ! -e "$T/kubelet.conf" ] || fail "a file was written"
}
