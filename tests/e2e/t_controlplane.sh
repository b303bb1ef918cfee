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
cp_shared_pki() {
  local d=$1 ca=${2:-$E2E_DIR} phase
  # The CA's key as kubeadm writes keys (SEC1, "EC PRIVATE KEY"): v1.20's
  # kubeadm cannot read the PKCS#8 the suite's openssl made.
  mkdir -p "$d" && cp "$ca/ca.crt" "$d/" && openssl pkey -in "$ca/ca.key" -traditional -out "$d/ca.key" || return 1
  for phase in front-proxy-ca sa etcd-ca; do
    "$KBIN/kubeadm" init phase certs "$phase" --cert-dir "$d" >>"$T/certs.log" 2>&1 ||
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

# cp_tree NS: the node's /etc/kubernetes/pki: each file's path, mode and
# digest. The modes are the newest kubeadm's (keys 0600, the rest 0644);
# v1.20's wrote every file that holds a public key 0600, certificates too,
# so there only paths and digests are compared.
cp_tree() {
  local mode='%m '
  [ "$E2E_MINOR" -ge 30 ] || mode=
  (cd "$T/$1/etc.upper/kubernetes/pki" 2>/dev/null && find . -type f -printf "%p $mode" -exec sh -c 'sha256sum <"$1" | cut -c1-16' _ {} \; | sort)
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
  # Nothing but what was there before (the occupied node's sa.key and its directory).
  [ -z "$(find "$T/$3/etc.upper" -mindepth 1 2>/dev/null | grep -v "^$T/$3/etc.upper/kubernetes\(/pki\(/sa.key\)\?\)\?$")" ] ||
    { fail "$3: written: $(find "$T/$3/etc.upper" -mindepth 1 | tr '\n' ' ')"; return 1; }
  ! grep -q "${CP_KEY_GIVEN:-$CP_KEY}" "$T/join.out" "$T/join.err" || { fail "$3: the key was printed"; return 1; }
}
t_e2e_controlplane_download_certs_refusals_write_nothing() {
  local rc=0
  cp_shared_pki "$T/src" && cp_upload "$T/src" || return 1
  CP_KEY_GIVEN=$(printf '%064d' 2) cp_refused 4 "the certificate key does not open it" wrong-key || rc=1
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
