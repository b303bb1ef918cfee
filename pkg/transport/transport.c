#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <kjoin/transport.h>

#include "body.h"
#include <kjoin/util.h>

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
    return kjoin_http__body_append(userdata, ptr, size * nmemb);
}

/* State of pinned verification, read by OpenSSL's callbacks. */
typedef struct pinned {
    X509_STORE *anchors;
    STACK_OF(X509) *intermediates;
    char host[256];
    bool failed;
    char reason[256];
} pinned;

static kjoin_code load_pem_certs(const char *pem, size_t len, STACK_OF(X509) *into, kjoin_err *err)
{
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    STACK_OF(X509_INFO) *infos = bio ? PEM_X509_INFO_read_bio(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    if (!infos)
        return kjoin_err_ossl(err, KJOIN_E_USAGE, "cannot read trust anchors");
    for (int i = 0; i < sk_X509_INFO_num(infos); i++) {
        X509_INFO *info = sk_X509_INFO_value(infos, i);
        if (info->x509 && sk_X509_push(into, info->x509))
            info->x509 = NULL; /* moved */
    }
    sk_X509_INFO_pop_free(infos, X509_INFO_free);
    return KJOIN_OK;
}

static kjoin_code pinned_init(pinned *p, const kjoin_http_request *req, const char *host,
                              kjoin_err *err)
{
    memset(p, 0, sizeof(*p));
    /* An empty name would switch OpenSSL's host check off: refuse it. */
    if (!*host || strlen(host) >= sizeof(p->host))
        return kjoin_err_set(err, KJOIN_E_USAGE, "no host name to verify the server against");
    memcpy(p->host, host, strlen(host) + 1);
    STACK_OF(X509) *anchors = sk_X509_new_null();
    p->intermediates = sk_X509_new_null();
    p->anchors = X509_STORE_new();
    if (!anchors || !p->intermediates || !p->anchors) {
        sk_X509_free(anchors);
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    kjoin_code rc = load_pem_certs(req->anchors_pem, req->anchors_len, anchors, err);
    if (!rc && req->intermediates_pem)
        rc = load_pem_certs(req->intermediates_pem, req->intermediates_len, p->intermediates, err);
    for (int i = 0; !rc && i < sk_X509_num(anchors); i++)
        if (X509_STORE_add_cert(p->anchors, sk_X509_value(anchors, i)) != 1)
            rc = kjoin_err_ossl(err, KJOIN_E_OTHER, "cannot add a trust anchor");
    if (!rc && sk_X509_num(anchors) == 0)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "no trust anchor given for pinned TLS");
    sk_X509_pop_free(anchors, X509_free);
    /* Anchors need not be self-signed: a pinned intermediate ends the chain. */
    if (!rc && X509_STORE_set_flags(p->anchors, X509_V_FLAG_PARTIAL_CHAIN) != 1)
        rc = kjoin_err_ossl(err, KJOIN_E_OTHER, "cannot configure the trust store");
    return rc;
}

static void pinned_release(pinned *p)
{
    X509_STORE_free(p->anchors);
    sk_X509_pop_free(p->intermediates, X509_free);
}

/* Replaces OpenSSL's chain check for the handshake: the peer's chain plus our
 * intermediates, verified against the anchors alone, and the host name or IP
 * against the leaf's SANs. */
static int verify_chain(X509_STORE_CTX *xs, void *arg)
{
    pinned *p = arg;
    STACK_OF(X509) *peer = X509_STORE_CTX_get0_untrusted(xs);
    STACK_OF(X509) *all = peer ? sk_X509_dup(peer) : sk_X509_new_null();
    if (!all)
        return 0;
    for (int i = 0; i < sk_X509_num(p->intermediates); i++)
        if (!sk_X509_push(all, sk_X509_value(p->intermediates, i))) {
            sk_X509_free(all);
            return 0;
        }
    X509_STORE_CTX_set0_untrusted(xs, all);

    X509_VERIFY_PARAM *param = X509_STORE_CTX_get0_param(xs);
    unsigned char ip[16];
    bool is_ip = inet_pton(AF_INET, p->host, ip) == 1 || inet_pton(AF_INET6, p->host, ip) == 1;
    int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(param, p->host)
                   : X509_VERIFY_PARAM_set1_host(param, p->host, 0);
    ok = ok == 1 && X509_verify_cert(xs) == 1;
    if (!ok && !p->failed) {
        p->failed = true;
        int e = X509_STORE_CTX_get_error(xs);
        X509 *bad = X509_STORE_CTX_get_current_cert(xs);
        char subject[160] = "";
        if (bad)
            X509_NAME_oneline(X509_get_subject_name(bad), subject, sizeof(subject));
        snprintf(p->reason, sizeof(p->reason), "%s%s%s", X509_verify_cert_error_string(e),
                 *subject ? " at " : "", subject);
    }
    X509_STORE_CTX_set0_untrusted(xs, peer);
    sk_X509_free(all);
    return ok;
}

static CURLcode on_ssl_ctx(CURL *curl, void *ssl_ctx, void *arg)
{
    (void)curl;
    pinned *p = arg;
    if (X509_STORE_up_ref(p->anchors) != 1)
        return CURLE_OUT_OF_MEMORY;
    SSL_CTX_set_cert_store(ssl_ctx, p->anchors); /* replaces whatever libcurl loaded */
    SSL_CTX_set_cert_verify_callback(ssl_ctx, verify_chain, p);
    return CURLE_OK;
}

static CURLcode use_system_roots(CURL *curl, void *ssl_ctx, void *arg)
{
    (void)curl;
    (void)arg;
    /* OpenSSL's default paths honour SSL_CERT_FILE and SSL_CERT_DIR. */
    return SSL_CTX_set_default_verify_paths(ssl_ctx) == 1 ? CURLE_OK : CURLE_SSL_CACERT_BADFILE;
}

/* Host part of an https URL, without brackets, for the SAN check. */
static void url_host(const char *url, char *out, size_t cap)
{
    out[0] = '\0';
    CURLU *u = curl_url();
    char *host = NULL;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
        size_t n = strlen(host);
        if (n >= 2 && host[0] == '[' && host[n - 1] == ']')
            snprintf(out, cap, "%.*s", (int)(n - 2), host + 1);
        else
            snprintf(out, cap, "%s", host);
    }
    curl_free(host);
    curl_url_cleanup(u);
}

