/* kubeadm's etcd-join: this node's member of the stacked etcd, added
 * through the members' gRPC gateway (JSON over the client port, as the
 * healthcheck client), its static Pod written, a learner promoted once it
 * runs, and a wait until every member answers. */
#include <kjoin/private/controlplane.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <json-c/json.h>

#include <kjoin/private/kubeapi.h>
#include <kjoin/private/node.h>
#include <kjoin/private/safedir.h>
#include <kjoin/private/transport.h>
#include <kjoin/private/util.h>

#include "internal.h"

#define logf_(s, level, ...) kjoin_logf((s)->join->log, (s)->join->log_ctx, level, __VA_ARGS__)
#define reset_logf_(s, level, ...) kjoin_logf((s)->join->log, (s)->join->log_ctx, level, __VA_ARGS__) /* a reset's */
#define MEMBERS_MAX 16
/* Between polls of etcd and the etcd Pods: half of kubeadm's 500 ms (each call is one small request). */
#define POLL_MS 250

typedef struct etcd_client {
    const kjoin_cp_context *s;
    char urls[MEMBERS_MAX][300]; /* the members' client URLs */
    size_t n;
    char *ca, *crt, *key; /* etcd's CA, the healthcheck client's pair */
    size_t ca_len, crt_len, key_len;
    int64_t deadline;
    const char *bound; /* how a timeout names what ended it */
} etcd_client;

/* The etcd steps' deadline: the join's, or timeouts.etcdAPICall's when it ends first. */
static etcd_client etcd_client_of(const kjoin_cp_context *s)
{
    bool bounded = false;
    int64_t left = kjoin_cp_stage_left(s, s->join->timeouts.etcd_ms, &bounded);
    return (etcd_client){.s = s, .deadline = kjoin_now_ms() + left,
                         .bound = bounded ? "timeouts.etcdAPICall" : "the deadline"};
}

typedef struct member {
    char id[24]; /* as the gateway writes a uint64: decimal */
    bool learner;
    kjoin_etcd_member m;
} member;

typedef struct members {
    size_t n;
    member v[MEMBERS_MAX];
} members;

static char *dup_n(const char *p, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, p, n);
        d[n] = '\0';
    }
    return d;
}

/* One request of etcd at url (its gateway, or its peer or metrics
 * handlers) as the healthcheck client: method path body, the answer as it
 * came (*r: release it). */
static kjoin_code request_one(etcd_client *e, const char *url, const char *method, const char *path, const char *body,
                              kjoin_kubeapi_response *r, kjoin_err *err)
{
    const kjoin_cp_context *s = e->s;
    kjoin_kubeapi_config cfg = {.path = strdup(""), .context = strdup(""), .server = strdup(url),
                                .ca_pem = dup_n(e->ca, e->ca_len), .ca_len = e->ca_len,
                                .cert_pem = dup_n(e->crt, e->crt_len), .cert_len = e->crt_len,
                                .key_pem = dup_n(e->key, e->key_len), .key_len = e->key_len};
    int64_t left = e->deadline - kjoin_now_ms();
    kjoin_kubeapi_options o = kjoin_join_context_api_options(s->join, 0, -1);
    o.timeout_ms = left < 1 ? 1 : left < 10000 ? left : 10000; /* e's own bound: within the join's but for a removal */
    kjoin_kubeapi *api = NULL;
    if (!cfg.path || !cfg.context || !cfg.server || !cfg.ca_pem || !cfg.cert_pem || !cfg.key_pem) {
        kjoin_kubeapi_config_release(&cfg);
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    kjoin_code rc = kjoin_kubeapi_new(&cfg, &o, &api, err);
    kjoin_kubeapi_config_release(&cfg);
    if (!rc)
        rc = kjoin_kubeapi_request(api, method, path, body, r, err);
    kjoin_kubeapi_free(api);
    return rc;
}

/* One call of the gateway at url: POST path body, its JSON answer. */
static kjoin_code call_one(etcd_client *e, const char *url, const char *path, const char *body, json_object **out,
                           kjoin_err *err)
{
    kjoin_kubeapi_response r;
    *out = NULL;
    kjoin_code rc = request_one(e, url, "POST", path, body, &r, err);
    if (rc)
        return rc;
    json_object *j = r.body ? json_tokener_parse(r.body) : NULL, *m;
    if (r.status != 200) {
        const char *why = j && (json_object_object_get_ex(j, "message", &m) || json_object_object_get_ex(j, "error", &m))
                              ? json_object_get_string(m)
                              : "";
        rc = kjoin_err_set(err, KJOIN_E_API, "etcd at %s refused %s: HTTP %ld: %.200s", url, path, r.status, why);
        json_object_put(j);
    } else if (!json_object_is_type(j, json_type_object)) {
        rc = kjoin_err_set(err, KJOIN_E_API, "etcd at %s answered %s with no JSON object", url, path);
        json_object_put(j);
    } else {
        *out = j;
    }
    kjoin_kubeapi_response_release(&r);
    return rc;
}

/* The call at the first member that answers (one refusing is an answer);
 * when none does, the first one's failure (a member's own URL may be one
 * that never started). */
static kjoin_code call(etcd_client *e, const char *path, const char *body, json_object **out, kjoin_err *err)
{
    kjoin_code first = KJOIN_E_OTHER;
    kjoin_err later;
    for (size_t i = 0; i < e->n; i++) {
        kjoin_code rc = call_one(e, e->urls[i], path, body, out, i ? &later : err);
        if (rc == KJOIN_OK || rc == KJOIN_E_API || rc == KJOIN_E_TRUST) {
            if (rc && i)
                *err = later;
            return rc;
        }
        if (!i)
            first = rc;
    }
    return first;
}

static const char *field(json_object *o, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(o, k, &v) && (json_object_is_type(v, json_type_string) ||
                                                   json_object_is_type(v, json_type_int))
               ? json_object_get_string(v)
               : "";
}

/* The members of a gateway answer (untrusted: every field checked). */
static kjoin_code parse_members(json_object *j, members *out, kjoin_err *err)
{
    json_object *list;
    out->n = 0;
    if (!json_object_object_get_ex(j, "members", &list) || !json_object_is_type(list, json_type_array))
        return kjoin_err_set(err, KJOIN_E_API, "etcd's member list has no members");
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *o = json_object_array_get_idx(list, i), *peers, *learner;
        if (out->n == MEMBERS_MAX)
            return kjoin_err_set(err, KJOIN_E_API, "etcd has more than %d members", MEMBERS_MAX);
        member *m = &out->v[out->n];
        const char *id = field(o, "ID"), *name = field(o, "name"), *peer = "";
        if (json_object_object_get_ex(o, "peerURLs", &peers) && json_object_is_type(peers, json_type_array) &&
            json_object_array_length(peers) > 0 &&
            json_object_is_type(json_object_array_get_idx(peers, 0), json_type_string))
            peer = json_object_get_string(json_object_array_get_idx(peers, 0));
        if (!*id || strspn(id, "0123456789") != strlen(id) || strlen(id) >= sizeof(m->id) ||
            strlen(name) >= sizeof(m->m.name) || strlen(peer) >= sizeof(m->m.peer_url) ||
            strncmp(peer, "https://", 8) || strpbrk(name, ",= \n") || strpbrk(peer, ", \n") ||
            !kjoin_utf8_printable(name))
            return kjoin_err_set(err, KJOIN_E_API, "etcd's member list has a member kjoin cannot read");
        snprintf(m->id, sizeof(m->id), "%s", id);
        snprintf(m->m.id, sizeof(m->m.id), "%s", id);
        snprintf(m->m.name, sizeof(m->m.name), "%s", name);
        snprintf(m->m.peer_url, sizeof(m->m.peer_url), "%s", peer);
        m->learner = json_object_object_get_ex(o, "isLearner", &learner) && json_object_get_boolean(learner);
        out->n++;
    }
    return KJOIN_OK;
}

