# A highly available control plane on the lab, as issue #36 asks: node 1
# made by the release's own `kubeadm init --upload-certs`, node 2 joined by
# `kjoin join --control-plane`, node 3 by `kubeadm join --control-plane`,
# each booted by a real systemd with Debian's containerd running the
# control plane's static Pods from images made here from the release's
# binaries (no registry). The newest release only: v1.20's build has no
# kube-scheduler. Sourced by tests/lab/run.sh.
source "$REPO/tests/e2e/image.sh"

HA_KEY=0202020202020202020202020202020202020202020202020202020202020202
HA_ENDPOINT=cp.kjlab:6443
HA_IP1=$LAB_NET.61 HA_IP2=$LAB_NET.62 HA_IP3=$LAB_NET.63 HA_IPW=$LAB_NET.64

# ha_kill_join_at_kubelet NODE LOG: once the join running in NODE says it
# waits for the kubelet and the kubelet's healthz answers, kills kjoin there
# (SIGKILL), as a machine going down would.
ha_kill_join_at_kubelet() {
  local i
  for i in $(seq 900); do
    grep -q "Waiting for the kubelet" "$2" && lab_exec "$1" bash -c \
      'exec 3<>/dev/tcp/127.0.0.1/10248 && printf "GET /healthz HTTP/1.0\r\n\r\n" >&3 && grep -q "^ok" <&3' 2>/dev/null && break
    sleep 0.2
  done
  lab_exec "$1" bash -c 'for p in /proc/[0-9]*; do [ "$(cat "$p/comm" 2>/dev/null)" = kjoin ] && kill -KILL "${p#/proc/}"; done'
}

# ha_images DIR: the images kubeadm's manifests name for imageRepository
# kjoin.test (kubeadm config images list), each an OCI archive in DIR: the
# release's kube-apiserver, kube-controller-manager and kube-scheduler, the
# etcd server of its go.mod (tests/kube/etcd-release) and a pause.
ha_images() {
  local d=$1 image name b
  mkdir -p "$d"
  "$KBIN/kubeadm" config images list --kubernetes-version "$E2E_VERSION" --image-repository kjoin.test \
    >"$d/list" 2>"$d/list.err" || { fail "kubeadm config images list: $(cat "$d/list.err")"; return 1; }
  while read -r image; do
    name=${image#kjoin.test/}; name=${name%%:*}
    case $name in
    kube-apiserver | kube-controller-manager | kube-scheduler) b=$KBIN/$name ;;
    etcd) mkdir -p "$d/bin" && cp "$E2E_DRIVERS/etcd-release" "$d/bin/etcd" && b=$d/bin/etcd ;;
    pause) pause_rootfs "$d/pause" && oci_archive "$image" "$d/pause" "$d/pause.tar" /pause && echo "$image" >"$d/pause.name" &&
      rm -rf "$d/pause"; continue ;;
    *) continue ;; # coredns, kube-proxy: the addons are skipped
    esac
    rootfs_with "$d/$name" "$b" && oci_archive "$image" "$d/$name" "$d/$name.tar" "$name" && rm -rf "$d/$name" ||
      { fail "the image $image"; return 1; }
  done <"$d/list"
  rm -rf "$d/bin"
  [ "$(ls "$d"/*.tar | wc -l)" = 5 ] || { fail "images: $(ls "$d")"; return 1; }
}

