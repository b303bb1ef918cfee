/* Token discovery: kubeadm's protocol with kjoin's stricter trust rules.
 *
 * One attempt against one endpoint: unverified GET of cluster-info, JWS
 * check, kubeconfig parse, pins applied to the whole bundle, GET again over
 * TLS verified against the pinned anchors, byte equality, kubeconfig emitted.
 * Attempts repeat over the endpoints with capped, fully jittered exponential
 * backoff until one passes, every endpoint failed for good, or the one
 * deadline passes. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include <kjoin/discovery.h>
#include <kjoin/jws.h>
#include <kjoin/kubeconfig.h>
#include <kjoin/transport.h>
#include <kjoin/util.h>

#define BACKOFF_BASE_MS 500
#define BACKOFF_CAP_MS 5000
#define REQUEST_TIMEOUT_MS 10000
#define BAD_SIGNATURE_RETRIES 2

typedef struct run {
    const kjoin_token_discovery *o;
    int64_t deadline;
    unsigned attempts;
} run;

__attribute__((format(printf, 3, 4))) static void logf_(const run *r, int level, const char *fmt, ...)
{
    if (!r->o->log)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    r->o->log(r->o->log_ctx, level, line);
}

/* Why an attempt failed, so the retry policy can tell a bad signature apart. */
typedef enum stage { STAGE_OTHER, STAGE_SIGNATURE } stage;

static int64_t remaining(const run *r) { return r->deadline - kjoin_now_ms(); }

/* GET cluster-info with the given trust; non-200 answers become errors. */
static kjoin_code fetch(run *r, const kjoin_endpoint *ep, const kjoin_http_request *trust,
                        kjoin_http_response *resp, kjoin_err *err)
{
    char url[512];
    snprintf(url, sizeof(url), "https://%s" KJOIN_CLUSTER_INFO_PATH, ep->authority);
    kjoin_http_request req = *trust;
    req.url = url;
    req.audit_id = r->o->audit_id;
    int64_t left = remaining(r);
    req.timeout_ms = left < REQUEST_TIMEOUT_MS ? left : REQUEST_TIMEOUT_MS;
    if (req.timeout_ms <= 0)
        return kjoin_err_set(err, KJOIN_E_TRANSIENT, "no time left for GET %s", url);
    kjoin_code rc = kjoin_http_get(&req, resp, err);
    if (rc)
        return rc;
    long st = resp->status;
    if (st == 200)
        return KJOIN_OK;
    kjoin_http_response_release(resp);
    if (st == 403)
        return kjoin_err_set(err, KJOIN_E_TRANSIENT,
                             "GET %s: 403 Forbidden (is anonymous access to kube-public/cluster-info "
                             "allowed? kubeadm creates that role at init)",
                             url);
    if (st == 404)
        return kjoin_err_set(err, KJOIN_E_TRANSIENT, "GET %s: 404 Not Found (cluster-info not created yet?)", url);
    if (st >= 500 || st == 429)
        return kjoin_err_set(err, KJOIN_E_TRANSIENT, "GET %s: HTTP %ld", url, st);
    if (st == 401)
        return kjoin_err_set(err, KJOIN_E_OTHER,
                             "GET %s: 401 Unauthorized: the API server refuses anonymous requests "
                             "(--anonymous-auth=false), which token discovery needs",
                             url);
    return kjoin_err_set(err, KJOIN_E_OTHER, "GET %s: unexpected HTTP status %ld", url, st);
}

static void report_trust(run *r, const kjoin_bundle *b)
{
    for (size_t i = 0; i < kjoin_bundle_count(b); i++) {
        const kjoin_cert_info *c = kjoin_bundle_cert(b, i);
        switch (c->trust) {
        case KJOIN_TRUST_ANCHOR:
            if (*c->matched_pin)
                logf_(r, 0, "[discovery] Trusting CA \"%s\": matches pin %s", c->subject, c->matched_pin);
            break;
        case KJOIN_TRUST_CHAINED:
            logf_(r, 0, "[discovery] Trusting CA \"%s\": issued by a pinned certificate", c->subject);
            break;
        case KJOIN_TRUST_DROPPED:
            logf_(r, 0,
                  "[discovery] WARNING: dropping certificate \"%s\" from the CA bundle: not pinned and "
                  "not issued by a pinned certificate (its pins: %s%s%s)",
                  c->subject, c->spki_pin, *c->root_pin ? ", " : "", c->root_pin);
            break;
        case KJOIN_TRUST_NONE:
            break;
        }
    }
}

