# The real control plane for the e2e tests, of one of two releases
# (E2E_RELEASE): "oldest", v1.20.2 built from Debian's kubernetes source
# package (scripts/kube-build.sh), or "newest", the release tests/kube/go.mod
# pins, built from Go modules (scripts/kube-build-mod.sh); both cached per
# machine. etcd is Debian's, or the release's own when the build made one.
# Sourced; cluster_up starts everything on free loopback ports with a PKI made
# here, and cluster_down stops every process it started, by pid.
#
# After cluster_up: E2E_DIR, E2E_SERVER (https://127.0.0.1:PORT),
# E2E_ENDPOINT (127.0.0.1:PORT), E2E_ADMIN (admin kubeconfig, system:masters),
# E2E_CA (cluster CA), E2E_PIN (its sha256: pin), KBIN (the binaries),
# E2E_VERSION (v1.37.2), E2E_MINOR (37), E2E_NEWEST_MINOR (the minor tests/kube/go.mod
# pins) and KUBECTL (the release's kubectl).

E2E_PIDS=()
KBIN=${KBIN:-}

e2e_bins() {
  local scripts; scripts=$(dirname "${BASH_SOURCE[0]}")/../../scripts
  if [ -z "$KBIN" ]; then
    case ${E2E_RELEASE:-oldest} in
      oldest) KBIN=$(bash "$scripts/kube-build.sh") ;;
      newest) KBIN=$(bash "$scripts/kube-build-mod.sh") ;;
      v1.*) KBIN=$(bash "$scripts/kube-build-release.sh" "$E2E_RELEASE" kubeadm kube-apiserver kube-controller-manager \
        kube-scheduler kubelet kubectl) ;; # a middle release (make test-release)
      *) echo "e2e: E2E_RELEASE is oldest, newest or a version (v1.36.3)" >&2; return 1 ;;
    esac || return 1
  fi
  # The suite's Go drivers (tests/kube) are built with the newest release.
  E2E_DRIVERS=$(bash "$scripts/kube-build-mod.sh" drivers) || return 1
  E2E_VERSION=$("$KBIN/kubeadm" version -o short) || return 1
  E2E_MINOR=${E2E_VERSION#v1.}; E2E_MINOR=${E2E_MINOR%%.*}
  # The newest release from the one place that pins it: a bump of the pin
  # moves every "newest only" test with it, never leaves them skipped.
  E2E_NEWEST_MINOR=$(sed -nE 's|^\s*k8s\.io/kubernetes v1\.([0-9]+)\.[0-9]+.*|\1|p' \
    "$(dirname "${BASH_SOURCE[0]}")/../kube/go.mod" | head -1)
  [ -n "$E2E_NEWEST_MINOR" ] || { echo "e2e: no k8s.io/kubernetes pin in tests/kube/go.mod" >&2; return 1; }
  # The configuration version each release's kubeadm writes (v1beta2 went in 1.26).
  E2E_KUBEADM_API=kubeadm.k8s.io/v1beta2
  [ "$E2E_MINOR" -ge 31 ] && E2E_KUBEADM_API=kubeadm.k8s.io/v1beta4
  KUBECTL=$KBIN/kubectl
  ETCD=$KBIN/etcd
  [ -x "$ETCD" ] || ETCD=$(command -v etcd) || { echo "e2e: etcd missing (apt-get install etcd-server)" >&2; return 1; }
}

e2e_pki() {
  local d=$1
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$d/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$d/ca.key" -subj "/CN=kubernetes" -days 3650 -out "$d/ca.crt" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign,digitalSignature 2>/dev/null
  e2e_cert "$d" apiserver "/CN=kube-apiserver" serverAuth \
    "IP:127.0.0.1,IP:${E2E_HOST:-127.0.0.1},DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.96.0.1"
  e2e_cert "$d" admin "/O=system:masters/CN=kubernetes-admin" clientAuth ""
  e2e_cert "$d" apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth ""
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$d/sa.key" 2>/dev/null
  openssl pkey -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
}