# ha_user_data [FILE CONTENT MODE]...: a node of the HA cluster: containerd
# with the pause image as its sandbox and cgroupfs (the suite's kubelet
# configuration), the images imported, a resolv.conf for the Pods' sandboxes
# (the image has none; nothing answers there: the lab has no resolver), kjoin's .deb (its kubelet drop-in is
# kubeadm's command line, which kubeadm's own phases then use too), and
# the files given.
ha_user_data() {
  # (restrict_oom_score_adj: this machine's root lacks CAP_SYS_RESOURCE, as
  # tests/e2e/t_node.sh says; runc fails at oom_score_adj otherwise.)
  printf '#cloud-config\nwrite_files:\n- path: /etc/containerd/config.toml\n  content: |\n    version = 2\n    [plugins."io.containerd.grpc.v1.cri"]\n      sandbox_image = "%s"\n      restrict_oom_score_adj = true\n' \
    "$(cat "$ROOT/ha-images/pause.name")"
  printf -- '- path: /etc/resolv.conf\n  content: |\n    nameserver %s\n' "$LAB_HOST"
  while [ $# -ge 3 ]; do
    printf -- '- path: %s\n  permissions: "%s"\n  content: |\n%s\n' "$1" "$3" "$(sed 's/^/    /' <<<"$2")"
    shift 3
  done
  printf '%s\n' 'runcmd:' \
    '- [sh, -c, "apt-get install -y -q /opt/kjoin/*.deb >/var/log/kjoin-install.log 2>&1"]' \
    '- [sh, -c, "systemctl restart containerd && for i in /opt/kjoin-images/*.tar; do ctr -n k8s.io images import $i; done >/var/log/kjoin-images.log 2>&1 && touch /run/kjoin-images-ready"]'
}

# ha_boot NAME IP USER_DATA [CP_IP]: boots an HA node with the images and
# kubeadm; cp.kjlab (controlPlaneEndpoint) is CP_IP, node 1 by default.
# containerd's directory is the host's (a directory of the node's own):
# its overlay snapshots cannot live on the node's own overlay root.
ha_boot() {
  lab_seed "$T/seed-$1" "$1" "$3"
  mkdir -p "$LAB_DIR/$1/containerd"
  LAB_HOSTS="${4:-$HA_IP1} cp.kjlab
" lab_boot "$1" "$2" "$T/seed-$1" --bind-ro="$ROOT/ha-images:/opt/kjoin-images" --bind-ro="$KBIN/kubeadm:/usr/bin/kubeadm" \
    --bind="$LAB_DIR/$1/containerd:/var/lib/containerd"
}

ha_ready() { # NAME: booted, cloud-init done, the images imported
  lab_wait_booted "$1" 90 && e2e_wait 180 lab_exec "$1" test -e /run/kjoin-images-ready ||
    { fail "$1 did not boot with its images: $(lab_exec "$1" tail -n 5 /var/log/cloud-init-output.log 2>&1)"; return 1; }
}

# ha_kc IP ARGS...: kubectl as node 1's admin through the API server at IP.
ha_kc() { local ip=$1; shift; kubectl --kubeconfig "$T/admin.conf" --server "https://$ip:6443" --request-timeout 10s "$@"; }

# ha_members IP: the etcd members (name, peer URL, learner) as the
# healthcheck client of node 1 sees them through the member at IP.
ha_members() {
  curl -sf --max-time 10 --cacert "$T/etcd-ca.crt" --cert "$T/etcd-hc.crt" --key "$T/etcd-hc.key" -X POST -d '{}' \
    "https://$1:2379/v3/cluster/member/list" | jq -r '.members[] | "\(.name // "") \(.peerURLs[0]) \(.isLearner // false)"' | sort
}

# ha_healthy IP: that node's API server ready and its etcd member answering.
ha_healthy() {
  [ "$(ha_kc "$1" get --raw /readyz 2>/dev/null)" = ok ] &&
    curl -sf --max-time 5 --cacert "$T/etcd-ca.crt" --cert "$T/etcd-hc.crt" --key "$T/etcd-hc.key" "https://$1:2379/health" |
      jq -e '.health == "true"' >/dev/null
}

# ha_diag NAME: what the node's kubelet and containerd say, kept with the
# lab's logs of a failed run ($LAB_DIR/NAME/diag.log).
ha_diag() {
  { lab_exec "$1" journalctl -u kubelet --no-pager -n 60 -o cat
    lab_exec "$1" journalctl -u containerd --no-pager -n 30 -o cat
    lab_exec "$1" ctr -n k8s.io containers ls
    lab_exec "$1" ctr -n k8s.io tasks ls; } >"$LAB_DIR/$1/diag.log" 2>&1
}

ha_init_config() {
  cat <<CFG
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
bootstrapTokens: [{token: abcdef.0123456789abcdef}]
certificateKey: "$HA_KEY"
localAPIEndpoint: {advertiseAddress: $HA_IP1, bindPort: 6443}
nodeRegistration: {name: ha-1, criSocket: "unix:///var/run/containerd/containerd.sock"}
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: $E2E_VERSION
imageRepository: kjoin.test
controlPlaneEndpoint: "$HA_ENDPOINT"
---
$(e2e_kubelet_config)
CFG
}

# ha_describe NODE: the node's control-plane files as what must match
# kubeadm's, its own name and address as NODE and ADDR: each certificate's
# subject, issuer, names, usages and constraints; the shared CAs' digests;
# the kubeconfigs' servers, users and subjects; the static Pods parsed
# (etcd's members apart: they are the cluster's when the node joined);
# the kubelet's configuration and flags, and the server it talks to.
ha_describe() {
  local n=$1 ip f
  ip=$(lab_exec "$n" hostname -I | awk '{print $1}')
  {
    for f in apiserver apiserver-kubelet-client front-proxy-client apiserver-etcd-client etcd/server etcd/peer \
      etcd/healthcheck-client; do
      echo "== $f.crt"
      local ext
      for ext in subject issuer "ext subjectAltName" "ext extendedKeyUsage" "ext keyUsage" "ext basicConstraints"; do
        lab_exec "$n" openssl x509 -in "/etc/kubernetes/pki/$f.crt" -noout -$ext 2>&1
      done
      lab_exec "$n" stat -c '%a' "/etc/kubernetes/pki/$f.crt" "/etc/kubernetes/pki/$f.key"
    done
    for f in ca.crt ca.key front-proxy-ca.crt front-proxy-ca.key sa.pub sa.key etcd/ca.crt etcd/ca.key; do
      echo "== $f $(lab_exec "$n" sha256sum "/etc/kubernetes/pki/$f" | cut -c1-16)"
    done
    for f in admin.conf controller-manager.conf scheduler.conf kubelet.conf; do
      echo "== $f $(lab_exec "$n" stat -c '%a' "/etc/kubernetes/$f")"
      lab_exec "$n" cat "/etc/kubernetes/$f" >"$T/$n-$f"
      kubectl config view --kubeconfig "$T/$n-$f" --raw -o json |
        jq -c '{cc: ."current-context", clusters: [.clusters[] | {name, server: .cluster.server}],
          contexts: [.contexts[] | {name, cluster: .context.cluster, user: .context.user}], users: [.users[].name]}'
      kubectl config view --kubeconfig "$T/$n-$f" --raw -o jsonpath='{.users[0].user.client-certificate-data}' |
        base64 -d 2>/dev/null | openssl x509 -noout -subject -ext extendedKeyUsage 2>/dev/null
    done
    for f in kube-apiserver kube-controller-manager kube-scheduler etcd; do
      echo "== manifests/$f.yaml $(lab_exec "$n" stat -c '%a' "/etc/kubernetes/manifests/$f.yaml")"
      lab_exec "$n" cat "/etc/kubernetes/manifests/$f.yaml" >"$T/$n-$f.yaml"
      kc create --dry-run=client --validate=false -o json -f "$T/$n-$f.yaml" |
        jq -S 'del(.status, .metadata.creationTimestamp) | .spec.containers[0].command |= map(select(test("^--initial-cluster") | not))'
    done
    # The kubelet's: its configuration parsed (the YAML's quoting is kjoin's
    # own), its flags as written.
    for f in config.yaml instance-config.yaml; do
      echo "== kubelet $f $(lab_exec "$n" stat -c '%a' "/var/lib/kubelet/$f")"
      lab_exec "$n" cat "/var/lib/kubelet/$f" |
        python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin), sort_keys=True, indent=1))'
    done
    echo "== kubelet kubeadm-flags.env $(lab_exec "$n" stat -c '%a' /var/lib/kubelet/kubeadm-flags.env)"
    lab_exec "$n" cat /var/lib/kubelet/kubeadm-flags.env
  } 2>&1 | sed -e "s/\b$n\b/NODE/g" -e "s/$ip\b/ADDR/g"
}

