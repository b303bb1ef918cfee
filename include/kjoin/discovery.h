/* Discovery: API server endpoints, the cluster-info ConfigMap, and the one
 * engine that turns a source into a verified TLS-bootstrap kubeconfig. */
#ifndef KJOIN_DISCOVERY_H
#define KJOIN_DISCOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kjoin/err.h>
#include <kjoin/pin.h>
#include <kjoin/token.h>
#include <kjoin/util.h>

/* ---- endpoints ---------------------------------------------------------- */

typedef struct kjoin_endpoint {
    char host[254];     /* name or address, IPv6 without brackets */
    unsigned port;
    char authority[264]; /* host:port, IPv6 in brackets */
} kjoin_endpoint;

/* ---- the cluster-info ConfigMap ----------------------------------------- */

#define KJOIN_CLUSTER_INFO_PATH "/api/v1/namespaces/kube-public/configmaps/cluster-info"

typedef struct kjoin_cluster_info {
    char *kubeconfig;    /* data.kubeconfig, exact bytes */
    size_t kubeconfig_len;
    char *jws;           /* data["jws-kubeconfig-<id>"], NULL when the key is absent */
} kjoin_cluster_info;

/* Builds the cluster-info ConfigMap as the API server returns it, with
 * kubeconfig verbatim and one jws-kubeconfig-<id> per token, signed as the
 * control plane's bootstrap signer does. *out is newly-allocated JSON.
 * Errors: KJOIN_E_USAGE (duplicate token ids), KJOIN_E_OTHER. */
kjoin_code kjoin_cluster_info_sign(const char *kubeconfig, size_t len, const kjoin_token *tokens,
                                   size_t n_tokens, char **out, kjoin_err *err);

/* ---- the engine --------------------------------------------------------- */

#define KJOIN_MAX_ENDPOINTS 16

/* What every source needs. */
typedef struct kjoin_discovery_common {
    const kjoin_token *tls_bootstrap_token; /* written into the kubeconfig; or NULL and: */
    const char *username, *password;        /* basic auth written instead (K3s agents) */
    const kjoin_pinset *pins;               /* may be NULL or empty (see each source) */
    int64_t timeout_ms;                     /* one deadline for the whole join */
    const char *cluster_name;               /* NULL: "kubernetes" */
    const char *audit_id;                   /* sent as Audit-ID with every request; may be NULL */
    kjoin_log_fn log; /* may be NULL; with several endpoints, called from one thread per endpoint */
    void *log_ctx;
} kjoin_discovery_common;

typedef struct kjoin_join_result {
    char *kubeconfig; /* the TLS-bootstrap kubeconfig: holds the token, wipe before freeing */
    size_t kubeconfig_len;
    char *server;     /* the API server written into the kubeconfig */
    char *endpoint;   /* where discovery succeeded: an endpoint, a file or a URL */
    kjoin_bundle *bundle; /* the CA with trust decided for every certificate; NULL when none */
    unsigned attempts;
    int64_t elapsed_ms;
} kjoin_join_result;

/* Token discovery (kubeadm's protocol, kjoin's stricter checks; see
 * docs/trust-model.md): unverified GET of cluster-info from each endpoint in
 * turn, JWS, pins on the whole bundle, verified re-fetch, byte equality. */
typedef struct kjoin_token_discovery {
    kjoin_discovery_common common; /* pins empty only with unsafe_skip_ca_verification */
    const kjoin_endpoint *endpoints; /* 1 to KJOIN_MAX_ENDPOINTS */
    size_t n_endpoints;
    const kjoin_token *discovery_token;
    bool unsafe_skip_ca_verification;
    bool wait_for_token;          /* while cluster-info has no signature for the token, keep waiting even when the
                                   * API server rejects the token (one a provisioning flow creates later); else
                                   * such a token ends the discovery (KJOIN_E_TOKEN_REJECTED) */
} kjoin_token_discovery;

/* File discovery: a kubeconfig from a path, standard input ("-") or an
 * https:// URL (verified against the system trust store; redirects only to
 * https), then a refresh from the cluster's cluster-info over TLS verified
 * with the document's CA. Pins, when given, must hold for the CA. */
typedef struct kjoin_file_discovery {
    kjoin_discovery_common common;
    const char *source; /* path, "file://" path, "-" or https:// URL */
} kjoin_file_discovery;

/* Checks a --discovery-file value: https:// URLs, paths and "-" pass;
 * http:// and other schemes do not. Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_discovery_source_check(const char *source, kjoin_err *err);

/* K3s discovery: unverified GET of /cacerts, the token's CA hash (or pins)
 * checked against the bundle, verified re-fetch of /cacerts with identical
 * bytes, then a kubeconfig for https://ENDPOINT. */
typedef struct kjoin_k3s_discovery {
    kjoin_discovery_common common; /* pins: --discovery-token-ca-cert-hash */
    const kjoin_endpoint *endpoints; /* 1 to KJOIN_MAX_ENDPOINTS */
    size_t n_endpoints;
    const unsigned char *ca_hash;    /* the token's K10 hash (32 bytes), or NULL */
    bool unsafe_skip_ca_verification;
} kjoin_k3s_discovery;

#define KJOIN_K3S_CACERTS_PATH "/cacerts"

/* ---- refresh ------------------------------------------------------------ */

typedef struct kjoin_refresh_opts {
    const char *kubeconfig;   /* the file whose current cluster's certificate-authority-data to refresh */
    const char *ca_cert_path; /* also write the bundle there (0644); may be NULL */
    int64_t timeout_ms;       /* one deadline; 0: 60 s */
    const struct kjoin_pinset *pins; /* may be NULL: else a new bundle must hold a certificate one names */
    const char *audit_id;
    kjoin_log_fn log;
    void *log_ctx;
} kjoin_refresh_opts;

typedef struct kjoin_refresh_result {
    bool changed;
    size_t old_certs, new_certs;
} kjoin_refresh_result;

/* Re-fetches cluster-info from the kubeconfig's server on one connection
 * whose handshake the CA data the file holds must verify, and, when the
 * bundle changed, verifies that same handshake with the new bundle (and the
 * pins, if any) before it rewrites only that file's
 * certificate-authority-data (kjoin_kubeconfig_replace_ca; atomically).
 * Errors: KJOIN_E_USAGE, KJOIN_E_TIMEOUT, KJOIN_E_TRUST (TLS, malformed
 * cluster-info, a new bundle that would not verify the server or matches no
 * pin: the file untouched), KJOIN_E_OUTPUT, KJOIN_E_OTHER (the rewrite's
 * check failed: the file untouched). */
kjoin_code kjoin_refresh(const kjoin_refresh_opts *opts, kjoin_refresh_result *out, kjoin_err *err);

#endif
