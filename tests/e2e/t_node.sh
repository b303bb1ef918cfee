# The whole worker join against the real control plane, with a real node:
# Debian's containerd and runc on a socket of the run's own, the release's
# own kubelet, and kjoin join with kubeadm's default phases, then kjoin
# reset. Every node lives in a mount namespace of its own (in_node): its
# /etc/kubernetes and /var/lib/kubelet are a copy-on-write view, so the
# machine's own are never touched. No systemd runs here, so kjoin prints the
# kubelet's command and waits; the test starts the kubelet with exactly that
# command. The Node stays NotReady: no network plugin runs (none is needed
# for a Node to register). Sourced by run.sh.


NODE_CRI=
# node_setup: once a run: containerd on its own socket (stopped with the
# control plane) and the kubelet-config ConfigMap (e2e_kubelet_configmap).
node_setup() {
  [ -n "$NODE_CRI" ] && return 0
  local d=$ROOT/ctr
  mkdir -p "$d/cni/bin" "$d/cni/conf"
  cat >"$d/config.toml" <<TOML
version = 2
root = "$d/root"
state = "$d/state"
[grpc]
  address = "$d/containerd.sock"
[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "$d/cni/bin"
  conf_dir = "$d/cni/conf"
TOML
  e2e_start containerd containerd --config "$d/config.toml"
  e2e_wait 30 test -S "$d/containerd.sock" || { fail "containerd did not start: $(tail -3 "$E2E_DIR/containerd.log")"; return 1; }
  NODE_CRI=unix://$d/containerd.sock
  e2e_kubelet_configmap || return 1
  NODE_CM=$(kc -n kube-system get configmap -o name | grep -o 'kubelet-config[-0-9.]*$') || return 1
}

# This machine keeps IPv4 forwarding off, and a test must not turn it on.
NODE_IGNORE=FileContent--proc-sys-net-ipv4-ip_forward

# in_node FN [PATH]: runs the function FN of this suite as root in private
# mount and UTS namespaces (a scenario may give its node a host name of its
# own), where /etc and /var/lib are copy-on-write views of the
# machine's (overlays with their upper layers in $T/ns, or $T/$NODE_NS): whatever the node
# writes there goes with $T, and the machine's /etc/kubernetes and
# /var/lib/kubelet are never touched. The suite's functions and variables
# go along; PATH has the release's binaries first, so "kubelet" is the
# release's (NODE_BIN, a directory, before them: another release's kubelet).
# (Not a chroot: runc, for the Job's pod, refuses to run in one.)
in_node() {
  local fn=$1 path=${2:-${NODE_BIN:+$NODE_BIN:}$KBIN:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin} n=$T/${NODE_NS:-ns}
  mkdir -p "$n/etc.upper" "$n/etc.work" "$n/lib.upper" "$n/lib.work"
  # A script file: the suite's functions are more than one argument may hold.
  local script=$n/node.sh
  cat >"$script" <<SCRIPT
mount -t overlay overlay -o lowerdir=/etc,upperdir=$n/etc.upper,workdir=$n/etc.work /etc &&
  mount -t overlay overlay -o lowerdir=/var/lib,upperdir=$n/lib.upper,workdir=$n/lib.work /var/lib || exit 1
$(declare -p KJOIN T ROOT REPO_DIR TOOLS KBIN KUBECTL KUBECACHEDIR E2E_ENDPOINT E2E_SERVER E2E_PIN E2E_CA E2E_ADMIN E2E_DIR \
  E2E_MINOR E2E_VERSION NODE_CRI NODE_CM NODE_IGNORE NODE_TOOL NODE_PATCHES NODE_KUBEADM NODE_CONFIG NODE_KJOIN_START SECRETS current EARLY_TOKEN 2>/dev/null)
$(declare -f)
NODE_BEFORE=\$(node_dirs)
$fn
SCRIPT
  unshare --mount --uts --propagation private env -i PATH="$path" HOME=/root LANG=C.UTF-8 TMPDIR="${TMPDIR:-/tmp}" bash "$script"
}

# on_node SCENARIO NODE: a test: SCENARIO in_node, then the Node NODE it
# registered (if any) deleted as an admin would.
on_node() {
  node_setup || return 1
  in_node "$1"
  local rc=$?
  kc delete node "$2" >/dev/null 2>&1
  return $rc
}

# kubelet_command PID: the command kjoin join (PID, its stderr $T/join.err)
# says to start the kubelet with, once it says it; nothing if it ends first.
# Asked as long as it runs: its own deadline bounds the wait (a fixed bound
# here started no kubelet once discovery waited out a slow API server).
kubelet_command() {
  local cmd=
  while :; do
    cmd=$(sed -n 's/.*start the kubelet with: //p' "$T/join.err")
    [ -n "$cmd" ] || ! e2e_alive "$1" && break
    sleep 0.1
  done
  printf '%s' "$cmd"
}

# node_join ARGS...: kjoin join ARGS in the background (as provisioning runs
# it); when it says how to start the kubelet, starts the kubelet so
# (KUBELET_PID, its log $T/kubelet.log); then waits for kjoin. JOIN_RC, and
# its output in $T/join.out and $T/join.err, checked for secrets.
node_join() {
  # Emptied first: the loop below must not read an earlier join's line
  # before this one's shell has truncated the file (a kubelet started early).
  : >"$T/join.out"; : >"$T/join.err"
  "$KJOIN" join "$@" >"$T/join.out" 2>"$T/join.err" &
  local pid=$! cmd
  cmd=$(kubelet_command "$pid")
  if [ -n "$cmd" ]; then
    eval "exec $cmd" >"$T/kubelet.log" 2>&1 &
    KUBELET_PID=$!
    # A kubelet that exits at once would leave kjoin waiting to its deadline
    # (unless KUBELET_MAY_EXIT: a kubelet whose CSR is denied exits, and kjoin ends on the denial).
    while e2e_alive "$pid" && e2e_alive "$KUBELET_PID"; do sleep 0.2; done
    [ -z "${KUBELET_MAY_EXIT:-}" ] && e2e_alive "$pid" && ! e2e_alive "$KUBELET_PID" && sleep 1 && e2e_alive "$pid" &&
      { fail "the kubelet exited: $(grep -m2 '"command failed"\|^[EF][0-9]' "$T/kubelet.log" | cut -c1-400)"; cp "$T/kubelet.log" "$ROOT/kubelet-exited.log" 2>/dev/null; kill "$pid"; }
  fi
  wait "$pid"; JOIN_RC=$?
  local s
  for s in "${SECRETS[@]}"; do
    ! grep -qF -- "$s" "$T/join.out" "$T/join.err" || { fail "a token secret was printed"; return 1; }
  done
  return 0
}
# join_as NAME [ARGS...]: node_join with the cluster's token and pin as node
# NAME on the run's containerd, forwarding's check ignored; ARGS go after.
join_as() {
  local name=$1; shift
  node_join "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
    --node-name "$name" --cri-socket "$NODE_CRI" --ignore-preflight-errors "$NODE_IGNORE" --discovery-timeout 30s "$@"
}
kubelet_down() { [ -n "${KUBELET_PID:-}" ] && kill "$KUBELET_PID" 2>/dev/null && wait "$KUBELET_PID" 2>/dev/null; KUBELET_PID=; return 0; }
join_err() { grep -qF -- "$1" "$T/join.err" || fail "kjoin join's stderr lacks \"$1\": $(tail -3 "$T/join.err")"; }
# The node's directories, whole (files, directories, symlinks, contents and
# modes: tree_state), to compare before and after.
node_dirs() { tree_state /etc/kubernetes /var/lib/kubelet /var/lib/etcd; }
# Nothing written: the directories as in_node found them (the machine's
# own, seen through the overlays, may hold something already).
nothing_written() { [ "$(node_dirs)" = "$NODE_BEFORE" ] || fail "written: $(diff <(echo "$NODE_BEFORE") <(node_dirs) | grep '^[<>]' | head -n 8 | tr '\n' ' ')"; }
# kubeadm's own join line, as `kubeadm token create --print-join-command` prints it, with kjoin for kubeadm.
kubeadm_line() { "$KBIN/kubeadm" token create --print-join-command --ttl 10m --kubeconfig "$E2E_ADMIN" 2>/dev/null | sed 's/^kubeadm /kjoin /'; }

node_scenario_full() {
  local before=$NODE_BEFORE line
  line=$(kubeadm_line) || return 1
  set -- ${line#kjoin join }
  SECRETS+=("$(echo "$line" | sed -n 's/.*--token [a-z0-9]*\.\([a-z0-9]*\).*/\1/p')")
  node_join "$@" --node-name e2e-worker --cri-socket "$NODE_CRI" --ignore-preflight-errors "$NODE_IGNORE" \
    --discovery-timeout 120s -o json || return 1
  [ "$JOIN_RC" = 0 ] || { fail "join exit $JOIN_RC: $(tail -5 "$T/join.err"); kubelet: $(tail -3 "$T/kubelet.log")"; kubelet_down; return 1; }
  local out=$T/join.out rc=0
  jq -e --arg cm "$NODE_CM" --arg v "$E2E_VERSION" '.node.nodeRegistered and .node.bootstrapKubeconfigRemoved
      and .node.kubeletConfigMap == $cm and .node.kubernetesVersion == $v
      and ([.node.phases[].name] == ["preflight","kubelet-start","kubelet-wait-bootstrap"])
      and ([.node.files[] | "\(.path) \(.mode)"] | index("/var/lib/kubelet/config.yaml 0644") != null)
      and ([.node.files[] | "\(.path) \(.mode)"] | index("/etc/kubernetes/bootstrap-kubelet.conf 0600") != null)' \
    "$out" >/dev/null || { fail "json: $(cat "$out")"; rc=1; }
  # Milestones an operator can follow, and kubeadm's closing words with what comes next.
  join_err "[kubelet-wait-bootstrap] The kubelet is healthy after" &&
    join_err "[join] This node has joined the cluster as e2e-worker. It is NotReady until the cluster's network plugin runs" ||
    rc=1
  [ ! -e /etc/kubernetes/bootstrap-kubelet.conf ] || { fail "the bootstrap token stayed on disk"; rc=1; }
  [ "$(stat -c %a /var/lib/kubelet/kubeadm-flags.env)" = 644 ] && [ "$(stat -c %a /etc/kubernetes/pki/ca.crt)" = 644 ] ||
    { fail "modes"; rc=1; }
  # The runtime where this release's kubeadm puts it: instance-config.yaml
  # (merged into config.yaml) from 1.34, else the flags file and the Node's
  # cri-socket annotation.
  if [ "$E2E_MINOR" -ge 34 ]; then
    [ "$(cat /var/lib/kubelet/instance-config.yaml)" = "containerRuntimeEndpoint: \"$NODE_CRI\"" ] &&
      [ "$(stat -c %a /var/lib/kubelet/instance-config.yaml)" = 644 ] &&
      grep -q "^containerRuntimeEndpoint: \"*$NODE_CRI\"*$" /var/lib/kubelet/config.yaml &&
      ! grep -q -- "--container-runtime-endpoint" /var/lib/kubelet/kubeadm-flags.env ||
      { fail "the runtime is not where kubeadm 1.$E2E_MINOR puts it"; rc=1; }
  else
    grep -q -- "--container-runtime-endpoint=$NODE_CRI" /var/lib/kubelet/kubeadm-flags.env && [ ! -e /var/lib/kubelet/instance-config.yaml ] ||
      { fail "no runtime flag, or an instance configuration kubeadm 1.$E2E_MINOR does not write"; rc=1; }
    [ "$(kc get node e2e-worker -o jsonpath='{.metadata.annotations.kubeadm\.alpha\.kubernetes\.io/cri-socket}')" = "$NODE_CRI" ] ||
      { fail "the Node lacks kubeadm's cri-socket annotation"; rc=1; }
  fi
  # The client certificate chains to the cluster CA and is this node's.
  openssl verify -CAfile "$E2E_CA" /var/lib/kubelet/pki/kubelet-client-current.pem >/dev/null 2>&1 ||
    { fail "the kubelet's certificate does not chain to the cluster CA"; rc=1; }
  openssl x509 -in /var/lib/kubelet/pki/kubelet-client-current.pem -noout -subject | grep -q "CN = system:node:e2e-worker" ||
    { fail "the kubelet's certificate is not e2e-worker's"; rc=1; }
  # The Node: its name, the runtime, the ConfigMap's maxPods, NotReady (no network plugin here).
  local node=$T/node.json
  kubectl --kubeconfig "$E2E_ADMIN" get node e2e-worker -o json >"$node" 2>/dev/null || { fail "no Node e2e-worker"; rc=1; }
  jq -e '(.status.nodeInfo.containerRuntimeVersion | startswith("containerd://")) and .status.capacity.pods == "42"' \
    "$node" >/dev/null || { fail "node: $(jq -c '.status.nodeInfo, .status.capacity' "$node")"; rc=1; }
  # A second join of this node is refused before anything changes, as
  # kubeadm's is: the node has its kubelet.conf. (The Ready rule, which this
  # NotReady node cannot show, has a test of its own below.)
  "$KJOIN" join "$@" --node-name e2e-worker --cri-socket "$NODE_CRI" --ignore-preflight-errors "$NODE_IGNORE" \
    >"$T/again.out" 2>"$T/again.err" && { fail "a second join went through"; rc=1; }
  grep -q "ERROR FileAvailable--etc-kubernetes-kubelet.conf" "$T/again.err" || { fail "second join: $(tail -2 "$T/again.err")"; rc=1; }
  # Without systemd, reset refuses while the kubelet still runs.
  "$KJOIN" reset >"$T/reset.out" 2>&1 && { fail "reset ran under a running kubelet"; rc=1; }
  grep -q "the kubelet still runs" "$T/reset.out" || { fail "reset: $(cat "$T/reset.out")"; rc=1; }
  kubelet_down
  # kubeadm's dry run: every path the reset would remove listed, none removed; cleanup-node skipped: none either.
  local files; files=$(node_dirs)
  "$KJOIN" reset --dry-run -o json >"$T/dry.json" 2>"$T/dry.err" || { fail "reset --dry-run: $(cat "$T/dry.err")"; rc=1; }
  jq -e '.dryRun and (.removed | index("/var/lib/kubelet/config.yaml") != null)' "$T/dry.json" >/dev/null &&
    [ "$(node_dirs)" = "$files" ] || { fail "reset --dry-run: $(cat "$T/dry.json"); changed: $(diff <(echo "$files") <(node_dirs) | tr '\n' ' ')"; rc=1; }
  "$KJOIN" reset --skip-phases cleanup-node >/dev/null 2>&1 && [ "$(node_dirs)" = "$files" ] ||
    { fail "reset --skip-phases cleanup-node removed something"; rc=1; }
  "$KJOIN" reset -o json >"$T/reset.json" 2>"$T/reset.err" || { fail "reset: $(cat "$T/reset.err")"; rc=1; }
  jq -e '.joined and .nodeName == "e2e-worker" and .left == [] and (.removed | index("/var/lib/kubelet/config.yaml") != null)
      and (.removed | index("/etc/kubernetes/kjoin-join.json") != null)' "$T/reset.json" >/dev/null ||
    { fail "reset json: $(cat "$T/reset.json")"; rc=1; }
  grep -q "kubectl delete node e2e-worker" "$T/reset.err" || { fail "reset does not say how to delete the Node"; rc=1; }
  [ "$(node_dirs)" = "$before" ] || { fail "reset left: $(diff <(echo "$before") <(node_dirs) | tr '\n' ' ')"; rc=1; }
  "$KJOIN" reset -o json >"$T/reset2.json" 2>/dev/null && jq -e '.joined == false and .removed == []' "$T/reset2.json" >/dev/null ||
    { fail "a second reset was not a no-op"; rc=1; }
  return $rc
}

t_e2e_node_kubeadm_line_registers_a_node_and_reset_undoes_it() { on_node node_scenario_full e2e-worker; }

# node_join_config_head TIMEOUT: a JoinConfiguration of this release's
# kubeadm API for this cluster, up to its nodeRegistration.
node_join_config_head() {
  printf 'apiVersion: kubeadm.k8s.io/%s\nkind: JoinConfiguration\n' "$( [ "$E2E_MINOR" -ge 31 ] && echo v1beta4 || echo v1beta3)"
  printf 'discovery:\n  bootstrapToken:\n    apiServerEndpoint: "%s"\n    token: abcdef.0123456789abcdef\n' "$E2E_ENDPOINT"
  printf '    caCertHashes: ["%s"]\n' "$E2E_PIN"
  if [ "$E2E_MINOR" -ge 31 ]; then printf 'timeouts:\n  discovery: %s\n' "$1"; else printf '  timeout: %s\n' "$1"; fi
}

# A JoinConfiguration's nodeRegistration: taints, kubeletExtraArgs and the
# runtime reach the kubelet; and with --tls-bootstrap kjoin gets the identity
# itself, so the kubelet starts with it and asks for no certificate.
node_scenario_config() {
  cat >"$T/join.yaml" <<CFG
$(node_join_config_head 90s)
nodeRegistration:
  name: e2e-tainted
  criSocket: "$NODE_CRI"
  ignorePreflightErrors: [$NODE_IGNORE]
  taints: [{key: dedicated, value: e2e, effect: NoSchedule}]
  kubeletExtraArgs:
$( [ "$E2E_MINOR" -ge 31 ] && printf '  - {name: node-labels, value: kjoin.test/role=e2e}\n' || printf '    node-labels: kjoin.test/role=e2e\n')
CFG
  local csrs rc=0
  csrs=$(kubectl --kubeconfig "$E2E_ADMIN" get csr -o name | sort)
  node_join --config "$T/join.yaml" --tls-bootstrap -o json || return 1
  [ "$JOIN_RC" = 0 ] || { fail "join exit $JOIN_RC: $(tail -5 "$T/join.err")"; kubelet_down; return 1; }
  grep -q -- '--register-with-taints=dedicated=e2e:NoSchedule' /var/lib/kubelet/kubeadm-flags.env &&
    grep -q -- '--node-labels=kjoin.test/role=e2e' /var/lib/kubelet/kubeadm-flags.env || { fail "flags: $(cat /var/lib/kubelet/kubeadm-flags.env)"; rc=1; }
  kubectl --kubeconfig "$E2E_ADMIN" get node e2e-tainted -o json >"$T/node.json" || rc=1
  jq -e '(.spec.taints | map(.key + "=" + .value + ":" + .effect) | index("dedicated=e2e:NoSchedule") != null)
      and .metadata.labels["kjoin.test/role"] == "e2e"' "$T/node.json" >/dev/null ||
    { fail "node: $(jq -c '.spec.taints, .metadata.labels' "$T/node.json")"; rc=1; }
  jq -e '.tlsBootstrap.changed' "$T/join.out" >/dev/null || { fail "no TLS bootstrap of kjoin's: $(cat "$T/join.out")"; rc=1; }
  # One new CSR: kjoin's; the kubelet found its kubeconfig valid and asked for none.
  local added; added=$(comm -13 <(echo "$csrs") <(kubectl --kubeconfig "$E2E_ADMIN" get csr -o name | sort) | wc -l)
  [ "$added" = 1 ] || { fail "$added CSRs were made, want kjoin's one"; rc=1; }
  kubelet_down
  "$KJOIN" reset >/dev/null 2>&1 || { fail "reset failed"; rc=1; }
  nothing_written || rc=1
  return $rc
}

t_e2e_node_join_configuration_and_tls_bootstrap() { on_node node_scenario_config e2e-tainted; }

# The node's name when none is given: the host name, lower-cased, as kubeadm
# and the kubelet take it, decided once for the whole join and kjoin's TLS
# bootstrap; a host name that is no node name is refused before the cluster
# is asked anything.
node_scenario_host_name() {
  local csrs rc=0 args=("$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN"
    --cri-socket "$NODE_CRI" --ignore-preflight-errors "$NODE_IGNORE" --discovery-timeout 60s --tls-bootstrap -o json)
  csrs=$(kc get csr -o name | sort)
  printf %s Node_1 >/proc/sys/kernel/hostname
  node_join "${args[@]}" || return 1
  [ "$JOIN_RC" = 2 ] || { fail "host Node_1: exit $JOIN_RC, want 2: $(tail -3 "$T/join.err")"; kubelet_down; return 1; }
  join_err 'the host name "node_1" is not a valid node name' || return 1
  nothing_written || return 1
  [ "$(kc get csr -o name | sort)" = "$csrs" ] || { fail "a CSR was made for a refused name"; return 1; }
  printf %s E2E-Host.Example >/proc/sys/kernel/hostname
  node_join "${args[@]}" || return 1
  [ "$JOIN_RC" = 0 ] || { fail "join exit $JOIN_RC: $(tail -5 "$T/join.err")"; kubelet_down; return 1; }
  jq -e '.nodeName == "e2e-host.example" and .tlsBootstrap.nodeName == "e2e-host.example"' "$T/join.out" >/dev/null ||
    { fail "json: $(jq -c '.nodeName, .tlsBootstrap' "$T/join.out")"; rc=1; }
  kc get node e2e-host.example >/dev/null 2>&1 || { fail "no Node e2e-host.example: $(kc get nodes -o name | tr '\n' ' ')"; rc=1; }
  ! grep -q -- --hostname-override /var/lib/kubelet/kubeadm-flags.env || { fail "the host's own name was overridden"; rc=1; }
  openssl x509 -in /var/lib/kubelet/pki/kubelet-client-current.pem -noout -subject | grep -q "CN = system:node:e2e-host.example" ||
    { fail "the client certificate is not e2e-host.example's"; rc=1; }
  kubelet_down
  "$KJOIN" reset >/dev/null 2>&1 || { fail "reset failed"; rc=1; }
  nothing_written || rc=1
  return $rc
}
t_e2e_node_host_name_is_the_node_name_once() { on_node node_scenario_host_name e2e-host.example; }

# A per-node load balancer (kubespray's localhost proxy; here a TCP pass-
# through to the API server): --kubelet-server makes the kubelet's
# kubeconfigs name it, the kubelet bootstraps and registers through it, and
# tls-bootstrap --rotate and refresh keep it. A URL that is no server's, a
# control-plane join, a server that does not answer and one whose
# certificate does not name it are refused before anything is written.
node_scenario_kubelet_server() {
  local rc=0 port closed lb csrs args=("$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash
    "$E2E_PIN" --node-name e2e-lb --cri-socket "$NODE_CRI" --ignore-preflight-errors "$NODE_IGNORE" --discovery-timeout 60s)
  port=$("$TOOLS/freeport"); closed=$("$TOOLS/freeport")
  python3 "$REPO_DIR/tests/tools/tcp_forward.py" 127.0.0.1 "$port" "$E2E_ENDPOINT" "$T/lb.count" >"$T/lb.out" 2>&1 & lb=$!
  python3 "$REPO_DIR/tests/tools/tcp_forward.py" 127.0.0.2 "$port" "$E2E_ENDPOINT" "$T/lb2.count" >"$T/lb2.out" 2>&1 &
  local lb2=$!
  e2e_wait 10 grep -q ready "$T/lb.out" && e2e_wait 10 grep -q ready "$T/lb2.out" || { fail "the load balancers did not start"; kill $lb $lb2; return 1; }
  csrs=$(kc get csr -o name | grep -v kjoin-report | sort) # (a refusal after discovery files a join report)
  local bad
  for bad in "http://127.0.0.1:$port|2|is no https:// URL" "https://127.0.0.1:$port/api|2|has a path, query or fragment" \
    "https://127.0.0.1:$closed|3|does not answer as the cluster's API server" \
    "https://127.0.0.2:$port|4|apiServer.certSANs"; do
    IFS='|' read -r url want says <<<"$bad"
    "$KJOIN" join "${args[@]}" --kubelet-server "$url" >"$T/join.out" 2>"$T/join.err"; JOIN_RC=$?
    [ "$JOIN_RC" = "$want" ] || { fail "$url: exit $JOIN_RC, want $want: $(tail -2 "$T/join.err")"; rc=1; }
    join_err "$says" || rc=1
    [ "$want" != 2 ] || join_err "--kubelet-server" || rc=1 # the flag named, not the library's field
    nothing_written || rc=1
  done
  "$KJOIN" join "${args[@]}" --control-plane --kubelet-server "https://127.0.0.1:$port" >"$T/join.out" 2>"$T/join.err"
  [ $? = 2 ] && join_err "--kubelet-server is a worker's" || rc=1
  "$KJOIN" join "${args[@]}" --check --kubelet-server "https://127.0.0.1:$closed" >"$T/join.out" 2>"$T/join.err"
  [ $? = 3 ] && join_err "does not answer as the cluster's API server" || rc=1
  nothing_written || rc=1
  [ "$(kc get csr -o name | grep -v kjoin-report | sort)" = "$csrs" ] || { fail "a refused join made a kubelet's CSR"; rc=1; }
  [ -s "$T/lb2.count" ] || { fail "the join never reached 127.0.0.2's load balancer: its refusal was not the certificate's"; rc=1; }
  : >"$T/lb.count"
  "$KJOIN" join "${args[@]}" --check --kubelet-server "https://127.0.0.1:$port" >"$T/join.out" 2>"$T/join.err" ||
    { fail "check: $(tail -2 "$T/join.err")"; rc=1; }
  node_join "${args[@]}" --kubelet-server "https://127.0.0.1:$port/" -o json || { kill $lb $lb2; return 1; }
  [ "$JOIN_RC" = 0 ] || { fail "join exit $JOIN_RC: $(tail -5 "$T/join.err")"; kubelet_down; kill $lb $lb2; return 1; }
  join_err "The kubelet talks to the cluster through https://127.0.0.1:$port (it answered as the API server)" || rc=1
  local server; server=$("$KUBECTL" --kubeconfig /etc/kubernetes/kubelet.conf config view -o jsonpath='{.clusters[0].cluster.server}')
  [ "$server" = "https://127.0.0.1:$port" ] || { fail "kubelet.conf names $server"; rc=1; }
  kc get node e2e-lb >/dev/null 2>&1 || { fail "no Node e2e-lb"; rc=1; }
  local seen; seen=$(wc -l <"$T/lb.count")
  [ "$seen" -ge 3 ] || { fail "$seen connection(s) through the load balancer: the kubelet went around it"; rc=1; }
  "$KJOIN" tls-bootstrap --rotate --renew-before 99% --timeout 60s >"$T/rotate.out" 2>&1
  [ $? = 10 ] || { fail "rotate: $(tail -2 "$T/rotate.out")"; rc=1; }
  "$KJOIN" refresh --timeout 30s >"$T/refresh.out" 2>&1 || { fail "refresh: $(tail -2 "$T/refresh.out")"; rc=1; }
  server=$("$KUBECTL" --kubeconfig /etc/kubernetes/kubelet.conf config view -o jsonpath='{.clusters[0].cluster.server}')
  [ "$server" = "https://127.0.0.1:$port" ] || { fail "after rotate and refresh kubelet.conf names $server"; rc=1; }
  [ "$(wc -l <"$T/lb.count")" -gt "$seen" ] || { fail "rotate and refresh went around the load balancer"; rc=1; }
  kubelet_down
  kill $lb $lb2; wait $lb $lb2 2>/dev/null
  "$KJOIN" reset >/dev/null 2>&1 || { fail "reset failed"; rc=1; }
  nothing_written || rc=1
  return $rc
}
t_e2e_node_kubelet_server_is_a_per_node_load_balancer() { on_node node_scenario_kubelet_server e2e-lb; }

# A dual-stack cluster (kubeadm-config's serviceSubnet holds both families):
# the kubelet's node-ip names the addresses of the default routes' interface
# (the suite's namespace has 192.0.2.2 and fd00::2 on kjoin0), the cluster's
# primary family first, and the Node's InternalIPs are both; --node-ip wins
# and is checked before anything is written; kubelet 1.20 (its dual-stack
# gate off by default) is left to itself; a single-stack cluster is as ever.
node_scenario_dual_stack() {
  local rc=0 flags=/var/lib/kubelet/kubeadm-flags.env
  join_as e2e-dual --node-ip 192.0.2.2,192.0.2.3 || return 1
  [ "$JOIN_RC" = 2 ] && join_err '--node-ip "192.0.2.2,192.0.2.3" names two addresses of one family' || rc=1
  nothing_written || rc=1
  join_as e2e-dual --node-ip fd00::2 --dry-run -o json || return 1
  jq -e '.wouldWrite[] | select(.path == "/var/lib/kubelet/kubeadm-flags.env") | .content | contains("--node-ip=fd00::2\"")' \
    "$T/join.out" >/dev/null || { fail "--node-ip is not the flags file's: $(jq -c .wouldWrite "$T/join.out" | head -c 300)"; rc=1; }
  join_as e2e-dual -o json || return 1
  [ "$JOIN_RC" = 0 ] || { fail "join exit $JOIN_RC: $(tail -3 "$T/join.err")"; kubelet_down; return 1; }
  if [ "$E2E_MINOR" -ge 21 ]; then
    grep -q -- '--node-ip=192.0.2.2,fd00::2"' "$flags" || { fail "flags: $(cat "$flags")"; rc=1; }
    join_err "A dual-stack cluster: the kubelet's node-ip is 192.0.2.2,fd00::2 (the addresses of kjoin0 and kjoin0" || rc=1
    jq -e '.node.nodeIP == "192.0.2.2,fd00::2" and .node.nodeIPFound' "$T/join.out" >/dev/null ||
      { fail "json: $(jq -c '.node | {nodeIP, nodeIPFound}' "$T/join.out")"; rc=1; }
    e2e_wait 30 internal_ips_are e2e-dual "192.0.2.2 fd00::2" ||
      { fail "the Node's InternalIPs: $(kc get node e2e-dual -o jsonpath='{.status.addresses}')"; rc=1; }
  else
    ! grep -q -- '--node-ip' "$flags" || { fail "kubelet 1.20 got a node-ip: $(cat "$flags")"; rc=1; }
    join_err "the kubelet 1.20 takes both addresses only with its IPv6DualStack feature gate" || rc=1
  fi
  kubelet_down
  "$KJOIN" reset >/dev/null 2>&1 || { fail "reset failed"; rc=1; }
  nothing_written || rc=1
  return $rc
}
internal_ips_are() { # NODE "IP..."
  [ "$(kc get node "$1" -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')" = "$2" ]
}
node_scenario_single_stack() {
  join_as e2e-dual --dry-run -o json || return 1
  jq -e '.node.nodeIP == null and (.wouldWrite[] | select(.path == "/var/lib/kubelet/kubeadm-flags.env") |
      .content | contains("--node-ip") | not)' "$T/join.out" >/dev/null ||
    fail "a single-stack cluster's node got a node-ip: $(jq -c '.node.nodeIP' "$T/join.out")"
}
t_e2e_node_dual_stack_cluster_names_both_addresses() {
  node_setup || return 1
  local cc rc=0; cc=$(kc -n kube-system get configmap kubeadm-config -o json) || return 1
  grep -q 'serviceSubnet: 10.96.0.0/12' <<<"$(jq -r .data.ClusterConfiguration <<<"$cc")" || { fail "no serviceSubnet to widen"; return 1; }
  jq '.data.ClusterConfiguration |= sub("serviceSubnet: 10.96.0.0/12"; "serviceSubnet: 10.96.0.0/12,fd00:10:96::/112")' <<<"$cc" |
    kc replace -f - >/dev/null || return 1
  in_node node_scenario_dual_stack || rc=1
  kc delete node e2e-dual >/dev/null 2>&1
  jq 'del(.metadata.resourceVersion)' <<<"$cc" | kc replace -f - >/dev/null || { fail "kubeadm-config could not be restored"; return 1; }
  in_node node_scenario_single_stack || rc=1
  return $rc
}

# Offline images: the join names the images the node lacks (the runtime's
# sandbox image, as it says; kube-proxy's, as kubeadm's addon names it),
# and --images imports an archive into containerd's k8s.io namespace before
# the kubelet starts; an archive that is no absolute path to a readable
# file is refused before anything is written.
node_scenario_images() {
  local rc=0 sock=${NODE_CRI#unix://} sandbox
  join_as e2e-img --dry-run -o json || return 1
  sandbox=$(jq -r '.node.images.sandbox // empty' "$T/join.out")
  # (the cluster's imageRepository: 1.20's kubeadm stored k8s.gcr.io)
  [ -n "$sandbox" ] && jq -e --arg s "$sandbox" --arg p "/kube-proxy:$E2E_VERSION" \
    '(.node.images.kubeProxy | endswith($p)) and (.node.images.missing | contains($s)) and (.node.images.missing | contains($p))' \
    "$T/join.out" >/dev/null || { fail "dry run's images: $(jq -c .node.images "$T/join.out")"; rc=1; }
  join_as e2e-img --check -o json || return 1
  jq -e --arg s "$sandbox" '.check.images.sandbox == $s and (.check.images.missing | contains($s))' "$T/join.out" >/dev/null ||
    { fail "--check's images: exit $JOIN_RC $(jq -c .check.images "$T/join.out" 2>&1 | head -c 300)"; rc=1; }
  join_as e2e-img --images images.tar || return 1
  [ "$JOIN_RC" = 2 ] && join_err '--images "images.tar" must be an absolute path' || rc=1
  join_as e2e-img --images "$T/none.tar" || return 1
  [ "$JOIN_RC" = 2 ] && join_err "is not a readable image archive" || rc=1
  nothing_written || rc=1
  pause_rootfs "$T/pause" && oci_archive "$sandbox" "$T/pause" "$T/images.tar" /pause || { fail "no archive"; return 1; }
  join_as e2e-img --images "$T/images.tar" -o json || return 1
  [ "$JOIN_RC" = 0 ] || { fail "join exit $JOIN_RC: $(tail -3 "$T/join.err")"; kubelet_down; return 1; }
  jq -e --arg s "$sandbox" '.node.images.imported == 1 and (.node.images.missing | contains($s) | not)' "$T/join.out" \
    >/dev/null || { fail "json: $(jq -c .node.images "$T/join.out")"; rc=1; }
  ctr --address "$sock" --namespace k8s.io images ls -q | grep -qxF "$sandbox" || { fail "$sandbox was not imported"; rc=1; }
  kubelet_down
  "$KJOIN" reset >/dev/null 2>&1 || { fail "reset failed"; rc=1; }
  ctr --address "$sock" --namespace k8s.io images rm "$sandbox" >/dev/null 2>&1
  nothing_written || rc=1
  return $rc
}
t_e2e_node_offline_images_named_and_imported() { on_node node_scenario_images e2e-img; }

# kjoin images list (the admin's): the sandbox image kubeadm's release
# names for the cluster and each DaemonSet's containers' images, each once;
# credentials that may not list DaemonSets: exit 6.
t_e2e_images_list_names_what_a_node_pulls() {
  local rc=0 ds
  for ds in "kube-system kube-proxy registry.k8s.io/kube-proxy:$E2E_VERSION" "default cni example.test/cni:1"; do
    set -- $ds
    kc -n "$1" create -f - >/dev/null <<DS || { fail "DaemonSet $1/$2"; return 1; }
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: $2}
spec:
  selector: {matchLabels: {app: $2}}
  template:
    metadata: {labels: {app: $2}}
    spec:
      initContainers: [{name: init, image: "example.test/init:1"}]
      containers: [{name: c, image: "$3"}, {name: again, image: "$3"}]
DS
  done
  "$KJOIN" images list --kubeconfig "$E2E_ADMIN" -o json >"$T/list.json" 2>"$T/list.err" || { fail "list: $(cat "$T/list.err")"; rc=1; }
  jq -e --arg v "$E2E_VERSION" '[.images[].image] as $i | ($i | length) == 4 and ($i[0] | test("/pause:"))
      and ($i | index("registry.k8s.io/kube-proxy:" + $v)) and ($i | index("example.test/cni:1")) and ($i | index("example.test/init:1"))
      and ([.images[] | select(.image == "example.test/cni:1") | .source] == ["DaemonSet default/cni"])' "$T/list.json" >/dev/null ||
    { fail "list: $(cat "$T/list.json")"; rc=1; }
  "$KJOIN" images list --kubeconfig "$E2E_ADMIN" >"$T/list.txt" 2>&1 && grep -q "DaemonSet kube-system/kube-proxy" "$T/list.txt" ||
    { fail "text: $(cat "$T/list.txt")"; rc=1; }
  "$KJOIN" join --skip-phases preflight,kubelet-start "$E2E_ENDPOINT" --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash "$E2E_PIN" --kubeconfig-out "$T/boot.conf" --discovery-timeout 30s >/dev/null 2>&1 ||
    { fail "no bootstrap kubeconfig"; rc=1; }
  "$KJOIN" images list --kubeconfig "$T/boot.conf" >"$T/list.txt" 2>&1
  [ $? = 6 ] || { fail "a bootstrap token's list: $(cat "$T/list.txt")"; rc=1; }
  "$KJOIN" images lsit --kubeconfig "$E2E_ADMIN" >"$T/list.txt" 2>&1
  [ $? = 2 ] && grep -q 'unknown images command "lsit"' "$T/list.txt" || { fail "lsit: $(cat "$T/list.txt")"; rc=1; }
  kc -n kube-system delete daemonset kube-proxy >/dev/null; kc -n default delete daemonset cni >/dev/null
  return $rc
}

# A Node of the same name that is Ready already is refused, as kubeadm does,
# before anything is written.
node_scenario_ready() {
  join_as e2e-ready || return 1
  kubelet_down
  [ "$JOIN_RC" = 2 ] || { fail "exit $JOIN_RC, want 2: $(tail -3 "$T/join.err")"; return 1; }
  join_err 'a Node named e2e-ready is Ready in the cluster already' || return 1
  nothing_written
}
# e2e_ready_node NAME: a Node the API server holds Ready, with no kubelet behind it.
e2e_ready_node() {
  printf 'apiVersion: v1\nkind: Node\nmetadata: {name: %s}\n' "$1" | kc create -f - >/dev/null || return 1
  local now; now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  kc patch node "$1" --subresource=status --type=merge -p "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"lastHeartbeatTime\":\"$now\",\"lastTransitionTime\":\"$now\"}]}}" >/dev/null 2>&1 ||
    kc get node "$1" -o json | jq --arg t "$now" '.status.conditions = [{type: "Ready", status: "True", reason: "KubeletReady", lastHeartbeatTime: $t, lastTransitionTime: $t}]' |
      kc replace --raw "/api/v1/nodes/$1/status" -f - >/dev/null
}

t_e2e_node_refuses_a_ready_node_of_its_name() { e2e_ready_node e2e-ready && on_node node_scenario_ready e2e-ready; }

# kjoin join --check asks this release's API server, and writes nothing
# (machine_unchanged after every test sees /etc/kubernetes and /var/lib/kubelet).
t_e2e_node_check_asks_the_real_cluster() {
  node_setup || return 1
  local args=("$E2E_ENDPOINT" --discovery-token-ca-cert-hash "$E2E_PIN" --discovery-timeout 20s) t t0 ms
  t0=$(date +%s%N)
  kj 0 join --check "${args[@]}" --token abcdef.0123456789abcdef --node-name e2e-check -o json || return 1
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  jq -e '.check == {tokenValid: true, nodeNameFree: true, kubeletConfig: true, csrAutoApproved: true,
                    clockWithinCA: true, problems: ""}' "$OUT" >/dev/null || fail "check: $(cat "$OUT")" || return 1
  [ "$ms" -lt 3000 ] || fail "the check took $ms ms" || return 1
  # A Ready Node of the name.
  e2e_ready_node e2e-check-ready || return 1
  kj 2 join --check "${args[@]}" --token abcdef.0123456789abcdef --node-name e2e-check-ready || return 1
  err_has "a Node named e2e-check-ready is Ready in the cluster already" || return 1
  # A token outside kubeadm's node group: the cluster approves none of its CSRs and keeps the rest from it.
  new_token t
  KJ_STDOUT_SECRET=1 kj 0 token create "$t" --kubeconfig "$E2E_ADMIN" --ttl 10m --groups system:bootstrappers:e2e-check || return 1
  e2e_wait 20 signed "${t%%.*}" || { fail "the bootstrap signer did not sign ${t%%.*}"; return 1; }
  kj 6 join --check "${args[@]}" --token "$t" --node-name e2e-check -o json || return 1
  jq -e '.error.check.tokenValid and (.error.check.csrAutoApproved | not) and (.error.check.kubeletConfig | not)' \
    "$OUT" >/dev/null || fail "check of a token outside the node group: $(cat "$OUT")"
}

