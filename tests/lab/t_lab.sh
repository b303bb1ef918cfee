# Nodes that boot: cloud-init joins them with kjoin's .deb, systemd runs the
# kubelet under kjoin's drop-in. Sourced by tests/lab/run.sh.

# The README's cloud-config, with this cluster's endpoint, token and pin, and
# kjoin installed first as a user installs its .deb.
lab_readme_user_data() {
  local block
  block=$(awk '/^```yaml$/ {inblock = 1; next} /^```$/ {if (inblock && found) exit; inblock = 0; next}
               inblock && /^#cloud-config$/ {found = 1} inblock && found {print}' "$REPO/README.md")
  [ -n "$block" ] || return 1
  sed -e "s|\"10.0.0.10:6443\"|\"$E2E_ENDPOINT\"|" -e "s|sha256:[0-9a-f]\{64\}|$E2E_PIN|" <<<"$block" |
    sed '/^runcmd:$/a - [sh, -c, "apt-get install -y -q /opt/kjoin/*.deb >/var/log/kjoin-install.log 2>\&1"]'
}

# lab_registered NODE SECONDS: the Node exists, seen by an admin.
lab_registered() { e2e_wait "$2" kc get node "$1"; }

t_lab_cloud_init_joins_a_booted_node() {
  local user_data n=lab-1 rc=0
  user_data=$(lab_readme_user_data) || { fail "no cloud-config in the README"; return 1; }
  grep -q "$E2E_ENDPOINT" <<<"$user_data" || { fail "the README's cloud-config did not take this cluster's endpoint"; return 1; }
  lab_seed "$T/seed" "$n" "$user_data"
  local t0; t0=$(date +%s)
  lab_boot "$n" "$LAB_NET.11" "$T/seed"
  lab_wait_booted "$n" 90 || { fail "the node did not boot: $(tail -5 "$LAB_DIR/$n/console.log")"; rc=1; }
  if lab_registered "$n" 180; then
    echo "    [$current] Node $n registered $(($(date +%s) - t0)) s after boot" >&2
  else
    fail "the Node never registered: $(lab_exec "$n" tail -n 12 /var/log/cloud-init-output.log 2>&1)"; rc=1
  fi
  lab_joined "$n" || rc=1
  lab_stop "$n"
  kc delete node "$n" >/dev/null 2>&1
  return $rc
}

# A #cloud-config of docs/join.md (the first holding PATTERN; a jinja header kept), with this
# cluster's endpoint and pin, and kjoin installed first from its .deb (with a second argument
# "as-is": the block installs what it needs itself).
lab_doc_user_data() {
  python3 - "$REPO/docs/join.md" "$1" "$E2E_ENDPOINT" "$E2E_PIN" "${2:-}" <<'PY'
import re, sys
text, pattern, endpoint, pin, as_is = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] == "as-is"
for block in re.findall(r"```yaml\n((?:## template: jinja\n)?#cloud-config\n.*?)```", text, re.S):
    if pattern in block:
        block = re.sub(r'"10\.0\.0\.10:6443"', '"%s"' % endpoint, block)
        block = re.sub(r'(apiServerEndpoint: )10\.0\.0\.10:6443', r'\g<1>%s' % endpoint, block)
        block = re.sub(r'sha256:[0-9a-f]{64}', pin, block)
        # kjoin installed first, in the runcmd list's own indentation
        indent = re.search(r"runcmd:\n( *)-", block).group(1)
        if not as_is:
            block = block.replace("runcmd:\n", 'runcmd:\n%s- [sh, -c, "apt-get install -y -q /opt/kjoin/*.deb >/var/log/kjoin-install.log 2>&1"]\n' % indent, 1)
        print(block, end="")
        sys.exit(0)
sys.exit(1)
PY
}

# lab_joined NODE: what a joined node shows: kubelet.service active under
# 10-kjoin.conf, no bootstrap token on disk, a client certificate of the
# cluster's CA for this node.
lab_joined() {
  local n=$1 rc=0
  lab_wait_settled "$n" 120 || { fail "$n: systemd still has jobs: $(lab_exec "$n" systemctl list-jobs --no-legend)"; rc=1; }
  # Restart=always: a kubelet that started before containerd answered exits and is restarted
  # 10 s later (systemd has no job queued meanwhile), so active is waited for, not sampled.
  e2e_wait 30 lab_exec "$n" systemctl is-active --quiet kubelet ||
    { fail "$n: kubelet.service is not active: $(lab_exec "$n" systemctl show -p ActiveState,SubState,NRestarts kubelet | tr '\n' ' ')"; rc=1; }
  local pid args
  pid=$(lab_exec "$n" systemctl show -p MainPID --value kubelet)
  args=$(lab_exec "$n" cat "/proc/$pid/cmdline" 2>/dev/null | tr '\0' ' ')
  lab_exec "$n" systemctl show -p DropInPaths --value kubelet | grep -q "/10-kjoin.conf" &&
    grep -q -- "--config=/var/lib/kubelet/config.yaml" <<<"$args" ||
    { fail "$n: the kubelet does not run under 10-kjoin.conf: $(lab_exec "$n" systemctl show -p DropInPaths kubelet); $args"; rc=1; }
  lab_exec "$n" test ! -e /etc/kubernetes/bootstrap-kubelet.conf || { fail "$n: bootstrap-kubelet.conf is still there"; rc=1; }
  lab_exec "$n" cat /var/lib/kubelet/pki/kubelet-client-current.pem >"$T/$n-client.pem" 2>/dev/null &&
    openssl verify -CAfile "$E2E_CA" "$T/$n-client.pem" >/dev/null 2>&1 &&
    openssl x509 -in "$T/$n-client.pem" -noout -subject | grep -q "CN = system:node:$n" ||
    { fail "$n: no client certificate of the cluster's CA for this node"; rc=1; }
  return $rc
}

