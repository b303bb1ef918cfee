# The control-plane join's first phase, download-certs, against the real
# API server and the real kubeadm of the release: kubeadm's own upload-certs
# puts the shared certificates in the kube-system/kubeadm-certs Secret,
# kjoin takes them out into a node (in_node: /etc is a copy-on-write view),
# and they are compared with what kubeadm's own download-certs writes in
# another. Sourced by run.sh.

# A fixed key: the fuzz target's seed (testdata/fuzz/kubeadmcerts) is a
# Secret sealed with it.
CP_KEY=0101010101010101010101010101010101010101010101010101010101010101

# cp_shared_pki DIR [CA_DIR]: what kubeadm init makes and upload-certs
# sends: the cluster's CA (or CA_DIR's), the front proxy's CA, the
# service-account key pair and etcd's CA, made by this release's kubeadm.
# With CP_ALG, the CAs kubeadm makes are of that encryptionAlgorithm.
cp_shared_pki() {
  local d=$1 ca=${2:-$E2E_DIR} phase where=(--cert-dir "$1")
  # The CA's key as kubeadm writes keys (SEC1, "EC PRIVATE KEY"): v1.20's
  # kubeadm cannot read the PKCS#8 the suite's openssl made.
  mkdir -p "$d" && cp "$ca/ca.crt" "$d/" && openssl pkey -in "$ca/ca.key" -traditional -out "$d/ca.key" || return 1
  if [ -n "${CP_ALG:-}" ]; then # (--config and --cert-dir do not mix)
    printf 'apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: %s\ncertificatesDir: %s\nencryptionAlgorithm: %s\n' \
      "$E2E_VERSION" "$d" "$CP_ALG" >"$d.yaml" && where=(--config "$d.yaml")
  fi
  for phase in front-proxy-ca sa etcd-ca; do
    "$KBIN/kubeadm" init phase certs "$phase" "${where[@]}" >>"$T/certs.log" 2>&1 ||
      { fail "kubeadm init phase certs $phase: $(tail -2 "$T/certs.log")"; return 1; }
  done
}

# cp_upload DIR [KEY]: kubeadm's upload-certs of DIR's files under KEY.
cp_upload() {
  local api=$E2E_KUBEADM_API
  printf 'apiVersion: %s\nkind: InitConfiguration\ncertificateKey: "%s"\n---\napiVersion: %s\nkind: ClusterConfiguration\nkubernetesVersion: %s\ncertificatesDir: %s\n' \
    "$api" "${2:-$CP_KEY}" "$api" "$E2E_VERSION" "$1" >"$T/upload.yaml"
  "$KBIN/kubeadm" init phase upload-certs --upload-certs --config "$T/upload.yaml" --kubeconfig "$E2E_ADMIN" \
    >"$T/upload.log" 2>&1 || { fail "kubeadm upload-certs: $(tail -2 "$T/upload.log")"; return 1; }
}

# cp_download (in a node): kjoin's download-certs with the key in $T/key.
cp_download() {
  "$KJOIN" join phase control-plane-prepare/download-certs "$E2E_ENDPOINT" --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash "$E2E_PIN" --control-plane --certificate-key-file "$T/key" -o json \
    >"$T/join.out" 2>"$T/join.err"
  echo $? >"$T/join.rc"
}

cp_kubeadm_download() {
  "$KBIN/kubeadm" join phase control-plane-prepare download-certs "$E2E_ENDPOINT" --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash "$E2E_PIN" --control-plane --certificate-key "$(cat "$T/key")" >"$T/kubeadm.out" 2>&1
  echo $? >"$T/kubeadm.rc"
}

cp_key() { printf '%s\n' "$1" >"$T/key" && chmod 0600 "$T/key"; }

# cp_tree NS: the node's /etc/kubernetes/pki and kubeconfigs: each file's path, mode and
# digest. The modes are the newest kubeadm's (keys 0600, the rest 0644);
# v1.20's wrote every file that holds a public key 0600, certificates too,
# so there only paths and digests are compared.
cp_tree() {
  local mode='%m '
  [ "$E2E_MINOR" -ge 30 ] || mode=
  (cd "$T/$1/etc.upper/kubernetes" 2>/dev/null && find pki manifests *.conf -type f -printf "%p $mode" -exec sh -c 'sha256sum <"$1" | cut -c1-16' _ {} \; 2>/dev/null | sort)
}

t_e2e_controlplane_download_certs_as_kubeadm() {
  local rc=0 f
  cp_shared_pki "$T/src" && cp_upload "$T/src" && cp_key "$CP_KEY" || return 1
  NODE_NS=kjoin in_node cp_download
  [ "$(cat "$T/join.rc")" = 0 ] || { fail "download-certs: exit $(cat "$T/join.rc"): $(tail -3 "$T/join.err")"; return 1; }
  for f in ca.crt ca.key front-proxy-ca.crt front-proxy-ca.key sa.pub sa.key etcd/ca.crt etcd/ca.key; do
    cmp -s "$T/src/$f" "$T/kjoin/etc.upper/kubernetes/pki/$f" || { fail "$f is not kubeadm init's"; rc=1; }
  done
  jq -e '.controlPlane.certificatesDir == "/etc/kubernetes/pki" and (.controlPlane.files | length) == 8
      and ([.controlPlane.files[] | select(.path | endswith(".key")) | .mode] | unique) == ["0600"]
      and ([.node.phases[].name] == ["control-plane-prepare"])' "$T/join.out" >/dev/null ||
    { fail "the -o json result: $(cat "$T/join.out")"; rc=1; }
  ! grep -q "$CP_KEY" "$T/join.out" "$T/join.err" || { fail "the certificate key was printed"; rc=1; }
  ! grep -q "BEGIN.*PRIVATE" "$T/join.out" "$T/join.err" || { fail "a private key was printed"; rc=1; }
  # The same files, names and modes as kubeadm's own download-certs writes
  # (which reads the kubelet's ConfigMap too).
  node_setup || return 1
  NODE_NS=kubeadm in_node cp_kubeadm_download
  [ "$(cat "$T/kubeadm.rc")" = 0 ] || { fail "kubeadm's download-certs: $(tail -3 "$T/kubeadm.out")"; return 1; }
  [ "$(cp_tree kjoin)" = "$(cp_tree kubeadm)" ] ||
    { fail "kjoin's files differ from kubeadm's: $(diff <(cp_tree kubeadm) <(cp_tree kjoin) | grep '^[<>]' | tr '\n' ' ')"; rc=1; }
  # Run again: the same files, nothing to do.
  NODE_NS=kjoin in_node cp_download
  [ "$(cat "$T/join.rc")" = 0 ] || { fail "a second download-certs: $(tail -2 "$T/join.err")"; rc=1; }
  [ -z "${CP_SEED_OUT:-}" ] || kc -n kube-system get secret kubeadm-certs -o json >"$CP_SEED_OUT"
  return $rc
}

# Nothing is written unless every value opens and checks out: a wrong key,
# a value changed in the Secret, a Secret whose CA is not the cluster's (as
# a hostile API server or an admin's mistake would give; kubeadm writes it),
# a Secret that is gone, a file already there with other content.
cp_refused() { # CODE TEXT NS: download-certs exits CODE saying TEXT, and writes nothing
  cp_key "${CP_KEY_GIVEN:-$CP_KEY}"
  NODE_NS=$3 in_node cp_download
  local got; got=$(cat "$T/join.rc")
  [ "$got" = "$1" ] && grep -qF -- "$2" "$T/join.err" ||
    { fail "$3: exit $got, want $1 \"$2\": $(tail -2 "$T/join.err")"; return 1; }
  # Nothing but what was there before (the occupied node's sa.key and its directory), in /etc or /var/lib.
  [ -z "$(find "$T/$3/etc.upper" "$T/$3/lib.upper" -mindepth 1 2>/dev/null | grep -v "^$T/$3/etc.upper/kubernetes\(/pki\(/sa.key\)\?\)\?$")" ] ||
    { fail "$3: written: $(find "$T/$3/etc.upper" "$T/$3/lib.upper" -mindepth 1 | tr '\n' ' ')"; return 1; }
  ! grep -q "${CP_KEY_GIVEN:-$CP_KEY}" "$T/join.out" "$T/join.err" || { fail "$3: the key was printed"; return 1; }
}
t_e2e_controlplane_download_certs_refusals_write_nothing() {
  local rc=0
  cp_shared_pki "$T/src" && cp_upload "$T/src" || return 1
  CP_KEY_GIVEN=$(printf '%064d' 2) cp_refused 4 "the certificate key does not open it (another key, or the value was changed): join with the key of the last upload, or upload the certificates again" wrong-key || rc=1
  CP_KEY_GIVEN=0123 cp_refused 2 "must be 64 hex digits" short-key || rc=1
  # A value changed in the Secret: GCM's tag no longer matches.
  local sealed changed
  sealed=$(kc -n kube-system get secret kubeadm-certs -o jsonpath='{.data.sa\.key}')
  changed=$(printf '%s' "$sealed" | base64 -d | python3 -c 'import sys; b=bytearray(sys.stdin.buffer.read()); b[20]^=1; sys.stdout.buffer.write(b)' | base64 -w0)
  kc -n kube-system patch secret kubeadm-certs --type merge -p "{\"data\":{\"sa.key\":\"$changed\"}}" >/dev/null || rc=1
  cp_refused 4 "the Secret's sa.key: the certificate key does not open it" tampered || rc=1
  # Another CA than the one discovery verified.
  mkdir -p "$T/other" && "$KBIN/kubeadm" init phase certs ca --cert-dir "$T/other" >>"$T/certs.log" 2>&1 || rc=1
  cp_shared_pki "$T/src-other" "$T/other" && cp_upload "$T/src-other" || rc=1
  cp_refused 4 "ca.crt in the Secret is not the cluster CA discovery verified" other-ca || rc=1
  # A file already there with other content: refused, and nothing else of the run stays.
  cp_upload "$T/src" || rc=1
  mkdir -p "$T/occupied/etc.upper/kubernetes/pki" && echo other >"$T/occupied/etc.upper/kubernetes/pki/sa.key" &&
    chmod 0600 "$T/occupied/etc.upper/kubernetes/pki/sa.key"
  cp_refused 5 "sa.key" occupied || rc=1
  # The Secret gone (it expires two hours after the upload).
  kc -n kube-system delete secret kubeadm-certs >/dev/null || rc=1
  cp_refused 6 "expires two hours after its upload" expired || rc=1
  return $rc
}

# ---- upload-certs: the shared certificates from a control-plane node ---------

# cp_secret_shape: kubeadm-certs' data keys, its owner's kind and name, and
# the Role's rules and the RoleBinding's roleRef and subjects.
cp_secret_shape() {
  kc -n kube-system get secret kubeadm-certs -o json |
    jq -c '[(.data | keys), (.metadata.ownerReferences | map({kind, apiVersion, controller, blockOwnerDeletion}))]'
  kc -n kube-system get role kubeadm:kubeadm-certs -o json | jq -c .rules
  kc -n kube-system get rolebinding kubeadm:kubeadm-certs -o json | jq -c '[.roleRef, .subjects]'
}

# kjoin's upload-certs where kubeadm's was: the same Secret (keys, owner),
# Role and RoleBinding; the owner a token of two hours with kubeadm's
# description and no usages, its Secret the Secret's controller; and what
# went up opens with the key kjoin printed in kubeadm's own download-certs
# and in kjoin's, the files the node's.
t_e2e_controlplane_upload_certs_as_kubeadm() {
  local rc=0 key id f now expires
  cp_shared_pki "$T/src" && cp_upload "$T/src" || return 1
  local kubeadm_shape; kubeadm_shape=$(cp_secret_shape)
  "$KJOIN" certs upload-certs --cert-dir "$T/src" --kubeconfig "$E2E_ADMIN" >"$T/up.out" 2>"$T/up.err" ||
    { fail "upload-certs: exit $?: $(tail -2 "$T/up.err")"; return 1; }
  # kubeadm's lines, the key last.
  key=$(tail -1 "$T/up.out")
  [ "$(sed -n 1p "$T/up.out")" = '[upload-certs] Storing the certificates in Secret "kubeadm-certs" in the "kube-system" Namespace' ] &&
    [ "$(sed -n 2p "$T/up.out")" = "[upload-certs] Using certificate key:" ] && [[ $key =~ ^[0-9a-f]{64}$ ]] ||
    { fail "the output is not kubeadm's: $(cat "$T/up.out")"; return 1; }
  [ "$(cp_secret_shape)" = "$kubeadm_shape" ] ||
    { fail "the Secret or its Role differ from kubeadm's: $(diff <(echo "$kubeadm_shape") <(cp_secret_shape) | tr '\n' ' ')"; rc=1; }
  # The owner: bootstrap-token-ID, its uid the reference's, two hours, no usage.
  id=$(kc -n kube-system get secret kubeadm-certs -o jsonpath='{.metadata.ownerReferences[0].name}')
  kc -n kube-system get secret "$id" -o json >"$T/owner.json" || { fail "no owner Secret $id"; return 1; }
  [ "$(jq -r .metadata.uid "$T/owner.json")" = "$(kc -n kube-system get secret kubeadm-certs -o jsonpath='{.metadata.ownerReferences[0].uid}')" ] &&
    [ "$(jq -r '.data | keys | join(",")' "$T/owner.json")" = "description,expiration,token-id,token-secret" ] &&
    [ "$(jq -r .data.description "$T/owner.json" | base64 -d)" = "Proxy for managing TTL for the kubeadm-certs secret" ] ||
    { fail "the owner token is not kubeadm's: $(jq -c '.data | keys' "$T/owner.json")"; rc=1; }
  expires=$(date -d "$(jq -r .data.expiration "$T/owner.json" | base64 -d)" +%s); now=$(date +%s)
  [ $((expires - now)) -gt 7100 ] && [ $((expires - now)) -le 7200 ] || { fail "the owner token expires in $((expires - now)) s"; rc=1; }
  ! grep -q "BEGIN.*PRIVATE" "$T/up.out" "$T/up.err" || { fail "a private key was printed"; rc=1; }
  # kubeadm's download-certs opens it with kjoin's key, and so does kjoin's.
  cp_key "$key"
  node_setup || return 1
  NODE_NS=kubeadm in_node cp_kubeadm_download
  [ "$(cat "$T/kubeadm.rc")" = 0 ] || { fail "kubeadm's download-certs with kjoin's upload: $(tail -3 "$T/kubeadm.out")"; return 1; }
  NODE_NS=kjoin in_node cp_download
  [ "$(cat "$T/join.rc")" = 0 ] || { fail "kjoin's download-certs with kjoin's upload: $(tail -3 "$T/join.err")"; rc=1; }
  for f in ca.crt ca.key front-proxy-ca.crt front-proxy-ca.key sa.pub sa.key etcd/ca.crt etcd/ca.key; do
    cmp -s "$T/src/$f" "$T/kubeadm/etc.upper/kubernetes/pki/$f" && cmp -s "$T/src/$f" "$T/kjoin/etc.upper/kubernetes/pki/$f" ||
      { fail "$f did not come down as it went up"; rc=1; }
  done
  # A key given (from a file) is the one used, the Secret made anew (it was gone); -o json names the
  # owner and its expiry.
  kc -n kube-system delete secret kubeadm-certs >/dev/null || rc=1
  cp_key "$CP_KEY"
  # The directory from this node's own kubeadm configuration (--config, as kubeadm's upload-certs reads
  # it), never from the cluster's kubeadm-config.
  printf 'apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\n---\napiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\ncertificatesDir: %s\n' \
    "$T/src" >"$T/local.yaml"
  "$KJOIN" certs upload-certs --config "$T/local.yaml" --kubeconfig "$E2E_ADMIN" --certificate-key-file "$T/key" -o json >"$T/up.json" 2>"$T/up.err" &&
    jq -e --arg k "$CP_KEY" --arg d "$T/src" '.certificateKey == $k and .secret == "kube-system/kubeadm-certs" and (.ownerTokenID | test("^[a-z0-9]{6}$"))
      and (.expires | test("Z$")) and .certDir == $d' "$T/up.json" >/dev/null || { fail "upload-certs -o json with a key: $(cat "$T/up.json" "$T/up.err")"; rc=1; }
  rm -rf "$T/kjoin"
  NODE_NS=kjoin in_node cp_download
  [ "$(cat "$T/join.rc")" = 0 ] || { fail "download-certs with the key given to upload-certs: $(tail -2 "$T/join.err")"; rc=1; }
  kc -n kube-system delete secret kubeadm-certs >/dev/null
  return $rc
}