# Bad input, each with its check's name and exit code, and nothing written.
node_scenario_refusals() {
  local args=("$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN"
    --node-name e2e-bad --discovery-timeout 30s) rc=0
  # No runtime at the socket named: CRI.
  node_join "${args[@]}" --cri-socket "$T/none.sock" --ignore-preflight-errors "$NODE_IGNORE" || return 1
  [ "$JOIN_RC" = 2 ] && join_err "ERROR CRI:" && nothing_written || { fail "no runtime: exit $JOIN_RC"; rc=1; }
  # Every failing check is listed before the exit, not only the first.
  node_join "${args[@]}" --cri-socket "$T/none.sock" || return 1
  [ "$JOIN_RC" = 2 ] && join_err "2 preflight checks failed: CRI, $NODE_IGNORE" || { fail "all failures: exit $JOIN_RC"; rc=1; }
  # -q prints errors only: the failed checks' ERROR lines the summary points at are among them.
  node_join "${args[@]}" --cri-socket "$T/none.sock" -q || return 1
  [ "$JOIN_RC" = 2 ] && join_err "[preflight] ERROR CRI:" && join_err "each is said above" &&
    ! grep -q '^\[discovery\]' "$T/join.err" || { fail "-q: exit $JOIN_RC: $(cat "$T/join.err")"; rc=1; }
  # No kubelet on PATH.
  PATH=/usr/sbin:/usr/bin:/sbin:/bin node_join "${args[@]}" --cri-socket "$NODE_CRI" --ignore-preflight-errors "$NODE_IGNORE" || return 1
  [ "$JOIN_RC" = 2 ] && join_err "ERROR KubeletVersion: kubelet not found in PATH" && nothing_written ||
    { fail "no kubelet: exit $JOIN_RC"; rc=1; }
  # A kubelet newer than the control plane, and one too old for kjoin.
  mkdir -p "$T/bin"
  printf '#!/bin/sh\necho "Kubernetes v1.%d.0"\n' $((E2E_MINOR + 1)) >"$T/bin/kubelet"; chmod +x "$T/bin/kubelet"
  # (from the kubelet 1.38 a runtime without the CRI's RuntimeConfig, Debian's containerd 1.6, is an error
  # before discovery: ignored here, as an operator would, to reach the version's)
  if [ "$E2E_MINOR" -ge 37 ]; then
    PATH=$T/bin:$PATH node_join "${args[@]}" --cri-socket "$NODE_CRI" --ignore-preflight-errors "$NODE_IGNORE" || return 1
    [ "$JOIN_RC" = 2 ] && join_err "ERROR ContainerRuntimeVersion: the container runtime at" && nothing_written ||
      { fail "kubelet 1.38, containerd 1.6: exit $JOIN_RC"; rc=1; }
  fi
  PATH=$T/bin:$PATH node_join "${args[@]}" --cri-socket "$NODE_CRI" --ignore-preflight-errors "$NODE_IGNORE,ContainerRuntimeVersion" || return 1
  [ "$JOIN_RC" = 2 ] && join_err "ERROR KubeletVersion: the kubelet (v1.$((E2E_MINOR + 1)).0) is newer than the control plane" &&
    nothing_written || { fail "newer kubelet: exit $JOIN_RC"; rc=1; }
  printf '#!/bin/sh\necho "Kubernetes v1.19.16"\n' >"$T/bin/kubelet"
  PATH=$T/bin:$PATH node_join "${args[@]}" --cri-socket "$NODE_CRI" --ignore-preflight-errors "$NODE_IGNORE" || return 1
  [ "$JOIN_RC" = 2 ] && join_err "older than kjoin supports" && nothing_written || { fail "old kubelet: exit $JOIN_RC"; rc=1; }
  # The less-privileged user gets IsPrivilegedUser, and nothing is written.
  setpriv --reuid=nobody --regid=nogroup --clear-groups "$KJOIN" join "${args[@]}" --cri-socket "$NODE_CRI" \
    --ignore-preflight-errors "$NODE_IGNORE" >"$T/join.out" 2>"$T/join.err"
  JOIN_RC=$?
  [ "$JOIN_RC" = 2 ] && join_err "ERROR IsPrivilegedUser" && nothing_written || { fail "nobody: exit $JOIN_RC"; rc=1; }
  # A phase kubeadm does not have.
  "$KJOIN" join phase kubelet-begin "${args[@]}" >/dev/null 2>"$T/join.err"; JOIN_RC=$?
  [ "$JOIN_RC" = 2 ] && join_err 'unknown phase "kubelet-begin"' || { fail "unknown phase: exit $JOIN_RC"; rc=1; }
  # preflight alone writes nothing and needs no server.
  "$KJOIN" join phase preflight 127.0.0.1:1 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
    --cri-socket "$NODE_CRI" --ignore-preflight-errors "$NODE_IGNORE" -o json >"$T/pf.json" 2>"$T/join.err"; JOIN_RC=$?
  [ "$JOIN_RC" = 0 ] && jq -e '[.node.phases[].name] == ["preflight"]' "$T/pf.json" >/dev/null && nothing_written ||
    { fail "phase preflight: exit $JOIN_RC: $(cat "$T/join.err")"; rc=1; }
  # kubeadm's ContainerRuntimeVersion from the kubelet 1.35: Debian's containerd 1.6 has no CRI
  # RuntimeConfig (a warning until 1.38); the kubelet 1.20 is not asked.
  local crv; crv=$(jq -c '[.node.preflight[] | select(.name == "ContainerRuntimeVersion") | .level]' "$T/pf.json")
  if [ "$E2E_MINOR" -ge 35 ]; then
    [ "$crv" = '["warning"]' ] && grep -q "WARNING ContainerRuntimeVersion: the container runtime at .* does not implement the CRI method RuntimeConfig (unknown method RuntimeConfig for service runtime.v1.RuntimeService)" "$T/join.err" ||
      { fail "ContainerRuntimeVersion on v1.$E2E_MINOR: $crv $(grep ContainerRuntimeVersion "$T/join.err")"; rc=1; }
  else
    [ "$crv" = '[]' ] || { fail "ContainerRuntimeVersion on v1.$E2E_MINOR: $crv"; rc=1; }
  fi
  return $rc
}
t_e2e_node_preflight_refusals_write_nothing() { on_node node_scenario_refusals e2e-bad; }

