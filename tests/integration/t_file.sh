# File, URL and --config discovery (sourced by run.sh).

# discovery_doc SERVER CA_MODE [USER_FIELD]: a discovery kubeconfig on stdout.
# CA_MODE: a PEM file to embed, "path:NAME" for certificate-authority, or "none".
discovery_doc() {
  local server=$1 ca=$2 user=${3:-}
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: ""\n  cluster:\n    server: %s\n' "$server"
  case "$ca" in
    none) ;;
    path:*) printf '    certificate-authority: %s\n' "${ca#path:}" ;;
    *) printf '    certificate-authority-data: %s\n' "$(base64 -w0 <"$ca")" ;;
  esac
  if [ -n "$user" ]; then printf 'users:\n- name: someone\n  user:\n    %s\n' "$user"; else printf 'users: null\n'; fi
}
file_args() { echo "--token-file $C/token --kubeconfig-out $T/kubelet.conf --discovery-timeout ${1:-20s}"; }
ca_data_of() { kubectl --kubeconfig "$1" config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}'; }

t_file_local_and_kubectl() {
  discovery_doc "$SERVER" "$C/ca.crt" >"$T/discovery.yaml"
  kj 0 join --skip-phases preflight,kubelet-start --discovery-file "$T/discovery.yaml" $(file_args) -o json || return 1
  err_has "Refreshed from cluster-info over verified TLS" || return 1
  jq -e --arg s "$SERVER" '.discovery == "file" and .server == $s and (.caCertificates | length) == 1' "$OUT" >/dev/null \
    || fail "JSON: $(cat "$OUT")" || return 1
  kubectl --kubeconfig "$T/kubelet.conf" get --raw "$CLUSTER_INFO_PATH" | jq -e '.kind == "ConfigMap"' >/dev/null \
    || fail "kubectl could not use the kubeconfig"
}

t_file_relative_ca_path_and_file_url() {
  mkdir -p "$T/etc/pki"; cp "$C/ca.crt" "$T/etc/pki/ca.crt"
  discovery_doc "$SERVER" path:pki/ca.crt >"$T/etc/discovery.yaml"
  kj 0 join --skip-phases preflight,kubelet-start --discovery-file "$T/etc/discovery.yaml" $(file_args) || return 1
  kj 0 join --skip-phases preflight,kubelet-start --discovery-file "file://$T/etc/discovery.yaml" $(file_args) || return 1
  [ "$(ca_data_of "$T/kubelet.conf" | base64 -d | openssl x509 -noout -fingerprint)" = \
    "$(openssl x509 -in "$C/ca.crt" -noout -fingerprint)" ] || fail "CA not embedded from the relative path"
}

t_file_stdin() {
  # (kj must not run in a pipeline's subshell: it sets $OUT and $ERR.)
  discovery_doc "$SERVER" "$C/ca.crt" >"$T/doc.yaml"
  kj 0 join --skip-phases preflight,kubelet-start --discovery-file - --tls-bootstrap-token "$(cat "$C/token")" --kubeconfig-out "$T/kubelet.conf" <"$T/doc.yaml" \
    || return 1
  # A certificate-authority path means nothing for standard input.
  discovery_doc "$SERVER" path:ca.crt >"$T/doc.yaml"
  kj 4 join --skip-phases preflight,kubelet-start --discovery-file - $(file_args) <"$T/doc.yaml" || return 1
  err_has "certificate-authority-data"
}

t_file_url_verified_with_system_roots() {
  discovery_doc "$SERVER" "$C/ca.crt" >"$C/www/discovery.yaml"
  SSL_CERT_FILE=$C/ca.crt kj 0 join --skip-phases preflight,kubelet-start --discovery-file "https://127.0.0.1:$PORT/discovery.yaml" $(file_args) -o json || return 1
  jq -e --arg u "https://127.0.0.1:$PORT/discovery.yaml" '.endpoint == $u' "$OUT" >/dev/null || fail "endpoint" || return 1
  # The same URL when the system roots do not include the server's CA.
  mkca "$T" stranger
  SSL_CERT_FILE=$T/stranger.crt kj 4 join --skip-phases preflight,kubelet-start --discovery-file "https://127.0.0.1:$PORT/discovery.yaml" $(file_args) || return 1
  err_has "TLS verification"
}

