#!/usr/bin/env bash
# make bench, the worker row: `kjoin join` against `kubeadm join` (the newest
# release built for the tests), each from the command's start to the Node
# registered, on the same control plane and the same containerd, interleaved
# (kjoin, kubeadm, kjoin, ...), each run a fresh node in a mount namespace
# of its own (in_node of tests/e2e/t_node.sh).
# kubeadm runs with --ignore-preflight-errors=all: this machine fails its
# SystemVerification and forwarding checks, and kubeadm's report goes on
# regardless; kjoin ignores only the forwarding check. No systemd runs here,
# so the kubelet is started by this script for both, the moment each tool
# has written the files it starts from (kubeadm's 10-kubeadm.conf command
# line; kjoin's printed one, which is the same). Reports the median and each
# run's times, the ratio, and each tool's peak RSS (the command itself, not
# the kubelet; VmHWM, read every 10-20 ms while it runs), and how long after
# the kubelet registered its Node (its log's stamp) each command ended: a join
# that follows the kubelet as it happens ends within tens of milliseconds.
# BENCH_NODE_RUNS runs each (5).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/cluster.sh"
source "$here/../e2e/t_node.sh"
RUNS=${BENCH_NODE_RUNS:-5}
current=bench-node
bench_node_cluster
e2e_wait 30 bash -c "kubectl --kubeconfig '$E2E_ADMIN' -n kube-public get configmap cluster-info -o json | grep -q jws-kubeconfig-abcdef" ||
  { echo "bench: the bootstrap signer never signed the token" >&2; exit 1; }

# hwm PID: the process's own peak RSS so far in KiB (VmHWM only grows; the
# last reading before it exits is its peak, children such as the kubelet's
# --version run not included).
hwm() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status" 2>/dev/null; }

# One run on a fresh node: TOOL NAME. Prints "node_ms cmd_ms rss_kib".
bench_one() {
  local tool=$1 name=$2 start pid cmd= i r rss0=0
  local api=(--cacert "$E2E_CA" --cert "$E2E_DIR/admin.crt" --key "$E2E_DIR/admin.key" -sf -o /dev/null)
  start=$(date +%s%N)
  if [ "$tool" = kjoin ]; then
    # (the end stamped by the shell that waits for it: the lag behind the Node's registration)
    "$KJOIN" join "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
      --node-name "$name" --cri-socket "$NODE_CRI" --ignore-preflight-errors "$NODE_IGNORE" --discovery-timeout 120s \
      >"$T/out" 2>"$T/err" &
    pid=$!
    ( while kill -0 "$pid" 2>/dev/null; do sleep 0.002; done; date +%s%3N >"$T/done" ) >/dev/null 2>&1 &
    for i in $(seq 600); do
      r=$(hwm "$pid"); [ -n "$r" ] && [ "$r" -gt "${rss0:-0}" ] && rss0=$r
      cmd=$(sed -n 's/.*start the kubelet with: //p' "$T/err"); [ -n "$cmd" ] && break; sleep 0.01
    done
  else
    "$KBIN/kubeadm" join "$E2E_ENDPOINT" --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash "$E2E_PIN" \
      --node-name "$name" --cri-socket "$NODE_CRI" --ignore-preflight-errors all >"$T/out" 2>"$T/err" &
    pid=$!
    ( while kill -0 "$pid" 2>/dev/null; do sleep 0.002; done; date +%s%3N >"$T/done" ) >/dev/null 2>&1 &
    for i in $(seq 600); do
      r=$(hwm "$pid"); [ -n "$r" ] && [ "$r" -gt "${rss0:-0}" ] && rss0=$r
      [ -s /var/lib/kubelet/kubeadm-flags.env ] && [ -s /var/lib/kubelet/config.yaml ] &&
        [ -s /etc/kubernetes/bootstrap-kubelet.conf ] && break
      sleep 0.01
    done
    cmd="$KBIN/kubelet --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf --config=/var/lib/kubelet/config.yaml \$(. /var/lib/kubelet/kubeadm-flags.env; echo \$KUBELET_KUBEADM_ARGS)"
  fi
  [ -n "$cmd" ] || { echo "bench: $tool never got to starting the kubelet: $(tail -3 "$T/err")" >&2; kill "$pid"; return 1; }
  eval "exec $cmd" >"$T/kubelet.log" 2>&1 &
  local kubelet=$! node_ms= cmd_ms= rc rss=${rss0:-0} r
  until [ -n "$node_ms" ] && [ -n "$cmd_ms" ]; do
    r=$(hwm "$pid"); [ -n "$r" ] && [ "$r" -gt "$rss" ] && rss=$r
    [ -z "$node_ms" ] && curl "${api[@]}" "$E2E_SERVER/api/v1/nodes/$name" && node_ms=$((($(date +%s%N) - start) / 1000000))
    if [ -z "$cmd_ms" ] && ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid"; rc=$?; cmd_ms=$((($(date +%s%N) - start) / 1000000))
      [ "$rc" = 0 ] || { echo "bench: $tool join failed ($rc): $(tail -3 "$T/err")" >&2; kill "$kubelet"; return 1; }
    fi
    [ $((($(date +%s%N) - start) / 1000000)) -lt 180000 ] || { echo "bench: $tool: no Node after 180 s" >&2; kill "$kubelet" "$pid"; return 1; }
    sleep 0.02
  done
  kill "$kubelet"; wait "$kubelet" 2>/dev/null
  # The lag: from the kubelet's own "Successfully registered node" (klog's
  # microsecond stamp, this machine's clock) to the command's end.
  local stamp reg_ms lag=-1
  stamp=$(grep -m1 'Successfully registered node' "$T/kubelet.log" | sed -nE 's/^[IWE]([0-9]{2})([0-9]{2}) ([0-9:.]+) .*/\1 \2 \3/p')
  if [ -n "$stamp" ] && [ -s "$T/done" ]; then
    set -- $stamp
    reg_ms=$(date -d "$(date +%Y)-$1-$2 $3" +%s%3N) && lag=$(($(cat "$T/done") - reg_ms))
  fi
  echo "$node_ms $cmd_ms $rss $lag"
}