# ha_init: node 1 (booted) made by kubeadm init, its certificates uploaded
# under the key; its admin.conf, CAs and etcd healthcheck client copied to
# $T; HA_PIN the cluster CA's pin.
ha_init() {
  local t0; t0=$(date +%s)
  lab_exec ha-1 kubeadm init --config /etc/kjoin/init.yaml --upload-certs --skip-phases addon \
    --ignore-preflight-errors all >"$T/init.out" 2>&1 ||
    { fail "kubeadm init: $(tail -n 8 "$T/init.out")"; ha_diag ha-1; return 1; }
  echo "    [$current] node 1: kubeadm init in $(($(date +%s) - t0)) s" >&2
  lab_exec ha-1 cat /etc/kubernetes/admin.conf >"$T/admin.conf" && lab_exec ha-1 cat /etc/kubernetes/pki/ca.crt >"$T/ca.crt" &&
    lab_exec ha-1 cat /etc/kubernetes/pki/etcd/ca.crt >"$T/etcd-ca.crt" &&
    lab_exec ha-1 cat /etc/kubernetes/pki/etcd/healthcheck-client.crt >"$T/etcd-hc.crt" &&
    lab_exec ha-1 cat /etc/kubernetes/pki/etcd/healthcheck-client.key >"$T/etcd-hc.key" || { fail "node 1's files"; return 1; }
  HA_PIN=sha256:$(openssl x509 -in "$T/ca.crt" -pubkey -noout | openssl pkey -pubin -outform der | sha256sum | cut -d' ' -f1)
}

