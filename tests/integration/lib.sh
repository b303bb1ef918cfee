# Helpers for the integration tests: certificates made with openssl, Debian's
# nginx on a free loopback port, cluster-info signed by kjoin itself, and a
# tiny assertion vocabulary. Sourced by run.sh, demo.sh and bench.sh.

: "${KJOIN:?set KJOIN to the kjoin binary}"
: "${TOOLS:?set TOOLS to the folder of freeport}"
KJOIN=$(realpath "$KJOIN")
TOOLS=$(realpath "$TOOLS")
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
CLUSTER_INFO_PATH=/api/v1/namespaces/kube-public/configmaps/cluster-info

# kubectl is the one the runner chose ($KUBECTL: tests/check.sh takes the
# one built with the newest control plane, which works; a broken one that
# happens to be on PATH is never used), else the machine's (the demo).
KUBECTL=${KUBECTL:-$(command -v kubectl || echo kubectl)}
# Its cache goes where KUBECACHEDIR says (--cache-dir: kubectl v1.20 ignores
# the variable), never into ~/.kube.
kubectl() { "$KUBECTL" ${KUBECACHEDIR:+--cache-dir "$KUBECACHEDIR"} "$@"; }

need() {
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null 2>&1 || [ -x "$t" ] || { echo "missing required tool: $t (run 'make deps')" >&2; exit 1; }
  done
}
need openssl "$NGINX" kubectl

# mkca DIR NAME [ISSUER_NAME]: DIR/NAME.crt and .key, a CA; self-signed, or
# issued by ISSUER_NAME (an intermediate).
mkca() {
  local d=$1 n=$2 issuer=${3:-}
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$d/$n.key" 2>/dev/null
  if [ -z "$issuer" ]; then
    openssl req -x509 -new -key "$d/$n.key" -subj "/CN=$n" -days 3650 -out "$d/$n.crt" \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
  else
    openssl req -new -key "$d/$n.key" -subj "/CN=$n" -out "$d/$n.csr" 2>/dev/null
    printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n' >"$d/$n.ext"
    openssl x509 -req -in "$d/$n.csr" -CA "$d/$issuer.crt" -CAkey "$d/$issuer.key" -CAcreateserial \
      -days 3650 -extfile "$d/$n.ext" -out "$d/$n.crt" 2>/dev/null
  fi
}

# mkleaf DIR NAME ISSUER [SAN]: a serving certificate for 127.0.0.1, ::1 and localhost.
mkleaf() {
  local d=$1 n=$2 issuer=$3 san=${4:-IP:127.0.0.1,IP:::1,DNS:localhost}
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$d/$n.key" 2>/dev/null
  openssl req -new -key "$d/$n.key" -subj "/CN=$n" -out "$d/$n.csr" 2>/dev/null
  printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' "$san" >"$d/$n.ext"
  openssl x509 -req -in "$d/$n.csr" -CA "$d/$issuer.crt" -CAkey "$d/$issuer.key" -CAcreateserial \
    -days 365 -extfile "$d/$n.ext" -out "$d/$n.crt" 2>/dev/null
}

# spki_pin CERT: kubeadm's sha256: pin, computed with openssl alone.
spki_pin() {
  echo "sha256:$(openssl x509 -in "$1" -pubkey -noout | openssl pkey -pubin -outform der | sha256sum | cut -d' ' -f1)"
}

# root_pin CERT: root-sha256: over the certificate's DER, computed with openssl alone.
root_pin() {
  echo "root-sha256:$(openssl x509 -in "$1" -outform der | sha256sum | cut -d' ' -f1)"
}