# The cluster's kubelet configuration missing (exit 6, the API's NotFound) or
# malformed (exit 1), and kubeadm's ClusterConfiguration malformed (exit 1):
# refused before anything is written.
node_scenario_configmap() {
  join_as e2e-cm || return 1
  kubelet_down
  [ "$JOIN_RC" = "$1" ] || { fail "exit $JOIN_RC, want $1: $(tail -3 "$T/join.err")"; return 1; }
  join_err "$2" && nothing_written
}
t_e2e_node_kubelet_configmap_missing_or_malformed() {
  node_setup || return 1
  local saved=$T/cm.json rc=0
  kc -n kube-system get configmap "$NODE_CM" -o json | jq 'del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp, .metadata.managedFields)' >"$saved" || return 1
  kc -n kube-system get configmap "$NODE_CM" -o json | jq '.data.kubelet = "apiVersion: v1\nkind: Pod\n"' | kc replace -f - >/dev/null || return 1
  in_node "node_scenario_configmap 1 'is not a kubelet.config.k8s.io/v1beta1 KubeletConfiguration'" || rc=1
  kc -n kube-system get configmap "$NODE_CM" -o json | jq '.data.kubelet = "maxPods: [\n"' | kc replace -f - >/dev/null || return 1
  in_node "node_scenario_configmap 1 'the kubelet configuration is not YAML'" || rc=1
  kc -n kube-system delete configmap "$NODE_CM" >/dev/null || return 1
  in_node "node_scenario_configmap 6 'NotFound'" || rc=1
  kc create -f "$saved" >/dev/null || { fail "the ConfigMap could not be restored"; return 1; }
  # kubeadm's ClusterConfiguration, read beside it, malformed: exit 1 too.
  local cc; cc=$(kc -n kube-system get configmap kubeadm-config -o json) || return 1
  jq '.data.ClusterConfiguration = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\n"' <<<"$cc" |
    kc replace -f - >/dev/null || return 1
  in_node "node_scenario_configmap 1 'configmap kube-system/kubeadm-config: the ClusterConfiguration is not a kubeadm.k8s.io/ ClusterConfiguration'" || rc=1
  jq 'del(.metadata.resourceVersion)' <<<"$cc" | kc replace -f - >/dev/null || { fail "kubeadm-config could not be restored"; return 1; }
  return $rc
}

