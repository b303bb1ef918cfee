/* The engine every discovery source runs on: one deadline, capped and fully
 * jittered exponential backoff, bounded GETs, and the kubeconfig at the end. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include <kjoin/kubeconfig.h>
#include <kjoin/util.h>

#include "internal.h"

#define BACKOFF_BASE_MS 500
#define BACKOFF_CAP_MS 5000
#define REQUEST_TIMEOUT_MS 10000
#define BAD_SIGNATURE_RETRIES 2

void kjoin_discovery__log(const kjoin_run *r, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kjoin_vlogf(r->c->log, r->c->log_ctx, level, fmt, ap);
    va_end(ap);
}

static int64_t remaining(const kjoin_run *r) { return r->deadline - kjoin_now_ms(); }

kjoin_code kjoin_discovery__get(kjoin_run *r, const char *url, const kjoin_http_request *trust,
                                kjoin_http_response *resp, kjoin_err *err)
{
    kjoin_http_request req = *trust;
    req.url = url;
    req.audit_id = r->c->audit_id;
    int64_t left = remaining(r);
    req.timeout_ms = left < REQUEST_TIMEOUT_MS ? left : REQUEST_TIMEOUT_MS;
    if (req.timeout_ms <= 0)
        return kjoin_err_set(err, KJOIN_E_TRANSIENT, "no time left for GET %s", url);
    static const char *const modes[] = {"server not verified", "pinned CA", "system roots"};
    char shown[512];
    kjoin_url_redact(url, shown, sizeof(shown));
    int64_t started = kjoin_now_ms();
    req.want_headers = r->c->log != NULL;
    kjoin_code rc = kjoin_http_get(&req, resp, err);
    if (rc)
        kjoin_discovery__log(r, 4, "[http] GET %s (%s): %s (%lld ms)", shown, modes[req.tls], err ? err->msg : "failed",
                             (long long)(kjoin_now_ms() - started));
    else
        kjoin_discovery__log(r, 4, "[http] GET %s (%s): HTTP %ld, %zu bytes (%lld ms)", shown, modes[req.tls],
                             resp->status, resp->len, (long long)(kjoin_now_ms() - started));
    if (!rc)
        kjoin_log_lines(r->c->log, r->c->log_ctx, 6, "[http]   ", resp->headers);
    return rc;
}

/* A chained certificate that is self-signed (say, the self-signed copy of a
 * new root whose cross-signed copy an old pinned root issued) carries a
 * trusted key, so it ends a chain as an anchor. As an untrusted intermediate
 * it would break verification: OpenSSL picks it as the issuer, finds it
 * self-signed and untrusted, and does not try the cross-signed copy. */
static bool tls_anchor(const kjoin_cert_info *c, void *ctx)
{
    (void)ctx;
    return c->trust == KJOIN_TRUST_ANCHOR || (c->trust == KJOIN_TRUST_CHAINED && c->self_signed);
}

static bool tls_intermediate(const kjoin_cert_info *c, void *ctx)
{
    (void)ctx;
    return c->trust == KJOIN_TRUST_CHAINED && !c->self_signed;
}

kjoin_code kjoin_discovery__get_200(kjoin_run *r, const char *url, const kjoin_http_request *trust, unsigned retry,
                                    kjoin_http_response *resp, kjoin_err *err)
{
    kjoin_code rc = kjoin_discovery__get(r, url, trust, resp, err);
    if (rc || resp->status == 200)
        return rc;
    long st = resp->status;
    kjoin_http_response_release(resp);
    char shown[1024];
    kjoin_url_redact(url, shown, sizeof(shown));
    const char *hint = st == 401   ? " (the server refuses anonymous requests, which discovery needs)"
                       : st == 403 ? " (forbidden: anonymous access not allowed yet, or a proxy in the way; see NO_PROXY)"
                       : st == 404 ? " (not there yet?)"
                                   : "";
    bool transient = st >= 500 || st == 429 || (st == 403 && (retry & KJOIN_RETRY_403)) ||
                     (st == 404 && (retry & KJOIN_RETRY_404));
    return kjoin_err_set(err, transient ? KJOIN_E_TRANSIENT : KJOIN_E_OTHER, "GET %s: HTTP %ld%s", shown, st, hint);
}