# cluster_kubeconfig SERVER CA_BUNDLE [SECOND_CLUSTER]: cluster-info's kubeconfig on stdout,
# laid out as the newest kubeadm writes it (one unnamed cluster, no users, no
# empty preferences).
cluster_kubeconfig() {
  local server=$1 ca=$2 two=${3:-}
  local data; data=$(base64 -w0 <"$ca")
  printf 'apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: %s\n    server: %s\n  name: ""\n' "$data" "$server"
  [ -n "$two" ] && printf -- '- cluster:\n    certificate-authority-data: %s\n    server: %s\n  name: other\n' "$data" "$server"
  printf 'contexts: null\ncurrent-context: ""\nkind: Config\nusers: null\n'
}

# start_nginx DIR PORT CERT_CHAIN KEY: serves DIR/www/cluster-info at the
# cluster-info path over TLS on 127.0.0.1:PORT and [::1]:PORT.
start_nginx() {
  local d=$1 port=$2 crt=$3 key=$4
  mkdir -p "$d/nginx/tmp" "$d/www"
  # Hooks for tests: directives for the cluster-info location (say "return 403;")
  # and further locations.
  touch "$d/nginx/cluster-info.conf" "$d/nginx/extra.conf"
  local user=""
  [ "$(id -u)" -eq 0 ] && user="user root;"
  cat >"$d/nginx/nginx.conf" <<CONF
$user
daemon on;
master_process off;
pid $d/nginx/nginx.pid;
error_log $d/nginx/error.log;
events { worker_connections ${NGINX_CONNECTIONS:-256}; }
http {
  log_format audit '\$http_audit_id \$request_uri';
  access_log $d/nginx/access.log audit;
  # Which TLS connection served each request (handshakes per client), when, and the URI after rewrites.
  log_format conns '\$http_audit_id \$connection \$connection_requests \$status \$request_uri \$msec \$uri';
  access_log $d/nginx/conn.log conns;
  client_body_temp_path $d/nginx/tmp; proxy_temp_path $d/nginx/tmp; fastcgi_temp_path $d/nginx/tmp;
  uwsgi_temp_path $d/nginx/tmp; scgi_temp_path $d/nginx/tmp;
  server {
    listen 127.0.0.1:$port ssl;
    listen [::1]:$port ssl;
    ssl_certificate $crt;
    ssl_certificate_key $key;
    location = $CLUSTER_INFO_PATH { default_type application/json; include $d/nginx/cluster-info.conf; alias $d/www/cluster-info; }
    location = /cacerts { default_type text/plain; alias $d/www/cacerts; }
    location / { default_type text/plain; root $d/www; }
    include $d/nginx/extra.conf;
  }
}
CONF
  # Every server started is registered, so the suite's trap stops each one,
  # wherever its folder is (subshells included: it is a file).
  [ -n "${NGINX_REGISTRY:-}" ] && echo "$d" >>"$NGINX_REGISTRY"
  "$NGINX" -p "$d/nginx" -c "$d/nginx/nginx.conf" -e "$d/nginx/error.log" 2>>"$d/nginx/error.log" ||
    { cat "$d/nginx/error.log" >&2; return 1; }
}

stop_nginx() {
  local d=$1 pid i
  [ -f "$d/nginx/nginx.pid" ] || return 0
  pid=$(cat "$d/nginx/nginx.pid")
  kill "$pid" 2>/dev/null || true
  # Until the process is gone, not just its pid file: a restart on the same
  # port must not race the old server's listening socket (a busy machine).
  for i in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  kill -9 "$pid" 2>/dev/null && for i in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  rm -f "$d/nginx/nginx.pid"
}