kjoin_code kjoin_etcd_members_parse(const char *json, size_t len, kjoin_etcd_member *out, bool *learner, size_t cap,
                                    size_t *n, kjoin_err *err)
{
    json_object *j = kjoin_json_whole(json, len);
    members *ms = malloc(sizeof(*ms));
    kjoin_code rc = !ms ? kjoin_err_set(err, KJOIN_E_OTHER, "out of memory")
                    : json_object_is_type(j, json_type_object)
                        ? parse_members(j, ms, err)
                        : kjoin_err_set(err, KJOIN_E_API, "etcd's member list is not a JSON object");
    *n = 0;
    for (size_t i = 0; !rc && i < ms->n && i < cap; i++) {
        out[i] = ms->v[i].m;
        learner[i] = ms->v[i].learner;
        *n = i + 1;
    }
    free(ms);
    json_object_put(j);
    return rc;
}

static kjoin_code list(etcd_client *e, members *out, kjoin_err *err)
{
    json_object *j;
    kjoin_code rc = call(e, "/v3/cluster/member/list", "{}", &j, err);
    if (!rc)
        rc = parse_members(j, out, err);
    json_object_put(j);
    return rc;
}

static member *find(members *ms, const char *peer)
{
    for (size_t i = 0; i < ms->n; i++)
        if (!strcmp(ms->v[i].m.peer_url, peer))
            return &ms->v[i];
    return NULL;
}

static kjoin_code add(etcd_client *e, const char *peer, bool learner, members *out, char *id, kjoin_err *err)
{
    char body[400];
    json_object *j, *m;
    snprintf(body, sizeof(body), "{\"peerURLs\":[\"%s\"],\"isLearner\":%s}", peer, learner ? "true" : "false");
    kjoin_code rc = call(e, "/v3/cluster/member/add", body, &j, err);
    if (!rc && !(rc = parse_members(j, out, err))) {
        const char *new_id = json_object_object_get_ex(j, "member", &m) ? field(m, "ID") : "";
        if (!*new_id || strlen(new_id) >= 24)
            rc = kjoin_err_set(err, KJOIN_E_API, "etcd added the member without saying its ID");
        else
            snprintf(id, 24, "%s", new_id);
    }
    json_object_put(j);
    return rc;
}

static kjoin_code remove_member(etcd_client *e, const char *id, kjoin_err *err)
{
    char body[64];
    json_object *j;
    snprintf(body, sizeof(body), "{\"ID\":\"%s\"}", id);
    kjoin_code rc = call(e, "/v3/cluster/member/remove", body, &j, err);
    json_object_put(j);
    return rc;
}

/* The client URLs in the etcd Pods' kubeadm annotation (an https URL, one
 * each) into e; the number of Pods listed. */