# Nothing is made in the cluster (no token, no Secret) unless what would go
# up is whole and the node's: no ca.key, a ca.key that is not ca.crt's, a key
# others can read, a client that is no admin; the key is never printed.
cp_upload_refused() { # CODE TEXT DIR [KUBECONFIG]
  local before after
  before=$(kc -n kube-system get secrets -o name | sort)
  "$KJOIN" certs upload-certs --cert-dir "$3" --kubeconfig "${4:-$E2E_ADMIN}" --certificate-key-file "$T/key" >"$T/up.out" 2>"$T/up.err"
  local got=$?
  after=$(kc -n kube-system get secrets -o name | sort)
  [ "$got" = "$1" ] && grep -qF -- "$2" "$T/up.err" || { fail "$3: exit $got, want $1 \"$2\": $(tail -2 "$T/up.err")"; return 1; }
  [ "$before" = "$after" ] || { fail "$3: the cluster's Secrets changed: $(diff <(echo "$before") <(echo "$after") | tr '\n' ' ')"; return 1; }
  ! grep -q "$CP_KEY" "$T/up.out" "$T/up.err" || { fail "$3: the key was printed"; return 1; }
}
t_e2e_controlplane_upload_certs_refusals() {
  local rc=0
  cp_shared_pki "$T/src" && cp_key "$CP_KEY" || return 1
  kc -n kube-system delete secret kubeadm-certs >/dev/null 2>&1
  cp -a "$T/src" "$T/no-ca-key" && rm "$T/no-ca-key/ca.key"
  cp_upload_refused 2 "ca.key" "$T/no-ca-key" || rc=1
  cp -a "$T/src" "$T/foreign-key" && cp "$T/src/front-proxy-ca.key" "$T/foreign-key/ca.key"
  cp_upload_refused 4 "ca.key" "$T/foreign-key" || rc=1
  cp -a "$T/src" "$T/loose" && chmod 0644 "$T/loose/sa.key"
  cp_upload_refused 2 "sa.key" "$T/loose" || rc=1
  # The bootstrap token's kubeconfig: it may read cluster-info, not write Secrets.
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: %s\n    certificate-authority-data: %s\nusers:\n- name: u\n  user:\n    token: abcdef.0123456789abcdef\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n' \
    "$E2E_SERVER" "$(base64 -w0 <"$E2E_CA")" >"$T/token.conf"
  cp_upload_refused 6 "forbidden" "$T/src" "$T/token.conf" || rc=1
  return $rc
}

# ---- certs: the node's own certificates --------------------------------------

CP_NODE=cp-2
CP_ADDR=192.0.2.2

# cp_cluster_names [restore]: the cluster's ClusterConfiguration with names
# of its own (a service subnet, a DNS domain, extra SANs), or as the suite
# made it.
cp_cluster_names() {
  local api=$E2E_KUBEADM_API extra= args='{audit-log-maxage: "7"}'
  [ "$api" != kubeadm.k8s.io/v1beta4 ] || args='[{name: audit-log-maxage, value: "7"}]'
  # etcd: a data directory of the test's (this machine's /var/lib/etcd may be Debian's etcd's)
  [ "${1:-}" != etcd ] || extra="etcd:
  local:
    dataDir: /var/lib/kjoin-e2e-etcd"
  [ "${1:-}" = restore ] || [ "${1:-}" = etcd ] || extra="${CP_ALG:+encryptionAlgorithm: $CP_ALG
}networking:
  serviceSubnet: 10.100.0.0/16
  podSubnet: 10.244.0.0/16
  dnsDomain: example.internal
apiServer:
  certSANs: [lb.example.com, 192.0.2.10]
  extraArgs: $args
etcd:
  local:
    serverCertSANs: [etcd.example.com]
    peerCertSANs: [192.0.2.20]"
  printf 'apiVersion: %s\nkind: InitConfiguration\nnodeRegistration:\n  name: e2e-control-plane\n---\napiVersion: %s\nkind: ClusterConfiguration\nkubernetesVersion: %s\nclusterName: kubernetes\ncontrolPlaneEndpoint: %s\n%s\n' \
    "$api" "$api" "$E2E_VERSION" "$E2E_ENDPOINT" "$extra" >"$T/names.yaml"
  "$KBIN/kubeadm" init phase upload-config kubeadm --config "$T/names.yaml" --kubeconfig "$E2E_ADMIN" \
    >"$T/names.log" 2>&1 || { fail "kubeadm upload-config: $(tail -2 "$T/names.log")"; return 1; }
}

# cp_prepare (in a node): kjoin's control-plane-prepare (download-certs,
# certs, kubeconfig, control-plane; or the steps CP_KJOIN_STEPS names, one
# at a time), with what cp_prepare_in NS wrote for it.
cp_prepare() {
  . "$T/cp.env"
  local key="--certificate-key-file $T/key" step rc=0
  [ -z "${CP_NOKEY:-}" ] || key=
  for step in ${CP_KJOIN_STEPS:-.}; do
    "$KJOIN" join phase control-plane-prepare ${step#.} "$E2E_ENDPOINT" --token abcdef.0123456789abcdef \
      --discovery-token-ca-cert-hash "$E2E_PIN" --control-plane $key --node-name $CP_NODE \
      --apiserver-advertise-address $CP_ADDR -o json ${CP_FLAGS:-} >"$T/join.out" 2>"$T/join.err"
    rc=$?
    [ $rc = 0 ] || break
  done
  echo $rc >"$T/join.rc"
}

# cp_prepare_in NS: kjoin's prepare in node NS, with CP_ADDR, CP_FLAGS,
# CP_NOKEY and CP_KJOIN_STEPS as the caller has them.
cp_prepare_in() {
  declare -p CP_NODE CP_ADDR >"$T/cp.env" &&
    printf 'CP_FLAGS=%q\nCP_NOKEY=%q\nCP_KJOIN_STEPS=%q\n' "${CP_FLAGS:-}" "${CP_NOKEY:-}" "${CP_KJOIN_STEPS:-}" >>"$T/cp.env"
  NODE_NS=$1 in_node cp_prepare
}

# cp_kubeadm_prepare (in a node): kubeadm's own three steps, from a
# JoinConfiguration (its kubeconfig step takes no address flag).
cp_kubeadm_prepare() {
  . "$T/cp.env"
  local p
  [ -s "$T/join.yaml" ] || cp_join_yaml
  for p in ${CP_STEPS:-download-certs certs kubeconfig control-plane}; do
    # (kubeadm before 1.22 takes patches only by its flag, on the control-plane step: v1beta2 has no patches field.)
    "${CP_KUBEADM:-$KBIN/kubeadm}" join phase control-plane-prepare $p --config "$T/join.yaml" \
      ${CP_PATCHES:+$([ "$E2E_MINOR" -ge 22 ] || [ "$p" != control-plane ] || echo --experimental-patches "$CP_PATCHES")} >>"$T/kubeadm.out" 2>&1 ||
      { echo 1 >"$T/kubeadm.rc"; return; }
  done
  echo 0 >"$T/kubeadm.rc"
}

# cp_join_yaml [PORT]: the JoinConfiguration both tools read, for this node
# (a bind port of its own when given).
cp_join_yaml() {
  cat >"$T/join.yaml" <<YAML
apiVersion: $E2E_KUBEADM_API
kind: JoinConfiguration
discovery:
  bootstrapToken:
    apiServerEndpoint: "$E2E_ENDPOINT"
    token: abcdef.0123456789abcdef
    caCertHashes: ["$E2E_PIN"]
nodeRegistration:
  name: $CP_NODE
$([ -z "${CP_CRI:-}" ] || echo "  criSocket: $CP_CRI")
controlPlane:
  certificateKey: "$(cat "$T/key")"
  localAPIEndpoint:
    advertiseAddress: $CP_ADDR
$([ -z "${1:-}" ] || echo "    bindPort: $1")
$([ -z "${CP_PATCHES:-}" ] || printf 'patches:\n  directory: %s\n' "$CP_PATCHES")
YAML
}

# cp_prepare_config (in a node): kjoin's control-plane-prepare from the same
# file (v1.20's kubeadm reads only v1beta2, which kjoin refuses by name: the
# same fields as v1beta3 there, so kjoin reads them as v1beta3).
cp_prepare_config() {
  sed 's#kubeadm.k8s.io/v1beta2#kubeadm.k8s.io/v1beta3#' "$T/join.yaml" >"$T/join-kjoin.yaml"
  "$KJOIN" join phase control-plane-prepare --config "$T/join-kjoin.yaml" -o json >"$T/join.out" 2>"$T/join.err"
  echo $? >"$T/join.rc"
}

# A JoinConfiguration's controlPlane (address, bind port, certificate key):
# kjoin reads the file kubeadm reads and writes what kubeadm writes.
t_e2e_controlplane_prepare_from_a_join_configuration() {
  local rc=0 conf ours theirs
  cp_shared_pki "$T/src" && cp_upload "$T/src" && cp_key "$CP_KEY" || return 1
  declare -p CP_NODE CP_ADDR E2E_KUBEADM_API >"$T/cp.env" && . "$T/cp.env" && cp_join_yaml 6444 || return 1
  NODE_NS=kjoin in_node cp_prepare_config
  [ "$(cat "$T/join.rc")" = 0 ] || { fail "kjoin --config: exit $(cat "$T/join.rc"): $(tail -2 "$T/join.err")"; return 1; }
  : >"$T/kubeadm.out"
  node_setup && NODE_NS=kubeadm in_node cp_kubeadm_prepare
  [ "$(cat "$T/kubeadm.rc")" = 0 ] || { fail "kubeadm --config: $(tail -3 "$T/kubeadm.out")"; return 1; }
  for conf in $CP_CONFS; do
    ours=$(cp_conf_describe kjoin "$conf") theirs=$(cp_conf_describe kubeadm "$conf")
    [ "$ours" = "$theirs" ] ||
      { fail "$conf differs from kubeadm's: $(diff <(echo "$theirs") <(echo "$ours") | grep '^[<>]' | tr '\n' ' ')"; rc=1; }
  done
  ours=$(cp_conf_describe kjoin scheduler.conf | sed -n 2p)
  [ "$ours" = "https://$CP_ADDR:6444" ] || { fail "the bind port is not the scheduler's: $ours"; rc=1; }
  [ "$(cp_describe kjoin apiserver)" = "$(cp_describe kubeadm apiserver)" ] || { fail "apiserver differs"; rc=1; }
  ! grep -q "$CP_KEY" "$T/join.out" "$T/join.err" || { fail "the certificate key was printed"; rc=1; }
  return $rc
}

CP_LEAVES="apiserver apiserver-kubelet-client front-proxy-client etcd/server etcd/peer etcd/healthcheck-client apiserver-etcd-client"

# cp_describe NS LEAF: what kubeadm decides of a certificate: subject,
# issuer, names (in order), key usages, extended ones, basic constraints,
# the key's type and size, its lifetime in days from now; and whether the
# key is the certificate's.
cp_describe() { cp_cert_describe "$T/$1/etc.upper/kubernetes/pki/$2.crt" "$T/$1/etc.upper/kubernetes/pki/$2.key"; }
cp_cert_describe() {
  local f=$1 end e
  [ -f "$f" ] || { echo "$f: missing"; return; }
  end=$(date -d "$(openssl x509 -in "$f" -noout -enddate | cut -d= -f2)" +%s)
  openssl x509 -in "$f" -noout -subject -issuer -nameopt RFC2253
  for e in subjectAltName keyUsage extendedKeyUsage basicConstraints; do # one at a time: Go orders them otherwise
    openssl x509 -in "$f" -noout -ext $e 2>/dev/null | sed 's/^ *//'
  done
  openssl x509 -in "$f" -noout -text | grep -o 'Public-Key: ([0-9]* bit)\|ASN1 OID: [a-z0-9]*' | head -1
  openssl x509 -in "$f" -noout -text | grep -m1 -o 'Signature Algorithm: .*'
  echo "days: $(((end - $(date +%s) + 43200) / 86400))" # rounded: the two were made seconds apart
  [ "$(openssl x509 -in "$f" -noout -pubkey)" = "$(openssl pkey -in "$2" -pubout 2>/dev/null)" ] && echo "key: the certificate's"
}

CP_CONFS="admin.conf controller-manager.conf scheduler.conf"

# cp_conf_describe NS FILE: a kubeconfig as kubeadm decides it: its
# cluster, server, context, user and CA, and its client certificate as above.
cp_conf_describe() {
  local f=$T/$1/etc.upper/kubernetes/$2 j
  [ -f "$f" ] || { echo "$2: missing"; return; }
  j=$("$KUBECTL" --kubeconfig "$f" config view --raw -o json) || { echo "$2: not a kubeconfig"; return; }
  echo "$j" | jq -r '.clusters[0].name, .clusters[0].cluster.server, .contexts[0].name, .contexts[0].context.cluster,
    .contexts[0].context.user, ."current-context", .users[0].name, (.clusters | length), (.users | length),
    (.clusters[0].cluster["certificate-authority-data"] | @base64d | rtrimstr("\n") == $ca)' --arg ca "$(cat "$T/src/ca.crt")"
  echo "$j" | jq -r '.users[0].user["client-certificate-data"] | @base64d' >"$T/conf.crt"
  echo "$j" | jq -r '.users[0].user["client-key-data"] | @base64d' >"$T/conf.key"
  cp_cert_describe "$T/conf.crt" "$T/conf.key"
}

cp_no_digest() { awk '{NF--; print}'; }

# cp_manifest NS COMPONENT: the static Pod manifest as JSON, keys sorted,
# without what serializing a Pod adds (status, creationTimestamp).
cp_manifest() {
  local f=$T/$1/etc.upper/kubernetes/manifests/$2.yaml
  [ -f "$f" ] || { echo "$2.yaml: missing"; return; }
  kc create --dry-run=client --validate=false -o json -f "$f" 2>&1 | jq -S 'del(.status, .metadata.creationTimestamp)' 2>&1
}

# kubeadm's patches for every target of a joining control-plane node: the
# same directory given to both tools (kjoin's --patches, kubeadm's
# JoinConfiguration), the three static Pods compared field by field.
t_e2e_controlplane_patches_as_kubeadm() {
  local rc=0 d=$T/patches
  mkdir -p "$d"
  cat >"$d/kube-apiserver.yaml" <<'P'
spec:
  containers:
  - name: kube-apiserver
    resources: {requests: {memory: 512Mi}}
    env: [{name: GOMAXPROCS, value: "2"}]
    volumeMounts: [{name: audit, mountPath: /var/log/kubernetes/audit}]
  volumes: [{name: audit, hostPath: {path: /var/log/kubernetes/audit, type: DirectoryOrCreate}}]
P
  printf 'metadata:\n  labels:\n    kjoin.test/patched: "yes"\n' >"$d/kube-scheduler+merge.yaml"
  printf -- '- {op: add, path: /spec/containers/0/command/-, value: --v=2}\n' >"$d/kube-controller-manager1+json.yaml"
  printf 'metadata: {annotations: {kjoin.test/first: "1"}}\n' >"$d/kube-controller-manager0.yaml"
  cp_shared_pki "$T/src" && cp_upload "$T/src" && cp_key "$CP_KEY" && cp_cluster_names || return 1
  CP_PATCHES=$d CP_FLAGS="--patches $d" cp_certs_compare || rc=1
  local m; m=$(cp_manifest kjoin kube-apiserver)
  [[ $m == *'"GOMAXPROCS"'* && $m == *'/var/log/kubernetes/audit'* && $m == *'"512Mi"'* ]] &&
    [[ $(cp_manifest kjoin kube-controller-manager) == *'"--v=2"'* ]] || { fail "the patches did not reach kjoin's Pods"; rc=1; }
  cp_cluster_names restore || rc=1
  return $rc
}

t_e2e_controlplane_certs_as_kubeadm() {
  local rc=0
  cp_shared_pki "$T/src" && cp_upload "$T/src" && cp_key "$CP_KEY" && cp_cluster_names && cp_certs_compare || rc=1
  # kubeadm's own certificate tool reads kjoin's node as it reads kubeadm's: the same rows (each
  # certificate and kubeconfig, its CA, externally managed or not), none missing that kubeadm's has.
  local ours theirs
  NODE_NS=kjoin in_node cp_check_expiration && ours=$(cat "$T/expiration.rows")
  NODE_NS=kubeadm in_node cp_check_expiration && theirs=$(cat "$T/expiration.rows")
  [ -n "$ours" ] && [ "$ours" = "$theirs" ] ||
    { fail "kubeadm certs check-expiration on kjoin's node: $(diff <(echo "$theirs") <(echo "$ours") | tr '\n' ' ')"; rc=1; }
  grep -q "^apiserver-kubelet-client " <<<"$ours" || { fail "check-expiration listed no leaf: $ours"; rc=1; }
  # kubeadm certs renew all renews kjoin's node as it renews its own: every leaf and kubeconfig made
  # anew, and what they are (names, SANs, usages, lifetime, CA) the same on both nodes.
  local before after leaf conf
  before=$(openssl x509 -in "$T/kjoin/etc.upper/kubernetes/pki/apiserver.crt" -noout -serial)
  NODE_NS=kjoin in_node cp_renew && [ "$(cat "$T/renew.rc")" = 0 ] ||
    { fail "kubeadm certs renew all on kjoin's node: $(tail -3 "$T/renew.out")"; rc=1; }
  NODE_NS=kubeadm in_node cp_renew && [ "$(cat "$T/renew.rc")" = 0 ] ||
    { fail "kubeadm certs renew all on kubeadm's node: $(tail -3 "$T/renew.out")"; rc=1; }
  after=$(openssl x509 -in "$T/kjoin/etc.upper/kubernetes/pki/apiserver.crt" -noout -serial)
  [ "$before" != "$after" ] || { fail "kubeadm certs renew all did not renew kjoin's apiserver.crt"; rc=1; }
  for leaf in $CP_LEAVES; do
    ours=$(cp_describe kjoin "$leaf") theirs=$(cp_describe kubeadm "$leaf")
    [ "$ours" = "$theirs" ] || { fail "$leaf after renewal: $(diff <(echo "$theirs") <(echo "$ours") | grep '^[<>]' | tr '\n' ' ')"; rc=1; }
  done
  for conf in $CP_CONFS; do
    ours=$(cp_conf_describe kjoin "$conf") theirs=$(cp_conf_describe kubeadm "$conf")
    [ "$ours" = "$theirs" ] || { fail "$conf after renewal: $(diff <(echo "$theirs") <(echo "$ours") | grep '^[<>]' | tr '\n' ' ')"; rc=1; }
  done
  cp_cluster_names restore || rc=1
  return $rc
}

# cp_renew (in a node): kubeadm certs renew all, its output and exit code.
cp_renew() { "$KBIN/kubeadm" certs renew all >"$T/renew.out" 2>&1; echo $? >"$T/renew.rc"; }

# cp_check_expiration (in a node): kubeadm certs check-expiration's rows
# (name, CA or residual time, externally managed), and its exit code.
cp_check_expiration() {
  "$KBIN/kubeadm" certs check-expiration >"$T/expiration.out" 2>&1
  local rc=$?
  awk 'NF >= 3 && $1 !~ /^(CERTIFICATE|\[|[IWEF][0-9][0-9][0-9][0-9]$)/ {print $1, $(NF-1), $NF}' "$T/expiration.out" >"$T/expiration.rows"
  echo "exit $rc" >>"$T/expiration.rows"
}
cp_certs_compare() {
  local rc=0 leaf api
  cp_prepare_in kjoin
  [ "$(cat "$T/join.rc")" = 0 ] || { fail "control-plane-prepare: exit $(cat "$T/join.rc"): $(tail -3 "$T/join.err")"; return 1; }
  : >"$T/kubeadm.out"
  local CP_KUBEADM=${CP_KUBEADM:-$KBIN/kubeadm} CP_VERSION=${CP_VERSION:-$E2E_VERSION}
  local CP_STEPS=${CP_STEPS:-download-certs certs kubeconfig control-plane} CP_PATCHES=${CP_PATCHES:-}
  node_setup && declare -p CP_NODE CP_ADDR E2E_KUBEADM_API CP_KUBEADM CP_STEPS CP_PATCHES >"$T/cp.env" &&
    (. "$T/cp.env"; cp_join_yaml) &&
    NODE_NS=kubeadm in_node cp_kubeadm_prepare
  [ "$(cat "$T/kubeadm.rc")" = 0 ] || { fail "kubeadm's control-plane-prepare: $(tail -3 "$T/kubeadm.out")"; return 1; }
  local ours theirs
  for leaf in $CP_LEAVES; do
    ours=$(cp_describe kjoin "$leaf") theirs=$(cp_describe kubeadm "$leaf")
    [ "$ours" = "$theirs" ] ||
      { fail "$leaf differs from kubeadm's: $(diff <(echo "$theirs") <(echo "$ours") | grep '^[<>]' | tr '\n' ' ')"; rc=1; }
  done
  local conf
  for conf in $CP_CONFS; do
    ours=$(cp_conf_describe kjoin "$conf") theirs=$(cp_conf_describe kubeadm "$conf")
    case $conf:$(echo "$ours" | tr '\n' ' ') in # described for real, not two failures alike
    admin.conf:"kubernetes https://$E2E_ENDPOINT kubernetes-admin@kubernetes "*" true subject="*"key: the certificate's "|\
    *.conf:"kubernetes https://$CP_ADDR:6443 system:kube-"*" true subject="*"key: the certificate's ") ;;
    *) fail "$conf is not what kubeadm writes: $(echo "$ours" | head -12 | tr '\n' ' ')"; rc=1 ;;
    esac
    [ "$ours" = "$theirs" ] ||
      { fail "$conf differs from kubeadm's: $(diff <(echo "$theirs") <(echo "$ours") | grep '^[<>]' | tr '\n' ' ')"; rc=1; }
  done
  local comp
  [ -z "${CP_NO_MANIFESTS:-}" ] || return $rc # a release whose static Pods kjoin does not write (refused by name)
  for comp in kube-apiserver kube-controller-manager kube-scheduler; do
    ours=$(cp_manifest kjoin $comp) theirs=$(cp_manifest kubeadm $comp)
    [ -n "$ours" ] && [ "$ours" = "$theirs" ] ||
      { fail "$comp.yaml differs from kubeadm's: $(diff <(echo "$theirs") <(echo "$ours") | grep '^[<>]' | head -20 | tr '\n' ' ')"; rc=1; }
  done
  # The manifests are the cluster's and this node's, not defaults.
  local want ours_all
  ours_all=$(cp_manifest kjoin kube-apiserver; cp_manifest kjoin kube-controller-manager)
  for want in "--advertise-address=$CP_ADDR" --audit-log-maxage=7 --service-cluster-ip-range=10.100.0.0/16 \
    --cluster-cidr=10.244.0.0/16 "/kube-apiserver:$CP_VERSION"; do
    case $ours_all in *"$want"*) ;; *) fail "kjoin's manifests lack $want"; rc=1 ;; esac
  done
  # admin.conf works: kubectl as kubernetes-admin through the cluster's endpoint
  # (the suite's API server is where controlPlaneEndpoint points).
  "$KUBECTL" --kubeconfig "$T/kjoin/etc.upper/kubernetes/admin.conf" get --raw /version >/dev/null 2>"$T/kubectl.err" ||
    { fail "kjoin's admin.conf does not reach the API server: $(tail -1 "$T/kubectl.err")"; rc=1; }
  # The names are the cluster's own, not defaults (a comparison of two
  # that both ignored the ClusterConfiguration would pass).
  api=$(cp_describe kjoin apiserver)$(cp_describe kjoin etcd/server)$(cp_describe kjoin etcd/peer)
  case $api in
  *DNS:kubernetes.default.svc.example.internal*DNS:lb.example.com*"IP Address:10.100.0.1, IP Address:$CP_ADDR"*DNS:etcd.example.com*"IP Address:192.0.2.20"*) ;;
  *) fail "kjoin's names are not the cluster's: $(echo "$api" | grep DNS)"; rc=1 ;;
  esac
  # The same files and modes as kubeadm's.
  [ "$(cp_tree kjoin | cp_no_digest)" = "$(cp_tree kubeadm | cp_no_digest)" ] ||
    { fail "kjoin's files differ from kubeadm's: $(diff <(cp_tree kubeadm | cp_no_digest) <(cp_tree kjoin | cp_no_digest) | grep '^[<>]' | tr '\n' ' ')"; rc=1; }
  jq -e '(.controlPlane.files | length) == 28 and .controlPlane.advertiseAddress == "192.0.2.2"' "$T/join.out" >/dev/null ||
    { fail "the -o json result: $(jq -c .controlPlane "$T/join.out")"; rc=1; }
  ! grep -q "BEGIN.*PRIVATE" "$T/join.out" "$T/join.err" || { fail "a private key was printed"; rc=1; }
  # Run again: every pair kept as it is; and kubeadm's own pairs are kept too.
  local before; before=$(cp_tree kjoin)
  cp_prepare_in kjoin
  [ "$(cat "$T/join.rc")" = 0 ] && [ "$(cp_tree kjoin)" = "$before" ] && [ "$(grep -c 'Using the existing' "$T/join.err")" = 10 ] ||
    { fail "a second run changed the files or did not keep them: exit $(cat "$T/join.rc"), $(grep -c 'Using the existing' "$T/join.err") kept: $(grep -v '^\[' "$T/join.err" | tail -2)"; rc=1; }
  before=$(cp_tree kubeadm)
  cp_prepare_in kubeadm
  [ "$(cat "$T/join.rc")" = 0 ] && [ "$(cp_tree kubeadm)" = "$before" ] ||
    { fail "kjoin did not keep kubeadm's pairs: exit $(cat "$T/join.rc"): $(grep -v '^\[' "$T/join.err" | tail -2)"; rc=1; }
  # Another address: the pairs that name it are no longer what this node needs.
  CP_ADDR=192.0.2.3 cp_certs_refused 2 "apiserver.crt is already there and it lacks names this node needs" kjoin || rc=1
  return $rc
}

