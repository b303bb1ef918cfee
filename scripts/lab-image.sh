#!/usr/bin/env bash
# lab-image.sh [node|stock]: prints the directory of a node lab's image,
# building it first when this machine has none: a Debian root of the
# machine's own release (debootstrap from the archive its apt uses, never
# named here) with systemd, dbus and cloud-init.
#   node (the default): also containerd, runc, what kjoin's .deb needs, and a
#     kubelet.service as Kubernetes' packages install it (Restart=always; it
#     does nothing until configured). The kubelet binary itself is the tested
#     release's, bound in at boot, so one image serves both releases.
#   stock: what a stock Debian cloud image has (cloud-init, curl,
#     ca-certificates), nothing of Kubernetes: a cloud-config installs the rest.
# Both have what the lab's nspawn needs (writable cgroups, /dev/kmsg, the
# bridge's address from systemd-networkd). Built once per machine into
# ~/.cache/kjoin/lab (outside the checkout, as the control planes are); the
# key is this script's own content. Needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
flavor=${1:-node}
case $flavor in node|stock) ;; *) echo "lab-image: no image flavor $flavor (node or stock)" >&2; exit 2 ;; esac
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
key=$(cat "$0" | sha256sum | cut -c1-12)
cache=${KJOIN_CACHE:-$HOME/.cache/kjoin}/lab
image=$cache/image-$flavor-$suite-$key
[ -f "$image/ready" ] && { echo "$image/root"; exit 0; }
source "$here/progress.sh"
build_lock "lab-image $flavor" "$cache/$flavor"
[ -f "$image/ready" ] && { echo "$image/root"; exit 0; }
command -v debootstrap >/dev/null && command -v systemd-nspawn >/dev/null || {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap systemd-container >/dev/null
}
src=$(bash "$here/apt-src.sh" "$suite")
mirror=$(awk '/^URIs:/ {print $2; exit} /^deb-src / {for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) {print $i; exit}}' <<<"$src")
[ -n "$mirror" ] || { echo "lab-image: no archive for $suite in apt's sources" >&2; exit 1; }
echo "lab-image: building the $flavor image (once per machine) in $image" >&2
for old in "$cache"/image-*; do # an image of an older script goes
  [[ $old == *-$key ]] || rm -rf "$old"
done
# What a killed build left goes, its chroot's mounts first.
findmnt -rn -o TARGET | { grep -F "$image/" || true; } | sort -r | xargs -r umount -l
rm -rf --one-file-system "$image"
mkdir -p "$image"
root=$image/root
log=$image/build.log
debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus "$suite" "$root" "$mirror" >"$log" 2>&1 ||
  { tail -5 "$log" >&2; exit 1; }
echo "deb $mirror $suite main" >"$root/etc/apt/sources.list"
cp /etc/resolv.conf "$root/etc/resolv.conf"
packages="cloud-init ca-certificates curl iproute2 kmod procps"
[ "$flavor" = node ] && packages+=" containerd runc conntrack iptables util-linux bash-completion libcurl4 libyaml-0-2 libjson-c5 libuuid1 libssl3"
chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive bash -c "
  apt-get update -qq && apt-get install -y -qq --no-install-recommends $packages && apt-get clean" >>"$log" 2>&1 ||
  { tail -5 "$log" >&2; exit 1; }
rm -f "$root/etc/resolv.conf"
chmod 0755 "$root" # dbus refuses a root of another mode

# cloud-init: the NoCloud seed a test writes into the node; the machine's
# network and disks are none of its business.
cat >"$root/etc/cloud/cloud.cfg.d/90-kjoin-lab.cfg" <<'CFG'
datasource_list: [NoCloud, None]
locale: C.UTF-8
growpart: {mode: "off"}
resize_rootfs: false
network: {config: disabled}
CFG
# The kubelet as Kubernetes' packages install it: restarted forever, doing
# nothing until a drop-in (kubeadm's 10-kubeadm.conf, kjoin's 10-kjoin.conf)
# gives it its configuration. /usr/bin/kubelet is bound in at boot. Kept
# beside the stock image too: the lab packages the kubelet with it there
# (tests/lab/mirror.sh).
cat >"$image/kubelet.service" <<'UNIT'
[Unit]
Description=kubelet: The Kubernetes Node Agent
Documentation=https://kubernetes.io/docs/
Wants=network-online.target
After=network-online.target

[Service]
ExecStart=/usr/bin/kubelet
Restart=always
StartLimitInterval=0
RestartSec=10

[Install]
WantedBy=multi-user.target
UNIT
# nspawn mounts the cgroup v1 controllers read-only; containerd and the
# kubelet make cgroups there. The kubelet reads /dev/kmsg (kind links it so).
cat >"$root/etc/systemd/system/lab-cgroups.service" <<'UNIT'
[Unit]
Description=The node lab: cgroup controllers writable
DefaultDependencies=no
Before=containerd.service kubelet.service

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'for d in /sys/fs/cgroup/*/; do [ -L "$${d%%/}" ] || mount -o remount,bind,rw "$d" 2>/dev/null; done; true'

[Install]
WantedBy=sysinit.target
UNIT
echo "L /dev/kmsg - - - - /dev/console" >"$root/etc/tmpfiles.d/kjoin-lab-kmsg.conf"
units="lab-cgroups.service systemd-networkd.service"
if [ "$flavor" = node ]; then
  cp "$image/kubelet.service" "$root/lib/systemd/system/kubelet.service"
  units+=" kubelet.service"
  # Forwarding on, as every guide to preparing a node says (kjoin's preflight checks it).
  echo "net.ipv4.ip_forward = 1" >"$root/etc/sysctl.d/99-kubernetes.conf"
else
  rm -rf "$root"/var/lib/apt/lists/* # as a cloud image comes: apt's lists are fetched at boot
fi
# The node's address on the lab's bridge comes from a file bound in at boot.
mkdir -p "$root/etc/systemd/network"
for u in $units; do
  chroot "$root" systemctl enable "$u" >>"$log" 2>&1
done
chroot "$root" systemctl mask console-getty.service getty@tty1.service >>"$log" 2>&1
: >"$root/etc/machine-id" # empty: a new one at each boot
touch "$image/ready"
echo "$root"