# e2e_cert DIR NAME SUBJECT EKU SAN: NAME.crt/.key issued by DIR/ca.
e2e_cert() {
  local d=$1 n=$2 subj=$3 eku=$4 san=$5
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$d/$n.key" 2>/dev/null
  openssl req -new -key "$d/$n.key" -subj "$subj" -out "$d/$n.csr" 2>/dev/null
  { printf 'extendedKeyUsage=%s\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n' "$eku"
    [ -n "$san" ] && printf 'subjectAltName=%s\n' "$san"; } >"$d/$n.ext"
  openssl x509 -req -in "$d/$n.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial -days 365 \
    -extfile "$d/$n.ext" -out "$d/$n.crt" 2>/dev/null
}

# e2e_kubeconfig SERVER CA CERT KEY: a kubeconfig with embedded credentials.
e2e_kubeconfig() {
  cat <<KC
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: $1
    certificate-authority-data: $(base64 -w0 <"$2")
users:
- name: admin
  user:
    client-certificate-data: $(base64 -w0 <"$3")
    client-key-data: $(base64 -w0 <"$4")
contexts:
- name: admin@e2e
  context: {cluster: e2e, user: admin}
current-context: admin@e2e
KC
}

# e2e_token_kubeconfig SERVER CA TOKEN: a kubeconfig with a bearer token,
# written directly (no kubectl config: every helper's exit status is its own).
e2e_token_kubeconfig() {
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "%s", certificate-authority-data: %s}\n' \
    "$1" "$(base64 -w0 <"$2")"
  printf 'users:\n- name: sa\n  user: {token: "%s"}\ncontexts:\n- name: c\n  context: {cluster: c, user: sa}\ncurrent-context: c\n' "$3"
}

# e2e_wait SECONDS CMD...: until CMD succeeds.
e2e_wait() {
  local limit=$(($(date +%s) + $1)); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$limit" ] || return 1
    sleep 0.2
  done
}

e2e_alive() { kill -0 "$1" 2>/dev/null; }

# e2e_from MINOR ARGS...: ARGS for releases from 1.MINOR on (flags an older
# release lacks), nothing before.
e2e_from() {
  local minor=$1; shift
  [ "$E2E_MINOR" -ge "$minor" ] && echo "$@"
  return 0
}

# e2e_before MINOR ARGS...: ARGS for releases before 1.MINOR (flags a newer
# release removed), nothing after.
e2e_before() {
  local minor=$1; shift
  [ "$E2E_MINOR" -lt "$minor" ] && echo "$@"
  return 0
}

# e2e_start NAME CMD...: runs CMD in the background, logging to E2E_DIR/NAME.log.
e2e_start() {
  local name=$1; shift
  "$@" >"$E2E_DIR/$name.log" 2>&1 &
  E2E_PIDS+=($!)
  eval "E2E_PID_${name//-/_}=$!"
}

# e2e_restartable NAME CMD...: e2e_start, with the pid in E2E_DIR/NAME.pid
# too, so that cp_stop and cp_start can take the component down and up again
# (from a subshell as well) and cluster_down still stops the one that runs.
e2e_restartable() {
  local name=$1; shift
  "$@" >>"$E2E_DIR/$name.log" 2>&1 &
  echo $! >"$E2E_DIR/$name.pid"
  E2E_PIDS+=($!)
}
# cp_stop NAME / cp_start NAME: a control-plane component goes down, or comes
# back with the same command line on the same port (the API server: ready).
cp_stop() { e2e_stop "$(cat "$E2E_DIR/$1.pid")"; }
cp_start() {
  case $1 in
    kube-apiserver)
      e2e_restartable kube-apiserver "${E2E_APISERVER_CMD[@]}"
      e2e_wait 60 curl -sf --cacert "$E2E_DIR/ca.crt" --cert "$E2E_DIR/admin.crt" --key "$E2E_DIR/admin.key" "$E2E_SERVER/readyz" || return 1
      # A real control plane's controller manager loses its leader lease when
      # the API server is away longer than its renew deadline (10 s), exits,
      # and its kubelet starts it again. The suite's runs without leader
      # election and would live on with informers in back-off (client-go's
      # reflector waits up to a minute, and resets only after two quiet
      # minutes), holding CSRs that long: restart it as the kubelet would
      # (after a shorter outage too: a restart costs nothing here).
      local kcm; kcm=$(cat "$E2E_DIR/kube-controller-manager.pid" 2>/dev/null)
      if [ -n "$kcm" ] && e2e_alive "$kcm"; then cp_stop kube-controller-manager; cp_start kube-controller-manager; fi ;;
    kube-controller-manager) e2e_restartable kube-controller-manager "${E2E_KCM_CMD[@]}" ;;
  esac
}