# A kubelet that never starts: exit 3 at the deadline with what the kubelet
# last showed; the files are whole, and reset removes them.
node_scenario_never_bootstraps() {
  "$KJOIN" join "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
    --node-name e2e-silent --cri-socket "$NODE_CRI" --ignore-preflight-errors "$NODE_IGNORE" --discovery-timeout 20s \
    >"$T/join.out" 2>"$T/join.err"
  JOIN_RC=$?
  local rc=0
  [ "$JOIN_RC" = 3 ] || { fail "exit $JOIN_RC, want 3: $(tail -3 "$T/join.err")"; rc=1; }
  join_err "the kubelet did not bootstrap by the deadline (the way out: the same join again, which goes on from here, or kjoin reset): the kubelet's healthz at http://127.0.0.1:10248/healthz does not answer" || rc=1
  # While it waited, a line every 15 s said what it waited for and the time left.
  grep -Eq '^\[kubelet-wait-bootstrap\] Still waiting \(1[5-9] s, [0-9]+ s left\): the kubelet.s healthz' "$T/join.err" ||
    { fail "no progress while waiting: $(grep kubelet-wait "$T/join.err")"; rc=1; }
  ! grep -q "has joined the cluster" "$T/join.err" || { fail "a failed join said it joined"; rc=1; }
  grep -q "^KUBELET_KUBEADM_ARGS=\".*\"$" /var/lib/kubelet/kubeadm-flags.env || { fail "the flags file is not whole"; rc=1; }
  "$KJOIN" reset >/dev/null 2>&1 || { fail "reset after a timeout failed"; rc=1; }
  nothing_written || rc=1
  return $rc
}
t_e2e_node_kubelet_that_never_bootstraps_is_exit_3() { on_node node_scenario_never_bootstraps e2e-silent; }

# kubeadm's timeouts bound their own stage inside the join's deadline (60 s
# here): a kubelet that never answers its healthz ends the join after
# timeouts.kubeletHealthCheck; a healthy kubelet whose CSR the cluster does
# not approve (kubeadm's auto-approval taken away for the test) ends it after
# timeouts.tlsBootstrap. Exit 3 each, the bound named, well before the deadline.
node_timeouts_config() { # NAME TIMEOUTS_YAML
  cat >"$T/join.yaml" <<CFG
apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
discovery:
  bootstrapToken:
    token: abcdef.0123456789abcdef
    apiServerEndpoint: "$E2E_ENDPOINT"
    caCertHashes: ["$E2E_PIN"]
nodeRegistration:
  name: $1
  criSocket: "$NODE_CRI"
  ignorePreflightErrors: [$NODE_IGNORE]
timeouts:
  discovery: 60s
$2
CFG
}
node_scenario_stage_timeouts() {
  local rc=0 t0 s
  node_timeouts_config e2e-bounded "  kubeletHealthCheck: 4s"
  t0=$(date +%s)
  "$KJOIN" join --config "$T/join.yaml" >"$T/join.out" 2>"$T/join.err"; JOIN_RC=$?  # nothing starts the kubelet
  s=$(( $(date +%s) - t0 ))
  [ "$JOIN_RC" = 3 ] || { fail "healthz bound: exit $JOIN_RC, want 3: $(tail -2 "$T/join.err")"; rc=1; }
  join_err "the kubelet was not healthy within timeouts.kubeletHealthCheck (4s" || rc=1
  join_err "connection refused (nothing listens there: is the server up, is the port right?)" || rc=1
  join_err "): is the kubelet running?" || rc=1
  [ "$s" -lt 20 ] || { fail "the healthz bound of 4 s ended the join after $s s"; rc=1; }
  "$KJOIN" reset >/dev/null 2>&1 || { fail "reset after the healthz bound failed"; rc=1; }
  kc get clusterrolebinding kubeadm:node-autoapprove-bootstrap -o json | jq 'del(.metadata.resourceVersion, .metadata.uid,
    .metadata.creationTimestamp, .metadata.managedFields)' >"$T/autoapprove.json" || { fail "no auto-approval binding"; return 1; }
  kc delete clusterrolebinding kubeadm:node-autoapprove-bootstrap >/dev/null || return 1
  node_timeouts_config e2e-bounded "  tlsBootstrap: 5s"
  t0=$(date +%s)
  node_join --config "$T/join.yaml"
  s=$(( $(date +%s) - t0 ))
  kubelet_down
  kc create -f "$T/autoapprove.json" >/dev/null || { fail "the auto-approval binding could not be restored"; rc=1; }
  [ "$JOIN_RC" = 3 ] || { fail "TLS bootstrap bound: exit $JOIN_RC, want 3: $(tail -2 "$T/join.err")"; rc=1; }
  join_err "the kubelet's TLS bootstrap did not end within timeouts.tlsBootstrap (5s" || rc=1
  join_err "The kubelet is healthy after" || rc=1
  [ "$s" -lt 40 ] || { fail "the TLS bootstrap bound of 5 s ended the join after $s s"; rc=1; }
  "$KJOIN" reset >/dev/null 2>&1 || { fail "reset after the TLS bootstrap bound failed"; rc=1; }
  nothing_written || rc=1
  return $rc
}
t_e2e_node_join_configuration_timeouts_bound_their_stage() { on_node node_scenario_stage_timeouts e2e-bounded; }

# reset removes only what the join made and still holds what it wrote: a file
# changed since, a symlink put in a file's place and a file of someone else's
# are left and named; a join record that is not kjoin's is refused whole.
node_scenario_reset_is_careful() {
  local rc=0
  join_as e2e-careful --skip-phases kubelet-wait-bootstrap || return 1
  kubelet_down
  [ "$JOIN_RC" = 0 ] || { fail "join exit $JOIN_RC: $(tail -3 "$T/join.err")"; return 1; }
  echo "# an operator's edit" >>/var/lib/kubelet/config.yaml
  rm /var/lib/kubelet/kubeadm-flags.env && ln -s /etc/passwd /var/lib/kubelet/kubeadm-flags.env
  echo mine >/var/lib/kubelet/operator-notes
  cp /etc/kubernetes/kjoin-join.json "$T/record"
  # A record naming a file outside the node's directories is refused whole.
  jq '.files[0].path = "/etc/shadow"' "$T/record" >/etc/kubernetes/kjoin-join.json
  "$KJOIN" reset >"$T/reset.out" 2>&1 && { fail "a forged record was followed"; rc=1; }
  grep -q "not a path the join writes" "$T/reset.out" || { fail "forged: $(cat "$T/reset.out")"; rc=1; }
  [ -e /etc/passwd ] && [ -e /var/lib/kubelet/config.yaml ] || { fail "a forged record removed files"; rc=1; }
  cp "$T/record" /etc/kubernetes/kjoin-join.json
  "$KJOIN" reset -o json >"$T/reset.json" 2>"$T/reset.err" || { fail "reset: $(cat "$T/reset.err")"; rc=1; }
  jq -e '(.left | map(split(":")[0])) as $l | ($l | index("/var/lib/kubelet/config.yaml") != null)
      and ($l | index("/var/lib/kubelet/kubeadm-flags.env") != null)' "$T/reset.json" >/dev/null ||
    { fail "reset json: $(cat "$T/reset.json")"; rc=1; }
  [ -L /var/lib/kubelet/kubeadm-flags.env ] && [ -e /var/lib/kubelet/operator-notes ] && [ -s /etc/passwd ] &&
    grep -q "an operator's edit" /var/lib/kubelet/config.yaml || { fail "reset removed what was not the join's"; rc=1; }
  [ ! -e /etc/kubernetes/pki/ca.crt ] && [ ! -e /etc/kubernetes/bootstrap-kubelet.conf ] ||
    { fail "reset left the join's own files"; rc=1; }
  return $rc
}
t_e2e_node_reset_removes_only_what_the_join_made() { on_node node_scenario_reset_is_careful e2e-careful; }

source "$(dirname "${BASH_SOURCE[0]}")/image.sh"

