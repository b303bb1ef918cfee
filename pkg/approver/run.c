/* kjoin approver's controller: a watch of the CertificateSigningRequests
 * (with a full list at the start, after an expired watch and every resync
 * period) feeds a cache; the instance holding the Lease decides each CSR
 * the cache has news of (decide.c) and acts: approves, denies, deletes a
 * spent single-use token's Secret once its node registered. Three threads: the watch, the decisions
 * and the Lease (this one), and /healthz. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <uuid/uuid.h>

#include <kjoin/private/util.h>

#include "internal.h"

#define CSRS "/apis/certificates.k8s.io/v1/certificatesigningrequests"
#define LEASES "/apis/coordination.k8s.io/v1/namespaces/" KJOIN_APPROVER_LEASE_NAMESPACE "/leases"
#define SECRETS "/api/v1/namespaces/kube-system/secrets"
#define WATCH_S 60                   /* the API server ends each watch after this */
#define EVENT_MAX (4 << 20)          /* one watch event's bytes */
#define STREAM_MAX ((size_t)1 << 30) /* one watch's bytes */
#define SPENT_MAX 4096
/* A spent single-use token's Secret goes once its node registered (the
 * kubelet has read its certificate with the token: deleted sooner, the
 * kubelet could not), or this long after the approval at the latest: longer
 * than kubeadm's own wait for the kubelet's TLS bootstrap, so that a node
 * slowed by the API server's 429s still reads its certificate. Whether the
 * node registered is asked SPENT_CHECK_FIRST_MS after the approval, then at
 * doubling intervals up to SPENT_CHECK_MAX_MS: a herd of nodes costs the API
 * server a few requests each, not one every few seconds. */
#define SPENT_GRACE_MS (6 * 60000) /* kubeadm's TLSBootstrapTimeout (5 min) and a minute */
#define SPENT_CHECK_FIRST_MS 2000
#define SPENT_CHECK_MAX_MS 30000

typedef struct event {
    struct event *next;
    bool relist;      /* obj is the list's items: the cache becomes them */
    bool deleted;
    json_object *obj; /* a CSR, or an array of them */
} event;

typedef struct controller {
    kjoin_kubeapi *api;
    const kjoin_approver_options *o;
    char identity[256];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    event *head, *tail;      /* from the watch, under mu */
    json_object *cache;      /* name -> CSR: the decisions' thread's */
    lease_record observed;   /* the Lease as last read */
    int64_t observed_ms;     /* when it last changed, by this clock (client-go's observedTime) */
    int64_t renewed_ms;      /* the last renewal that succeeded, as leader */
    bool leader;
    char spent[SPENT_MAX][KJOIN_TOKEN_ID_LEN + 1]; /* single-use tokens this instance saw approved */
    size_t n_spent;
    struct {
        char id[KJOIN_TOKEN_ID_LEN + 1], node[254];
        int64_t since_ms, next_check_ms, interval_ms;
    } doomed[SPENT_MAX]; /* spent tokens whose Secret is still to go */
    size_t n_doomed;
    _Atomic int64_t alive_ms;  /* the decisions' loop's last turn, for /healthz */
    _Atomic bool watching;     /* the watch is open */
    /* the watch's line buffer */
    char *line;
    size_t line_len, line_cap;
    bool gone;               /* the watch said 410 Gone: list again */
    char rv[64];
} controller;

#define logf_(c, level, ...) kjoin_logf((c)->o->log, (c)->o->log_ctx, level, __VA_ARGS__)

static bool stopping(const controller *c) { return c->o->stop && *c->o->stop; }

