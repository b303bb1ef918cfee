#!/usr/bin/env bash
# fresh-check.sh [WORK]: the README's commands on a fresh machine. It
# debootstraps a root of this machine's Debian release with deb-only
# sources (the archive this machine's apt uses), adds only what a fresh
# machine of this kind has besides (its Go toolchain at /usr/local/go),
# clones this checkout into it, and there runs, as a newcomer would:
#   apt-get install make git; make demo; make test
# printing each one's time and result. Needs root; takes about 43 minutes (both
# control planes are built from scratch). WORK (default /var/tmp/kjoin-fresh)
# is removed first and kept afterwards for its logs. BUSY=N runs `make test`
# with N CPU-bound processes beside it (scripts/busy.sh), as on a shared
# machine: the suite must pass so too.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
work=${1:-/var/tmp/kjoin-fresh}
root=$work/root
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
# The archive this machine's apt uses for its release (never named here).
src=$(bash "$here/apt-src.sh" "$suite")
mirror=$(awk '/^URIs:/ {print $2; exit} /^deb-src / {for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) {print $i; exit}}' <<<"$src")
[ -n "$mirror" ] || { echo "fresh-check: no archive for $suite in apt's sources" >&2; exit 1; }

cleanup() {
  local m
  for m in $(awk -v r="$root" '$2 ~ "^" r {print $2}' /proc/mounts | sort -r); do umount -l "$m" 2>/dev/null || true; done
}
trap cleanup EXIT
cleanup; rm -rf "$work"; mkdir -p "$work"
command -v debootstrap >/dev/null || { apt-get update -qq; apt-get install -y -qq debootstrap >/dev/null; }

step() { # NAME CMD...: runs CMD, prints its time and result, keeps its log
  local name=$1 start rc; shift
  start=$(date +%s)
  echo "fresh-check: $name ..."
  "$@" >"$work/$name.log" 2>&1 && rc=0 || rc=$?
  printf 'fresh-check: %-12s %s in %d s (log: %s)\n' "$name" "$([ $rc = 0 ] && echo ok || echo "FAILED ($rc)")" \
    "$(($(date +%s) - start))" "$work/$name.log"
  [ $rc = 0 ] || tail -20 "$work/$name.log"
  return $rc
}
inroot() { chroot "$root" env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
  PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin bash -lc "$1"; }

step debootstrap debootstrap "$suite" "$root" "$mirror"
# deb lines only, as a fresh machine has them.
echo "deb $mirror $suite main" >"$root/etc/apt/sources.list"
# The root is a mount point of its own, as / is on a machine (a private
# mount namespace needs one to make its mounts private).
mount --bind "$root" "$root"
for m in proc sys dev dev/pts; do mount --rbind "/$m" "$root/$m"; done
mount -t tmpfs tmpfs "$root/tmp"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# What a fresh machine of this kind has besides Debian: its Go toolchain,
# and the certificate authorities its image adds to the system's trust
# (ca-certificates takes them in when the README's first command installs it).
mkdir -p "$root/usr/local/go"; mount --bind -o ro /usr/local/go "$root/usr/local/go"
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
fi
git clone -q "$repo" "$root/root/kjoin"

busy=(); [ "${BUSY:-0}" = 0 ] || busy=("$here/busy.sh" "$BUSY")
rc=0
step make-git inroot 'apt-get update -q && apt-get install -y -q make git' || rc=1
[ $rc = 0 ] && { step make-demo inroot 'cd /root/kjoin && make demo' || rc=1; }
[ $rc = 0 ] && { step make-test "${busy[@]}" inroot 'cd /root/kjoin && make test' || rc=1; }
[ $rc = 0 ] && grep -E '^tests: [0-9]+ passed, [0-9]+ failed' "$work/make-test.log" | tail -1
# The machine left as found: no service enabled by the commands.
inroot 'ls /etc/systemd/system/multi-user.target.wants/ 2>/dev/null' | tr '\n' ' ' | sed 's/^/fresh-check: enabled services: /'; echo
exit $rc