# cp_leaf_tree NS: the node's own pairs (not the shared CAs).
cp_leaf_tree() { cp_tree "$1" | grep -E '(apiserver|client|server|peer)\.(crt|key) '; }

# cp_certs_refused CODE TEXT NS: kjoin's prepare exits CODE saying TEXT and
# leaves the node's own pairs as they were.
cp_certs_refused() {
  local before; before=$(cp_leaf_tree "$3")
  cp_prepare_in "$3"
  local got; got=$(cat "$T/join.rc")
  [ "$got" = "$1" ] && grep -qF -- "$2" "$T/join.err" ||
    { fail "$3: exit $got, want $1 \"$2\": $(tail -2 "$T/join.err")"; return 1; }
  [ "$(cp_leaf_tree "$3")" = "$before" ] || { fail "$3: the node's pairs changed: $(cp_leaf_tree "$3" | tr '\n' ' ')"; return 1; }
}
t_e2e_controlplane_certs_refusals() {
  local rc=0
  cp_shared_pki "$T/src" && cp_upload "$T/src" && cp_key "$CP_KEY" || return 1
  # No certificate key and no CA on disk: nothing to sign with.
  CP_NOKEY=1 cp_certs_refused 2 "ca.crt is missing" nokey || rc=1
  # Another cluster's CAs on disk (made by kubeadm, no certificate key to
  # download the right ones): the trust check refuses them, exit 4, before
  # any pair or kubeconfig is made.
  local o=$T/othercluster/etc.upper/kubernetes/pki
  mkdir -p "$o" || rc=1
  for phase in ca front-proxy-ca sa etcd-ca; do
    "$KBIN/kubeadm" init phase certs "$phase" --cert-dir "$o" >>"$T/certs.log" 2>&1 || { fail "kubeadm $phase"; rc=1; }
  done
  CP_NOKEY=1 cp_certs_refused 4 "ca.crt is not the cluster CA discovery verified" othercluster || rc=1
  [ ! -e "$o/../admin.conf" ] || { fail "othercluster: admin.conf written"; rc=1; }
  # A pair of another CA's where apiserver goes: refused by name after
  # download-certs wrote the shared CAs, which the run takes back (exit 7).
  local f=$T/foreign/etc.upper/kubernetes/pki/apiserver
  mkdir -p "${f%/*}" && openssl req -x509 -newkey rsa:2048 -nodes -keyout "$f.key" -out "$f.crt" \
    -subj /CN=kube-apiserver -days 2 2>/dev/null && chmod 0600 "$f.key" || rc=1
  cp_certs_refused 7 "apiserver.crt is already there and it is not signed by ca" foreign || rc=1
  [ ! -e "${f%/*}/ca.key" ] || { fail "foreign: the downloaded CA key was left"; rc=1; }
  # Asked to replace it, the join replaces it with kubeadm's.
  CP_FLAGS=--force cp_prepare_in foreign
  [ "$(cat "$T/join.rc")" = 0 ] && openssl verify -CAfile "$T/src/ca.crt" "$T/foreign/etc.upper/kubernetes/pki/apiserver.crt" >/dev/null ||
    { fail "--force did not replace the foreign pair: exit $(cat "$T/join.rc"): $(grep -v '^\[certs\]' "$T/join.err" | tail -3)"; rc=1; }
  # An admin.conf there for another server: refused by name; the node's
  # other kubeconfigs are not written, what the run wrote is taken back.
  local k=$T/oldconf/etc.upper/kubernetes
  mkdir -p "$k" && sed 's#server: .*#server: https://192.0.2.99:6443#' "$E2E_ADMIN" >"$k/admin.conf" && chmod 0600 "$k/admin.conf" || rc=1
  cp_prepare_in oldconf
  [ "$(cat "$T/join.rc")" = 7 ] && grep -qF "admin.conf is already there and its server is https://192.0.2.99:6443" "$T/join.err" &&
    [ ! -e "$k/pki/ca.key" ] ||
    { fail "oldconf: exit $(cat "$T/join.rc"): $(tail -1 "$T/join.err")"; rc=1; }
  [ ! -e "$k/controller-manager.conf" ] && [ ! -e "$k/scheduler.conf" ] && grep -q 192.0.2.99 "$k/admin.conf" ||
    { fail "oldconf: a kubeconfig was written or replaced"; rc=1; }
  # Replaced when asked: the same run with --force ends with kubeadm's admin.conf.
  CP_FLAGS=--force cp_prepare_in oldconf
  [ "$(cat "$T/join.rc")" = 0 ] && ! grep -q 192.0.2.99 "$k/admin.conf" && [ -e "$k/scheduler.conf" ] ||
    { fail "oldconf: --force did not replace admin.conf: $(tail -1 "$T/join.err")"; rc=1; }
  # An advertise address that is none.
  CP_ADDR=not-an-address cp_certs_refused 2 "is not an IP address" badaddr || rc=1
  # An external etcd in the ClusterConfiguration is carried: no stacked etcd's CA downloaded (the Secret
  # holds one) and none of its leaves made; the API server pointed at the endpoints.
  printf 'apiVersion: %s\nkind: ClusterConfiguration\nkubernetesVersion: %s\ncontrolPlaneEndpoint: %s\netcd:\n  external:\n    endpoints: [https://192.0.2.30:2379]\n' \
    "$E2E_KUBEADM_API" "$E2E_VERSION" "$E2E_ENDPOINT" >"$T/ext.yaml"
  "$KBIN/kubeadm" init phase upload-config kubeadm --config "$T/ext.yaml" --kubeconfig "$E2E_ADMIN" >"$T/names.log" 2>&1 || rc=1
  cp_prepare_in external
  local e=$T/external/etc.upper/kubernetes
  [ "$(cat "$T/join.rc")" = 0 ] && [ -e "$e/pki/apiserver.crt" ] && [ ! -e "$e/pki/etcd" ] &&
    [ ! -e "$e/pki/apiserver-etcd-client.crt" ] && grep -q -- "--etcd-servers=https://192.0.2.30:2379" "$e/manifests/kube-apiserver.yaml" ||
    { fail "external etcd: exit $(cat "$T/join.rc"): $(tail -2 "$T/join.err"); $(cd "$e" 2>/dev/null && find pki -type f | tr '\n' ' ')"; rc=1; }
  cp_cluster_names restore || rc=1
  return $rc
}

# ---- control-plane-join: mark-control-plane -------------------------------------

# cp_mark (in a node): kjoin's mark-control-plane with the node's admin.conf.
cp_mark() {
  . "$T/cp.env"
  "$KJOIN" join phase "${CP_PHASE:-control-plane-join/mark-control-plane}" "$E2E_ENDPOINT" --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash "$E2E_PIN" --control-plane --node-name "$CP_NODE" -o json >"$T/join.out" 2>"$T/join.err"
  echo $? >"$T/join.rc"
}
# An admin.conf others can read is not trusted (ssh's rule): the Node is not asked for.
cp_mark_loose() { chmod 0644 /etc/kubernetes/admin.conf && cp_mark; chmod 0600 /etc/kubernetes/admin.conf; }
cp_kubeadm_mark() {
  cp_kubeadm_prepare
  [ "$(cat "$T/kubeadm.rc")" = 0 ] || return
  "$KBIN/kubeadm" join phase control-plane-join mark-control-plane --config "$T/join.yaml" --v=1 >>"$T/kubeadm.out" 2>&1
  echo $? >"$T/kubeadm.rc"
}