# kjoin certs manifests --job on the node: the Job runs the store's first
# init as the ServiceAccount and Role it was given, and the CronJobs are
# accepted as batch/v1. The images are made here (tests/e2e/image.sh): one
# with this kjoin and its libraries, and the sandbox's pause. containerd runs
# inside the node's mount namespace, where the kubelet's volumes are. This
# control plane has no scheduler, no kube-proxy and no network plugin, so the
# pod is given its node, the host's network and the API server's address;
# the Job's command, arguments, ServiceAccount and Role are kjoin's, as is.
node_scenario_job() {
  local c=$T/ctr rc=0 ns=e2e-certs-job cgroups_before
  cgroups_before=$(ls -d /sys/fs/cgroup/*/k8s.io 2>/dev/null)
  mkdir -p "$c/cni/bin" "$c/cni/conf"
  cat >"$c/config.toml" <<TOML
version = 2
root = "$c/root"
state = "$c/state"
[grpc]
  address = "$c/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "kjoin.test/pause:e2e"
  # This machine's root lacks CAP_SYS_RESOURCE: a container's OOM score may
  # not go below containerd's (runc fails at oom_score_adj otherwise).
  restrict_oom_score_adj = true
[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "$c/cni/bin"
  conf_dir = "$c/cni/conf"
TOML
  containerd --config "$c/config.toml" >"$T/containerd.log" 2>&1 &
  local ctr_pid=$!
  e2e_wait 30 test -S "$c/containerd.sock" || { fail "containerd did not start"; kill "$ctr_pid"; return 1; }
  local i
  for i in "$ROOT/images/kjoin.tar" "$ROOT/images/pause.tar"; do
    ctr --address "$c/containerd.sock" -n k8s.io images import "$i" >>"$T/import.log" 2>&1 ||
      { fail "ctr import $i: $(tail -2 "$T/import.log")"; rc=1; }
  done
  # (The last --cri-socket and --discovery-timeout win: this node's own containerd.)
  [ $rc = 0 ] && join_as e2e-job --cri-socket "unix://$c/containerd.sock" --discovery-timeout 90s &&
    [ "$JOIN_RC" = 0 ] || { fail "join: $JOIN_RC $(tail -2 "$T/join.err")"; rc=1; }
  local k=(kubectl --kubeconfig "$E2E_ADMIN")
  if [ $rc = 0 ]; then
    "${k[@]}" create namespace "$ns" >/dev/null
    # CronJobs are batch/v1 from 1.21; v1.20 serves batch/v1beta1 (kjoin's --cronjob-api).
    local api=batch/v1
    [ "$E2E_MINOR" -lt 21 ] && api=batch/v1beta1
    "$KJOIN" certs manifests --job --image kjoin.test/kjoin:e2e --namespace "$ns" --prefix crdb --cronjob-api "$api" \
      >"$T/manifests.yaml" ||
      { fail "manifests"; rc=1; }
    "${k[@]}" apply --dry-run=client -o json -f "$T/manifests.yaml" >"$T/list.json" 2>"$T/apply.err" || rc=1
    jq --arg host "${E2E_ENDPOINT%:*}" --arg port "${E2E_ENDPOINT##*:}" '.items |= map(if .kind == "Job" then
        .spec.template.spec += {nodeName: "e2e-job", hostNetwork: true,
          tolerations: [{operator: "Exists"}]}
        | .spec.template.spec.containers[0].env = [{name: "KUBERNETES_SERVICE_HOST", value: $host},
          {name: "KUBERNETES_SERVICE_PORT", value: $port}]
        else . end)' "$T/list.json" >"$T/patched.json"
    "${k[@]}" apply -f "$T/patched.json" >"$T/apply.out" 2>"$T/apply.err" || { fail "apply: $(cat "$T/apply.err")"; rc=1; }
    [ "$(grep -c "^cronjob.batch/crdb-certs-rotate-[a-z]* created" "$T/apply.out")" = 2 ] &&
      [ "$("${k[@]}" -n "$ns" get cronjobs -o json | jq -r '[.items[].apiVersion] | unique | .[]')" = "$api" ] ||
      { fail "the CronJobs were not accepted as $api: $(cat "$T/apply.out")"; rc=1; }
    "${k[@]}" -n "$ns" wait --for=condition=complete job/crdb-certs-init --timeout=120s >/dev/null 2>&1 ||
      { fail "the Job did not complete: $("${k[@]}" -n "$ns" get pods -o wide 2>&1 | tail -2) $("${k[@]}" -n "$ns" logs job/crdb-certs-init 2>&1 | tail -3)"; rc=1; }
    "${k[@]}" -n "$ns" get secrets -o json | jq -e '[.items[].metadata.name] as $n | ["crdb-ca-secret", "crdb-node-secret", "crdb-client-secret"] - $n == []' >/dev/null ||
      { fail "the Job made no store: $("${k[@]}" -n "$ns" get secrets 2>&1)"; rc=1; }
    "${k[@]}" -n "$ns" logs job/crdb-certs-init >"$T/job.log" 2>&1
    # It ran as the ServiceAccount it was given.
    "${k[@]}" -n "$ns" get pods -o json | jq -e '.items[0].spec.serviceAccountName == "crdb-certs"' >/dev/null ||
      { fail "the pod did not run as crdb-certs"; rc=1; }
  fi
  # Nothing stays running: the pod goes, then the kubelet, then containerd.
  "${k[@]}" delete namespace "$ns" --wait=true --timeout=60s >/dev/null 2>&1
  for i in $(seq 100); do
    [ -z "$(ctr --address "$c/containerd.sock" -n k8s.io tasks ls -q 2>/dev/null)" ] && break; sleep 0.2
  done
  [ -z "$(ctr --address "$c/containerd.sock" -n k8s.io tasks ls -q 2>/dev/null)" ] || { fail "containers were left"; rc=1; }
  kubelet_down
  kill "$ctr_pid"; wait "$ctr_pid" 2>/dev/null
  # The pod's cgroups went with it; the k8s.io parent containerd made in each
  # hierarchy goes too, unless it was there before.
  if [ -z "$cgroups_before" ]; then
    for i in /sys/fs/cgroup/*/k8s.io; do [ -d "$i" ] && { rmdir "$i" || { fail "cgroup $i left"; rc=1; }; }; done
  fi
  "$KJOIN" reset >/dev/null 2>&1
  return $rc
}
t_e2e_node_certs_job_runs_on_the_node() {
  node_setup || return 1
  if [ ! -s "$ROOT/images/kjoin.tar" ]; then
    mkdir -p "$ROOT/images"
    rootfs_with "$ROOT/images/kjoin" "$KJOIN" && oci_archive kjoin.test/kjoin:e2e "$ROOT/images/kjoin" "$ROOT/images/kjoin.tar" kjoin &&
      pause_rootfs "$ROOT/images/pause" && oci_archive kjoin.test/pause:e2e "$ROOT/images/pause" "$ROOT/images/pause.tar" /pause ||
      { fail "the images could not be made"; return 1; }
  fi
  on_node node_scenario_job e2e-job
}

# With systemd: kjoin stops the kubelet, writes, and starts it with
# `systemctl restart kubelet`; reset stops it with `systemctl stop kubelet`.
# No systemd runs here, so the namespace gets a /run with /run/systemd/system
# (what tells a systemd machine) and a systemctl of the test's own that runs
# kubelet.service as the package's drop-in (dist/systemd/kubelet.service.d/
# 10-kjoin.conf) says: its Environment= lines, its EnvironmentFile= and its
# ExecStart=, so the drop-in's command line is what starts the kubelet.
node_fake_systemctl() {
  local dropin=$1
  # kubelet.service as Kubernetes' packages ship it, Restart=always (1 s
  # here): a supervisor restarts the kubelet and counts the restarts, as
  # systemctl show reports them; journalctl reads the kubelet's output.
  cat >"$T/bin/systemctl" <<SH
#!/bin/bash
echo "\$*" >>"$T/systemctl.log"
case "\$1 \${2:-}" in "daemon-reload "|"try-restart containerd") exit 0 ;; esac
[ "\$2" = kubelet ] || exit 5
state() { printf 'ActiveState=%s\nSubState=%s\nNRestarts=%s\n' "\$@" >"$T/kubelet.state"; }
stop() { [ -s "$T/kubelet.pid" ] || return 0; kill -- "-\$(cat "$T/kubelet.pid")" 2>/dev/null
  while kill -0 "\$(cat "$T/kubelet.pid")" 2>/dev/null; do sleep 0.1; done; rm -f "$T/kubelet.pid"; state inactive dead 0; }
case \$1 in
  stop) stop ;;
  show) cat "$T/kubelet.state" 2>/dev/null || printf 'ActiveState=inactive\nSubState=dead\nNRestarts=0\n' ;;
  restart)
    stop
    [ -r "$dropin" ] || { echo "no $dropin" >&2; exit 1; }
    while IFS= read -r line; do
      case \$line in
        Environment=*) v=\${line#Environment=}; v=\${v#\\"}; v=\${v%\\"}; export "\$v" ;;
        EnvironmentFile=*) f=\${line#EnvironmentFile=}; f=\${f#-}; [ -f "\$f" ] && set -a && . "\$f" && set +a ;;
        ExecStart=?*) exec_start=\${line#ExecStart=} ;;
      esac
    done < <(cat "$dropin" /etc/systemd/system/kubelet.service.d/*.conf 2>/dev/null) # (systemd's order: the packaged, then /etc's)
    exec_start=\${exec_start/\\/usr\\/bin\\/kubelet/$KBIN/kubelet}
    export -f state
    setsid bash -c 'n=0; while :; do state active running \$n; bash -c "exec \$1"; state activating auto-restart \$n
      sleep 1; n=\$((n + 1)); done' supervisor "\$exec_start" >>"$T/kubelet.log" 2>&1 </dev/null &
    echo \$! >"$T/kubelet.pid" ;;
  *) exit 1 ;;
esac
SH
  cat >"$T/bin/journalctl" <<SH
#!/bin/bash
n=10; while [ \$# -gt 0 ]; do [ "\$1" = -n ] && n=\$2; shift; done
tail -n "\$n" "$T/kubelet.log" 2>/dev/null
SH
  chmod +x "$T/bin/systemctl" "$T/bin/journalctl"
}
node_scenario_systemd() {
  local rc=0
  mount -t tmpfs -o mode=0755 tmpfs /run && mkdir -p /run/systemd/system || { fail "no private /run"; return 1; }
  mkdir -p "$T/bin"
  node_fake_systemctl "$REPO_DIR/dist/systemd/kubelet.service.d/10-kjoin.conf"
  PATH=$T/bin:$PATH "$KJOIN" join "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
    --node-name e2e-systemd --cri-socket "$NODE_CRI" --ignore-preflight-errors "$NODE_IGNORE" --discovery-timeout 90s -o json \
    >"$T/join.out" 2>"$T/join.err"
  JOIN_RC=$?
  [ "$JOIN_RC" = 0 ] || { fail "join exit $JOIN_RC: $(tail -3 "$T/join.err"); kubelet: $(tail -2 "$T/kubelet.log" 2>/dev/null)"; rc=1; }
  join_err "Starting the kubelet (systemctl restart kubelet)" || rc=1
  jq -e '.node.systemd and .node.kubeletStartCommand == null and .node.nodeRegistered' "$T/join.out" >/dev/null ||
    { fail "json: $(jq -c .node "$T/join.out")"; rc=1; }
  # Preflight's Service-Kubelet asks is-enabled, as kubeadm's; then the kubelet is stopped and restarted.
  [ "$(grep -v '^show ' "$T/systemctl.log" 2>/dev/null | tr '\n' ,)" = "is-enabled kubelet.service,stop kubelet,restart kubelet," ] ||
    { fail "systemctl calls: $(cat "$T/systemctl.log" 2>/dev/null | tr '\n' ,)"; rc=1; }
  PATH=$T/bin:$PATH "$KJOIN" reset -o json >"$T/reset.json" 2>"$T/reset.err" || { fail "reset: $(cat "$T/reset.err")"; rc=1; }
  jq -e '.kubeletStopped and .left == []' "$T/reset.json" >/dev/null || { fail "reset: $(cat "$T/reset.json")"; rc=1; }
  [ ! -s "$T/kubelet.pid" ] || { fail "the kubelet still runs after reset"; kill "$(cat "$T/kubelet.pid")"; rc=1; }
  nothing_written || rc=1
  return $rc
}
# A node behind a proxy (--proxy): the kubelet's and containerd's drop-ins,
# 0600, with HTTP(S)_PROXY and a NO_PROXY of the cluster's addresses (its
# service CIDR, DNS domain, the API server, the node's name and addresses,
# the operator's); systemd reads them again and containerd restarts only
# when its drop-in changed; the kubelet runs with them; a dry run shows them
# without the proxy's password; reset removes them and restarts containerd
# without. A proxy that is no http(s) URL, or --no-proxy alone: exit 2.
node_scenario_proxy() {
  local rc=0 d=/etc/systemd/system proxy='http://kjoin:proxy-pw-9f3@proxy.invalid:3128'
  SECRETS+=(proxy-pw-9f3)
  mount -t tmpfs -o mode=0755 tmpfs /run && mkdir -p /run/systemd/system || { fail "no private /run"; return 1; }
  mkdir -p "$T/bin"
  node_fake_systemctl "$REPO_DIR/dist/systemd/kubelet.service.d/10-kjoin.conf"
  local args=("$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" --node-name e2e-proxy
    --cri-socket "$NODE_CRI" --ignore-preflight-errors "$NODE_IGNORE" --discovery-timeout 90s)
  pjoin() { : >"$T/join.err"; PATH=$T/bin:$PATH "$KJOIN" join "$@" >"$T/join.out" 2>"$T/join.err"; JOIN_RC=$?
    ! grep -q proxy-pw-9f3 "$T/join.out" "$T/join.err" || fail "the proxy's password was printed"; }
  pjoin "${args[@]}" --proxy ftp://proxy.invalid:21
  [ "$JOIN_RC" = 2 ] && join_err '--proxy "ftp://proxy.invalid:21" is no http:// or https:// URL' || rc=1
  pjoin "${args[@]}" --no-proxy registry.corp
  [ "$JOIN_RC" = 2 ] && join_err "--no-proxy without --proxy" || rc=1
  [ ! -e "$d/kubelet.service.d" ] && [ ! -e "$d/containerd.service.d" ] && nothing_written || { fail "a refusal wrote"; rc=1; }
  pjoin "${args[@]}" --proxy "$proxy" --no-proxy registry.corp --dry-run -o json
  [ "$JOIN_RC" = 0 ] || { fail "dry run: exit $JOIN_RC: $(tail -2 "$T/join.err")"; rc=1; }
  jq -e '[.wouldWrite[] | select(.path | endswith("/20-kjoin-proxy.conf")) | select(.mode == "0600")
      | .content | contains("HTTPS_PROXY=http://***@proxy.invalid:3128")] | length == 2' "$T/join.out" >/dev/null ||
    { fail "dry run: $(jq -c '[.wouldWrite[].path]' "$T/join.out")"; rc=1; }
  : >"$T/systemctl.log"
  pjoin "${args[@]}" --proxy "$proxy" --no-proxy registry.corp -o json
  [ "$JOIN_RC" = 0 ] || { fail "join exit $JOIN_RC: $(tail -3 "$T/join.err"); kubelet: $(tail -2 "$T/kubelet.log" 2>/dev/null)"; return 1; }
  local f
  for f in "$d/kubelet.service.d/20-kjoin-proxy.conf" "$d/containerd.service.d/20-kjoin-proxy.conf"; do
    [ "$(stat -c %a "$f" 2>/dev/null)" = 600 ] && grep -qxF "Environment=\"HTTPS_PROXY=$proxy\"" "$f" ||
      { fail "$f: $(stat -c %a "$f" 2>&1) $(cat "$f" 2>&1 | head -c 300)"; rc=1; }
  done
  local np; np=$(jq -r .node.noProxy "$T/join.out")
  for f in localhost 127.0.0.1 .svc .cluster.local 10.96.0.0/12 127.0.0.1 e2e-proxy 192.0.2.2 fd00::2 registry.corp; do
    [[ ",$np," == *",$f,"* ]] || { fail "NO_PROXY lacks $f: $np"; rc=1; }
  done
  grep -qxF "Environment=\"NO_PROXY=$np\"" "$d/containerd.service.d/20-kjoin-proxy.conf" || { fail "the drop-in's NO_PROXY is not $np"; rc=1; }
  jq -e '.node.containerdRestarted and ([.node.files[] | select(.path | endswith("20-kjoin-proxy.conf")) | .mode] == ["0600","0600"])' \
    "$T/join.out" >/dev/null || { fail "json: $(jq -c '.node | {containerdRestarted, files}' "$T/join.out" | head -c 400)"; rc=1; }
  jq -e '[.events[].message | select(contains("The kubelet and containerd go out through the proxy http://proxy.invalid:3128; NO_PROXY=localhost,"))] | length == 1' "$T/join.out" >/dev/null ||
    { fail "events: $(jq -c '[.events[].message | select(contains("proxy"))]' "$T/join.out" | head -c 400)"; rc=1; }
  [ "$(grep -c 'try-restart containerd' "$T/systemctl.log")" = 1 ] && grep -qx daemon-reload "$T/systemctl.log" ||
    { fail "systemctl calls: $(tr '\n' , <"$T/systemctl.log")"; rc=1; }
  # (the supervisor the fake systemd runs the kubelet under: the unit's environment)
  tr '\0' '\n' <"/proc/$(cat "$T/kubelet.pid")/environ" | grep -qxF "HTTPS_PROXY=$proxy" ||
    { fail "the kubelet does not run with the proxy"; rc=1; }
  # The same drop-ins again: containerd is not restarted; another NO_PROXY: it is.
  : >"$T/systemctl.log"
  pjoin phase kubelet-start "${args[@]}" --proxy "$proxy" --no-proxy registry.corp
  [ "$JOIN_RC" = 0 ] && ! grep -q 'try-restart containerd' "$T/systemctl.log" ||
    { fail "unchanged drop-ins: exit $JOIN_RC, systemctl: $(tr '\n' , <"$T/systemctl.log") $(tail -2 "$T/join.err")"; rc=1; }
  pjoin phase kubelet-start "${args[@]}" --proxy "$proxy" --no-proxy registry.corp,mirror.corp
  [ "$JOIN_RC" = 0 ] && [ "$(grep -c 'try-restart containerd' "$T/systemctl.log")" = 1 ] ||
    { fail "a changed drop-in: exit $JOIN_RC, systemctl: $(tr '\n' , <"$T/systemctl.log") $(tail -2 "$T/join.err")"; rc=1; }
  : >"$T/systemctl.log"
  PATH=$T/bin:$PATH "$KJOIN" reset >"$T/reset.out" 2>&1 || { fail "reset: $(tail -2 "$T/reset.out")"; rc=1; }
  [ ! -e "$d/kubelet.service.d" ] && [ ! -e "$d/containerd.service.d" ] || { fail "reset left: $(ls -R "$d" | head -5)"; rc=1; }
  grep -qx daemon-reload "$T/systemctl.log" && grep -q 'try-restart containerd' "$T/systemctl.log" ||
    { fail "reset's systemctl calls: $(tr '\n' , <"$T/systemctl.log")"; rc=1; }
  [ ! -s "$T/kubelet.pid" ] || { fail "the kubelet still runs after reset"; kill -- "-$(cat "$T/kubelet.pid")"; rc=1; }
  nothing_written || rc=1
  return $rc
}
t_e2e_node_proxy_drop_ins_for_kubelet_and_containerd() {
  REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  on_node node_scenario_proxy e2e-proxy
}
t_e2e_node_systemd_machine_uses_the_packaged_drop_in() {
  REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  on_node node_scenario_systemd e2e-systemd
}

# The phases one at a time, as `kubeadm join phase NAME` runs them:
# kubelet-start (with discovery) starts the kubelet and returns, and
# kubelet-wait-bootstrap alone waits for it, then takes the token off disk.
node_scenario_phase_by_phase() {
  local rc=0 args=("$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN"
    --node-name e2e-phased --cri-socket "$NODE_CRI" --ignore-preflight-errors "$NODE_IGNORE" --discovery-timeout 60s)
  "$KJOIN" join phase preflight "${args[@]}" >/dev/null 2>"$T/join.err" || { fail "phase preflight: $(tail -2 "$T/join.err")"; return 1; }
  node_join phase kubelet-start "${args[@]}" -o json || return 1
  [ "$JOIN_RC" = 0 ] || { fail "phase kubelet-start: exit $JOIN_RC: $(tail -2 "$T/join.err")"; kubelet_down; return 1; }
  jq -e '[.node.phases[].name] == ["kubelet-start"] and .node.nodeRegistered == null' "$T/join.out" >/dev/null ||
    { fail "kubelet-start json: $(jq -c .node "$T/join.out")"; rc=1; }
  [ -s /etc/kubernetes/bootstrap-kubelet.conf ] || { fail "no bootstrap kubeconfig after kubelet-start"; rc=1; }
  # The wait alone removes only a file the join record proves kjoin wrote.
  echo "an operator's file" >/etc/kubernetes/not-a-bootstrap.conf; chmod 600 /etc/kubernetes/not-a-bootstrap.conf
  "$KJOIN" join phase kubelet-wait-bootstrap --node-name e2e-phased --discovery-timeout 60s \
    --kubeconfig-out /etc/kubernetes/not-a-bootstrap.conf -o json >"$T/wait.json" 2>"$T/wait.err" ||
    { fail "phase kubelet-wait-bootstrap (another file): $(tail -2 "$T/wait.err")"; rc=1; }
  [ "$(cat /etc/kubernetes/not-a-bootstrap.conf 2>/dev/null)" = "an operator's file" ] &&
    jq -e '.node.bootstrapKubeconfigRemoved == false' "$T/wait.json" >/dev/null ||
    { fail "the wait removed a file that was not kjoin's"; rc=1; }
  rm -f /etc/kubernetes/not-a-bootstrap.conf
  "$KJOIN" join phase kubelet-wait-bootstrap --node-name e2e-phased --discovery-timeout 60s -o json >"$T/wait.json" 2>"$T/wait.err" ||
    { fail "phase kubelet-wait-bootstrap: $(tail -2 "$T/wait.err")"; rc=1; }
  jq -e '[.node.phases[].name] == ["kubelet-wait-bootstrap"] and .node.nodeRegistered and .node.bootstrapKubeconfigRemoved' \
    "$T/wait.json" >/dev/null || { fail "wait json: $(jq -c .node "$T/wait.json")"; rc=1; }
  [ ! -e /etc/kubernetes/bootstrap-kubelet.conf ] || { fail "the token stayed on disk"; rc=1; }
  kubelet_down
  "$KJOIN" reset >/dev/null 2>&1 && nothing_written || { fail "reset after the phases"; rc=1; }
  return $rc
}
t_e2e_node_phases_one_at_a_time() { on_node node_scenario_phase_by_phase e2e-phased; }

# ---- faults: a join killed at each step, a control plane that goes away ----

# Every file the join may have left is whole, and no temporary file is left:
# what a kill -9 (or a power cut, for files the join reported written, which
# it fsynced) can leave behind.
no_half_files() {
  local f left
  left=$(find /etc/kubernetes /var/lib/kubelet -name '*.kjoin-*' 2>/dev/null)
  [ -z "$left" ] || { fail "$1: temporary files left: $left"; return 1; }
  f=/etc/kubernetes/kjoin-join.json
  [ ! -e $f ] || jq -e '.kind == "KjoinJoinRecord"' $f >/dev/null || { fail "$1: half a record"; return 1; }
  f=/etc/kubernetes/bootstrap-kubelet.conf
  [ ! -e $f ] || grep -q "^current-context:" $f || { fail "$1: half a bootstrap kubeconfig"; return 1; }
  f=/var/lib/kubelet/config.yaml
  [ ! -e $f ] || cmp -s $f "$ROOT/kubelet-config.yaml" || grep -q "^kind: KubeletConfiguration" $f ||
    { fail "$1: half a kubelet configuration"; return 1; }
  f=/var/lib/kubelet/kubeadm-flags.env
  [ ! -e $f ] || grep -q '^KUBELET_KUBEADM_ARGS=".*"$' $f || { fail "$1: half a flags file"; return 1; }
  f=/etc/kubernetes/pki/ca.crt
  [ ! -e $f ] || cmp -s $f "$E2E_CA" || { fail "$1: half a CA"; return 1; }
}

# The step boundaries of the whole join (pkg/node's crash points), in order.
NODE_CRASH_POINTS="discovered checked record bootstrap-kubeconfig kubelet-config flags-env ca-cert started healthy registered"

# kill -9 at every step boundary, then both ways out: kjoin reset gives the
# two directories back as they were; the same command again registers the
# Node. Then reset itself killed at its steps, and run again.
node_scenario_killed() {
  local before=$NODE_BEFORE rc=0 point
  for point in $NODE_CRASH_POINTS; do
    KJOIN_JOIN_CRASH_AT=$point join_as e2e-killed || return 1
    kubelet_down
    [ "$JOIN_RC" = 137 ] || { fail "$point: exit $JOIN_RC, want 137 (killed): $(tail -2 "$T/join.err")"; return 1; }
    no_half_files "$point" || rc=1
    "$KJOIN" reset >"$T/reset.out" 2>&1 || { fail "$point: reset: $(tail -2 "$T/reset.out")"; rc=1; }
    [ "$(node_dirs)" = "$before" ] || { fail "$point: reset left: $(diff <(echo "$before") <(node_dirs) | tr '\n' ' ')"; return 1; }
    KJOIN_JOIN_CRASH_AT=$point join_as e2e-killed || return 1
    kubelet_down
    join_as e2e-killed -o json || return 1
    kubelet_down
    [ "$JOIN_RC" = 0 ] && jq -e '.node.nodeRegistered and .node.bootstrapKubeconfigRemoved' "$T/join.out" >/dev/null ||
      { fail "$point: the join again: exit $JOIN_RC: $(grep -v '^\[' "$T/join.err" | tail -2)"; return 1; }
    "$KJOIN" reset >"$T/reset.out" 2>&1 && [ "$(node_dirs)" = "$before" ] ||
      { fail "$point: reset after the join again: $(tail -2 "$T/reset.out")"; return 1; }
    kc delete node e2e-killed >/dev/null 2>&1
  done
  for point in reset-stopped reset-files reset-state; do
    join_as e2e-killed || return 1
    kubelet_down
    [ "$JOIN_RC" = 0 ] || { fail "join before $point: exit $JOIN_RC"; return 1; }
    KJOIN_JOIN_CRASH_AT=$point "$KJOIN" reset >"$T/reset.out" 2>&1 &
    wait $! # (in the background: the shell does not report the kill)
    [ $? = 137 ] || { fail "$point: reset was not killed"; rc=1; }
    "$KJOIN" reset >"$T/reset.out" 2>&1 && [ "$(node_dirs)" = "$before" ] ||
      { fail "$point: reset again: $(tail -2 "$T/reset.out"); left: $(diff <(echo "$before") <(node_dirs) | tr '\n' ' ')"; return 1; }
    kc delete node e2e-killed >/dev/null 2>&1
  done
  return $rc
}
t_e2e_node_killed_at_every_step_both_ways_out() { on_node node_scenario_killed e2e-killed; }

# join_registered WHAT: the join exited 0 and says its Node is registered.
join_registered() {
  [ "$JOIN_RC" = 0 ] && jq -e '.node.nodeRegistered' "$T/join.out" >/dev/null && return 0
  fail "$1: exit $JOIN_RC: $(grep -v '^\[' "$T/join.err" | tail -2)"
  # What the kubelet and the cluster's CSRs say, for a failure that is not kjoin's.
  echo "    the CSRs: $(kc get csr --no-headers 2>&1 | tail -3 | tr '\n' ';')" >&2
  if [ -e "$T/kubelet.log" ]; then
    echo "    the kubelet's last lines: $(grep -v '^I' "$T/kubelet.log" | tail -4 | cut -c1-300 | tr '\n' ';')" >&2
  else
    echo "    no kubelet was started: kjoin did not say how before it ended" >&2
  fi
  return 1
}

# cp_after FILE WORD COMPONENT SECONDS: in the background, once FILE says
# WORD, COMPONENT goes down for SECONDS (0: until $T/cp-up appears), then
# comes back. CP_OP is its pid.
cp_after() {
  local file=$1 word=$2 component=$3 seconds=$4
  (
    e2e_wait 120 grep -qF -- "$word" "$file" || exit 1
    cp_stop "$component"
    if [ "$seconds" = 0 ]; then e2e_wait 300 test -e "$T/cp-up"; else sleep "$seconds"; fi
    cp_start "$component"
  ) &
  CP_OP=$!
}

# joined_then_reset NAME WHAT: the join as NAME registers its Node within a
# boot's deadline, and reset gives the node back as it was.
joined_then_reset() {
  join_as "$1" --discovery-timeout 150s -o json || return 1
  kubelet_down
  join_registered "$2" || return 1
  "$KJOIN" reset >/dev/null 2>&1 && nothing_written
}

# The API server goes away while kjoin waits for the kubelet, and comes back
# within the deadline: the join completes.
node_scenario_cp_restart() { joined_then_reset e2e-restart "through the restart"; }
t_e2e_node_control_plane_restarts_during_the_wait() {
  node_setup || return 1
  cp_after "$T/join.err" "[kubelet-wait-bootstrap] Waiting" kube-apiserver 8
  on_node node_scenario_cp_restart e2e-restart; local rc=$?
  wait "$CP_OP" || { fail "the API server did not come back"; rc=1; }
  return $rc
}

# Gone for good: exit 3 at the deadline, saying what it saw last and the way
# out; once it is back, the same command again completes.
node_scenario_cp_gone() {
  join_as e2e-gone --discovery-timeout 20s || return 1
  kubelet_down
  [ "$JOIN_RC" = 3 ] || { fail "exit $JOIN_RC, want 3: $(tail -2 "$T/join.err")"; touch "$T/cp-up"; return 1; }
  join_err "the kubelet did not bootstrap by the deadline (the way out: the same join again" || { touch "$T/cp-up"; return 1; }
  touch "$T/cp-up"
  e2e_wait 90 curl -sfk "$E2E_SERVER/readyz" || { fail "the API server did not come back"; return 1; }
  # A deadline as long as a boot's: the controller-manager's watches come back
  # after their own backoff (up to 30 s), and only then is the CSR approved.
  joined_then_reset e2e-gone "the join again"
}
t_e2e_node_control_plane_gone_for_good_then_back() {
  node_setup || return 1
  cp_after "$T/join.err" "[kubelet-wait-bootstrap] Waiting" kube-apiserver 0
  on_node node_scenario_cp_gone e2e-gone; local rc=$?
  touch "$T/cp-up"; wait "$CP_OP" || { fail "the API server did not come back"; rc=1; }
  return $rc
}

# Nodes that boot before the control plane: the join runs 20 s before the
# API server is up (and, separately, before the bootstrap signer has signed
# cluster-info for a new token), and completes within its deadline; its
# discovery attempts are bounded (-o json attempts).
node_scenario_early() {
  local token=${EARLY_TOKEN:-abcdef.0123456789abcdef}
  node_join "$E2E_ENDPOINT" --token "$token" --discovery-token-ca-cert-hash "$E2E_PIN" --node-name e2e-early \
    --cri-socket "$NODE_CRI" --ignore-preflight-errors "$NODE_IGNORE" --discovery-timeout 150s -o json || return 1
  kubelet_down
  join_registered "early" || return 1
  local attempts; attempts=$(jq .attempts "$T/join.out")
  echo "    (discovery attempts: $attempts)"
  [ "$attempts" -ge 2 ] && [ "$attempts" -le 60 ] || { fail "attempts: $attempts"; return 1; }
  "$KJOIN" reset >/dev/null 2>&1 && nothing_written
}
t_e2e_node_joins_before_the_control_plane_is_up() {
  node_setup || return 1
  cp_stop kube-apiserver
  ( sleep 20; cp_start kube-apiserver ) & CP_OP=$!
  on_node node_scenario_early e2e-early; local rc=$?
  wait "$CP_OP" || { fail "the API server did not come back"; rc=1; }
  return $rc
}
t_e2e_node_joins_before_the_signer_signed_its_token() {
  node_setup || return 1
  cp_stop kube-controller-manager
  EARLY_TOKEN=$("$KBIN/kubeadm" token create --ttl 10m --kubeconfig "$E2E_ADMIN" 2>/dev/null) || { cp_start kube-controller-manager; return 1; }
  SECRETS+=("${EARLY_TOKEN#*.}")
  unsigned "${EARLY_TOKEN%%.*}" || { fail "the token was signed with the signer down"; cp_start kube-controller-manager; return 1; }
  ( sleep 20; cp_start kube-controller-manager ) & CP_OP=$!
  EARLY_TOKEN=$EARLY_TOKEN on_node node_scenario_early e2e-early; local rc=$?
  wait "$CP_OP"
  return $rc
}

# A kubelet that crash-loops (a flag it does not know, from kubeletExtraArgs)
# under systemd: the join ends with exit 3 as soon as systemd has restarted it
# a few times, long before its deadline, naming the kubelet's own error from
# the journal. (Without systemd, node_scenario_exits_without_systemd.)
node_scenario_crash_loop() {
  local rc=0 started
  mount -t tmpfs -o mode=0755 tmpfs /run && mkdir -p /run/systemd/system || { fail "no private /run"; return 1; }
  mkdir -p "$T/bin"
  node_fake_systemctl "$REPO_DIR/dist/systemd/kubelet.service.d/10-kjoin.conf"
  cat >"$T/join.yaml" <<CFG
$(node_join_config_head 120s)
nodeRegistration:
  name: e2e-looping
  criSocket: "$NODE_CRI"
  ignorePreflightErrors: [$NODE_IGNORE]
  kubeletExtraArgs:
$( [ "$E2E_MINOR" -ge 31 ] && printf '  - {name: no-such-kubelet-flag, value: "1"}\n' || printf '    no-such-kubelet-flag: "1"\n')
CFG
  started=$(date +%s)
  PATH=$T/bin:$PATH "$KJOIN" join --config "$T/join.yaml" >"$T/join.out" 2>"$T/join.err"
  JOIN_RC=$?
  local took=$(($(date +%s) - started))
  [ "$JOIN_RC" = 3 ] || { fail "exit $JOIN_RC, want 3: $(tail -2 "$T/join.err")"; rc=1; }
  [ "$took" -lt 60 ] || { fail "it took ${took} s, the deadline's half"; rc=1; }
  join_err "the kubelet keeps exiting: systemd restarted it" || rc=1
  join_err "no-such-kubelet-flag" || rc=1 # the kubelet's own error, from the journal
  PATH=$T/bin:$PATH "$KJOIN" reset >"$T/reset.out" 2>&1 || { fail "reset: $(tail -2 "$T/reset.out")"; rc=1; }
  [ ! -s "$T/kubelet.pid" ] || { fail "the kubelet still runs after reset"; kill -- "-$(cat "$T/kubelet.pid")"; rc=1; }
  nothing_written || rc=1
  return $rc
}
# The same kubelet without systemd: the operator runs the printed command,
# which sends the kubelet's output to --kubelet-log's file; the kubelet
# exits, nothing starts it again, and the join ends with exit 3 well before
# its deadline, naming the kubelet's own error from that file (not the error
# an earlier kubelet left there). A relative or symlinked log path is refused
# before anything is written.
node_scenario_exits_without_systemd() {
  local rc=0 log=$T/kubelet-out.log
  cat >"$T/join.yaml" <<CFG
$(node_join_config_head 120s)
nodeRegistration:
  name: e2e-exits
  criSocket: "$NODE_CRI"
  ignorePreflightErrors: [$NODE_IGNORE]
  kubeletExtraArgs:
$( [ "$E2E_MINOR" -ge 31 ] && printf '  - {name: no-such-kubelet-flag, value: "1"}\n' || printf '    no-such-kubelet-flag: "1"\n')
CFG
  "$KJOIN" join --config "$T/join.yaml" --kubelet-log kubelet.log >"$T/join.out" 2>"$T/join.err"
  [ $? = 2 ] && join_err "must be an absolute path" || rc=1
  "$KJOIN" join phase kubelet-wait-bootstrap --node-name e2e-exits --kubelet-log kubelet.log >"$T/join.out" 2>"$T/join.err"
  [ $? = 2 ] && join_err "must be an absolute path" || rc=1 # the wait alone checks it too
  ln -s "$T/elsewhere.log" "$T/link.log"
  "$KJOIN" join --config "$T/join.yaml" --kubelet-log "$T/link.log" >"$T/join.out" 2>"$T/join.err"
  [ $? = 2 ] && join_err "symbolic link" || rc=1
  [ ! -e "$T/elsewhere.log" ] || { fail "a symlinked log was written through"; rc=1; }
  nothing_written || rc=1
  echo 'E1126 00:00:00.000000 1 run.go:72] "command failed" err="an earlier kubelet'"'"'s error"' >"$log"
  local started pid cmd
  started=$(date +%s)
  : >"$T/join.err" # (not an earlier run's lines: see node_join)
  "$KJOIN" join --config "$T/join.yaml" --kubelet-log "$log" >"$T/join.out" 2>"$T/join.err" &
  pid=$!
  cmd=$(kubelet_command "$pid")
  [[ "$cmd" == *" >>$log 2>&1" || "$cmd" == *" >>'$log' 2>&1" ]] || { fail "the start command does not send the output to the log: $cmd"; rc=1; }
  [ -n "$cmd" ] && eval "$cmd" </dev/null
  wait "$pid"; JOIN_RC=$?
  local took=$(($(date +%s) - started))
  [ "$JOIN_RC" = 3 ] || { fail "exit $JOIN_RC, want 3: $(tail -2 "$T/join.err")"; rc=1; }
  [ "$took" -lt 60 ] || { fail "it took ${took} s, the deadline's half"; rc=1; }
  join_err "the kubelet exited, and nothing started it again" || rc=1
  join_err "no-such-kubelet-flag" || rc=1 # the kubelet's own error, from its log
  "$KJOIN" reports --kubeconfig "$E2E_ADMIN" --node e2e-exits -o json | jq -e '.reports[0] |
      .phase == "kubelet-wait-bootstrap" and .exitCode == 3 and (.kubelet | contains("no-such-kubelet-flag"))' >/dev/null ||
    { fail "the report lacks the kubelet's error: $("$KJOIN" reports --kubeconfig "$E2E_ADMIN" --node e2e-exits -o json | head -c 500)"; rc=1; }
  ! grep -q "an earlier kubelet" "$T/join.err" || { fail "the earlier kubelet's error was taken for this one's"; rc=1; }
  "$KJOIN" reset >"$T/reset.out" 2>&1 || { fail "reset: $(tail -2 "$T/reset.out")"; rc=1; }
  nothing_written || rc=1
  return $rc
}
t_e2e_node_kubelet_without_systemd_exits_and_ends_the_wait() { on_node node_scenario_exits_without_systemd e2e-exits; }

t_e2e_node_crash_looping_kubelet_ends_the_wait() {
  REPO_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  on_node node_scenario_crash_loop e2e-looping
}


# ---- the same node as kubeadm's (docs/join.md, "What kubeadm writes") ----

# The patches an operator keeps for kubeadm: one of each type.
node_patches() {
  mkdir -p "$1"
  printf 'maxPods: 50\nevictionHard: {memory.available: 150Mi}\n' >"$1/kubeletconfiguration0.yaml"
  printf 'systemReserved: {cpu: 100m}\nevictionHard: {nodefs.available: 7%%}\n' >"$1/kubeletconfiguration1+merge.yaml"
  printf -- '- {op: add, path: /kubeReserved, value: {memory: 64Mi}}\n- {op: replace, path: /maxPods, value: 60}\n' \
    >"$1/kubeletconfiguration2+json.yaml"
  printf 'spec: {}\n' >"$1/kube-apiserver.yaml"
}

# kubelet-start by KUBEADM or kjoin (TOOL), with the same arguments (or
# NODE_CONFIG, a JoinConfiguration), in a node of its own ($T/ns-TOOL).
# kubeadm's phase goes on to wait for the kubelet (its health, its
# bootstrap): it is stopped once it says it starts it, every file written
# before that line in each release.
node_kubelet_start() {
  local args=("$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN"
    --node-name cmp-node --cri-socket "$NODE_CRI" ${NODE_PATCHES:+--patches "$NODE_PATCHES"})
  [ -z "${NODE_CONFIG:-}" ] || args=(--config "$NODE_CONFIG") # a JoinConfiguration both read (a control-plane node's)
  if [ "$NODE_TOOL" = kubeadm ]; then
    [ -n "${NODE_PATCHES:-}" ] && [ "$E2E_MINOR" -lt 25 ] && return 0
    : >"$T/kubeadm-start.out" # there, and empty, before the loop reads it (see node_join)
    "${NODE_KUBEADM:-$KBIN/kubeadm}" join phase kubelet-start "${args[@]}" >"$T/kubeadm-start.out" 2>&1 &
    local pid=$! i
    for i in $(seq 600); do
      e2e_alive "$pid" && ! grep -q -e "Waiting for the kubelet to perform the TLS Bootstrap" -e "^\[kubelet-start\] Starting the kubelet" \
        "$T/kubeadm-start.out" || break
      sleep 0.1
    done
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    [ -e /var/lib/kubelet/kubeadm-flags.env ] || { fail "kubeadm wrote no flags file: $(tail -3 "$T/kubeadm-start.out")"; return 1; }
  else
    "$KJOIN" ${NODE_KJOIN_START:-join phase kubelet-start} "${args[@]}" >"$T/kjoin-start.out" 2>&1 ||
      { fail "kjoin's kubelet-start: $(tail -3 "$T/kjoin-start.out")"; return 1; }
  fi
}

# compare_trees KUBEADM KJOIN: the two nodes' upper layers: names and modes
# (kjoin's directories may be stricter), config.yaml, instance-config.yaml
# and the bootstrap kubeconfig parsed (client-go 1.20's empty "preferences"
# aside), the flags file and the CA byte for byte. kjoin's join record is
# the one extra file. Prints each difference.
compare_trees() {
  python3 - "$1" "$2" <<'PY'
import os, stat, sys, yaml
roots = {"/etc/kubernetes": "etc.upper/kubernetes", "/var/lib/kubelet": "lib.upper/kubelet"}
def tree(base):
    out = {}
    for shown, rel in roots.items():
        top = os.path.join(base, rel)
        for d, dirs, files in os.walk(top):
            for n in dirs + files:
                p = os.path.join(d, n)
                out[shown + p[len(top):]] = os.lstat(p)
    return out
a, b = tree(sys.argv[1]), tree(sys.argv[2])
bad = []
extra = set(b) - set(a) - {"/etc/kubernetes/kjoin-join.json"}
if set(a) - set(b): bad.append("kjoin lacks %s" % sorted(set(a) - set(b)))
if extra: bad.append("kjoin writes more: %s" % sorted(extra))
for p in sorted(set(a) & set(b)):
    ma, mb = stat.S_IMODE(a[p].st_mode), stat.S_IMODE(b[p].st_mode)
    if stat.S_ISDIR(a[p].st_mode) != stat.S_ISDIR(b[p].st_mode):
        bad.append("%s: a directory in one tree only" % p)
    elif ma != mb and not (stat.S_ISDIR(a[p].st_mode) and mb & ~ma == 0):
        bad.append("%s: mode %04o, kubeadm's %04o" % (p, mb, ma))
def first_difference(x, y, where=""):
    if isinstance(x, dict) and isinstance(y, dict):
        for k in sorted(set(x) | set(y), key=str):
            if k not in y: return "%s.%s: kjoin lacks it" % (where, k)
            if k not in x: return "%s.%s: kjoin adds %r" % (where, k, y[k])
            d = first_difference(x[k], y[k], "%s.%s" % (where, k))
            if d: return d
        return None
    return None if x == y else "%s: kjoin %r, kubeadm %r" % (where or ".", y, x)
for p in sorted(set(a) & set(b)):
    if stat.S_ISDIR(a[p].st_mode): continue
    fa = [os.path.join(sys.argv[1], roots[r] + p[len(r):]) for r in roots if p.startswith(r + "/")][0]
    fb = [os.path.join(sys.argv[2], roots[r] + p[len(r):]) for r in roots if p.startswith(r + "/")][0]
    ta, tb = open(fa, "rb").read(), open(fb, "rb").read()
    if p.endswith(".yaml") or p.endswith(".conf"):
        ya, yb = yaml.safe_load(ta), yaml.safe_load(tb)
        # client-go before 1.2x wrote an empty "preferences: {}"; it means nothing.
        for y in (ya, yb):
            if isinstance(y, dict) and y.get("preferences") == {}: del y["preferences"]
        d = first_difference(ya, yb)
        if d: bad.append("%s %s" % (p, d))
    elif ta != tb:
        bad.append("%s differs: kjoin %r, kubeadm %r" % (p, tb[:300], ta[:300]))
for line in bad: print(line)
sys.exit(1 if bad else 0)
PY
}

node_same_files_as_kubeadm() {
  local patches=${1:-} rc=0 tool
  node_setup || return 1
  [ -n "$patches" ] && node_patches "$T/patches"
  # A cluster kubeadm v1.20 made holds the configuration as that kubeadm
  # writes it (defaulted); the run's own is put back after.
  local saved=$T/kubelet-config.json
  [ "$E2E_MINOR" -ge 24 ] || { kc -n kube-system get configmap "$NODE_CM" -o json >"$saved" && e2e_upload_kubelet_config; } || return 1
  for tool in kubeadm kjoin; do
    NODE_NS=ns-$tool NODE_TOOL=$tool NODE_PATCHES=${patches:+$T/patches} in_node node_kubelet_start || rc=1
  done
  [ "$E2E_MINOR" -ge 24 ] || jq 'del(.metadata.resourceVersion)' "$saved" | kc replace -f - >/dev/null || { fail "the ConfigMap was not put back"; rc=1; }
  [ $rc = 0 ] || return 1
  if [ -n "$patches" ] && [ "$E2E_MINOR" -lt 25 ]; then
    # kubeadm before 1.25 has no kubeletconfiguration target: kjoin applies it all the same.
    grep -q "^maxPods: 60$" "$T/ns-kjoin/lib.upper/kubelet/config.yaml" || { fail "the patches did not reach config.yaml"; return 1; }
    return 0
  fi
  local diff
  diff=$(compare_trees "$T/ns-kubeadm" "$T/ns-kjoin") ||
    { fail "kubeadm $("${NODE_KUBEADM:-$KBIN/kubeadm}" version -o short) and kjoin leave different nodes: $diff"; return 1; }
  if [ -n "$patches" ]; then
    grep -q "^maxPods: 60$" "$T/ns-kjoin/lib.upper/kubelet/config.yaml" &&
      grep -q "Applied patch of type \"json\" from kubeletconfiguration2+json.yaml" "$T/kjoin-start.out" ||
      { fail "the patches were not applied in order"; return 1; }
    [ "$(grep -c "do not apply to a worker" "$T/kjoin-start.out")" = 1 ] || { fail "the control-plane patch was not reported once"; return 1; }
  fi
}
t_e2e_node_kubelet_start_writes_what_kubeadm_writes() { node_same_files_as_kubeadm; }
t_e2e_node_kubelet_start_patches_as_kubeadm() { node_same_files_as_kubeadm patches; }

# kjoin sync: the cluster's kubelet configuration changed, --check says
# what differs (exit 11) and changes nothing, the Node's labels say
# "drifted"; sync writes it (exit 10) and records it (reset removes the new
# file); kubeadm upgrade node phase kubelet-config then writes the same
# configuration (by meaning) and sync --check finds nothing.
node_scenario_sync() {
  local rc=0 patches=()
  # kubeadm has patches for the kubelet's configuration from 1.25.
  [ "$E2E_MINOR" -lt 25 ] || patches=(--patches "$T/patches")
  # the join's own kubelet flags (kubeletExtraArgs) and patches, which sync keeps
  cat >"$T/join.yaml" <<CFG
apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
discovery:
  bootstrapToken: {token: abcdef.0123456789abcdef, apiServerEndpoint: "$E2E_ENDPOINT", caCertHashes: ["$E2E_PIN"]}
nodeRegistration:
  name: e2e-sync
  criSocket: "$NODE_CRI"
  ignorePreflightErrors: [$NODE_IGNORE]
  kubeletExtraArgs: [{name: node-labels, value: sync=yes}]
$([ "${#patches[@]}" = 0 ] || echo "patches: {directory: $T/patches}")
CFG
  node_join --config "$T/join.yaml" || return 1
  [ "$JOIN_RC" = 0 ] || { fail "join: exit $JOIN_RC: $(tail -3 "$T/join.err")"; kubelet_down; return 1; }
  # Whatever fails, the kubelet stops and the cluster's ConfigMap is put back.
  local saved=$T/sync-cm.json
  kc -n kube-system get configmap "$NODE_CM" -o json >"$saved" && node_sync_steps || rc=1
  jq 'del(.metadata.resourceVersion)' "$saved" | kc replace -f - >/dev/null || { fail "the ConfigMap was not put back"; rc=1; }
  kubelet_down
  return $rc
}
node_sync_steps() {
  local rc=0
  sync_run() { local want=$1; shift; "$KJOIN" sync "$@" >"$T/sync.out" 2>"$T/sync.err"; local got=$?
    [ "$got" = "$want" ] || { fail "kjoin sync $*: exit $got, not $want: $(tail -c 600 "$T/sync.out") $(tail -3 "$T/sync.err")"; return 1; }; }
  label() { kc get node e2e-sync -o jsonpath="{.metadata.labels.kjoin\.io/kubelet-config}"; }
  sync_run 0 --check -o json || rc=1
  jq -e '.state == "in-sync" and (.drift | not) and .labeled and (.files | length) >= 2
      and all(.files[]; .differs | not) and (.hash | length) == 64 and .flagsKept == false' "$T/sync.out" >/dev/null &&
    [ "$(label)" = in-sync ] || { fail "a node just joined is not in sync: $(cat "$T/sync.out") label $(label)"; rc=1; }
  # A cluster kubeadm v1.20 made holds the configuration as that kubeadm
  # writes it (defaulted): its upgrade phase's (this run's is made by hand).
  local cm=$T/sync-cm-now.json
  cp "$saved" "$cm"
  if [ "$E2E_MINOR" -lt 24 ]; then
    "$KBIN/kubeadm" upgrade node phase kubelet-config >"$T/upgrade.out" 2>&1 &&
      jq --rawfile k /var/lib/kubelet/config.yaml '.data.kubelet = $k' "$saved" >"$cm" ||
      { fail "kubeadm's defaulted configuration: $(tail -3 "$T/upgrade.out")"; return 1; }
  fi
  jq '.data.kubelet |= sub("imageGCLowThresholdPercent: 99"; "imageGCLowThresholdPercent: 97") | del(.metadata.resourceVersion)' "$cm" |
    kc replace -f - >/dev/null || { fail "the ConfigMap was not changed"; return 1; }
  local before
  before=$(node_dirs)
  sync_run 11 --check || rc=1
  grep -q "imageGCLowThresholdPercent: 99 -> 97" "$T/sync.out" && grep -q "drifted" "$T/sync.out" &&
    [ "$(node_dirs)" = "$before" ] && [ "$(label)" = drifted ] &&
    [ "$(kc get node e2e-sync -o jsonpath='{.metadata.annotations.kjoin\.io/kubelet-config-drift}')" = config.yaml ] ||
    { fail "sync --check: $(cat "$T/sync.out") label $(label)"; rc=1; }
  # Without systemd there is nothing to restart it with: refused before any write.
  sync_run 2 --restart && grep -q "needs systemd" "$T/sync.err" && [ "$(node_dirs)" = "$before" ] ||
    { fail "sync --restart without systemd: $(cat "$T/sync.err")"; rc=1; }
  sync_run 10 -o json || rc=1
  jq -e '.written and .drift and .state == "restart-needed" and .files[0].written' "$T/sync.out" >/dev/null &&
    grep -q "^imageGCLowThresholdPercent: 97$" /var/lib/kubelet/config.yaml && [ "$(label)" = restart-needed ] &&
    [ "$(stat -c %a /var/lib/kubelet/config.yaml)" = 644 ] ||
    { fail "sync: $(cat "$T/sync.out") label $(label)"; rc=1; }
  [ "${#patches[@]}" = 0 ] || grep -q "^maxPods: 60$" /var/lib/kubelet/config.yaml || { fail "sync lost the join's patches"; rc=1; }
  grep -q -- "--node-labels=sync=yes" /var/lib/kubelet/kubeadm-flags.env || { fail "sync lost the join's kubelet flags"; rc=1; }
  # recorded: reset knows the file sync wrote as the join's
  [ "$(jq -r '.files[] | select(.path == "/var/lib/kubelet/config.yaml") | .sha256' /etc/kubernetes/kjoin-join.json)" = \
    "$(sha256sum /var/lib/kubelet/config.yaml | cut -d' ' -f1)" ] && jq -e '.kubeletSync.at' /etc/kubernetes/kjoin-join.json >/dev/null ||
    { fail "the record does not hold what sync wrote: $(jq -c '.files, .kubeletSync' /etc/kubernetes/kjoin-join.json)"; rc=1; }
  sync_run 0 --check || rc=1
  # kubeadm's own phase on the synced node: the same configuration.
  cp /var/lib/kubelet/config.yaml "$T/synced.yaml"
  "$KBIN/kubeadm" upgrade node phase kubelet-config "${patches[@]}" >"$T/upgrade.out" 2>&1 ||
    { fail "kubeadm upgrade node phase kubelet-config: $(tail -4 "$T/upgrade.out")"; rc=1; }
  python3 -c 'import sys, yaml; a, b = (yaml.safe_load(open(f)) for f in sys.argv[1:]); sys.exit(a != b)' \
    "$T/synced.yaml" /var/lib/kubelet/config.yaml || { fail "kubeadm upgrade node changed the synced configuration: $(diff "$T/synced.yaml" /var/lib/kubelet/config.yaml | head -8)"; rc=1; }
  sync_run 0 --check -o json || rc=1
  return $rc
}
t_e2e_node_sync_keeps_the_kubelet_configuration_to_the_clusters() {
  node_patches "$T/patches"
  on_node node_scenario_sync e2e-sync
}

# --dry-run, as kubeadm's: preflight, discovery and the cluster checks run
# for real, every file is shown (the token masked, the runtime where this
# release's kubeadm puts it), nothing is written or started; a patch that
# does not apply is exit 2 before anything is written, dry or not.
node_scenario_dry_run() {
  local rc=0
  join_as e2e-dry --dry-run || return 1
  [ "$JOIN_RC" = 0 ] && nothing_written && [ -z "${KUBELET_PID:-}" ] ||
    { fail "dry run: exit $JOIN_RC, or it wrote or started something: $(tail -3 "$T/join.err")"; rc=1; }
  local f
  for f in /etc/kubernetes/kjoin-join.json /etc/kubernetes/bootstrap-kubelet.conf /var/lib/kubelet/config.yaml \
           /var/lib/kubelet/kubeadm-flags.env /etc/kubernetes/pki/ca.crt; do
    grep -qF "[dryrun] Would write file \"$f\"" "$T/join.out" || { fail "the dry run does not show $f"; rc=1; }
  done
  grep -q $'^\t    token: abcdef[.][*]\{16\}$' "$T/join.out" || { fail "the token is not shown masked"; rc=1; }
  if [ "$E2E_MINOR" -ge 34 ]; then
    grep -qF $'\tcontainerRuntimeEndpoint: "'"$NODE_CRI"'"' "$T/join.out" || { fail "no instance configuration shown"; rc=1; }
  else
    grep -qF -- "--container-runtime-endpoint=$NODE_CRI" "$T/join.out" || { fail "no runtime flag shown"; rc=1; }
  fi
  join_as e2e-dry --dry-run -o json || return 1
  cp "$T/join.out" "$T/dry.json"
  jq -e '.dryRun and (.wouldWrite | length >= 5) and ([.node.phases[].name] == ["preflight","kubelet-start"])
      and (.wouldWrite[] | select(.path == "/var/lib/kubelet/config.yaml") | .mode == "0644" and (.content | test("maxPods: 42")))' \
    "$T/join.out" >/dev/null || { fail "dry run json: $(head -c 600 "$T/join.out")"; rc=1; }
  # Every file goes under the dry run's one root: the record it shows names the node's paths, never the root.
  jq -e '.wouldWrite[] | select(.path == "/etc/kubernetes/kjoin-join.json") | .content |
      (contains("/var/lib/kubelet/config.yaml") and (contains("kjoin-join-dryrun") | not))' "$T/join.out" >/dev/null ||
    { fail "dry run's record: $(jq -c '.wouldWrite[0]' "$T/join.out" | head -c 400)"; rc=1; }
  # A CA of another cluster on the node (preflight's finding ignored): kubelet-start's dry run refuses it as
  # the join's does (exit 5, naming it), the node's as it was; once the node's CA is the cluster's, the dry run shows all but it.
  if [ ! -e /etc/kubernetes/pki ]; then
    local made=/etc/kubernetes/pki code
    [ -e /etc/kubernetes ] || made=/etc/kubernetes
    mkdir -p /etc/kubernetes/pki && echo "another cluster's" >/etc/kubernetes/pki/ca.crt
    join_as e2e-dry --ignore-preflight-errors FileAvailable--etc-kubernetes-pki-ca.crt || return 1
    code=$JOIN_RC
    join_as e2e-dry --ignore-preflight-errors FileAvailable--etc-kubernetes-pki-ca.crt --dry-run || return 1
    [ "$code" = 5 ] && [ "$JOIN_RC" = 5 ] && join_err "/etc/kubernetes/pki/ca.crt" &&
      [ "$(cat /etc/kubernetes/pki/ca.crt)" = "another cluster's" ] && [ -z "${KUBELET_PID:-}" ] ||
      { fail "a dry run over another CA: exit $JOIN_RC, the join's $code: $(grep -e ERROR -e ca.crt "$T/join.err" | tail -3)"; rc=1; }
    jq -j '.wouldWrite[] | select(.path == "/etc/kubernetes/pki/ca.crt") | .content' "$T/dry.json" >/etc/kubernetes/pki/ca.crt
    join_as e2e-dry --ignore-preflight-errors FileAvailable--etc-kubernetes-pki-ca.crt --dry-run -o json || return 1
    [ "$JOIN_RC" = 0 ] && jq -e '[.wouldWrite[].path] | index("/etc/kubernetes/pki/ca.crt") == null and
        index("/var/lib/kubelet/config.yaml") != null' "$T/join.out" >/dev/null ||
      { fail "a dry run over the cluster's CA: exit $JOIN_RC: $(jq -c '[.wouldWrite[]?.path]' "$T/join.out")"; rc=1; }
    rm -rf "$made"
  fi
  # The checks are real: preflight's refusals fail a dry run as they fail the join.
  join_as e2e-dry --dry-run --cri-socket "$T/none.sock" || return 1
  [ "$JOIN_RC" = 2 ] && join_err "ERROR CRI:" && [ ! -s "$T/join.out" ] || { fail "a dry run without a runtime: exit $JOIN_RC"; rc=1; }
  # Patches that do not apply, or do not parse: exit 2, nothing written.
  mkdir -p "$T/bad1" "$T/bad2" "$T/bad3"
  printf -- '- {op: remove, path: /noSuchField}\n' >"$T/bad1/kubeletconfiguration+json.yaml"
  printf 'maxPods: [\n' >"$T/bad2/kubeletconfiguration.yaml"
  printf 'maxPods: 3\n' >"$T/bad3/kubeletconfiguration+stratgic.yaml"
  local d want
  for d in bad1 bad2 bad3; do
    case $d in
      bad1) want="the json patch in kubeletconfiguration+json.yaml does not apply" ;;
      bad2) want="the patch file kubeletconfiguration.yaml: YAML error" ;;
      bad3) want="unknown or missing patch type after '+'" ;;
    esac
    join_as e2e-dry --patches "$T/$d" || return 1
    [ "$JOIN_RC" = 2 ] && join_err "$want" && nothing_written && [ -z "${KUBELET_PID:-}" ] ||
      { fail "patches $d: exit $JOIN_RC: $(tail -2 "$T/join.err")"; rc=1; }
  done
  return $rc
}
t_e2e_node_dry_run_shows_every_file_and_bad_patches_write_nothing() { on_node node_scenario_dry_run e2e-dry; }

# A join that fails once discovery established trust files a join report
# the cluster keeps (kjoin reports, kubectl get csr -l kjoin.io/join-report):
# its join ID, phase, exit code, reason and token ID, no secret. One refused
# before trust (a wrong pin) files none, nor does --no-report.
node_reports() { "$KJOIN" reports --kubeconfig "$E2E_ADMIN" --node e2e-report "$@"; }
node_scenario_reports() {
  local rc=0 id ignore=(--ignore-preflight-errors "FileAvailable--etc-kubernetes-pki-ca.crt")
  node_join "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "sha256:$(printf '%064d' 0)" \
    --node-name e2e-report --cri-socket "$NODE_CRI" --ignore-preflight-errors "$NODE_IGNORE" --discovery-timeout 5s -o json ||
    return 1
  [ "$JOIN_RC" = 4 ] && jq -e '.error.reported == false' "$T/join.out" >/dev/null &&
    [ "$(node_reports -o json | jq '.reports | length')" = 0 ] ||
    { fail "a join refused before trust: exit $JOIN_RC, $(node_reports -o json | head -c 300)"; rc=1; }
  [ ! -e /etc/kubernetes/pki ] || { fail "the machine has /etc/kubernetes/pki: the scenario plants its own CA there"; return 1; }
  local made=/etc/kubernetes/pki
  [ -e /etc/kubernetes ] || made=/etc/kubernetes
  mkdir -p /etc/kubernetes/pki && echo "another cluster's" >/etc/kubernetes/pki/ca.crt
  # A watch started before the join prints its report as it comes (a JSON line).
  node_reports --watch -o json --timeout 60s >"$T/watch.out" 2>"$T/watch.err" &
  local watch=$!
  join_as e2e-report "${ignore[@]}" -o json || { kill "$watch"; wait "$watch"; return 1; }
  id=$(jq -r '.error.joinID' "$T/join.out")
  e2e_wait 15 grep -q "\"joinID\":\"$id\"" "$T/watch.out" && [ "$(wc -l <"$T/watch.out")" = 1 ] ||
    { fail "the watch: $(cat "$T/watch.out" "$T/watch.err" | head -c 400)"; rc=1; }
  kill "$watch" 2>/dev/null; wait "$watch" 2>/dev/null
  [ "$JOIN_RC" = 5 ] && jq -e '.error.reported and .error.phase == "kubelet-start"' "$T/join.out" >/dev/null ||
    { fail "refused in kubelet-start: exit $JOIN_RC: $(head -c 400 "$T/join.out")"; rc=1; }
  node_reports -o json >"$T/reports.json" || rc=1
  jq -e --arg id "$id" '.reports | length == 1 and (.[0] | .joinID == $id and .phase == "kubelet-start" and .exitCode == 5
      and .tokenID == "abcdef" and (.reason | contains("/etc/kubernetes/pki/ca.crt")) and .version != "")' \
    "$T/reports.json" >/dev/null || { fail "kjoin reports -o json: $(head -c 600 "$T/reports.json")"; rc=1; }
  node_reports >"$T/reports.txt" || rc=1
  head -1 "$T/reports.txt" | grep -q '^NODE  *PHASE  *EXIT  *AGE  *REASON$' &&
    grep -Eq '^e2e-report +kubelet-start +5 +[0-9]+s +.*ca\.crt' "$T/reports.txt" ||
    { fail "kjoin reports: $(cat "$T/reports.txt")"; rc=1; }
  kc get csr -l kjoin.io/join-report -o json >"$T/report.csr" &&
    jq -e --arg n "kjoin-report-$id" '.items[] | select(.metadata.name == $n) | .spec.signerName == "kjoin.io/join-report"
        and (.status.conditions == null)' "$T/report.csr" >/dev/null && ! grep -q 0123456789abcdef "$T/report.csr" ||
    { fail "kubectl get csr -l kjoin.io/join-report: $(head -c 400 "$T/report.csr")"; rc=1; }
  join_as e2e-report "${ignore[@]}" --no-report -o json || return 1
  [ "$JOIN_RC" = 5 ] && jq -e '.error.reported == false' "$T/join.out" >/dev/null &&
    [ "$(node_reports -o json | jq '.reports | length')" = 1 ] || { fail "--no-report: exit $JOIN_RC, reported anyway"; rc=1; }
  rm -rf "$made"
  return $rc
}
t_e2e_node_failed_join_reports_to_the_cluster() { on_node node_scenario_reports e2e-report; }

# kubeadm's own lifecycle tools on a node kjoin joined: `kubeadm upgrade
# node` finds the node's runtime where this release's kubeadm keeps it
# (instance-config.yaml, or the Node's annotation) and exits 0; kjoin reset
# after it removes what still holds what the join wrote and names what
# kubeadm rewrote; `kubeadm reset` cleans a kjoin node whole.
node_scenario_kubeadm_lifecycle() {
  local rc=0 before=$NODE_BEFORE
  join_as e2e-lifecycle --patches "$T/patches" || return 1
  [ "$JOIN_RC" = 0 ] || { fail "join: exit $JOIN_RC: $(tail -3 "$T/join.err")"; kubelet_down; return 1; }
  # kubeadm has patches for the kubelet's configuration from 1.25.
  local patches=()
  [ "$E2E_MINOR" -lt 25 ] || patches=(--patches "$T/patches")
  "$KBIN/kubeadm" upgrade node phase kubelet-config "${patches[@]}" >"$T/upgrade.out" 2>&1 ||
    { fail "kubeadm upgrade node phase kubelet-config: $(tail -4 "$T/upgrade.out")"; rc=1; }
  ! grep -qiE "not found. Creating a new one with defaults|(does not|doesn.t) have .*cri-socket|could not|guess" "$T/upgrade.out" ||
    { fail "kubeadm upgrade node guessed: $(grep -iE 'not found|cri-socket|could not|guess' "$T/upgrade.out" | head -2)"; rc=1; }
  if [ "$E2E_MINOR" -ge 34 ]; then
    grep -q "^containerRuntimeEndpoint: \"*$NODE_CRI\"*$" /var/lib/kubelet/config.yaml ||
      { fail "after kubeadm upgrade node the runtime is not the node's: $(grep -i runtime /var/lib/kubelet/config.yaml)"; rc=1; }
  fi
  [ "$E2E_MINOR" -lt 25 ] || grep -q "^maxPods: 60$" /var/lib/kubelet/config.yaml || { fail "kubeadm upgrade node lost the patches"; rc=1; }
  kubelet_down
  "$KJOIN" reset -o json >"$T/reset.json" 2>"$T/reset.err" || { fail "kjoin reset: $(tail -3 "$T/reset.err")"; rc=1; }
  # What kubeadm rewrote (config.yaml) is named and left, with the
  # directories that hold it and kubeadm's own backup (/etc/kubernetes/tmp);
  # everything else of the join goes.
  local left
  left=$(jq -r '.left[]' "$T/reset.json" | grep -v ": changed since the join wrote it$\|: not empty: it holds files the join did not make$" || true)
  [ -z "$left" ] && jq -e '.joined and (.removed | index("/etc/kubernetes/kjoin-join.json") != null)
      and (.removed | index("/etc/kubernetes/kubelet.conf") != null)
      and (.left | index("/var/lib/kubelet/config.yaml: changed since the join wrote it") != null)' "$T/reset.json" >/dev/null ||
    { fail "kjoin reset after kubeadm upgrade node: $(cat "$T/reset.json")"; rc=1; }
  local rest
  rest=$(find /etc/kubernetes /var/lib/kubelet -mindepth 1 2>/dev/null | grep -v "^/etc/kubernetes/tmp\(/.*\)\?$\|^/var/lib/kubelet/config.yaml$" || true)
  [ -z "$rest" ] || { fail "kjoin reset left more than kubeadm's files: $(echo $rest | head -c 400)"; rc=1; }
  rm -rf /etc/kubernetes/tmp /var/lib/kubelet/config.yaml
  # kubeadm reset on a kjoin node: the node's files go, as after kubeadm join.
  join_as e2e-lifecycle || return 1
  [ "$JOIN_RC" = 0 ] || { fail "second join: exit $JOIN_RC: $(tail -3 "$T/join.err")"; kubelet_down; return 1; }
  kubelet_down
  "$KBIN/kubeadm" reset -f --cri-socket "$NODE_CRI" >"$T/kreset.out" 2>&1 || { fail "kubeadm reset: $(tail -4 "$T/kreset.out")"; rc=1; }
  # It leaves kjoin's join record alone (it does not know it); kjoin reset
  # then takes that, and a join after it is a new join.
  rest=$(find /etc/kubernetes /var/lib/kubelet -mindepth 1 2>/dev/null | grep -v "^/etc/kubernetes/manifests$\|^/etc/kubernetes/pki$" || true)
  [ "$rest" = /etc/kubernetes/kjoin-join.json ] || { fail "kubeadm reset left: $(echo $rest | head -c 400)"; rc=1; }
  "$KJOIN" reset -o json >"$T/reset2.json" 2>"$T/reset.err" && [ ! -e /etc/kubernetes/kjoin-join.json ] &&
    jq -e '.left == []' "$T/reset2.json" >/dev/null || { fail "kjoin reset after kubeadm reset: $(cat "$T/reset2.json" "$T/reset.err")"; rc=1; }
  return $rc
}
t_e2e_node_kubeadm_upgrade_node_and_reset_take_a_kjoin_node() {
  node_patches "$T/patches"
  on_node node_scenario_kubeadm_lifecycle e2e-lifecycle
}
