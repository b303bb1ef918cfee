# throwaway_root WORK CMD...: runs CMD as root in a private mount namespace,
# chrooted into a copy-on-write view of this machine's root filesystem:
# whatever it installs or changes lands in WORK/upper and goes with WORK, so
# the suite can install packages (its own .debs, cloud-init) with apt as a
# user would, and leave the machine as it found it. The network is the
# machine's (loopback servers are reachable). Downloaded .debs are kept in
# the build cache, so a second run fetches nothing.
throwaway_root() {
  local w=$1; shift
  local debs=${XDG_CACHE_HOME:-$HOME/.cache}/kjoin/apt-archives
  mkdir -p "$w/upper" "$w/work" "$w/merged" "$debs/partial"
  unshare --mount --propagation private bash -c '
    set -e
    w=$1 debs=$2; shift 2
    mount -t overlay overlay -o "lowerdir=/,upperdir=$w/upper,workdir=$w/work" "$w/merged"
    for m in proc sys dev dev/pts run tmp; do mount --rbind "/$m" "$w/merged/$m" 2>/dev/null || true; done
    mount --bind "$debs" "$w/merged/var/cache/apt/archives"
    exec chroot "$w/merged" "$@"' throwaway "$w" "$debs" "$@"
}
