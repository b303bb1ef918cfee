# One kept TLS connection per endpoint: the verified re-fetch checks the
# live connection's chain instead of a second handshake; retries reuse the
# connection; endpoints race (RFC 8305).

# kj_then_stop PID EXPECTED ARGS...: kj, then stops the helper process PID
# whatever kj found; returns kj's status.
kj_then_stop() {
  local pid=$1 rc; shift
  kj "$@"; rc=$?
  kill "$pid"; wait "$pid" 2>/dev/null
  return "$rc"
}

# requests_by_connection LOG: "<connection> <requests>" per TLS connection.
requests_by_connection() { awk '{ n[$2]++ } END { for (c in n) print c, n[c] }' "$1"; }

t_conn_one_handshake_per_join() {
  : >"$C/nginx/conn.log"
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" -v 4 || return 1
  err_has "(server not verified): HTTP 200" || return 1
  grep -F "(pinned CA): HTTP 200" "$ERR" | grep -qF "same connection" || fail "the verified GET opened a connection: $(grep http "$ERR")" || return 1
  local by; by=$(requests_by_connection "$C/nginx/conn.log")
  [ "$(wc -l <<<"$by")" = 1 ] && [ "$(cut -d' ' -f2 <<<"$by")" = 2 ] || fail "nginx saw: $(cat "$C/nginx/conn.log")"
}

t_conn_polling_keeps_one_connection() {
  local c=$ROOT/poll; new_cluster poll || return 1
  mv "$C/www/cluster-info" "$C/cluster-info.later"   # 404 until it is moved back
  ( sleep 2; mv "$C/cluster-info.later" "$C/www/cluster-info" ) &
  local mover=$!
  kj 0 join --skip-phases preflight,kubelet-start $(join_args 30s) --discovery-token-ca-cert-hash "$PIN" -v 1
  local rc=$?
  wait "$mover"; stop_nginx "$c"
  [ "$rc" = 0 ] || return 1
  local requests; requests=$(wc -l <"$c/nginx/conn.log")
  [ "$requests" -ge 3 ] || fail "expected a 404 and then two GETs, nginx saw $requests requests" || return 1
  [ "$(requests_by_connection "$c/nginx/conn.log" | wc -l)" = 1 ] ||
    fail "polling opened more than one connection: $(cat "$c/nginx/conn.log")" || return 1
  grep -q " 404 " "$c/nginx/conn.log" || fail "no 404 was served" || return 1
  # Not sooner than kubeadm's poll: the retry comes 5 s after the first try at least.
  awk 'NR == 1 { t = $6 } NR == 2 { exit !($6 - t >= 4.99 && $6 - t < 10) }' "$c/nginx/conn.log" ||
    fail "the retry came too soon or too late: $(cat "$c/nginx/conn.log")"
}

# serve_second C FILE: the connection's second request (the verified
# re-fetch) gets FILE instead of cluster-info.
serve_second() {
  cp "$2" "$1/www/second"
  echo 'if ($connection_requests = 2) { rewrite ^ /second last; }' >"$1/nginx/cluster-info.conf"
  echo "location = /second { default_type application/json; alias $1/www/second; }" >"$1/nginx/extra.conf"
  stop_nginx "$1"; start_nginx "$1" "$PORT" "$1/server.crt" "$1/server.key"
}

# The re-fetch is parsed as it arrives and compared with the signed
# kubeconfig, never kept: another kubeconfig there is refused...
t_conn_refetch_with_other_kubeconfig_refused() {
  new_cluster refetch-other || return 1
  sed 's|server: https://127.0.0.1|server: https://127.0.0.2|' "$C/www/cluster-info" >"$T/second"
  serve_second "$C" "$T/second" || return 1
  kj 4 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "the kubeconfig fetched again over TLS differs from the signed one" || return 1
  [ ! -e "$T/kubelet.conf" ] || fail "kubeconfig written after a failed re-fetch" || return 1
  [ "$(awk '$3 == 2' "$C/nginx/conn.log" | wc -l)" = 1 ] || fail "no re-fetch on the connection: $(cat "$C/nginx/conn.log")"
}

