#include <errno.h>
#include <arpa/inet.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <kjoin/private/transport.h>

#include "body.h"
#include <kjoin/private/util.h>
#include <kjoin/private/err.h>

#ifndef KJOIN_VERSION
#define KJOIN_VERSION "dev"
#endif

kjoin_code kjoin_http_global_init(kjoin_err *err)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return kjoin_err_set(err, KJOIN_E_OTHER, "cannot initialise libcurl");
    return KJOIN_OK;
}

void kjoin_http_global_cleanup(void) { curl_global_cleanup(); }

void kjoin_http_response_release(kjoin_http_response *resp)
{
    if (resp) {
        free(resp->body);
        free(resp->headers);
        memset(resp, 0, sizeof(*resp));
    }
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    kjoin_http_body *b = userdata;
    size_t n = size * nmemb;
    if (!b->routed) {
        long status = 0;
        curl_easy_getinfo(b->curl, CURLINFO_RESPONSE_CODE, &status);
        b->sunk = b->sink && status == 200;
        b->routed = true;
    }
    return kjoin_http__body_take(b, ptr, n);
}

struct kjoin_tls_trust {
    X509_STORE *anchors;
    STACK_OF(X509) *intermediates;
    size_t n_anchors;
};

kjoin_tls_trust *kjoin_tls_trust_new(void)
{
    kjoin_tls_trust *t = calloc(1, sizeof(*t));
    if (t && (t->anchors = X509_STORE_new()) && (t->intermediates = sk_X509_new_null()) &&
        /* Anchors need not be self-signed: a pinned intermediate ends the chain. */
        X509_STORE_set_flags(t->anchors, X509_V_FLAG_PARTIAL_CHAIN) == 1)
        return t;
    kjoin_tls_trust_free(t);
    return NULL;
}

void kjoin_tls_trust_free(kjoin_tls_trust *t)
{
    if (!t)
        return;
    X509_STORE_free(t->anchors);
    sk_X509_pop_free(t->intermediates, X509_free);
    free(t);
}