# cp_node NAME: a Node as its kubelet would have registered it, with a taint
# and a label of the operator's.
cp_node() {
  kc apply -f - >/dev/null <<JSON
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "$1", "labels": {"example.com/rack": "r1", "kubernetes.io/hostname": "$1"}},
 "spec": {"taints": [{"key": "example.com/dedicated", "value": "db", "effect": "NoExecute"}]}}
JSON
}
# cp_marks NAME: the Node's labels (but its host name) and taints, sorted.
cp_marks() {
  kc get node "$1" -o json |
    jq -c '[(.metadata.labels | del(."kubernetes.io/hostname")), (.spec.taints // [] | map({key, value, effect}) | sort_by(.key))]'
}

t_e2e_controlplane_mark_as_kubeadm() {
  local rc=0 ours theirs CP_NODE=$CP_NODE CP_PHASE=
  cp_shared_pki "$T/src" && cp_upload "$T/src" && cp_key "$CP_KEY" || return 1
  # kubeadm init binds its admins' group to cluster-admin (1.29 on); the suite's cluster was not made by kubeadm init.
  kc create clusterrolebinding kubeadm:cluster-admins --clusterrole=cluster-admin --group=kubeadm:cluster-admins \
    >/dev/null 2>&1
  cp_node mark-kjoin && cp_node mark-kubeadm || return 1
  CP_NODE=mark-kjoin cp_prepare_in markk
  [ "$(cat "$T/join.rc")" = 0 ] || { fail "prepare: $(tail -2 "$T/join.err")"; rc=1; }
  NODE_NS=markk in_node cp_mark
  [ "$(cat "$T/join.rc")" = 0 ] && jq -e '.controlPlaneMarked' "$T/join.out" >/dev/null ||
    { fail "mark-control-plane: exit $(cat "$T/join.rc"): $(tail -2 "$T/join.err")"; rc=1; }
  : >"$T/kubeadm.out"
  (CP_NODE=mark-kubeadm; declare -p CP_NODE CP_ADDR E2E_KUBEADM_API >"$T/cp.env"; . "$T/cp.env"; cp_join_yaml) &&
    node_setup && NODE_NS=markb in_node cp_kubeadm_mark
  [ "$(cat "$T/kubeadm.rc")" = 0 ] || { fail "kubeadm's mark-control-plane: $(tail -3 "$T/kubeadm.out")"; rc=1; }
  ours=$(cp_marks mark-kjoin) theirs=$(cp_marks mark-kubeadm)
  [ "$ours" = "$theirs" ] ||
    { fail "the Node's marks differ from kubeadm's: kjoin $ours, kubeadm $theirs ($(tail -6 "$T/kubeadm.out" | cut -c1-200 | tr "\n" " "))"; rc=1; }
  case $ours in
  *'"example.com/rack":"r1"'*'control-plane":""'*'"example.com/dedicated"'*'NoSchedule'*) ;;
  *) fail "the marks are not the control plane's or lost the operator's: $ours"; rc=1 ;;
  esac
  # Again, by kubeadm 1.37's name of the whole phase: the same marks, no taint twice.
  CP_NODE=mark-kjoin CP_PHASE=control-plane-join; declare -p CP_NODE CP_PHASE >"$T/cp.env"
  NODE_NS=markk in_node cp_mark
  [ "$(cat "$T/join.rc")" = 0 ] && [ "$(cp_marks mark-kjoin)" = "$ours" ] ||
    { fail "a second mark changed the Node: $(cp_marks mark-kjoin)"; rc=1; }
  # admin.conf readable by others: exit 2 by its name and mode, before any request.
  NODE_NS=markk in_node cp_mark_loose
  [ "$(cat "$T/join.rc")" = 2 ] && grep -q "admin.conf is readable by group or others (mode 0644)" "$T/join.err" &&
    ! grep -q "Marking the node" "$T/join.err" ||
    { fail "a loose admin.conf: exit $(cat "$T/join.rc"): $(tail -1 "$T/join.err")"; rc=1; }
  # A Node that is not there: the API's NotFound, exit 6.
  CP_NODE=mark-nowhere CP_PHASE=; declare -p CP_NODE CP_PHASE >"$T/cp.env"
  NODE_NS=markk in_node cp_mark
  [ "$(cat "$T/join.rc")" = 6 ] && grep -q "get the Node" "$T/join.err" ||
    { fail "a missing Node: exit $(cat "$T/join.rc"): $(tail -1 "$T/join.err")"; rc=1; }
  # No admin.conf (control-plane-prepare did not run there): exit 2, the Node untouched.
  CP_NODE=mark-kubeadm; declare -p CP_NODE >"$T/cp.env"
  theirs=$(cp_marks mark-kubeadm)
  NODE_NS=markn in_node cp_mark
  [ "$(cat "$T/join.rc")" = 2 ] && grep -q "admin.conf" "$T/join.err" && [ "$(cp_marks mark-kubeadm)" = "$theirs" ] ||
    { fail "no admin.conf: exit $(cat "$T/join.rc"): $(tail -1 "$T/join.err")"; rc=1; }
  kc delete node mark-kjoin mark-kubeadm >/dev/null 2>&1
  return $rc
}

# ---- preflight: a control-plane node's checks --------------------------------------

cp_preflight() {
  mkdir -p /etc/kubernetes/manifests && echo x >/etc/kubernetes/manifests/etcd.yaml
  "$KJOIN" join phase preflight "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
    --control-plane --node-name cp-2 --apiserver-advertise-address 127.0.0.1 --ignore-preflight-errors all -o json \
    >"$T/join.out" 2>"$T/join.err"
  echo $? >"$T/join.rc"
}
# kubeadm's check names, after discovery (they need the cluster's
# ClusterConfiguration): every one ignored here, so that the machine's own
# ports do not decide the test; a manifest left in the node's manifests
# directory is among them by name.
t_e2e_controlplane_preflight_names_kubeadms_checks() {
  NODE_NS=pre in_node cp_preflight
  [ "$(cat "$T/join.rc")" = 0 ] || { fail "preflight: exit $(cat "$T/join.rc"): $(tail -2 "$T/join.err")"; return 1; }
  grep -q "Running pre-flight checks before initializing the new control plane instance" "$T/join.err" &&
    jq -e '[.node.preflight[] | select(.name == "FileAvailable--etc-kubernetes-manifests-etcd.yaml" and .level == "ignored")] | length == 1' \
      "$T/join.out" >/dev/null ||
    { fail "the control-plane checks did not run: $(grep preflight "$T/join.err" | tail -3 | tr '\n' ' ')"; return 1; }
  ! jq -e '.node.preflight[] | select(.name == "ControlPlaneEndpoint")' "$T/join.out" >/dev/null ||
    { fail "ControlPlaneEndpoint failed on a cluster that has one"; return 1; }
}

# ---- etcd-join: this node's etcd member ------------------------------------------

# The first member, as kubeadm init's etcd: TLS on 127.0.0.11 with the
# cluster's etcd CA, its Pod in kube-system saying where it listens. Both
# members bind their own loopback addresses (127.0.0.11, .12) on etcd's
# ports: no address of the machine's is taken.
CP_ETCD1=127.0.0.11
CP_ETCD2=127.0.0.12
cp_etcd_first() {
  local d=$T/m1 pair
  mkdir -p "$d/etcd" && cp "$T/src/etcd/ca.crt" "$T/src/etcd/ca.key" "$d/etcd/" || return 1
  # (kubeadm's own certs phase refuses a loopback advertise address here.)
  for pair in "server:/CN=cp-1:serverAuth,clientAuth:DNS:cp-1,DNS:localhost,IP:$CP_ETCD1,IP:127.0.0.1" \
    "peer:/CN=cp-1:serverAuth,clientAuth:DNS:cp-1,DNS:localhost,IP:$CP_ETCD1,IP:127.0.0.1" \
    "healthcheck-client:/CN=kube-etcd-healthcheck-client:clientAuth:"; do
    local name subj eku sans
    IFS=: read -r name subj eku sans <<<"$pair"
    openssl req -new -newkey rsa:2048 -nodes -keyout "$d/etcd/$name.key" -subj "$subj" -out "$d/etcd/$name.csr" 2>/dev/null &&
      printf 'extendedKeyUsage=%s\n%s' "$eku" "${sans:+subjectAltName=$sans}" >"$d/etcd/$name.ext" &&
      openssl x509 -req -in "$d/etcd/$name.csr" -CA "$d/etcd/ca.crt" -CAkey "$d/etcd/ca.key" -CAcreateserial -days 2 \
        -extfile "$d/etcd/$name.ext" -out "$d/etcd/$name.crt" 2>/dev/null || { fail "etcd member 1's $name pair"; return 1; }
  done
  if ss -Hltn | grep -qE "($CP_ETCD1|$CP_ETCD2|0\.0\.0\.0|\*|\[::\]):(2379|2380|2381) "; then
    fail "etcd's ports are taken on the test's addresses: $(ss -Hltn | grep -E ':(2379|2380|2381) ')"; return 1
  fi
  e2e_start etcd-m1 "$ETCD" --name cp-1 --data-dir "$d/data" --listen-client-urls "https://$CP_ETCD1:2379" \
    --advertise-client-urls "https://$CP_ETCD1:2379" --listen-peer-urls "https://$CP_ETCD1:2380" \
    --initial-advertise-peer-urls "https://$CP_ETCD1:2380" --initial-cluster "cp-1=https://$CP_ETCD1:2380" \
    --cert-file "$d/etcd/server.crt" --key-file "$d/etcd/server.key" --trusted-ca-file "$d/etcd/ca.crt" --client-cert-auth \
    --peer-cert-file "$d/etcd/peer.crt" --peer-key-file "$d/etcd/peer.key" --peer-trusted-ca-file "$d/etcd/ca.crt" \
    --peer-client-cert-auth --listen-metrics-urls "http://$CP_ETCD1:2381"
  e2e_wait 20 cp_etcd_members "$d" || { fail "etcd member 1 did not start: $(tail -3 "$E2E_DIR/etcd-m1.log")"; return 1; }
  # Member 1's Node and its etcd Pod, as a cluster has them: a Pod on a Node
  # that does not exist is the controller-manager's to delete (PodGC, 40 s
  # after it sees it), and both joins would then find no etcd Pod.
  kc apply -f - >/dev/null <<JSON || { fail "the etcd Pod"; return 1; }
{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cp-1"}}
JSON
  kc apply -f - >/dev/null <<JSON || { fail "the etcd Pod"; return 1; }
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "etcd-cp-1", "namespace": "kube-system",
  "labels": {"component": "etcd", "tier": "control-plane"},
  "annotations": {"kubeadm.kubernetes.io/etcd.advertise-client-urls": "https://$CP_ETCD1:2379"}},
 "spec": {"nodeName": "cp-1", "automountServiceAccountToken": false, "containers": [{"name": "etcd", "image": "etcd"}],
          "tolerations": [{"operator": "Exists", "effect": "NoExecute"}]}}
JSON
}

# cp_etcd_first_gone: member 1's Pod and Node out of the cluster (the
# member itself is the caller's to stop).
cp_etcd_first_gone() {
  kc -n kube-system delete pod etcd-cp-1 --force --grace-period=0 >/dev/null 2>&1
  kc delete node cp-1 >/dev/null 2>&1
  return 0
}

# cp_etcd_members PKI [ADDR]: the members as etcd's gateway lists them, as
# the healthcheck client of PKI: "name peerURL learner" a line, sorted.
cp_etcd_members() {
  curl -sf --cacert "$1/etcd/ca.crt" --cert "$1/etcd/healthcheck-client.crt" --key "$1/etcd/healthcheck-client.key" \
    -X POST -d '{}' "https://${2:-$CP_ETCD1}:2379/v3/cluster/member/list" |
    jq -r '.members[] | "\(.name // "") \(.peerURLs[0]) \(.isLearner // false)"' | sort
}

# cp_etcd_call PKI PATH BODY: a call of member 1's gateway, as the
# healthcheck client of PKI.
cp_etcd_call() {
  curl -sf --cacert "$1/etcd/ca.crt" --cert "$1/etcd/healthcheck-client.crt" --key "$1/etcd/healthcheck-client.key" \
    -X POST -d "$3" "https://$CP_ETCD1:2379$2"
}