e2e_try_up() {
  local d=$E2E_DIR port etcd_port peer_port
  port=$("$TOOLS/freeport"); etcd_port=$("$TOOLS/freeport"); peer_port=$("$TOOLS/freeport")
  # E2E_HOST: the address the API server serves on (the node lab's bridge); loopback by default.
  local host=${E2E_HOST:-127.0.0.1}
  E2E_ENDPOINT=$host:$port E2E_SERVER=https://$host:$port
  # (--endpoint-reconciler-type none: releases after 1.20 refuse a loopback
  # advertise address for the kubernetes Service's endpoints; nothing here uses them.)
  rm -rf "$d/etcd"
  e2e_start etcd "$ETCD" --name e2e --data-dir "$d/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "e2e=http://127.0.0.1:$peer_port" --log-level error
  e2e_wait 20 curl -sf "http://127.0.0.1:$etcd_port/health" || return 1
  E2E_APISERVER_CMD=("$KBIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address "$host" --advertise-address "$host" --secure-port "$port" $(e2e_before 24 --insecure-port 0) \
    --tls-cert-file "$d/apiserver.crt" --tls-private-key-file "$d/apiserver.key" --client-ca-file "$d/ca.crt" \
    --kubelet-client-certificate "$d/apiserver-kubelet-client.crt" --kubelet-client-key "$d/apiserver-kubelet-client.key" \
    --service-account-key-file "$d/sa.pub" --service-account-signing-key-file "$d/sa.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local --service-cluster-ip-range 10.96.0.0/12 \
    --authorization-mode Node,RBAC --enable-bootstrap-token-auth --anonymous-auth=true \
    --enable-admission-plugins NodeRestriction --allow-privileged \
    --endpoint-reconciler-type none ${E2E_APISERVER_FLAGS:-})
  e2e_restartable kube-apiserver "${E2E_APISERVER_CMD[@]}"
  e2e_wait 60 curl -sf --cacert "$d/ca.crt" --cert "$d/admin.crt" --key "$d/admin.key" "$E2E_SERVER/readyz" ||
    return 1
  e2e_kubeconfig "$E2E_SERVER" "$d/ca.crt" "$d/admin.crt" "$d/admin.key" >"$d/admin.conf"
  chmod 600 "$d/admin.conf"
  E2E_ADMIN=$d/admin.conf
  E2E_KCM_CMD=("$KBIN/kube-controller-manager" --kubeconfig "$d/admin.conf" \
    --authentication-kubeconfig "$d/admin.conf" --authorization-kubeconfig "$d/admin.conf" \
    --bind-address 127.0.0.1 --secure-port 0 $(e2e_before 24 --port 0) --leader-elect=false \
    --controllers '*,bootstrapsigner,tokencleaner' --use-service-account-credentials \
    --cluster-signing-cert-file "$d/ca.crt" --cluster-signing-key-file "$d/ca.key" --cluster-signing-duration 1h \
    --root-ca-file "$d/ca.crt" --service-account-private-key-file "$d/sa.key" ${E2E_KCM_FLAGS:-})
  e2e_restartable kube-controller-manager "${E2E_KCM_CMD[@]}"
  e2e_alive "$(cat "$d/kube-controller-manager.pid")" || return 1
  # The real kubeadm creates cluster-info and the bootstrap RBAC, as on a real cluster.
  local api=$E2E_KUBEADM_API
  cat >"$d/kubeadm.yaml" <<CFG
apiVersion: $api
kind: InitConfiguration
bootstrapTokens:
- token: abcdef.0123456789abcdef
  ttl: 24h0m0s
  usages: [signing, authentication]
  groups: [system:bootstrappers:kubeadm:default-node-token]
nodeRegistration:
  name: e2e-control-plane
---
apiVersion: $api
kind: ClusterConfiguration
kubernetesVersion: $E2E_VERSION
clusterName: kubernetes
controlPlaneEndpoint: $E2E_ENDPOINT
CFG
  "$KBIN/kubeadm" init phase bootstrap-token --config "$d/kubeadm.yaml" --kubeconfig "$d/admin.conf" \
    >"$d/kubeadm.log" 2>&1 || return 1
  # "upload-config all" would also wait for a Node to annotate (its kubelet
  # sub-phase); no node runs here, so only the kubeadm-config ConfigMap.
  "$KBIN/kubeadm" init phase upload-config kubeadm --config "$d/kubeadm.yaml" --kubeconfig "$d/admin.conf" \
    >>"$d/kubeadm.log" 2>&1 || return 1
  return 0
}