kjoin_code kjoin_tls_trust_add(kjoin_tls_trust *t, X509 *cert, bool anchor, kjoin_err *err)
{
    if (anchor) {
        if (X509_STORE_add_cert(t->anchors, cert) != 1)
            return kjoin_err_ossl(err, KJOIN_E_OTHER, "cannot add a trust anchor");
        t->n_anchors++;
        return KJOIN_OK;
    }
    if (X509_up_ref(cert) != 1 || !sk_X509_push(t->intermediates, cert)) {
        X509_free(cert);
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    return KJOIN_OK;
}

kjoin_code kjoin_tls_trust_add_pem(kjoin_tls_trust *t, const char *pem, size_t len, bool anchor, kjoin_err *err)
{
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    STACK_OF(X509_INFO) *infos = bio ? PEM_X509_INFO_read_bio(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    if (!infos)
        return kjoin_err_ossl(err, KJOIN_E_USAGE, "cannot read trust anchors");
    kjoin_code rc = KJOIN_OK;
    for (int i = 0; !rc && i < sk_X509_INFO_num(infos); i++) {
        X509_INFO *info = sk_X509_INFO_value(infos, i);
        if (info->x509)
            rc = kjoin_tls_trust_add(t, info->x509, anchor, err);
    }
    sk_X509_INFO_pop_free(infos, X509_INFO_free);
    return rc;
}

struct kjoin_http_conn {
    CURLM *multi; /* holds the kept connection */
    CURL *curl;
    char host[256];               /* every request on the conn goes to this host */
    char shown[512];              /* the last URL, redacted, for messages */
    kjoin_tls_mode mode;          /* of the request under way */
    const kjoin_tls_trust *trust; /* KJOIN_TLS_PINNED: checked in every handshake */
    const kjoin_tls_trust *pinned; /* a kept conn's pinning */
    /* The chain of the last handshake and the security level it ran at. */
    X509 *leaf;
    STACK_OF(X509) *chain;
    int auth_level;
    bool failed;
    char reason[512];
    atomic_bool cancelled;
};

kjoin_http_conn *kjoin_http_conn_new(void)
{
    kjoin_http_conn *c = calloc(1, sizeof(*c));
    if (!c || !(c->multi = curl_multi_init()) || !(c->curl = curl_easy_init())) {
        kjoin_http_conn_free(c);
        return NULL;
    }
    atomic_init(&c->cancelled, false);
    /* One connection: the one whose chain was kept is the one reused. */
    curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, 1L);
    return c;
}

static void forget_chain(kjoin_http_conn *c)
{
    X509_free(c->leaf);
    sk_X509_pop_free(c->chain, X509_free);
    c->leaf = NULL;
    c->chain = NULL;
}

void kjoin_http_conn_free(kjoin_http_conn *c)
{
    if (!c)
        return;
    curl_easy_cleanup(c->curl);
    curl_multi_cleanup(c->multi);
    forget_chain(c);
    free(c);
}

void kjoin_http_conn_cancel(kjoin_http_conn *c)
{
    atomic_store(&c->cancelled, true);
    curl_multi_wakeup(c->multi);
}

void kjoin_http_conn_unpin(kjoin_http_conn *c) { c->pinned = NULL; }

/* The checks of a pinned handshake: the server's chain plus the trust's
 * intermediates, verified against the trust's anchors alone as a TLS server
 * at the handshake's security level, and the host name or IP against the
 * leaf's SANs. On failure, c->reason says why. */
static bool check_chain(kjoin_http_conn *c, const kjoin_tls_trust *t, X509 *leaf, STACK_OF(X509) *peer, int level)
{
    STACK_OF(X509) *all = peer ? sk_X509_dup(peer) : sk_X509_new_null();
    X509_STORE_CTX *xs = X509_STORE_CTX_new();
    bool negative = false;
    bool ok = all && xs && leaf && X509_STORE_CTX_init(xs, t->anchors, leaf, all) == 1 &&
              X509_STORE_CTX_set_default(xs, "ssl_server") == 1;
    for (int i = 0; ok && i < sk_X509_num(t->intermediates); i++)
        ok = sk_X509_push(all, sk_X509_value(t->intermediates, i)) > 0;
    if (ok) {
        X509_VERIFY_PARAM *param = X509_STORE_CTX_get0_param(xs);
        X509_VERIFY_PARAM_set_auth_level(param, level);
        bool is_ip = kjoin_is_ip(c->host);
        /* The name is checked against the subject alternative names only, as
         * Go's crypto/x509 checks it (and so kubeadm, kubelet and K3s): never
         * OpenSSL's fallback to the subject's CN. */
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NEVER_CHECK_SUBJECT);
        ok = (is_ip ? X509_VERIFY_PARAM_set1_ip_asc(param, c->host) : X509_VERIFY_PARAM_set1_host(param, c->host, 0)) == 1;
        ok = ok && X509_verify_cert(xs) == 1;
        /* RFC 5280: serials are positive; Go's TLS (kubelet, K3s agents)
         * refuses a chain with a negative one, and so does kjoin. */
        STACK_OF(X509) *chain = ok ? X509_STORE_CTX_get0_chain(xs) : NULL;
        for (int i = 0; ok && i < sk_X509_num(chain); i++)
            if (ASN1_STRING_type(X509_get0_serialNumber(sk_X509_value(chain, i))) == V_ASN1_NEG_INTEGER) {
                X509_STORE_CTX_set_current_cert(xs, sk_X509_value(chain, i));
                negative = true;
                ok = false;
            }
        if (!ok && !c->failed) {
            c->failed = true;
            int why = X509_STORE_CTX_get_error(xs);
            X509 *bad = X509_STORE_CTX_get_current_cert(xs);
            char subject[160] = "";
            if (bad)
                X509_NAME_oneline(X509_get_subject_name(bad), subject, sizeof(subject));
            bool legacy_cn = (why == X509_V_ERR_HOSTNAME_MISMATCH || why == X509_V_ERR_IP_ADDRESS_MISMATCH) &&
                             X509_get_ext_by_NID(leaf, NID_subject_alt_name, -1) < 0;
            snprintf(c->reason, sizeof(c->reason), "%s%s%s%s",
                     negative ? "a negative serial number, which RFC 5280 forbids and Go's TLS refuses"
                              : X509_verify_cert_error_string(why),
                     *subject ? " at " : "", subject,
                     legacy_cn ? " (the certificate relies on the legacy Common Name field and has no subject "
                                 "alternative names: Go's TLS, and so kubeadm, kubelet and K3s, refuse it too)"
                               : "");
        }
    } else if (!c->failed) {
        c->failed = true;
        snprintf(c->reason, sizeof(c->reason), "out of memory");
    }
    X509_STORE_CTX_free(xs);
    sk_X509_free(all);
    ERR_clear_error();
    return ok;
}