static kjoin_code classify(CURLcode cc, const kjoin_http_body *b, const pinned *p, const char *errbuf,
                           const kjoin_http_request *req, bool sent, kjoin_err *err)
{
    const char *why = *errbuf ? errbuf : curl_easy_strerror(cc);
    char shown[1024];
    const char *m = req->method ? req->method : "GET";
    kjoin_url_redact(req->url, shown, sizeof(shown));
    if (cc == CURLE_SSL_CERTPROBLEM)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s %s: the client certificate or key cannot be used: %s", m,
                             shown, why);
    if (b->overflow || cc == CURLE_FILESIZE_EXCEEDED)
        return kjoin_err_set(err, KJOIN_E_TRUST, "response from %s exceeds %zu bytes; aborted",
                             shown, b->max);
    if (req->tls == KJOIN_TLS_PINNED && p->failed)
        return kjoin_err_set(err, KJOIN_E_TRUST,
                             "TLS verification of %s against the pinned CA failed: %s", shown,
                             p->reason);
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
    if (credentials && (req->tls == KJOIN_TLS_INSECURE || req->follow_redirects))
        return kjoin_err_set(err, KJOIN_E_USAGE, "credentials are only sent to a verified server, without redirects");
    if (req->body) {
        if (!add_header(headers, "Content-Type: application/json"))
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
        OPENSSL_cleanse(line, n);
        free(line);
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

kjoin_code kjoin_http_send(const kjoin_http_request *req, kjoin_http_response *out, kjoin_err *err)
{
    kjoin_http_body b = {.max = req->max_body ? req->max_body : KJOIN_HTTP_MAX_BODY};
    pinned p = {0};
    bool have_pinned = false;
    char errbuf[CURL_ERROR_SIZE] = "";
    struct curl_slist *headers = NULL;
    kjoin_code rc = KJOIN_OK;

    CURL *curl = curl_easy_init();
    if (!curl)
        return kjoin_err_set(err, KJOIN_E_OTHER, "cannot create a libcurl handle");
    if (req->tls == KJOIN_TLS_PINNED) {
        char host[256];
        url_host(req->url, host, sizeof(host));
        rc = pinned_init(&p, req, host, err);
        have_pinned = true;
        if (rc)
            goto out;
    }
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
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https");
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)req->timeout_ms);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "kjoin/" KJOIN_VERSION);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)b.max);
    curl_easy_setopt(curl, CURLOPT_SSL_SESSIONID_CACHE, 0L);
    if (req->follow_redirects) {
        curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 5L);
        curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "https");
    }
    /* Only the trust the mode names: never libcurl's compiled-in CA bundle. */
    curl_easy_setopt(curl, CURLOPT_CAINFO, NULL);
    curl_easy_setopt(curl, CURLOPT_CAPATH, NULL);
    switch (req->tls) {
    case KJOIN_TLS_INSECURE:
        curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
        break;
    case KJOIN_TLS_PINNED:
    case KJOIN_TLS_SYSTEM:
        curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
        curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
        curl_easy_setopt(curl, CURLOPT_SSL_CTX_DATA, &p);
        /* Only libcurl's OpenSSL backend runs this hook; without it, refuse. */
        if (curl_easy_setopt(curl, CURLOPT_SSL_CTX_FUNCTION,
                             req->tls == KJOIN_TLS_PINNED ? on_ssl_ctx : use_system_roots) != CURLE_OK) {
            char shown[1024];
            rc = kjoin_err_set(err, KJOIN_E_OTHER, "libcurl is not built with OpenSSL; cannot verify %s",
                               kjoin_url_redact(req->url, shown, sizeof(shown)));
            goto out;
        }
        break;
    }

    CURLcode cc = curl_easy_perform(curl);
    if (cc != CURLE_OK) {
        long sent = 0; /* bytes of the request that left, headers included */
        curl_easy_getinfo(curl, CURLINFO_REQUEST_SIZE, &sent);
        rc = classify(cc, &b, &p, errbuf, req, sent > 0, err);
        goto out;
    }
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    if (!b.buf && !(b.buf = calloc(1, 1))) {
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        goto out;
    }
    out->status = status;
    out->body = KJOIN_TAKE(b.buf);
    out->len = b.len;
    out->retry_after_ms = retry_after(curl);
    out->headers = req->want_headers ? collect_headers(curl) : NULL;
out:
    ERR_clear_error();
    free(b.buf);
    if (have_pinned)
        pinned_release(&p);
    headers_free(headers);
    curl_easy_cleanup(curl);
    return rc;
}