results=$ROOT/results
for i in $(seq "$RUNS"); do
  for tool in kjoin kubeadm; do
    T=$ROOT/$tool.$i; mkdir -p "$T"
    line=$(in_node "bench_one $tool bench-$tool-$i") || exit 1
    echo "$tool $line" >>"$results"
    kc delete node "bench-$tool-$i" >/dev/null 2>&1
    rm -rf "$T"
  done
done
awk -v runs="$RUNS" -v version="$E2E_VERSION" '
  function median(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                                      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  { n[$1]++; node[$1, n[$1]] = $2; cmd[$1, n[$1]] = $3; if ($4 > rss[$1]) rss[$1] = $4; runs_of[$1] = runs_of[$1] " " $2
    lag[$1, n[$1]] = $5; lags_of[$1] = lags_of[$1] " " $5 }
  END {
    for (t in n) { for (i = 1; i <= n[t]; i++) { x[i] = node[t, i]; y[i] = cmd[t, i]; z[i] = lag[t, i] }
                   mn[t] = median(x, n[t]); mc[t] = median(y, n[t]); ml[t] = median(z, n[t]) }
    printf "%-12s %s, %d runs each, interleaved, start to Node registered:\n", "worker", version, runs
    printf "%-12s kjoin join   median %d ms (command done %d ms), peak RSS %d KiB; runs:%s\n", "", mn["kjoin"], mc["kjoin"], rss["kjoin"], runs_of["kjoin"]
    printf "%-12s kubeadm join median %d ms (command done %d ms), peak RSS %d KiB; runs:%s\n", "", mn["kubeadm"], mc["kubeadm"], rss["kubeadm"], runs_of["kubeadm"]
    printf "%-12s ratio kjoin/kubeadm: time %.2f, peak RSS %.2f\n", "", mn["kjoin"] / mn["kubeadm"], rss["kjoin"] / rss["kubeadm"]
    printf "%-12s the command ends after the kubelet registered its Node (its log\x27s stamp): kjoin median %d ms (runs:%s), kubeadm %d ms\n", "", ml["kjoin"], lags_of["kjoin"], ml["kubeadm"] }' "$results"