/* OpenSSL's chain check for every handshake on the conn: the chain is kept,
 * then checked when the request is pinned. */
static int on_verify(X509_STORE_CTX *xs, void *arg)
{
    kjoin_http_conn *c = arg;
    forget_chain(c);
    X509 *leaf = X509_STORE_CTX_get0_cert(xs);
    STACK_OF(X509) *peer = X509_STORE_CTX_get0_untrusted(xs);
    c->auth_level = X509_VERIFY_PARAM_get_auth_level(X509_STORE_CTX_get0_param(xs));
    if (leaf && X509_up_ref(leaf) == 1)
        c->leaf = leaf;
    c->chain = peer ? X509_chain_up_ref(peer) : NULL;
    if (c->mode != KJOIN_TLS_PINNED)
        return 1;
    return check_chain(c, c->trust, c->leaf, c->chain, c->auth_level);
}

kjoin_code kjoin_http_conn_pin(kjoin_http_conn *c, const kjoin_tls_trust *t, kjoin_err *err)
{
    if (!c->leaf)
        return kjoin_err_set(err, KJOIN_E_OTHER, "no TLS connection to pin yet");
    if (t->n_anchors == 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "no trust anchor given for pinned TLS");
    c->failed = false;
    if (!check_chain(c, t, c->leaf, c->chain, c->auth_level))
        return kjoin_err_set(err, KJOIN_E_TRUST, "TLS verification of %s against the pinned CA failed: %s", c->shown,
                             c->reason);
    c->pinned = t;
    return KJOIN_OK;
}

static CURLcode on_ssl_ctx(CURL *curl, void *ssl_ctx, void *arg)
{
    (void)curl;
    kjoin_http_conn *c = arg;
    SSL_CTX_set_options(ssl_ctx, SSL_OP_NO_RENEGOTIATION);
    if (c->mode == KJOIN_TLS_SYSTEM)
        /* OpenSSL's default paths honour SSL_CERT_FILE and SSL_CERT_DIR. */
        return SSL_CTX_set_default_verify_paths(ssl_ctx) == 1 ? CURLE_OK : CURLE_SSL_CACERT_BADFILE;
    SSL_CTX_set_cert_verify_callback(ssl_ctx, on_verify, c);
    return CURLE_OK;
}

/* Why the network failed, in an operator's words: refused, unreachable,
 * a name that does not resolve, a timeout; the proxy named when one was in
 * the way. */
static void network_why(CURLcode cc, long os_errno, const char *url, const char *curl_why, char *out, size_t cap)
{
    const char *what = NULL;
    if (cc == CURLE_COULDNT_RESOLVE_HOST)
        what = "the host name does not resolve (DNS)";
    else if (cc == CURLE_COULDNT_RESOLVE_PROXY)
        what = "the proxy's host name does not resolve (DNS)";
    else if (cc == CURLE_OPERATION_TIMEDOUT || os_errno == ETIMEDOUT)
        what = "timed out (no answer: a firewall dropping packets, or the host down)";
    else if (os_errno == ECONNREFUSED)
        what = "connection refused (nothing listens there: is the server up, is the port right?)";
    else if (os_errno == EHOSTUNREACH || os_errno == ENETUNREACH)
        what = "unreachable (no route to the host)";
    char shown_proxy[300] = "", host[300], found[300];
    const char *proxy = kjoin_url_host(url, host, sizeof(host), NULL) && kjoin_proxy_for(host, found, sizeof(found)) ? found : NULL;
    if (proxy)
        kjoin_url_redact(proxy, shown_proxy, sizeof(shown_proxy));
    snprintf(out, cap, "%s%s%s%s%s%s", what ? what : curl_why, what ? " [" : "", what ? curl_why : "",
             what ? "]" : "", proxy ? "; through the proxy " : "", proxy ? shown_proxy : "");
    if (proxy)
        snprintf(out + strlen(out), cap - strlen(out), " (from https_proxy or HTTPS_PROXY; NO_PROXY lists the hosts "
                 "that skip it)");
}