static size_t urls_of(json_object *list, etcd_client *e)
{
    json_object *items;
    size_t pods = 0;
    if (!json_object_object_get_ex(list, "items", &items) || !json_object_is_type(items, json_type_array))
        return 0;
    pods = json_object_array_length(items);
    for (size_t i = 0; i < pods && e->n < MEMBERS_MAX; i++) {
        json_object *meta, *ann;
        const char *url = json_object_object_get_ex(json_object_array_get_idx(items, i), "metadata", &meta) &&
                                  json_object_object_get_ex(meta, "annotations", &ann)
                              ? field(ann, "kubeadm.kubernetes.io/etcd.advertise-client-urls")
                              : "";
        if (!strncmp(url, "https://", 8) && strlen(url) < sizeof(e->urls[0]) && !strpbrk(url, ", \n\r\t") &&
            kjoin_utf8_printable(url))
            snprintf(e->urls[e->n++], sizeof(e->urls[0]), "%s", url);
    }
    return pods;
}

size_t kjoin_etcd_endpoints_parse(const char *json, size_t len, char (*urls)[300], size_t cap, size_t *n)
{
    json_object *j = kjoin_json_whole(json, len);
    etcd_client *e = calloc(1, sizeof(*e));
    size_t pods = 0;
    *n = 0;
    if (e && j) {
        pods = urls_of(j, e);
        for (size_t i = 0; i < e->n && i < cap; i++)
            memcpy(urls[(*n)++], e->urls[i], sizeof(urls[0]));
    }
    free(e);
    json_object_put(j);
    return pods;
}

/* The client URLs of the etcd Pods, from kubeadm's annotation on each
 * (every Pod must have one, as kubeadm requires), with admin.conf. */
static kjoin_code endpoints(etcd_client *e, kjoin_err *err)
{
    kjoin_kubeapi *api = NULL, *owned = NULL;
    kjoin_code rc = kjoin_cp__admin(e->s, &api, &owned, err);
    while (!rc) {
        kjoin_kubeapi_response r;
        json_object *j = NULL;
        if ((rc = kjoin_kubeapi_request(api, "GET",
                                        "/api/v1/namespaces/kube-system/pods?labelSelector=component%3Detcd%2Ctier%3D"
                                        "control-plane",
                                        NULL, &r, err)))
            break;
        if (!(rc = kjoin_kubeapi_check(&r, "list the etcd Pods", err)))
            j = r.body ? json_tokener_parse(r.body) : NULL;
        kjoin_kubeapi_response_release(&r);
        size_t pods = 0;
        e->n = 0;
        if (!rc)
            pods = urls_of(j, e);
        json_object_put(j);
        if (rc || (e->n && e->n == pods))
            break;
        if (kjoin_now_ms() + POLL_MS > e->deadline) {
            rc = kjoin_err_set(err, KJOIN_E_TIMEOUT, "no etcd Pod in kube-system says where its member listens (%zu of "
                               "%zu Pods have kubeadm's etcd.advertise-client-urls annotation)", e->n, pods);
            break;
        }
        kjoin_sleep_ms(POLL_MS);
    }
    kjoin_kubeapi_free(owned);
    return rc;
}

/* The certificates this client presents, read through the checked
 * certificates directory. */
static kjoin_code load_tls(etcd_client *e, kjoin_err *err)
{
    kjoin_safedir d;
    char client[1400], dir[1400];
    bool missing;
    snprintf(client, sizeof(client), "%s/etcd/healthcheck-client.crt", e->s->cert_dir);
    kjoin_join_context_read_path(e->s->join, client, dir, sizeof(dir)); /* a dry run's own, once it made one */
    *strrchr(dir, '/') = '\0';
    kjoin_code rc = kjoin_safedir_open(dir, 0, &d, err);
    if (!rc)
        rc = kjoin_safedir_read(&d, "ca.crt", 1 << 20, false, &e->ca, &e->ca_len, &missing, err);
    if (!rc)
        rc = kjoin_cp__read_pair(&d, "healthcheck-client", &e->crt, &e->crt_len, &e->key, &e->key_len, &missing, err);
    if (!rc && (missing || !e->crt || !e->key))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s/healthcheck-client.crt and .key are not there: the certs step "
                           "makes them", dir);
    kjoin_safedir_close(&d);
    return rc;
}

/* A member's client URL: its peer URL's host on the client port (kubeadm's). */
static void client_url_of(const member *m, char *url, size_t cap)
{
    snprintf(url, cap, "%.*s:2379", (int)(strrchr(m->m.peer_url, ':') - m->m.peer_url), m->m.peer_url);
}

/* While this node's member starts and catches up: a line every
 * PROGRESS_MS with what it does, and why not when it does not. */
#define PROGRESS_MS 15000
typedef struct watch {
    int64_t start, next_line;
    time_t since;          /* the wall clock's, for the kubelet's journal since the wait began */
    bool seen;             /* in etcd's member list */
    bool started;          /* etcd runs it: it has a name */
    uint64_t last_applied; /* its applied index at the last line */
    unsigned lines;        /* lines said of it running */
    char cause[700];       /* why it did not start or catch up, when known */
} watch;

static watch watch_begin(void)
{
    int64_t now = kjoin_now_ms();
    return (watch){.start = now, .next_line = now + PROGRESS_MS, .since = time(NULL)};
}

/* Reading why has a bound of its own: it is asked when the wait is over too. */
#define CAUSE_MS 5000

