/* kjoin refresh: the bootstrap-discovery design's client update. A node
 * re-reads cluster-info and follows the cluster's CA bundle when it changed:
 * during a CA rotation the bundle holds the new and the old CA, so a node
 * that refreshes meanwhile moves to the new CA without a new token or pin.
 *
 * One rule makes that safe: everything is judged on one TLS handshake. The
 * answer is taken only from a connection whose chain the CA the file trusts
 * now verifies, and a new bundle only if it verifies that very chain too
 * (with its host name). A second connection, which an interceptor could
 * answer with another certificate, is never asked. */
#include <libgen.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include <kjoin/private/discovery.h>
#include <kjoin/private/kubeapi.h>
#include <kjoin/private/kubeconfig.h>
#include <kjoin/private/pin.h>
#include <kjoin/private/transport.h>
#include <kjoin/private/util.h>

/* GET url on the kept connection (unverified until the caller pins it),
 * retried while transient, within the deadline. */
static kjoin_code get_on(kjoin_http_conn *conn, const char *url, int64_t deadline, const char *audit_id,
                         kjoin_http_response *out, kjoin_err *err)
{
    kjoin_http_request req = {.url = url, .tls = KJOIN_TLS_INSECURE, .audit_id = audit_id, .conn = conn};
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

/* Whether the chain of the connection's handshake verifies against pem. */
static kjoin_code pin_to(kjoin_http_conn *conn, const char *pem, size_t len, kjoin_tls_trust **trust, kjoin_err *err)
{
    kjoin_http_conn_unpin(conn);
    kjoin_tls_trust_free(*trust);
    if (!(*trust = kjoin_tls_trust_new()))
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_code rc = kjoin_tls_trust_add_pem(*trust, pem, len, true, err);
    return rc ? rc : kjoin_http_conn_pin(conn, *trust, err);
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

/* With pins, the operator's further condition: the new bundle holds a
 * certificate one of them names. */
static kjoin_code check_pins(const kjoin_pinset *pins, const unsigned char *pem, size_t len, kjoin_err *err)
{
    if (!pins || kjoin_pinset_count(pins) == 0)
        return KJOIN_OK;
    kjoin_bundle *b = NULL;
    kjoin_err inner;
    kjoin_code rc = kjoin_bundle_parse(pem, len, &b, &inner);
    if (!rc)
        rc = kjoin_bundle_apply_pins(b, pins, &inner);
    kjoin_bundle_free(b);
    return rc ? kjoin_err_set(err, KJOIN_E_TRUST, "the cluster's new CA bundle matches none of the required pins "
                                                  "(%s): refusing it", inner.msg)
              : KJOIN_OK;
}

kjoin_code kjoin_refresh(const kjoin_refresh_opts *o, kjoin_refresh_result *out, kjoin_err *err)
{
    kjoin_refresh_result res = {0};
    char *text = NULL, *url = NULL, *rewritten = NULL;
    size_t len = 0, new_len = 0;
    kjoin_kubeapi_config cur = {0};
    kjoin_http_response resp = {0};
    kjoin_cluster_info ci = {0};
    kjoin_cluster fresh = {0};
    kjoin_http_conn *conn = NULL;
    kjoin_tls_trust *trust = NULL;
    int64_t deadline = kjoin_now_ms() + (o->timeout_ms ? o->timeout_ms : 60000);
    kjoin_code rc = kjoin_file_read(o->kubeconfig, KJOIN_KUBECONFIG_MAX, &text, &len, err);
    /* The same bytes give the trust to verify with and the text to rewrite:
     * read once, so the two cannot disagree. */
    if (!rc)
        rc = current_cluster(o->kubeconfig, text, len, &cur, err);
    if (!rc && !cur.ca_pem)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s has no certificate authority to verify the refresh with", o->kubeconfig);
    /* Before the network, as every other input: the file must be one whose
     * CA data can be rewritten (data, not a certificate-authority path). */
    if (!rc && !(rc = kjoin_kubeconfig_replace_ca(text, len, cur.ca_pem, cur.ca_len, &rewritten, &new_len, err))) {
        kjoin_free_wiped(rewritten, new_len);
        rewritten = NULL, new_len = 0;
    }
    size_t url_cap = rc ? 0 : strlen(cur.server) + sizeof(KJOIN_CLUSTER_INFO_PATH);
    if (!rc && (!(url = malloc(url_cap)) || !(conn = kjoin_http_conn_new())))
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    else if (!rc)
        snprintf(url, url_cap, "%s%s", cur.server, KJOIN_CLUSTER_INFO_PATH);
    /* 1. cluster-info, taken only if the CA the file trusts now verifies the
     * handshake it came on. */
    if (!rc)
        rc = get_on(conn, url, deadline, o->audit_id, &resp, err);
    if (!rc)
        rc = pin_to(conn, cur.ca_pem, cur.ca_len, &trust, err);
    if (!rc && resp.status != 200)
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "cluster-info answered %ld", resp.status);
    if (!rc)
        rc = kjoin_cluster_info_parse(resp.body, resp.len, NULL, &ci, err);
    if (!rc)
        rc = kjoin_kubeconfig_parse_cluster(ci.kubeconfig, ci.kubeconfig_len, &fresh, err);
    res.old_certs = rc ? 0 : count_certs(cur.ca_pem);
    res.new_certs = rc ? 0 : count_certs((const char *)fresh.ca_pem);
    res.changed = !rc && (fresh.ca_len != cur.ca_len || memcmp(fresh.ca_pem, cur.ca_pem, cur.ca_len) != 0);
    /* 2. A new bundle must verify that same handshake, or the node would cut
     * itself off (or follow whoever answered a second connection). */
    if (!rc && res.changed) {
        kjoin_err inner;
        if (pin_to(conn, (const char *)fresh.ca_pem, fresh.ca_len, &trust, &inner))
            rc = kjoin_err_set(err, KJOIN_E_TRUST, "the cluster's new CA bundle (%zu certificate(s)) does not verify "
                                                   "the API server it came from (%s): refusing it, %s is unchanged",
                               res.new_certs, inner.msg, o->kubeconfig);
    }
    if (!rc && res.changed)
        rc = check_pins(o->pins, fresh.ca_pem, fresh.ca_len, err);
    if (!rc && res.changed)
        rc = kjoin_kubeconfig_replace_ca(text, len, fresh.ca_pem, fresh.ca_len, &rewritten, &new_len, err);
    if (!rc && res.changed)
        rc = kjoin_file_write_atomic(o->kubeconfig, rewritten, new_len, true, NULL, err);
    if (!rc && o->ca_cert_path)
        rc = kjoin_file_write_mode(o->ca_cert_path, fresh.ca_pem, fresh.ca_len, 0644, true, NULL, err);
    if (!rc && res.changed)
        kjoin_logf(o->log, o->log_ctx, 0, "[refresh] The cluster's CA bundle changed (%zu -> %zu certificate(s)), "
                                          "read on a connection the old one verified and checked against that same "
                                          "connection: %s now trusts it", res.old_certs, res.new_certs, o->kubeconfig);
    else if (!rc)
        kjoin_logf(o->log, o->log_ctx, 0, "[refresh] The cluster's CA bundle is unchanged (%zu certificate(s))",
                   res.old_certs);
    kjoin_free_wiped(text, len);
    kjoin_free_wiped(rewritten, new_len);
    free(url);
    kjoin_http_conn_free(conn);
    kjoin_tls_trust_free(trust);
    kjoin_kubeapi_config_release(&cur);
    kjoin_http_response_release(&resp);
    kjoin_cluster_info_release(&ci);
    kjoin_cluster_release(&fresh);
    if (!rc)
        *out = res;
    return rc;
}