# cp_etcd_run PID ADDR (in a node): the kubelet's part in an etcd-join
# (PID): once etcd.yaml is there and whole, the command in it runs
# (Debian's etcd 3.4: without the flags of etcd 3.6, --feature-gates and
# --watch-progress-notify-interval; its metrics and clients on the node's
# own address ADDR only, not the machine's 127.0.0.1), its pid in
# $T/etcd-m2.pid. The members as etcd 1 lists them just before, when the
# new one has been added and does not run yet, in $T/members.added.
cp_etcd_run() {
  local m=/etc/kubernetes/manifests/etcd.yaml i args=()
  for i in $(seq 600); do [ -s $m ] || ! kill -0 "$1" 2>/dev/null && break; sleep 0.1; done
  [ -s $m ] || return 0
  cp_etcd_members /etc/kubernetes/pki "$CP_ETCD1" >"$T/members.added"
  # (kubeadm writes it in place: read until it parses)
  for i in $(seq 20); do
    mapfile -t args < <(kc create --dry-run=client --validate=false -o json -f $m 2>/dev/null | jq -r '.spec.containers[0].command[1:][]')
    [ ${#args[@]} = 0 ] || break
    sleep 0.1
  done
  mapfile -t args < <(printf '%s\n' "${args[@]}" | grep -v -e '^--feature-gates=' -e '^--watch-progress-notify-interval=' |
    sed -e "s#^--listen-metrics-urls=.*#--listen-metrics-urls=http://$2:2381#" \
      -e "s#^--listen-client-urls=https://127.0.0.1:2379,#--listen-client-urls=#")
  etcd "${args[@]}" >"$T/etcd-m2.log" 2>&1 &
  echo $! >"$T/etcd-m2.pid"
}

# cp_prepare_2 (in a node): kjoin's control-plane-prepare for node 2 (cp-2
# at CP_ETCD2); why it failed in $T/etcd.why.
cp_prepare_2() {
  "$KJOIN" join phase control-plane-prepare "$E2E_ENDPOINT" --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash "$E2E_PIN" --control-plane --certificate-key-file "$T/key" --node-name cp-2 \
    --apiserver-advertise-address "$CP_ETCD2" >"$T/prepare.out" 2>&1 || { echo "prepare: $(tail -2 "$T/prepare.out")" >"$T/etcd.why"; return 1; }
}
# cp_etcd_join_2 ARGS... (in a node): kjoin's etcd-join for node 2, with ARGS.
cp_etcd_join_2() {
  "$KJOIN" join phase etcd-join "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
    --control-plane --node-name cp-2 --apiserver-advertise-address "$CP_ETCD2" "$@"
}

# cp_etcd_join_in (in a node): kjoin's prepare, then its etcd-join, with
# cp_etcd_run as the kubelet; etcd 2 keeps running for the checks that
# follow.
cp_etcd_join_in() {
  . "$T/cp.env"
  local m=/etc/kubernetes/manifests/etcd.yaml
  cp_prepare_2 || return
  # etcd-join's dry run alone, with what control-plane-prepare left on the node (admin.conf, the etcd
  # client): the members listed, etcd.yaml shown, nothing added or written.
  cp_etcd_join_2 --dry-run >"$T/etcddry.out" 2>"$T/etcddry.err"
  echo $? >"$T/etcddry.rc"
  { [ -e $m ] && echo written || echo none; cp_etcd_members /etc/kubernetes/pki "$CP_ETCD1" | wc -l; } >"$T/etcddry.after"
  # kubeadm's check-etcd, with kubeadm's spelling: the cluster's members answer before one is added.
  "$KJOIN" join phase check-etcd "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
    --control-plane --node-name cp-2 --apiserver-advertise-address "$CP_ETCD2" --discovery-timeout 30s -o json \
    >"$T/check.out" 2>"$T/check.err"
  echo $? >"$T/check.rc"
  cp_etcd_join_2 --discovery-timeout 90s -o json \
    >"$T/join.out" 2>"$T/join.err" &
  local kjoin_pid=$!
  cp_etcd_run $kjoin_pid "$CP_ETCD2"
  wait $kjoin_pid
  echo $? >"$T/join.rc"
  cp $m "$T/etcd.yaml" 2>/dev/null
  cp_etcd_members /etc/kubernetes/pki "$CP_ETCD2" >"$T/members.after"
  # The same phase again: the member is there, nothing added.
  cp_etcd_join_2 -o json >"$T/again.out" 2>"$T/again.err"
  echo $? >"$T/again.rc"
}

# cp_dry_in NAME [PLANT] (in a node): PLANT, then the whole control-plane join as a dry run, text and -o
# json; what the node holds after it, and what is left in /tmp.
cp_dry_in() {
  . "$T/cp.env"
  local n=$1 f
  ${2:-:}
  local planted; planted=$(tree_state /etc/kubernetes /var/lib/kubelet /var/lib/etcd /var/lib/kjoin-e2e-etcd)
  ls -d /tmp/kjoin-join-dryrun.* 2>/dev/null | sort >"$T/$n.tmp-before"
  # -o json ignoring every preflight error; then text ignoring only those this machine has, so that
  # ImagePull runs: the control plane's images are not in the suite's containerd, and a dry run pulls none.
  local ignore=all
  for f in json text; do
    "$KJOIN" join "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
      --control-plane --certificate-key-file "$T/key" --node-name cp-2 --apiserver-advertise-address "$CP_ETCD2" \
      --cri-socket "$NODE_CRI" --ignore-preflight-errors "$ignore" --discovery-timeout 60s --dry-run -o "$f" \
      >"$T/$n.$f.out" 2>"$T/$n.$f.err"
    echo $? >"$T/$n.$f.rc"
    ignore=$(sed -n 's/^\[preflight\] WARNING (ignored) \([^:]*\):.*/\1/p' "$T/$n.json.err" | paste -sd, -)
    ignore=${ignore:-none}
  done
  tree_changes "$planted" /etc/kubernetes /var/lib/kubelet /var/lib/etcd /var/lib/kjoin-e2e-etcd >"$T/$n.written"
  ls -d /tmp/kjoin-join-dryrun.* 2>/dev/null | sort | comm -13 "$T/$n.tmp-before" - >"$T/$n.tmp-left"
}
cp_dry_foreign_etcd() { mkdir -p /etc/kubernetes/manifests && echo "kind: Pod" >/etc/kubernetes/manifests/etcd.yaml; }

# The control-plane join's dry run, whole, against the real API server and
# etcd member 1: every check for real (discovery, the Secret opened with
# the key, check-etcd as the node's etcd client, etcd's member list), every
# file shown at its own path with its mode (keys masked: a private key's
# PEM body and a kubeconfig's client-key-data), etcd.yaml joining member 1
# as kubeadm would; nothing written on the node, nothing left in /tmp, no
# member added, no Node made. A node whose etcd.yaml is no member's is
# refused as the join would refuse it (exit 5). v1.20's whole join is
# refused by name, dry run or not.
cp_dry_run_checks() {
  local rc=0 out=$T/dry.text.out
  NODE_NS=dry in_node "cp_dry_in dry"
  if [ "$E2E_MINOR" -lt 22 ]; then
    [ "$(cat "$T/dry.text.rc")" = 2 ] && grep -q "ClusterStatus" "$T/dry.text.err" ||
      { fail "dry run on v1.$E2E_MINOR: exit $(cat "$T/dry.text.rc"): $(tail -2 "$T/dry.text.err")"; rc=1; }
  else
    [ "$(cat "$T/dry.text.rc")" = 0 ] && [ "$(cat "$T/dry.json.rc")" = 0 ] ||
      { fail "dry run: exit $(cat "$T/dry.text.rc")/$(cat "$T/dry.json.rc"): $(tail -3 "$T/dry.text.err")"; rc=1; }
    local want
    for want in pki/ca.crt pki/ca.key pki/sa.key pki/etcd/ca.key pki/apiserver.crt pki/apiserver.key \
      pki/etcd/healthcheck-client.crt pki/apiserver-etcd-client.key admin.conf controller-manager.conf scheduler.conf \
      manifests/kube-apiserver.yaml manifests/kube-controller-manager.yaml manifests/kube-scheduler.yaml manifests/etcd.yaml; do
      grep -q "^\[dryrun\] Would write file \"/etc/kubernetes/$want\" (mode 0[0-9]*) with content:" "$out" ||
        { fail "dry run: /etc/kubernetes/$want not shown"; rc=1; }
    done
    [ -z "$(grep '^\[dryrun\] Would write file' "$out" | sort | uniq -d)" ] ||
      { fail "dry run: a file shown twice: $(grep '^\[dryrun\] Would write file' "$out" | sort | uniq -d | head -2)"; rc=1; }
    grep -q '^\[dryrun\] Would write file "/etc/kubernetes/pki/apiserver.key" (mode 0600)' "$out" &&
      grep -q '^\[dryrun\] Would write file "/etc/kubernetes/pki/apiserver.crt" (mode 0644)' "$out" ||
      { fail "dry run: the modes shown"; rc=1; }
    # Keys masked: after each BEGIN ... PRIVATE KEY line, the note; no client-key-data's value.
    [ "$(grep -c 'PRIVATE KEY-----$' "$out")" -ge 2 ] &&
      ! grep -A1 'BEGIN [A-Z ]*PRIVATE KEY-----$' "$out" | grep -v -e 'BEGIN' -e '(a private key: not shown)' -e '^--$' | grep -q . &&
      ! grep 'client-key-data:' "$out" | grep -vq '(a private key: not shown)' &&
      [ "$(grep -c 'client-key-data: (a private key: not shown)' "$out")" = 3 ] ||
      { fail "dry run: a key shown: $(grep -A1 'PRIVATE KEY-----$\|client-key-data' "$out" | head -6 | cut -c1-80 | tr '\n' ' ')"; rc=1; }
    # The checks for real, and what would change in the cluster (or the runtime's images) only said.
    grep -q "WARNING ImagePull: image .*kube-apiserver:.* is not in the runtime: the join would pull it" "$T/dry.text.err" ||
      { fail "dry run's ImagePull: $(grep -e ImagePull -e 'ERROR' "$T/dry.text.err" | head -3 | tr '\n' ' ')"; rc=1; }
    grep -q "\[check-etcd\] The etcd cluster is healthy: 1 members" "$T/dry.text.err" &&
      grep -q "\[dryrun\] Would add etcd member https://$CP_ETCD2:2380" "$T/dry.text.err" &&
      grep -q "\[dryrun\] Would mark node cp-2 as a control-plane" "$T/dry.text.err" ||
      { fail "dry run's lines: $(grep -e check-etcd -e dryrun "$T/dry.text.err" | tr '\n' ' ')"; rc=1; }
    # etcd.yaml: this member joining member 1, as the real join writes it.
    local initial
    initial=$(sed -n '/Would write file "\/etc\/kubernetes\/manifests\/etcd.yaml"/,/Would write file/p' "$out" |
      grep -o -- '--initial-cluster=[^ "]*' | cut -d= -f2- | tr ',' '\n' | sort | tr '\n' ' ')
    [ "$initial" = "$(printf '%s\n' "cp-1=https://$CP_ETCD1:2380" "cp-2=https://$CP_ETCD2:2380" | sort | tr '\n' ' ')" ] ||
      { fail "dry run's etcd.yaml: --initial-cluster=$initial"; rc=1; }
    jq -e '.dryRun and ([.wouldWrite[].path] | index("/etc/kubernetes/pki/apiserver.crt") != null and
        index("/var/lib/kubelet/config.yaml") != null) and ([.wouldWrite[] | select(.path | test("\\.key$")) |
        .content | test("(a private key: not shown)")] | all) and (.controlPlane.files // [] | length == 0)' \
      "$T/dry.json.out" >/dev/null || { fail "dry run -o json: $(jq -c '[.wouldWrite[]?.path]' "$T/dry.json.out" | cut -c1-400)"; rc=1; }
  fi
  [ ! -s "$T/dry.written" ] && [ ! -s "$T/dry.tmp-left" ] ||
    { fail "dry run wrote: $(cat "$T/dry.written" "$T/dry.tmp-left" | tr '\n' ' ')"; rc=1; }
  [ "$(cp_etcd_members "$T/m1")" = "cp-1 https://$CP_ETCD1:2380 false" ] ||
    { fail "dry run: the members: $(cp_etcd_members "$T/m1" | tr '\n' ';')"; rc=1; }
  ! kc get node cp-2 >/dev/null 2>&1 || { fail "dry run: a Node cp-2"; rc=1; }
  ! grep -q "$CP_KEY" "$T"/dry.*.out "$T"/dry.*.err || { fail "dry run: the certificate key was printed"; rc=1; }
  if [ "$E2E_MINOR" -ge 22 ]; then
    NODE_NS=dryforeign in_node "cp_dry_in dryforeign cp_dry_foreign_etcd"
    [ "$(cat "$T/dryforeign.text.rc")" = 5 ] &&
      grep -q "etcd.yaml is already there and this node is no etcd member" "$T/dryforeign.text.err" &&
      [ ! -s "$T/dryforeign.written" ] && [ ! -s "$T/dryforeign.tmp-left" ] &&
      [ "$(cp_etcd_members "$T/m1" | wc -l)" = 1 ] ||
      { fail "dry run, a foreign etcd.yaml: exit $(cat "$T/dryforeign.text.rc"): $(tail -1 "$T/dryforeign.text.err")"; rc=1; }
    # An apiserver pair of another CA on the node: refused as the join refuses it (the node's path
    # named), the pair left as it was, nothing else written.
    mkdir -p "$T/other" && "$KBIN/kubeadm" init phase certs ca --cert-dir "$T/other" >>"$T/certs.log" 2>&1 &&
      "$KBIN/kubeadm" init phase certs apiserver --cert-dir "$T/other" >>"$T/certs.log" 2>&1 ||
      { fail "kubeadm certs: $(tail -2 "$T/certs.log")"; return 1; }
    NODE_NS=dryplanted in_node "cp_dry_in dryplanted cp_planted_pair"
    [ "$(cat "$T/dryplanted.text.rc")" = 2 ] &&
      grep -q "/etc/kubernetes/pki/apiserver.crt is already there and it is not signed by" "$T/dryplanted.text.err" &&
      [ ! -s "$T/dryplanted.written" ] && [ ! -s "$T/dryplanted.tmp-left" ] &&
      cmp -s "$T/other/apiserver.key" "$T/dryplanted/etc.upper/kubernetes/pki/apiserver.key" ||
      { fail "dry run, a pair of another CA: exit $(cat "$T/dryplanted.text.rc"): $(tail -1 "$T/dryplanted.text.err")"; rc=1; }
  fi
  return $rc
}

# A node with an etcd.yaml of its own that is no member: refused before
# anything is asked of etcd.
cp_etcd_refused_in() {
  . "$T/cp.env"
  "$KJOIN" join phase control-plane-prepare "$E2E_ENDPOINT" --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash "$E2E_PIN" --control-plane --certificate-key-file "$T/key" --node-name cp-3 \
    --apiserver-advertise-address 127.0.0.13 >"$T/prepare3.out" 2>&1 || return
  echo 'apiVersion: v1' >/etc/kubernetes/manifests/etcd.yaml
  "$KJOIN" join phase etcd-join "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
    --control-plane --node-name cp-3 --apiserver-advertise-address 127.0.0.13 >"$T/join3.out" 2>"$T/join3.err"
  echo $? >"$T/join3.rc"
}

# cp_kubeadm_etcd_in (in a node): kubeadm's own etcd.yaml for this node
# (init phase etcd local: a member of its own). kubeadm takes no loopback
# advertise address where the machine has no default route: in a network
# namespace of its own, with a veth at 192.0.2.2 and a route.
cp_kubeadm_etcd_in() {
  unshare -n sh -c 'ip link add d0 type veth peer name d1 && ip addr add 192.0.2.2/24 dev d0 && ip link set d1 up && ip link set d0 up &&
    ip route add default dev d0 && "$1" init phase etcd local --config "$2"' _ "$KBIN/kubeadm" "$T/etcd-init.yaml" \
    >"$T/kubeadm-etcd.out" 2>&1
}

# cp_etcd_pod FILE ADDR: an etcd.yaml as JSON, keys sorted, the address as
# ADDR and without the initial members (kubeadm's is a cluster of one).
cp_etcd_pod() {
  kc create --dry-run=client --validate=false -o json -f "$1" 2>&1 | sed "s/$2/ADDR/g" |
    jq -S 'del(.status, .metadata.creationTimestamp) |
      .spec.containers[0].command |= map(select(test("^--initial-cluster") | not))' 2>&1
}

# cp_reset_in (in node 2): kjoin reset, after an operator's edit of
# scheduler.conf, of the node as the previous kjoin release left it (its
# control-plane record in a file of its own, kjoin-control-plane.json); what
# is left of the node's files after it.
cp_reset_in() {
  echo "# edited" >>/etc/kubernetes/scheduler.conf
  jq -e '.controlPlane and (has("nodeName") | not)' /etc/kubernetes/kjoin-join.json >/dev/null &&
    jq .controlPlane /etc/kubernetes/kjoin-join.json >/etc/kubernetes/kjoin-control-plane.json &&
    chmod 0600 /etc/kubernetes/kjoin-control-plane.json && rm /etc/kubernetes/kjoin-join.json ||
    echo "the record is not one control-plane part: $(head -c 300 /etc/kubernetes/kjoin-join.json)" >"$T/reset.legacy"
  "$KJOIN" reset -o json >"$T/reset.out" 2>"$T/reset.err"
  echo $? >"$T/reset.rc"
  { echo "kubernetes: $(cd /etc/kubernetes && ls -p | grep -v / | tr '\n' ' ' | sed 's/ $//')"
    echo "manifests: $(ls /etc/kubernetes/manifests 2>/dev/null | tr '\n' ' ')"
    echo "pki: $(cd /etc/kubernetes/pki 2>/dev/null && find . -type f | tr '\n' ' ')"
    [ -e /var/lib/kjoin-e2e-etcd ] && echo "etcd data: there" || echo "etcd data: gone"
    [ -e /etc/kubernetes/kjoin-join.json ] || [ -e /etc/kubernetes/kjoin-control-plane.json ] &&
      echo "record: there" || echo "record: gone"; } >"$T/reset.ls"
  "$KJOIN" reset >"$T/reset2.out" 2>&1
  echo $? >"$T/reset2.rc"
}

# cp_reset_refused_in (in node 2): the node is also a worker kjoin joined
# whose kubelet still runs without systemd (its healthz answers, on a port
# of the test's): kjoin reset refuses, and decides so before it changes
# anything (the etcd member stays, the record too).
cp_reset_refused_in() {
  local port i healthz
  port=$("$TOOLS/freeport") || return
  # the node's part beside the control plane's in the join's one record
  cp /etc/kubernetes/kjoin-join.json "$T/record.before" &&
    mkdir -p /var/lib/kubelet &&
    printf 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nhealthzPort: %s\n' "$port" \
      >/var/lib/kubelet/config.yaml &&
    jq --arg sum "$(sha256sum </var/lib/kubelet/config.yaml | cut -c1-64)" '. + {joinID: "j", server: "https://x",
      nodeName: "cp-2", files: [{path: "/var/lib/kubelet/config.yaml", sha256: $sum}], createdDirs: [],
      kubeletDirBefore: []}' "$T/record.before" >/etc/kubernetes/kjoin-join.json &&
    chmod 0600 /etc/kubernetes/kjoin-join.json || return
  python3 -c 'import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(s): s.send_response(200); s.end_headers(); s.wfile.write(b"ok")
    def log_message(s, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()' "$port" &
  healthz=$!
  for i in $(seq 50); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  "$KJOIN" reset -o json >"$T/refused.out" 2>"$T/refused.err"
  echo $? >"$T/refused.rc"
  kill $healthz; wait $healthz 2>/dev/null
  jq -e '.controlPlane and .nodeName' /etc/kubernetes/kjoin-join.json >/dev/null 2>&1 &&
    echo there >"$T/refused.record" || echo gone >"$T/refused.record"
  cp "$T/record.before" /etc/kubernetes/kjoin-join.json && chmod 0600 /etc/kubernetes/kjoin-join.json
  rm -f /var/lib/kubelet/config.yaml
}

# cp_etcd_cluster_up: the shared certificates uploaded, a node's runtime,
# the cluster's names with a data directory of the test's, and etcd member
# 1 running with its Pod; node 2's addresses in $T/cp.env.
cp_etcd_cluster_up() {
  cp_shared_pki "$T/src" && cp_upload "$T/src" && cp_key "$CP_KEY" && node_setup || return 1
  kc create clusterrolebinding kubeadm:cluster-admins --clusterrole=cluster-admin --group=kubeadm:cluster-admins \
    >/dev/null 2>&1
  cp_cluster_names etcd || return 1
  cp_etcd_first || { cp_etcd_first_gone; cp_cluster_names restore; return 1; }
  declare -p CP_NODE CP_ADDR CP_ETCD1 CP_ETCD2 >"$T/cp.env"
}

t_e2e_controlplane_etcd_join_and_reset() {
  local rc=0 learner=true members
  [ "$E2E_MINOR" -ge 29 ] || learner=false
  cp_etcd_cluster_up || return 1
  cp_dry_run_checks || rc=1
  # A learner another join left and never started (no name, nothing serves
  # at its peer URL): kubeadm names it by its ID in hex in --initial-cluster,
  # and the join's last wait does not wait for it. (Where etcd-join adds a
  # learner itself, from 1.29, etcd refuses a second learner, to kubeadm
  # too: there the cluster has none.)
  local left_id="" left_hex="" left_members="" left_initial=""
  if [ "$E2E_MINOR" -lt 29 ]; then
    left_id=$(cp_etcd_call "$T/m1" /v3/cluster/member/add '{"peerURLs":["https://127.0.0.19:2380"],"isLearner":true}' |
      jq -r .member.ID) && [ -n "$left_id" ] && [ "$left_id" != null ] || { fail "the leftover learner was not added"; rc=1; }
    left_hex=$(python3 -c 'import sys; print("%x" % int(sys.argv[1]))' "$left_id")
    left_members=" https://127.0.0.19:2380 true"$'\n' left_initial="$left_hex=https://127.0.0.19:2380"
  fi
  NODE_NS=etcd2 in_node cp_etcd_join_in
  [ ! -s "$T/etcd.why" ] || { fail "$(cat "$T/etcd.why")"; rc=1; }
  # check-etcd counts every member, the leftover learner among them.
  local before=1; [ -z "$left_id" ] || before=2
  [ "$(cat "$T/etcddry.rc" 2>/dev/null)" = 0 ] && grep -q '^\[dryrun\] Would write file "/etc/kubernetes/manifests/etcd.yaml"' "$T/etcddry.out" &&
    grep -q "\[dryrun\] Would add etcd member https://$CP_ETCD2:2380" "$T/etcddry.err" &&
    [ "$(tr '\n' ' ' <"$T/etcddry.after")" = "none $before " ] ||
    { fail "etcd-join's dry run: exit $(cat "$T/etcddry.rc" 2>/dev/null): $(tail -2 "$T/etcddry.err") after: $(tr '\n' ' ' <"$T/etcddry.after" 2>/dev/null)"; rc=1; }
  [ "$(cat "$T/check.rc" 2>/dev/null)" = 0 ] &&
    grep -q "\[check-etcd\] The etcd cluster is healthy: $before members" "$T/check.err" &&
    jq -e '[.node.phases[].name] == ["check-etcd"]' "$T/check.out" >/dev/null ||
    { fail "check-etcd: exit $(cat "$T/check.rc" 2>/dev/null): $(tail -2 "$T/check.err")"; rc=1; }
  [ "$(cat "$T/join.rc" 2>/dev/null)" = 0 ] ||
    { fail "etcd-join: exit $(cat "$T/join.rc" 2>/dev/null): $(tail -3 "$T/join.err"); etcd 2: $(tail -2 "$T/etcd-m2.log" 2>/dev/null | cut -c1-300)"; rc=1; }
  # Added as a learner from 1.29, a voter before; not running yet when etcd.yaml is written.
  grep -qx " https://$CP_ETCD2:2380 $learner" "$T/members.added" ||
    { fail "the member as added: $(tr '\n' ';' <"$T/members.added")"; rc=1; }
  members=$(cat "$T/members.after")
  [ "$members" = "${left_members}cp-1 https://$CP_ETCD1:2380 false
cp-2 https://$CP_ETCD2:2380 false" ] || { fail "the members after the join: $(echo "$members" | tr '\n' ';')"; rc=1; }
  jq -e --argjson l $learner --argjson n "$([ -n "$left_id" ] && echo 3 || echo 2)" \
    '.etcd.added and .etcd.promoted == $l and .etcd.members == $n and (.etcd.memberID | test("^[0-9]+$"))' \
    "$T/join.out" >/dev/null || { fail "-o json: $(jq -c .etcd "$T/join.out")"; rc=1; }
  # The manifest: this member joining the existing ones, as kubeadm writes
  # it (the members in etcd's order, which is by their random IDs; the
  # unnamed learner by its ID in hex).
  local initial; initial=$(grep -o -- '--initial-cluster=[^ "]*' "$T/etcd.yaml" | cut -d= -f2- | tr ',' '\n' | sort)
  [ "$initial" = "$(printf '%s\n' $left_initial "cp-1=https://$CP_ETCD1:2380" "cp-2=https://$CP_ETCD2:2380" | sort)" ] &&
    grep -q -- "--initial-cluster-state=existing" "$T/etcd.yaml" ||
    { fail "etcd.yaml: $(grep -- --initial "$T/etcd.yaml" | tr '\n' ' ')"; rc=1; }
  [ -z "$left_id" ] || cp_etcd_call "$T/m1" /v3/cluster/member/remove "{\"ID\":\"$left_id\"}" >/dev/null ||
    { fail "the leftover learner could not be removed"; rc=1; }
  grep -q "kubeadm.kubernetes.io/etcd.advertise-client-urls: \"\?https://$CP_ETCD2:2379" "$T/etcd.yaml" ||
    { fail "etcd.yaml lacks kubeadm's annotation"; rc=1; }
  [ "$(stat -c %a "$T/etcd2/etc.upper/kubernetes/manifests/etcd.yaml")" = 600 ] &&
    [ "$(stat -c %a "$T/etcd2/lib.upper/kjoin-e2e-etcd")" = 700 ] || { fail "etcd.yaml or the data directory: loose modes"; rc=1; }
  # The Pod is kubeadm's own, but for the members it joins.
  printf 'apiVersion: %s\nkind: InitConfiguration\nlocalAPIEndpoint: {advertiseAddress: 192.0.2.2}\nnodeRegistration: {name: cp-2}\n---\napiVersion: %s\nkind: ClusterConfiguration\nkubernetesVersion: %s\netcd: {local: {dataDir: /var/lib/kjoin-e2e-etcd}}\n' \
    "$E2E_KUBEADM_API" "$E2E_KUBEADM_API" "$E2E_VERSION" >"$T/etcd-init.yaml"
  NODE_NS=etcdk in_node cp_kubeadm_etcd_in
  local ours theirs
  ours=$(cp_etcd_pod "$T/etcd.yaml" "$CP_ETCD2") theirs=$(cp_etcd_pod "$T/etcdk/etc.upper/kubernetes/manifests/etcd.yaml" 192.0.2.2)
  [ -n "$ours" ] && [ "$ours" = "$theirs" ] ||
    { fail "etcd.yaml differs from kubeadm's: $(diff <(echo "$theirs") <(echo "$ours") | grep '^[<>]' | head -20 | tr '\n' ' ') $(tail -2 "$T/kubeadm-etcd.out")"; rc=1; }
  [ "$(cat "$T/again.rc")" = 0 ] && jq -e '.etcd.added == false and .etcd.members >= 2' "$T/again.out" >/dev/null ||
    { fail "etcd-join again: exit $(cat "$T/again.rc"): $(tail -2 "$T/again.err")"; rc=1; }
  # A node with an etcd.yaml that is not a member's: exit 5, no member added.
  NODE_NS=etcd3 in_node cp_etcd_refused_in
  [ "$(cat "$T/join3.rc" 2>/dev/null)" = 5 ] && grep -q "etcd.yaml is already there and this node is no etcd member" "$T/join3.err" &&
    [ "$(cp_etcd_members "$T/m1" | wc -l)" = 2 ] ||
    { fail "a foreign etcd.yaml: exit $(cat "$T/join3.rc" 2>/dev/null): $(tail -1 "$T/join3.err" 2>/dev/null) $(tail -1 "$T/prepare3.out")"; rc=1; }
  # kjoin reset on node 2 (its record as the previous kjoin release wrote it):
  # its member out of the cluster first (etcd 2 then stops by itself), then
  # what the join wrote (a kubeconfig changed since is left), the data
  # directory and the record; a second reset has nothing to undo.
  NODE_NS=etcd2 in_node cp_reset_refused_in
  [ "$(cat "$T/refused.rc")" = 2 ] && grep -q "the kubelet still runs" "$T/refused.err" &&
    [ "$(cat "$T/refused.record")" = there ] && [ "$(cp_etcd_members "$T/m1" | wc -l)" = 2 ] ||
    { fail "a refused reset changed something: exit $(cat "$T/refused.rc"): $(tail -1 "$T/refused.err"); record $(cat "$T/refused.record"); members: $(cp_etcd_members "$T/m1" | tr '\n' ';')"; rc=1; }
  NODE_NS=etcd2 in_node cp_reset_in
  [ ! -s "$T/reset.legacy" ] || { fail "$(cat "$T/reset.legacy")"; rc=1; }
  [ "$(cat "$T/reset.rc")" = 0 ] && jq -e '.controlPlane.etcdMember and .controlPlane.etcdMemberRemoved' "$T/reset.out" >/dev/null ||
    { fail "kjoin reset: exit $(cat "$T/reset.rc"): $(jq -c .controlPlane "$T/reset.out" 2>/dev/null) $(tail -2 "$T/reset.err")"; rc=1; }
  [ "$(cp_etcd_members "$T/m1")" = "cp-1 https://$CP_ETCD1:2380 false" ] ||
    { fail "members after the reset: $(cp_etcd_members "$T/m1" | tr '\n' ';')"; rc=1; }
  e2e_wait 20 sh -c "! kill -0 $(cat "$T/etcd-m2.pid" 2>/dev/null || echo 0)" || { fail "etcd 2 still runs after its removal"; rc=1; }
  [ "$(cat "$T/reset.ls")" = "$(printf 'kubernetes: scheduler.conf\nmanifests: \npki: \netcd data: gone\nrecord: gone')" ] ||
    { fail "after the reset: $(tr '\n' ';' <"$T/reset.ls")"; rc=1; }
  # (/etc/kubernetes, which the join made, stays for the file it holds.)
  jq -e '.controlPlane.left | length == 2 and (.[0] | test("scheduler.conf: changed since the join wrote it")) and
      .[1] == "/etc/kubernetes: not empty: it holds files the join did not make"' "$T/reset.out" >/dev/null ||
    { fail "what the reset left: $(jq -c .controlPlane.left "$T/reset.out")"; rc=1; }
  [ "$(cat "$T/reset2.rc")" = 0 ] && grep -q "nothing to undo" "$T/reset2.out" || { fail "a second reset: $(cat "$T/reset2.out")"; rc=1; }
  [ -s "$T/etcd-m2.pid" ] && e2e_stop "$(cat "$T/etcd-m2.pid")"
  e2e_stop "$E2E_PID_etcd_m1"
  cp_etcd_first_gone
  cp_cluster_names restore || rc=1
  return $rc
}

# cp_etcd_check_in N (in a node): kjoin join --check --control-plane, text
# and -o json; what it wrote on the node, and left in /tmp (nothing).
cp_etcd_check_in() {
  . "$T/cp.env"
  local planted f; planted=$(tree_state /etc/kubernetes /var/lib/kubelet /var/lib/kjoin-e2e-etcd)
  ls -d /tmp/kjoin-join-dryrun.* 2>/dev/null | sort >"$T/check$1.tmp-before"
  for f in json text; do
    "$KJOIN" join "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
      --control-plane --certificate-key-file "$T/key" --node-name cp-2 --apiserver-advertise-address "$CP_ETCD2" \
      --check -o $f >"$T/check$1.$f.out" 2>"$T/check$1.$f.err"
    echo $? >"$T/check$1.$f.rc"
  done
  tree_changes "$planted" /etc/kubernetes /var/lib/kubelet /var/lib/kjoin-e2e-etcd >"$T/check$1.written"
  ls -d /tmp/kjoin-join-dryrun.* 2>/dev/null | sort | comm -13 "$T/check$1.tmp-before" - >>"$T/check$1.written"
}

# cp_etcd_unstarted_in (in a node): kjoin's prepare, then its etcd-join with
# no kubelet to start the member: it never starts. What is left after it.
cp_etcd_unstarted_in() {
  . "$T/cp.env"
  local m=/etc/kubernetes/manifests/etcd.yaml
  cp_prepare_2 || return
  cp_etcd_join_2 --discovery-timeout 35s -o json >"$T/unstarted.out" 2>"$T/unstarted.err"
  echo $? >"$T/unstarted.rc"
  { [ -e $m ] && echo manifest || echo none; [ -e /var/lib/kjoin-e2e-etcd ] && echo data || echo nodata
    jq -r '.controlPlane.etcd.peerURL // "no member"' /etc/kubernetes/kjoin-join.json; } >"$T/unstarted.after"
  cp_etcd_members /etc/kubernetes/pki "$CP_ETCD1" >"$T/unstarted.members"
}

# cp_etcd_started_in (in the same node): the same etcd-join again, now with
# cp_etcd_run as the kubelet (the image is there).
cp_etcd_started_in() {
  . "$T/cp.env"
  cp_etcd_join_2 --discovery-timeout 90s -o json >"$T/started.out" 2>"$T/started.err" &
  local kjoin_pid=$!
  cp_etcd_run $kjoin_pid "$CP_ETCD2"
  wait $kjoin_pid
  echo $? >"$T/started.rc"
  cp_etcd_members /etc/kubernetes/pki "$CP_ETCD1" >"$T/started.members"
}

# A member whose etcd never starts (its Pod's image cannot be pulled, as
# the kubelet says in the Pod): the join says so every 15 s and at the end,
# names the image, and files a report. A learner (1.29 on) is removed from
# the cluster again with the etcd.yaml that named it, and the same join then
# joins once etcd can start. A voter (before 1.29) has taken the quorum of a
# one-member cluster with it: etcd cannot remove it, and the join says how to
# go on; the member started, the same join joins.
t_e2e_controlplane_etcd_member_that_never_starts() {
  local rc=0 image=kjoin.test/etcd:3.6.5-0
  cp_etcd_cluster_up || return 1
  # Node 2 and its etcd Pod as its kubelet reports it: the image cannot be pulled.
  printf '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cp-2"}}' >"$T/node2.json"
  printf '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "etcd-cp-2", "namespace": "kube-system",
    "labels": {"component": "etcd", "tier": "control-plane"},
    "annotations": {"kubeadm.kubernetes.io/etcd.advertise-client-urls": "https://%s:2379"}},
    "spec": {"nodeName": "cp-2", "automountServiceAccountToken": false, "containers": [{"name": "etcd", "image": "%s"}],
    "tolerations": [{"operator": "Exists", "effect": "NoExecute"}]}}' "$CP_ETCD2" "$image" >"$T/pod2.json"
  printf '{"status": {"phase": "Pending", "containerStatuses": [{"name": "etcd", "image": "%s", "imageID": "",
    "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "ImagePullBackOff",
    "message": "Back-off pulling image \\"%s\\""}}}]}}' "$image" "$image" >"$T/pod2.status"
  # (the Pod's status through the API as the admin: 1.20's kubectl patches no subresource)
  kc config view --raw -o json | jq -r '.users[0].user["client-certificate-data"] | @base64d' >"$T/admin.crt" &&
    kc config view --raw -o json | jq -r '.users[0].user["client-key-data"] | @base64d' >"$T/admin.key" &&
    kc apply -f "$T/node2.json" >"$T/patch.out" 2>&1 && kc apply -f "$T/pod2.json" >>"$T/patch.out" 2>&1 &&
    curl -sf --cacert "$E2E_CA" --cert "$T/admin.crt" --key "$T/admin.key" -X PATCH -H 'Content-Type: application/merge-patch+json' \
      --data-binary @"$T/pod2.status" "$E2E_SERVER/api/v1/namespaces/kube-system/pods/etcd-cp-2/status" >>"$T/patch.out" 2>&1 ||
    { fail "node 2's etcd Pod: $(tail -c 300 "$T/patch.out")"; rc=1; }
  # kjoin join --check --control-plane: member 1 healthy and reached at its peer URL, this node's peer port
  # free; then a learner that never started (added by hand) is what would fail: etcd takes no second one.
  NODE_NS=check in_node "cp_etcd_check_in 1"
  if [ "$E2E_MINOR" -lt 22 ]; then # the whole control-plane join is refused there: so is its check, by name
    [ "$(cat "$T/check1.json.rc")" = 2 ] && grep -q "ClusterStatus" "$T/check1.text.err" && [ ! -s "$T/check1.written" ] ||
      { fail "check --control-plane on v1.$E2E_MINOR: exit $(cat "$T/check1.json.rc"): $(tail -n 1 "$T/check1.text.err")"; rc=1; }
  else
    jq -e --arg p "https://$CP_ETCD1:2380" '.check.etcd.members == [{"name": "cp-1", "peerURL": $p, "learner": false,
        "healthy": true, "peerReachable": true}] and .check.etcd.peerPortFree and .check.etcd.problems == ""' \
      "$T/check1.json.out" >/dev/null && grep -q "^\[check\] etcd member cp-1 (https://$CP_ETCD1:2380, voter): healthy, peer URL reached from this node" "$T/check1.text.err" &&
      [ ! -s "$T/check1.written" ] ||
      { fail "check --control-plane: exit $(cat "$T/check1.json.rc"): $(jq -c .check.etcd "$T/check1.json.out" 2>/dev/null) $(tail -n 1 "$T/check1.text.err") written: $(cat "$T/check1.written")"; rc=1; }
    local left_id
    left_id=$(cp_etcd_call "$T/m1" /v3/cluster/member/add '{"peerURLs":["https://127.0.0.19:2380"],"isLearner":true}' | jq -r .member.ID)
    NODE_NS=check in_node "cp_etcd_check_in 2"
    [ "$(cat "$T/check2.json.rc")" = 6 ] && [ "$(cat "$T/check2.text.rc")" = 6 ] &&
      jq -e '.error.check.etcd.problems == "etcd member https://127.0.0.19:2380 has not started: etcd takes no other learner until it starts or is removed"' \
        "$T/check2.json.out" >/dev/null && grep -q "etcd member https://127.0.0.19:2380 has not started" "$T/check2.text.err" &&
      [ ! -s "$T/check2.written" ] ||
      { fail "check --control-plane, a learner left: exit $(cat "$T/check2.json.rc"): $(jq -c .error.check.etcd "$T/check2.json.out" 2>/dev/null) written: $(cat "$T/check2.written")"; rc=1; }
    cp_etcd_call "$T/m1" /v3/cluster/member/remove "{\"ID\":\"$left_id\"}" >/dev/null || { fail "the learner left could not be removed"; rc=1; }
    # Member 1's peer URL moved to a port where nothing listens (its own still serves: a member of one
    # has no peer to tell): this node cannot reach it, and the check says so (exit 3).
    local m1_id
    m1_id=$(cp_etcd_call "$T/m1" /v3/cluster/member/list '{}' | jq -r '.members[0].ID')
    cp_etcd_call "$T/m1" /v3/cluster/member/update "{\"ID\":\"$m1_id\",\"peerURLs\":[\"https://$CP_ETCD1:2390\"]}" >/dev/null &&
      NODE_NS=check in_node "cp_etcd_check_in 3" &&
      cp_etcd_call "$T/m1" /v3/cluster/member/update "{\"ID\":\"$m1_id\",\"peerURLs\":[\"https://$CP_ETCD1:2380\"]}" >/dev/null ||
      { fail "member 1's peer URL could not be moved and back"; rc=1; }
    [ "$(cat "$T/check3.json.rc")" = 3 ] &&
      jq -e --arg p "https://$CP_ETCD1:2390" '.error.check.etcd.members[0] | .peerURL == $p and .healthy and (.peerReachable | not)' \
        "$T/check3.json.out" >/dev/null &&
      grep -q "this node cannot reach etcd member cp-1 at its peer URL https://$CP_ETCD1:2390: .*connection refused" "$T/check3.text.err" ||
      { fail "check --control-plane, a peer URL not reached: exit $(cat "$T/check3.json.rc"): $(jq -c .error.check.etcd "$T/check3.json.out" 2>/dev/null)"; rc=1; }
  fi
  NODE_NS=unstarted in_node cp_etcd_unstarted_in
  [ ! -s "$T/etcd.why" ] || { fail "$(cat "$T/etcd.why")"; rc=1; }
  local said="etcd's Pod etcd-cp-2: ImagePullBackOff: Back-off pulling image \"$image\""
  [ "$(cat "$T/unstarted.rc")" = 3 ] && grep -q "the new etcd member never started before the deadline: $said" "$T/unstarted.err" &&
    grep -q "^\[etcd\] The new member has not started after 1[5-9] s: $said" "$T/unstarted.err" &&
    grep -q "^\[etcd\] The new member has not started after 3[0-4] s: $said" "$T/unstarted.err" &&
    jq -e --arg said "$said" '[.error.events[].message | select(startswith("[etcd] The new member has not started after") and endswith($said))] | length == 2' \
      "$T/unstarted.out" >/dev/null ||
    { fail "a member that never starts: exit $(cat "$T/unstarted.rc"): $(grep -e '^\[etcd\]' -e rror "$T/unstarted.err" | tail -n 4 | cut -c1-300)"; rc=1; }
  if [ "$E2E_MINOR" -ge 29 ]; then
    grep -q "the member, which never started, was removed from the cluster and its etcd.yaml taken back" "$T/unstarted.err" &&
      [ "$(cat "$T/unstarted.members")" = "cp-1 https://$CP_ETCD1:2380 false" ] &&
      [ "$(tr '\n' ' ' <"$T/unstarted.after")" = "none nodata no member " ] && jq -e '.error.etcdMemberRemoved' "$T/unstarted.out" >/dev/null ||
      { fail "the learner that never started: $(tr '\n' ';' <"$T/unstarted.members") $(tr '\n' ' ' <"$T/unstarted.after") $(tail -n 1 "$T/unstarted.err")"; rc=1; }
  else
    grep -Eq "the member, which never started, could not be removed \(.*\): start it, or remove it \(etcdctl member remove [0-9a-f]+\)" "$T/unstarted.err" &&
      [ "$(cat "$T/unstarted.members")" = " https://$CP_ETCD2:2380 false
cp-1 https://$CP_ETCD1:2380 false" ] && [ "$(tr '\n' ' ' <"$T/unstarted.after")" = "manifest data https://$CP_ETCD2:2380 " ] &&
      jq -e '.error.etcdMemberRemoved | not' "$T/unstarted.out" >/dev/null ||
      { fail "the voter that never started: $(tr '\n' ';' <"$T/unstarted.members") $(tr '\n' ' ' <"$T/unstarted.after") $(tail -n 1 "$T/unstarted.err")"; rc=1; }
  fi
  # The cluster was told, with the cause.
  local id; id=$(jq -r '.error.joinID' "$T/unstarted.out")
  "$KJOIN" reports --kubeconfig "$E2E_ADMIN" --node cp-2 -o json >"$T/reports.json" 2>"$T/reports.err" &&
    jq -e --arg id "$id" --arg image "$image" '[.reports[] | select(.joinID == $id and .exitCode == 3 and .phase == "etcd-join" and
      (.reason | contains("ImagePullBackOff") and contains($image)))] | length == 1' "$T/reports.json" >/dev/null ||
    { fail "no report of the join $id: $(head -c 600 "$T/reports.json") $(cat "$T/reports.err")"; rc=1; }
  kc delete csr "kjoin-report-$id" >/dev/null 2>&1
  # The image there (etcd starts): the same join joins.
  NODE_NS=unstarted in_node cp_etcd_started_in
  [ "$(cat "$T/started.rc")" = 0 ] && [ "$(cat "$T/started.members")" = "cp-1 https://$CP_ETCD1:2380 false
cp-2 https://$CP_ETCD2:2380 false" ] ||
    { fail "the same join with etcd starting: exit $(cat "$T/started.rc"): $(tail -n 2 "$T/started.err") members: $(tr '\n' ';' <"$T/started.members")"; rc=1; }
  [ -s "$T/etcd-m2.pid" ] && e2e_stop "$(cat "$T/etcd-m2.pid")"
  rm -f "$T/etcd-m2.pid"
  e2e_stop "$E2E_PID_etcd_m1"
  kc -n kube-system delete pod etcd-cp-2 --force --grace-period=0 >/dev/null 2>&1
  kc delete node cp-2 >/dev/null 2>&1
  cp_etcd_first_gone
  cp_cluster_names restore || rc=1
  return $rc
}