# ... and so is one cut short; the same kubeconfig in another ConfigMap
# (moved keys, new metadata, other spacing) is the same kubeconfig.
t_conn_refetch_cut_short_refused() {
  new_cluster refetch-short || return 1
  head -c -40 "$C/www/cluster-info" >"$T/second"
  serve_second "$C" "$T/second" || return 1
  kj 4 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "cluster-info is not valid JSON" || return 1
  [ ! -e "$T/kubelet.conf" ] || fail "kubeconfig written after a failed re-fetch"
}

t_conn_refetch_same_kubeconfig_other_envelope_joins() {
  new_cluster refetch-same || return 1
  jq '{data: .data, metadata: (.metadata + {resourceVersion: "42"}), kind: .kind, apiVersion: .apiVersion}' \
    "$C/www/cluster-info" >"$T/second" || return 1
  cmp -s "$T/second" "$C/www/cluster-info" && { fail "the second body is not different"; return 1; }
  serve_second "$C" "$T/second" || return 1
  kj 0 join --skip-phases preflight,kubelet-start $(join_args) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "Verified re-fetch returned the signed kubeconfig byte for byte" || return 1
  [ "$(awk '$3 == 2 && $7 == "/second"' "$C/nginx/conn.log" | wc -l)" = 1 ] || fail "the re-fetch was not the second body: $(cat "$C/nginx/conn.log")"
}

# start_certflip FIRST LATER: tests/tools/hostile.py serving C's
# cluster-info, with FIRST's certificate on the first connection (closed
# after one answer) and LATER's on every later one; sets FLIP_PORT, FLIP_PID.
start_certflip() {
  mkdir -p "$T/flip"; rm -f "$T/flip/port"
  printf '{"certs": [["%s.crt", "%s.key"], ["%s.crt", "%s.key"]], "close": "first", "routes": {"GET %s": {"file": "%s"}}}\n' \
    "$1" "$1" "$2" "$2" "$CLUSTER_INFO_PATH" "$C/www/cluster-info" >"$T/flip/config.json"
  python3 "$here/../tools/hostile.py" "$T/flip/port" "$T/flip" 2>"$T/flip/server.log" &
  FLIP_PID=$!
  local i; for i in $(seq 200); do [ -s "$T/flip/port" ] && break; sleep 0.05; done
  FLIP_PORT=$(cat "$T/flip/port")
}

t_conn_reconnect_after_pin_is_verified() {
  # The server closes the first connection: the verified GET needs a new
  # handshake, which must pass the pinned checks itself.
  start_certflip "$C/server" "$C/server"
  kj_then_stop "$FLIP_PID" 0 join --skip-phases preflight,kubelet-start "127.0.0.1:$FLIP_PORT" --token-file "$C/token" --kubeconfig-out "$T/k.conf" \
    --discovery-token-ca-cert-hash "$PIN" -v 4 || return 1
  grep -F "(pinned CA): HTTP 200" "$ERR" | grep -qF "new connection" || fail "the second GET did not reconnect: $(grep http "$ERR")"
}

# flip_refused FIRST LATER: a join against certflip serving FIRST, then
# LATER, fails trust verification (exit 4) and writes nothing.
flip_refused() {
  start_certflip "$1" "$2"
  kj_then_stop "$FLIP_PID" 4 join --skip-phases preflight,kubelet-start "127.0.0.1:$FLIP_PORT" --token-file "$C/token" --kubeconfig-out "$T/k.conf" \
    --discovery-token-ca-cert-hash "$PIN" --discovery-timeout 5s || return 1
  err_has "against the pinned CA failed" || return 1
  [ ! -e "$T/k.conf" ] || fail "a kubeconfig was written"
}

t_conn_reconnect_to_other_certificate_refused() {
  # The new connection presents a certificate of another CA.
  mkca "$T" other; mkleaf "$T" evil other
  flip_refused "$C/server" "$T/evil"
}

t_conn_first_connection_unpinned_refused() {
  # The connection that served cluster-info is itself checked at the pin:
  # an unpinned certificate there fails, though a reconnect would pass.
  mkca "$T" other; mkleaf "$T" evil other
  flip_refused "$T/evil" "$C/server"
}