static kjoin_code classify(CURLcode cc, const kjoin_http_body *b, const kjoin_http_conn *c, const char *errbuf,
                           long os_errno, const kjoin_http_request *req, bool sent, kjoin_err *err)
{
    char network[900];
    network_why(cc, os_errno, req->url, *errbuf ? errbuf : curl_easy_strerror(cc), network, sizeof(network));
    const char *why = network;
    char shown[1024];
    const char *m = req->method ? req->method : "GET";
    kjoin_url_redact(req->url, shown, sizeof(shown));
    if (cc == CURLE_SSL_CERTPROBLEM)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s %s: the client certificate or key cannot be used: %s", m,
                             shown, why);
    if (b->overflow || cc == CURLE_FILESIZE_EXCEEDED)
        return kjoin_err_set(err, KJOIN_E_TRUST, "response from %s exceeds %zu bytes; aborted",
                             shown, b->max);
    if (req->tls == KJOIN_TLS_PINNED && c->failed)
        return kjoin_err_set(err, KJOIN_E_TRUST,
                             "TLS verification of %s against the pinned CA failed: %s", shown,
                             c->reason);
    if (cc == CURLE_ABORTED_BY_CALLBACK)
        return kjoin_err_set(err, KJOIN_E_TRANSIENT, "%s %s: cancelled", m, shown);
    if (req->follow_redirects && cc == CURLE_UNSUPPORTED_PROTOCOL)
        return kjoin_err_set(err, KJOIN_E_TRUST, "%s %s: refused a redirect to a URL that is not https (%s)",
                             m, shown, why);
    if (cc == CURLE_PEER_FAILED_VERIFICATION)
        return kjoin_err_set(err, KJOIN_E_TRUST, "TLS verification of %s failed: %s", shown, why);
    switch (cc) {
    case CURLE_OUT_OF_MEMORY:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ENGINE_INITFAILED:
        return kjoin_err_set(err, KJOIN_E_OTHER, "%s %s: %s", m, shown, why);
    default:
        /* A proxy that refuses the tunnel answers the same again: final. */
        if (strstr(why, "CONNECT tunnel failed, response 403") || strstr(why, "CONNECT tunnel failed, response 407"))
            return kjoin_err_set(err, KJOIN_E_OTHER, "%s %s: the proxy refused to connect to it: %s", m, shown, why);
        /* A GET can always be repeated; another method only if it never left. */
        if (strcmp(m, "GET") != 0 && sent)
            return kjoin_err_set(err, KJOIN_E_OTHER,
                                 "%s %s: sent, but no answer came (%s); it may have been applied, so it is not "
                                 "repeated", m, shown, why);
        return kjoin_err_set(err, KJOIN_E_TRANSIENT, "%s %s: %s", m, shown, why);
    }
}

/* Wipes secrets (the Authorization header) from a header list before freeing it. */
static void headers_free(struct curl_slist *h)
{
    for (struct curl_slist *i = h; i; i = i->next)
        OPENSSL_cleanse(i->data, strlen(i->data));
    curl_slist_free_all(h);
}

/* Appends one header; false when out of memory (the list is kept). */
static bool add_header(struct curl_slist **list, const char *line)
{
    struct curl_slist *n = curl_slist_append(*list, line);
    if (!n)
        return false;
    *list = n;
    return true;
}

/* The last response's headers as "Name: value" lines, capped for logs. */
static char *collect_headers(CURL *curl)
{
    enum { CAP = 8192 };
    char *out = calloc(1, CAP);
    size_t n = 0;
    for (struct curl_header *h = NULL; out && (h = curl_easy_nextheader(curl, CURLH_HEADER, -1, h));) {
        int w = snprintf(out + n, CAP - n, "%s: %s\n", h->name, h->value);
        if (w < 0 || (size_t)w >= CAP - n)
            break;
        n += (size_t)w;
    }
    return out;
}

