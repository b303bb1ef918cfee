/* The engine every discovery source runs on: one deadline, capped and fully
 * jittered exponential backoff, bounded GETs, and the kubeconfig at the end. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include <kjoin/private/kubeconfig.h>
#include <kjoin/private/util.h>
#include <kjoin/private/pin.h>

#include "internal.h"

#define BACKOFF_BASE_MS 500
#define BACKOFF_CAP_MS 5000
#define REQUEST_TIMEOUT_MS 10000
#define BAD_SIGNATURE_RETRIES 2
#define STAGGER_MS 250 /* RFC 8305's connection attempt delay */

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
        kjoin_discovery__log(r, 4, "[http] GET %s (%s): HTTP %ld, %zu bytes (%lld ms, %s)", shown, modes[req.tls],
                             resp->status, resp->len, (long long)(kjoin_now_ms() - started),
                             resp->reused ? "same connection" : "new connection");
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
    if (st == 429 || st == 503) /* API Priority and Fairness, a server shedding load: its wish, kept */
        r->retry_after_ms = resp->retry_after_ms;
    kjoin_http_response_release(resp);
    char shown[1024];
    kjoin_url_redact(url, shown, sizeof(shown));
    const char *hint = st == 401   ? " (the server refuses anonymous requests, which discovery needs)"
                       : st == 403 ? " (forbidden: anonymous access not allowed yet, or a proxy in the way; see NO_PROXY)"
                       : st == 404 ? " (not there yet?)"
                                   : "";
    r->not_ready = (st == 403 && (retry & KJOIN_RETRY_403)) || (st == 404 && (retry & KJOIN_RETRY_404));
    bool transient = st >= 500 || st == 429 || r->not_ready;
    return kjoin_err_set(err, transient ? KJOIN_E_TRANSIENT : KJOIN_E_OTHER, "GET %s: HTTP %ld%s", shown, st, hint);
}

/* The bundle's trust from the certificates already parsed. */
static kjoin_code bundle_trust(const kjoin_bundle *b, kjoin_tls_trust **out, kjoin_err *err)
{
    kjoin_tls_trust *t = kjoin_tls_trust_new();
    kjoin_code rc = t ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    for (size_t i = 0; !rc && i < kjoin_bundle_count(b); i++) {
        const kjoin_cert_info *c = kjoin_bundle_cert(b, i);
        if (tls_anchor(c, NULL) || tls_intermediate(c, NULL))
            rc = kjoin_tls_trust_add(t, kjoin_bundle_x509(b, i), tls_anchor(c, NULL), err);
    }
    if (rc)
        kjoin_tls_trust_free(t);
    else
        *out = t;
    return rc;
}

kjoin_code kjoin_discovery__pinned(const kjoin_bundle *b, kjoin_http_request *req, kjoin_err *err)
{
    kjoin_tls_trust *t = NULL;
    kjoin_code rc = bundle_trust(b, &t, err);
    req->tls = KJOIN_TLS_PINNED;
    req->trust = t;
    return rc;
}

void kjoin_discovery__pinned_release(kjoin_http_request *req)
{
    kjoin_tls_trust_free((kjoin_tls_trust *)req->trust);
    req->trust = NULL;
}

kjoin_code kjoin_discovery__pin(kjoin_run *r, const kjoin_bundle *b, kjoin_err *err)
{
    kjoin_discovery__unpin(r);
    kjoin_code rc = bundle_trust(b, &r->trust, err);
    return rc ? rc : kjoin_http_conn_pin(r->conn, r->trust, err);
}

