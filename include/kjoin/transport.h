/* HTTPS requests with a body cap, a deadline and one of three trust modes,
 * optionally authenticated with a client certificate or a bearer token. */
#ifndef KJOIN_TRANSPORT_H
#define KJOIN_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kjoin/err.h>

#define KJOIN_HTTP_MAX_BODY (1024 * 1024)

struct x509_st; /* OpenSSL's X509 */

/* Pinned trust, built once from certificates already parsed: the anchors a
 * chain must end at (they need not be self-signed) and further untrusted
 * chain certificates. */
typedef struct kjoin_tls_trust kjoin_tls_trust;

/* One server's connection, kept alive across requests (one TLS handshake
 * for many requests). Every handshake on it keeps the server's chain.
 * Requests on it are KJOIN_TLS_INSECURE until kjoin_http_conn_pin checks the
 * kept chain of the live connection against a trust, exactly as a pinned
 * handshake would be checked; from then on they are KJOIN_TLS_PINNED, and any
 * new handshake on it must pass the same checks. Renegotiation is refused and
 * TLS sessions are never resumed. Not shared between threads, but
 * kjoin_http_conn_cancel may be called from any thread. */
typedef struct kjoin_http_conn kjoin_http_conn;

typedef enum kjoin_tls_mode {
    KJOIN_TLS_INSECURE, /* no server verification at all (first discovery fetch) */
    KJOIN_TLS_PINNED,   /* chain must end at an anchor of trust or anchors_pem; host checked against SANs */
    KJOIN_TLS_SYSTEM,   /* OpenSSL's default trust store (honours SSL_CERT_FILE, SSL_CERT_DIR) */
    KJOIN_TLS_PLAIN_LOCAL /* no TLS: an http:// URL of this machine's own address (the kubelet's healthz); never
                           * credentials, redirects or a kept connection */
} kjoin_tls_mode;

typedef struct kjoin_http_request {
    const char *method;     /* NULL: GET; else GET, POST, PUT, PATCH or DELETE */
    const char *url;        /* https:// only (http:// with KJOIN_TLS_PLAIN_LOCAL) */
    kjoin_tls_mode tls;
    const kjoin_tls_trust *trust; /* KJOIN_TLS_PINNED: the only trust; else anchors_pem: */
    const char *anchors_pem; /* KJOIN_TLS_PINNED: the only trust anchors (need not be self-signed) */
    size_t anchors_len;
    const char *intermediates_pem; /* KJOIN_TLS_PINNED: extra untrusted chain certificates; may be NULL */
    size_t intermediates_len;
    int64_t timeout_ms;     /* whole request, connect included; > 0 */
    size_t max_body;        /* 0 means KJOIN_HTTP_MAX_BODY */
    const char *audit_id;   /* sent as Audit-ID when not NULL */
    bool follow_redirects;  /* up to 5, and only to https:// URLs */
    bool userinfo_allowed;  /* url may carry "user:password@" (one the operator gave); else refused */
    const char *body;       /* JSON request body, sent when not NULL */
    size_t body_len;
    /* Credentials: only with a verified mode (PINNED or SYSTEM) and without
     * follow_redirects, so they never reach an unverified or other server. */
    const char *bearer_token; /* secret: sent as "Authorization: Bearer", never logged */
    const char *client_cert_pem; /* client certificate (and chain), PEM; with client_key_pem */
    size_t client_cert_len;
    const char *client_key_pem;  /* secret */
    size_t client_key_len;
    bool want_headers;           /* collect the response headers (for logs at -v 6) */
    /* When set, the body of a 200 answer is handed to sink in pieces as it
     * arrives (still under max_body) instead of being collected: the
     * response's body is then empty and its len counts what sink was given.
     * Other statuses are collected as usual. */
    void (*sink)(const char *data, size_t len, void *ctx);
    void *sink_ctx;
    /* The request runs on this kept connection (see kjoin_http_conn): tls
     * must be KJOIN_TLS_INSECURE before kjoin_http_conn_pin and
     * KJOIN_TLS_PINNED after it (trust and anchors_pem unset: the conn's). */
    kjoin_http_conn *conn;
    bool http1;             /* HTTP/1.1 only (a server whose HTTP/2 answers nothing: etcd's peer port) */
} kjoin_http_request;

typedef struct kjoin_http_response {
    long status;
    char *body; /* newly-allocated, NUL-terminated */
    size_t len;
    int64_t retry_after_ms; /* from a Retry-After header in seconds; -1 when absent */
    int64_t date_s;         /* the server's clock (its Date header), Unix seconds; 0 when absent or unreadable */
    char *headers;          /* with want_headers: "Name: value" lines, at most 8 KiB; else NULL */
    bool reused;            /* sent on a connection already open (no new handshake) */
} kjoin_http_response;

/* Must be called once before any request, before threads start.
 * Errors: KJOIN_E_OTHER. */
kjoin_code kjoin_http_global_init(kjoin_err *err);
void kjoin_http_global_cleanup(void);

#endif