t_lab_ha_control_plane_joined_by_kjoin() {
  [ "$E2E_MINOR" -ge 34 ] || { skip "a release from 1.34 only (v1.20's build has no kube-scheduler)"; return 0; }
  local rc=0 t0 ip
  [ -s "$ROOT/ha-images/pause.name" ] || ha_images "$ROOT/ha-images" || return 1
  # Node 1: kubeadm init, its certificates uploaded under the key; it keeps
  # its disk, to come back after it is stopped.
  LAB_KEEP=1 ha_boot ha-1 "$HA_IP1" "$(ha_user_data /etc/kjoin/init.yaml "$(ha_init_config)" 0600)"
  ha_boot ha-2 "$HA_IP2" "$(ha_user_data /etc/kjoin/key "$HA_KEY" 0600)"
  ha_boot ha-3 "$HA_IP3" "$(ha_user_data)"
  ha_ready ha-1 && ha_ready ha-2 && ha_ready ha-3 || return 1
  ha_init || return 1
  # Preflight's ImagePull, through containerd's ctr: an image missing and
  # not pullable (no registry here) is named, exit 2, before anything is written.
  lab_exec ha-2 ctr -n k8s.io images rm "kjoin.test/kube-scheduler:$E2E_VERSION" >/dev/null 2>&1
  lab_exec ha-2 kjoin join phase preflight "$HA_ENDPOINT" --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash "$HA_PIN" --control-plane --apiserver-advertise-address "$HA_IP2" -o json \
    >"$T/pre2.json" 2>"$T/pre2.err"
  local prc=$?
  [ "$prc" = 2 ] && grep -q "ERROR ImagePull: failed to pull image kjoin.test/kube-scheduler:$E2E_VERSION" "$T/pre2.err" &&
    [ "$(grep -c "ERROR ImagePull" "$T/pre2.err")" = 1 ] &&
    [ -z "$(lab_exec ha-2 find /etc/kubernetes -type f 2>/dev/null)" ] ||
    { fail "preflight without an image: exit $prc: $(grep -i preflight "$T/pre2.err" | tail -n 3)"; rc=1; }
  lab_exec ha-2 ctr -n k8s.io images import /opt/kjoin-images/kube-scheduler.tar >/dev/null 2>&1
  # Node 2: kjoin's whole control-plane join (its ImagePull finds every
  # image), killed once its kubelet is up (the etcd member added, the static
  # Pods running), then the same command again, which goes on from there.
  # (killed from outside: the package's kjoin is a release build, without the suite's kill points)
  lab_exec ha-2 kjoin join "$HA_ENDPOINT" --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash "$HA_PIN" --control-plane --certificate-key-file /etc/kjoin/key \
    --apiserver-advertise-address "$HA_IP2" >"$T/killed2.out" 2>&1 &
  local joining=$!
  ha_kill_join_at_kubelet ha-2 "$T/killed2.out"
  wait "$joining"
  local krc=$?
  [ "$krc" = 137 ] && grep -q "Waiting for the kubelet" "$T/killed2.out" ||
    { fail "the join was not killed at the kubelet's health: exit $krc: $(tail -n 3 "$T/killed2.out")"; rc=1; }
  t0=$(date +%s)
  lab_exec ha-2 kjoin join "$HA_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$HA_PIN" \
    --control-plane --certificate-key-file /etc/kjoin/key --apiserver-advertise-address "$HA_IP2" -o json -v 4 \
    >"$T/join2.json" 2>"$T/join2.err" || { fail "kjoin join --control-plane: exit $?: $(tail -n 6 "$T/join2.err")"; ha_diag ha-2; rc=1; }
  # The cluster's ClusterConfiguration is read once a join (its -v 4 lines name each request).
  local reads; reads=$(grep -c 'GET /api/v1/namespaces/kube-system/configmaps/kubeadm-config: HTTP 200' "$T/join2.err")
  [ "$reads" = 1 ] || { fail "kubeadm-config read $reads times in one join"; rc=1; }
  echo "    [$current] node 2: kjoin join --control-plane again, after it was killed, in $(($(date +%s) - t0)) s (discovery $(jq -r .elapsedMs "$T/join2.json") ms, $(jq -r '[.node.phases[]? | "\(.name) \(.elapsedMs) ms"] | join(", ")' "$T/join2.json"))" >&2
  ! grep -q "$HA_KEY" "$T/join2.json" "$T/join2.err" || { fail "the certificate key was printed"; rc=1; }
  jq -e '[.node.phases[].name] == ["preflight", "control-plane-prepare", "check-etcd", "kubelet-start", "etcd-join",
      "kubelet-wait-bootstrap", "control-plane-join", "wait-control-plane"] and
      ([.node.preflight[]? | select(.name == "ImagePull")] == [])' "$T/join2.json" >/dev/null ||
    { fail "the phases that ran: $(jq -c '[.node.phases[]?.name]' "$T/join2.json")"; rc=1; }
  # Node 3: kubeadm's own control-plane join, for the comparison.
  t0=$(date +%s)
  lab_exec ha-3 kubeadm join "$HA_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$HA_PIN" \
    --control-plane --certificate-key "$HA_KEY" --apiserver-advertise-address "$HA_IP3" --ignore-preflight-errors all \
    >"$T/join3.out" 2>&1 || { fail "kubeadm join --control-plane: $(tail -n 6 "$T/join3.out")"; ha_diag ha-3; rc=1; }
  echo "    [$current] node 3: kubeadm join --control-plane in $(($(date +%s) - t0)) s" >&2
  [ $rc = 0 ] || { lab_stop ha-3; lab_stop ha-2; lab_stop ha-1; return 1; }
  # Three voting members; each node's API server and etcd answer; kubectl through each.
  [ "$(ha_members "$HA_IP2")" = "ha-1 https://$HA_IP1:2380 false
ha-2 https://$HA_IP2:2380 false
ha-3 https://$HA_IP3:2380 false" ] || { fail "etcd members: $(ha_members "$HA_IP2" | tr '\n' ';')"; rc=1; }
  for ip in "$HA_IP1" "$HA_IP2" "$HA_IP3"; do
    e2e_wait 60 ha_healthy "$ip" && [ "$(ha_kc "$ip" get nodes -o name | wc -l)" = 3 ] ||
      { fail "the control plane at $ip does not serve the cluster"; rc=1; }
  done
  ha_kc "$HA_IP2" get node ha-2 -o json >"$T/node2.json" 2>&1 &&
    jq -e '.metadata.labels["node-role.kubernetes.io/control-plane"] == "" and
      ([.spec.taints[]? | select(.key == "node-role.kubernetes.io/control-plane")] | length == 1)' "$T/node2.json" >/dev/null ||
    { fail "node 2 is not a marked control-plane Node: $(head -c 300 "$T/node2.json")"; rc=1; }
  # kjoin's node 2 and kubeadm's node 3, file by file.
  ha_describe ha-2 >"$T/describe2" && ha_describe ha-3 >"$T/describe3"
  diff "$T/describe3" "$T/describe2" >"$T/describe.diff" ||
    { fail "node 2 (kjoin) differs from node 3 (kubeadm): $(grep '^[<>]' "$T/describe.diff" | head -n 16 | cut -c1-200 | tr '\n' ' ')"; rc=1; }
  grep -q "https://ADDR:6443" "$T/describe2" && [ "$(grep -c '^== ' "$T/describe2")" = 26 ] ||
    { fail "the comparison saw too little: $(grep -c '^== ' "$T/describe2") files"; rc=1; }
  # kjoin approver, the package's unit, on all three control-plane nodes,
  # each talking to its own API server; node 1's first, so that it holds
  # the Lease.
  ha_approvers || rc=1
  # Node 1 stopped (the approver's Lease holder with it): nodes 2 and 3
  # still serve the cluster, and a worker joins through node 2 (its
  # cp.kjlab there) with a token bound to it, once: another approver takes
  # the Lease and approves it.
  lab_stop ha-1
  for ip in "$HA_IP2" "$HA_IP3"; do
    e2e_wait 60 ha_healthy "$ip" && ha_kc "$ip" get nodes -o name >/dev/null || { fail "node 1 gone: $ip does not answer"; rc=1; }
  done
  ha_boot ha-w "$HA_IPW" "$(ha_user_data)" "$HA_IP2"
  lab_wait_booted ha-w 90 && e2e_wait 180 lab_exec ha-w test -e /run/kjoin-images-ready || { fail "the worker did not boot"; rc=1; }
  local bound
  # (made through node 2's own API server: cp.kjlab is node 1 on the control-plane nodes)
  sed "s#server: .*#server: https://$HA_IP2:6443#" "$T/admin.conf" >"$T/admin2.conf" && chmod 600 "$T/admin2.conf"
  bound=$("$KJOIN" token create --kubeconfig "$T/admin2.conf" --node-name ha-w --single-use --ttl 10m 2>"$T/bound.err") ||
    { fail "token create --node-name ha-w: $(tail -n 2 "$T/bound.err")"; rc=1; }
  SECRETS+=("${bound#*.}")
  lab_exec ha-w kjoin join "$HA_ENDPOINT" --token "$bound" --discovery-token-ca-cert-hash "$HA_PIN" \
    >"$T/joinw.out" 2>&1 || { fail "the worker's bound join through node 2: $(tail -n 4 "$T/joinw.out")"; rc=1; }
  e2e_wait 60 ha_kc "$HA_IP3" get node ha-w || { fail "the worker never registered"; rc=1; }
  local holder; holder=$(ha_kc "$HA_IP3" -n kube-system get lease kjoin-approver -o jsonpath='{.spec.holderIdentity}')
  [[ "$holder" == ha-2_* || "$holder" == ha-3_* ]] || { fail "the Lease's holder after node 1 stopped: $holder"; rc=1; }
  ha_kc "$HA_IP3" get csr -o json | jq -e --arg u "system:bootstrap:${bound%%.*}" \
    '[.items[] | select(.spec.username == $u) | .status.conditions[0].reason] == ["KjoinBoundToken"]' >/dev/null ||
    { fail "the bound worker's CSR was not approved by kjoin approver"; rc=1; }
  ha_secret_gone() { ! ha_kc "$HA_IP3" -n kube-system get secret "bootstrap-token-$1" >/dev/null 2>&1; }
  e2e_wait 30 ha_secret_gone "${bound%%.*}" || { fail "the single-use token outlived its join"; rc=1; }
  lab_stop ha-w
  # Node 1 back (its etcd member with it); then kjoin reset on node 2: its
  # member out first, then what the join made; two members and a working
  # cluster are left.
  LAB_KEEP=1 ha_boot ha-1 "$HA_IP1" "$(ha_user_data /etc/kjoin/init.yaml "$(ha_init_config)" 0600)"
  lab_wait_booted ha-1 90 && e2e_wait 120 ha_healthy "$HA_IP1" || { fail "node 1 did not come back"; ha_diag ha-1; rc=1; }
  # A container in the runtime's k8s.io namespace that is no Pod (ctr run,
  # as nerdctl would): the reset stops Pods only, and leaves it running.
  lab_exec ha-2 ctr -n k8s.io run -d "$(cat "$ROOT/ha-images/pause.name")" kjoin-not-a-pod >"$T/notapod.out" 2>&1 ||
    { fail "ctr run: $(tail -n 2 "$T/notapod.out")"; rc=1; }
  # The approver is no part of the join: a node leaving stops it and removes its credentials first.
  lab_exec ha-2 bash -c 'systemctl disable --now kjoin-approver && rm /etc/kubernetes/kjoin-approver.conf' >/dev/null 2>&1 ||
    { fail "ha-2's approver would not stop"; rc=1; }
  lab_exec ha-2 kjoin reset -o json >"$T/reset2.json" 2>"$T/reset2.err" ||
    { fail "kjoin reset: $(tail -n 4 "$T/reset2.err")"; rc=1; }
  jq -e '.controlPlane.etcdMemberRemoved and .controlPlane.left == [] and .left == []' "$T/reset2.json" >/dev/null ||
    { fail "reset: $(jq -c '{controlPlane, left}' "$T/reset2.json")"; rc=1; }
  [ "$(ha_members "$HA_IP1")" = "ha-1 https://$HA_IP1:2380 false
ha-3 https://$HA_IP3:2380 false" ] || { fail "members after the reset: $(ha_members "$HA_IP1" | tr '\n' ';')"; rc=1; }
  for ip in "$HA_IP1" "$HA_IP3"; do
    e2e_wait 60 ha_healthy "$ip" || { fail "the cluster does not answer at $ip after the reset"; rc=1; }
  done
  [ -z "$(lab_exec ha-2 find /etc/kubernetes /var/lib/kubelet /var/lib/etcd -mindepth 1 2>/dev/null)" ] ||
    { fail "node 2 keeps files: $(lab_exec ha-2 find /etc/kubernetes /var/lib/kubelet /var/lib/etcd -mindepth 1 | tr '\n' ' ')"; rc=1; }
  # Nothing of the cluster runs on node 2 after its reset: no process of its
  # static Pods (the controller manager held the CA key in memory), none of
  # their ports held; the reset stopped them through containerd's ctr.
  jq -e '.pods.stopped and .pods.found >= 4' "$T/reset2.json" >/dev/null ||
    { fail "reset: the Pods: $(jq -c .pods "$T/reset2.json")"; rc=1; }
  local procs ports
  # (the names as /proc has them, 15 characters at most: kube-controller-manager is kube-controller)
  procs=$(lab_exec ha-2 bash -c 'for p in /proc/[0-9]*; do c=$(cat "$p/comm" 2>/dev/null); case $c in
    kube-apiserver|kube-controller|kube-scheduler|etcd) echo "${p#/proc/} $c" ;; esac; done')
  ports=$(lab_exec ha-2 ss -Hltn | grep -E ':(6443|10257|10259|2379|2380|2381) ')
  [ -z "$procs" ] && [ -z "$ports" ] || { fail "node 2 still runs after its reset: $procs; ports: $ports"; rc=1; }
  lab_exec ha-2 ctr -n k8s.io tasks ls | grep -qE '^kjoin-not-a-pod +[0-9]+ +RUNNING' ||
    { fail "the reset stopped a container that is no Pod: $(lab_exec ha-2 ctr -n k8s.io tasks ls | tr '\n' ';')"; rc=1; }
  lab_exec ha-2 ctr -n k8s.io tasks delete --force kjoin-not-a-pod >/dev/null 2>&1
  lab_exec ha-2 ctr -n k8s.io containers rm kjoin-not-a-pod >/dev/null 2>&1
  # kubeadm's own tools on a kjoin-joined control-plane node: node 2 joined
  # again by kjoin (after its reset, its old Node deleted as an operator
  # would), then kubeadm's certs renewal, upgrade node and reset there.
  ha_kc "$HA_IP1" delete node ha-2 >/dev/null 2>&1
  # First without etcd's image in node 2's runtime (its ImagePull ignored, as an operator may): the
  # learner never starts; the join says why every 15 s and at the end (the kubelet's pull error, the
  # image named), removes it and etcd.yaml, exits 3 and reports; nodes 1 and 3 serve throughout.
  local etcd_image; etcd_image=$(grep '/etcd:' "$ROOT/ha-images/list")
  lab_exec ha-2 ctr -n k8s.io images rm "$etcd_image" >/dev/null 2>&1
  local rejoin=(kjoin join "$HA_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$HA_PIN"
    --control-plane --certificate-key-file /etc/kjoin/key --apiserver-advertise-address "$HA_IP2"
    --ignore-preflight-errors ImagePull --discovery-timeout 80s)
  lab_exec ha-2 "${rejoin[@]}" -o json >"$T/noetcd.json" 2>"$T/noetcd.err"
  local nrc=$?
  grep -e '^\[etcd\] The new member' -e '^\[etcd\] Removing' "$T/noetcd.err" | cut -c1-170 | sed "s/^/    [$current] /" >&2
  # (no Pod of it in the API: the kubelet bootstraps through this node's own API server, which waits for
  # this etcd; the kubelet's journal names the image)
  [ "$nrc" = 3 ] && grep -q "^\[etcd\] The new member has not started after 1[5-9] s: " "$T/noetcd.err" &&
    grep -q "^\[etcd\] The new member has not started after [0-9]* s: the kubelet on etcd's Pod: .*$etcd_image" "$T/noetcd.err" &&
    grep -q "the new etcd member never started before .*$etcd_image.*; the member, which never started, was removed from the cluster and its etcd.yaml taken back" "$T/noetcd.err" &&
    jq -e '.error.etcdMemberRemoved and .error.reported' "$T/noetcd.json" >/dev/null ||
    { fail "a join without etcd's image: exit $nrc: $(grep -e '^\[etcd\]' -e '^kjoin:' "$T/noetcd.err" | tail -n 3 | cut -c1-400)"; ha_diag ha-2; rc=1; }
  [ "$(ha_members "$HA_IP1")" = "ha-1 https://$HA_IP1:2380 false
ha-3 https://$HA_IP3:2380 false" ] && [ -z "$(lab_exec ha-2 ls /etc/kubernetes/manifests/etcd.yaml 2>/dev/null)" ] ||
    { fail "members after the join without etcd: $(ha_members "$HA_IP1" | tr '\n' ';')"; rc=1; }
  for ip in "$HA_IP1" "$HA_IP3"; do
    ha_healthy "$ip" || { fail "the cluster does not answer at $ip after node 2's failed join"; rc=1; }
  done
  local nid; nid=$(jq -r .error.joinID "$T/noetcd.json")
  sed "s#server: .*#server: https://$HA_IP1:6443#" "$T/admin.conf" >"$T/admin1.conf" && chmod 600 "$T/admin1.conf" &&
    "$KJOIN" reports --kubeconfig "$T/admin1.conf" --node ha-2 -o json >"$T/noetcd.reports" 2>&1 &&
    jq -e --arg id "$nid" --arg image "$etcd_image" '[.reports[] | select(.joinID == $id and .phase == "etcd-join" and
      .exitCode == 3 and (.reason | contains($image)))] | length == 1' "$T/noetcd.reports" >/dev/null ||
    { fail "no report of the join without etcd: $(head -c 400 "$T/noetcd.reports")"; rc=1; }
  # The image loaded: the same command joins.
  lab_exec ha-2 ctr -n k8s.io images import /opt/kjoin-images/etcd.tar >/dev/null 2>&1
  lab_exec ha-2 "${rejoin[@]}" >"$T/rejoin2.out" 2>&1 ||
    { fail "kjoin join again after the reset: $(tail -n 4 "$T/rejoin2.out")"; ha_diag ha-2; rc=1; }
  [ "$(ha_members "$HA_IP1")" = "ha-1 https://$HA_IP1:2380 false
ha-2 https://$HA_IP2:2380 false
ha-3 https://$HA_IP3:2380 false" ] || { fail "members after the join with etcd's image: $(ha_members "$HA_IP1" | tr '\n' ';')"; rc=1; }
  [ $rc = 0 ] && ha_kubeadm_tools_on_kjoin_node || rc=1
  lab_stop ha-3
  lab_stop ha-2
  lab_stop ha-1
  return $rc
}

# ha_approvers: kjoin approver installed and enabled (kjoin-approver.service,
# installed by the package and not enabled) on nodes 1, 2 and 3, node 1's
# first; one Lease holder, node 1's; the others standing by.
ha_approvers() {
  local n ip
  lab_exec ha-1 systemctl is-enabled kjoin-approver >/dev/null 2>&1 && { fail "the package enabled kjoin-approver"; return 1; }
  for n in 1 2 3; do
    eval "ip=\$HA_IP$n"
    lab_exec "ha-$n" kjoin approver install --server "https://$ip:6443" >"$T/approver$n.out" 2>&1 &&
      lab_exec "ha-$n" systemctl enable --now kjoin-approver >>"$T/approver$n.out" 2>&1 ||
      { fail "approver on ha-$n: $(tail -n 3 "$T/approver$n.out")"; return 1; }
    [ "$n" != 1 ] || e2e_wait 30 ha_holder_is ha-1_ || { fail "node 1's approver never held the Lease"; return 1; }
  done
  sleep 3
  ha_holder_is ha-1_ || { fail "the Lease moved: $(ha_kc "$HA_IP2" -n kube-system get lease kjoin-approver -o jsonpath='{.spec.holderIdentity}')"; return 1; }
  for n in 2 3; do
    lab_exec "ha-$n" systemctl is-active kjoin-approver >/dev/null && e2e_wait 20 ha_approver_healthy "ha-$n" ||
      { fail "ha-$n's approver is not running"; return 1; }
  done
}
ha_approver_healthy() { # NODE: its approver answers /healthz "ok"
  lab_exec "$1" bash -c 'exec 3<>/dev/tcp/127.0.0.1/10271 && printf "GET /healthz HTTP/1.0\r\n\r\n" >&3 && cat <&3' 2>/dev/null |
    tail -n 1 | grep -qx ok
}
ha_holder_is() { [[ "$(ha_kc "$HA_IP2" -n kube-system get lease kjoin-approver -o jsonpath='{.spec.holderIdentity}' 2>/dev/null)" == "$1"* ]]; }

# ha_serving_serial IP PORT: the serial of the certificate served there.
ha_serving_serial() {
  openssl s_client -connect "$1:$2" </dev/null 2>/dev/null | openssl x509 -noout -serial 2>/dev/null
}

# ha_restart_static_pods NODE: the kubelet stops the node's static Pods and
# starts them again (kubeadm's advice after a renewal: the manifests moved
# out of the kubelet's directory and back).
ha_restart_static_pods() {
  lab_exec "$1" sh -c 'mkdir /etc/kubernetes/manifests.away && mv /etc/kubernetes/manifests/*.yaml /etc/kubernetes/manifests.away/ &&
    for i in $(seq 60); do ss -Hltn | grep -q ":6443 " || break; sleep 1; done &&
    mv /etc/kubernetes/manifests.away/*.yaml /etc/kubernetes/manifests/ && rmdir /etc/kubernetes/manifests.away'
}

# On node 2, joined by kjoin: kubeadm certs renew all, after which its
# restarted API server and etcd serve the renewed certificates and its four
# components answer; kubeadm upgrade node (the same release) runs, and the
# four answer after it; kubeadm reset takes its etcd member out and leaves
# a working cluster of nodes 1 and 3, nothing of the cluster running on node 2.
ha_kubeadm_tools_on_kjoin_node() {
  local rc=0 before after want
  e2e_wait 120 ha_four ha-2 "$HA_IP2" || { fail "node 2 rejoined: its components do not answer"; ha_diag ha-2; return 1; }
  before=$(ha_serving_serial "$HA_IP2" 6443)
  lab_exec ha-2 kubeadm certs renew all >"$T/renew2.out" 2>&1 || { fail "kubeadm certs renew all: $(tail -n 4 "$T/renew2.out")"; rc=1; }
  ha_restart_static_pods ha-2 || { fail "node 2's static Pods did not restart"; rc=1; }
  e2e_wait 180 ha_four ha-2 "$HA_IP2" || { fail "node 2's components after the renewal"; ha_diag ha-2; rc=1; }
  want=$(lab_exec ha-2 openssl x509 -in /etc/kubernetes/pki/apiserver.crt -noout -serial)
  after=$(ha_serving_serial "$HA_IP2" 6443)
  [ -n "$want" ] && [ "$after" = "$want" ] && [ "$after" != "$before" ] ||
    { fail "the API server does not serve its renewed certificate: before $before, now $after, on disk $want"; rc=1; }
  want=$(lab_exec ha-2 openssl x509 -in /etc/kubernetes/pki/etcd/server.crt -noout -serial)
  [ "$(ha_serving_serial "$HA_IP2" 2379)" = "$want" ] || { fail "etcd does not serve its renewed certificate"; rc=1; }
  # (its preflight refuses this lab's cgroup v1, as kubeadm join's would: ignored here as there)
  lab_exec ha-2 kubeadm upgrade node --ignore-preflight-errors all >"$T/upgrade2.out" 2>&1 || { fail "kubeadm upgrade node: $(tail -n 6 "$T/upgrade2.out")"; rc=1; }
  grep -q "The control plane instance for this node was successfully upgraded" "$T/upgrade2.out" ||
    { fail "kubeadm upgrade node did not finish: $(tail -n 3 "$T/upgrade2.out")"; rc=1; }
  e2e_wait 180 ha_four ha-2 "$HA_IP2" || { fail "node 2's components after kubeadm upgrade node"; ha_diag ha-2; rc=1; }
  echo "    [$current] node 2 (kjoin): kubeadm certs renew all, the static Pods restarted on the new certificates, kubeadm upgrade node: its four components answer" >&2
  lab_exec ha-2 kubeadm reset -f >"$T/kreset2.out" 2>&1 || { fail "kubeadm reset: $(tail -n 4 "$T/kreset2.out")"; rc=1; }
  [ "$(ha_members "$HA_IP1")" = "ha-1 https://$HA_IP1:2380 false
ha-3 https://$HA_IP3:2380 false" ] || { fail "members after kubeadm reset: $(ha_members "$HA_IP1" | tr '\n' ';')"; rc=1; }
  local ip
  for ip in "$HA_IP1" "$HA_IP3"; do
    e2e_wait 60 ha_healthy "$ip" || { fail "the cluster does not answer at $ip after kubeadm reset"; rc=1; }
  done
  e2e_wait 60 ha_no_control_plane_ports ha-2 ||
    { fail "node 2 still listens after kubeadm reset: $(lab_exec ha-2 ss -Hltn | tr '\n' ' ')"; rc=1; }
  return $rc
}

# ha_no_control_plane_ports NODE: none of the control plane's ports is held there.
ha_no_control_plane_ports() { ! lab_exec "$1" ss -Hltn | grep -qE ':(6443|10257|10259|2379|2380|2381) '; }

# ---- make bench: the control-plane join ------------------------------------

# ha_timed NODE CMD...: CMD run in NODE, its output in the node's
# /tmp/bench.out; prints "EXIT PEAK_RSS_KIB" (VmHWM, read every 20 ms).
ha_timed() {
  local n=$1; shift
  lab_exec "$n" sh -c '"$@" >/tmp/bench.out 2>&1 & p=$!; m=0
    while kill -0 $p 2>/dev/null; do
      r=$(awk "/^VmHWM:/ {print \$2}" /proc/$p/status 2>/dev/null); [ -n "$r" ] && [ "$r" -gt "$m" ] && m=$r; sleep 0.02
    done
    wait $p; echo "$? $m"' sh "$@"
}

# ha_four NODE IP: the node's four components answer: the API server ready,
# its etcd member healthy (both from outside), the controller manager's and
# the scheduler's health on their local ports (from inside, as their
# probes ask).
ha_four() {
  local q
  ha_healthy "$2" || return 1
  for q in 10257/healthz 10259/livez; do
    lab_exec "$1" sh -c "printf 'GET /${q#*/} HTTP/1.0\r\n\r\n' | timeout 2 openssl s_client -quiet -connect 127.0.0.1:${q%/*} 2>/dev/null" |
      head -1 | grep -q " 200 " || return 1
  done
}

