# The releases between the two ends (tests/releases.txt), each proven
# against its own kubeadm: on the newest control plane, the kubeadm-config
# ClusterConfiguration says the release (kjoin and kubeadm both take the
# release from its kubernetesVersion), and that release's kubeadm and kjoin
# run the same phase with the same flags in two nodes of their own; the
# nodes' files are compared (compare_trees, t_node.sh). The newest's own
# kubeadm is t_node.sh's and t_controlplane.sh's.

# The releases' kubeadm binaries (scripts/kube-build-release.sh, cached).
releases_kubeadm() { local d; d=$(bash "$REPO_DIR/scripts/kube-build-release.sh" "$1" kubeadm 2>/dev/null) && echo "$d/kubeadm"; }

# releases_cluster_as SAVED VERSION [YAML]: kubeadm-config's
# ClusterConfiguration as SAVED (the ConfigMap's JSON) with kubernetesVersion
# VERSION and YAML (top-level lines) added; SAVED alone puts it back.
releases_cluster_as() {
  jq --arg v "${2:-}" --arg extra "${3:-}" 'if $v == "" then . else .data.ClusterConfiguration |=
      (sub("kubernetesVersion: [^\n]*"; "kubernetesVersion: " + $v) + $extra) end
      | del(.metadata.resourceVersion)' "$1" | kc replace -f - >/dev/null ||
    { fail "kubeadm-config could not be replaced"; return 1; }
}

# releases_same_node [patches|gate-off]: for each release, kubelet-start by
# its kubeadm and by kjoin, the nodes compared.
releases_same_node() {
  local variant=${1:-} rc=0 v base=$T kubeadm extra= saved=$T/kubeadm-config.json
  REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  [ "$E2E_MINOR" = 37 ] || return 0 # the middle releases are proven on the newest control plane
  [ "$variant" = gate-off ] && extra=$'featureGates:\n  NodeLocalCRISocket: false\n'
  kc -n kube-system get configmap kubeadm-config -o json >"$saved" || return 1
  for v in $(grep '^v' "$REPO_DIR/tests/releases.txt"); do
    kubeadm=$(releases_kubeadm "$v") || { fail "no kubeadm $v (scripts/kube-build-release.sh $v)"; rc=1; continue; }
    T=$base/$v
    mkdir -p "$T"
    releases_cluster_as "$saved" "$v" "$extra" || { rc=1; break; }
    NODE_KUBEADM=$kubeadm node_same_files_as_kubeadm ${variant/gate-off/} || rc=1
    # Which file holds the runtime, said for the record (the comparison above decides).
    [ -e "$T/ns-kjoin/lib.upper/kubelet/instance-config.yaml" ] && echo "    $v${extra:+ (gate off)}: instance-config.yaml" ||
      echo "    $v${extra:+ (gate off)}: the runtime in kubeadm-flags.env"
  done
  T=$base
  releases_cluster_as "$saved" || rc=1
  return $rc
}
t_e2e_releases_kubelet_start_as_each_kubeadm() { releases_same_node; }
t_e2e_releases_kubelet_start_patches_as_each_kubeadm() { releases_same_node patches; }
t_e2e_releases_kubelet_start_gate_off_as_each_kubeadm() { releases_same_node gate-off; }

# releases_refused_manifests MINOR: kjoin's whole control-plane-prepare on a
# release whose static Pods it does not write: refused by name (exit 2)
# before anything is written.
releases_refused_manifests() {
  CP_FLAGS= cp_prepare_in "refused-$1"
  [ "$(cat "$T/join.rc")" = 2 ] && grep -q "not of 1.$1" "$T/join.err" ||
    { fail "1.$1's static Pods: exit $(cat "$T/join.rc"): $(tail -2 "$T/join.err")"; return 1; }
  [ -z "$(find "$T/refused-$1/etc.upper" -type f 2>/dev/null)" ] ||
    { fail "1.$1: written before the refusal: $(find "$T/refused-$1/etc.upper" -type f | tr '\n' ' ')"; return 1; }
}

# The control-plane node's files on each release: certificates, kubeconfigs
# and the three static Pods by that release's kubeadm and by kjoin
# (cp_certs_compare, t_controlplane.sh), from the cluster's own names.
t_e2e_releases_control_plane_prepare_as_each_kubeadm() {
  local rc=0 v base=$T kubeadm saved=$T/kubeadm-config.json
  REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  [ "$E2E_MINOR" = 37 ] || return 0
  cp_shared_pki "$T/src" && cp_upload "$T/src" && cp_cluster_names || return 1
  kc -n kube-system get configmap kubeadm-config -o json >"$saved" || return 1
  for v in $(grep '^v' "$REPO_DIR/tests/releases.txt"); do
    kubeadm=$(releases_kubeadm "$v") || { fail "no kubeadm $v (scripts/kube-build-release.sh $v)"; rc=1; continue; }
    T=$base/$v
    mkdir -p "$T"
    cp -r "$base/src" "$T/src" && cp_key "$CP_KEY" && releases_cluster_as "$saved" "$v" || { rc=1; break; }
    local minor=${v#v1.} steps= flags= none=
    minor=${minor%%.*}
    if [ "$minor" -lt 34 ]; then # kjoin refuses this release's static Pods by name: the rest is compared
      steps="download-certs certs kubeconfig" flags="--skip-phases control-plane-prepare/control-plane" none=1
      releases_refused_manifests "$minor" || rc=1
    fi
    CP_KUBEADM=$kubeadm CP_VERSION=$v CP_STEPS=$steps CP_FLAGS=$flags CP_NO_MANIFESTS=$none cp_certs_compare ||
      { fail "(release $v)"; rc=1; }
  done
  T=$base
  cp_cluster_names restore || rc=1
  return $rc
}