t_file_url_credentials_never_shown() {
  # A pre-signed URL's query and a URL's userinfo are secrets: not in logs,
  # errors or JSON, on success or failure.
  discovery_doc "$SERVER" "$C/ca.crt" >"$C/www/discovery.yaml"
  SECRETS+=(presig-s3cr3t pa55w0rd-url)
  local url="https://fetcher:pa55w0rd-url@127.0.0.1:$PORT/discovery.yaml?X-Amz-Signature=presig-s3cr3t"
  SSL_CERT_FILE=$C/ca.crt kj 0 join --skip-phases preflight,kubelet-start --discovery-file "$url" $(file_args) -o json -v 1 || return 1
  jq -e --arg u "https://127.0.0.1:$PORT/discovery.yaml?<redacted>" '.endpoint == $u' "$OUT" >/dev/null \
    || fail "endpoint: $(jq -r .endpoint "$OUT")" || return 1
  mkca "$T" stranger
  SSL_CERT_FILE=$T/stranger.crt kj 4 join --skip-phases preflight,kubelet-start --discovery-file "$url" $(file_args) -o json || return 1
  kj 2 join --skip-phases preflight,kubelet-start --discovery-file "http://u:pa55w0rd-url@127.0.0.1/x?sig=presig-s3cr3t" $(file_args)
}

t_file_http_and_other_schemes_rejected() {
  kj 2 join --skip-phases preflight,kubelet-start --discovery-file "http://127.0.0.1:$PORT/discovery.yaml" $(file_args) || return 1
  err_has "must be https://" || return 1
  kj 2 join --skip-phases preflight,kubelet-start --discovery-file "ftp://127.0.0.1/discovery.yaml" $(file_args) || return 1
  kj 2 join --skip-phases preflight,kubelet-start --discovery-file "$T/missing.yaml" $(file_args)
}