/* Why this node's etcd Pod does not run: the kubelet's journal since the
 * wait began (this node's own word, and there before the API has a Pod of
 * it: a control-plane kubelet bootstraps through this node's own API
 * server, which waits for this etcd), else the kubelet's Pod in the API
 * (where the journal is none: a kubelet without systemd). A Pod there that
 * says it runs may be an earlier one's, not yet collected: it says
 * nothing. */
static void pod_cause(etcd_client *e, time_t since, char *why, size_t cap)
{
    const kjoin_cp_context *s = e->s;
    kjoin_kubeapi *api = NULL;
    kjoin_kubeapi_response r = {0};
    kjoin_err err;
    char path[400], said[512];
    *why = '\0';
    snprintf(path, sizeof(path), "kube-system/etcd-%s", s->join->name.name);
    if (kjoin_node_journal_error_about(path, (int64_t)since, said, sizeof(said))) {
        snprintf(why, cap, "the kubelet on etcd's Pod: %.500s", said);
        return;
    }
    snprintf(path, sizeof(path), "/api/v1/namespaces/kube-system/pods/etcd-%s", s->join->name.name);
    if (kjoin_cp__admin_client_bounded(s, CAUSE_MS, &api, &err) ||
        kjoin_kubeapi_request(api, "GET", path, NULL, &r, &err))
        snprintf(why, cap, "etcd's Pod could not be read: %.300s", err.msg);
    else if (r.status == 200 && kjoin_pod_not_running(r.body, r.len, "etcd", said, sizeof(said)))
        snprintf(why, cap, "etcd's Pod etcd-%.253s: %.400s", s->join->name.name, said);
    else if (r.status == 404)
        snprintf(why, cap, "the kubelet has not reported etcd's Pod etcd-%.253s (is the kubelet running, and does it "
                 "read %.200s?)", s->join->name.name, s->manifests_dir);
    kjoin_kubeapi_response_release(&r);
    kjoin_kubeapi_free(api);
}

/* Whether this node reaches member m at its peer URL: one request there
 * (its /version), the member's TLS verified by etcd's CA and accepting this
 * node's etcd client; why not into why. */
#define PEER_PROBE_MS 3000
static bool peer_reachable(const etcd_client *e, const member *m, kjoin_err *why)
{
    char url[320];
    kjoin_http_response r = {0};
    snprintf(url, sizeof(url), "%s/version", m->m.peer_url);
    kjoin_http_request req = {.url = url, .tls = KJOIN_TLS_PINNED, .anchors_pem = e->ca, .anchors_len = e->ca_len,
                              .timeout_ms = PEER_PROBE_MS, .max_body = 4096, .client_cert_pem = e->crt,
                              .client_cert_len = e->crt_len, .client_key_pem = e->key, .client_key_len = e->key_len,
                              .audit_id = e->s->join->audit_id, .http1 = true};
    kjoin_code rc = kjoin_http_send(&req, &r, why);
    bool ok = !rc && r.status == 200;
    if (!rc && !ok)
        kjoin_err_set(why, KJOIN_E_API, "its peer URL answered HTTP %ld", r.status);
    if (!rc)
        kjoin_http_response_release(&r);
    return ok;
}

/* Why a started member does not catch up: a member this node cannot reach
 * at its peer URL (or whose TLS refuses this node's etcd client), or a
 * disk slower than etcd needs (its own fsync figures). */
static void stall_cause(etcd_client *e, const members *ms, const member *me, char *why, size_t cap)
{
    kjoin_kubeapi_response r = {0};
    kjoin_err err;
    char url[300];
    *why = '\0';
    for (size_t i = 0; i < ms->n && !*why; i++) {
        const member *m = &ms->v[i];
        if (m != me && *m->m.name && !peer_reachable(e, m, &err))
            snprintf(why, cap, "this node cannot reach member %s at its peer URL %s: %s", m->m.name, m->m.peer_url,
                     err.msg);
    }
    client_url_of(me, url, sizeof(url));
    if (!*why && !request_one(e, url, "GET", "/metrics", NULL, &r, &err) && r.status == 200) {
        double ms_fsync = kjoin_etcd_fsync_mean_ms(r.body, r.len);
        if (ms_fsync > 10) /* etcd's guidance: a WAL fsync's 99th percentile under 10 ms */
            snprintf(why, cap, "its disk is slow: etcd's WAL fsyncs take %.0f ms on average (etcd needs under 10 ms)",
                     ms_fsync);
    }
    kjoin_kubeapi_response_release(&r);
}

/* The status of the member at url. */
static bool status_at(etcd_client *e, const char *url, kjoin_etcd_status *st)
{
    kjoin_kubeapi_response r = {0};
    kjoin_err err;
    bool ok = !request_one(e, url, "POST", "/v3/maintenance/status", "{}", &r, &err) && r.status == 200 &&
              !kjoin_etcd_status_parse(r.body, r.len, st, &err);
    kjoin_kubeapi_response_release(&r);
    return ok;
}

