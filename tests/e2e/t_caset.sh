# kjoin certs ca-set --layout kubeadm read by the real kubeadm: it takes the
# CAs and the service-account key as its own and issues the control plane's
# certificates from them (sourced by run.sh).

t_e2e_caset_kubeadm_uses_the_set() {
  local d=$T/etc org=$T/org
  mkdir -p "$org" && mkca "$org" org || return 1
  kj 0 certs ca-set --dir "$d" --layout kubeadm --root-cert "$org/org.crt" --root-key "$org/org.key" --intermediate || return 1
  # A routable-looking address: kubeadm picks a host interface for loopback ones.
  cat >"$T/kubeadm.yaml" <<CFG
apiVersion: $E2E_KUBEADM_API
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: 192.0.2.10
nodeRegistration:
  name: caset-node
---
apiVersion: $E2E_KUBEADM_API
kind: ClusterConfiguration
kubernetesVersion: $E2E_VERSION
certificatesDir: $d/pki
CFG
  "$KBIN/kubeadm" init phase certs all --config "$T/kubeadm.yaml" >"$T/kubeadm.log" 2>&1 ||
    { fail "kubeadm init phase certs: $(cat "$T/kubeadm.log")"; return 1; }
  local want
  for want in 'Using existing ca certificate authority' 'Using existing front-proxy-ca certificate authority' \
              'Using existing etcd/ca certificate authority' 'Using the existing "sa" key'; do
    grep -qF "$want" "$T/kubeadm.log" || fail "kubeadm did not say: $want" || return 1
  done
  # What kubeadm issued chains to the organisation's root through the set.
  local leaf
  for leaf in apiserver apiserver-kubelet-client front-proxy-client etcd/server etcd/peer apiserver-etcd-client; do
    openssl verify -x509_strict -CAfile "$org/org.crt" -untrusted "$d/pki/ca-bundle.crt" \
      -untrusted "$d/pki/front-proxy-ca.crt" -untrusted "$d/pki/etcd/ca.crt" "$d/pki/$leaf.crt" >/dev/null 2>&1 ||
      fail "$leaf.crt does not chain to the root" || return 1
  done
  # kubeadm's kubeconfig phase checks the CA and writes admin.conf from it.
  "$KBIN/kubeadm" init phase kubeconfig admin --config "$T/kubeadm.yaml" --kubeconfig-dir "$d" >>"$T/kubeadm.log" 2>&1 ||
    { fail "kubeadm init phase kubeconfig: $(tail -3 "$T/kubeadm.log")"; return 1; }
  # kube-controller-manager's signer takes exactly one certificate from ca.crt.
  [ "$(grep -c 'BEGIN CERTIFICATE' "$d/pki/ca.crt")" = 1 ] || fail "ca.crt is a bundle"
}