lab_internal_ips_are() { # NODE "IP..."
  [ "$(kc get node "$1" -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')" = "$2" ]
}
# A dual-stack node of a dual-stack cluster: cloud-init's plain join, and
# the Node's InternalIPs are both of its addresses, found on host0 (the
# interface of both default routes under systemd-networkd).
t_lab_dual_stack_node_names_both_addresses() {
  local user_data n=lab-dual rc=0 cc
  cc=$(kc -n kube-system get configmap kubeadm-config -o json) || return 1
  jq '.data.ClusterConfiguration |= sub("serviceSubnet: 10.96.0.0/12"; "serviceSubnet: 10.96.0.0/12,fd00:10:96::/112")' <<<"$cc" |
    kc replace -f - >/dev/null || return 1
  user_data=$(lab_readme_user_data) || { fail "no cloud-config in the README"; rc=1; }
  lab_seed "$T/seed" "$n" "$user_data"
  LAB_V6=$LAB_NET6:37 lab_boot "$n" "$LAB_NET.37" "$T/seed"
  lab_registered "$n" 240 || { fail "the Node never registered: $(lab_exec "$n" tail -n 8 /var/log/cloud-init-output.log 2>&1)"; rc=1; }
  lab_joined "$n" || rc=1
  # (kubelet 1.20 takes both only with its IPv6DualStack gate: left to itself, it names one)
  local want="$LAB_NET.37 $LAB_NET6:37" flag="--node-ip=$LAB_NET.37,$LAB_NET6:37"
  [ "$E2E_MINOR" -ge 21 ] || want=$LAB_NET.37 flag=
  e2e_wait 60 lab_internal_ips_are "$n" "$want" ||
    { fail "the Node's addresses: $(kc get node "$n" -o jsonpath='{.status.addresses}'); flags: $(lab_exec "$n" cat /var/lib/kubelet/kubeadm-flags.env)"; rc=1; }
  if [ -n "$flag" ]; then
    lab_exec "$n" grep -q -- "$flag" /var/lib/kubelet/kubeadm-flags.env || { fail "no dual node-ip in the flags"; rc=1; }
  else
    ! lab_exec "$n" grep -q -- "--node-ip" /var/lib/kubelet/kubeadm-flags.env || { fail "kubelet 1.20 got a node-ip"; rc=1; }
  fi
  [ $rc = 0 ] && echo "    [$current] $n: InternalIPs $want" >&2
  lab_stop "$n"
  kc delete node "$n" >/dev/null 2>&1
  jq 'del(.metadata.resourceVersion)' <<<"$cc" | kc replace -f - >/dev/null || { fail "kubeadm-config could not be restored"; rc=1; }
  return $rc
}

# A node with no way to any registry (the lab's nodes have no route out):
# the README's cloud-config with --images joins it, the archive's image (the
# runtime's sandbox image, made here) imported into containerd's k8s.io
# namespace before the kubelet started, and a Pod bound to the node runs
# from it, nothing pulled.
t_lab_offline_images_join_without_a_registry() {
  local user_data n=lab-img rc=0 sandbox
  sandbox=$(containerd config default 2>/dev/null | sed -n 's/.*sandbox_image = "\(.*\)"/\1/p') # (the image's containerd is this machine's)
  [ -n "$sandbox" ] || { fail "no sandbox image in containerd's defaults"; return 1; }
  mkdir -p "$T/img"
  pause_rootfs "$T/pause" && oci_archive "$sandbox" "$T/pause" "$T/img/images.tar" /pause || { fail "no archive"; return 1; }
  # (as the HA lab's nodes, for a Pod's sandbox under nspawn: containerd with restrict_oom_score_adj, its
  # directory the host's, restarted before the join; a resolv.conf)
  user_data=$(lab_readme_user_data | sed 's|--discovery-token-ca-cert-hash, |--images, /opt/kjoin-images/images.tar, --discovery-token-ca-cert-hash, |' |
    sed '/^write_files:$/a - path: /etc/containerd/config.toml\n  content: |\n    version = 2\n    [plugins."io.containerd.grpc.v1.cri"]\n      restrict_oom_score_adj = true\n- path: /etc/resolv.conf\n  content: |\n    nameserver '"$LAB_HOST"'' |
    sed '/apt-get install -y -q \/opt\/kjoin/a - [systemctl, restart, containerd]') ||
    { fail "no cloud-config in the README"; return 1; }
  lab_seed "$T/seed" "$n" "$user_data"
  mkdir -p "$LAB_DIR/$n/containerd"
  lab_boot "$n" "$LAB_NET.38" "$T/seed" --bind-ro="$T/img:/opt/kjoin-images" --bind="$LAB_DIR/$n/containerd:/var/lib/containerd"
  lab_registered "$n" 240 || { fail "the Node never registered: $(lab_exec "$n" tail -n 8 /var/log/cloud-init-output.log 2>&1)"; rc=1; }
  lab_joined "$n" || rc=1
  # (asked again for a while: one busy run's ctr once listed nothing while the Pod below ran from the image)
  e2e_wait 30 eval 'lab_exec "$n" ctr --namespace k8s.io images ls -q >"$T/images.out" 2>&1; grep -qxF "$sandbox" "$T/images.out"' ||
    { fail "$sandbox was not imported: ctr images ls: $(head -c 300 "$T/images.out"); the join: $(lab_exec "$n" grep -h 'Imported\|Images' /var/log/cloud-init-output.log 2>&1 | head -c 300)"; rc=1; }
  kc create -f - >/dev/null <<POD || { fail "the Pod could not be created"; rc=1; }
apiVersion: v1
kind: Pod
metadata: {name: offline, namespace: default}
spec:
  nodeName: $n
  hostNetwork: true
  containers: [{name: c, image: "$sandbox", imagePullPolicy: Never}]
POD
  e2e_wait 120 eval '[ "$(kc get pod offline -o jsonpath={.status.phase})" = Running ]' ||
    { fail "the Pod does not run: $(kc get pod offline -o jsonpath='{.status}' | head -c 500)"; rc=1; }
  [ $rc = 0 ] && echo "    [$current] $n: joined with no registry, $sandbox imported, a Pod runs from it" >&2
  kc delete pod offline --wait=false >/dev/null 2>&1
  lab_stop "$n"
  kc delete node "$n" >/dev/null 2>&1
  return $rc
}