void kjoin_discovery__unpin(kjoin_run *r)
{
    kjoin_http_conn_unpin(r->conn);
    kjoin_tls_trust_free(r->trust);
    r->trust = NULL;
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

/* Endpoints race as Happy Eyeballs does (RFC 8305): each starts
 * STAGGER_MS after the one before it, or as soon as that one's first attempt
 * ended; the first verified answer wins and the others are cancelled. Each
 * polls on its own kept connection. */
typedef struct race {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t n;
    const char *const *names;
    kjoin_attempt_fn attempt;
    kjoin_run runs[KJOIN_MAX_ENDPOINTS];
    bool answered[KJOIN_MAX_ENDPOINTS]; /* its first attempt ended */
    bool won, timed_out, have_final;
    kjoin_join_result result;
    kjoin_err last, first_final;
    unsigned attempts;
} race;

typedef struct racer {
    race *g;
    size_t i;
} racer;

/* Waits (holding g->mu) until the race is won, ready() holds, or until;
 * true when the race is won. */
static bool wait_until(race *g, int64_t until, bool (*ready)(const race *, size_t), size_t i)
{
    while (!g->won && !(ready && ready(g, i))) {
        int64_t now = kjoin_now_ms();
        if (now >= until)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t ns = ts.tv_nsec + (until - now) * 1000000;
        ts.tv_sec += ns / 1000000000;
        ts.tv_nsec = ns % 1000000000;
        pthread_cond_timedwait(&g->cv, &g->mu, &ts);
    }
    return g->won;
}

static bool previous_answered(const race *g, size_t i) { return g->answered[i - 1]; }

/* How long to wait before the next attempt (see internal.h). A control
 * plane that is not ready yet (403, 404) is polled about as kubeadm polls,
 * but never in lock-step and never more often: no node retries sooner than
 * kubeadm's first retry, 5 s after its first try, and a random phase across
 * one poll period spreads a fleet started together. From then on a node asks
 * once per KJOIN_POLL_MS, so it joins within 5 s of the data appearing
 * (within 10 s when the data appears before its first retry). Over an
 * outage of length T that is T/4.9 + 1 GETs per node on average, to
 * kubeadm's T/5 + 1.5. Other failures back off exponentially with full
 * jitter. */
int64_t kjoin_discovery__next_wait(const kjoin_run *r, int64_t attempt_ms, unsigned *round, bool *polling)
{
    if (!r->not_ready) {
        *polling = false;
        int64_t ms = kjoin_backoff_ms((*round)++, BACKOFF_BASE_MS, BACKOFF_CAP_MS);
        return ms < r->retry_after_ms ? r->retry_after_ms : ms;
    }
    int64_t ms = KJOIN_POLL_MS - attempt_ms;
    if (!*polling) /* the random phase, uniform in [0, KJOIN_POLL_MS) */
        ms += KJOIN_KUBEADM_POLL_MS - KJOIN_POLL_MS + kjoin_backoff_ms(0, KJOIN_POLL_MS, KJOIN_POLL_MS);
    *polling = true;
    return ms > 0 ? ms : 0;
}

/* Whether two failures say the same, the numbers in them (a time, a
 * count) aside: a retry that repeats one is folded. */
static bool same_words(const char *a, const char *b)
{
    for (;; a++, b++) {
        while (*a >= '0' && *a <= '9')
            a++;
        while (*b >= '0' && *b <= '9')
            b++;
        if (*a != *b)
            return false;
        if (!*a)
            return true;
    }
}

#define STILL_MS 30000 /* a folded retry is said again this often, with the time left */

static void race_endpoint(race *g, size_t i)
{
    kjoin_run *r = &g->runs[i];
    unsigned round = 0, bad_signatures = 0, folded = 0;
    bool polling = false;
    char said[KJOIN_ERR_MSG_MAX] = "";
    int64_t said_at = 0;
    pthread_mutex_lock(&g->mu);
    if (i > 0 && wait_until(g, r->start + (int64_t)i * STAGGER_MS, previous_answered, i))
        goto out;
    for (;;) {
        if (g->won)
            break;
        if (kjoin_now_ms() >= r->deadline) {
            g->timed_out = true;
            break;
        }
        g->attempts++;
        pthread_mutex_unlock(&g->mu);
        kjoin_stage st = KJOIN_STAGE_OTHER;
        kjoin_join_result res = {0};
        kjoin_err e = {0};
        r->not_ready = false;
        r->retry_after_ms = -1;
        int64_t began = kjoin_now_ms();
        kjoin_code rc = g->attempt(r, i, &st, &res, &e);
        pthread_mutex_lock(&g->mu);
        g->answered[i] = true;
        pthread_cond_broadcast(&g->cv);
        if (rc == KJOIN_OK && !g->won) {
            g->won = true;
            g->result = res;
            for (size_t j = 0; j < g->n; j++)
                if (j != i && g->runs[j].conn)
                    kjoin_http_conn_cancel(g->runs[j].conn);
            break;
        }
        kjoin_join_result_release(&res);
        if (g->won)
            break; /* cancelled: another endpoint answered */
        g->last = e;
        bool retry = rc == KJOIN_E_TRANSIENT || (st == KJOIN_STAGE_SIGNATURE && ++bad_signatures <= BAD_SIGNATURE_RETRIES);
        if (!retry) {
            kjoin_discovery__log(r, 0, "[discovery] %s failed: %s", g->names[i], e.msg);
            if (!g->have_final)
                g->first_final = e, g->have_final = true;
            break;
        }
        /* The same failure again is folded: said once, then every STILL_MS with how often and the time left. */
        if (!same_words(said, e.msg)) {
            kjoin_discovery__log(r, 0, "[discovery] Retrying %s: %s", g->names[i], e.msg);
            snprintf(said, sizeof(said), "%s", e.msg);
            said_at = kjoin_now_ms(), folded = 0;
        } else if (++folded, kjoin_now_ms() - said_at >= STILL_MS) {
            kjoin_discovery__log(r, 0, "[discovery] Still retrying %s (the same %u more times, %lld s left): %s",
                                 g->names[i], folded, (long long)((r->deadline - kjoin_now_ms()) / 1000), e.msg);
            said_at = kjoin_now_ms(), folded = 0;
        }
        int64_t ms = kjoin_discovery__next_wait(r, kjoin_now_ms() - began, &round, &polling);
        int64_t left = r->deadline - kjoin_now_ms();
        if (ms > left)
            ms = left > 0 ? left : 0;
        char when[32];
        kjoin_discovery__log(r, 1, "[discovery] Next attempt at %s in %s", g->names[i],
                             kjoin_duration_format(ms, when, sizeof(when)));
        if (wait_until(g, kjoin_now_ms() + ms, NULL, i))
            break;
    }
out:
    pthread_mutex_unlock(&g->mu);
}

static void *racer_main(void *arg)
{
    racer *t = arg;
    race_endpoint(t->g, t->i);
    return NULL;
}

kjoin_code kjoin_discovery__retry(kjoin_run *r, size_t n, const char *const *names, kjoin_attempt_fn attempt,
                                  kjoin_join_result *out, kjoin_err *err)
{
    if (n == 0 || n > KJOIN_MAX_ENDPOINTS)
        return kjoin_err_set(err, KJOIN_E_USAGE, "give 1 to %d API server endpoints", KJOIN_MAX_ENDPOINTS);
    race g = {.n = n, .names = names, .attempt = attempt,
              .last = {.code = KJOIN_E_TIMEOUT, .msg = "no attempt finished"}};
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g.cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&g.mu, NULL);
    kjoin_code rc = KJOIN_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        g.runs[i] = *r;
        if (!(g.runs[i].conn = kjoin_http_conn_new()))
            rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    racer racers[KJOIN_MAX_ENDPOINTS];
    pthread_t threads[KJOIN_MAX_ENDPOINTS];
    size_t started = 0;
    if (!rc && n == 1) {
        race_endpoint(&g, 0); /* one endpoint: no thread */
    } else if (!rc) {
        for (; started < n; started++) {
            racers[started] = (racer){&g, started};
            if (pthread_create(&threads[started], NULL, racer_main, &racers[started]) != 0)
                break;
        }
        if (started < n) {
            pthread_mutex_lock(&g.mu);
            g.won = true; /* stops the ones started */
            for (size_t j = 0; j < started; j++)
                kjoin_http_conn_cancel(g.runs[j].conn);
            pthread_cond_broadcast(&g.cv);
            pthread_mutex_unlock(&g.mu);
        }
        for (size_t j = 0; j < started; j++)
            pthread_join(threads[j], NULL);
        if (started < n) {
            kjoin_join_result_release(&g.result);
            rc = kjoin_err_set(err, KJOIN_E_OTHER, "cannot start a thread per endpoint");
        }
    }
    for (size_t i = 0; i < n; i++)
        kjoin_http_conn_free(g.runs[i].conn);
    pthread_mutex_destroy(&g.mu);
    pthread_cond_destroy(&g.cv);
    if (rc)
        return rc;
    if (g.won) {
        *out = g.result;
        out->attempts = g.attempts;
        out->elapsed_ms = kjoin_now_ms() - r->start;
        return KJOIN_OK;
    }
    if (g.have_final && !g.timed_out)
        return kjoin_err_set(err, g.first_final.code, "%s", g.first_final.msg);
    char limit[32];
    return kjoin_err_set(err, KJOIN_E_TIMEOUT, "discovery timed out after %s; last error: %s",
                         kjoin_duration_format(r->c->timeout_ms, limit, sizeof(limit)), g.last.msg);
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
    kjoin_free_wiped(r->kubeconfig, r->kubeconfig_len);
    free(r->server);
    free(r->endpoint);
    kjoin_bundle_free(r->bundle);
    memset(r, 0, sizeof(*r));
}