/* The line due now, if one is: how far this node's member (me, in ms) is. */
static void progress(etcd_client *e, watch *w, const members *ms, const member *me)
{
    const kjoin_cp_context *s = e->s;
    int64_t now = kjoin_now_ms();
    w->seen = true;
    w->started = *me->m.name != '\0';
    if (now < w->next_line)
        return;
    w->next_line = now + PROGRESS_MS;
    long secs = (long)((now - w->start) / 1000);
    if (!w->started) {
        pod_cause(e, w->since, w->cause, sizeof(w->cause));
        logf_(s, 0, "[etcd] The new member has not started after %ld s%s%s", secs, *w->cause ? ": " : "", w->cause);
        return;
    }
    char url[300];
    kjoin_etcd_status mine, leader;
    client_url_of(me, url, sizeof(url));
    const member *lead = NULL;
    if (status_at(e, url, &mine))
        for (size_t i = 0; i < ms->n; i++)
            lead = strcmp(ms->v[i].id, mine.leader_id) ? lead : &ms->v[i];
    if (lead)
        client_url_of(lead, url, sizeof(url));
    if (!lead || !status_at(e, url, &leader)) {
        logf_(s, 0, "[etcd] The new member runs; etcd does not say yet how far it is (%ld s)", secs);
        return;
    }
    char line[200];
    bool stalled = kjoin_etcd_progress_line(&mine, &leader, w->lines ? &w->last_applied : NULL, secs, line, sizeof(line));
    logf_(s, 0, "[etcd] %s", line);
    if (stalled) {
        stall_cause(e, ms, me, w->cause, sizeof(w->cause));
        logf_(s, 0, "[etcd] It made no progress in the last %d s%s%s", PROGRESS_MS / 1000, *w->cause ? ": " : "",
              w->cause);
    }
    w->last_applied = mine.applied_index;
    w->lines++;
}

/* Whether a wait polling again would pass e's deadline. */
static bool wait_over(const etcd_client *e) { return kjoin_now_ms() + POLL_MS > e->deadline; }

/* The error at the end of a wait: what ended it, and what is known of why. */
static kjoin_code wait_failed(etcd_client *e, watch *w, const char *what, const kjoin_err *last, kjoin_err *err)
{
    if (w->seen && !w->started) {
        pod_cause(e, w->since, w->cause, sizeof(w->cause));
        return kjoin_err_set(err, KJOIN_E_TIMEOUT, "the new etcd member never started before %s: %s", e->bound,
                             *w->cause ? w->cause : last->msg);
    }
    return kjoin_err_set(err, KJOIN_E_TIMEOUT, "%s before %s: %s%s%s", what, e->bound, last->msg,
                         *w->cause ? "; " : "", w->cause);
}

/* A learner is promoted once it runs (it has a name then) and has caught
 * up; etcd refuses the promotion before that. */
static kjoin_code promote(etcd_client *e, const char *id, watch *w, kjoin_err *err)
{
    char body[64];
    snprintf(body, sizeof(body), "{\"ID\":\"%s\"}", id);
    for (;;) {
        members ms;
        kjoin_err last;
        json_object *j = NULL;
        kjoin_code rc = list(e, &ms, &last);
        member *me = NULL;
        for (size_t i = 0; !rc && i < ms.n; i++)
            me = strcmp(ms.v[i].id, id) ? me : &ms.v[i];
        if (!rc && me && !me->learner)
            return KJOIN_OK;
        if (!rc && !me)
            return kjoin_err_set(err, KJOIN_E_API, "the new etcd member is no longer in the cluster");
        if (!rc)
            progress(e, w, &ms, me);
        if (!rc && !*me->m.name)
            rc = kjoin_err_set(&last, KJOIN_E_TIMEOUT, "the new etcd member has not started");
        else if (!rc && !(rc = call(e, "/v3/cluster/member/promote", body, &j, &last)))
            return json_object_put(j), KJOIN_OK;
        json_object_put(j);
        if (wait_over(e))
            return wait_failed(e, w, "the learner was not promoted", &last, err);
        kjoin_sleep_ms(POLL_MS);
    }
}

/* kubeadm's WaitForClusterAvailable: the status of every member that
 * serves answers (this node's own, and every started voting member: a
 * learner another join left, never started, serves nothing and is not
 * waited for). With w, this node's own is watched as it starts. */
static kjoin_code wait_available(etcd_client *e, const char *own_peer, watch *w, kjoin_err *err)
{
    for (;;) {
        members ms;
        kjoin_err last;
        kjoin_code rc = list(e, &ms, &last);
        for (size_t i = 0; !rc && i < ms.n; i++) {
            json_object *j = NULL;
            char url[300];
            bool own = !strcmp(ms.v[i].m.peer_url, own_peer);
            if (own ? !w : (ms.v[i].learner || !*ms.v[i].m.name))
                continue;
            if (own)
                progress(e, w, &ms, &ms.v[i]);
            if (own && !*ms.v[i].m.name) { /* not started: nothing there answers yet */
                rc = kjoin_err_set(&last, KJOIN_E_TIMEOUT, "the new etcd member has not started");
                break;
            }
            client_url_of(&ms.v[i], url, sizeof(url));
            rc = call_one(e, url, "/v3/maintenance/status", "{}", &j, &last);
            json_object_put(j);
        }
        if (!rc)
            return KJOIN_OK;
        if (wait_over(e))
            return w ? wait_failed(e, w, "the etcd cluster was not available", &last, err)
                     : kjoin_err_set(err, KJOIN_E_TIMEOUT, "the etcd cluster was not available before %s: %s",
                                     e->bound, last.msg);
        kjoin_sleep_ms(POLL_MS);
    }
}

/* What removing a member that never started may take, past the deadline
 * that ended the wait for it. */
#define UNSTARTED_REMOVAL_MS 10000

/* This node's member never started (its Pod did not run): it serves
 * nothing, so it leaves the cluster again, where the cluster can still
 * agree to it, with the etcd.yaml that named it; the join can then run
 * again as it first did. The wait's error (err) says what happened. */
