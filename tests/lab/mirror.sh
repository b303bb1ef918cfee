# The lab's stand-ins for the network a stock image installs from, on the
# bridge's address (nginx, port 80):
# - the Debian archive the stock image's apt names (the machine's own, never
#   named here): proxied to the archive itself, the node's /etc/hosts sending
#   that host name to the bridge (the lab has no resolver and no route out);
#   its answers cached a day outside the checkout (~/.cache/kjoin/lab/apt-proxy),
#   and served from there when the archive does not answer: a run does not
#   hang on the network once a run before it fetched the same;
# - two signed flat apt repositories, as an operator publishes them:
#   /kubernetes/ with a kubelet package of the tested release (its binary,
#   the unit Kubernetes' packages install, enabled and started at install as
#   theirs are) and /kjoin/ with make deb's packages; /key.asc signs both.
# Sourced by tests/lab/run.sh; lab_mirror_up sets LAB_MIRROR (the repository
# base URL) and LAB_MIRROR_HOSTS (lines for a node's /etc/hosts).

# lab_flat_repo DIR KEYHOME: Packages and a signed InRelease for the .debs in DIR.
lab_flat_repo() {
  local d=$1 sums
  (cd "$d" && dpkg-scanpackages --multiversion . /dev/null >Packages 2>/dev/null && gzip -kf Packages) || return 1
  sums=$(cd "$d" && for f in Packages Packages.gz; do printf ' %s %s %s\n' "$(sha256sum <"$f" | cut -d' ' -f1)" "$(stat -c %s "$f")" "$f"; done)
  printf 'Origin: kjoin lab\nLabel: kjoin lab\nDate: %s\nSHA256:\n%s\n' "$(LC_ALL=C date -Ru)" "$sums" >"$d/Release"
  GNUPGHOME=$2 gpg --batch --yes --quiet --clearsign -o "$d/InRelease" "$d/Release"
}

# lab_kubelet_deb DIR: the tested release's kubelet as a package, named and
# versioned as Kubernetes' own (kubelet_1.37.2-1.1_amd64.deb).
lab_kubelet_deb() {
  local d=$1 v=${E2E_VERSION#v} p=$ROOT/kubelet-pkg
  rm -rf "$p" && mkdir -p "$p/DEBIAN" "$p/usr/bin" "$p/lib/systemd/system" || return 1
  cp "$KBIN/kubelet" "$p/usr/bin/kubelet" &&
    cp "$(dirname "$LAB_STOCK_IMAGE")/kubelet.service" "$p/lib/systemd/system/kubelet.service" || return 1
  printf 'Package: kubelet\nVersion: %s-1.1\nArchitecture: %s\nMaintainer: kjoin lab <lab@kjoin.test>\nDepends: iptables, iproute2, mount, conntrack\nSection: admin\nPriority: optional\nDescription: Node agent for Kubernetes clusters (the lab'"'"'s package of the tested release)\n' \
    "$v" "$(dpkg --print-architecture)" >"$p/DEBIAN/control"
  printf '#!/bin/sh\nset -e\nif [ "$1" = configure ]; then\n  systemctl daemon-reload\n  systemctl enable kubelet.service\n  systemctl restart kubelet.service\nfi\n' >"$p/DEBIAN/postinst"
  chmod 0755 "$p/DEBIAN/postinst"
  dpkg-deb -Znone --root-owner-group --build "$p" "$d/kubelet_${v}-1.1_$(dpkg --print-architecture).deb" >/dev/null
}

# lab_mirror_up DIR: the stand-ins, served from DIR.
lab_mirror_up() {
  local d=$1 hosts h servers=""
  mkdir -p "$d/www/kubernetes" "$d/www/kjoin" "$d/gpg" "$d/tmp" && chmod 0700 "$d/gpg" || return 1
  GNUPGHOME=$d/gpg gpg --batch --quiet --passphrase '' --quick-gen-key "kjoin lab repositories" ed25519 sign never 2>/dev/null &&
    GNUPGHOME=$d/gpg gpg --batch --armor --export >"$d/www/key.asc" || { echo "lab: no signing key" >&2; return 1; }
  lab_kubelet_deb "$d/www/kubernetes" || { echo "lab: no kubelet package" >&2; return 1; }
  cp "$LAB_DEBS"/*.deb "$d/www/kjoin/" || return 1
  lab_flat_repo "$d/www/kubernetes" "$d/gpg" && lab_flat_repo "$d/www/kjoin" "$d/gpg"
  local signed=$?
  gpgconf --homedir "$d/gpg" --kill gpg-agent 2>/dev/null # gpg started it; nothing stays
  [ "$signed" = 0 ] || { echo "lab: the repositories could not be signed" >&2; return 1; }
  # The archives the stock image's apt uses, by host name.
  hosts=$(grep -ho '^deb \(\[[^]]*\] \)\?[a-z]*://[^/ ]*' "$LAB_STOCK_IMAGE/etc/apt/sources.list" "$LAB_STOCK_IMAGE"/etc/apt/sources.list.d/*.list 2>/dev/null |
    sed 's|.*://||' | sort -u)
  [ -n "$hosts" ] || { echo "lab: the stock image names no archive" >&2; return 1; }
  LAB_MIRROR_HOSTS=""
  local cache=${KJOIN_CACHE:-$HOME/.cache/kjoin}/lab/apt-proxy
  mkdir -p "$cache" || return 1
  for h in $hosts; do
    servers+="server { listen $LAB_HOST:80; server_name $h; location / { proxy_pass http://$h; proxy_http_version 1.1;
      proxy_cache archive; proxy_cache_valid 200 1d; proxy_cache_use_stale error timeout http_500 http_502 http_503 http_504; } }"$'\n'
    LAB_MIRROR_HOSTS+="$LAB_HOST $h"$'\n'
  done
  cat >"$d/nginx.conf" <<CONF
user root;
daemon on;
master_process off;
pid $d/nginx.pid;
error_log $d/error.log;
events { worker_connections 256; }
http {
  access_log $d/access.log;
  client_body_temp_path $d/tmp; proxy_temp_path $d/tmp; fastcgi_temp_path $d/tmp;
  uwsgi_temp_path $d/tmp; scgi_temp_path $d/tmp;
  proxy_cache_path $cache levels=1:2 keys_zone=archive:10m max_size=2g inactive=7d use_temp_path=off;
  server { listen $LAB_HOST:80 default_server; root $d/www; }
  $servers
}
CONF
  # (NGINX in nginx's environment would name sockets to inherit.)
  env -u NGINX "$NGINX" -p "$d" -c "$d/nginx.conf" -e "$d/error.log" </dev/null >/dev/null 2>>"$d/error.log" ||
    { cat "$d/error.log" >&2; return 1; }
  LAB_MIRROR=http://$LAB_HOST
  LAB_MIRROR_DIR=$d
}

lab_mirror_down() {
  [ -n "${LAB_MIRROR_DIR:-}" ] && [ -f "$LAB_MIRROR_DIR/nginx.pid" ] || return 0
  local pid; pid=$(cat "$LAB_MIRROR_DIR/nginx.pid")
  kill "$pid" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null
  LAB_MIRROR_DIR=""
  return 0
}