/* Everything after the unverified fetch; *st says which check failed. */
static kjoin_code check_and_build(run *r, const kjoin_endpoint *ep, const char *body, size_t len,
                                  stage *st, kjoin_join_result *out, kjoin_err *err)
{
    const kjoin_token_discovery *o = r->o;
    kjoin_cluster_info first = {0}, second = {0};
    kjoin_cluster cluster = {0};
    kjoin_bundle *bundle = NULL;
    kjoin_http_response resp = {0};
    char *anchors = NULL, *chain = NULL, *trusted = NULL;
    size_t anchors_len = 0, chain_len = 0, trusted_len = 0;

    kjoin_code rc = kjoin_cluster_info_parse(body, len, o->discovery_token->id, &first, err);
    if (rc)
        goto out;
    if (!first.jws) {
        rc = kjoin_err_set(err, KJOIN_E_TRANSIENT,
                           "cluster-info has no signature for token id \"%s\" yet (the control plane "
                           "signs new tokens after a short delay; an unknown or expired token never gets one)",
                           o->discovery_token->id);
        goto out;
    }
    const kjoin_token *tok = o->discovery_token;
    if (!*first.jws) {
        /* The signer leaves the key empty for a token it will not sign: final. */
        rc = kjoin_err_set(err, KJOIN_E_TRUST,
                           "token id \"%s\" is invalid for this cluster or has expired (its signature is "
                           "empty); create a new token on a control-plane node",
                           tok->id);
        goto out;
    }
    *st = STAGE_SIGNATURE;
    rc = kjoin_jws_verify(first.jws, first.kubeconfig, first.kubeconfig_len, tok->id, tok->secret,
                          KJOIN_TOKEN_SECRET_LEN, err);
    if (rc)
        goto out;
    *st = STAGE_OTHER;
    logf_(r, 0, "[discovery] Cluster-info signature for token id \"%s\" is valid", o->discovery_token->id);

    if ((rc = kjoin_kubeconfig_parse_cluster(first.kubeconfig, first.kubeconfig_len, &cluster, err)) ||
        (rc = kjoin_bundle_parse(cluster.ca_pem, cluster.ca_len, &bundle, err)) ||
        (rc = kjoin_bundle_apply_pins(bundle, o->unsafe_skip_ca_verification ? NULL : o->pins, err)))
        goto out;
    if (o->unsafe_skip_ca_verification)
        logf_(r, 0, "[discovery] WARNING: CA pinning skipped (--discovery-token-unsafe-skip-ca-verification): "
                    "trusting all %zu certificate(s) the cluster-info names", kjoin_bundle_count(bundle));
    else
        report_trust(r, bundle);

    anchors = kjoin_bundle_pem(bundle, KJOIN_TRUST_MASK(KJOIN_TRUST_ANCHOR), &anchors_len);
    chain = kjoin_bundle_pem(bundle, KJOIN_TRUST_MASK(KJOIN_TRUST_CHAINED), &chain_len);
    trusted = kjoin_bundle_pem(bundle, KJOIN_TRUSTED_MASK, &trusted_len);
    if (!anchors || !chain || !trusted) {
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        goto out;
    }

    logf_(r, 0, "[discovery] Re-fetching cluster-info from %s over TLS verified against the pinned CA",
          ep->authority);
    kjoin_http_request pinned = {.tls = KJOIN_TLS_PINNED,
                                 .anchors_pem = anchors,
                                 .anchors_len = anchors_len,
                                 .intermediates_pem = chain,
                                 .intermediates_len = chain_len};
    if ((rc = fetch(r, ep, &pinned, &resp, err)) ||
        (rc = kjoin_cluster_info_parse(resp.body, resp.len, NULL, &second, err)))
        goto out;
    if (second.kubeconfig_len != first.kubeconfig_len ||
        memcmp(second.kubeconfig, first.kubeconfig, first.kubeconfig_len) != 0) {
        rc = kjoin_err_set(err, KJOIN_E_TRUST,
                           "the kubeconfig fetched over verified TLS differs from the signed one");
        goto out;
    }
    logf_(r, 0, "[discovery] Verified re-fetch returned the signed kubeconfig byte for byte");

    char token[KJOIN_TOKEN_STR_MAX];
    kjoin_token_format(o->tls_bootstrap_token, token);
    kjoin_bootstrap_config cfg = {.cluster_name = o->cluster_name,
                                  .server = cluster.server,
                                  .ca_pem = trusted,
                                  .ca_len = trusted_len,
                                  .token = token};
    kjoin_join_result res = {0};
    rc = kjoin_kubeconfig_emit_bootstrap(&cfg, &res.kubeconfig, &res.kubeconfig_len, err);
    OPENSSL_cleanse(token, sizeof(token));
    if (rc)
        goto out;
    res.server = KJOIN_TAKE(cluster.server);
    res.endpoint = strdup(ep->authority);
    res.bundle = KJOIN_TAKE(bundle);
    *out = res;
out:
    kjoin_cluster_info_release(&first);
    kjoin_cluster_info_release(&second);
    kjoin_cluster_release(&cluster);
    kjoin_bundle_free(bundle);
    kjoin_http_response_release(&resp);
    free(anchors);
    free(chain);
    free(trusted);
    return rc;
}

