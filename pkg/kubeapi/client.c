/* Requests to the Kubernetes API: one deadline, retries of what may heal,
 * Status errors decoded. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/crypto.h>

#include <kjoin/private/kubeapi.h>
#include <kjoin/private/transport.h>
#include <kjoin/private/util.h>

#define BACKOFF_BASE_MS 250
#define BACKOFF_CAP_MS 5000
#define REQUEST_TIMEOUT_MS 30000
#define URL_MAX 2048

struct kjoin_kubeapi {
    kjoin_kubeapi_config cfg;
    int64_t deadline;
    int64_t call_timeout_ms; /* each request's own bound; 0: none */
    char audit_id[65];
    /* The last answer's Date minus our monotonic clock, in ms; 0: none yet.
     * One atomic: a client may serve two threads (kjoin approver's). */
    _Atomic int64_t server_clock_offset_ms;
    kjoin_log_fn log;
    void *log_ctx;
};

kjoin_code kjoin_kubeapi_new(kjoin_kubeapi_config *cfg, const kjoin_kubeapi_options *opts, kjoin_kubeapi **out,
                             kjoin_err *err)
{
    if (kjoin_version_check(opts ? &opts->version : NULL, KJOIN_KUBEAPI_OPTIONS_VERSION, "API client's options",
                            "KJOIN_KUBEAPI_OPTIONS_INIT", err))
        return KJOIN_E_USAGE;
    if (!cfg->server)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the API client has no server");
    if (!cfg->cert_pem != !cfg->key_pem)
        return kjoin_err_set(err, KJOIN_E_USAGE, "a client certificate needs its key");
    if (opts->timeout_ms <= 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the API client's timeout must be positive");
    kjoin_kubeapi *api = calloc(1, sizeof(*api));
    if (!api)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    api->cfg = *cfg;
    memset(cfg, 0, sizeof(*cfg));
    api->deadline = kjoin_now_ms() + opts->timeout_ms;
    api->call_timeout_ms = opts->call_timeout_ms > 0 ? opts->call_timeout_ms : 0;
    snprintf(api->audit_id, sizeof(api->audit_id), "%s", opts->audit_id ? opts->audit_id : "");
    api->log = opts->log;
    api->log_ctx = opts->log_ctx;
    *out = api;
    return KJOIN_OK;
}

void kjoin_kubeapi_free(kjoin_kubeapi *api)
{
    if (!api)
        return;
    kjoin_kubeapi_config_release(&api->cfg);
    free(api);
}

const char *kjoin_kubeapi_server(const kjoin_kubeapi *api) { return api->cfg.server; }

const char *kjoin_kubeapi_ca_pem(const kjoin_kubeapi *api, size_t *len)
{
    if (len)
        *len = api->cfg.ca_len;
    return api->cfg.ca_pem;
}

int64_t kjoin_kubeapi_remaining_ms(const kjoin_kubeapi *api) { return api->deadline - kjoin_now_ms(); }

void kjoin_kubeapi_response_release(kjoin_kubeapi_response *r)
{
    if (!r)
        return;
    if (r->body)
        kjoin_free_wiped(r->body, r->len); /* Secrets come back in bodies */
    memset(r, 0, sizeof(*r));
}

#define logf_(api, level, ...) kjoin_logf((api)->log, (api)->log_ctx, level, __VA_ARGS__)

static const char *reason_of_status(long st)
{
    switch (st) {
    case 400: return "BadRequest";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "NotFound";
    case 405: return "MethodNotAllowed";
    case 409: return "Conflict";
    case 410: return "Expired";
    case 415: return "UnsupportedMediaType";
    case 422: return "Invalid";
    case 429: return "TooManyRequests";
    case 500: return "InternalError";
    case 503: return "ServiceUnavailable";
    case 504: return "Timeout";
    }
    return st >= 500 ? "InternalError" : "Unknown";
}

void kjoin_kubeapi_status_decode(long http_status, const char *body, size_t len,
                                 char reason[KJOIN_KUBEAPI_REASON_MAX], char message[KJOIN_KUBEAPI_MESSAGE_MAX])
{
    reason[0] = message[0] = '\0';
    if (http_status >= 200 && http_status < 300)
        return;
    json_tokener *tok = json_tokener_new_ex(32);
    json_object *root = tok && body && len <= KJOIN_HTTP_MAX_BODY ? json_tokener_parse_ex(tok, body, (int)len) : NULL;
    json_object *kind = NULL, *r = NULL, *m = NULL;
    if (root && json_object_is_type(root, json_type_object) && json_object_object_get_ex(root, "kind", &kind) &&
        json_object_is_type(kind, json_type_string) && strcmp(json_object_get_string(kind), "Status") == 0) {
        if (json_object_object_get_ex(root, "reason", &r) && json_object_is_type(r, json_type_string))
            kjoin_printable(reason, KJOIN_KUBEAPI_REASON_MAX, json_object_get_string(r), false);
        if (json_object_object_get_ex(root, "message", &m) && json_object_is_type(m, json_type_string))
            kjoin_printable(message, KJOIN_KUBEAPI_MESSAGE_MAX, json_object_get_string(m), false);
    }
    if (!*reason)
        kjoin_printable(reason, KJOIN_KUBEAPI_REASON_MAX, reason_of_status(http_status), false);
    if (!*message)
        snprintf(message, KJOIN_KUBEAPI_MESSAGE_MAX, "HTTP %ld", http_status);
    json_object_put(root);
    json_tokener_free(tok);
}

kjoin_code kjoin_kubeapi_check(const kjoin_kubeapi_response *r, const char *what, kjoin_err *err)
{
    if (r->status >= 200 && r->status < 300)
        return KJOIN_OK;
    return kjoin_err_set(err, KJOIN_E_API, "%s: %s (HTTP %ld): %s", what, r->reason, r->status, r->message);
}

kjoin_code kjoin_kubeapi_request(kjoin_kubeapi *api, const char *method, const char *path, const char *body,
                                 kjoin_kubeapi_response *out, kjoin_err *err)
{
    char url[URL_MAX];
    if (!path || path[0] != '/')
        return kjoin_err_set(err, KJOIN_E_OTHER, "API path must start with /");
    int n = snprintf(url, sizeof(url), "%s%s", api->cfg.server, path);
    if (n < 0 || (size_t)n >= sizeof(url))
        return kjoin_err_set(err, KJOIN_E_OTHER, "API URL is longer than %zu bytes", sizeof(url) - 1);
    kjoin_http_request req = {
        .method = method,
        .url = url,
        .tls = api->cfg.ca_pem ? KJOIN_TLS_PINNED : KJOIN_TLS_SYSTEM,
        .anchors_pem = api->cfg.ca_pem,
        .anchors_len = api->cfg.ca_len,
        .audit_id = *api->audit_id ? api->audit_id : NULL,
        .body = body,
        .body_len = body ? strlen(body) : 0,
        .bearer_token = api->cfg.token,
        .client_cert_pem = api->cfg.cert_pem,
        .client_cert_len = api->cfg.cert_len,
        .client_key_pem = api->cfg.key_pem,
        .client_key_len = api->cfg.key_len,
        .want_headers = api->log != NULL,
    };
    char last[KJOIN_ERR_MSG_MAX] = "no attempt";
    /* This request's own bound (kubeadm's kubernetesAPICall), when it ends first. */
    int64_t ends = api->deadline, bound = api->call_timeout_ms ? kjoin_now_ms() + api->call_timeout_ms : 0;
    bool bounded = bound && bound < ends;
    if (bounded)
        ends = bound;
    for (unsigned attempt = 0;; attempt++) {
        int64_t left = ends - kjoin_now_ms();
        if (left <= 0 && bounded)
            return kjoin_err_set(err, KJOIN_E_TIMEOUT, "%s %s: timed out after the call's own %lld ms; last failure: %s",
                                 method, path, (long long)api->call_timeout_ms, last);
        if (left <= 0)
            return kjoin_err_set(err, KJOIN_E_TIMEOUT, "%s %s: timed out; last failure: %s", method, path, last);
        req.timeout_ms = left < REQUEST_TIMEOUT_MS ? left : REQUEST_TIMEOUT_MS;
        kjoin_http_response resp = {0};
        kjoin_err inner;
        int64_t started = kjoin_now_ms();
        kjoin_code rc = kjoin_http_send(&req, &resp, &inner);
        int64_t wait = -1;
        if (rc == KJOIN_E_TRANSIENT) {
            logf_(api, 4, "[api] %s %s: %s (%lld ms)", method, path, inner.msg, (long long)(kjoin_now_ms() - started));
            snprintf(last, sizeof(last), "%s", inner.msg);
        } else if (rc) {
            return kjoin_err_set(err, rc, "%s", inner.msg);
        } else {
            logf_(api, 4, "[api] %s %s: HTTP %ld (%lld ms)", method, path, resp.status,
                  (long long)(kjoin_now_ms() - started));
            kjoin_log_lines(api->log, api->log_ctx, 6, "[api]   ", resp.headers);
            free(resp.headers); /* the body moves into the answer below */
            resp.headers = NULL;
            if (resp.date_s > 0)
                atomic_store(&api->server_clock_offset_ms, resp.date_s * 1000 - kjoin_now_ms());
            kjoin_kubeapi_response r = {.status = resp.status, .body = resp.body, .len = resp.len};
            kjoin_kubeapi_status_decode(resp.status, resp.body, resp.len, r.reason, r.message);
            /* 429 was not processed: always again. A 5xx may have been
             * applied: a GET again, another method only when the server
             * asks for it with Retry-After (client-go's rule). */
            bool again = resp.status == 429 ||
                         (resp.status >= 500 && (strcmp(method, "GET") == 0 || resp.retry_after_ms >= 0));
            if (!again) {
                *out = r;
                return KJOIN_OK;
            }
            snprintf(last, sizeof(last), "HTTP %ld %s: %s", resp.status, r.reason, r.message);
            wait = resp.retry_after_ms;
            kjoin_http_response_release(&resp);
        }
        /* What the server asked (Retry-After), else full jitter. */
        int64_t pause = wait >= 0 ? wait : kjoin_backoff_ms(attempt, BACKOFF_BASE_MS, BACKOFF_CAP_MS) + 1;
        left = ends - kjoin_now_ms();
        if (pause > left)
            pause = left > 0 ? left : 0;
        kjoin_sleep_ms(pause);
    }
}

int64_t kjoin_kubeapi_server_time(const kjoin_kubeapi *api)
{
    int64_t offset = atomic_load(&api->server_clock_offset_ms);
    return offset ? (offset + kjoin_now_ms()) / 1000 : 0;
}

int kjoin_kubeapi_version_minor(const char *json, size_t len)
{
    json_tokener *tok = len <= INT32_MAX ? json_tokener_new() : NULL;
    json_object *o = tok ? json_tokener_parse_ex(tok, json, (int)len) : NULL, *m = NULL;
    long minor = 0;
    if (o && json_object_object_get_ex(o, "minor", &m) && json_object_is_type(m, json_type_string))
        minor = strtol(json_object_get_string(m), NULL, 10); /* "37", or "37+" */
    json_object_put(o);
    json_tokener_free(tok);
    return minor > 0 && minor < 1000 ? (int)minor : 0;
}

int kjoin_kubeapi_server_minor(kjoin_kubeapi *api)
{
    kjoin_kubeapi_response resp = {0};
    int minor = 0;
    if (kjoin_kubeapi_request(api, "GET", "/version", NULL, &resp, NULL) == KJOIN_OK && resp.status == 200)
        minor = kjoin_kubeapi_version_minor(resp.body, resp.len);
    kjoin_kubeapi_response_release(&resp);
    return minor;
}

kjoin_code kjoin_kubeapi_stream(kjoin_kubeapi *api, const char *path, int64_t timeout_ms, size_t max_body,
                                void (*sink)(const char *data, size_t len, void *ctx), void *sink_ctx,
                                kjoin_kubeapi_response *out, kjoin_err *err)
{
    char url[URL_MAX];
    int n = snprintf(url, sizeof(url), "%s%s", api->cfg.server, path);
    if (path[0] != '/' || n < 0 || (size_t)n >= sizeof(url))
        return kjoin_err_set(err, KJOIN_E_OTHER, "bad API path");
    kjoin_http_request req = {
        .url = url,
        .tls = api->cfg.ca_pem ? KJOIN_TLS_PINNED : KJOIN_TLS_SYSTEM,
        .anchors_pem = api->cfg.ca_pem,
        .anchors_len = api->cfg.ca_len,
        .audit_id = *api->audit_id ? api->audit_id : NULL,
        .bearer_token = api->cfg.token,
        .client_cert_pem = api->cfg.cert_pem,
        .client_cert_len = api->cfg.cert_len,
        .client_key_pem = api->cfg.key_pem,
        .client_key_len = api->cfg.key_len,
        .timeout_ms = timeout_ms,
        .max_body = max_body,
        .sink = sink,
        .sink_ctx = sink_ctx,
    };
    kjoin_http_response resp = {0};
    int64_t started = kjoin_now_ms();
    kjoin_code rc = kjoin_http_send(&req, &resp, err);
    if (rc)
        return rc;
    logf_(api, 4, "[api] GET %s: HTTP %ld (%lld ms, streamed)", path, resp.status,
          (long long)(kjoin_now_ms() - started));
    kjoin_kubeapi_response r = {.status = resp.status, .body = resp.body, .len = resp.len};
    kjoin_kubeapi_status_decode(resp.status, resp.body, resp.len, r.reason, r.message);
    free(resp.headers);
    *out = r;
    return KJOIN_OK;
}
