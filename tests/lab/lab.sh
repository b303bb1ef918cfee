# The node lab: nodes booted by a real systemd (systemd-nspawn --boot) from
# one cached image (scripts/lab-image.sh), each on a copy-on-write view of
# it (--volatile=overlay: every boot is a first boot), in a network
# namespace of its own on a bridge the lab makes, the control plane on the
# bridge's address. Sourced by tests/lab/run.sh.
#
# Nothing stays behind: each nspawn runs in a mount namespace of its own
# with a tmpfs on /run/systemd (its run directory), in a cgroup of the lab's
# own in every hierarchy (nspawn leaves payload/ and supervisor/ in the
# cgroup it starts in); lab_down removes nodes, cgroups and the bridge.

LAB_BRIDGE=kjlab0
LAB_NET=10.213.0
LAB_HOST=$LAB_NET.1
LAB_NET6=fd00:213:
LAB_HOST6=$LAB_NET6:1
LAB_NODES=()

# The bridge is dual-stack; a node is, with LAB_V6 (see lab_boot).
lab_net_up() {
  ip link del "$LAB_BRIDGE" 2>/dev/null
  ip link add "$LAB_BRIDGE" type bridge && ip addr add "$LAB_HOST/24" dev "$LAB_BRIDGE" &&
    ip -6 addr add "$LAB_HOST6/64" dev "$LAB_BRIDGE" nodad && ip link set "$LAB_BRIDGE" up
}

# lab_cgroups NAME: the cgroup directories of node NAME, one per hierarchy.
lab_cgroups() { ls -d /sys/fs/cgroup/*/kjlab-"$1" 2>/dev/null; }

# lab_boot NAME IP SEED_DIR [NSPAWN_ARGS...]: boots node NAME at IP (and at
# LAB_V6, when set, with both default routes) with
# cloud-init's NoCloud seed SEED_DIR (user-data, meta-data), the release's
# kubelet as /usr/bin/kubelet and $LAB_DEBS at /opt/kjoin. Its console goes
# to $LAB_DIR/NAME/console.log. With LAB_KEEP=1 the node is not volatile:
# what it changes stays in $LAB_DIR/NAME/keep (an overlay on the image), so
# booting NAME again is a reboot, not a first boot. LAB_HOSTS: more lines
# for the node's /etc/hosts. With LAB_STOCK=1 the node boots the stock image
# ($LAB_STOCK_IMAGE) with nothing bound in: its cloud-config installs it all.
lab_boot() {
  local name=$1 ip=$2 seed=$3 d=$LAB_DIR/$1 image=$LAB_IMAGE binds; shift 3
  binds=(--bind-ro="$KBIN/kubelet:/usr/bin/kubelet" --bind-ro="$LAB_DEBS:/opt/kjoin")
  [ "${LAB_STOCK:-0}" = 1 ] && { image=$LAB_STOCK_IMAGE; binds=(); }
  mkdir -p "$d"
  if [ "${LAB_KEEP:-0}" = 1 ]; then
    mkdir -p "$d/keep/upper" "$d/keep/work" "$d/keep/root" && chmod 0755 "$d/keep/upper" || return 1
  fi
  printf '[Match]\nName=host0\n\n[Network]\nAddress=%s/24\n' "$ip" >"$d/host0.network"
  # LAB_V6=ADDRESS: dual-stack, with a default route of each family through the bridge (whose host
  # forwards nothing: still no way out)
  [ -z "${LAB_V6:-}" ] || printf 'Address=%s/64\nGateway=%s\nGateway=%s\nIPv6AcceptRA=no\n' "$LAB_V6" "$LAB_HOST" \
    "$LAB_HOST6" >>"$d/host0.network"
  printf '127.0.0.1 localhost\n%s %s\n%s lab-control-plane\n%s' "$ip" "$name" "$LAB_HOST" "${LAB_HOSTS:-}" >"$d/hosts"
  LAB_NODES+=("$name")
  # The launching shell moves into the node's own cgroups; nspawn keeps that unit.
  NAME=$name IMAGE=$image BRIDGE=$LAB_BRIDGE SEED=$seed D=$d \
    KEEP=${LAB_KEEP:-0} unshare --mount --propagation private bash -c '
    set -e
    mount -t tmpfs tmpfs /run/systemd 2>/dev/null || { mkdir -p /run/systemd; mount -t tmpfs tmpfs /run/systemd; }
    root=(--directory "$IMAGE" --volatile=overlay)
    if [ "$KEEP" = 1 ]; then
      # Gone with this mount namespace when the node powers off; its upper stays.
      mount -t overlay overlay -o "lowerdir=$IMAGE,upperdir=$D/keep/upper,workdir=$D/keep/work" "$D/keep/root"
      root=(--directory "$D/keep/root")
    fi
    for h in /sys/fs/cgroup/*/; do
      [ -e "$h/cgroup.procs" ] || continue
      mkdir -p "$h/kjlab-$1" || continue
      # A cpuset takes no task before it has CPUs and memory nodes.
      for f in cpuset.cpus cpuset.mems; do
        [ -e "$h/$f" ] && cat "$h/$f" >"$h/kjlab-$1/$f"
      done
      echo $$ >"$h/kjlab-$1/cgroup.procs"
    done
    shift
    exec systemd-nspawn --quiet --boot --register=no --keep-unit --machine "$NAME" --hostname "$NAME" \
      "${root[@]}" --network-bridge "$BRIDGE" \
      --capability=all --system-call-filter=@keyring \
      --bind-ro="$SEED:/var/lib/cloud/seed/nocloud" \
      --bind-ro="$D/host0.network:/etc/systemd/network/10-host0.network" --bind-ro="$D/hosts:/etc/hosts" "$@"
  ' lab "$name" "${binds[@]}" "$@" </dev/null >"$d/console.log" 2>&1 &
  echo $! >"$d/nspawn.pid"
}