# kjoin sync on a node systemd runs: the packaged check (kjoin-sync-check,
# installed, not enabled) finds the node in sync, then, once the cluster's
# kubelet-config changed, reports the drift on the Node's label without
# failing its unit; kjoin sync writes it (restart-needed: the kubelet
# started before), --restart restarts the kubelet, which then runs the new
# configuration (the Node's capacity is its maxPods), and kubeadm's own
# upgrade phase writes the same configuration.
lab_sync() { # NODE WANT_EXIT ARGS...: kjoin sync on the node, -o json into $T/sync.json
  local n=$1 want=$2 got; shift 2
  lab_exec "$n" kjoin sync "$@" -o json >"$T/sync.json" 2>"$T/sync.err"; got=$?
  [ "$got" = "$want" ] || { fail "$n: kjoin sync $*: exit $got, not $want: $(head -c 500 "$T/sync.json") $(tail -2 "$T/sync.err")"; return 1; }
}
lab_sync_label() { kc get node "$1" -o jsonpath='{.metadata.labels.kjoin\.io/kubelet-config}'; }
t_lab_sync_converges_a_node_and_its_timer_checks() {
  local user_data n=lab-sync rc=0 cm saved=$T/sync-cm.json pid1 pid2 kubeconfig=(--kubeconfig /etc/kubernetes/kubelet.conf)
  cm=$(kc -n kube-system get configmap -o name | grep -o 'kubelet-config[-0-9.]*$') && kc -n kube-system get configmap "$cm" -o json >"$saved" ||
    { fail "no kubelet-config"; return 1; }
  user_data=$(lab_readme_user_data) || { fail "no cloud-config in the README"; return 1; }
  lab_seed "$T/seed" "$n" "$user_data"
  lab_boot "$n" "$LAB_NET.39" "$T/seed" --bind-ro="$KBIN/kubeadm:/usr/bin/kubeadm"
  lab_registered "$n" 240 || { fail "the Node never registered: $(lab_exec "$n" tail -n 8 /var/log/cloud-init-output.log 2>&1)"; rc=1; }
  lab_joined "$n" || { lab_stop "$n"; kc delete node "$n" >/dev/null 2>&1; return 1; }
  [ "$(lab_exec "$n" systemctl is-enabled kjoin-sync-check.timer)" = disabled ] ||
    { fail "kjoin-sync-check.timer: $(lab_exec "$n" systemctl is-enabled kjoin-sync-check.timer)"; rc=1; }
  lab_exec "$n" systemctl start kjoin-sync-check.service && [ "$(lab_sync_label "$n")" = in-sync ] ||
    { fail "the check on a node just joined: $(lab_exec "$n" journalctl -u kjoin-sync-check --no-pager -n 5 -o cat) label $(lab_sync_label "$n")"; rc=1; }
  # The cluster's configuration changed: maxPods 41. (A cluster kubeadm v1.20 made holds it as that
  # kubeadm writes it, defaulted, as its upgrade phase does; the kubelet of this lab does not run that
  # one, whose enforceNodeAllocatable needs QoS cgroups, so the restart below takes the run's own.)
  local defaulted=$T/sync-cm-defaulted.json
  cp "$saved" "$defaulted"
  if [ "$E2E_MINOR" -lt 24 ]; then
    lab_exec "$n" kubeadm upgrade node phase kubelet-config "${kubeconfig[@]}" >"$T/upgrade.out" 2>&1 &&
      lab_exec "$n" cat /var/lib/kubelet/config.yaml >"$T/defaulted.yaml" &&
      jq --rawfile k "$T/defaulted.yaml" '.data.kubelet = $k' "$saved" >"$defaulted" || { fail "kubeadm's defaulted configuration: $(tail -3 "$T/upgrade.out")"; rc=1; }
  fi
  lab_sync_cm() { jq '.data.kubelet |= sub("maxPods: 42"; "maxPods: 41") | del(.metadata.resourceVersion)' "$1" |
    kc replace -f - >/dev/null || { fail "the ConfigMap was not changed"; return 1; }; }
  lab_sync_cm "$defaulted" || rc=1
  lab_exec "$n" systemctl start kjoin-sync-check.service && [ "$(lab_sync_label "$n")" = drifted ] &&
    lab_exec "$n" journalctl -u kjoin-sync-check --no-pager -o cat | grep -q "maxPods: 42 -> 41" ||
    { fail "the check after the change: $(lab_exec "$n" journalctl -u kjoin-sync-check --no-pager -n 8 -o cat) label $(lab_sync_label "$n")"; rc=1; }
  lab_sync "$n" 10 || rc=1
  # (the Node's capacity is the running kubelet's maxPods)
  jq -e '.written and .state == "restart-needed" and (.restarted | not)' "$T/sync.json" >/dev/null &&
    [ "$(lab_sync_label "$n")" = restart-needed ] && [ "$(kc get node "$n" -o jsonpath={.status.capacity.pods})" = 42 ] ||
    { fail "sync: $(cat "$T/sync.json") label $(lab_sync_label "$n"), pods $(kc get node "$n" -o jsonpath={.status.capacity.pods})"; rc=1; }
  # the files are right, the kubelet is not: the check says so under systemd
  lab_sync "$n" 0 --check || rc=1
  jq -e '.state == "restart-needed" and (.drift | not)' "$T/sync.json" >/dev/null || { fail "sync --check after sync: $(cat "$T/sync.json")"; rc=1; }
  # kubeadm's own phase on the synced node: nothing to change.
  lab_exec "$n" cat /var/lib/kubelet/config.yaml >"$T/synced.yaml"
  lab_exec "$n" kubeadm upgrade node phase kubelet-config "${kubeconfig[@]}" >"$T/upgrade.out" 2>&1 ||
    { fail "kubeadm upgrade node phase kubelet-config: $(tail -3 "$T/upgrade.out")"; rc=1; }
  lab_exec "$n" cat /var/lib/kubelet/config.yaml >"$T/upgraded.yaml"
  python3 -c 'import sys, yaml; a, b = (yaml.safe_load(open(f)) for f in sys.argv[1:]); sys.exit(a != b)' "$T/synced.yaml" "$T/upgraded.yaml" ||
    { fail "kubeadm upgrade node changed the synced configuration: $(diff "$T/synced.yaml" "$T/upgraded.yaml" | head -6)"; rc=1; }
  lab_sync "$n" 0 --check || rc=1
  local want=0
  [ "$E2E_MINOR" -ge 24 ] || { lab_sync_cm "$saved" || rc=1; want=10; }
  pid1=$(lab_exec "$n" systemctl show -p MainPID --value kubelet)
  lab_sync "$n" $want --restart || rc=1
  pid2=$(lab_exec "$n" systemctl show -p MainPID --value kubelet)
  jq -e '.restarted and .state == "in-sync"' "$T/sync.json" >/dev/null && [ "$pid1" != "$pid2" ] &&
    [ "$(lab_sync_label "$n")" = in-sync ] ||
    { fail "sync --restart: $(cat "$T/sync.json") kubelet $pid1 -> $pid2, label $(lab_sync_label "$n")"; rc=1; }
  e2e_wait 60 eval '[ "$(kc get node "$n" -o jsonpath={.status.capacity.pods})" = 41 ]' ||
    { fail "the restarted kubelet does not run the new configuration: pods $(kc get node "$n" -o jsonpath={.status.capacity.pods})"; rc=1; }
  jq 'del(.metadata.resourceVersion)' "$saved" | kc replace -f - >/dev/null || { fail "the ConfigMap was not put back"; rc=1; }
  [ $rc = 0 ] && echo "    [$current] $n: drift on the Node's label from the packaged check, sync --restart: the kubelet runs it (maxPods 41), kubeadm's phase changes nothing" >&2
  lab_stop "$n"
  kc delete node "$n" >/dev/null 2>&1
  return $rc
}

