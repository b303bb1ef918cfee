# The API client's retry policy, against nginx playing an API server that is
# overloaded (503), rate-limiting (429 with Retry-After) or refusing (404).

# api_site STATUS [EXTRA]: restarts this cluster's nginx answering STATUS to
# every secrets request; writes $T/admin.conf pointing at it.
api_site() {
  cat >"$C/nginx/extra.conf" <<CONF
location /api/v1/namespaces/kube-system/secrets { ${2:-} return $1; }
CONF
  restart_nginx "$C" "$C/server.crt" "$C/server.key" || return 1
  cat >"$T/admin.conf" <<KC
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "$SERVER", certificate-authority-data: $(base64 -w0 <"$C/ca.crt")}
users:
- name: u
  user: {token: $(cat "$C/token")}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
KC
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