# The node's PID 1 (its systemd), from the init.scope of its cgroup.
lab_leader() { head -1 "/sys/fs/cgroup/systemd/kjlab-$1/payload/init.scope/cgroup.procs" 2>/dev/null; }

# lab_exec NAME CMD...: runs CMD inside node NAME (all its namespaces).
lab_exec() {
  local pid; pid=$(lab_leader "$1") || return 1
  [ -n "$pid" ] || return 1
  shift
  # --root --wd: the node's own root, also where nspawn had to chroot into it
  # (nspawn in a chroot cannot pivot_root; setns alone lands at the host's /).
  nsenter --target "$pid" --mount --uts --ipc --net --pid --cgroup --root --wd -- \
    env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"
}

# lab_wait_booted NAME SECONDS: until its systemd says running (or degraded).
lab_wait_booted() {
  local limit=$(($(date +%s) + $2)) s
  while [ "$(date +%s)" -lt "$limit" ]; do
    s=$(lab_exec "$1" systemctl is-system-running 2>/dev/null)
    case $s in running|degraded) return 0 ;; esac
    sleep 1
  done
  return 1
}

# lab_wait_settled NAME SECONDS: until systemd has no job left (cloud-init's
# runcmd, kjoin-join.service and what they started have ended).
lab_wait_settled() {
  local limit=$(($(date +%s) + $2)) jobs
  while [ "$(date +%s)" -lt "$limit" ]; do
    jobs=$(lab_exec "$1" systemctl list-jobs --no-legend 2>/dev/null | grep -v "^$")
    [ -z "$jobs" ] && return 0
    sleep 1
  done
  return 1
}

# lab_stop NAME: powers the node off through its systemd, then makes sure
# nspawn is gone and removes its cgroups.
lab_stop() {
  local name=$1 d=$LAB_DIR/$1 pid i
  pid=$(cat "$d/nspawn.pid" 2>/dev/null)
  lab_exec "$name" systemctl poweroff --no-block >/dev/null 2>&1
  for i in $(seq 60); do { [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; } || break; sleep 0.5; done
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
  local leader; leader=$(lab_leader "$name")
  [ -n "$leader" ] && kill -9 "$leader" 2>/dev/null
  sleep 0.2
  local c
  for c in $(lab_cgroups "$name"); do
    find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  return 0
}

lab_down() {
  local n
  for n in "${LAB_NODES[@]}"; do lab_stop "$n"; done
  LAB_NODES=()
  ip link del "$LAB_BRIDGE" 2>/dev/null
  return 0
}

# lab_seed DIR NAME USER_DATA: a NoCloud seed.
lab_seed() {
  mkdir -p "$1"
  printf 'instance-id: %s\nlocal-hostname: %s\n' "$2-$RANDOM" "$2" >"$1/meta-data"
  printf '%s\n' "$3" >"$1/user-data"
}