static void push(controller *c, event *e)
{
    pthread_mutex_lock(&c->mu);
    if (c->tail)
        c->tail->next = e;
    else
        c->head = e;
    c->tail = e;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

/* o's metadata[key] when it is a string, else NULL. */
static const char *meta_str(json_object *o, const char *key)
{
    json_object *meta = NULL, *v = NULL;
    return json_object_object_get_ex(o, "metadata", &meta) && json_object_object_get_ex(meta, key, &v) &&
                   json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}
#define rv_of(o) meta_str(o, "resourceVersion")
#define name_of(o) meta_str(o, "name")

/* One line of the watch: {"type": ..., "object": ...}. */
static void on_event(controller *c, const char *line, size_t len)
{
    json_tokener *tok = json_tokener_new_ex(64);
    json_object *o = tok ? json_tokener_parse_ex(tok, line, (int)len) : NULL, *type = NULL, *obj = NULL;
    json_tokener_free(tok);
    const char *t = o && json_object_object_get_ex(o, "type", &type) && json_object_is_type(type, json_type_string)
                        ? json_object_get_string(type)
                        : "";
    bool has_obj = o && json_object_object_get_ex(o, "object", &obj) && json_object_is_type(obj, json_type_object);
    const char *rv = has_obj ? rv_of(obj) : NULL;
    if (!strcmp(t, "ERROR") || !has_obj) {
        c->gone = true; /* 410 Gone, mostly: the watch is too old; list again */
    } else {
        if (rv && strlen(rv) < sizeof(c->rv))
            snprintf(c->rv, sizeof(c->rv), "%s", rv);
        if (strcmp(t, "BOOKMARK") != 0) {
            event *e = calloc(1, sizeof(*e));
            if (e) {
                e->deleted = !strcmp(t, "DELETED");
                e->obj = json_object_get(obj);
                /* the decisions' thread's alone before it is pushed: json-c's
                 * reference counts are no thread's to share */
                json_object_put(o);
                push(c, e);
                return;
            }
        }
    }
    json_object_put(o);
}

static void sink(const char *data, size_t len, void *ctx)
{
    controller *c = ctx;
    for (size_t i = 0; i < len; i++) {
        if (data[i] == '\n') {
            if (c->line_len)
                on_event(c, c->line, c->line_len);
            c->line_len = 0;
            continue;
        }
        if (c->line_len + 1 >= c->line_cap) {
            size_t cap = c->line_cap ? c->line_cap * 2 : 64 * 1024;
            char *p = cap <= EVENT_MAX ? realloc(c->line, cap) : NULL;
            if (!p) {
                c->gone = true; /* an event this big is no CSR: list again */
                c->line_len = 0;
                continue;
            }
            c->line = p, c->line_cap = cap;
        }
        c->line[c->line_len++] = data[i];
    }
}

/* The CSRs as a list says: the cache is replaced with them. */
static bool list(controller *c)
{
    kjoin_err err;
    json_object *o = NULL, *items = NULL;
    kjoin_code rc = kjoin_approver__get_list(c->api, CSRS, "certificatesigningrequests", &o, &items, &err);
    const char *rv = o ? rv_of(o) : NULL;
    if (!rc && (!rv || strlen(rv) >= sizeof(c->rv)))
        rc = kjoin_err_set(&err, KJOIN_E_API, "the list of certificatesigningrequests has no resource version");
    if (rc) {
        logf_(c, 0, "[approver] cannot list CertificateSigningRequests: %s", err.msg);
        json_object_put(o);
        return false;
    }
    snprintf(c->rv, sizeof(c->rv), "%s", rv);
    event *e = calloc(1, sizeof(*e));
    if (e)
        e->obj = json_object_get(items);
    json_object_put(o); /* (before the push: as on_event's) */
    if (e) {
        e->relist = true;
        push(c, e);
    }
    return e != NULL;
}

static void *watch_thread(void *arg)
{
    controller *c = arg;
    for (unsigned failures = 0; !stopping(c);) {
        if (!list(c)) {
            kjoin_sleep_ms(kjoin_backoff_ms(failures++, 500, 10000) + 100);
            continue;
        }
        failures = 0;
        int64_t resync = kjoin_now_ms() + c->o->resync_ms;
        c->gone = false;
        while (!c->gone && !stopping(c) && kjoin_now_ms() < resync) {
            int64_t left_s = (resync - kjoin_now_ms()) / 1000;
            char path[256];
            snprintf(path, sizeof(path), CSRS "?watch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%lld",
                     c->rv, (long long)(left_s < 1 ? 1 : left_s > WATCH_S ? WATCH_S : left_s));
            kjoin_kubeapi_response r = {0};
            kjoin_err err;
            c->line_len = 0;
            atomic_store(&c->watching, true);
            kjoin_code rc = kjoin_kubeapi_stream(c->api, path, (WATCH_S + 15) * 1000, STREAM_MAX, sink, c, &r, &err);
            atomic_store(&c->watching, false);
            if (!rc && r.status != 200)
                rc = kjoin_kubeapi_check(&r, "watch certificatesigningrequests", &err);
            kjoin_kubeapi_response_release(&r);
            if (rc) { /* an API server restart, mostly: list again, soon */
                logf_(c, 1, "[approver] the watch ended: %s", err.msg);
                kjoin_sleep_ms(kjoin_backoff_ms(failures++, 500, 5000) + 100);
                break;
            }
        }
    }
    return NULL;
}

/* ---- the Lease (client-go's tryAcquireOrRenew) ---------------------------- */

static bool lease_write(controller *c, const lease_record *want, bool create)
{
    char *body = kjoin_approver__lease_body(KJOIN_APPROVER_LEASE_NAMESPACE, KJOIN_APPROVER_LEASE_NAME, want);
    kjoin_kubeapi_response r = {0};
    kjoin_err err;
    kjoin_code rc = body ? kjoin_kubeapi_request(c->api, create ? "POST" : "PUT",
                                                 create ? LEASES : LEASES "/" KJOIN_APPROVER_LEASE_NAME, body, &r, &err)
                         : kjoin_err_set(&err, KJOIN_E_OTHER, "out of memory");
    free(body);
    bool ok = !rc && r.status >= 200 && r.status < 300;
    lease_record now = {0};
    if (ok && kjoin_approver__lease_parse(r.body, r.len, &now))
        c->observed = now;
    else if (!rc && r.status != 409)
        logf_(c, 0, "[approver] cannot %s Lease " KJOIN_APPROVER_LEASE_NAME ": %s (HTTP %ld): %s",
              create ? "create" : "update", r.reason, r.status, r.message);
    else if (rc)
        logf_(c, 1, "[approver] Lease: %s", err.msg);
    kjoin_kubeapi_response_release(&r);
    return ok;
}

static bool try_acquire_or_renew(controller *c)
{
    int64_t now = kjoin_now_ms();
    char stamp[40];
    kjoin_approver__micro_time((int64_t)time(NULL) * 1000, stamp);
    kjoin_kubeapi_response r = {0};
    kjoin_err err;
    kjoin_code rc = kjoin_kubeapi_request(c->api, "GET", LEASES "/" KJOIN_APPROVER_LEASE_NAME, NULL, &r, &err);
    if (rc || (r.status != 200 && r.status != 404)) {
        if (!rc)
            logf_(c, 0, "[approver] cannot get Lease " KJOIN_APPROVER_LEASE_NAME ": %s (HTTP %ld): %s", r.reason, r.status,
                  r.message);
        kjoin_kubeapi_response_release(&r);
        return false;
    }
    lease_record seen = {0}, want;
    bool there = r.status == 200;
    bool parsed = !there || kjoin_approver__lease_parse(r.body, r.len, &seen);
    kjoin_kubeapi_response_release(&r);
    if (!parsed)
        return false;
    /* Time is this instance's own: when the record last changed as it saw it. */
    if (there && (strcmp(seen.holder, c->observed.holder) || strcmp(seen.renew_time, c->observed.renew_time) ||
                  strcmp(seen.resource_version, c->observed.resource_version) || !c->observed_ms)) {
        c->observed = seen;
        c->observed_ms = now;
    }
    if (!kjoin_approver__lease_next(there ? &seen : NULL, c->observed_ms, now, c->identity,
                                    (c->o->lease_duration_ms + 999) / 1000, stamp, &want) ||
        !lease_write(c, &want, !there))
        return false;
    c->observed_ms = now;
    return true;
}

static void release_lease(controller *c)
{
    lease_record want = c->observed;
    char stamp[40];
    kjoin_approver__micro_time((int64_t)time(NULL) * 1000, stamp);
    want.holder[0] = '\0';
    want.duration_s = 1;
    snprintf(want.renew_time, sizeof(want.renew_time), "%s", stamp);
    snprintf(want.acquire_time, sizeof(want.acquire_time), "%s", stamp);
    if (lease_write(c, &want, false))
        logf_(c, 0, "[approver] gave up Lease " KJOIN_APPROVER_LEASE_NAME);
}

/* ---- the decisions --------------------------------------------------------- */

static bool remembered(const controller *c, const char *id)
{
    for (size_t i = 0; i < c->n_spent; i++)
        if (!strcmp(c->spent[i], id))
            return true;
    return false;
}

/* true when id is newly remembered */
static bool remember(controller *c, const char *id)
{
    if (remembered(c, id) || c->n_spent >= SPENT_MAX)
        return false;
    snprintf(c->spent[c->n_spent++], sizeof(c->spent[0]), "%s", id);
    return true;
}

/* A single-use token is spent once a CSR of it was approved: one this
 * instance approved or saw approved, or one the cache holds approved. */
static bool spent(void *ctx, const char *id, const char *name)
{
    controller *c = ctx;
    if (remembered(c, id))
        return true;
    json_object_object_foreach(c->cache, key, csr)
    {
        if (strcmp(key, name) != 0 && kjoin_approver__approved_for(csr, id))
            return true;
    }
    return false;
}

static void delete_token(controller *c, const char *id)
{
    char path[128];
    snprintf(path, sizeof(path), SECRETS "/bootstrap-token-%s", id);
    kjoin_kubeapi_response r = {0};
    kjoin_err err;
    kjoin_code rc = kjoin_kubeapi_request(c->api, "DELETE", path, NULL, &r, &err);
    if (!rc && r.status >= 200 && r.status < 300)
        logf_(c, 0, "[approver] token %s was for one use: deleted its Secret kube-system/bootstrap-token-%s", id, id);
    else if (!rc && r.status != 404)
        logf_(c, 0, "[approver] cannot delete spent token %s: %s (HTTP %ld): %s", id, r.reason, r.status, r.message);
    else if (rc)
        logf_(c, 0, "[approver] cannot delete spent token %s: %s", id, err.msg);
    kjoin_kubeapi_response_release(&r);
}

static bool may_act(const controller *c)
{
    return c->leader && kjoin_now_ms() - c->renewed_ms < c->o->renew_deadline_ms;
}

static void doom(controller *c, const char *id, const char *node)
{
    if (c->n_doomed >= SPENT_MAX)
        return;
    snprintf(c->doomed[c->n_doomed].id, sizeof(c->doomed[0].id), "%s", id);
    snprintf(c->doomed[c->n_doomed].node, sizeof(c->doomed[0].node), "%s", node);
    c->doomed[c->n_doomed].since_ms = kjoin_now_ms();
    c->doomed[c->n_doomed].interval_ms = SPENT_CHECK_FIRST_MS;
    c->doomed[c->n_doomed++].next_check_ms = kjoin_now_ms() + SPENT_CHECK_FIRST_MS;
}

static bool node_registered(controller *c, const char *node)
{
    char path[320];
    snprintf(path, sizeof(path), "/api/v1/nodes/%s", node);
    kjoin_kubeapi_response r = {0};
    kjoin_err err;
    bool there = kjoin_kubeapi_request(c->api, "GET", path, NULL, &r, &err) == KJOIN_OK && r.status == 200;
    kjoin_kubeapi_response_release(&r);
    return there;
}

/* The Secrets of spent tokens whose node registered, or whose grace ended. */
static void delete_spent(controller *c)
{
    int64_t now = kjoin_now_ms();
    for (size_t i = 0; i < c->n_doomed && may_act(c);) {
        bool due = now - c->doomed[i].since_ms >= SPENT_GRACE_MS;
        if (!due && now >= c->doomed[i].next_check_ms) {
            int64_t next = c->doomed[i].interval_ms * 2;
            c->doomed[i].interval_ms = next < SPENT_CHECK_MAX_MS ? next : SPENT_CHECK_MAX_MS;
            c->doomed[i].next_check_ms = now + c->doomed[i].interval_ms;
            due = node_registered(c, c->doomed[i].node);
        }
        if (!due) {
            i++;
            continue;
        }
        delete_token(c, c->doomed[i].id);
        c->doomed[i] = c->doomed[--c->n_doomed];
    }
}

static void act(controller *c, json_object *csr)
{
    approver_decision d;
    kjoin_approver__decide(csr, spent, c, &d);
    /* A spent single-use token, seen approved: its Secret goes (once by this
     * instance: an earlier leader may not have deleted it). */
    if (d.approved && d.binding.single_use && kjoin_token_binding_valid(&d.binding) && remember(c, d.token_id))
        doom(c, d.token_id, d.binding.node);
    if (d.verdict == VERDICT_IGNORE || !may_act(c))
        return;
    char *body = kjoin_approver__approval_body(csr, &d), path[400];
    snprintf(path, sizeof(path), CSRS "/%s/approval", d.name);
    kjoin_kubeapi_response r = {0};
    kjoin_err err;
    kjoin_code rc = body ? kjoin_kubeapi_request(c->api, "PUT", path, body, &r, &err)
                         : kjoin_err_set(&err, KJOIN_E_OTHER, "out of memory");
    free(body);
    const char *verb = d.verdict == VERDICT_APPROVE ? "approved" : "denied";
    if (!rc && r.status >= 200 && r.status < 300) {
        logf_(c, 0, "[approver] %s CSR %s: %s", verb, d.name, d.reason);
        json_object *now = json_tokener_parse(r.body);
        if (now)
            json_object_object_add(c->cache, d.name, now);
        if (d.verdict == VERDICT_APPROVE && d.binding.single_use) {
            if (remember(c, d.token_id))
                doom(c, d.token_id, d.binding.node);
        }
    } else if (!rc && r.status == 409) {
        logf_(c, 1, "[approver] CSR %s changed while it was decided; the watch brings it again", d.name);
    } else if (!rc) {
        logf_(c, 0, "[approver] cannot record that CSR %s is %s: %s (HTTP %ld): %s", d.name, verb, r.reason, r.status,
              r.message);
    } else {
        logf_(c, 0, "[approver] cannot record that CSR %s is %s: %s", d.name, verb, err.msg);
    }
    kjoin_kubeapi_response_release(&r);
}

/* Applies the watch's news to the cache and acts on what changed (on
 * everything, as the new leader). */
static void drain(controller *c, bool everything)
{
    pthread_mutex_lock(&c->mu);
    event *e = c->head;
    c->head = c->tail = NULL;
    pthread_mutex_unlock(&c->mu);
    json_object *touched = json_object_new_array();
    while (e) {
        event *next = e->next;
        if (e->relist) {
            json_object_put(c->cache);
            c->cache = json_object_new_object();
            everything = true;
            for (size_t i = 0; i < json_object_array_length(e->obj); i++) {
                json_object *csr = json_object_array_get_idx(e->obj, i);
                if (name_of(csr))
                    json_object_object_add(c->cache, name_of(csr), json_object_get(csr));
            }
        } else if (name_of(e->obj)) {
            if (e->deleted) {
                json_object_object_del(c->cache, name_of(e->obj));
            } else {
                json_object_object_add(c->cache, name_of(e->obj), json_object_get(e->obj));
                json_object_array_add(touched, json_object_new_string(name_of(e->obj)));
            }
        }
        json_object_put(e->obj);
        free(e);
        e = next;
    }
    if (everything) {
        json_object_object_foreach(c->cache, key, csr)
        {
            (void)key;
            act(c, csr);
        }
    } else {
        for (size_t i = 0; i < json_object_array_length(touched); i++) {
            json_object *csr = NULL;
            if (json_object_object_get_ex(c->cache, json_object_get_string(json_object_array_get_idx(touched, i)), &csr))
                act(c, csr);
        }
    }
    json_object_put(touched);
}

/* ---- /healthz ------------------------------------------------------------- */

typedef struct healthz {
    controller *c;
    int fd;
} healthz;

static void *healthz_thread(void *arg)
{
    healthz *h = arg;
    controller *c = h->c;
    while (!stopping(c)) {
        struct pollfd p = {.fd = h->fd, .events = POLLIN};
        if (poll(&p, 1, 250) <= 0)
            continue;
        int fd = accept(h->fd, NULL, NULL);
        if (fd < 0)
            continue;
        char req[1024];
        struct timeval tv = {.tv_sec = 2};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        ssize_t n = recv(fd, req, sizeof(req) - 1, 0);
        req[n > 0 ? n : 0] = '\0';
        int64_t idle = kjoin_now_ms() - atomic_load(&c->alive_ms);
        bool ok = idle < c->o->lease_duration_ms;
        bool known = strncmp(req, "GET /healthz ", 13) == 0 || strncmp(req, "GET /healthz?", 13) == 0;
        char out[256];
        int len = snprintf(out, sizeof(out), "HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
                                             "Connection: close\r\n\r\n%s",
                           !known ? "404 Not Found" : ok ? "200 OK" : "503 Service Unavailable",
                           !known ? 10 : ok ? 3 : 12, !known ? "not found\n" : ok ? "ok\n" : "not running\n");
        if (send(fd, out, (size_t)len, MSG_NOSIGNAL) < 0)
            logf_(c, 4, "[approver] /healthz: %s", strerror(errno));
        /* A lingering close: what the client still sends is read to its end
         * (or the 2 s timeout), so that closing never resets the connection
         * before the client has read the answer. */
        shutdown(fd, SHUT_WR);
        while (recv(fd, req, sizeof(req), 0) > 0)
            ;
        close(fd);
    }
    return NULL;
}

/* "host:port" (IPv4, or [IPv6]) bound and listening. */
static kjoin_code listen_on(const char *address, int *out, kjoin_err *err)
{
    char host[64];
    const char *colon = strrchr(address, ':');
    long port = colon ? strtol(colon + 1, NULL, 10) : 0;
    size_t hn = colon ? (size_t)(colon - address) : 0;
    if (hn && address[0] == '[' && address[hn - 1] == ']')
        address++, hn -= 2;
    if (!colon || port < 1 || port > 65535 || hn == 0 || hn >= sizeof(host))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the healthz address \"%.80s\" is not host:port", address);
    memcpy(host, address, hn);
    host[hn] = '\0';
    struct sockaddr_storage sa = {0};
    socklen_t sl;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&sa;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&sa;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET, v4->sin_port = htons((uint16_t)port), sl = sizeof(*v4);
    } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6, v6->sin6_port = htons((uint16_t)port), sl = sizeof(*v6);
    } else {
        return kjoin_err_set(err, KJOIN_E_USAGE, "the healthz host \"%s\" is not an IP address", host);
    }
    int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sl) != 0 || listen(fd, 16) != 0) {
        kjoin_code rc = kjoin_err_set(err, KJOIN_E_USAGE, "cannot serve /healthz on %s:%ld: %s", host, port,
                                      strerror(errno));
        if (fd >= 0)
            close(fd);
        return rc;
    }
    *out = fd;
    return KJOIN_OK;
}