kjoin_code kjoin_discovery__pinned(const kjoin_bundle *b, kjoin_http_request *req, kjoin_err *err)
{
    req->tls = KJOIN_TLS_PINNED;
    req->anchors_pem = kjoin_bundle_pem_filter(b, tls_anchor, NULL, &req->anchors_len);
    req->intermediates_pem = kjoin_bundle_pem_filter(b, tls_intermediate, NULL, &req->intermediates_len);
    if (!req->anchors_pem || !req->intermediates_pem) {
        kjoin_discovery__pinned_release(req);
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    return KJOIN_OK;
}

void kjoin_discovery__pinned_release(kjoin_http_request *req)
{
    free((char *)req->anchors_pem);
    free((char *)req->intermediates_pem);
    req->anchors_pem = req->intermediates_pem = NULL;
}

void kjoin_discovery__report_trust(const kjoin_run *r, const kjoin_bundle *b)
{
    for (size_t i = 0; i < kjoin_bundle_count(b); i++) {
        const kjoin_cert_info *c = kjoin_bundle_cert(b, i);
        if (c->trust == KJOIN_TRUST_ANCHOR && *c->matched_pin)
            kjoin_discovery__log(r, 0, "[discovery] Trusting CA \"%s\": matches pin %s", c->subject, c->matched_pin);
        else if (c->trust == KJOIN_TRUST_CHAINED)
            kjoin_discovery__log(r, 0, "[discovery] Trusting CA \"%s\": issued by a pinned certificate", c->subject);
        else if (c->trust == KJOIN_TRUST_DROPPED)
            kjoin_discovery__log(r, KJOIN_LOG_WARNING,
                                 "[discovery] WARNING: dropping certificate \"%s\" from the CA bundle: not pinned "
                                 "and not issued by a pinned certificate (its pins: %s%s%s)",
                                 c->subject, c->spki_pin, *c->root_pin ? ", " : "", c->root_pin);
    }
}

kjoin_code kjoin_discovery__finish(kjoin_run *r, const char *server, const char *endpoint, kjoin_bundle **bundle,
                                   kjoin_join_result *out, kjoin_err *err)
{
    size_t ca_len = 0;
    char *ca = *bundle ? kjoin_bundle_pem(*bundle, KJOIN_TRUSTED_MASK, &ca_len) : calloc(1, 1);
    if (!ca)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    char token[KJOIN_TOKEN_STR_MAX] = "";
    if (r->c->tls_bootstrap_token)
        kjoin_token_format(r->c->tls_bootstrap_token, token);
    kjoin_bootstrap_config cfg = {.cluster_name = r->c->cluster_name,
                                  .server = server,
                                  .ca_pem = ca,
                                  .ca_len = ca_len,
                                  .token = r->c->tls_bootstrap_token ? token : NULL,
                                  .username = r->c->username,
                                  .password = r->c->password};
    kjoin_join_result res = {0};
    kjoin_code rc = kjoin_kubeconfig_emit_bootstrap(&cfg, &res.kubeconfig, &res.kubeconfig_len, err);
    OPENSSL_cleanse(token, sizeof(token));
    free(ca);
    if (rc)
        return rc;
    res.server = strdup(server);
    res.endpoint = strdup(endpoint);
    if (!res.server || !res.endpoint) {
        kjoin_join_result_release(&res);
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    res.bundle = KJOIN_TAKE(*bundle);
    *out = res;
    return KJOIN_OK;
}

/* Sleeps a random time in [0, min(cap, base * 2^round)), never past the deadline. */
static void backoff(kjoin_run *r, unsigned round)
{
    int64_t ms = kjoin_backoff_ms(round, BACKOFF_BASE_MS, BACKOFF_CAP_MS);
    int64_t left = remaining(r);
    if (ms > left)
        ms = left > 0 ? left : 0;
    char when[32];
    kjoin_discovery__log(r, 1, "[discovery] Next attempt in %s", kjoin_duration_format(ms, when, sizeof(when)));
    kjoin_sleep_ms(ms);
}

kjoin_code kjoin_discovery__retry(kjoin_run *r, size_t n, const char *const *names, kjoin_attempt_fn attempt,
                                  kjoin_join_result *out, kjoin_err *err)
{
    unsigned bad_signatures[KJOIN_MAX_ENDPOINTS] = {0};
    bool failed_for_good[KJOIN_MAX_ENDPOINTS] = {0};
    kjoin_err last = {.code = KJOIN_E_TIMEOUT, .msg = "no attempt finished"};
    kjoin_err first_final = {0};
    size_t alive = n;
    if (n == 0 || n > KJOIN_MAX_ENDPOINTS)
        return kjoin_err_set(err, KJOIN_E_USAGE, "give 1 to %d API server endpoints", KJOIN_MAX_ENDPOINTS);

    for (unsigned round = 0;; round++) {
        for (size_t i = 0; i < n && alive; i++) {
            if (failed_for_good[i])
                continue;
            if (remaining(r) <= 0)
                goto timeout;
            kjoin_stage st = KJOIN_STAGE_OTHER;
            r->attempts++;
            kjoin_code rc = attempt(r, i, &st, out, &last);
            if (rc == KJOIN_OK) {
                out->attempts = r->attempts;
                out->elapsed_ms = kjoin_now_ms() - r->start;
                return KJOIN_OK;
            }
            bool retry = rc == KJOIN_E_TRANSIENT ||
                         (st == KJOIN_STAGE_SIGNATURE && ++bad_signatures[i] <= BAD_SIGNATURE_RETRIES);
            if (retry) {
                kjoin_discovery__log(r, 0, "[discovery] Retrying %s: %s", names[i], last.msg);
                continue;
            }
            kjoin_discovery__log(r, 0, "[discovery] %s failed: %s", names[i], last.msg);
            if (!first_final.code)
                first_final = last;
            failed_for_good[i] = true;
            alive--;
        }
        if (!alive)
            return kjoin_err_set(err, first_final.code, "%s", first_final.msg);
        if (remaining(r) <= 0)
            goto timeout;
        backoff(r, round);
    }
timeout:;
    char limit[32];
    return kjoin_err_set(err, KJOIN_E_TIMEOUT, "discovery timed out after %s; last error: %s",
                         kjoin_duration_format(r->c->timeout_ms, limit, sizeof(limit)), last.msg);
}

kjoin_code kjoin_discovery__over_endpoints(const kjoin_discovery_common *common, const void *source,
                                           const kjoin_endpoint *endpoints, size_t n, kjoin_attempt_fn attempt,
                                           kjoin_join_result *out, kjoin_err *err)
{
    if (n == 0 || n > KJOIN_MAX_ENDPOINTS)
        return kjoin_err_set(err, KJOIN_E_USAGE, "give 1 to %d server endpoints", KJOIN_MAX_ENDPOINTS);
    const char *names[KJOIN_MAX_ENDPOINTS];
    for (size_t i = 0; i < n; i++)
        names[i] = endpoints[i].authority;
    kjoin_run r = {.c = common, .source = source, .start = kjoin_now_ms()};
    r.deadline = r.start + common->timeout_ms;
    return kjoin_discovery__retry(&r, n, names, attempt, out, err);
}

void kjoin_join_result_release(kjoin_join_result *r)
{
    if (!r)
        return;
    if (r->kubeconfig)
        OPENSSL_cleanse(r->kubeconfig, r->kubeconfig_len);
    free(r->kubeconfig);
    free(r->server);
    free(r->endpoint);
    kjoin_bundle_free(r->bundle);
    memset(r, 0, sizeof(*r));
}
