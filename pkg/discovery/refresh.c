/* kjoin refresh: the bootstrap-discovery design's client update. A node
 * re-reads cluster-info over TLS verified with the CA its kubeconfig already
 * trusts, and follows the cluster's CA bundle when it changed: during a CA
 * rotation the bundle holds the new and the old CA, so a node that refreshes
 * meanwhile moves to the new CA without a new token or pin. */
#include <libgen.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include <kjoin/discovery.h>
#include <kjoin/kubeapi.h>
#include <kjoin/kubeconfig.h>
#include <kjoin/transport.h>

#include "../yamldoc/yamldoc.h"

#define CA_KEY "certificate-authority-data"

static yaml_node_t *named(kjoin_yaml *y, yaml_node_t *list, const char *name)
{
    for (size_t i = 0; i < kjoin_yaml__len(list); i++) {
        yaml_node_t *e = kjoin_yaml__item(y, list, i), *n = NULL;
        const char *s = kjoin_yaml__get(y, e, "name", &n, KJOIN_E_USAGE, NULL) ? NULL : kjoin_yaml__str(n);
        if (s && strcmp(s, name) == 0)
            return e;
    }
    return NULL;
}

/* The byte range of the current context's cluster's certificate-authority-data
 * value, so that only it is replaced and the rest of the file kept as it is. */
static kjoin_code ca_data_range(const char *text, size_t len, size_t *start, size_t *end, kjoin_err *err)
{
    kjoin_yaml y;
    kjoin_err inner;
    kjoin_code rc = kjoin_yaml__load(&y, text, len, KJOIN_E_USAGE, &inner);
    if (rc)
        return kjoin_err_set(err, rc, "malformed kubeconfig: %s", inner.msg);
    yaml_node_t *root = kjoin_yaml__root(&y), *cc = NULL, *contexts = NULL, *clusters = NULL, *ctx = NULL,
                *cluster = NULL, *data = NULL;
    const char *name = NULL;
    if (!kjoin_yaml__get(&y, root, "current-context", &cc, KJOIN_E_USAGE, NULL) && kjoin_yaml__str(cc) &&
        !kjoin_yaml__get(&y, root, "contexts", &contexts, KJOIN_E_USAGE, NULL)) {
        yaml_node_t *entry = named(&y, contexts, kjoin_yaml__str(cc)), *c = NULL;
        if (entry && !kjoin_yaml__get(&y, entry, "context", &ctx, KJOIN_E_USAGE, NULL) &&
            !kjoin_yaml__get(&y, ctx, "cluster", &c, KJOIN_E_USAGE, NULL))
            name = kjoin_yaml__str(c);
    }
    kjoin_yaml__get(&y, root, "clusters", &clusters, KJOIN_E_USAGE, NULL);
    yaml_node_t *entry = name ? named(&y, clusters, name) : kjoin_yaml__len(clusters) == 1 ? kjoin_yaml__item(&y, clusters, 0) : NULL;
    if (entry && !kjoin_yaml__get(&y, entry, "cluster", &cluster, KJOIN_E_USAGE, NULL) && cluster)
        kjoin_yaml__get(&y, cluster, CA_KEY, &data, KJOIN_E_USAGE, NULL);
    if (!data || !kjoin_yaml__str(data))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "the kubeconfig's current cluster has no %s to refresh (a "
                                               "certificate-authority path is not rewritten)", CA_KEY);
    else
        *start = data->start_mark.index, *end = data->end_mark.index;
    kjoin_yaml__release(&y);
    return rc;
}

/* GET url over TLS whose chain must end at one of anchors, retried while
 * transient, within the deadline. */
static kjoin_code verified_get(const char *url, const char *anchors, size_t anchors_len, int64_t deadline,
                               const char *audit_id, kjoin_http_response *out, kjoin_err *err)
{
    kjoin_http_request req = {.url = url, .tls = KJOIN_TLS_PINNED, .anchors_pem = anchors, .anchors_len = anchors_len,
                              .audit_id = audit_id};
    for (unsigned round = 0;; round++) {
        int64_t left = deadline - kjoin_now_ms();
        if (left <= 0)
            return kjoin_err_set(err, KJOIN_E_TIMEOUT, "no answer from %s before the deadline", url);
        req.timeout_ms = left < 10000 ? left : 10000;
        kjoin_code rc = kjoin_http_get(&req, out, err);
        if (rc != KJOIN_E_TRANSIENT)
            return rc;
        kjoin_sleep_ms(kjoin_backoff_ms(round, 250, 2000) + 1);
    }
}

/* The server and CA of the kubeconfig's current context, from its bytes
 * (paths in it are relative to its directory). */
static kjoin_code current_cluster(const char *path, const char *text, size_t len, kjoin_kubeapi_config *out,
                                  kjoin_err *err)
{
    char *copy = strdup(path);
    if (!copy)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_err inner;
    kjoin_code rc = kjoin_kubeapi_config_parse(text, len, dirname(copy), NULL, out, &inner);
    free(copy);
    return rc ? kjoin_err_set(err, rc, "%s: %s", path, inner.msg) : KJOIN_OK;
}