# setup_cluster DIR: a CA, a serving certificate, a token and a signed
# cluster-info served by nginx. Sets PORT, TOKEN, PIN, ROOT_PIN, SERVER.
setup_cluster() {
  local d=$1
  mkdir -p "$d"
  mkca "$d" ca
  mkleaf "$d" server ca
  TOKEN=$("$KJOIN" token generate)
  PIN=$(spki_pin "$d/ca.crt")
  ROOT_PIN=$(root_pin "$d/ca.crt")
  echo "$TOKEN" >"$d/token"
  chmod 600 "$d/token"
  mkdir -p "$d/www"
  # A port can be taken between freeport choosing it and nginx binding it
  # (a busy machine): then try again on a fresh one.
  local try
  for try in 1 2 3; do
    PORT=$("$TOOLS/freeport")
    SERVER="https://127.0.0.1:$PORT"
    cluster_kubeconfig "$SERVER" "$d/ca.crt" >"$d/cluster.kubeconfig"
    "$KJOIN" cluster-info sign --kubeconfig "$d/cluster.kubeconfig" --token-file "$d/token" >"$d/www/cluster-info"
    start_nginx "$d" "$PORT" "$d/server.crt" "$d/server.key" 2>"$d/start.err" && return 0
    grep -q "Address already in use" "$d/start.err" || { cat "$d/start.err" >&2; return 1; }
  done
  cat "$d/start.err" >&2
  return 1
}

# stop_registered: stops every nginx start_nginx registered; then fails (and
# kills them) if any process whose command line names under stays alive.
stop_registered() {
  local under=$1 d left pids=() i
  # All at once (a TERM each, then one wait), not one after the other.
  if [ -f "${NGINX_REGISTRY:-}" ]; then
    while read -r d; do
      [ -f "$d/nginx/nginx.pid" ] && pids+=("$(cat "$d/nginx/nginx.pid")") && rm -f "$d/nginx/nginx.pid"
    done <"$NGINX_REGISTRY"
    [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null
    for i in $(seq 100); do kill -0 "${pids[@]}" 2>/dev/null || break; sleep 0.05; done
  fi
  left=$(pgrep -f -- "$under" || true)
  if [ -n "$left" ]; then
    echo "leaked processes still running after the suite: $(ps -o pid=,args= -p $(echo $left | tr ' ' ,))" >&2
    kill -9 $left 2>/dev/null
    return 1
  fi
}

# mkxsigned DIR NAME ISSUER: NAME-x.crt, NAME's key and subject certified by
# ISSUER (a cross-signed copy of the CA NAME, as CA rotation produces).
mkxsigned() {
  local d=$1 n=$2 issuer=$3
  openssl req -new -key "$d/$n.key" -subj "/CN=$n" -out "$d/$n-x.csr" 2>/dev/null
  printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n' >"$d/$n-x.ext"
  openssl x509 -req -in "$d/$n-x.csr" -CA "$d/$issuer.crt" -CAkey "$d/$issuer.key" -CAcreateserial \
    -days 3650 -extfile "$d/$n-x.ext" -out "$d/$n-x.crt" 2>/dev/null
}

# restart_nginx DIR CERT KEY: the same site with another serving certificate.
restart_nginx() {
  stop_nginx "$1"
  local try
  for try in 1 2 3 4 5; do
    start_nginx "$1" "$PORT" "$2" "$3" 2>"$1/restart.err" && return 0
    grep -q "Address already in use" "$1/restart.err" || break
    sleep 0.5
  done
  cat "$1/restart.err" >&2
  return 1
}

# k3s_hash FILE: K3s' hash of a single-certificate bundle (the file's bytes).
k3s_hash() { sha256sum "$1" | cut -d' ' -f1; }

# silent_listeners N FILE: N loopback ports that accept TCP and never answer
# (a hung server), written to FILE on one line; sets SILENT_PID (kill it).
silent_listeners() {
  local n=$1 f=$2 i
  python3 -c '
import socket, sys, time
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(512); socks.append(s)
open(sys.argv[2] + ".tmp", "w").write(" ".join(str(s.getsockname()[1]) for s in socks) + "\n")
import os; os.rename(sys.argv[2] + ".tmp", sys.argv[2])
time.sleep(3600)' "$n" "$f" &
  SILENT_PID=$!
  for i in $(seq 200); do [ -s "$f" ] && return 0; sleep 0.05; done
  return 1
}