# cluster_up DIR: the whole control plane; tries again on fresh ports if a
# port was taken between picking it and binding it.
cluster_up() {
  E2E_DIR=$1
  mkdir -p "$E2E_DIR"
  e2e_bins || return 1
  e2e_pki "$E2E_DIR"
  E2E_CA=$E2E_DIR/ca.crt
  E2E_PIN="sha256:$(openssl x509 -in "$E2E_CA" -pubkey -noout | openssl pkey -pubin -outform der | sha256sum | cut -d' ' -f1)"
  local try
  for try in 1 2 3; do
    e2e_try_up && return 0
    echo "e2e: control plane did not start (try $try); logs:" >&2
    CLUSTER_LOG_LINES=5 cluster_logs >&2
    cluster_down
  done
  return 1
}

cluster_logs() {
  local f
  for f in "$E2E_DIR"/*.log; do
    [ -f "$f" ] || continue
    echo "---- $(basename "$f") (last ${CLUSTER_LOG_LINES:-30} lines)"
    tail -n "${CLUSTER_LOG_LINES:-30}" "$f" | cut -c1-300
  done
}

# e2e_stop PID: TERM, then KILL after 5 s; waits until it is gone.
e2e_stop() {
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 50); do e2e_alive "$pid" || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  return 0
}

cluster_down() {
  local i f
  for ((i = ${#E2E_PIDS[@]} - 1; i >= 0; i--)); do e2e_stop "${E2E_PIDS[$i]}"; done
  # A component restarted from a subshell is not in E2E_PIDS.
  for f in "${E2E_DIR:-/nonexistent}"/*.pid; do [ -f "$f" ] && e2e_stop "$(cat "$f")"; done
  E2E_PIDS=()
}

# kubectl as the cluster's admin.
kc() { kubectl --kubeconfig "$E2E_ADMIN" "$@"; }

# e2e_keep_logs NAME: after a failed run, the control plane's logs in
# build/e2e-logs/NAME (or $E2E_LOGS/NAME), of which the last lines are shown;
# prints the folder for more.
e2e_keep_logs() {
  local keep=${E2E_LOGS:-$PWD/build/e2e-logs}/$1
  rm -rf "$keep"; mkdir -p "$keep" && cp "$E2E_DIR"/*.log "$keep/" 2>/dev/null
  echo "$keep"
}

# ---- the cluster's kubelet configuration, for the node suites ------------

# The cluster's kubelet configuration for a node of the suites (the e2e
# nodes on this machine, the lab's booted ones): cgroupfs (the runtime uses
# it), no QoS cgroups (nothing of the host's cgroup tree changes; kubeadm
# turns an empty enforceNodeAllocatable into ["pods"], so newer releases say
# "none", which v1.20 does not take), swap
# allowed, cgroup v1 allowed (from 1.31 the kubelet refuses it by default),
# and maxPods 42, which shows the kubelet serves with this configuration.
e2e_kubelet_config() {
  # (the machines' shared disk may be fuller than the kubelet's defaults allow: no image collected and no
  # Pod evicted for the machine's disk, or a static Pod restarted finds its images gone)
  cat <<CFG
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: $( [ "$E2E_MINOR" -ge 24 ] && echo '["none"]' || echo '[]')
failSwapOn: false
maxPods: 42
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {imagefs.available: "1%", nodefs.available: "1%", memory.available: "1Mi"}
rotateCertificates: true
authentication:
  x509: {clientCAFile: /etc/kubernetes/pki/ca.crt}
  webhook: {enabled: true}
  anonymous: {enabled: false}
authorization: {mode: Webhook}
$(e2e_from 31 "failCgroupV1: false")
CFG
}

# e2e_upload_kubelet_config: this release's kubeadm uploads the run's kubelet
# configuration, as kubeadm init does (v1.20's phase, which goes on to
# annotate a control-plane Node this cluster has not, is stopped once the
# ConfigMap has changed).
e2e_upload_kubelet_config() {
  local cm=kubelet-config before
  [ "$E2E_MINOR" -ge 24 ] || cm=kubelet-config-1.$E2E_MINOR
  before=$(kc -n kube-system get configmap "$cm" -o jsonpath='{.data.kubelet}' 2>/dev/null)
  { cat "$E2E_DIR/kubeadm.yaml"; echo ---; cat "$ROOT/kubelet-config.yaml"; } >"$ROOT/kubeadm-kubelet.yaml"
  "$KBIN/kubeadm" init phase upload-config kubelet --config "$ROOT/kubeadm-kubelet.yaml" --kubeconfig "$E2E_ADMIN" \
    >"$ROOT/upload.log" 2>&1 &
  local pid=$! i
  for i in $(seq 300); do
    e2e_alive "$pid" || break
    [ "$E2E_MINOR" -lt 24 ] && [ "$(kc -n kube-system get configmap "$cm" -o jsonpath='{.data.kubelet}' 2>/dev/null)" != "$before" ] &&
      sleep 1 && break # its RBAC follows at once
    sleep 0.2
  done
  if e2e_alive "$pid"; then kill "$pid"; wait "$pid"; [ "$E2E_MINOR" -lt 24 ] || return 1
  else wait "$pid" || { fail "kubeadm upload-config kubelet: $(tail -3 "$ROOT/upload.log")"; return 1; }; fi
}

# e2e_kubelet_configmap: the run's kubelet configuration ($ROOT/kubelet-config.yaml)
# in the ConfigMap as each release's kubeadm makes it: the newest's own
# upload-config phase. v1.20's kubeadm would drop an empty
# enforceNodeAllocatable (the kubelet then enforces "pods", which needs QoS
# cgroups) and its phase would wait for a control-plane Node to annotate, so
# its ConfigMap and RBAC are made as that kubeadm names them
# (kubelet-config-1.20), the configuration as it is.
e2e_kubelet_configmap() {
  e2e_kubelet_config >"$ROOT/kubelet-config.yaml"
  [ "$E2E_MINOR" -lt 24 ] || { e2e_upload_kubelet_config; return; }
  local cm=kubelet-config-1.$E2E_MINOR
  kc -n kube-system create configmap "$cm" --from-file=kubelet="$ROOT/kubelet-config.yaml" >/dev/null &&
    kc -n kube-system create role "kubeadm:$cm" --verb=get --resource=configmaps --resource-name="$cm" >/dev/null &&
    kc -n kube-system create rolebinding "kubeadm:$cm" --role="kubeadm:$cm" --group=system:nodes \
      --group=system:bootstrappers:kubeadm:default-node-token >/dev/null
}