static size_t count_certs(const char *pem)
{
    size_t n = 0;
    for (const char *p = pem; (p = strstr(p, "-----BEGIN CERTIFICATE-----")); p++)
        n++;
    return n;
}

kjoin_code kjoin_refresh(const kjoin_refresh_opts *o, kjoin_refresh_result *out, kjoin_err *err)
{
    kjoin_refresh_result res = {0};
    char *text = NULL, *url = NULL, *b64 = NULL, *rewritten = NULL;
    size_t len = 0, start = 0, end = 0;
    kjoin_kubeapi_config cur = {0};
    kjoin_http_response first = {0}, second = {0};
    kjoin_cluster_info ci = {0};
    kjoin_cluster fresh = {0};
    int64_t deadline = kjoin_now_ms() + (o->timeout_ms ? o->timeout_ms : 60000);
    kjoin_code rc = kjoin_file_read(o->kubeconfig, KJOIN_KUBECONFIG_MAX, &text, &len, err);
    if (!rc)
        rc = ca_data_range(text, len, &start, &end, err);
    /* The same bytes give the range to rewrite and the trust to verify with:
     * read once, so the two cannot disagree. */
    if (!rc)
        rc = current_cluster(o->kubeconfig, text, len, &cur, err);
    if (!rc && (url = malloc(strlen(cur.server) + sizeof(KJOIN_CLUSTER_INFO_PATH))))
        sprintf(url, "%s%s", cur.server, KJOIN_CLUSTER_INFO_PATH);
    else if (!rc)
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    /* 1. cluster-info over TLS verified with what the file trusts now. */
    if (!rc && !cur.ca_pem)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s has no certificate authority to verify the refresh with", o->kubeconfig);
    if (!rc)
        rc = verified_get(url, cur.ca_pem, cur.ca_len, deadline, o->audit_id, &first, err);
    if (!rc && first.status != 200)
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "cluster-info answered %ld", first.status);
    if (!rc)
        rc = kjoin_cluster_info_parse(first.body, first.len, NULL, &ci, err);
    if (!rc)
        rc = kjoin_kubeconfig_parse_cluster(ci.kubeconfig, ci.kubeconfig_len, &fresh, err);
    res.old_certs = rc ? 0 : count_certs(cur.ca_pem);
    res.new_certs = rc ? 0 : count_certs((const char *)fresh.ca_pem);
    res.changed = !rc && (fresh.ca_len != cur.ca_len || memcmp(fresh.ca_pem, cur.ca_pem, cur.ca_len) != 0);
    /* 2. A new bundle must still verify the server it came from, or the node
     * would cut itself off: the same request, trusting only the new bundle. */
    if (!rc && res.changed) {
        kjoin_err inner;
        kjoin_code vr = verified_get(url, (const char *)fresh.ca_pem, fresh.ca_len, deadline, o->audit_id, &second,
                                     &inner);
        if (vr)
            rc = kjoin_err_set(err, KJOIN_E_TRUST, "the cluster's new CA bundle (%zu certificate(s)) does not verify "
                                                   "the API server it came from (%s): refusing it, %s is unchanged",
                               res.new_certs, inner.msg, o->kubeconfig);
    }
    if (!rc && res.changed && !(b64 = kjoin_b64_encode(fresh.ca_pem, fresh.ca_len, false)))
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    size_t new_len = 0;
    if (!rc && res.changed && (rewritten = malloc(len - (end - start) + strlen(b64) + 1))) {
        memcpy(rewritten, text, start);
        memcpy(rewritten + start, b64, strlen(b64));
        memcpy(rewritten + start + strlen(b64), text + end, len - end);
        new_len = len - (end - start) + strlen(b64);
    } else if (!rc && res.changed) {
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    if (!rc && res.changed)
        rc = kjoin_file_write_atomic(o->kubeconfig, rewritten, new_len, true, NULL, err);
    if (!rc && o->ca_cert_path)
        rc = kjoin_file_write_mode(o->ca_cert_path, fresh.ca_pem, fresh.ca_len, 0644, true, NULL, err);
    if (!rc && res.changed)
        kjoin_logf(o->log, o->log_ctx, 0, "[refresh] The cluster's CA bundle changed (%zu -> %zu certificate(s)), "
                                          "verified over TLS with the old one and checked against the server: %s "
                                          "now trusts it", res.old_certs, res.new_certs, o->kubeconfig);
    else if (!rc)
        kjoin_logf(o->log, o->log_ctx, 0, "[refresh] The cluster's CA bundle is unchanged (%zu certificate(s))",
                   res.old_certs);
    kjoin_free_wiped(text, len);
    kjoin_free_wiped(rewritten, new_len);
    free(url);
    free(b64);
    kjoin_kubeapi_config_release(&cur);
    kjoin_http_response_release(&first);
    kjoin_http_response_release(&second);
    kjoin_cluster_info_release(&ci);
    kjoin_cluster_release(&fresh);
    if (!rc)
        *out = res;
    return rc;
}