# ha_member_out NAME: the member NAME removed through node 1 (when the
# tool's own reset did not).
ha_member_out() {
  local id
  id=$(curl -sf --max-time 10 --cacert "$T/etcd-ca.crt" --cert "$T/etcd-hc.crt" --key "$T/etcd-hc.key" -X POST -d '{}' \
    "https://$HA_IP1:2379/v3/cluster/member/list" | jq -r --arg n "$1" '.members[] | select(.name == $n) | .ID')
  [ -z "$id" ] || curl -sf --max-time 10 --cacert "$T/etcd-ca.crt" --cert "$T/etcd-hc.crt" --key "$T/etcd-hc.key" \
    -X POST -d "{\"ID\": \"$id\"}" "https://$HA_IP1:2379/v3/cluster/member/remove" >/dev/null
}

# One control-plane join on a fresh node: TOOL NAME IP. Sets HA_RESULT to
# "ms rss_kib": from the command's start to the node's four components
# answering, and the command's peak RSS. The node is reset (its member out)
# and stopped after, whatever happened.
ha_bench_one() {
  local tool=$1 n=$2 ip=$3 t0 out ms= i rc=0
  HA_RESULT=
  ha_boot "$n" "$ip" "$(ha_user_data /etc/kjoin/key "$HA_KEY" 0600)"
  ha_ready "$n" || rc=1
  t0=$(date +%s%N)
  if [ $rc = 0 ] && [ "$tool" = kjoin ]; then
    out=$(ha_timed "$n" kjoin join "$HA_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$HA_PIN" \
      --control-plane --certificate-key-file /etc/kjoin/key --apiserver-advertise-address "$ip")
  elif [ $rc = 0 ]; then
    out=$(ha_timed "$n" kubeadm join "$HA_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$HA_PIN" \
      --control-plane --certificate-key "$HA_KEY" --apiserver-advertise-address "$ip" --ignore-preflight-errors all)
  fi
  [ $rc = 0 ] && { [ "${out%% *}" = 0 ] || { fail "$tool on $n: exit ${out%% *}: $(lab_exec "$n" tail -n 4 /tmp/bench.out)"; rc=1; }; }
  for i in $(seq 1200); do
    [ $rc = 0 ] || break
    ha_four "$n" "$ip" && { ms=$((($(date +%s%N) - t0) / 1000000)); break; }
    sleep 0.1
  done
  [ $rc != 0 ] || [ -n "$ms" ] || { fail "$tool on $n: the four components never answered"; rc=1; }
  [ $rc != 0 ] || HA_RESULT="$ms ${out#* }"
  if [ "$tool" = kjoin ]; then lab_exec "$n" kjoin reset >/dev/null 2>&1; else lab_exec "$n" kubeadm reset -f >/dev/null 2>&1; fi
  ha_member_out "$n"
  ha_kc "$HA_IP1" delete node "$n" >/dev/null 2>&1
  lab_stop "$n"
  return $rc
}