t_conn_silent_endpoints_raced() {
  silent_listeners 3 "$T/silent" || return 1
  local eps=() p
  for p in $(cat "$T/silent"); do eps+=("127.0.0.1:$p"); done
  local start=$SECONDS
  kj_then_stop "$SILENT_PID" 0 join --skip-phases preflight,kubelet-start "${eps[@]}" "127.0.0.1:$PORT" --token-file "$C/token" --kubeconfig-out "$T/k.conf" \
    --discovery-token-ca-cert-hash "$PIN" -o json || return 1
  local took=$((SECONDS - start))
  jq -e --arg e "127.0.0.1:$PORT" '.endpoint == $e' "$OUT" >/dev/null || fail "wrong endpoint: $(cat "$OUT")" || return 1
  # Tried one after another, three silent endpoints cost 3 x 10 s.
  [ "$took" -le 4 ] || fail "took ${took}s: the endpoints were not raced"
}

t_conn_all_silent_time_out() {
  silent_listeners 2 "$T/silent" || return 1
  local eps=() p
  for p in $(cat "$T/silent"); do eps+=("127.0.0.1:$p"); done
  kj_then_stop "$SILENT_PID" 3 join --skip-phases preflight,kubelet-start "${eps[@]}" --token-file "$C/token" --kubeconfig-out "$T/k.conf" \
    --discovery-token-ca-cert-hash "$PIN" --discovery-timeout 3s || return 1
  err_has "discovery timed out after 3s" || return 1
  [ ! -e "$T/k.conf" ] || fail "a kubeconfig was written"
}

# This machine's own endpoints are never reached through a proxy: with
# every *_proxy variable naming a proxy that refuses connections, a join
# to 127.0.0.1 still goes straight there (it used to wait out its deadline
# on the proxy).
t_conn_own_endpoints_never_proxied() {
  (
    export HTTPS_PROXY=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 ALL_PROXY=http://127.0.0.1:9
    kj 0 join --skip-phases preflight,kubelet-start $(join_args 4s) --discovery-token-ca-cert-hash "$PIN"
  )
}

# The sections of docs/troubleshooting.md the CLI's errors name (cmd/kjoin/cli.c's table).
sections_named() {
  sed -n '/^static const char \*troubleshooting_section/,/^}/p' "$REPO/cmd/kjoin/cli.c" |
    sed -n 's/^ *{"[^"]*", "\([^"]*\)"},$/\1/p' | sort -u
}

# A network failure says which: refused, a name that does not resolve; a
# proxy in the way is named, and one that refuses the tunnel (403) ends
# the join at once instead of at the deadline.
t_conn_failures_say_which() {
  kj 3 join --skip-phases preflight,kubelet-start 127.0.0.1:1 --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" \
    --discovery-timeout 2s || return 1
  err_has "connection refused (nothing listens there" || return 1
  [ "$(grep -c '^\[discovery\] Retrying' "$ERR")" = 1 ] || fail "the same failure was said more than once" || return 1
  err_has '(cause and fix: ' && err_has 'troubleshooting.md, "connection refused")' || return 1
  # Every section an error names is a heading of docs/troubleshooting.md.
  local section
  while read -r section; do
    grep -qxF "### $section" "$REPO/docs/troubleshooting.md" || grep -qxF "## $section" "$REPO/docs/troubleshooting.md" ||
      fail "troubleshooting.md has no section \"$section\"" || return 1
  done < <(sections_named)
  [ "$(sections_named | wc -l)" -ge 15 ] ||
    fail "the sections were not found in cli.c" || return 1
  local port; port=$("$TOOLS/freeport") || return 1
  python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
while True:
    c, _ = s.accept(); c.recv(4096)
    c.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"); c.close()
' "$port" &
  local pid=$! start=$SECONDS rc=0
  sleep 0.3
  NO_PROXY= no_proxy= https_proxy=http://127.0.0.1:$port kj 1 join --skip-phases preflight,kubelet-start \
    kjoin-e2e.invalid:6443 --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" --discovery-timeout 30s || rc=1
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  [ $rc = 0 ] || return 1
  [ $((SECONDS - start)) -le 10 ] || fail "a refusing proxy was retried for $((SECONDS - start)) s" || return 1
  err_has "the proxy refused to connect to it" && err_has "through the proxy http://127.0.0.1:$port" || return 1
  NO_PROXY= no_proxy= https_proxy=http://127.0.0.1:1 kj 3 join --skip-phases preflight,kubelet-start \
    kjoin-e2e.invalid:6443 --token-file "$C/token" --discovery-token-ca-cert-hash "$PIN" --discovery-timeout 2s || return 1
  err_has "through the proxy http://127.0.0.1:1 (from https_proxy or HTTPS_PROXY; NO_PROXY lists" || return 1
}
