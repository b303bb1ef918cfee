# Container images for the e2e node, made here without a registry or a
# builder: an OCI image layout (one uncompressed layer, a config, a
# manifest, an index naming it) packed as a tar that `ctr images import`
# takes. Sourced by t_node.sh.

# oci_archive NAME ROOTFS OUT [CMD...]: the image NAME ("kjoin.test/x:e2e")
# with ROOTFS as its one layer and CMD as its command, written to OUT.
oci_archive() {
  local name=$1 rootfs=$2 out=$3; shift 3
  local d; d=$(mktemp -d)
  mkdir -p "$d/blobs/sha256"
  tar -C "$rootfs" --owner=0 --group=0 --numeric-owner -cf "$d/layer.tar" .
  local layer; layer=$(sha256sum "$d/layer.tar" | cut -d' ' -f1)
  mv "$d/layer.tar" "$d/blobs/sha256/$layer"
  jq -nc --arg l "sha256:$layer" --args '{architecture: "amd64", os: "linux",
      config: {Env: ["PATH=/usr/bin:/bin"], Cmd: $ARGS.positional},
      rootfs: {type: "layers", diff_ids: [$l]}}' "$@" >"$d/config"
  local config; config=$(sha256sum "$d/config" | cut -d' ' -f1)
  mv "$d/config" "$d/blobs/sha256/$config"
  jq -nc --arg c "sha256:$config" --argjson cs "$(stat -c %s "$d/blobs/sha256/$config")" \
      --arg l "sha256:$layer" --argjson ls "$(stat -c %s "$d/blobs/sha256/$layer")" '{schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $c, size: $cs},
      layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $l, size: $ls}]}' >"$d/manifest"
  local manifest; manifest=$(sha256sum "$d/manifest" | cut -d' ' -f1)
  jq -nc --arg m "sha256:$manifest" --argjson ms "$(stat -c %s "$d/manifest")" --arg n "$name" '{schemaVersion: 2,
      manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $m, size: $ms,
        platform: {architecture: "amd64", os: "linux"},
        annotations: {"io.containerd.image.name": $n, "org.opencontainers.image.ref.name": ($n | sub(".*:"; ""))}}]}' \
    >"$d/index.json"
  mv "$d/manifest" "$d/blobs/sha256/$manifest"
  echo '{"imageLayoutVersion":"1.0.0"}' >"$d/oci-layout"
  tar -C "$d" -cf "$out" oci-layout index.json blobs
  rm -rf "$d"
}

# rootfs_with DIR BINARY...: each binary at /usr/bin/<name> with every
# shared library it loads (ldd's list, the loader included), at their paths (a static one: none).
rootfs_with() {
  local dir=$1 b lib; shift
  mkdir -p "$dir/usr/bin" "$dir/tmp"
  for b in "$@"; do
    cp "$b" "$dir/usr/bin/"
    for lib in $(ldd "$b" 2>/dev/null | grep -o '/[^ ]*'); do
      mkdir -p "$dir$(dirname "$lib")"; cp -L "$lib" "$dir$lib"
    done
  done
}

# pause_rootfs DIR: the sandbox's one process: a static program that waits
# for a signal to end (what registry.k8s.io/pause does), built here.
pause_rootfs() {
  local dir=$1
  mkdir -p "$dir"
  printf '%s\n' '#include <signal.h>' '#include <unistd.h>' '#include <sys/wait.h>' \
    'static void bye(int s) { (void)s; _exit(0); }' \
    'static void reap(int s) { (void)s; while (waitpid(-1, 0, WNOHANG) > 0) ; }' \
    'int main(void) { signal(SIGINT, bye); signal(SIGTERM, bye); signal(SIGCHLD, reap); for (;;) pause(); }' \
    >"$dir.c"
  cc -static -O2 -o "$dir/pause" "$dir.c" && rm -f "$dir.c"
}