# ---- wait-control-plane ------------------------------------------------------------

# cp_wait_in (in a node): kjoin's prepare for a node whose API server is
# the suite's (advertise 127.0.0.1, the suite's port), then its wait.
cp_wait_in() {
  . "$T/cp.env"
  "$KJOIN" join phase control-plane-prepare "$E2E_ENDPOINT" --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash "$E2E_PIN" --control-plane --certificate-key-file "$T/key" --node-name cp-w \
    --apiserver-advertise-address 127.0.0.1 --apiserver-bind-port "${E2E_ENDPOINT##*:}" >"$T/prepare.out" 2>&1 ||
    { echo "prepare: $(tail -2 "$T/prepare.out")" >"$T/wait.why"; return; }
  cp_wait_once 1
  [ "$(cat "$T/wait1.rc")" = 3 ] || return
  # The scheduler's stand-in comes up: the same wait passes.
  openssl s_server -quiet -www -accept "127.0.0.1:$CP_SCHED_PORT" -cert "$T/standin.crt" -key "$T/standin.key" \
    >/dev/null 2>&1 &
  echo $! >"$T/standin2.pid"
  cp_wait_once 2
}
cp_wait_once() {
  "$KJOIN" join phase wait-control-plane "$E2E_ENDPOINT" --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash "$E2E_PIN" --control-plane --apiserver-advertise-address 127.0.0.1 \
    --discovery-timeout 15s -o json >"$T/wait$1.out" 2>"$T/wait$1.err"
  echo $? >"$T/wait$1.rc"
}