/* ---- the controller -------------------------------------------------------- */

/* What it needs, asked once at the start: a refusal names the permission. */
static kjoin_code can_start(controller *c, kjoin_err *err)
{
    kjoin_kubeapi_response r = {0};
    kjoin_code rc = kjoin_kubeapi_request(c->api, "GET", CSRS "?limit=1", NULL, &r, err);
    if (!rc)
        rc = kjoin_kubeapi_check(&r, "list certificatesigningrequests", err);
    kjoin_kubeapi_response_release(&r);
    return rc;
}

kjoin_code kjoin_approver_run(kjoin_kubeapi *api, const kjoin_approver_options *o, kjoin_err *err)
{
    if (kjoin_version_check(o ? &o->version : NULL, KJOIN_APPROVER_OPTIONS_VERSION, "approver's options",
                            "KJOIN_APPROVER_OPTIONS_INIT", err))
        return KJOIN_E_USAGE;
    /* client-go's rules: LeaseDuration > RenewDeadline > JitterFactor(1.2) * RetryPeriod */
    if (o->retry_period_ms < 1 || o->renew_deadline_ms <= o->retry_period_ms * 12 / 10 ||
        o->lease_duration_ms <= o->renew_deadline_ms || o->resync_ms < 1000)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the lease duration must exceed the renew deadline, which must exceed "
                                                 "1.2 times the retry period; the resync period must be 1s or more");
    controller *c = calloc(1, sizeof(*c));
    if (!c)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    c->api = api;
    c->o = o;
    c->cache = json_object_new_object();
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    if (o->identity && *o->identity) {
        snprintf(c->identity, sizeof(c->identity), "%s", o->identity);
    } else { /* client-go's default: the host name and a UUID */
        char host[256] = "", id[37];
        uuid_t u;
        gethostname(host, sizeof(host) - 1);
        uuid_generate_random(u);
        uuid_unparse_lower(u, id);
        snprintf(c->identity, sizeof(c->identity), "%.180s_%s", host, id);
    }
    healthz h = {.c = c, .fd = -1};
    kjoin_code rc = o->healthz && *o->healthz ? listen_on(o->healthz, &h.fd, err) : KJOIN_OK;
    if (!rc)
        rc = can_start(c, err);
    pthread_t watcher, server;
    bool watching = !rc && pthread_create(&watcher, NULL, watch_thread, c) == 0;
    if (!rc && !watching)
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "cannot start the watch");
    bool serving = !rc && h.fd >= 0 && pthread_create(&server, NULL, healthz_thread, &h) == 0;
    if (!rc)
        logf_(c, 0, "[approver] %s: watching CertificateSigningRequests; Lease %s/%s (duration %llds)", c->identity,
              KJOIN_APPROVER_LEASE_NAMESPACE, KJOIN_APPROVER_LEASE_NAME, (long long)(o->lease_duration_ms / 1000));
    int64_t next_try = 0;
    while (!rc && !stopping(c)) {
        int64_t now = kjoin_now_ms();
        atomic_store(&c->alive_ms, now);
        bool became = false;
        if (now >= next_try) {
            bool held = try_acquire_or_renew(c);
            if (held && !c->leader)
                logf_(c, 0, "[approver] %s holds Lease %s: approving", c->identity, KJOIN_APPROVER_LEASE_NAME);
            if (held)
                c->renewed_ms = now;
            became = held && !c->leader;
            if (c->leader && !held && now - c->renewed_ms >= o->renew_deadline_ms) {
                logf_(c, 0, "[approver] %s could not renew Lease %s within %lld ms: stepped down", c->identity,
                      KJOIN_APPROVER_LEASE_NAME, (long long)o->renew_deadline_ms);
                c->leader = false;
            } else if (held) {
                c->leader = true;
            }
            next_try = kjoin_now_ms() + o->retry_period_ms;
        }
        drain(c, became);
        delete_spent(c);
        pthread_mutex_lock(&c->mu);
        if (!c->head) {
            int64_t wait = next_try - kjoin_now_ms();
            wait = wait < 0 ? 0 : wait > 250 ? 250 : wait;
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += (long)(wait % 1000) * 1000000L;
            ts.tv_sec += wait / 1000 + ts.tv_nsec / 1000000000L;
            ts.tv_nsec %= 1000000000L;
            pthread_cond_timedwait(&c->cv, &c->mu, &ts);
        }
        pthread_mutex_unlock(&c->mu);
    }
    if (c->leader)
        release_lease(c);
    if (serving)
        pthread_join(server, NULL);
    if (h.fd >= 0)
        close(h.fd);
    if (watching) {
        /* The watch may be blocked in a request until the API server ends
         * it; the process ends with it. Its memory stays (it may use it). */
        pthread_detach(watcher);
        return rc;
    }
    json_object_put(c->cache);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
    return rc;
}

