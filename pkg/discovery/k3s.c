/* K3s discovery: the CA bundle from /cacerts, checked against the token's
 * CA hash (either K3s hash, deterministically) and any pins, then fetched
 * again over TLS verified against what was trusted; K3s skips the hash when
 * the host's trust store accepts the server, kjoin never skips a pin. */
#include <stdio.h>
#include <string.h>

#include <kjoin/private/util.h>
#include <kjoin/private/pin.h>

#include "internal.h"

static kjoin_code get_cacerts(kjoin_run *r, const char *url, const kjoin_http_request *trust,
                              kjoin_http_response *resp, kjoin_err *err)
{
    return kjoin_discovery__get_200(r, url, trust, KJOIN_RETRY_403 | KJOIN_RETRY_404, resp, err);
}

/* Decides trust from the token's CA hash, the pins, or (unsafe) nothing. */
static kjoin_code decide_trust(kjoin_run *r, kjoin_bundle *b, const kjoin_http_response *served, kjoin_err *err)
{
    const kjoin_k3s_discovery *o = r->source;
    kjoin_k3s_match match = KJOIN_K3S_NO_MATCH;
    size_t root = 0;
    char hex[65], bytes_hex[65];
    if (o->ca_hash) {
        match = kjoin_bundle_match_k3s_hash(b, served->body, served->len, o->ca_hash, &root);
        kjoin_hex(o->ca_hash, KJOIN_K3S_HASH_LEN, hex);
        if (match == KJOIN_K3S_NO_MATCH) {
            unsigned char whole[32] = {0};
            if (kjoin_sha256(served->body, served->len, whole, NULL))
                memset(whole, 0, sizeof(whole)); /* only shown in the message */
            char roots[400] = "";
            for (size_t i = 0, n = 0; i < kjoin_bundle_count(b) && n + 90 < sizeof(roots); i++)
                if (*kjoin_bundle_cert(b, i)->root_pin)
                    n += (size_t)snprintf(roots + n, sizeof(roots) - n, "%s%s", n ? ", " : "",
                                          kjoin_bundle_cert(b, i)->root_pin);
            return kjoin_err_set(err, KJOIN_E_TRUST,
                                 "the token's CA hash sha256:%s matches neither the served bundle's bytes (sha256:%s) nor the "
                                 "DER of a root of it (%s)",
                                 hex, kjoin_hex(whole, 32, bytes_hex), roots);
        }
        if (match == KJOIN_K3S_BUNDLE_BYTES)
            kjoin_discovery__log(r, 0, "[discovery] The token's CA hash matches the bytes of the served bundle "
                                       "(K3s' hash of a single certificate): it vouches for all %zu certificate(s)",
                                 kjoin_bundle_count(b));
        else
            kjoin_discovery__log(r, 0, "[discovery] The token's CA hash matches the DER of root \"%s\" (K3s' hash of a "
                                       "bundle)",
                                 kjoin_bundle_cert(b, root)->subject);
    }
    kjoin_code rc;
    if (kjoin_pinset_count(o->common.pins)) {
        rc = kjoin_bundle_apply_pins(b, o->common.pins, err);
    } else if (match == KJOIN_K3S_ROOT_DER) {
        kjoin_pinset *pin = kjoin_pinset_new();
        char spec[80];
        snprintf(spec, sizeof(spec), "root-sha256:%s", hex);
        rc = pin ? kjoin_pinset_add(pin, spec, err) : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        if (!rc)
            rc = kjoin_bundle_apply_pins(b, pin, err);
        kjoin_pinset_free(pin);
    } else {
        if (!o->ca_hash)
            kjoin_discovery__log(r, KJOIN_LOG_WARNING, "[discovery] WARNING: no CA hash and no pin (unsafe): trusting all %zu "
                                       "certificate(s) /cacerts returned",
                                 kjoin_bundle_count(b));
        rc = kjoin_bundle_apply_pins(b, NULL, err);
    }
    if (!rc && match != KJOIN_K3S_BUNDLE_BYTES && (o->ca_hash || kjoin_pinset_count(o->common.pins)))
        kjoin_discovery__report_trust(r, b);
    return rc;
}

static kjoin_code attempt(kjoin_run *r, size_t i, kjoin_stage *st, kjoin_join_result *out, kjoin_err *err)
{
    (void)st;
    const kjoin_k3s_discovery *o = r->source;
    const kjoin_endpoint *ep = &o->endpoints[i];
    char url[512], server[300];
    snprintf(url, sizeof(url), "https://%s" KJOIN_K3S_CACERTS_PATH, ep->authority);
    snprintf(server, sizeof(server), "https://%s", ep->authority);
    kjoin_http_response first = {0}, second = {0};
    kjoin_http_request insecure = {.tls = KJOIN_TLS_INSECURE, .conn = r->conn},
                       pinned = {.tls = KJOIN_TLS_PINNED, .conn = r->conn};
    kjoin_bundle *bundle = NULL;
    kjoin_err inner;

    kjoin_discovery__log(r, 0, "[discovery] Requesting %s (server not verified yet)", url);
    kjoin_code rc = get_cacerts(r, url, &insecure, &first, err);
    if (rc)
        goto out;
    if ((rc = kjoin_bundle_parse(first.body, first.len, &bundle, &inner))) {
        rc = kjoin_err_set(err, rc, "%s: %s", url, inner.msg);
        goto out;
    }
    if ((rc = decide_trust(r, bundle, &first, err)))
        goto out;
    bool unpinned = !o->ca_hash && kjoin_pinset_count(o->common.pins) == 0;
    kjoin_discovery__log(r, 0, unpinned ? "[discovery] Re-fetching %s over TLS against the CA it served (NOT pinned: "
                                          "unsafe)"
                                        : "[discovery] Re-fetching %s over TLS verified against the trusted CA",
                         url);
    if ((rc = kjoin_discovery__pin(r, bundle, err)) || (rc = get_cacerts(r, url, &pinned, &second, err)))
        goto out;
    if (second.len != first.len || memcmp(second.body, first.body, first.len) != 0) {
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "/cacerts fetched again over TLS differs from the first answer");
        goto out;
    }
    kjoin_discovery__log(r, 0, unpinned ? "[discovery] The re-fetch returned the same CA bundle byte for byte (the CA "
                                          "is NOT pinned: unsafe)"
                                        : "[discovery] Verified re-fetch returned the same CA bundle byte for byte");
    rc = kjoin_discovery__finish(r, server, ep->authority, &bundle, out, err);
    if (!rc)
        kjoin_discovery__log(r, 0, "[discovery] Using K3s server \"%s\"", server);
out:
    kjoin_http_response_release(&first);
    kjoin_http_response_release(&second);
    kjoin_discovery__unpin(r);
    kjoin_bundle_free(bundle);
    return rc;
}

kjoin_code kjoin_discover_k3s(const kjoin_k3s_discovery *o, kjoin_join_result *out, kjoin_err *err)
{
    if (!o->ca_hash && kjoin_pinset_count(o->common.pins) == 0 && !o->unsafe_skip_ca_verification)
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "the K3s token has no CA hash: set `pins`, use the full "
                             "K10<hash>::... token from the server's node-token file, or accept the risk with "
                             "`unsafe_skip_ca_verification`");
    return kjoin_discovery__over_endpoints(&o->common, o, o->endpoints, o->n_endpoints, attempt, out, err);
}