# The node's API server is the suite's own, asked as the node's admin with
# the cluster CA verifying; the controller manager and the scheduler are
# stand-ins answering 200 over TLS on the ports the cluster's extraArgs
# give them (--secure-port in their manifests): kjoin waits where the
# manifests say, names what never answered, and passes once all three do.
t_e2e_controlplane_wait_control_plane() {
  local rc=0 api=$E2E_KUBEADM_API kcm sched
  cp_shared_pki "$T/src" && cp_upload "$T/src" && cp_key "$CP_KEY" || return 1
  kc create clusterrolebinding kubeadm:cluster-admins --clusterrole=cluster-admin --group=kubeadm:cluster-admins \
    >/dev/null 2>&1
  kcm=$("$TOOLS/freeport") sched=$("$TOOLS/freeport") || return 1
  local args="{secure-port: \"%s\"}"
  [ "$api" != kubeadm.k8s.io/v1beta4 ] || args='[{name: secure-port, value: "%s"}]'
  printf "apiVersion: %s\nkind: ClusterConfiguration\nkubernetesVersion: %s\ncontrolPlaneEndpoint: %s\ncontrollerManager:\n  extraArgs: $args\nscheduler:\n  extraArgs: $args\n" \
    "$api" "$E2E_VERSION" "$E2E_ENDPOINT" "$kcm" "$sched" >"$T/wait.yaml"
  "$KBIN/kubeadm" init phase upload-config kubeadm --config "$T/wait.yaml" --kubeconfig "$E2E_ADMIN" >"$T/names.log" 2>&1 ||
    { fail "upload-config: $(tail -2 "$T/names.log")"; return 1; }
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/standin.key" -out "$T/standin.crt" -subj /CN=standin -days 1 \
    2>/dev/null || return 1
  openssl s_server -quiet -www -accept "127.0.0.1:$kcm" -cert "$T/standin.crt" -key "$T/standin.key" >/dev/null 2>&1 &
  local standin=$!
  printf 'CP_SCHED_PORT=%s\n' "$sched" >"$T/cp.env"
  NODE_NS=wait in_node cp_wait_in
  [ ! -s "$T/wait.why" ] || { fail "$(cat "$T/wait.why")"; rc=1; }
  # First: no scheduler. Exit 3 at the deadline, naming it and its URL; the other two healthy.
  local last spath=livez; last=$(tail -1 "$T/wait1.err" 2>/dev/null)
  [ "$E2E_MINOR" -ge 34 ] || spath=healthz # the release's own, as the scheduler's liveness probe
  [ "$(cat "$T/wait1.rc" 2>/dev/null)" = 3 ] && [[ $last == *"kube-scheduler at https://127.0.0.1:$sched/$spath"* ]] &&
    [[ $last != *"kube-apiserver at"* && $last != *"kube-controller-manager at"* ]] ||
    { fail "the wait without a scheduler: exit $(cat "$T/wait1.rc" 2>/dev/null): $(tail -1 "$T/wait1.err" 2>/dev/null)"; rc=1; }
  grep -q "Checking kube-apiserver at https://127.0.0.1:${E2E_ENDPOINT##*:}/livez" "$T/wait1.err" &&
    grep -q "Checking kube-controller-manager at https://127.0.0.1:$kcm/healthz" "$T/wait1.err" ||
    { fail "the wait did not check where the manifests say: $(grep Checking "$T/wait1.err" 2>/dev/null | tr '\n' ' ')"; rc=1; }
  # Then: all three healthy.
  [ "$(cat "$T/wait2.rc" 2>/dev/null)" = 0 ] &&
    jq -e '.controlPlaneHealthyMs | ."kube-apiserver" > 0 and ."kube-controller-manager" > 0 and ."kube-scheduler" > 0' \
      "$T/wait2.out" >/dev/null ||
    { fail "the wait with all three: exit $(cat "$T/wait2.rc" 2>/dev/null): $(tail -1 "$T/wait2.err" 2>/dev/null)"; rc=1; }
  e2e_stop "$standin"
  [ -s "$T/standin2.pid" ] && e2e_stop "$(cat "$T/standin2.pid")"
  cp_cluster_names restore || rc=1
  return $rc
}

# ---- the whole join, by the cluster's release ------------------------------------

# cp_whole_in (in a node): the whole join, every preflight check ignored
# (the machine's own ports do not decide the test), or CP_PHASE alone;
# CP_PLANT, a function run first, puts files of the node's own in place
# (both from $T/whole.env, which cp_whole writes). What is on the node
# after, but what was planted, in $T/written.
cp_whole_in() {
  [ ! -f "$T/whole.env" ] || . "$T/whole.env"
  ${CP_PLANT:-:}
  local planted; planted=$(tree_state /etc/kubernetes /var/lib/kubelet /var/lib/etcd)
  "$KJOIN" join ${CP_PHASE:-} "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
    --control-plane ${CP_PHASE:+--skip-phases preflight} $([ -n "${CP_PHASE:-}" ] || echo "--certificate-key-file $T/key") \
    --node-name cp-whole --apiserver-advertise-address 127.0.0.1 --cri-socket "$NODE_CRI" --ignore-preflight-errors all \
    -o json >"$T/join.out" 2>"$T/join.err"
  echo $? >"$T/join.rc"
  tree_changes "$planted" /etc/kubernetes /var/lib/kubelet /var/lib/etcd >"$T/written"
}

# `kjoin join --control-plane` whole: on v1.20 (whose kubeadm also records
# the node in kubeadm-config's ClusterStatus) refused by name after
# discovery, exit 2; on the newest it goes on to download-certs, where a
# wrong key stops it (exit 4). Nothing written either way. (The whole join
# itself is the node lab's test, tests/lab/t_ha.sh.)
t_e2e_controlplane_whole_join_by_release() {
  local rc=0
  cp_shared_pki "$T/src" && cp_upload "$T/src" && cp_key "$(printf '%064d' 3)" && node_setup || return 1
  NODE_NS=whole in_node cp_whole_in
  if [ "$E2E_MINOR" -lt 22 ]; then
    [ "$(cat "$T/join.rc")" = 2 ] && grep -q "recorded in kubeadm-config's ClusterStatus (kubeadm's update-status phase)" "$T/join.err" ||
      { fail "v1.$E2E_MINOR: exit $(cat "$T/join.rc"): $(tail -n 2 "$T/join.err")"; rc=1; }
  else
    [ "$(cat "$T/join.rc")" = 4 ] && grep -q "the certificate key does not open it" "$T/join.err" &&
      ! grep -q "ClusterStatus" "$T/join.err" || { fail "exit $(cat "$T/join.rc"): $(tail -n 2 "$T/join.err")"; rc=1; }
  fi
  [ ! -s "$T/written" ] || { fail "written: $(tr '\n' ' ' <"$T/written")"; rc=1; }
  ! grep -q "$(printf '%064d' 3)" "$T/join.out" "$T/join.err" || { fail "the certificate key was printed"; rc=1; }
  # Refused after discovery: the cluster sees why (a join report: the join's ID, phase and exit code), and
  # the report holds neither the token's secret nor the certificate key.
  local id phase=control-plane-prepare; id=$(jq -r '.error.joinID' "$T/join.out")
  [ "$E2E_MINOR" -ge 22 ] || phase=join
  "$KJOIN" reports --kubeconfig "$E2E_ADMIN" --node cp-whole -o json >"$T/reports.json" 2>"$T/reports.err" &&
    jq -e --arg id "$id" --arg phase "$phase" --argjson code "$(cat "$T/join.rc")" \
      '[.reports[] | select(.joinID == $id and .exitCode == $code and .phase == $phase and .tokenID == "abcdef")] | length == 1' \
      "$T/reports.json" >/dev/null && jq -e '.error.reported' "$T/join.out" >/dev/null ||
    { fail "no report of the join $id: $(cat "$T/reports.json" "$T/reports.err" | head -c 600)"; rc=1; }
  kc get csr -l kjoin.io/join-report -o json >"$T/report.csr" &&
    jq -e --arg n "kjoin-report-$id" '[.items[].metadata.name] | index($n) != null' "$T/report.csr" >/dev/null &&
    ! grep -q -e 0123456789abcdef -e "$(printf '%064d' 3)" "$T/report.csr" ||
    { fail "the report as kubectl shows it: $(head -c 400 "$T/report.csr")"; rc=1; }
  return $rc
}