static kjoin_code attempt(run *r, const kjoin_endpoint *ep, stage *st, kjoin_join_result *out,
                          kjoin_err *err)
{
    kjoin_http_response resp = {0};
    kjoin_http_request insecure = {.tls = KJOIN_TLS_INSECURE};
    *st = STAGE_OTHER;
    r->attempts++;
    logf_(r, 0, "[discovery] Requesting cluster-info from %s (server not verified yet)", ep->authority);
    kjoin_code rc = fetch(r, ep, &insecure, &resp, err);
    if (!rc)
        rc = check_and_build(r, ep, resp.body, resp.len, st, out, err);
    kjoin_http_response_release(&resp);
    return rc;
}

/* Sleeps a random time in [0, min(cap, base * 2^round)), never past the deadline. */
static void backoff(run *r, unsigned round)
{
    int64_t ceiling = BACKOFF_BASE_MS;
    for (unsigned i = 0; i < round && ceiling < BACKOFF_CAP_MS; i++)
        ceiling *= 2;
    if (ceiling > BACKOFF_CAP_MS)
        ceiling = BACKOFF_CAP_MS;
    uint32_t rnd = 0;
    kjoin_random_bytes(&rnd, sizeof(rnd), NULL);
    int64_t ms = (int64_t)(rnd % (uint32_t)ceiling);
    int64_t left = remaining(r);
    if (ms > left)
        ms = left > 0 ? left : 0;
    char when[32];
    logf_(r, 1, "[discovery] Next attempt in %s", kjoin_duration_format(ms, when, sizeof(when)));
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

kjoin_code kjoin_discover_token(const kjoin_token_discovery *o, kjoin_join_result *out, kjoin_err *err)
{
    if (o->n_endpoints == 0 || o->n_endpoints > KJOIN_MAX_ENDPOINTS)
        return kjoin_err_set(err, KJOIN_E_USAGE, "give 1 to %d API server endpoints", KJOIN_MAX_ENDPOINTS);
    if (kjoin_pinset_count(o->pins) == 0 && !o->unsafe_skip_ca_verification)
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "token discovery without a CA pin is unsafe: pass --discovery-token-ca-cert-hash, "
                             "or --discovery-token-unsafe-skip-ca-verification to accept that risk");
    int64_t start = kjoin_now_ms();
    run r = {.o = o, .deadline = start + o->timeout_ms};
    unsigned bad_signatures[KJOIN_MAX_ENDPOINTS] = {0};
    bool failed_for_good[KJOIN_MAX_ENDPOINTS] = {0};
    size_t n = o->n_endpoints;
    kjoin_err last = {.code = KJOIN_E_TIMEOUT, .msg = "no attempt finished"};
    kjoin_err first_final = {0};
    size_t alive = n;

    for (unsigned round = 0;; round++) {
        for (size_t i = 0; i < n && alive; i++) {
            if (failed_for_good[i])
                continue;
            if (remaining(&r) <= 0)
                goto timeout;
            stage st;
            kjoin_code rc = attempt(&r, &o->endpoints[i], &st, out, &last);
            if (rc == KJOIN_OK) {
                out->attempts = r.attempts;
                out->elapsed_ms = kjoin_now_ms() - start;
                logf_(&r, 0, "[discovery] Using API server \"%s\" (from cluster-info, discovered via %s)",
                      out->server, o->endpoints[i].authority);
                return KJOIN_OK;
            }
            bool retry = rc == KJOIN_E_TRANSIENT ||
                         (st == STAGE_SIGNATURE && ++bad_signatures[i] <= BAD_SIGNATURE_RETRIES);
            if (retry) {
                logf_(&r, 0, "[discovery] Retrying %s: %s", o->endpoints[i].authority, last.msg);
                continue;
            }
            logf_(&r, 0, "[discovery] %s failed: %s", o->endpoints[i].authority, last.msg);
            if (!first_final.code)
                first_final = last;
            failed_for_good[i] = true;
            alive--;
        }
        if (!alive)
            return kjoin_err_set(err, first_final.code, "%s", first_final.msg);
        if (remaining(&r) <= 0)
            goto timeout;
        backoff(&r, round);
    }
timeout:;
    char limit[32];
    return kjoin_err_set(err, KJOIN_E_TIMEOUT, "discovery timed out after %s; last error: %s",
                         kjoin_duration_format(o->timeout_ms, limit, sizeof(limit)), last.msg);
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