# make bench's control-plane row: kjoin join --control-plane against
# kubeadm join --control-plane, each on a fresh booted node joining the same
# cluster (node 1 by kubeadm init), interleaved, BENCH_CP_RUNS each (3):
# the median from the command's start to the node's API server, etcd
# member, controller manager and scheduler answering, and each tool's peak RSS.
bench_lab_control_plane_join() {
  [ "$E2E_MINOR" = "$E2E_NEWEST_MINOR" ] || { echo "    [$current] the newest release only" >&2; return 0; }
  local runs=${BENCH_CP_RUNS:-3} i r k=() a=() kr=0 ar=0 rc=0
  [ -s "$ROOT/ha-images/pause.name" ] || ha_images "$ROOT/ha-images" || return 1
  ha_boot ha-1 "$HA_IP1" "$(ha_user_data /etc/kjoin/init.yaml "$(ha_init_config)" 0600)"
  ha_ready ha-1 && ha_init || return 1
  e2e_wait 60 sh -c "kubectl --kubeconfig '$T/admin.conf' --server https://$HA_IP1:6443 -n kube-public get configmap cluster-info -o json | grep -q jws-kubeconfig-abcdef" ||
    { fail "the bootstrap signer never signed the token"; return 1; }
  for i in $(seq "$runs"); do
    ha_bench_one kjoin "ha-k$i" "$LAB_NET.$((70 + i))" || { rc=1; break; }
    r=$HA_RESULT; k+=("${r%% *}"); [ "${r#* }" -gt "$kr" ] && kr=${r#* }
    ha_bench_one kubeadm "ha-a$i" "$LAB_NET.$((80 + i))" || { rc=1; break; }
    r=$HA_RESULT; a+=("${r%% *}"); [ "${r#* }" -gt "$ar" ] && ar=${r#* }
  done
  lab_stop ha-1
  [ $rc = 0 ] || return 1
  local km am
  km=$(printf '%s\n' "${k[@]}" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
  am=$(printf '%s\n' "${a[@]}" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
  awk -v km="$km" -v am="$am" -v kr="$kr" -v ar="$ar" -v ks="${k[*]}" -v as="${a[*]}" 'BEGIN {
    printf "control-plane kjoin %6.2f s  kubeadm %6.2f s  time %.2fx  peak RSS kjoin %d KiB, kubeadm %d KiB  (runs, ms: kjoin %s; kubeadm %s)\n",
           km / 1000, am / 1000, km / am, kr, ar, ks, as }'
}