# cp_whole NS: cp_whole_in in node NS, with CP_PHASE and CP_PLANT as the caller has them.
cp_whole() {
  printf 'CP_PHASE=%q\nCP_PLANT=%q\n' "${CP_PHASE:-}" "${CP_PLANT:-}" >"$T/whole.env"
  NODE_NS=$1 in_node cp_whole_in
  rm -f "$T/whole.env"
}

# cp_cluster_with YAML: the suite's ClusterConfiguration with YAML added
# (restored by cp_cluster_names restore).
cp_cluster_with() {
  local api=$E2E_KUBEADM_API
  printf 'apiVersion: %s\nkind: InitConfiguration\nnodeRegistration:\n  name: e2e-control-plane\n---\napiVersion: %s\nkind: ClusterConfiguration\nkubernetesVersion: %s\nclusterName: kubernetes\ncontrolPlaneEndpoint: %s\n%s\n' \
    "$api" "$api" "$E2E_VERSION" "$E2E_ENDPOINT" "$1" >"$T/with.yaml"
  "$KBIN/kubeadm" init phase upload-config kubeadm --config "$T/with.yaml" --kubeconfig "$E2E_ADMIN" \
    >"$T/with.log" 2>&1 || { fail "kubeadm upload-config: $(tail -2 "$T/with.log")"; return 1; }
}

# cp_planted_pair: an apiserver certificate and key of another cluster's CA
# in the node's certificates directory, which the certs step refuses
# (kubeadm would not keep it) after download-certs wrote the shared CAs.
cp_planted_pair() {
  mkdir -p /etc/kubernetes/pki && cp "$T/other/apiserver.crt" "$T/other/apiserver.key" /etc/kubernetes/pki/ &&
    chmod 0600 /etc/kubernetes/pki/apiserver.key
}

# Every refusal that needs only the flags, the machine and the cluster's
# ClusterConfiguration comes before the first file lands (the CA keys
# first of all): a field the static Pods cannot carry yet (an extraEnvs
# valueFrom) refuses the
# whole join before download-certs (an external etcd is carried: the
# control-plane step alone points the API server at it). A failure after the first write (the certs step refusing a pair
# already there) takes back what the run wrote: exit 7, the cause in -o
# json, nothing of the run left.
t_e2e_controlplane_refusals_come_before_the_first_write() {
  local rc=0
  cp_shared_pki "$T/src" && cp_upload "$T/src" && cp_key "$CP_KEY" && node_setup || return 1
  if [ "$E2E_MINOR" -ge 22 ]; then
    cp_cluster_with "apiServer:
  extraEnvs: [{name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}]" || return 1
    cp_whole vols
    [ "$(cat "$T/join.rc")" = 2 ] && grep -q "apiServer.extraEnvs\[\].valueFrom" "$T/join.err" ||
      { fail "extraEnvs' valueFrom: exit $(cat "$T/join.rc"): $(tail -n 2 "$T/join.err")"; rc=1; }
    ! grep -q "download-certs" "$T/join.err" || { fail "valueFrom: download-certs ran"; rc=1; }
    [ ! -s "$T/written" ] || { fail "valueFrom: written: $(tr '\n' ' ' <"$T/written")"; rc=1; }
  fi
  # An external etcd is carried: the control-plane step alone points the API server at its endpoints
  # and makes no etcd.yaml.
  cp_cluster_with "etcd:
  external:
    endpoints: [\"http://192.0.2.9:2379\"]" || rc=1
  CP_PHASE="phase control-plane-prepare/control-plane" cp_whole external
  local m=$T/external/etc.upper/kubernetes/manifests
  [ "$(cat "$T/join.rc")" = 0 ] && grep -q -- "--etcd-servers=http://192.0.2.9:2379" "$m/kube-apiserver.yaml" &&
    [ ! -e "$m/etcd.yaml" ] || { fail "external etcd: exit $(cat "$T/join.rc"): $(tail -n 2 "$T/join.err")"; rc=1; }
  cp_cluster_names restore || rc=1
  if [ "$E2E_MINOR" -ge 22 ]; then
    mkdir -p "$T/other" && "$KBIN/kubeadm" init phase certs ca --cert-dir "$T/other" >>"$T/certs.log" 2>&1 &&
      "$KBIN/kubeadm" init phase certs apiserver --cert-dir "$T/other" >>"$T/certs.log" 2>&1 ||
      { fail "kubeadm certs: $(tail -2 "$T/certs.log")"; return 1; }
    CP_PLANT=cp_planted_pair cp_whole back
    [ "$(cat "$T/join.rc")" = 7 ] && grep -q "download-certs" "$T/join.err" &&
      grep -q "what this run had written was taken back" "$T/join.err" ||
      { fail "taken back: exit $(cat "$T/join.rc"): $(tail -n 2 "$T/join.err")"; rc=1; }
    jq -e '.error.reason == "TakenBack" and .error.cause == "InvalidInput" and (.error.takenBack | length) > 8
        and (.error.takenBack | index("/etc/kubernetes/pki/ca.key")) != null and .error.left == []' "$T/join.out" >/dev/null ||
      { fail "taken back: -o json: $(cat "$T/join.out")"; rc=1; }
    [ ! -s "$T/written" ] || { fail "taken back: left: $(tr '\n' ' ' <"$T/written")"; rc=1; }
    [ -f "$T/back/etc.upper/kubernetes/pki/apiserver.key" ] || { fail "taken back: the planted key went too"; rc=1; }
  fi
  ! grep -q "$CP_KEY" "$T/join.out" "$T/join.err" || { fail "the certificate key was printed"; rc=1; }
  return $rc
}

# An external etcd (kubeadm's etcd.external), against a real one: Debian's
# etcd serving TLS on the suite's loopback address 127.0.0.14 with a CA of
# its own, client certificates required. kubeadm uploads the cluster's
# shared files and the etcd client's (its upload-certs, from a
# ClusterConfiguration naming them); kjoin and kubeadm each run
# control-plane-prepare in a node of their own from the cluster's
# ClusterConfiguration (the client's files under /etc/kubernetes/pki, as
# kubeadm's guide puts them). Both write the same files (names, modes; the
# etcd client's byte for byte, no etcd CA and no etcd leaves), the same API
# server Pod (parsed), and the client files kjoin downloaded talk to the real
# etcd. check-etcd and etcd-join say kubeadm's lines and write nothing; the
# whole node then resets with no etcd member to remove.
cp_external_in() {
  . "$T/cp.env"
  "$KJOIN" join phase check-etcd "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
    --control-plane --node-name "$CP_NODE" --apiserver-advertise-address "$CP_ADDR" >"$T/check.out" 2>&1
  echo $? >"$T/check.rc"
  "$KJOIN" join phase etcd-join "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
    --control-plane --node-name "$CP_NODE" --apiserver-advertise-address "$CP_ADDR" >"$T/etcd.out" 2>&1
  echo $? >"$T/etcd.rc"
  find /etc/kubernetes -type f | sort >"$T/after-etcd"
  curl -sS --max-time 10 --cacert /etc/kubernetes/pki/etcd/ca.crt --cert /etc/kubernetes/pki/apiserver-etcd-client.crt \
    --key /etc/kubernetes/pki/apiserver-etcd-client.key https://127.0.0.14:2379/health >"$T/health" 2>&1
  "$KJOIN" reset -o json >"$T/reset.out" 2>"$T/reset.err"
  echo $? >"$T/reset.rc"
}
t_e2e_controlplane_external_etcd_as_kubeadm() {
  local rc=0 ext=$T/ext api=$E2E_KUBEADM_API pid
  # 1.20's whole control-plane join is refused; its phases are the same code.
  [ "$E2E_MINOR" -ge 22 ] || { skip "kjoin refuses a 1.20 control-plane join"; return 0; }
  cp_shared_pki "$T/src" && rm -rf "$T/src/etcd" && cp_key "$CP_KEY" || return 1
  # The external etcd's CA and the API server's client pair, made by kubeadm's own certs phases.
  mkdir -p "$ext" && "$KBIN/kubeadm" init phase certs etcd-ca --cert-dir "$ext" >>"$T/certs.log" 2>&1 &&
    "$KBIN/kubeadm" init phase certs etcd-server --cert-dir "$ext" >>"$T/certs.log" 2>&1 &&
    "$KBIN/kubeadm" init phase certs apiserver-etcd-client --cert-dir "$ext" >>"$T/certs.log" 2>&1 ||
    { fail "kubeadm certs: $(tail -2 "$T/certs.log")"; return 1; }
  openssl x509 -in "$ext/etcd/server.crt" -noout -text | grep -q "IP Address:127.0.0.1" ||
    { fail "etcd's server certificate has no 127.0.0.1"; return 1; }
  # etcd's server certificate names 127.0.0.1; the suite's etcd address is 127.0.0.14: a name of its own.
  openssl req -new -key "$ext/etcd/server.key" -subj /CN=external-etcd -out "$ext/server.csr" 2>/dev/null &&
    openssl x509 -req -in "$ext/server.csr" -CA "$ext/etcd/ca.crt" -CAkey "$ext/etcd/ca.key" -days 1 \
      -extfile <(printf 'subjectAltName=IP:127.0.0.14\nextendedKeyUsage=serverAuth\n') -out "$ext/server14.crt" 2>/dev/null ||
    { fail "etcd's server certificate"; return 1; }
  etcd --name external --data-dir "$T/etcd-data" --listen-client-urls https://127.0.0.14:2379 \
    --advertise-client-urls https://127.0.0.14:2379 --listen-peer-urls http://127.0.0.14:2380 \
    --initial-advertise-peer-urls http://127.0.0.14:2380 --initial-cluster external=http://127.0.0.14:2380 \
    --cert-file "$ext/server14.crt" --key-file "$ext/etcd/server.key" --trusted-ca-file "$ext/etcd/ca.crt" \
    --client-cert-auth >"$T/etcd.log" 2>&1 &
  pid=$!
  e2e_wait 30 curl -sf --cacert "$ext/etcd/ca.crt" --cert "$ext/apiserver-etcd-client.crt" \
    --key "$ext/apiserver-etcd-client.key" https://127.0.0.14:2379/health || { fail "etcd: $(tail -3 "$T/etcd.log")"; kill $pid; return 1; }
  # kubeadm's upload, from a configuration naming the files where this machine has them.
  printf 'apiVersion: %s\nkind: InitConfiguration\ncertificateKey: "%s"\n---\napiVersion: %s\nkind: ClusterConfiguration\nkubernetesVersion: %s\ncertificatesDir: %s\netcd:\n  external:\n    endpoints: [https://127.0.0.14:2379]\n    caFile: %s\n    certFile: %s\n    keyFile: %s\n' \
    "$api" "$CP_KEY" "$api" "$E2E_VERSION" "$T/src" "$ext/etcd/ca.crt" "$ext/apiserver-etcd-client.crt" \
    "$ext/apiserver-etcd-client.key" >"$T/upload.yaml"
  "$KBIN/kubeadm" init phase upload-certs --upload-certs --config "$T/upload.yaml" --kubeconfig "$E2E_ADMIN" \
    >"$T/upload.log" 2>&1 || { fail "kubeadm upload-certs: $(tail -2 "$T/upload.log")"; kill $pid; return 1; }
  cp_cluster_with "etcd:
  external:
    endpoints: [https://127.0.0.14:2379]
    caFile: /etc/kubernetes/pki/etcd/ca.crt
    certFile: /etc/kubernetes/pki/apiserver-etcd-client.crt
    keyFile: /etc/kubernetes/pki/apiserver-etcd-client.key" || { kill $pid; return 1; }
  cp_prepare_in kjoin
  [ "$(cat "$T/join.rc")" = 0 ] || { fail "kjoin's control-plane-prepare: $(tail -3 "$T/join.err")"; rc=1; }
  : >"$T/kubeadm.out"
  node_setup && declare -p CP_NODE CP_ADDR E2E_KUBEADM_API >"$T/cp.env" && (. "$T/cp.env"; cp_join_yaml) &&
    NODE_NS=kubeadm in_node cp_kubeadm_prepare
  [ "$(cat "$T/kubeadm.rc")" = 0 ] || { fail "kubeadm's control-plane-prepare: $(tail -3 "$T/kubeadm.out")"; rc=1; }
  local ours theirs f
  ours=$(cd "$T/kjoin/etc.upper/kubernetes" && find pki manifests -type f -printf '%p %m\n' | sort)
  theirs=$(cd "$T/kubeadm/etc.upper/kubernetes" && find pki manifests -type f -printf '%p %m\n' | sort)
  [ "$ours" = "$theirs" ] || { fail "the files differ from kubeadm's: $(diff <(echo "$theirs") <(echo "$ours") | grep '^[<>]' | tr '\n' ' ')"; rc=1; }
  for f in etcd/ca.crt apiserver-etcd-client.crt apiserver-etcd-client.key; do
    cmp -s "$ext/${f#etcd/}" "$T/kjoin/etc.upper/kubernetes/pki/$f" 2>/dev/null || cmp -s "$ext/$f" "$T/kjoin/etc.upper/kubernetes/pki/$f" ||
      { fail "$f is not the uploaded file"; rc=1; }
  done
  ! echo "$ours" | grep -q -e "etcd/server" -e "etcd/peer" -e "etcd/ca.key" -e "healthcheck" || { fail "etcd leaves made: $ours"; rc=1; }
  ours=$(cp_manifest kjoin kube-apiserver) theirs=$(cp_manifest kubeadm kube-apiserver)
  [ "$ours" = "$theirs" ] || { fail "kube-apiserver.yaml differs: $(diff <(echo "$theirs") <(echo "$ours") | grep '^[<>]' | tr '\n' ' ')"; rc=1; }
  echo "$ours" | grep -q -- "--etcd-servers=https://127.0.0.14:2379" || { fail "the API server is not pointed at the external etcd"; rc=1; }
  NODE_NS=kjoin in_node cp_external_in
  [ "$(cat "$T/check.rc")" = 0 ] && grep -q "Skipping etcd check in external mode" "$T/check.out" ||
    { fail "check-etcd: exit $(cat "$T/check.rc"): $(tail -2 "$T/check.out")"; rc=1; }
  [ "$(cat "$T/etcd.rc")" = 0 ] && grep -q "Using external etcd - no local stacked instance added" "$T/etcd.out" ||
    { fail "etcd-join: exit $(cat "$T/etcd.rc"): $(tail -2 "$T/etcd.out")"; rc=1; }
  ! grep -q "manifests/etcd.yaml" "$T/after-etcd" || { fail "etcd-join wrote etcd.yaml"; rc=1; }
  grep -q '"health":"true"' "$T/health" || { fail "the downloaded client files do not talk to the external etcd: $(cat "$T/health")"; rc=1; }
  [ "$(cat "$T/reset.rc")" = 0 ] && ! grep -qi "member" "$T/reset.err" || { fail "reset: exit $(cat "$T/reset.rc"): $(tail -2 "$T/reset.err")"; rc=1; }
  [ -z "$(find "$T/kjoin/etc.upper/kubernetes" -type f 2>/dev/null)" ] ||
    { fail "reset left: $(find "$T/kjoin/etc.upper/kubernetes" -type f | tr '\n' ' ')"; rc=1; }
  kill $pid; wait $pid 2>/dev/null
  cp_cluster_names restore || rc=1
  ! grep -q "$CP_KEY" "$T/join.out" "$T/join.err" || { fail "the certificate key was printed"; rc=1; }
  return $rc
}