static void remove_unstarted(etcd_client *e, const char *record, const char *id, kjoin_etcd_join_result *out,
                             kjoin_err *err)
{
    const kjoin_cp_context *s = e->s;
    char cause[KJOIN_ERR_MSG_MAX], manifest[4200];
    kjoin_err why;
    memcpy(cause, err->msg, sizeof(cause));
    e->deadline = kjoin_now_ms() + UNSTARTED_REMOVAL_MS;
    e->bound = "its own bound";
    logf_(s, 0, "[etcd] Removing the new member, which never started, from the cluster");
    if (remove_member(e, id, &why)) {
        kjoin_err_set(err, KJOIN_E_TIMEOUT, "%.200s; the member, which never started, could not be removed (%.150s): "
                      "start it, or remove it (etcdctl member remove %" PRIx64 ") before this node joins again",
                      cause, why.msg, (uint64_t)strtoull(id, NULL, 10));
        return;
    }
    out->unstarted_removed = true;
    snprintf(manifest, sizeof(manifest), "%s/etcd.yaml", s->manifests_dir);
    bool taken = false;
    if (record && kjoin_cp_record_forget_etcd(record, manifest, &taken, &why))
        logf_(s, KJOIN_LOG_WARNING, "[etcd] WARNING: %s was not taken back: %s", manifest, why.msg);
    kjoin_err_set(err, KJOIN_E_TIMEOUT, "%.250s; the member, which never started, was removed from the cluster%s: "
                  "the same join can run again once its Pod can start", cause, taken ? " and its etcd.yaml taken back" : "");
}

kjoin_code kjoin_check_etcd(const kjoin_cp_context *s, size_t *healthy, kjoin_err *err)
{
    etcd_client e = etcd_client_of(s);
    members ms = {0};
    *healthy = 0;
    if (s->cluster->external_etcd)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the cluster uses an external etcd: no stacked member to check");
    logf_(s, 0, "[check-etcd] Checking that the etcd cluster is healthy");
    kjoin_code rc = load_tls(&e, err);
    if (!rc)
        rc = endpoints(&e, err);
    /* every started voter but this node's own (an interrupted join's, not started yet) */
    char peer[128];
    bool v6 = strchr(s->advertise_address, ':') != NULL;
    snprintf(peer, sizeof(peer), "https://%s%s%s:2380", v6 ? "[" : "", s->advertise_address, v6 ? "]" : "");
    if (!rc)
        rc = wait_available(&e, peer, NULL, err);
    if (!rc && !(rc = list(&e, &ms, err)))
        *healthy = ms.n;
    if (!rc)
        logf_(s, 0, "[check-etcd] The etcd cluster is healthy: %zu members", *healthy);
    free(e.ca);
    free(e.crt);
    kjoin_free_wiped(e.key, e.key_len);
    return rc;
}

static void etcd_problem(kjoin_etcd_check *c, kjoin_code rc, kjoin_code *first, const char *what)
{
    size_t used = strlen(c->problems);
    if (!*first)
        *first = rc;
    snprintf(c->problems + used, sizeof(c->problems) - used, "%s%s", used ? "; " : "", what);
}

kjoin_code kjoin_check_etcd_members(const kjoin_cp_context *s, kjoin_etcd_check *out, kjoin_code *verdict,
                                    kjoin_err *err)
{
    etcd_client e = etcd_client_of(s);
    members ms = {0};
    char peer[128], what[700];
    bool v6 = strchr(s->advertise_address, ':') != NULL;
    memset(out, 0, sizeof(*out));
    *verdict = KJOIN_OK;
    if (s->cluster->external_etcd)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the cluster uses an external etcd: no stacked member to check");
    snprintf(peer, sizeof(peer), "https://%s%s%s:2380", v6 ? "[" : "", s->advertise_address, v6 ? "]" : "");
    kjoin_code rc = load_tls(&e, err);
    if (!rc)
        rc = endpoints(&e, err);
    if (!rc)
        rc = list(&e, &ms, err);
    for (size_t i = 0; !rc && i < ms.n && i < KJOIN_ETCD_CHECK_MAX; i++) {
        const member *m = &ms.v[i];
        kjoin_etcd_member_check *c = &out->members[out->n++];
        kjoin_etcd_status st;
        kjoin_err why = {0};
        char url[300];
        snprintf(c->name, sizeof(c->name), "%s", m->m.name);
        snprintf(c->peer_url, sizeof(c->peer_url), "%s", m->m.peer_url);
        c->learner = m->learner;
        if (!strcmp(m->m.peer_url, peer))
            out->member_already = true;
        if (!*m->m.name) { /* nothing serves there yet; a learner blocks the next (etcd takes one at a time) */
            snprintf(what, sizeof(what), "etcd member %.300s has not started%s", m->m.peer_url,
                     m->learner ? ": etcd takes no other learner until it starts or is removed" : "");
            etcd_problem(out, KJOIN_E_API, verdict, what);
            logf_(s, 0, "[check] etcd member %s (%s): not started", m->m.peer_url, m->learner ? "learner" : "voter");
            continue;
        }
        client_url_of(m, url, sizeof(url));
        c->healthy = status_at(&e, url, &st);
        c->peer_reachable = peer_reachable(&e, m, &why);
        if (!c->healthy) {
            snprintf(what, sizeof(what), "etcd member %.200s does not answer at %.250s", m->m.name, url);
            etcd_problem(out, KJOIN_E_TIMEOUT, verdict, what);
        }
        if (!c->peer_reachable) {
            snprintf(what, sizeof(what), "this node cannot reach etcd member %.150s at its peer URL %.250s%s%.200s",
                     m->m.name, m->m.peer_url, *why.msg ? ": " : "", why.msg);
            etcd_problem(out, KJOIN_E_TIMEOUT, verdict, what);
        }
        logf_(s, 0, "[check] etcd member %s (%s, %s): %s, peer URL %s from this node", m->m.name, m->m.peer_url,
              m->learner ? "learner" : "voter", c->healthy ? "healthy" : "not answering",
              c->peer_reachable ? "reached" : "not reached");
    }
    if (!rc && ms.n > KJOIN_ETCD_CHECK_MAX)
        etcd_problem(out, KJOIN_E_API, verdict, "etcd has more members than the check reports");
    if (!rc && !out->member_already && !(out->peer_port_free = kjoin_preflight_port_free(s->advertise_address, 2380))) {
        snprintf(what, sizeof(what), "etcd's peer port %s is in use on this node", peer);
        etcd_problem(out, KJOIN_E_USAGE, verdict, what);
    }
    if (!rc)
        logf_(s, 0, "[check] this node's etcd peer URL %s: %s", peer,
              out->member_already ? "a member already (an earlier join's)"
              : out->peer_port_free ? "its port is free here (whether the members reach it is theirs to say)"
                                    : "its port is in use here");
    free(e.ca);
    free(e.crt);
    kjoin_free_wiped(e.key, e.key_len);
    return rc;
}