t_file_redirects() {
  local c; new_cluster redirects || return 1
  discovery_doc "$SERVER" "$C/ca.crt" >"$C/www/discovery.yaml"
  cat >"$C/nginx/extra.conf" <<CONF
location = /to-https { return 302 https://127.0.0.1:$PORT/discovery.yaml; }
location = /to-http { return 302 http://127.0.0.1:$PORT/discovery.yaml; }
CONF
  stop_nginx "$C"; start_nginx "$C" "$PORT" "$C/server.crt" "$C/server.key" || return 1
  SSL_CERT_FILE=$C/ca.crt kj 0 join --skip-phases preflight,kubelet-start --discovery-file "https://127.0.0.1:$PORT/to-https" $(file_args) || return 1
  SSL_CERT_FILE=$C/ca.crt kj 4 join --skip-phases preflight,kubelet-start --discovery-file "https://127.0.0.1:$PORT/to-http" $(file_args) || return 1
  err_has "refused a redirect to a URL that is not https"
}

t_file_credentials_rejected() {
  local field
  for field in "token: abc" "tokenFile: /t" "client-certificate: /c" "client-certificate-data: UEVNCg==" \
               "client-key: /k" "client-key-data: UEVNCg==" "username: admin" "password: hunter2" \
               "exec: {command: get-token}" "auth-provider: {name: oidc}"; do
    discovery_doc "$SERVER" "$C/ca.crt" "$field" >"$T/discovery.yaml"
    kj 4 join --skip-phases preflight,kubelet-start --discovery-file "$T/discovery.yaml" $(file_args) || return 1
    err_has "users[0].user.${field%%:*} " || return 1
    err_has "--tls-bootstrap-token" || return 1
  done
}

# A file that is no kubeconfig says so, naming the file: not YAML, not a mapping.
t_file_not_a_kubeconfig() {
  printf 'this is not yaml: [\n' >"$T/broken.yaml"
  kj 4 join --skip-phases preflight,kubelet-start --discovery-file "$T/broken.yaml" $(file_args) || return 1
  err_has "the discovery file $T/broken.yaml: not a kubeconfig: it is not YAML (YAML error at line 2" || return 1
  printf 'just some text\n' >"$T/text.conf"
  kj 4 join --skip-phases preflight,kubelet-start --discovery-file "$T/text.conf" $(file_args) || return 1
  err_has "the discovery file $T/text.conf: not a kubeconfig: its top level is not a mapping" || return 1
  ! grep -q 'around "users"' "$ERR" || fail "the parser's inner words leaked" || return 1
}

t_file_cluster_choice() {
  local data; data=$(base64 -w0 <"$C/ca.crt")
  printf 'clusters:\n- {name: a, cluster: {server: "%s", certificate-authority-data: %s}}\n- {name: b, cluster: {server: "https://127.0.0.2:1", certificate-authority-data: %s}}\n' \
    "$SERVER" "$data" "$data" >"$T/two.yaml"
  kj 4 join --skip-phases preflight,kubelet-start --discovery-file "$T/two.yaml" $(file_args) || return 1
  err_has "no unnamed one and no current-context" || return 1
  printf 'contexts: [{name: c, context: {cluster: a}}]\ncurrent-context: c\n' >>"$T/two.yaml"
  kj 0 join --skip-phases preflight,kubelet-start --discovery-file "$T/two.yaml" $(file_args) -o json || return 1
  jq -e --arg s "$SERVER" '.server == $s' "$OUT" >/dev/null || fail "took the wrong cluster"
}

t_file_refresh_takes_ca_and_keeps_server() {
  # No CA in the file (trust from the system roots): cluster-info's CA is taken;
  # cluster-info names 127.0.0.1, the file localhost: the file's server is kept.
  discovery_doc "https://localhost:$PORT" none >"$T/discovery.yaml"
  SSL_CERT_FILE=$C/ca.crt kj 0 join --skip-phases preflight,kubelet-start --discovery-file "$T/discovery.yaml" $(file_args) -o json || return 1
  err_has "keeping the discovery file's \"https://localhost:$PORT\"" || return 1
  jq -e --arg s "https://localhost:$PORT" '.server == $s and (.caCertificates | length) == 1' "$OUT" >/dev/null \
    || fail "JSON: $(cat "$OUT")" || return 1
  [ -n "$(ca_data_of "$T/kubelet.conf")" ] || fail "cluster-info's CA not written"
}

t_file_refresh_403_and_404_keep_document() {
  new_cluster refresh || return 1
  discovery_doc "$SERVER" none >"$T/discovery.yaml"
  echo 'return 403;' >"$C/nginx/cluster-info.conf"
  stop_nginx "$C"; start_nginx "$C" "$PORT" "$C/server.crt" "$C/server.key" || return 1
  SSL_CERT_FILE=$C/ca.crt kj 0 join --skip-phases preflight,kubelet-start --discovery-file "$T/discovery.yaml" $(file_args) || return 1
  err_has "cluster-info answered 403: keeping the discovery file" || return 1
  [ -z "$(ca_data_of "$T/kubelet.conf")" ] || fail "no CA should be written" || return 1
  : >"$C/nginx/cluster-info.conf"; rm "$C/www/cluster-info"
  stop_nginx "$C"; start_nginx "$C" "$PORT" "$C/server.crt" "$C/server.key" || return 1
  SSL_CERT_FILE=$C/ca.crt kj 0 join --skip-phases preflight,kubelet-start --discovery-file "$T/discovery.yaml" $(file_args) --force || return 1
  err_has "cluster-info answered 404"
}

t_file_refresh_tls_failure() {
  mkca "$T" stranger
  discovery_doc "$SERVER" "$T/stranger.crt" >"$T/discovery.yaml"
  kj 4 join --skip-phases preflight,kubelet-start --discovery-file "$T/discovery.yaml" $(file_args) || return 1
  err_has "against the pinned CA failed" || return 1
  [ ! -e "$T/kubelet.conf" ] || fail "written after a failed refresh"
}

t_file_refresh_down_times_out() {
  local dead; dead=$("$TOOLS/freeport")
  discovery_doc "https://127.0.0.1:$dead" "$C/ca.crt" >"$T/discovery.yaml"
  kj 3 join --skip-phases preflight,kubelet-start --discovery-file "$T/discovery.yaml" $(file_args 1500ms) || return 1
  err_has "timed out after 1.5s"
}

t_file_pins() {
  discovery_doc "$SERVER" "$C/ca.crt" >"$T/discovery.yaml"
  kj 0 join --skip-phases preflight,kubelet-start --discovery-file "$T/discovery.yaml" $(file_args) --discovery-token-ca-cert-hash "$ROOT_PIN" || return 1
  err_has "matches pin $ROOT_PIN" || return 1
  kj 4 join --skip-phases preflight,kubelet-start --discovery-file "$T/discovery.yaml" $(file_args) --force \
    --discovery-token-ca-cert-hash "sha256:$(printf 'cd%.0s' {1..32})" || return 1
  err_has "no certificate of the CA bundle matches"
}

t_file_usage_errors() {
  discovery_doc "$SERVER" "$C/ca.crt" >"$T/discovery.yaml"
  kj 2 join --skip-phases preflight,kubelet-start --discovery-file "$T/discovery.yaml" --kubeconfig-out "$T/k.conf" || return 1
  err_has "--tls-bootstrap-token" || return 1
  kj 2 join --skip-phases preflight,kubelet-start "127.0.0.1:$PORT" --discovery-file "$T/discovery.yaml" $(file_args) || return 1
  kj 2 join --skip-phases preflight,kubelet-start --discovery-file "$T/discovery.yaml" $(file_args) --discovery-token-unsafe-skip-ca-verification
}

# --config: JoinConfigurations written from kubeadm's documented fields.
t_config_token_v1beta3_and_v1beta4() {
  local v
  for v in v1beta3 v1beta4; do
    {
      printf 'apiVersion: kubeadm.k8s.io/%s\nkind: JoinConfiguration\nnodeRegistration:\n  name: node-1\n' "$v"
      printf 'discovery:\n  bootstrapToken:\n    token: %s\n    apiServerEndpoint: "[::1]:%s"\n' "$(cat "$C/token")" "$PORT"
      printf '    caCertHashes:\n    - %s\n' "$PIN"
      if [ $v = v1beta3 ]; then printf '  timeout: 30s\n'; else printf 'timeouts:\n  discovery: 30s\n'; fi
      printf -- '---\napiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n'
    } >"$T/$v.yaml"
    chmod 600 "$T/$v.yaml"
    kj 0 join --skip-phases preflight,kubelet-start --config "$T/$v.yaml" --kubeconfig-out "$T/$v.conf" -o json || return 1
    err_has "Skipping KubeletConfiguration" || return 1
    err_has "timeout 30s" || return 1
    jq -e '.discovery == "token"' "$OUT" >/dev/null || fail "$v: $(cat "$OUT")" || return 1
  done
}

t_config_file_v1beta3_and_v1beta4() {
  local v
  discovery_doc "$SERVER" "$C/ca.crt" >"$T/discovery.yaml"
  for v in v1beta3 v1beta4; do
    printf 'apiVersion: kubeadm.k8s.io/%s\nkind: JoinConfiguration\ndiscovery:\n  file:\n    kubeConfigPath: %s\n  tlsBootstrapToken: %s\n' \
      "$v" "$T/discovery.yaml" "$(cat "$C/token")" >"$T/$v.yaml"
    kj 0 join --skip-phases preflight,kubelet-start --config "$T/$v.yaml" --kubeconfig-out "$T/$v.conf" || return 1
    kubectl --kubeconfig "$T/$v.conf" get --raw "$CLUSTER_INFO_PATH" >/dev/null || fail "kubectl ($v)" || return 1
  done
}

t_config_rejections() {
  printf 'apiVersion: kubeadm.k8s.io/v1beta4\nkind: JoinConfiguration\ndiscovery:\n  bootstrapToken:\n    token: %s\n    apiServerEndpoint: "127.0.0.1:%s"\n    unsafeSkipCAVerification: true\n' \
    "$(cat "$C/token")" "$PORT" >"$T/ok.yaml"
  kj 2 join --skip-phases preflight,kubelet-start --config "$T/ok.yaml" "127.0.0.1:$PORT" || return 1
  err_has "--config cannot be mixed with ENDPOINT arguments" || return 1
  # What kubeadm refuses beside --config is refused by name.
  local flag
  for flag in "--token-file $C/token" "--discovery-token-ca-cert-hash $PIN" "--cri-socket /run/x.sock" \
    "--ca-cert-path $T/ca.crt" "--discovery-timeout 1m" "--tls-bootstrap-token abcdef.0123456789abcdef"; do
    # shellcheck disable=SC2086
    kj 2 join --skip-phases preflight,kubelet-start --config "$T/ok.yaml" $flag || return 1
    err_has "--config cannot be mixed with ${flag%% *} (as kubeadm" || return 1
  done
  sed 's/v1beta4/v1beta2/' "$T/ok.yaml" >"$T/old.yaml"
  kj 2 join --skip-phases preflight,kubelet-start --config "$T/old.yaml" || return 1
  err_has "supported: kubeadm.k8s.io/v1beta3, kubeadm.k8s.io/v1beta4" || return 1
  printf '  caCertHash: []\n' >>"$T/ok.yaml"; sed -i 's/^  caCertHash/    caCertHash/' "$T/ok.yaml"
  kj 2 join --skip-phases preflight,kubelet-start --config "$T/ok.yaml" || return 1
  err_has "unknown field discovery.bootstrapToken.caCertHash at line 8, column 5"
}

t_config_with_the_flags_kubeadm_allows() {
  # --node-name over nodeRegistration.name, --skip-phases instead of the
  # file's skipPhases, the ignore lists added up, -v and --dry-run: as kubeadm.
  printf 'apiVersion: kubeadm.k8s.io/v1beta4\nkind: JoinConfiguration\ndiscovery:\n  bootstrapToken:\n    token: %s\n    apiServerEndpoint: "127.0.0.1:%s"\n    caCertHashes: ["%s"]\nnodeRegistration:\n  name: from-file\nskipPhases: [preflight]\n' \
    "$(cat "$C/token")" "$PORT" "$PIN" >"$T/join.yaml"
  kj 0 join --config "$T/join.yaml" --skip-phases preflight,kubelet-start --node-name from-flag -v 1 \
    --kubeconfig-out "$T/k.conf" -o json || return 1
  jq -e '.nodeName == "from-flag" and .node.phases == []' "$OUT" >/dev/null || fail "$(jq -c '.nodeName, .node' "$OUT")" || return 1
  kj 0 join --config "$T/join.yaml" --skip-phases preflight,kubelet-start --dry-run --kubeconfig-out "$T/dry.conf" || return 1
  [ ! -e "$T/dry.conf" ] || fail "--dry-run wrote the kubeconfig" || return 1
  kj 2 join --config "$T/join.yaml" --skip-phases preflight,kubelet-start --node-name Bad_Name --kubeconfig-out "$T/k.conf" || return 1
  err_has '--node-name "bad_name" is not a valid node name' || return 1
  # --kubeconfig (kubeadm's admin kubeconfig) is allowed beside it and said once not to apply.
  kj 0 join --config "$T/join.yaml" --skip-phases preflight,kubelet-start --kubeconfig /etc/kubernetes/admin.conf \
    --kubeconfig=/x --kubeconfig-out "$T/k2.conf" || return 1
  [ "$(grep -c "kubeconfig is kubeadm's admin kubeconfig" "$ERR")" = 1 ] || fail "--kubeconfig: $(cat "$ERR")" || return 1
  # What kubeadm refuses beside --config is refused, naming the flag.
  local f
  for f in "--patches $T" "--cri-socket /run/x.sock" "--token-file $C/token" "--discovery-timeout 1m"; do
    kj 2 join --config "$T/join.yaml" --skip-phases preflight,kubelet-start $f --kubeconfig-out "$T/k3.conf" || return 1
    err_has "${f%% *}" || return 1
    [ ! -e "$T/k3.conf" ] || fail "$f: written" || return 1
  done
}

# A config in the token shape, with extra top-level YAML appended by the caller.
token_config() { # VERSION EXTRA
  printf 'apiVersion: kubeadm.k8s.io/%s\nkind: JoinConfiguration\n%s\ndiscovery:\n  bootstrapToken:\n    token: %s\n    apiServerEndpoint: "127.0.0.1:%s"\n    caCertHashes: ["%s"]\n' \
    "$1" "$2" "$(cat "$C/token")" "$PORT" "$PIN"
}

# config_refused VERSION EXTRA MESSAGE: the config is refused (exit 2) with MESSAGE, nothing written.
config_refused() {
  token_config "$1" "$2" >"$T/refused.yaml"
  kj 2 join --skip-phases preflight,kubelet-start --config "$T/refused.yaml" --kubeconfig-out "$T/cp.conf" || return 1
  err_has "$3"
}

t_config_every_field_honoured_or_refused() {
  # dryRun writes nothing; the kubeconfig and the CA caCertPath names are shown, the token masked.
  token_config v1beta4 "dryRun: true
caCertPath: $T/pki/ca.crt" >"$T/dry.yaml"
  kj 0 join --skip-phases preflight,kubelet-start --config "$T/dry.yaml" --kubeconfig-out "$T/dry.conf" || return 1
  [ ! -e "$T/dry.conf" ] && [ ! -e "$T/pki/ca.crt" ] || fail "dryRun wrote a file" || return 1
  grep -q "tls-bootstrap-token-user" "$OUT" && grep -qF "$T/pki/ca.crt" "$OUT" ||
    fail "dryRun printed no kubeconfig, or not the CA" || return 1
  # caCertPath means what --ca-cert-path means: where the CA goes, written
  # by kubelet-start and by discovery alone; nodeRegistration.name is kept.
  token_config v1beta3 "caCertPath: $T/pki/ca.crt
nodeRegistration:
  name: worker-7
  criSocket: unix:///run/containerd/containerd.sock
  taints: []
  kubeletExtraArgs: {node-labels: a=b}
skipPhases: [preflight]
patches:
  directory: /etc/kubeadm/patches" >"$T/full.yaml"
  kj 0 join --skip-phases preflight,kubelet-start --config "$T/full.yaml" --kubeconfig-out "$T/full.conf" -o json || return 1
  [ "$(stat -c %a "$T/pki/ca.crt")" = 644 ] && cmp -s "$T/pki/ca.crt" "$C/ca.crt" || fail "caCertPath was not written" || return 1
  jq -e --arg p "$T/pki/ca.crt" '.nodeName == "worker-7" and .caCertPath == $p' "$OUT" >/dev/null || fail "$(cat "$OUT")" || return 1
  rm -f "$T/pki/ca.crt"
  # --ca-cert-path, the same: written, 0644.
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" --ca-cert-path "$T/pki/ca.crt" \
    -o json || return 1
  [ "$(stat -c %a "$T/pki/ca.crt")" = 644 ] && cmp -s "$T/pki/ca.crt" "$C/ca.crt" || fail "ca.crt: $(stat -c %a "$T/pki/ca.crt")" || return 1
  err_has "[discovery] Wrote the cluster CA to $T/pki/ca.crt (mode 0644)" || return 1
  local f
  # The node's registration, skipPhases and patches are a worker join's
  # (docs/join.md): none is called ignored; the patches are kubelet-start's,
  # which discovery alone does not run, so the directory is not read.
  ! grep -q "does not apply\|\[patches\]" "$ERR" || fail "a field kjoin uses was called ignored: $(cat "$ERR")" || return 1
  config_refused v1beta4 $'patches:\n  directory: ""' "patches.directory at line 4 is empty" || return 1
  config_refused v1beta4 $'patches:\n  dir: /x' "unknown field patches.dir" || return 1
  config_refused v1beta4 $'nodeRegistration:\n  taints: [{key: a, effect: Sometimes}]' \
    "nodeRegistration.taints at line 4: a taint needs a key, an effect" || return 1
  config_refused v1beta4 $'nodeRegistration:\n  kubeletExtraArgs: {node-labels: a=b}' \
    "nodeRegistration.kubeletExtraArgs at line 4 must be a list of {name, value} in kubeadm.k8s.io/v1beta4" || return 1
  config_refused v1beta3 $'nodeRegistration:\n  kubeletExtraArgs: [{name: a, value: b}]' \
    "must be a map of name: value in kubeadm.k8s.io/v1beta3" || return 1
  config_refused v1beta4 "skipPhases: [kubelet-strat]" 'unknown phase "kubelet-strat"' || return 1
  config_refused v1beta4 $'nodeRegistration:\n  ignorePreflightErrors: all' \
    "nodeRegistration.ignorePreflightErrors at line 4 must be a list" || return 1
  # A bad certificate key, an unknown field and a field of the other version are refused by name.
  config_refused v1beta4 $'controlPlane:\n  certificateKey: abc' "controlPlane.certificateKey at line 4, column 19: the certificate key must be 64 hex digits" || return 1
  config_refused v1beta4 "discoveryy: {}" "unknown field JoinConfiguration.discoveryy at line 3" || return 1
  config_refused v1beta3 $'timeouts:\n  discovery: 1m' "unknown field JoinConfiguration.timeouts" || return 1
  config_refused v1beta4 $'nodeRegistration:\n  nmae: x' "unknown field nodeRegistration.nmae" || return 1
  config_refused v1beta4 "dryRun: yes-please" "dryRun at line 3 must be true or false" || return 1
  [ ! -e "$T/cp.conf" ] || fail "a refused config wrote a kubeconfig"
}

t_config_hostile_yaml_stops_at_once() {
  python3 -c "print('a: ' + '[' * 80000 + ']' * 80000)" >"$T/deep.yaml"
  local start=$SECONDS
  kj 2 join --skip-phases preflight,kubelet-start --config "$T/deep.yaml" || return 1
  err_has "nests deeper than 64 levels" || return 1
  [ $((SECONDS - start)) -le 2 ] || fail "took $((SECONDS - start))s" || return 1
  python3 -c "print('clusters: ' + '{a: ' * 100000 + '}' * 100000)" >"$T/deep-discovery.yaml"
  kj 4 join --skip-phases preflight,kubelet-start --discovery-file "$T/deep-discovery.yaml" $(file_args 2s) || return 1
  err_has "nests deeper than 64 levels" || return 1
  [ $((SECONDS - start)) -le 4 ] || fail "took $((SECONDS - start))s" || return 1
  printf 'apiVersion: v1\nkind: Config\n---\napiVersion: v1\nkind: Config\n' >"$T/two.yaml"
  kj 4 join --skip-phases preflight,kubelet-start --discovery-file "$T/two.yaml" $(file_args) || return 1
  err_has "a second YAML document at line 4" || return 1
}

t_ca_cert_path_flag() {
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" --kubeconfig-out "$T/k.conf" --ca-cert-path "$T/etc/pki/ca.crt" || return 1
  [ "$(stat -c %a "$T/etc/pki/ca.crt")" = 644 ] || fail "mode" || return 1
  cmp -s "$T/etc/pki/ca.crt" "$C/ca.crt" || fail "not the CA" || return 1
  err_has "the cluster CA to $T/etc/pki/ca.crt (mode 0644)" || return 1
  kj 2 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" --kubeconfig-out "$T/k.conf" --ca-cert-path "" || return 1
  err_has "--ca-cert-path is empty"
}

t_killed_runs_leftovers_removed() {
  # What a run killed between the temp write and the rename leaves, beside things that are not kjoin's own.
  mkdir -p "$T/etc" "$T/elsewhere"
  echo secret >"$T/etc/k.conf.kjoin-Ab12Cd"; touch -d '1 hour ago' "$T/etc/k.conf.kjoin-Ab12Cd"
  echo keep >"$T/elsewhere/target"
  ln -s "$T/elsewhere/target" "$T/etc/k.conf.kjoin-Sym123"
  echo other >"$T/etc/other.conf.kjoin-Ab12Cd"; touch -d '1 hour ago' "$T/etc/other.conf.kjoin-Ab12Cd"
  echo odd >"$T/etc/k.conf.kjoin-toolong"; touch -d '1 hour ago' "$T/etc/k.conf.kjoin-toolong"
  mkdir "$T/etc/k.conf.kjoin-Dir123"
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" --kubeconfig-out "$T/etc/k.conf" || return 1
  [ ! -e "$T/etc/k.conf.kjoin-Ab12Cd" ] || fail "the leftover is still there" || return 1
  [ -L "$T/etc/k.conf.kjoin-Sym123" ] && [ "$(cat "$T/elsewhere/target")" = keep ] || fail "a symlink was followed or removed" || return 1
  [ -e "$T/etc/other.conf.kjoin-Ab12Cd" ] && [ -e "$T/etc/k.conf.kjoin-toolong" ] && [ -d "$T/etc/k.conf.kjoin-Dir123" ] ||
    fail "removed what is not this output's leftover" || return 1
  [ "$(ls "$T/etc" | grep -c kjoin-)" = 4 ] || fail "$(ls "$T/etc")"
}

# What a power cut after kjoin reported "Wrote" finds: the file whole. Each
# output is a temporary file written, fsynced and closed, renamed over its
# name, then its directory fsynced: the system calls, traced, in that order.
t_file_outputs_are_durable_before_they_are_reported() {
  command -v strace >/dev/null || { fail "strace is missing (make deps installs it)"; return 1; }
  # LeakSanitizer cannot run under ptrace; the other suites check for leaks.
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    strace -f -qq -e trace=openat,fsync,close,renameat -o "$T/trace" "$KJOIN" join --skip-phases preflight,kubelet-start \
    $(join_args) --discovery-token-ca-cert-hash "$PIN" --ca-cert-path "$T/pki/ca.crt" >/dev/null 2>"$T/err" ||
    { fail "join: $(tail -1 "$T/err")"; return 1; }
  awk -F'"' '
    function fd_of(s) { sub(/^[^(]*\(/, "", s); sub(/[,)].*$/, "", s); return s }
    { sub(/^[0-9]+ +/, "") }
    /^openat\(/ && /\.kjoin-/ && /O_CREAT/ { n = split($0, r, "= "); tmp[$2] = r[n] + 0; synced[$2] = 0; next }
    /^fsync\(/ { fd = fd_of($0) + 0
      for (t in tmp) if (tmp[t] == fd && !(t in done)) synced[t] = 1
      for (f in dirfd) if (dirfd[f] == fd) dirsynced[f] = 1; next }
    /^close\(/ { fd = fd_of($0) + 0; for (t in tmp) if (tmp[t] == fd && !(t in done)) closed[t] = 1; next }
    /^renameat\(/ { t = $2; f = $4; done[t] = 1
      if (!synced[t] || !closed[t]) { print "renamed before fsync and close: " f; bad = 1 }
      dirfd[f] = fd_of($0) + 0; renamed[f] = 1 }
    END { for (f in renamed) if (!dirsynced[f]) { print "directory not fsynced after the rename of " f; bad = 1 }
          n = 0; for (f in renamed) n++
          if (n < 2) { print n " renames: want the kubeconfig and the CA"; bad = 1 }
          exit bad }' "$T/trace" >"$T/check" || fail "$(head -3 "$T/check")"
}

# Whether a join is a control-plane join, and where its certificate key
# comes from, is decided once, after the JoinConfiguration is read: a file
# that declares controlPlane takes KJOIN_CERTIFICATE_KEY from the
# environment (download-certs then goes on, to a cluster that has no
# ClusterConfiguration here); --certificate-key beside --config is refused
# as kubeadm refuses it (put it in the file), not with "add --control-plane".
t_config_control_plane_certificate_key_sources() {
  token_config v1beta4 $'controlPlane:\n  localAPIEndpoint: {advertiseAddress: 10.0.0.12}' >"$T/cp.yaml"
  KJOIN_CERTIFICATE_KEY=$(printf '%064d' 7) kj 2 join phase control-plane-prepare/download-certs --config "$T/cp.yaml" || return 1
  ! grep -q "download-certs needs" "$ERR" || fail "KJOIN_CERTIFICATE_KEY was not taken: $(cat "$ERR")" || return 1
  err_has "kubeadm ClusterConfiguration" || return 1
  kj 2 join phase control-plane-prepare/download-certs --config "$T/cp.yaml" || return 1
  err_has "download-certs needs controlPlane.certificateKey" || return 1
  kj 2 join --config "$T/cp.yaml" --certificate-key "$(printf '%064d' 7)" || return 1
  err_has "--config cannot be mixed with --certificate-key" || return 1
  ! grep -q "add --control-plane" "$ERR" || fail "the reason given: $(cat "$ERR")"
}

# Every input error comes before preflight, as the flags' do: a discovery
# file that is missing or malformed is said first, and nothing else runs.
# (Preflight, run as root here, would fail on this machine's missing runtime
# and kubelet: those lines must not appear.)
t_file_missing_or_malformed_said_before_preflight() {
  kj 2 join --discovery-file "$T/missing.conf" --token-file "$C/token" || return 1
  err_has "cannot open $T/missing.conf" || return 1
  ! grep -q "^\[preflight\]" "$ERR" || fail "preflight ran first: $(head -2 "$ERR")" || return 1
  printf 'garbage: [' >"$T/bad.conf"
  kj 4 join --discovery-file "$T/bad.conf" --token-file "$C/token" -o json || return 1
  ! grep -q "^\[preflight\]" "$ERR" || fail "preflight ran first: $(head -2 "$ERR")" || return 1
  jq -e '.error.message | test("the discovery file .*bad.conf: not a kubeconfig")' "$OUT" >/dev/null || fail "$(cat "$OUT")"
}
