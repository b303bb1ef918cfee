# The releases between the two ends (tests/releases.txt), each proven
# against its own kubeadm: on the newest control plane, the kubeadm-config
# ClusterConfiguration says the release (kjoin and kubeadm both take the
# release from its kubernetesVersion), and that release's kubeadm and kjoin
# run the same phase with the same flags in two nodes of their own; the
# nodes' files are compared (compare_trees, t_node.sh). The newest's own
# kubeadm is t_node.sh's and t_controlplane.sh's.

REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# The releases' kubeadm binaries (scripts/kube-build-release.sh, cached).
releases_kubeadm() { local d; d=$(bash "$REPO_DIR/scripts/kube-build-release.sh" "$1" kubeadm 2>/dev/null) && echo "$d/kubeadm"; }

# releases_cluster_as SAVED VERSION [YAML]: kubeadm-config's
# ClusterConfiguration as SAVED (the ConfigMap's JSON) with kubernetesVersion
# VERSION and YAML (top-level lines) added; SAVED alone puts it back.
# A release before 1.31 reads only v1beta3 (before 1.22 only v1beta2, the
# same fields here): the ClusterConfiguration is served to it in that
# version (extraArgs a map, v1beta4's own fields gone), as a cluster of that
# release stores it.
releases_cluster_as() {
  local minor=${2:-v1.99} api=v1beta3
  minor=${minor#v1.} minor=${minor%%.*}
  [ "$minor" -ge 22 ] || api=v1beta2
  jq --arg v "${2:-}" --arg extra "${3:-}" 'if $v == "" then . else .data.ClusterConfiguration |=
      (sub("kubernetesVersion: [^\n]*"; "kubernetesVersion: " + $v) + $extra) end
      | del(.metadata.resourceVersion)' "$1" |
    if [ -n "${2:-}" ] && [ "$minor" -lt 31 ]; then releases_v1beta3 $api; else cat; fi | kc replace -f - >/dev/null ||
    { fail "kubeadm-config could not be replaced"; return 1; }
}
# releases_v1beta3 [API]: kubeadm-config's JSON on stdin, its v1beta4
# ClusterConfiguration as v1beta3 (or API, its fields v1beta3's).
releases_v1beta3() {
  python3 -c '
import json, sys, yaml
cm = json.load(sys.stdin)
cc = yaml.safe_load(cm["data"]["ClusterConfiguration"])
cc["apiVersion"] = "kubeadm.k8s.io/" + sys.argv[1]
def fold(c):
    if isinstance(c, dict):
        if isinstance(c.get("extraArgs"), list):
            c["extraArgs"] = {a["name"]: a["value"] for a in c["extraArgs"]}
        c.pop("extraEnvs", None)
for comp in ("apiServer", "controllerManager", "scheduler"):
    fold(cc.get(comp))
fold((cc.get("etcd") or {}).get("local"))
for f in ("encryptionAlgorithm", "certificateValidityPeriod", "caCertificateValidityPeriod"):
    cc.pop(f, None)
for f in ("dns", "proxy"):
    if isinstance(cc.get(f), dict):
        cc[f].pop("disabled", None)
cm["data"]["ClusterConfiguration"] = yaml.safe_dump(cc)
json.dump(cm, sys.stdout)' "${1:-v1beta3}"
}

# releases_kubelet_config VERSION KUBEADM: the kubelet's ConfigMap as that
# release's kubeadm uploads it (init phase upload-config kubelet, from the
# ClusterConfiguration kubeadm-config now holds and the run's kubelet
# configuration): kubelet-config-1.MINOR before 1.24, with its RBAC, and
# then neither kubelet-config nor the RBAC that lets a joining node read it,
# as in a cluster of that release: 1.23's kubeadm (and kjoin) read
# kubelet-config first, are refused (403) and fall back. The phase
# annotates a Node with the runtime: one is made for it, then deleted.
releases_kubelet_config() {
  local cc api node=kubelet-config-upload
  cc=$(kc -n kube-system get configmap kubeadm-config -o jsonpath='{.data.ClusterConfiguration}') || return 1
  api=$(echo "$cc" | sed -n 's/^apiVersion: //p')
  { printf 'apiVersion: %s\nkind: InitConfiguration\nnodeRegistration: {name: %s, criSocket: "%s"}\n---\n' "$api" "$node" "$NODE_CRI"
    echo "$cc"; echo ---; cat "$ROOT/kubelet-config.yaml"; } >"$T/upload.yaml"
  cp_node "$node" && "$2" init phase upload-config kubelet --config "$T/upload.yaml" --kubeconfig "$E2E_ADMIN" >"$T/upload.log" 2>&1 ||
    { fail "$1: kubeadm upload-config kubelet: $(tail -2 "$T/upload.log")"; kc delete node "$node" >/dev/null 2>&1; return 1; }
  kc delete node "$node" >/dev/null
  [ "${1:0:5}" = v1.23 ] || return 0
  kc -n kube-system delete configmap/kubelet-config role/kubeadm:kubelet-config rolebinding/kubeadm:kubelet-config \
    --ignore-not-found >/dev/null || return 1
  # (what a joining node is refused: the first name, a 403; the second read)
  [ "$(kc -n kube-system auth can-i get configmap/kubelet-config --as system:bootstrap:abcdef \
      --as-group system:bootstrappers:kubeadm:default-node-token)" = no ] &&
    [ "$(kc -n kube-system auth can-i get configmap/kubelet-config-1.23 --as system:bootstrap:abcdef \
      --as-group system:bootstrappers:kubeadm:default-node-token)" = yes ] ||
    { fail "v1.23: a joining node's access to the kubelet's ConfigMaps is not a 1.23 cluster's"; return 1; }
}

# releases_kubelet_config_save FILE: the suite's kubelet-config and the RBAC
# that lets a joining node read it, for releases_kubelet_config_restore.
releases_kubelet_config_save() {
  kc -n kube-system get configmap/kubelet-config role/kubeadm:kubelet-config rolebinding/kubeadm:kubelet-config -o json |
    jq '.items[] |= del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .metadata.managedFields)' >"$1"
}

# releases_kubelet_config_restore SAVED: the suite's own kubelet-config and
# its RBAC (SAVED, releases_kubelet_config_save's) back, the boundary
# releases' kubelet-config-1.MINOR and RBAC gone.
releases_kubelet_config_restore() {
  local v minor
  kc delete -f "$1" --ignore-not-found >/dev/null && kc create -f "$1" >/dev/null ||
    { fail "kubelet-config and its RBAC were not put back"; return 1; }
  for v in $(grep -h '^v' "$REPO_DIR/tests/releases-boundaries.txt"); do
    minor=${v#v1.}; minor=${minor%%.*}
    [ "$minor" -ge 24 ] || kc -n kube-system delete configmap,role,rolebinding "kubelet-config-1.$minor" "kubeadm:kubelet-config-1.$minor" \
      --ignore-not-found >/dev/null 2>&1
  done
}

# releases_kubelet_of VERSION DIR: before 1.27 (whose kubeadm writes
# --container-runtime=remote, which a newer kubelet refuses), a kubelet of
# VERSION in DIR (its version: all kubelet-start asks of it), and DIR
# printed; from 1.27 nothing (the suite's kubelet).
releases_kubelet_of() {
  local minor=${1#v1.}; minor=${minor%%.*}
  [ "$minor" -lt 27 ] || return 0
  mkdir -p "$2" && printf '#!/bin/sh\necho "Kubernetes %s"\n' "$1" >"$2/kubelet" && chmod 0755 "$2/kubelet" && echo "$2"
}

# releases_on_newest: whether this run is on the newest control plane, where
# the releases are compared; elsewhere the test is skipped (its caller then
# returns 0).
releases_on_newest() {
  [ "$E2E_MINOR" = "$E2E_NEWEST_MINOR" ] ||
    { skip "the releases are compared on the newest control plane (1.$E2E_NEWEST_MINOR)"; return 1; }
}

# releases_same_node [patches|gate-off]: for each release, kubelet-start by
# its kubeadm and by kjoin, the nodes compared, with the kubelet's ConfigMap
# as that release's kubeadm uploads it and, before 1.27 (whose kubeadm
# writes --container-runtime=remote, which a newer kubelet refuses), a
# kubelet of that release (its version, all kubelet-start asks of it);
# plain, the boundary releases too.
releases_same_node() {
  local variant=${1:-} rc=0 v base=$T kubeadm extra= saved=$T/kubeadm-config.json kubelet=$T/kubelet-config.json
  local boundaries=$REPO_DIR/tests/releases-boundaries.txt NODE_BIN=
  releases_on_newest || return 0
  [ "$variant" = gate-off ] && extra=$'featureGates:\n  NodeLocalCRISocket: false\n'
  [ -z "$variant" ] || boundaries=
  node_setup && kc -n kube-system get configmap kubeadm-config -o json >"$saved" &&
    releases_kubelet_config_save "$kubelet" || return 1
  for v in $(grep -h '^v' $boundaries "$REPO_DIR/tests/releases.txt"); do
    kubeadm=$(releases_kubeadm "$v") || { fail "no kubeadm $v (scripts/kube-build-release.sh $v)"; rc=1; continue; }
    T=$base/$v
    mkdir -p "$T" && NODE_BIN=$(releases_kubelet_of "$v" "$T/bin") || { rc=1; break; }
    releases_cluster_as "$saved" "$v" "$extra" && releases_kubelet_config "$v" "$kubeadm" || { rc=1; break; }
    NODE_KUBEADM=$kubeadm node_same_files_as_kubeadm ${variant/gate-off/} || rc=1
    # Which file holds the runtime, said for the record (the comparison above decides).
    [ -e "$T/ns-kjoin/lib.upper/kubelet/instance-config.yaml" ] && echo "    $v${extra:+ (gate off)}: instance-config.yaml" ||
      echo "    $v${extra:+ (gate off)}: $(grep -so -- '--container-runtime[-a-z]*' "$T/ns-kjoin/lib.upper/kubelet/kubeadm-flags.env" | tr '\n' ' ')in kubeadm-flags.env"
  done
  T=$base
  releases_cluster_as "$saved" || rc=1
  releases_kubelet_config_restore "$kubelet" || rc=1
  return $rc
}
t_e2e_releases_kubelet_start_as_each_kubeadm() { releases_same_node; }
t_e2e_releases_kubelet_start_patches_as_each_kubeadm() { releases_same_node patches; }
t_e2e_releases_kubelet_start_gate_off_as_each_kubeadm() { releases_same_node gate-off; }

# releases_refused_manifests: kjoin's whole control-plane-prepare on 1.21,
# whose static Pods it does not write (its kubeadm runs nowhere here):
# refused by name (exit 2) before anything is written.
releases_refused_manifests() {
  local saved=$T/kubeadm-config.json
  kc -n kube-system get configmap kubeadm-config -o json >"$saved" && cp_shared_pki "$T/src" && cp_upload "$T/src" &&
    cp_key "$CP_KEY" && releases_cluster_as "$saved" v1.21.14 || return 1
  CP_FLAGS= cp_prepare_in refused-21
  releases_cluster_as "$saved" || return 1
  [ "$(cat "$T/join.rc")" = 2 ] && grep -q "not of 1.21" "$T/join.err" ||
    { fail "1.21's static Pods: exit $(cat "$T/join.rc"): $(tail -2 "$T/join.err")"; return 1; }
  [ -z "$(find "$T/refused-21/etc.upper" -type f 2>/dev/null)" ] ||
    { fail "1.21: written before the refusal: $(find "$T/refused-21/etc.upper" -type f | tr '\n' ' ')"; return 1; }
}
t_e2e_releases_control_plane_prepare_refuses_1_21() {
  releases_on_newest || return 0
  releases_refused_manifests
}

# releases_pods_config VERSION DIR [external]: a ClusterConfiguration and an
# InitConfiguration for VERSION (in the API version its kubeadm stores)
# with what the static Pods are made from set: extra arguments (an
# authorization mode kubeadm filters), subnets, a cluster name, a
# certificatesDir of the test's own with a CA and its key.
releases_pods_config() {
  local v=$1 d=$2 minor api args cm etcd
  minor=${v#v1.} minor=${minor%%.*}
  api=kubeadm.k8s.io/v1beta3
  [ "$minor" -ge 31 ] && api=kubeadm.k8s.io/v1beta4
  [ "$minor" -le 21 ] && api=kubeadm.k8s.io/v1beta2
  mkdir -p "$d/pki" && openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/pki/ca.key" -out "$d/pki/ca.crt"     -subj /CN=kubernetes -days 1 2>/dev/null || return 1
  # extraVolumes (one of kubeadm's names among them: it replaces kubeadm's volume) in every release;
  # extraEnvs (one of them a proxy variable's name) where the API version has them
  local vols='[{name: audit, hostPath: /var/log/kubernetes/audit, mountPath: /var/log/audit, pathType: DirectoryOrCreate},
    {name: oidc, hostPath: /etc/oidc, mountPath: /etc/oidc, readOnly: true},
    {name: ca-certs, hostPath: /etc/ssl/mine, mountPath: /etc/ssl/certs, readOnly: true, pathType: Directory}]'
  local cmvols='[{name: plugins, hostPath: /opt/plugins, mountPath: /opt/plugins}]' envs= etcdenvs=
  if [ "$minor" -ge 31 ]; then
    args='[{name: audit-log-maxage, value: "7"}, {name: authorization-mode, value: "RBAC,Node,Unknown"}]'
    cm='[{name: node-cidr-mask-size, value: "25"}]' etcd='[{name: quota-backend-bytes, value: "8589934592"}]'
    envs=', extraEnvs: [{name: https_proxy, value: "http://other.example:1"}, {name: AAA, value: "1"}]'
    etcdenvs=', extraEnvs: [{name: ETCD_X, value: "y"}, {name: A_FIRST, value: "z"}]'
  else
    args='{audit-log-maxage: "7", authorization-mode: "RBAC,Node,Unknown"}'
    cm='{node-cidr-mask-size: "25"}' etcd='{quota-backend-bytes: "8589934592"}'
  fi
  cat >"$d/cluster.yaml" <<YAML
apiVersion: $api
kind: ClusterConfiguration
kubernetesVersion: $v
clusterName: releases
imageRepository: registry.example/k8s
certificatesDir: $d/pki
controlPlaneEndpoint: lb.example.com:6443
networking: {podSubnet: 10.244.0.0/16, serviceSubnet: 10.100.0.0/16, dnsDomain: example.internal}
apiServer: {extraArgs: $args, extraVolumes: $vols$envs}
controllerManager: {extraArgs: $cm, extraVolumes: $cmvols}
etcd: {local: {dataDir: /var/lib/etcd, extraArgs: $etcd$etcdenvs}}
YAML
  [ -z "$external" ] || sed -i "s#^etcd: .*#etcd: {external: {endpoints: [\"https://10.0.0.5:2379\", \"https://10.0.0.6:2379\"], \
caFile: /etc/etcd/pki/ca.crt, certFile: /etc/etcd/pki/client/apiserver.crt, keyFile: $d/pki/apiserver-etcd-client.key}}#" \
    "$d/cluster.yaml"
  { printf 'apiVersion: %s\nkind: InitConfiguration\nlocalAPIEndpoint: {advertiseAddress: 192.0.2.2, bindPort: 6443}\n' "$api"
    printf 'nodeRegistration: {name: cp-2, criSocket: unix:///run/containerd/containerd.sock}\n---\n'
    cat "$d/cluster.yaml"; } >"$d/init.yaml"
}

# releases_pods_same VERSION KUBEADM [external]: the four static Pods of VERSION by its
# kubeadm (init phase control-plane all and etcd local, in mount and
# network namespaces of their own: /etc an overlay, a veth for the default
# route kubeadm asks for) and by kjoin (tools/manifests, the library's own
# code), with the same two proxy variables in the environment, parsed and
# compared; with external (an external etcd), the three and no etcd.yaml.
releases_pods_same() {
  local v=$1 kubeadm=$2 external=${3:-} d=$T/pods-$1${3:+-$3} c rc=0 order= minor pods=etcd
  minor=${v#v1.} minor=${minor%%.*}
  [ -z "$external" ] || pods=
  mkdir -p "$d/kjoin" "$d/up" "$d/work" && releases_pods_config "$v" "$d" "$external" || return 1
  local env=(no_proxy=10.0.0.0/8 https_proxy=http://proxy.example:3128 PATH=/usr/sbin:/usr/bin:/sbin:/bin)
  unshare -m -n sh -c 'mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1/up,workdir=$1/work" /etc &&
    ip link add d0 type veth peer name d1 && ip addr add 192.0.2.2/24 dev d0 && ip link set d1 up &&
    ip link set d0 up && ip route add default dev d0 && d=$1 && shift 2 &&
    env -i "$@" "$0" init phase control-plane all --config "$d/init.yaml" && env -i "$@" "$0" init phase etcd local --config "$d/init.yaml"' \
    "$kubeadm" "$d" x "${env[@]}" >"$d/kubeadm.out" 2>&1 || { fail "$v: kubeadm: $(tail -2 "$d/kubeadm.out")"; return 1; }
  env -i "${env[@]}" "$TOOLS/manifests" "$d/cluster.yaml" 192.0.2.2 cp-2 "$d/kjoin" 2>"$d/kjoin.err" ||
    { fail "$v: kjoin: $(cat "$d/kjoin.err")"; return 1; }
  [ "$minor" -ge 28 ] && [ "$minor" -le 31 ] && order=env-any-order # Go's map order in those releases
  [ -n "$pods" ] || [ ! -e "$d/kjoin/etcd.yaml" ] || { fail "$v: kjoin made an etcd.yaml for an external etcd"; rc=1; }
  [ -n "$pods" ] || [ ! -e "$d/up/kubernetes/manifests/etcd.yaml" ] || { fail "$v: kubeadm made an etcd.yaml"; rc=1; }
  for c in kube-apiserver kube-controller-manager kube-scheduler $pods; do
    python3 "$REPO_DIR/tests/tools/podcmp.py" "$d/kjoin/$c.yaml" "$d/up/kubernetes/manifests/$c.yaml" $order >"$d/$c.diff" ||
      { fail "$v: $c.yaml is not kubeadm's: $(head -c 1500 "$d/$c.diff")"; rc=1; }
  done
  return $rc
}

# The four static Pods of each release from 1.22 (tests/releases-boundaries.txt, the
# releases before 1.33 where a rule changed, and tests/releases.txt) and of
# the suite's own release, by that release's kubeadm and by kjoin (1.21's
# are refused by name: t_e2e_releases_control_plane_prepare_refuses_1_21).
# The rules between releases are the release table's fields (docs/join.md:
# the table of rules and where each is proven).
t_e2e_releases_static_pods_as_each_kubeadm() {
  local v kubeadm rc=0
  releases_pods_same "$E2E_VERSION" "$KBIN/kubeadm" || rc=1
  releases_pods_same "$E2E_VERSION" "$KBIN/kubeadm" external || rc=1
  [ "$E2E_MINOR" = "$E2E_NEWEST_MINOR" ] || return $rc
  for v in $(grep -h '^v' "$REPO_DIR/tests/releases-boundaries.txt" "$REPO_DIR/tests/releases.txt" | grep -v '^v1\.21\.'); do
    kubeadm=$(releases_kubeadm "$v") || { fail "no kubeadm $v (scripts/kube-build-release.sh $v)"; rc=1; continue; }
    releases_pods_same "$v" "$kubeadm" && releases_pods_same "$v" "$kubeadm" external &&
      echo "    $v: the four static Pods, and the three with an external etcd, are kubeadm's" || rc=1
  done
  return $rc
}

# A control-plane node on each release, by that release's kubeadm and by
# kjoin, with the kubelet's ConfigMap as that release's kubeadm uploads it:
# control-plane-prepare's certificates, kubeconfigs and three static Pods
# (cp_certs_compare, t_controlplane.sh), from the cluster's own names;
# mark-control-plane's labels and taints; kubelet-start's files. On 1.21,
# whose control-plane join kjoin takes a phase at a time and without the
# static Pods, the certificates, kubeconfigs and marks.
t_e2e_releases_control_plane_node_as_each_kubeadm() {
  local rc=0 v base=$T kubeadm saved=$T/kubeadm-config.json kubelet=$T/kubelet-config.json
  releases_on_newest || return 0
  cp_shared_pki "$T/src" && cp_upload "$T/src" && cp_cluster_names && node_setup || return 1
  kc -n kube-system get configmap kubeadm-config -o json >"$saved" &&
    releases_kubelet_config_save "$kubelet" || return 1
  local minor api=$E2E_KUBEADM_API E2E_KUBEADM_API=$E2E_KUBEADM_API
  for v in $(grep -h '^v' "$REPO_DIR/tests/releases-boundaries.txt" "$REPO_DIR/tests/releases.txt"); do
    kubeadm=$(releases_kubeadm "$v") || { fail "no kubeadm $v (scripts/kube-build-release.sh $v)"; rc=1; continue; }
    T=$base/$v
    mkdir -p "$T"
    minor=${v#v1.}; minor=${minor%%.*}
    E2E_KUBEADM_API=kubeadm.k8s.io/v1beta4
    [ "$minor" -ge 31 ] || E2E_KUBEADM_API=kubeadm.k8s.io/v1beta3
    [ "$minor" -ge 22 ] || E2E_KUBEADM_API=kubeadm.k8s.io/v1beta2
    local steps= pods=
    [ "$minor" -ge 22 ] || steps="download-certs certs kubeconfig" pods=none
    cp -r "$base/src" "$T/src" && cp_key "$CP_KEY" && releases_cluster_as "$saved" "$v" &&
      releases_kubelet_config "$v" "$kubeadm" || { rc=1; break; }
    CP_KUBEADM=$kubeadm CP_VERSION=$v CP_KJOIN_STEPS=$steps CP_NO_MANIFESTS=$pods cp_certs_compare ||
      { fail "(release $v)"; rc=1; continue; }
    CP_KUBEADM=$kubeadm releases_marks "$v" || rc=1
    [ "$minor" -ge 22 ] || continue
    NODE_KUBEADM=$kubeadm releases_control_plane_kubelet_start "$v" || rc=1
    # ControlPlaneKubeletLocalMode set off where its kubeadm reads it so (beta; 1.35 locks it on)
    [ "$minor" -lt 33 ] || [ "$minor" -gt 34 ] ||
      { releases_cluster_as "$saved" "$v" $'featureGates:\n  ControlPlaneKubeletLocalMode: false\n' &&
        NODE_KUBEADM=$kubeadm releases_control_plane_kubelet_start "$v" local-off; } || rc=1
  done
  T=$base E2E_KUBEADM_API=$api
  cp_cluster_names restore || rc=1
  releases_kubelet_config_restore "$kubelet" || rc=1
  return $rc
}

# The control-plane node's certificates and kubeconfigs under each of
# kubeadm's five encryptionAlgorithm values, the newest's kubeadm and kjoin
# compared (each leaf's key type, key usages and signature algorithm among
# what cp_cert_describe says): the CAs kubeadm makes (front proxy, etcd) of
# the algorithm, so the leaves they sign carry its hash (ECDSA-P384's:
# ecdsa-with-SHA384), and kubeadm's keyEncipherment on every leaf.
t_e2e_releases_control_plane_certs_under_each_encryption_algorithm() {
  local rc=0 alg base=$T
  releases_on_newest || return 0
  for alg in RSA-2048 RSA-3072 RSA-4096 ECDSA-P256 ECDSA-P384; do
    T=$base/$alg
    mkdir -p "$T"
    CP_ALG=$alg cp_shared_pki "$T/src" && cp_upload "$T/src" && CP_ALG=$alg cp_cluster_names && cp_key "$CP_KEY" ||
      { rc=1; break; }
    CP_NO_MANIFESTS=1 cp_certs_compare || { fail "(encryptionAlgorithm $alg)"; rc=1; continue; }
    local key sig
    key=$(cp_describe kjoin front-proxy-client | grep -o 'Public-Key: ([0-9]* bit)')
    sig=$(cp_describe kjoin front-proxy-client | grep -o 'Signature Algorithm: .*')
    case $alg:$key:$sig in
      RSA-2048:*"(2048 bit)":*sha256WithRSAEncryption | RSA-3072:*"(3072 bit)":*sha256WithRSAEncryption | \
        RSA-4096:*"(4096 bit)":*sha256WithRSAEncryption | ECDSA-P256:*"(256 bit)":*ecdsa-with-SHA256 | \
        ECDSA-P384:*"(384 bit)":*ecdsa-with-SHA384) echo "    $alg: $key, $sig, as kubeadm's" ;;
      *) fail "$alg: front-proxy-client is $key, $sig"; rc=1 ;;
    esac
  done
  T=$base
  cp_cluster_names restore || rc=1
  return $rc
}

# releases_control_plane_kubelet_start VERSION [local-off] (after
# releases_marks): kubelet-start of a control-plane node, by the release's
# kubeadm (NODE_KUBEADM) and by kjoin from one JoinConfiguration, each in a
# node of its own, the nodes compared (the kubelet's bootstrap kubeconfig
# naming this node's own API server where ControlPlaneKubeletLocalMode is
# on, the cluster's otherwise).
releases_control_plane_kubelet_start() {
  local v=$1 base=$T rc=0 NODE_BIN server t0=$SECONDS
  T=$base/kubelet-start${2:+-$2}
  mkdir -p "$T" && cp "$base/key" "$T/key" && NODE_BIN=$(releases_kubelet_of "$v" "$T/bin") &&
    (CP_NODE=cmp-node CP_CRI=$NODE_CRI; cp_join_yaml) || { T=$base; return 1; }
  # (kjoin takes a control-plane node's kubelet-start alone only within its join: the other phases skipped)
  NODE_CONFIG=$T/join.yaml NODE_KJOIN_START="join --skip-phases preflight,control-plane-prepare,check-etcd,etcd-join,kubelet-wait-bootstrap,control-plane-join,wait-control-plane" \
    node_same_files_as_kubeadm || rc=1
  server=$(sed -n 's/^ *server: //p' "$T/ns-kjoin/etc.upper/kubernetes/bootstrap-kubelet.conf" 2>/dev/null)
  [ $rc != 0 ] || echo "    $v${2:+ ($2)}: a control-plane node's kubelet bootstraps through $server ($((SECONDS - t0)) s)"
  T=$base
  return $rc
}

# releases_marks VERSION (after cp_certs_compare): mark-control-plane by
# the release's kubeadm and by kjoin, each with the admin.conf its own
# control-plane-prepare wrote, on a Node each with a label and a taint of
# the operator's; the Nodes' labels and taints compared.
releases_marks() {
  local v=$1 n=mark-${1//./-} ours theirs rc=0
  # kubeadm init binds its admins' group to cluster-admin (1.29 on); the suite's cluster was not made by kubeadm init.
  kc create clusterrolebinding kubeadm:cluster-admins --clusterrole=cluster-admin --group=kubeadm:cluster-admins \
    >/dev/null 2>&1
  cp_node "$n-kjoin" && cp_node "$n-kubeadm" || return 1
  (CP_NODE=$n-kjoin CP_PHASE=; declare -p CP_NODE CP_PHASE >"$T/cp.env") && NODE_NS=kjoin in_node cp_mark
  [ "$(cat "$T/join.rc")" = 0 ] || { fail "$v: kjoin's mark-control-plane: exit $(cat "$T/join.rc"): $(tail -2 "$T/join.err")"; rc=1; }
  : >"$T/kubeadm.out"
  (CP_NODE=$n-kubeadm; declare -p CP_NODE CP_ADDR E2E_KUBEADM_API CP_KUBEADM >"$T/cp.env"; . "$T/cp.env"; cp_join_yaml) &&
    NODE_NS=kubeadm in_node releases_kubeadm_mark
  [ "$(cat "$T/kubeadm.rc")" = 0 ] || { fail "$v: kubeadm's mark-control-plane: $(tail -3 "$T/kubeadm.out")"; rc=1; }
  ours=$(cp_marks "$n-kjoin") theirs=$(cp_marks "$n-kubeadm")
  kc delete node "$n-kjoin" "$n-kubeadm" >/dev/null 2>&1
  [ $rc = 0 ] || return 1
  [ "$ours" = "$theirs" ] || { fail "$v: the Node's marks differ from kubeadm's: kjoin $ours, kubeadm $theirs"; return 1; }
  case $ours in # marked for real, the operator's kept
  *'"example.com/rack":"r1"'*'control-plane":""'*'"example.com/dedicated"'*'NoSchedule'*) ;;
  *) fail "$v: the marks are not the control plane's or lost the operator's: $ours"; return 1 ;;
  esac
  echo "    $v: marks $(echo "$ours" | jq -r '[(.[0] | keys[] | select(startswith("node"))), (.[1][] | select(.effect == "NoSchedule") | .key + ":" + .effect)] | join(" ")')"
}
# (in a node) the release's kubeadm's own step, with the JoinConfiguration cp_join_yaml wrote.
releases_kubeadm_mark() {
  . "$T/cp.env"
  "$CP_KUBEADM" join phase control-plane-join mark-control-plane --config "$T/join.yaml" --v=1 >>"$T/kubeadm.out" 2>&1
  echo $? >"$T/kubeadm.rc"
}

# releases_etcd_join_in (in a node): SIDE's control-plane-prepare (kjoin's,
# or the release's kubeadm's three steps), then its etcd-join with
# cp_etcd_run as the kubelet; its exit, the members after it, etcd.yaml;
# etcd 2 stopped.
releases_etcd_join_in() {
  . "$T/cp.env"
  local pid
  if [ "$SIDE" = kjoin ]; then
    "$KJOIN" join phase control-plane-prepare --config "$T/join.yaml" >"$T/prepare.out" 2>&1 &&
      { "$KJOIN" join phase etcd-join --config "$T/join.yaml" -o json >"$T/join.out" 2>"$T/join.err" & }
  else
    # (a phase of its own from 1.31, a step of control-plane-join before)
    local phase=etcd-join
    [ "$MINOR" -ge 31 ] || phase="control-plane-join etcd"
    CP_STEPS="download-certs certs kubeconfig" cp_kubeadm_prepare && [ "$(cat "$T/kubeadm.rc")" = 0 ] &&
      { "$CP_KUBEADM" join phase $phase --config "$T/join.yaml" >"$T/join.out" 2>"$T/join.err" & }
  fi || { echo "$SIDE's control-plane-prepare: $(tail -2 "$T/prepare.out" "$T/kubeadm.out" 2>/dev/null)" >"$T/etcd.why"; return; }
  pid=$!
  cp_etcd_run $pid "$CP_ADDR"
  wait $pid
  echo $? >"$T/join.rc"
  cp /etc/kubernetes/manifests/etcd.yaml "$T/etcd.yaml" 2>/dev/null
  cp_etcd_members /etc/kubernetes/pki "$CP_ETCD1" >"$T/members.after"
  [ ! -s "$T/etcd-m2.pid" ] || e2e_stop "$(cat "$T/etcd-m2.pid")"
}

# releases_etcd_join SIDE VERSION KUBEADM FROM: a node of SIDE's joins a
# fresh etcd member 1 (cp_etcd_first) at the node's own address, 192.0.2.2
# (kubeadm takes no loopback one), with the cluster's PKI and certificate
# key from FROM; member 1 stopped after.
releases_etcd_join() {
  local SIDE=$1 v=$2 CP_KUBEADM=$3 from=$4 CP_NODE=cp-2 CP_ADDR=192.0.2.2 CP_ETCD2=192.0.2.2 MINOR
  MINOR=${v#v1.} MINOR=${MINOR%%.*}
  mkdir -p "$T" && cp -r "$from/src" "$T/src" && cp "$from/key" "$T/key" && cp_join_yaml &&
    declare -p SIDE CP_KUBEADM CP_NODE CP_ADDR CP_ETCD1 E2E_KUBEADM_API MINOR >"$T/cp.env" || return 1
  cp_etcd_first || { cp_etcd_first_gone; return 1; }
  NODE_NS=node in_node releases_etcd_join_in
  e2e_stop "$E2E_PID_etcd_m1"
  cp_etcd_first_gone
  [ ! -s "$T/etcd.why" ] || { fail "$v: $(cat "$T/etcd.why")"; return 1; }
}

# The etcd member a control-plane node adds, on each side of the learner's
# release (kubeadm's EtcdLearnerMode: 1.28 alpha, off unless the cluster
# sets it; 1.29 beta, on unless set off) and on the suite's own: the
# release's kubeadm and kjoin each join a fresh member 1 from a node of
# their own, and the member is compared as it was added (a learner or a
# voter, before it runs), after the join (promoted, both voting) and its
# etcd.yaml (the whole Pod, the members it joins, an existing cluster).
t_e2e_releases_etcd_join_as_each_kubeadm() {
  local rc=0 base=$T saved=$T/kubeadm-config.json etcd=$T/kubeadm-config-etcd.json v gate learner kubeadm case
  local minor api=$E2E_KUBEADM_API E2E_KUBEADM_API=$E2E_KUBEADM_API
  releases_on_newest || return 0
  kc -n kube-system get configmap kubeadm-config -o json >"$saved" && cp_shared_pki "$T/src" && cp_upload "$T/src" &&
    cp_key "$CP_KEY" && node_setup && cp_cluster_names etcd &&
    kc -n kube-system get configmap kubeadm-config -o json >"$etcd" || return 1
  kc create clusterrolebinding kubeadm:cluster-admins --clusterrole=cluster-admin --group=kubeadm:cluster-admins \
    >/dev/null 2>&1
  local v28 v29
  v28=$(grep '^v1\.28\.' "$REPO_DIR/tests/releases-boundaries.txt") v29=$(grep '^v1\.29\.' "$REPO_DIR/tests/releases-boundaries.txt")
  # each side of the boundary with the gate as its default and set the other way; the suite's release
  for case in "$v28 -" "$v28 true" "$v29 -" "$v29 false" "$E2E_VERSION -"; do
    read -r v gate <<<"$case"
    minor=${v#v1.}; minor=${minor%%.*}
    learner=$gate
    [ "$gate" != - ] || { learner=false; [ "$minor" -lt 29 ] || learner=true; }
    kubeadm=$KBIN/kubeadm
    [ "$v" = "$E2E_VERSION" ] || kubeadm=$(releases_kubeadm "$v") || { fail "no kubeadm $v (scripts/kube-build-release.sh $v)"; rc=1; continue; }
    E2E_KUBEADM_API=kubeadm.k8s.io/v1beta4
    [ "$minor" -ge 31 ] || E2E_KUBEADM_API=kubeadm.k8s.io/v1beta3
    local extra=
    [ "$gate" = - ] || extra=$'featureGates:\n  EtcdLearnerMode: '"$gate"$'\n'
    releases_cluster_as "$etcd" "$v" "$extra" || { rc=1; break; }
    local name="$v${extra:+ (EtcdLearnerMode: $gate)}" side ok=1
    for side in kubeadm kjoin; do
      T=$base/etcd-$v-$gate/$side releases_etcd_join $side "$v" "$kubeadm" "$base" || { ok=; rc=1; }
    done
    T=$base/etcd-$v-$gate
    [ -n "$ok" ] || continue
    for side in kubeadm kjoin; do
      [ "$(cat "$T/$side/join.rc")" = 0 ] ||
        { fail "$name: $side's etcd-join: exit $(cat "$T/$side/join.rc"): $(tail -3 "$T/$side/join.err")"; rc=1; ok=; }
    done
    [ -n "$ok" ] || continue
    # As added: this release's learner or voter, kjoin's as kubeadm's.
    [ "$(cat "$T/kjoin/members.added")" = "$(cat "$T/kubeadm/members.added")" ] &&
      grep -qx " https://192.0.2.2:2380 $learner" "$T/kubeadm/members.added" ||
      { fail "$name: the member as added: kubeadm $(tr '\n' ';' <"$T/kubeadm/members.added"), kjoin $(tr '\n' ';' <"$T/kjoin/members.added") (a learner: $learner)"; ok=; }
    [ "$(cat "$T/kjoin/members.after")" = "$(cat "$T/kubeadm/members.after")" ] &&
      [ "$(cat "$T/kjoin/members.after")" = "cp-1 https://$CP_ETCD1:2380 false
cp-2 https://192.0.2.2:2380 false" ] ||
      { fail "$name: the members after the join: kubeadm $(tr '\n' ';' <"$T/kubeadm/members.after"), kjoin $(tr '\n' ';' <"$T/kjoin/members.after")"; ok=; }
    jq -e --argjson l "$learner" '.etcd.added and .etcd.promoted == $l' "$T/kjoin/join.out" >/dev/null ||
      { fail "$name: kjoin's -o json: $(jq -c .etcd "$T/kjoin/join.out")"; ok=; }
    local ours theirs
    ours=$(cp_etcd_pod "$T/kjoin/etcd.yaml" 192.0.2.2) theirs=$(cp_etcd_pod "$T/kubeadm/etcd.yaml" 192.0.2.2)
    [ -n "$ours" ] && [ "$ours" = "$theirs" ] ||
      { fail "$name: etcd.yaml differs from kubeadm's: $(diff <(echo "$theirs") <(echo "$ours") | grep '^[<>]' | head -20 | tr '\n' ' ')"; ok=; }
    for side in kubeadm kjoin; do
      grep -o -- '--initial-cluster[-a-z]*=[^ "]*' "$T/$side/etcd.yaml" | sed 's/^--initial-cluster=//' | tr ',' '\n' | sort >"$T/$side.initial"
    done
    [ "$(cat "$T/kjoin.initial")" = "$(cat "$T/kubeadm.initial")" ] && grep -qx -- --initial-cluster-state=existing "$T/kjoin.initial" ||
      { fail "$name: etcd.yaml's members: kubeadm $(tr '\n' ' ' <"$T/kubeadm.initial"), kjoin $(tr '\n' ' ' <"$T/kjoin.initial")"; ok=; }
    [ -n "$ok" ] || { rc=1; continue; }
    echo "    $name: added as a $([ "$learner" = true ] && echo learner || echo voter), as kubeadm adds it; etcd.yaml kubeadm's"
  done
  T=$base E2E_KUBEADM_API=$api
  releases_cluster_as "$saved" || rc=1
  return $rc
}