kjoin_code kjoin_etcd_join(const kjoin_cp_context *s, kjoin_etcd_join_result *out, kjoin_err *err)
{
    etcd_client e = etcd_client_of(s);
    const char *record = kjoin_cp_record_dir(s);
    const kjoin_cluster_configuration *c = s->cluster;
    const char *data = *c->etcd_data_dir ? c->etcd_data_dir : "/var/lib/etcd";
    /* a learner first where the release's kubeadm makes one, by the cluster's gate and its stage */
    bool v6 = strchr(s->advertise_address, ':') != NULL, dry = s->join->dry_run,
         learner = kjoin_gate_on(s->release->etcd_learner, c->etcd_learner_mode);
    char peer[128], *yaml = NULL;
    members ms = {0};
    memset(out, 0, sizeof(*out));
    snprintf(peer, sizeof(peer), "https://%s%s%s:2380", v6 ? "[" : "", s->advertise_address, v6 ? "]" : "");
    if (c->external_etcd)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the cluster uses an external etcd: no member to add");
    /* The manifest's inputs checked before the cluster is touched. */
    kjoin_code rc = kjoin_etcd_manifest_make(s, NULL, 0, &yaml, err);
    free(yaml);
    yaml = NULL;
    if (!rc)
        rc = load_tls(&e, err);
    if (!rc)
        rc = endpoints(&e, err);
    if (!rc)
        rc = list(&e, &ms, err);
    member *me = rc ? NULL : find(&ms, peer);
    if (!rc && !me) {
        /* A manifest there that this run did not make is refused before the
         * member is added, not after. */
        char path[4200];
        struct stat st;
        snprintf(path, sizeof(path), "%s/etcd.yaml", s->manifests_dir);
        if (lstat(path, &st) == 0 && !s->force)
            rc = kjoin_err_set(err, KJOIN_E_OUTPUT, "%s is already there and this node is no etcd member; it is left as "
                               "it is (remove it, or ask for it to be replaced)", path);
        /* The intent first (the peer URL, no ID yet): a join killed right
         * after the add, or a record write that fails, leaves a member
         * reset finds by its peer URL. */
        if (!rc && record)
            rc = kjoin_cp_record_etcd(record, peer, "", s->cert_dir, data, false, err);
        if (!rc && dry) { /* the member it would add, in the manifest's list alone */
            logf_(s, 0, "[dryrun] Would add etcd member %s%s", peer, learner ? " as a learner" : "");
            if (ms.n == MEMBERS_MAX) {
                rc = kjoin_err_set(err, KJOIN_E_API, "etcd has more members than kjoin reads");
            } else {
                me = &ms.v[ms.n++];
                *me = (member){.learner = learner};
                snprintf(me->m.peer_url, sizeof(me->m.peer_url), "%s", peer);
            }
        } else if (!rc && !(rc = add(&e, peer, learner, &ms, out->member_id, err))) {
            out->added = true;
            logf_(s, 0, "[etcd] Announced new etcd member joining to the existing etcd cluster");
            me = find(&ms, peer);
        }
    } else if (me) {
        snprintf(out->member_id, sizeof(out->member_id), "%s", me->id);
        logf_(s, 0, "[etcd] This node's etcd member is there already (%s)", peer);
    }
    if (!rc && !me)
        rc = kjoin_err_set(err, KJOIN_E_API, "etcd's member list lacks the member just added");
    struct stat st;
    bool data_there = lstat(data, &st) == 0;
    /* The member goes into the record before anything else is written: a
     * join killed from here on leaves a member kjoin reset removes. */
    if (!rc && record)
        rc = kjoin_cp_record_etcd(record, peer, out->member_id, s->cert_dir, data, !data_there, err);
    if (!rc) {
        /* kubeadm names the new member (a learner has none until it runs) */
        snprintf(me->m.name, sizeof(me->m.name), "%s", s->join->name.name);
        kjoin_etcd_member list[MEMBERS_MAX];
        for (size_t i = 0; i < ms.n; i++)
            list[i] = ms.v[i].m;
        kjoin_safedir dd;
        char dir[1400];
        logf_(s, 0, "[etcd] Creating static Pod manifest for \"etcd\"");
        if (dry)
            logf_(s, 0, "[dryrun] Would ensure that \"%s\" directory is present", data);
        else if (!(rc = kjoin_safedir_open(data, KJOIN_SAFEDIR_CREATE, &dd, err))) /* kubeadm's CreateDataDirectory */
            kjoin_safedir_close(&dd);
        if (!rc && !(rc = kjoin_etcd_manifest_make(s, list, ms.n, &yaml, err)) &&
            !(rc = kjoin_join_context_write_path(s->join, s->manifests_dir, dir, sizeof(dir), err))) {
            const char *name = "etcd.yaml";
            rc = kjoin_cp__write_manifests(record, dir, &name, &yaml, 1, s->force, &out->manifest_kept, s, err);
        }
        free(yaml);
    }
    if (rc && out->added) { /* no member left behind that nothing will start */
        kjoin_err ignored;
        if (!remove_member(&e, out->member_id, &ignored)) {
            logf_(s, 0, "[etcd] Removed the member added, as its manifest was not written");
            if (record) /* no member left to remove */
                kjoin_cp_record_etcd(record, "", "", s->cert_dir, data, !data_there, &ignored);
        }
        out->added = false;
    }
    /* A dry run started nothing: nothing to promote or wait for. */
    watch w = watch_begin();
    if (!rc && !dry && me->learner) {
        logf_(s, 0, "[etcd] Waiting for the new member to start, then promoting it from learner to voting member");
        if (!(rc = promote(&e, out->member_id, &w, err)))
            out->promoted = true;
    }
    if (!rc && !dry) {
        logf_(s, 0, "[etcd] Waiting for the new etcd member to join the cluster");
        rc = wait_available(&e, peer, &w, err);
    }
    if (rc == KJOIN_E_TIMEOUT && w.seen && !w.started && !dry && *out->member_id)
        remove_unstarted(&e, record, out->member_id, out, err);
    if (!rc && (dry || !(rc = list(&e, &ms, err))))
        out->members = ms.n;
    free(e.ca);
    free(e.crt);
    kjoin_free_wiped(e.key, e.key_len);
    return rc;
}

