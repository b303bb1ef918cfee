# The API client's retry policy, against nginx playing an API server that is
# overloaded (503), rate-limiting (429 with Retry-After) or refusing (404).

# token_kubeconfig SERVER: a kubeconfig for SERVER with this cluster's CA and
# its token as bearer credential.
token_kubeconfig() {
  cat <<KC
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "$1", certificate-authority-data: $(base64 -w0 <"$C/ca.crt")}
users:
- name: u
  user: {token: $(cat "$C/token")}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
KC
}

# api_site STATUS [EXTRA]: restarts this cluster's nginx answering STATUS to
# every secrets request; writes $T/admin.conf pointing at it.
api_site() {
  cat >"$C/nginx/extra.conf" <<CONF
location /api/v1/namespaces/kube-system/secrets { ${2:-} return $1; }
CONF
  restart_nginx "$C" "$C/server.crt" "$C/server.key" || return 1
  token_kubeconfig "$SERVER" >"$T/admin.conf"
  : >"$C/nginx/access.log"
}
api_requests() { grep -c 'kube-system/secrets' "$C/nginx/access.log"; }

t_api_retries_5xx_until_the_deadline() {
  new_cluster api5xx || return 1
  api_site 503 || return 1
  kj 3 token list --kubeconfig "$T/admin.conf" --timeout 2s || return 1
  err_has "HTTP 503" || return 1
  [ "$(api_requests)" -ge 3 ] || fail "only $(api_requests) request(s): 503 was not retried" || return 1
  # Every request carries the run's ID as Audit-ID.
  ! grep 'kube-system/secrets' "$C/nginx/access.log" | grep -qvE '^[0-9a-f]{8}-[0-9a-f-]{27} ' ||
    fail "a request without Audit-ID"
}

t_api_honours_retry_after() {
  new_cluster api429 || return 1
  api_site 429 'add_header Retry-After 2 always;' || return 1
  kj 3 token list --kubeconfig "$T/admin.conf" --timeout 3s || return 1
  err_has "TooManyRequests" || return 1
  # Attempts at 0 s and 2 s; jittered backoff alone would make about ten.
  [ "$(api_requests)" -eq 2 ] || fail "$(api_requests) requests in 3 s with Retry-After: 2"
}

t_api_4xx_fails_at_once() {
  new_cluster api404 || return 1
  api_site 404 || return 1
  kj 6 token list --kubeconfig "$T/admin.conf" --timeout 10s || return 1
  err_has "list secrets in kube-system: NotFound (HTTP 404)" || return 1
  [ "$(api_requests)" -eq 1 ] || fail "$(api_requests) requests: a 404 must not be retried"
}

# A create that may have been applied is never sent twice (a second POST of
# the same token would fail with AlreadyExists although the first worked).
t_api_post_5xx_is_not_repeated_unless_asked() {
  new_cluster apipost || return 1
  api_site 503 || return 1
  echo "$(cat "$C/token")" >"$T/t"
  kj 6 token create --token-file "$T/t" --kubeconfig "$T/admin.conf" --timeout 5s || return 1
  err_has "ServiceUnavailable" || return 1
  [ "$(api_requests)" -eq 1 ] || fail "$(api_requests) POSTs after a 503 without Retry-After" || return 1
  # With Retry-After the server says it did not apply it: then again.
  api_site 503 'add_header Retry-After 1 always;' || return 1
  kj 3 token create --token-file "$T/t" --kubeconfig "$T/admin.conf" --timeout 2500ms || return 1
  [ "$(api_requests)" -ge 2 ] || fail "$(api_requests) POST(s): Retry-After was not honoured"
}

# listening PORT: something listens on 127.0.0.1:PORT (read from /proc, no probe connection).
listening() { grep -qi ":$(printf '%04X' "$1") 00000000:0000 0A" /proc/net/tcp; }

# A server that takes the request and never answers: a GET is retried until
# the deadline, a POST is reported as possibly applied and not repeated.
t_api_post_sent_but_unanswered_is_not_repeated() {
  local port pid; port=$("$TOOLS/freeport")
  mkfifo "$T/in"; exec 9<>"$T/in"   # held open: s_server never sees end of input
  openssl s_server -accept "127.0.0.1:$port" -cert "$C/server.crt" -key "$C/server.key" -quiet \
    <"$T/in" >"$T/server.out" 2>&1 &
  pid=$!
  local i
  for i in $(seq 50); do listening "$port" && break; sleep 0.1; done
  token_kubeconfig "https://127.0.0.1:$port" >"$T/hang.conf"
  echo "$(cat "$C/token")" >"$T/t"
  kj 1 token create --token-file "$T/t" --kubeconfig "$T/hang.conf" --timeout 2s
  local rc=$?
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; exec 9>&-
  [ $rc -eq 0 ] || return 1
  err_has "it may have been applied, so it is not repeated" || return 1
  [ "$(grep -c '^POST /api' "$T/server.out")" -eq 1 ] || fail "$(grep -c '^POST /api' "$T/server.out") POSTs sent"
}

# Discovery never asks again sooner than a server shedding load asks (a 429
# with Retry-After, as API Priority and Fairness answers a herd).
t_api_discovery_honours_retry_after() {
  new_cluster disc429 || return 1
  printf 'if (-f %s/www/busy) { add_header Retry-After 3 always; return 429; }\n' "$C" >"$C/nginx/cluster-info.conf"
  touch "$C/www/busy"
  restart_nginx "$C" "$C/server.crt" "$C/server.key" || return 1
  local requests; requests=$(grep -c cluster-info "$C/nginx/access.log")
  kj 3 join --skip-phases preflight,kubelet-start $(join_args 5s) --discovery-token-ca-cert-hash "$PIN" || return 1
  err_has "HTTP 429" || return 1
  # Attempts at 0 s and 3 s; its own backoff alone would make about five.
  [ $(($(grep -c cluster-info "$C/nginx/access.log") - requests)) -le 2 ] ||
    fail "$(($(grep -c cluster-info "$C/nginx/access.log") - requests)) requests in 5 s with Retry-After: 3" || return 1
  # Once the server takes it, the join goes through.
  ( sleep 1; rm -f "$C/www/busy" ) &
  kj 0 join --skip-phases preflight,kubelet-start $(join_args 20s) --discovery-token-ca-cert-hash "$PIN" || return 1
  wait
}