# A node whose only way out is a proxy on the lab's bridge (an HTTP proxy
# with nothing behind it that logs what it is asked for): joined with
# --proxy, real systemd runs the kubelet and containerd with the drop-ins;
# nothing of the cluster goes through the proxy (the Node registers, the
# proxy never hears of the API server), and containerd's pulls do: a Pod
# put on the node makes containerd ask the proxy for the image's registry.
t_lab_proxy_is_the_nodes_only_way_out() {
  local user_data n=lab-proxy rc=0 port proxy_pid unit
  port=$("$TOOLS/freeport")
  python3 "$REPO/tests/tools/connect_proxy.py" "$LAB_HOST" "$port" "$T/proxy.log" >"$T/proxy.out" 2>&1 & proxy_pid=$!
  e2e_wait 10 grep -q ready "$T/proxy.out" || { fail "the proxy did not start: $(cat "$T/proxy.out")"; kill $proxy_pid; return 1; }
  : >"$T/proxy.log"
  user_data=$(lab_readme_user_data | sed "s|--discovery-token-ca-cert-hash, |--proxy, \"http://$LAB_HOST:$port\", --discovery-token-ca-cert-hash, |") ||
    { fail "no cloud-config in the README"; kill $proxy_pid; return 1; }
  grep -q -- "--proxy" <<<"$user_data" || { fail "--proxy not in the user data"; kill $proxy_pid; return 1; }
  lab_seed "$T/seed" "$n" "$user_data"
  lab_boot "$n" "$LAB_NET.36" "$T/seed"
  lab_registered "$n" 240 || { fail "the Node never registered: $(lab_exec "$n" tail -n 8 /var/log/cloud-init-output.log 2>&1)"; rc=1; }
  lab_joined "$n" || rc=1
  for unit in kubelet containerd; do
    lab_exec "$n" systemctl show -p Environment --value "$unit" | grep -q "HTTPS_PROXY=http://$LAB_HOST:$port" &&
      lab_exec "$n" systemctl show -p DropInPaths --value "$unit" | grep -q "/etc/systemd/system/$unit.service.d/20-kjoin-proxy.conf" ||
      { fail "$unit.service runs without the proxy: $(lab_exec "$n" systemctl show -p Environment,DropInPaths "$unit" | tr '\n' ' ')"; rc=1; }
  done
  # A Pod bound to the node (no scheduler here), its image from a registry only the proxy could reach
  # (its sandbox wants a resolv.conf, which the image has not; nothing answers there).
  lab_exec "$n" sh -c "echo 'nameserver $LAB_HOST' >/etc/resolv.conf" || { fail "no resolv.conf"; rc=1; }
  kc create -f - >/dev/null <<POD || { fail "the Pod could not be created"; rc=1; }
apiVersion: v1
kind: Pod
metadata: {name: proxy-proof, namespace: default}
spec:
  nodeName: $n
  hostNetwork: true
  containers: [{name: c, image: "proxy-proof.kjoin.test/pause:1"}]
POD
  e2e_wait 120 grep -qE '^(proxy-proof\.kjoin\.test|registry\.k8s\.io|[a-z0-9.-]+\.[a-z]+):443$' "$T/proxy.log" ||
    { fail "containerd never asked the proxy: $(sort -u "$T/proxy.log" | tr '\n' ' '); the Pod: $(kc get pod proxy-proof -o jsonpath='{.status}' | head -c 600);
      kubelet: $(lab_exec "$n" journalctl -u kubelet --no-pager -o cat 2>&1 | grep -i 'proxy-proof\|sandbox' | tail -4 | cut -c1-300)
      containerd: $(lab_exec "$n" journalctl -u containerd --no-pager -o cat 2>&1 | grep -iv 'level=info' | tail -4 | cut -c1-300)"; rc=1; }
  grep -qxF "$LAB_NET.36" <<<"$(lab_exec "$n" sed -n 's/^Environment="NO_PROXY=\(.*\)"$/\1/p' /etc/systemd/system/containerd.service.d/20-kjoin-proxy.conf | tr , '\n')" ||
    { fail "NO_PROXY lacks the node's own address: $(lab_exec "$n" cat /etc/systemd/system/containerd.service.d/20-kjoin-proxy.conf)"; rc=1; }
  ! grep -q "^$LAB_HOST:\|^169\.254\." "$T/proxy.log" ||
    { fail "the cluster's own traffic, or a link-local address's, went to the proxy: $(sort -u "$T/proxy.log" | tr '\n' ' ')"; rc=1; }
  [ $rc = 0 ] && echo "    [$current] $n: through the proxy only $(sort -u "$T/proxy.log" | tr '\n' ' ')" >&2
  kc delete pod proxy-proof --wait=false >/dev/null 2>&1
  lab_stop "$n"
  kill $proxy_pid; wait $proxy_pid 2>/dev/null
  kc delete node "$n" >/dev/null 2>&1
  return $rc
}

# Three workers boot at once from the one image, each on the lab's bridge,
# and cloud-init joins them to one control plane.
t_lab_three_nodes_boot_and_join_at_once() {
  local user_data n rc=0 t0
  user_data=$(lab_readme_user_data) || { fail "no cloud-config in the README"; return 1; }
  t0=$(date +%s)
  for n in 1 2 3; do
    lab_seed "$T/seed-$n" "lab-herd-$n" "$user_data"
    lab_boot "lab-herd-$n" "$LAB_NET.2$n" "$T/seed-$n"
  done
  for n in 1 2 3; do
    lab_registered "lab-herd-$n" 240 || { fail "lab-herd-$n never registered: $(lab_exec "lab-herd-$n" tail -n 6 /var/log/cloud-init-output.log 2>&1)"; rc=1; }
  done
  [ $rc = 0 ] && echo "    [$current] three Nodes registered $(($(date +%s) - t0)) s after boot" >&2
  for n in 1 2 3; do lab_joined "lab-herd-$n" || rc=1; done
  for n in 1 2 3; do lab_stop "lab-herd-$n"; kc delete node "lab-herd-$n" >/dev/null 2>&1; done
  return $rc
}

# lab_serial NODE: the serial of the node's client certificate.
lab_serial() { lab_exec "$1" openssl x509 -in /var/lib/kubelet/pki/kubelet-client-current.pem -noout -serial 2>/dev/null; }

# lab_rotation NODE: what the rotation timer fires (kjoin-tls-rotate.service)
# keeps a certificate that is not due, and renews one that is (the signer's
# one-hour certificate, backdated five minutes, has less than 99% of its life
# left): a new serial for the same node, of the cluster's CA, that
# authenticates as the node, and that the restarted kubelet runs with.
lab_rotation() {
  local n=$1 rc=0 before after
  lab_exec "$n" systemctl is-enabled kjoin-tls-rotate.timer >/dev/null || { fail "$n: the rotation timer is not enabled"; rc=1; }
  before=$(lab_serial "$n")
  lab_exec "$n" systemctl start kjoin-tls-rotate.service ||
    { fail "$n: kjoin-tls-rotate.service: $(lab_exec "$n" journalctl -u kjoin-tls-rotate --no-pager -n 5 -o cat)"; rc=1; }
  [ -n "$before" ] && [ "$(lab_serial "$n")" = "$before" ] || { fail "$n: a certificate that was not due was renewed"; rc=1; }
  lab_exec "$n" sh -c 'echo "KJOIN_ROTATE_FLAGS=--renew-before 99%" >>/etc/default/kjoin' || rc=1
  lab_exec "$n" systemctl start kjoin-tls-rotate.service ||
    { fail "$n: kjoin-tls-rotate.service: $(lab_exec "$n" journalctl -u kjoin-tls-rotate --no-pager -n 5 -o cat)"; rc=1; }
  after=$(lab_serial "$n")
  [ -n "$after" ] && [ "$after" != "$before" ] ||
    { fail "$n: a certificate that was due was not renewed: $(lab_exec "$n" journalctl -u kjoin-tls-rotate --no-pager -n 5 -o cat)"; return 1; }
  lab_exec "$n" cat /var/lib/kubelet/pki/kubelet-client-current.pem >"$T/$n-renewed.pem"
  openssl verify -CAfile "$E2E_CA" "$T/$n-renewed.pem" >/dev/null 2>&1 &&
    kubectl --server "$E2E_SERVER" --certificate-authority "$E2E_CA" --client-certificate "$T/$n-renewed.pem" \
      --client-key "$T/$n-renewed.pem" get node "$n" -o name >/dev/null 2>&1 ||
    { fail "$n: the renewed certificate does not authenticate the node"; rc=1; }
  echo "    [$current] $n: the timer's service kept a certificate not due and renewed a due one ($before -> $after)" >&2
  lab_exec "$n" systemctl restart kubelet && [ "$(lab_exec "$n" systemctl is-active kubelet)" = active ] &&
    lab_fresh_lease "$n" "$(date -u +%s)" 60 || { fail "$n: the kubelet does not run with the renewed certificate"; rc=1; }
  return $rc
}

# lab_fresh_lease NODE SINCE SECONDS: the node's kubelet renews its Lease
# after SINCE (epoch seconds): it talks to the API server as the node.
lab_fresh_lease() {
  local limit=$(($(date +%s) + $3)) t
  while [ "$(date +%s)" -lt "$limit" ]; do
    t=$(kc -n kube-node-lease get lease "$1" -o jsonpath='{.spec.renewTime}' 2>/dev/null)
    [ -n "$t" ] && [ "$(date -u -d "$t" +%s 2>/dev/null || echo 0)" -gt "$2" ] && return 0
    sleep 2
  done
  return 1
}

# The packaged kjoin-join.service (docs/join.md's example: a JoinConfiguration,
# --tls-bootstrap, the rotation timer), then kjoin reset under systemd, and
# a second join of the same node.
t_lab_join_service_reset_and_join_again() {
  local user_data n=lab-svc rc=0
  user_data=$(lab_doc_user_data "kjoin-join.service") || { fail "no kjoin-join.service cloud-config in docs/join.md"; return 1; }
  lab_seed "$T/seed" "$n" "$user_data"
  lab_boot "$n" "$LAB_NET.31" "$T/seed"
  lab_registered "$n" 240 || { fail "the Node never registered: $(lab_exec "$n" journalctl -u kjoin-join --no-pager -n 8 2>&1)"; rc=1; }
  lab_joined "$n" || rc=1
  [ "$(lab_exec "$n" systemctl is-active kjoin-join.service)" = active ] ||
    { fail "kjoin-join.service did not end well: $(lab_exec "$n" journalctl -u kjoin-join --no-pager -n 12 -o cat)"; rc=1; }
  lab_rotation "$n" || rc=1
  # kjoin reset stops kubelet.service through systemd and takes what the join made.
  lab_exec "$n" kjoin reset -o json >"$T/reset.json" 2>"$T/reset.err" || { fail "kjoin reset: $(cat "$T/reset.err")"; rc=1; }
  jq -e '.joined and .kubeletStopped and .left == []' "$T/reset.json" >/dev/null || { fail "reset: $(cat "$T/reset.json")"; rc=1; }
  [ "$(lab_exec "$n" systemctl is-active kubelet)" != active ] || { fail "the kubelet still runs after reset"; rc=1; }
  # As reset says: an admin deletes the Node; the same join then registers it again.
  kc delete node "$n" >/dev/null 2>&1
  lab_exec "$n" kjoin join --config /etc/kjoin/join.yaml --tls-bootstrap >"$T/join2.out" 2>&1 ||
    { fail "the second join: $(tail -3 "$T/join2.out")"; rc=1; }
  lab_registered "$n" 120 && lab_joined "$n" || { fail "the node did not register again"; rc=1; }
  lab_stop "$n"
  kc delete node "$n" >/dev/null 2>&1
  return $rc
}

# docs/join.md's Ignition config, as Ignition would apply it: each file
# written with its mode and decoded contents, each enabled unit enabled and
# started (the lab's nodes boot no initramfs of Ignition's, so cloud-init
# does it for it, kjoin's .deb first, as an image would carry it). The node
# joins through the packaged kjoin-join.service.
t_lab_ignition_config_joins() {
  local user_data n=lab-ign rc=0
  user_data=$(python3 - "$REPO/docs/join.md" "$E2E_ENDPOINT" "$E2E_PIN" <<'PY'
import base64, json, re, sys, urllib.parse
text, endpoint, pin = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
ign = json.loads([b for b in re.findall(r"```json\n(.*?)```", text, re.S) if '"ignition"' in b][0])
def data(url):
    head, body = url.split(",", 1)
    return base64.b64decode(body) if head.endswith(";base64") else urllib.parse.unquote_to_bytes(body)
out = ["#cloud-config", "write_files:"]
for f in ign["storage"]["files"]:
    content = data(f["contents"]["source"]).decode()
    content = content.replace('"10.0.0.10:6443"', '"%s"' % endpoint)
    content = re.sub(r"sha256:[0-9a-f]{64}", pin, content)
    out += ["- path: %s" % f["path"], '  permissions: "0%o"' % f["mode"], "  content: %s" % json.dumps(content)]
out += ["runcmd:", '- [sh, -c, "apt-get install -y -q /opt/kjoin/*.deb >/var/log/kjoin-install.log 2>&1"]']
out += ["- [systemctl, enable, --now, %s]" % u["name"] for u in ign["systemd"]["units"] if u.get("enabled")]
print("\n".join(out))
PY
  ) || { fail "no Ignition example in docs/join.md"; return 1; }
  lab_seed "$T/seed" "$n" "$user_data"
  lab_boot "$n" "$LAB_NET.35" "$T/seed"
  lab_registered "$n" 240 || { fail "the Node never registered: $(lab_exec "$n" journalctl -u kjoin-join --no-pager -n 8 2>&1)"; rc=1; }
  lab_joined "$n" || rc=1
  [ "$(lab_exec "$n" stat -c %a /etc/kjoin/join.yaml)" = 600 ] && lab_exec "$n" systemctl is-enabled kjoin-tls-rotate.timer >/dev/null ||
    { fail "the config's file mode or its timer"; rc=1; }
  lab_stop "$n"
  kc delete node "$n" >/dev/null 2>&1
  return $rc
}

# A node that keeps its disk (not volatile), joined by kjoin-join.service,
# powered off and booted again: it comes back with the same identity and
# nothing joined again: the service's condition skips it, the Node and the
# client certificate are the ones of the first boot, the join record is
# unchanged, no token is back on disk, and the kubelet renews its Lease.
t_lab_node_reboots_with_nothing_joined_again() {
  local user_data n=lab-reboot rc=0
  user_data=$(lab_doc_user_data "kjoin-join.service") || { fail "no kjoin-join.service cloud-config in docs/join.md"; return 1; }
  lab_seed "$T/seed" "$n" "$user_data"
  LAB_KEEP=1 lab_boot "$n" "$LAB_NET.51" "$T/seed" || { fail "the node's disk could not be made"; return 1; }
  lab_registered "$n" 240 && lab_joined "$n" || { fail "the first boot did not join: $(lab_exec "$n" journalctl -u kjoin-join --no-pager -n 8 -o cat 2>&1)"; rc=1; }
  local uid serial record
  uid=$(kc get node "$n" -o jsonpath='{.metadata.uid}')
  serial=$(lab_serial "$n")
  record=$(lab_exec "$n" sha256sum /etc/kubernetes/kjoin-join.json)
  lab_stop "$n"
  local t0; t0=$(date -u +%s)
  LAB_KEEP=1 lab_boot "$n" "$LAB_NET.51" "$T/seed"
  lab_wait_booted "$n" 90 && lab_wait_settled "$n" 120 || { fail "the node did not boot again: $(tail -5 "$LAB_DIR/$n/console.log")"; rc=1; }
  [ "$(lab_exec "$n" systemctl show -p ConditionResult --value kjoin-join.service)" = no ] ||
    { fail "kjoin-join.service was not skipped on the second boot: $(lab_exec "$n" journalctl -u kjoin-join -b --no-pager -n 5 -o cat)"; rc=1; }
  [ -n "$uid" ] && [ "$(kc get node "$n" -o jsonpath='{.metadata.uid}')" = "$uid" ] || { fail "the Node is not the first boot's"; rc=1; }
  [ -n "$serial" ] && [ "$(lab_serial "$n")" = "$serial" ] || { fail "the client certificate changed across the reboot"; rc=1; }
  [ "$(lab_exec "$n" sha256sum /etc/kubernetes/kjoin-join.json)" = "$record" ] || { fail "the join record changed across the reboot"; rc=1; }
  lab_exec "$n" test ! -e /etc/kubernetes/bootstrap-kubelet.conf || { fail "a bootstrap token is on disk after the reboot"; rc=1; }
  lab_joined "$n" || rc=1
  if lab_fresh_lease "$n" "$t0" 90; then
    echo "    [$current] $n rebooted: the same Node and certificate, its Lease renewed $(($(date -u +%s) - t0)) s after power-on" >&2
  else
    fail "the rebooted kubelet never renewed its Lease: $(lab_exec "$n" journalctl -u kubelet -b --no-pager -n 5 -o cat)"; rc=1
  fi
  lab_stop "$n"
  kc delete node "$n" >/dev/null 2>&1
  return $rc
}

# A kubelet that crash-loops under the real systemd (an unknown flag among
# kubeletExtraArgs): kjoin join ends with exit 3 long before its deadline,
# naming the kubelet's own last error from the journal, not an older one;
# kjoin reset then stops kubelet.service and takes the join's files.
t_lab_crash_looping_kubelet_ends_the_join() {
  local n=lab-loop rc=0 cfg
  if [ "$E2E_MINOR" -ge 31 ]; then
    cfg="apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
discovery:
  bootstrapToken: {token: abcdef.0123456789abcdef, apiServerEndpoint: \"$E2E_ENDPOINT\", caCertHashes: [\"$E2E_PIN\"]}
nodeRegistration:
  kubeletExtraArgs:
  - {name: no-such-kubelet-flag, value: \"1\"}
timeouts: {discovery: 120s}"
  else
    cfg="apiVersion: kubeadm.k8s.io/v1beta3
kind: JoinConfiguration
discovery:
  bootstrapToken: {token: abcdef.0123456789abcdef, apiServerEndpoint: \"$E2E_ENDPOINT\", caCertHashes: [\"$E2E_PIN\"]}
  timeout: 120s
nodeRegistration:
  kubeletExtraArgs: {no-such-kubelet-flag: \"1\"}"
  fi
  lab_seed "$T/seed" "$n" "#cloud-config
write_files:
- path: /etc/kjoin/join.yaml
  permissions: \"0600\"
  content: |
$(sed 's/^/    /' <<<"$cfg")
runcmd:
- [sh, -c, \"apt-get install -y -q /opt/kjoin/*.deb >/var/log/kjoin-install.log 2>&1\"]"
  lab_boot "$n" "$LAB_NET.41" "$T/seed"
  lab_wait_booted "$n" 90 && lab_wait_settled "$n" 120 || { fail "the node did not boot and settle"; rc=1; }
  local t0 took
  t0=$(date +%s)
  lab_exec "$n" kjoin join --config /etc/kjoin/join.yaml >"$T/join.out" 2>"$T/join.err"
  local jrc=$?
  took=$(($(date +%s) - t0))
  [ "$jrc" = 3 ] && [ "$took" -lt 90 ] || { fail "exit $jrc after $took s: $(tail -3 "$T/join.err")"; rc=1; }
  grep -q "the kubelet keeps exiting" "$T/join.err" && grep -q "no-such-kubelet-flag" "$T/join.err" ||
    { fail "the kubelet's own error is not named: $(tail -2 "$T/join.err")"; rc=1; }
  lab_exec "$n" kjoin reset -o json >"$T/reset.json" 2>"$T/reset.err" && jq -e '.joined and .kubeletStopped' "$T/reset.json" >/dev/null ||
    { fail "reset: $(cat "$T/reset.json" "$T/reset.err")"; rc=1; }
  lab_stop "$n"
  kc delete node "$n" >/dev/null 2>&1
  return $rc
}

# Cluster API's kubeadm bootstrap provider's worker user data, as docs/join.md
# shows it (CABPK's own rendering, kjoin in place of kubeadm): cloud-init
# renders its jinja node name, kjoin reads the JoinConfiguration CABPK
# writes, and the sentinel file CAPI waits for is there.
t_lab_cluster_api_bootstrap_data_joins() {
  local user_data n=lab-capi rc=0
  user_data=$(lab_doc_user_data "bootstrap-success.complete") || { fail "no Cluster API user data in docs/join.md"; return 1; }
  grep -q "apiServerEndpoint: $E2E_ENDPOINT" <<<"$user_data" || { fail "the endpoint was not the lab's: $user_data"; return 1; }
  lab_seed "$T/seed" "$n" "$user_data"
  lab_boot "$n" "$LAB_NET.61" "$T/seed"
  lab_wait_booted "$n" 90 || { fail "the node did not boot: $(tail -5 "$LAB_DIR/$n/console.log")"; rc=1; }
  lab_registered "$n" 180 ||
    { fail "the Node never registered: $(lab_exec "$n" tail -n 12 /var/log/cloud-init-output.log 2>&1)"; rc=1; }
  lab_joined "$n" || rc=1
  e2e_wait 30 lab_exec "$n" grep -qx success /run/cluster-api/bootstrap-success.complete ||
    { fail "no sentinel file: $(lab_exec "$n" tail -n 5 /var/log/cloud-init-output.log 2>&1)"; rc=1; }
  lab_stop "$n"
  kc delete node "$n" >/dev/null 2>&1
  return $rc
}

# docs/join.md's cloud-config for a stock Debian image, its four names pointing
# at the lab's repositories (tests/lab/mirror.sh): a node booted from the stock
# image (nothing of Kubernetes or kjoin on it) installs containerd from
# Debian's archive, the kubelet and kjoin from the repositories, and joins.
# Beside it a node whose kjoin key is not the one that signed kjoin's
# repository: apt refuses the repository, the script stops there, nothing joins.
lab_stock_user_data() { # KJOIN_KEY_URL
  sed -e "s|KUBERNETES_APT_REPO|$LAB_MIRROR/kubernetes/|; s|KUBERNETES_APT_KEY|$LAB_MIRROR/key.asc|" \
    -e "s|KJOIN_APT_REPO|$LAB_MIRROR/kjoin/|; s|KJOIN_APT_KEY|$1|" <<<"$stock_block"
}
t_lab_stock_debian_cloud_config_joins() {
  local stock_block good bad n=lab-stock m=lab-stock-unsigned rc=0 t0 f
  stock_block=$(lab_doc_user_data "KJOIN_APT_REPO" as-is) || { fail "no stock-image cloud-config in docs/join.md"; return 1; }
  for f in usr/bin/kubelet usr/bin/containerd usr/bin/kjoin; do
    [ ! -e "$LAB_STOCK_IMAGE/$f" ] || { fail "the stock image has /$f"; return 1; }
  done
  lab_mirror_up "$ROOT/mirror" || { fail "the lab's repositories did not start"; return 1; }
  mkdir -m 0700 "$ROOT/mirror/other-gpg" &&
    GNUPGHOME=$ROOT/mirror/other-gpg gpg --batch --quiet --passphrase '' --quick-gen-key "not kjoin's" ed25519 sign never 2>/dev/null &&
    GNUPGHOME=$ROOT/mirror/other-gpg gpg --batch --armor --export >"$ROOT/mirror/www/other-key.asc"
  gpgconf --homedir "$ROOT/mirror/other-gpg" --kill gpg-agent 2>/dev/null
  good=$(lab_stock_user_data "$LAB_MIRROR/key.asc")
  bad=$(lab_stock_user_data "$LAB_MIRROR/other-key.asc")
  grep -q "$E2E_ENDPOINT" <<<"$good" && ! grep -q "_APT_" <<<"$good" && grep -q other-key <<<"$bad" ||
    { fail "the docs' stock-image cloud-config did not take this lab's names: $good"; lab_mirror_down; return 1; }
  lab_seed "$T/seed-stock" "$n" "$good"
  lab_seed "$T/seed-unsigned" "$m" "$bad"
  t0=$(date +%s)
  LAB_STOCK=1 LAB_HOSTS=$LAB_MIRROR_HOSTS lab_boot "$n" "$LAB_NET.15" "$T/seed-stock"
  LAB_STOCK=1 LAB_HOSTS=$LAB_MIRROR_HOSTS lab_boot "$m" "$LAB_NET.16" "$T/seed-unsigned"
  lab_wait_booted "$n" 90 && lab_wait_booted "$m" 90 ||
    { fail "the stock nodes did not boot: $(tail -5 "$LAB_DIR/$n/console.log" "$LAB_DIR/$m/console.log")"; rc=1; }
  if lab_registered "$n" 300; then
    echo "    [$current] stock Debian node $n registered $(($(date +%s) - t0)) s after boot" >&2
  else
    fail "the stock node never registered: $(lab_exec "$n" tail -n 15 /var/log/cloud-init-output.log 2>&1)"; rc=1
  fi
  lab_joined "$n" || rc=1
  local installed
  installed=$(lab_exec "$n" dpkg-query -W -f '${Package} ${Status}\n' kubelet kjoin containerd 2>&1)
  [ "$(grep -cE " (install|hold) ok installed$" <<<"$installed")" = 3 ] ||
    { fail "$n: kubelet, kjoin and containerd are not all installed: $installed"; rc=1; }
  [ "$(lab_exec "$n" apt-mark showhold)" = kubelet ] || { fail "$n: the kubelet is not held"; rc=1; }
  # The unsigned one: cloud-init's script ended at apt's refusal, before any install.
  lab_wait_settled "$m" 120 || { fail "$m: systemd still has jobs"; rc=1; }
  grep -q "kjoin.*is not signed" <<<"$(lab_exec "$m" cat /var/log/cloud-init-output.log 2>&1)" ||
    { fail "$m: apt did not refuse the repository: $(lab_exec "$m" tail -n 8 /var/log/cloud-init-output.log 2>&1)"; rc=1; }
  lab_exec "$m" test ! -e /usr/bin/kjoin -a ! -e /usr/bin/kubelet || { fail "$m: installed from a repository it could not verify"; rc=1; }
  ! kc get node "$m" >/dev/null 2>&1 || { fail "$m: a Node registered"; rc=1; }
  lab_stop "$n"
  lab_stop "$m"
  kc delete node "$n" >/dev/null 2>&1
  lab_mirror_down
  return $rc
}
