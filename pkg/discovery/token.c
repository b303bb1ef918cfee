/* Token discovery: kubeadm's protocol with kjoin's stricter trust rules.
 * One attempt against one endpoint: unverified GET of cluster-info, JWS
 * check, kubeconfig parse, pins applied to the whole bundle, GET again over
 * TLS verified against the pinned anchors, byte equality. */
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include <kjoin/private/jws.h>
#include <kjoin/private/kubeconfig.h>
#include <kjoin/private/util.h>
#include <kjoin/private/pin.h>

#include "internal.h"

static void feed(const char *data, size_t len, void *parser) { kjoin_discovery__ci_feed(parser, data, len); }

/* cluster-info: 403 while kubeadm's RBAC role is not there yet, 404 while
 * the ConfigMap is not. The body is parsed as it arrives (no copy of it is
 * held), against expect when that is set: see kjoin_discovery__ci_new. */
static kjoin_code get_cluster_info(kjoin_run *r, const char *url, const kjoin_http_request *trust,
                                   const char *token_id, const char *expect, size_t expect_len,
                                   kjoin_cluster_info *out, bool *same, kjoin_err *err)
{
    kjoin_discovery__ci *parser = kjoin_discovery__ci_new(expect, expect_len);
    if (!parser)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_http_request req = *trust;
    req.sink = feed;
    req.sink_ctx = parser;
    kjoin_http_response resp = {0};
    kjoin_code rc = kjoin_discovery__get_200(r, url, &req, KJOIN_RETRY_403 | KJOIN_RETRY_404, &resp, err);
    if (!rc)
        rc = kjoin_discovery__ci_finish(parser, token_id, out, same, err);
    kjoin_http_response_release(&resp);
    kjoin_discovery__ci_free(parser);
    return rc;
}

/* cluster-info has no signature for the token: the API server says whether
 * it knows the token at all. Asked only over TLS verified against the
 * pinned CA (the token never goes to a server the pins do not vouch for),
 * as the token, at /version: 401 is a token it rejects (expired, deleted,
 * never created), which no wait mends; any other answer (or none) keeps
 * the wait. Returns KJOIN_E_TOKEN_REJECTED or KJOIN_E_TRANSIENT. */
static kjoin_code unsigned_token(kjoin_run *r, const kjoin_endpoint *ep, const kjoin_cluster_info *first,
                                 kjoin_err *err)
{
    const kjoin_token_discovery *o = r->source;
    const kjoin_token *tok = o->discovery_token;
    kjoin_code rc = kjoin_err_set(err, KJOIN_E_TRANSIENT,
                                  "cluster-info has no signature for token id \"%s\" yet (the control plane signs "
                                  "new tokens after a short delay)", tok->id);
    if (o->unsafe_skip_ca_verification || o->wait_for_token)
        return rc;
    kjoin_cluster cluster = {0};
    kjoin_bundle *bundle = NULL;
    kjoin_err ignored;
    if (kjoin_kubeconfig_parse_cluster(first->kubeconfig, first->kubeconfig_len, &cluster, &ignored) ||
        kjoin_bundle_parse(cluster.ca_pem, cluster.ca_len, &bundle, &ignored) ||
        kjoin_bundle_apply_pins(bundle, o->common.pins, &ignored) || kjoin_discovery__pin(r, bundle, &ignored)) {
        kjoin_cluster_release(&cluster); /* no CA the pins vouch for: nothing to ask, the wait goes on */
        kjoin_bundle_free(bundle);
        return rc;
    }
    char url[512], bearer[KJOIN_TOKEN_ID_LEN + 1 + KJOIN_TOKEN_SECRET_LEN + 1];
    snprintf(url, sizeof(url), "https://%s/version", ep->authority);
    snprintf(bearer, sizeof(bearer), "%s.%.*s", tok->id, KJOIN_TOKEN_SECRET_LEN, tok->secret);
    kjoin_http_request req = {.tls = KJOIN_TLS_PINNED, .conn = r->conn, .bearer_token = bearer};
    kjoin_http_response resp = {0};
    if (!kjoin_discovery__get(r, url, &req, &resp, &ignored) && resp.status == 401)
        rc = kjoin_err_set(err, KJOIN_E_TOKEN_REJECTED,
                           "the API server rejects token id \"%s\" (HTTP 401): it expired, was deleted or was never "
                           "created, and cluster-info will never be signed for it; create a new token on a "
                           "control-plane node (kubeadm token create, or kjoin token create), or wait for one a "
                           "provisioning flow creates later with `wait_for_token`", tok->id);
    else if (resp.status)
        kjoin_discovery__log(r, 1, "[discovery] The API server accepts token id \"%s\"; waiting for its signature",
                             tok->id);
    OPENSSL_cleanse(bearer, sizeof(bearer));
    kjoin_http_response_release(&resp);
    kjoin_discovery__unpin(r);
    kjoin_cluster_release(&cluster);
    kjoin_bundle_free(bundle);
    return rc;
}