kjoin_code kjoin_approver_holder(kjoin_kubeapi *api, char *holder, size_t cap, bool *held, kjoin_err *err)
{
    kjoin_kubeapi_response r = {0};
    kjoin_code rc = kjoin_kubeapi_request(api, "GET", LEASES "/" KJOIN_APPROVER_LEASE_NAME, NULL, &r, err);
    if (!rc)
        rc = kjoin_kubeapi_check(&r, "get lease " KJOIN_APPROVER_LEASE_NAMESPACE "/" KJOIN_APPROVER_LEASE_NAME, err);
    lease_record l = {0};
    if (!rc && !kjoin_approver__lease_parse(r.body, r.len, &l))
        rc = kjoin_err_set(err, KJOIN_E_API, "lease %s is not a Lease", KJOIN_APPROVER_LEASE_NAME);
    kjoin_kubeapi_response_release(&r);
    if (rc)
        return rc;
    snprintf(holder, cap, "%s", l.holder);
    int64_t now = kjoin_kubeapi_server_time(api);
    *held = kjoin_approver__lease_current(&l, now ? now : (int64_t)time(NULL));
    return KJOIN_OK;
}

kjoin_code kjoin_approver_used_tokens(kjoin_kubeapi *api, const char *const *ids, size_t n, bool *used, kjoin_err *err)
{
    json_object *o = NULL, *items = NULL;
    kjoin_code rc = kjoin_approver__get_list(api, CSRS, "certificatesigningrequests", &o, &items, err);
    for (size_t i = 0; i < n; i++) {
        used[i] = false;
        for (size_t k = 0; !rc && !used[i] && k < json_object_array_length(items); k++)
            used[i] = kjoin_approver__approved_for(json_object_array_get_idx(items, k), ids[i]);
    }
    json_object_put(o);
    return rc;
}