kjoin_code kjoin_cp_reset_etcd(const kjoin_cp_reset_spec *s, kjoin_cp_reset_result *out, kjoin_err *err)
{
    kjoin_cp_record *rec = malloc(sizeof(*rec));
    bool found = false;
    memset(out, 0, sizeof(*out));
    if (!rec)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_code rc = kjoin_cp_record_read(s->kubernetes_dir, rec, &found, err);
    out->had_record = found;
    out->had_member = found && *rec->etcd_peer;
    if (rc || !out->had_member) {
        free(rec);
        return rc;
    }
    if (s->dry_run) { /* nothing asked of etcd */
        reset_logf_(s, 0, "[reset] Would remove this node's etcd member %s from the cluster", rec->etcd_peer);
        free(rec);
        return KJOIN_OK;
    }
    kjoin_cp_context cx = {.join = s->join};
    snprintf(cx.admin_kubeconfig, sizeof(cx.admin_kubeconfig), "%s/admin.conf", s->kubernetes_dir);
    snprintf(cx.cert_dir, sizeof(cx.cert_dir), "%s", rec->cert_dir);
    etcd_client e = {.s = &cx, .deadline = s->join->deadline_ms, .bound = "the deadline"};
    members ms;
    kjoin_err why;
    reset_logf_(s, 0, "[reset] Removing this node's etcd member %s from the cluster", rec->etcd_peer);
    kjoin_code r = load_tls(&e, &why);
    if (!r)
        r = endpoints(&e, &why);
    /* the other members answer: this one may be down, or the one asked */
    if (!r)
        r = list(&e, &ms, &why);
    member *me = r ? NULL : find(&ms, rec->etcd_peer);
    if (!r && me && ms.n == 1)
        r = kjoin_err_set(&why, KJOIN_E_USAGE, "it is the cluster's only member");
    /* etcd refuses while it thinks the rest unhealthy (a member just
     * started or promoted): asked again until the deadline, as kubeadm. */
    for (bool asked = false; !r && me && !asked;) {
        r = remove_member(&e, me->id, &why);
        asked = r != KJOIN_E_API || kjoin_now_ms() + POLL_MS >= e.deadline;
        if (!asked) {
            kjoin_sleep_ms(POLL_MS);
            r = KJOIN_OK;
        }
    }
    out->member_removed = !r;
    if (r) {
        snprintf(out->why_not, sizeof(out->why_not), "%s", why.msg);
        reset_logf_(s, KJOIN_LOG_WARNING, "[reset] WARNING: this node's etcd member was not removed (%s): remove it by "
              "hand (etcdctl member remove) before this address joins again", why.msg);
    } else {
        reset_logf_(s, 0, "[reset] %s", me ? "Removed the etcd member" : "The etcd member was no longer in the cluster");
    }
    free(e.ca);
    free(e.crt);
    kjoin_free_wiped(e.key, e.key_len);
    free(rec);
    return KJOIN_OK;
}