/* Everything after the unverified fetch; *st says which check failed. */
static kjoin_code check_and_build(kjoin_run *r, const kjoin_endpoint *ep, const char *url,
                                  const kjoin_cluster_info *first, kjoin_stage *st, kjoin_join_result *out,
                                  kjoin_err *err)
{
    const kjoin_token_discovery *o = r->source;
    const kjoin_token *tok = o->discovery_token;
    kjoin_cluster_info second = {0};
    kjoin_cluster cluster = {0};
    kjoin_bundle *bundle = NULL;
    kjoin_http_request pinned = {.tls = KJOIN_TLS_PINNED, .conn = r->conn};
    kjoin_code rc = KJOIN_OK;
    if (!first->jws) {
        rc = unsigned_token(r, ep, first, err);
        goto out;
    }
    if (!*first->jws) {
        /* The signer leaves the key empty for a token it will not sign: final. */
        rc = kjoin_err_set(err, KJOIN_E_TRUST,
                           "token id \"%s\" is invalid for this cluster or has expired (its signature is "
                           "empty); create a new token on a control-plane node",
                           tok->id);
        goto out;
    }
    *st = KJOIN_STAGE_SIGNATURE;
    rc = kjoin_jws_verify(first->jws, first->kubeconfig, first->kubeconfig_len, tok->id, tok->secret,
                          KJOIN_TOKEN_SECRET_LEN, err);
    if (rc)
        goto out;
    *st = KJOIN_STAGE_OTHER;
    kjoin_discovery__log(r, 0, "[discovery] Cluster-info signature for token id \"%s\" is valid", tok->id);

    if ((rc = kjoin_kubeconfig_parse_cluster(first->kubeconfig, first->kubeconfig_len, &cluster, err)) ||
        (rc = kjoin_bundle_parse(cluster.ca_pem, cluster.ca_len, &bundle, err)) ||
        (rc = kjoin_bundle_apply_pins(bundle, o->unsafe_skip_ca_verification ? NULL : o->common.pins, err)))
        goto out;
    if (o->unsafe_skip_ca_verification)
        kjoin_discovery__log(r, KJOIN_LOG_WARNING,
                             "[discovery] WARNING: CA pinning skipped (`unsafe_skip_ca_verification`): "
                             "trusting all %zu certificate(s) the cluster-info names",
                             kjoin_bundle_count(bundle));
    else
        kjoin_discovery__report_trust(r, bundle);

    if (o->unsafe_skip_ca_verification)
        kjoin_discovery__log(r, 0, "[discovery] Re-fetching cluster-info from %s over TLS against the CA it names "
                                   "(NOT pinned: unsafe)", ep->authority);
    else
        kjoin_discovery__log(r, 0, "[discovery] Re-fetching cluster-info from %s over TLS verified against the "
                                   "pinned CA", ep->authority);
    /* The same connection, its chain now checked as a pinned handshake's. */
    /* The kubeconfig is compared as it arrives, not kept a second time. */
    bool same = false;
    if ((rc = kjoin_discovery__pin(r, bundle, err)) ||
        (rc = get_cluster_info(r, url, &pinned, NULL, first->kubeconfig, first->kubeconfig_len, &second, &same, err)))
        goto out;
    if (!same) {
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "the kubeconfig fetched again over TLS differs from the signed one");
        goto out;
    }
    kjoin_discovery__log(r, 0, o->unsafe_skip_ca_verification
                                   ? "[discovery] The re-fetch returned the signed kubeconfig byte for byte (the CA "
                                     "is NOT pinned: unsafe)"
                                   : "[discovery] Verified re-fetch returned the signed kubeconfig byte for byte");
    rc = kjoin_discovery__finish(r, cluster.server, ep->authority, &bundle, out, err);
    if (!rc)
        kjoin_discovery__log(r, 0, "[discovery] Using API server \"%s\" (from cluster-info, discovered via %s)",
                             cluster.server, ep->authority);
out:
    kjoin_cluster_info_release(&second);
    kjoin_cluster_release(&cluster);
    kjoin_bundle_free(bundle);
    kjoin_discovery__unpin(r);
    return rc;
}

static kjoin_code attempt(kjoin_run *r, size_t i, kjoin_stage *st, kjoin_join_result *out, kjoin_err *err)
{
    const kjoin_token_discovery *o = r->source;
    const kjoin_endpoint *ep = &o->endpoints[i];
    char url[512];
    snprintf(url, sizeof(url), "https://%s" KJOIN_CLUSTER_INFO_PATH, ep->authority);
    kjoin_cluster_info first = {0};
    kjoin_http_request insecure = {.tls = KJOIN_TLS_INSECURE, .conn = r->conn};
    kjoin_discovery__log(r, 0, "[discovery] Requesting cluster-info from %s (server not verified yet)", ep->authority);
    kjoin_code rc = get_cluster_info(r, url, &insecure, o->discovery_token->id, NULL, 0, &first, NULL, err);
    if (!rc)
        rc = check_and_build(r, ep, url, &first, st, out, err);
    kjoin_cluster_info_release(&first);
    return rc;
}

kjoin_code kjoin_discover_token(const kjoin_token_discovery *o, kjoin_join_result *out, kjoin_err *err)
{
    if (kjoin_pinset_count(o->common.pins) == 0 && !o->unsafe_skip_ca_verification)
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "token discovery without a CA pin is unsafe: set `pins`, "
                             "or `unsafe_skip_ca_verification` to accept that risk");
    return kjoin_discovery__over_endpoints(&o->common, o, o->endpoints, o->n_endpoints, attempt, out, err);
}