static int64_t retry_after(CURL *curl)
{
    struct curl_header *h = NULL;
    if (curl_easy_header(curl, "Retry-After", 0, CURLH_HEADER, -1, &h) != CURLHE_OK || !h || !h->value)
        return -1;
    char *end = NULL;
    long s = strtol(h->value, &end, 10);
    return end != h->value && *end == '\0' && s >= 0 && s <= 3600 ? (int64_t)s * 1000 : -1;
}

/* The server's Date (RFC 9110's HTTP-date, read by libcurl), or 0. */
static int64_t server_date(CURL *curl)
{
    struct curl_header *h = NULL;
    if (curl_easy_header(curl, "Date", 0, CURLH_HEADER, -1, &h) != CURLHE_OK || !h || !h->value)
        return 0;
    time_t t = curl_getdate(h->value, NULL);
    return t > 0 ? (int64_t)t : 0;
}

/* The request's method, body and credentials on the handle. */
static kjoin_code set_request(CURL *curl, const kjoin_http_request *req, struct curl_slist **headers,
                              kjoin_err *err)
{
    const char *m = req->method ? req->method : "GET";
    if (strcmp(m, "GET") && strcmp(m, "POST") && strcmp(m, "PUT") && strcmp(m, "PATCH") && strcmp(m, "DELETE"))
        return kjoin_err_set(err, KJOIN_E_OTHER, "unsupported HTTP method %s", m);
    if (strcmp(m, "GET") != 0)
        curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, m);
    bool credentials = req->bearer_token || req->client_cert_pem || req->client_key_pem;
    if (credentials && (req->tls == KJOIN_TLS_INSECURE || req->tls == KJOIN_TLS_PLAIN_LOCAL || req->follow_redirects))
        return kjoin_err_set(err, KJOIN_E_USAGE, "credentials are only sent to a verified server, without redirects");
    if (req->body) {
        /* A PATCH is a JSON merge patch (RFC 7386), which every API server takes. */
        if (!add_header(headers, strcmp(m, "PATCH") ? "Content-Type: application/json"
                                                    : "Content-Type: application/merge-patch+json"))
            return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, req->body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
    }
    if (req->bearer_token) {
        size_t n = strlen(req->bearer_token) + sizeof("Authorization: Bearer ");
        char *line = malloc(n);
        if (!line)
            return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        snprintf(line, n, "Authorization: Bearer %s", req->bearer_token);
        bool ok = add_header(headers, line);
        kjoin_free_wiped(line, n);
        if (!ok)
            return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    if (req->client_cert_pem && req->client_key_pem) {
        /* NOCOPY: the key stays in the caller's (wiped) buffer only. */
        struct curl_blob cert = {(void *)req->client_cert_pem, req->client_cert_len, CURL_BLOB_NOCOPY};
        struct curl_blob key = {(void *)req->client_key_pem, req->client_key_len, CURL_BLOB_NOCOPY};
        if (curl_easy_setopt(curl, CURLOPT_SSLCERT_BLOB, &cert) != CURLE_OK ||
            curl_easy_setopt(curl, CURLOPT_SSLKEY_BLOB, &key) != CURLE_OK)
            return kjoin_err_set(err, KJOIN_E_OTHER, "libcurl cannot take a client certificate from memory");
        curl_easy_setopt(curl, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(curl, CURLOPT_SSLKEYTYPE, "PEM");
    }
    return KJOIN_OK;
}

kjoin_code kjoin_http_get(const kjoin_http_request *req, kjoin_http_response *out, kjoin_err *err)
{
    if (req->method && strcmp(req->method, "GET") != 0)
        return kjoin_err_set(err, KJOIN_E_OTHER, "kjoin_http_get called with method %s", req->method);
    return kjoin_http_send(req, out, err);
}

/* Runs the request on c's handle in c's own multi handle, so the kept
 * connection is reused and a cancel wakes the wait at once. */
static CURLcode run(kjoin_http_conn *c)
{
    CURLcode cc = CURLE_OK;
    if (curl_multi_add_handle(c->multi, c->curl) != CURLM_OK)
        return CURLE_OUT_OF_MEMORY;
    for (int running = 1; running;) {
        if (atomic_load(&c->cancelled)) {
            cc = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        if (curl_multi_perform(c->multi, &running) != CURLM_OK) {
            cc = CURLE_OUT_OF_MEMORY;
            break;
        }
        if (running && curl_multi_poll(c->multi, NULL, 0, 1000, NULL) != CURLM_OK) {
            cc = CURLE_OUT_OF_MEMORY;
            break;
        }
    }
    int queued = 0;
    for (CURLMsg *msg; (msg = curl_multi_info_read(c->multi, &queued));)
        if (msg->msg == CURLMSG_DONE && cc == CURLE_OK)
            cc = msg->data.result;
    curl_multi_remove_handle(c->multi, c->curl);
    return cc;
}

/* The trust the request runs with on c: a kept conn's pinning, the
 * request's own, or PEM anchors parsed into *owned. */
static kjoin_code request_trust(kjoin_http_conn *c, bool kept, const kjoin_http_request *req,
                                kjoin_tls_trust **owned, const kjoin_tls_trust **out, kjoin_err *err)
{
    *out = NULL;
    if (kept) {
        if (req->tls == KJOIN_TLS_SYSTEM || req->trust || req->anchors_pem ||
            (req->tls == KJOIN_TLS_PINNED) != (c->pinned != NULL))
            return kjoin_err_set(err, KJOIN_E_OTHER, "a kept connection is insecure until pinned, then pinned");
        *out = c->pinned;
        return KJOIN_OK;
    }
    if (req->tls != KJOIN_TLS_PINNED)
        return KJOIN_OK;
    if (req->trust) {
        *out = req->trust;
    } else {
        if (!(*owned = kjoin_tls_trust_new()))
            return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        kjoin_code rc = kjoin_tls_trust_add_pem(*owned, req->anchors_pem, req->anchors_len, true, err);
        if (!rc && req->intermediates_pem)
            rc = kjoin_tls_trust_add_pem(*owned, req->intermediates_pem, req->intermediates_len, false, err);
        if (rc)
            return rc;
        *out = *owned;
    }
    if ((*out)->n_anchors == 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "no trust anchor given for pinned TLS");
    return KJOIN_OK;
}

/* One request on c; kept says c is a kept conn (else it is this request's own). */
static kjoin_code perform(kjoin_http_conn *c, bool kept, const kjoin_http_request *req, kjoin_http_response *out,
                          kjoin_err *err)
{
    kjoin_http_body b = {.max = req->max_body ? req->max_body : KJOIN_HTTP_MAX_BODY,
                         .sink = req->sink,
                         .sink_ctx = req->sink_ctx,
                         .curl = c->curl};
    char errbuf[CURL_ERROR_SIZE] = "";
    struct curl_slist *headers = NULL;
    kjoin_tls_trust *owned = NULL;
    CURL *curl = c->curl;
    char host[256];
    kjoin_url_redact(req->url, c->shown, sizeof(c->shown));
    kjoin_code rc = KJOIN_OK;
    bool userinfo = false;
    if (!kjoin_url_host(req->url, host, sizeof(host), &userinfo)) {
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "no host name to verify the server against in %s", c->shown);
        goto out;
    }
    /* A server URL the cluster gave (an etcd Pod's annotation, a kubeconfig's
     * server) never carries userinfo: its host is the part after the '@',
     * whatever is written before it. Only a URL the operator gave may. */
    if (userinfo && !req->userinfo_allowed) {
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "the URL %s is refused: it carries a user name or password (userinfo), "
                           "which kjoin sends only to a URL the operator gave", c->shown);
        goto out;
    }
    /* Plain HTTP only to this machine itself, as asked, and nothing more. */
    bool plain = req->tls == KJOIN_TLS_PLAIN_LOCAL;
    if (plain && (kept || req->follow_redirects || strncasecmp(req->url, "http://", 7) != 0 ||
                  !kjoin_url_is_local(req->url))) {
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "plain HTTP is only for an http:// URL of this machine, without "
                           "redirects or a kept connection: not %s", c->shown);
        goto out;
    }
    if ((rc = request_trust(c, kept, req, &owned, &c->trust, err)))
        goto out;
    /* An empty name would switch OpenSSL's host check off: refuse it. */
    if (req->tls == KJOIN_TLS_PINNED && (!*host || strlen(host) >= sizeof(c->host))) {
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "no host name to verify the server against");
        goto out;
    }
    if (kept && *c->host && strcmp(c->host, host) != 0) {
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "a kept connection serves one host (%s), not %s", c->host, host);
        goto out;
    }
    snprintf(c->host, sizeof(c->host), "%s", host);
    c->mode = req->tls;
    c->failed = false;
    curl_easy_reset(curl);
    char audit[128];
    snprintf(audit, sizeof(audit), "Audit-ID: %.64s", req->audit_id ? req->audit_id : "");
    if (!add_header(&headers, "Accept: application/json") || (req->audit_id && !add_header(&headers, audit))) {
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        goto out;
    }
    if ((rc = set_request(curl, req, &headers, err)))
        goto out;
    long connect_ms = req->timeout_ms < 10000 ? (long)req->timeout_ms : 10000;
    curl_easy_setopt(curl, CURLOPT_URL, req->url);
    if (req->http1)
        curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    if (kjoin_url_is_local(req->url)) /* this machine's own endpoints: never through the *_proxy variables' proxy */
        curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, plain ? "http" : "https");
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)req->timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "kjoin/" KJOIN_VERSION);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)b.max);
    /* A resumed session would skip the handshake whose chain is checked. */
    curl_easy_setopt(curl, CURLOPT_SSL_SESSIONID_CACHE, 0L);
    if (req->follow_redirects) {
        curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 5L);
        curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "https");
    }
    /* Only the trust the mode names: never libcurl's compiled-in CA bundle. */
    curl_easy_setopt(curl, CURLOPT_CAINFO, NULL);
    curl_easy_setopt(curl, CURLOPT_CAPATH, NULL);
    /* A kept conn's options never change (or libcurl would not reuse its
     * connection): the peer is always handed to on_verify, which checks it
     * once pinned, host included. Otherwise libcurl checks the host too. */
    bool insecure = req->tls == KJOIN_TLS_INSECURE || plain;
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, kept || !insecure ? 1L : 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, kept || insecure ? 0L : 2L);
    curl_easy_setopt(curl, CURLOPT_SSL_CTX_DATA, c);
    /* Only libcurl's OpenSSL backend runs this hook; without it, refuse. */
    if (curl_easy_setopt(curl, CURLOPT_SSL_CTX_FUNCTION, on_ssl_ctx) != CURLE_OK && (kept || !insecure)) {
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "libcurl is not built with OpenSSL; cannot verify %s", c->shown);
        goto out;
    }

    CURLcode cc = run(c);
    if (cc != CURLE_OK) {
        long sent = 0, os_errno = 0; /* bytes of the request that left, headers included */
        curl_easy_getinfo(curl, CURLINFO_REQUEST_SIZE, &sent);
        curl_easy_getinfo(curl, CURLINFO_OS_ERRNO, &os_errno);
        rc = classify(cc, &b, c, errbuf, os_errno, req, sent > 0, err);
        goto out;
    }
    long status = 0, connects = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &connects);
    if (!b.buf && !(b.buf = calloc(1, 1))) {
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        goto out;
    }
    out->status = status;
    out->body = KJOIN_TAKE(b.buf);
    out->len = b.len;
    out->retry_after_ms = retry_after(curl);
    out->date_s = server_date(curl);
    out->headers = req->want_headers ? collect_headers(curl) : NULL;
    out->reused = connects == 0;
out:
    ERR_clear_error();
    free(b.buf);
    /* The handle must not point at this call's stack or the headers freed here. */
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, NULL);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, NULL);
    headers_free(headers);
    c->trust = NULL;
    kjoin_tls_trust_free(owned);
    return rc;
}

kjoin_code kjoin_http_send(const kjoin_http_request *req, kjoin_http_response *out, kjoin_err *err)
{
    if (req->conn)
        return perform(req->conn, true, req, out, err);
    kjoin_http_conn *c = kjoin_http_conn_new();
    if (!c)
        return kjoin_err_set(err, KJOIN_E_OTHER, "cannot create a libcurl handle");
    kjoin_code rc = perform(c, false, req, out, err);
    kjoin_http_conn_free(c);
    return rc;
}
