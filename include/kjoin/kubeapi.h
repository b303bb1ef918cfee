/* A client of the Kubernetes API built from a kubeconfig as kubectl reads it:
 * verified TLS only, client certificate or bearer token, JSON bodies, one
 * deadline per client, Status errors decoded. */
#ifndef KJOIN_KUBEAPI_H
#define KJOIN_KUBEAPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kjoin/err.h>
#include <kjoin/util.h>

/* Where kubeadm looks for admin credentials when neither a path nor
 * KUBECONFIG is given. */
#define KJOIN_KUBEAPI_DEFAULT_KUBECONFIG "/etc/kubernetes/admin.conf"

/* What one context of a kubeconfig resolves to. Every field is
 * newly-allocated and released by kjoin_kubeapi_config_release(), which
 * wipes the secrets (key_pem, token). */
typedef struct kjoin_kubeapi_config {
    char *path;           /* the file it came from ("" when parsed from memory) */
    char *context;        /* the context used */
    char *server;         /* https://host:port[/prefix] */
    char *ca_pem;         /* PEM bundle, or NULL: the system roots verify the server */
    size_t ca_len;
    char *cert_pem;       /* client certificate, or NULL */
    size_t cert_len;
    char *key_pem;        /* secret: its key */
    size_t key_len;
    char *token;          /* secret: bearer token (token or tokenFile), or NULL */
} kjoin_kubeapi_config;

/* Reads the kubeconfig at path; NULL means the first file of $KUBECONFIG,
 * else KJOIN_KUBEAPI_DEFAULT_KUBECONFIG (kubeadm's order). Errors as
 * kjoin_kubeapi_config_parse, plus KJOIN_E_USAGE for an unreadable file. */
kjoin_code kjoin_kubeapi_config_load(const char *path, const char *context, kjoin_kubeapi_config *out,
                                     kjoin_err *err);
void kjoin_kubeapi_config_release(kjoin_kubeapi_config *c);

/* The credentials a command uses, in client-go's order: the kubeconfig at
 * path; else $KUBECONFIG; else, when in_cluster and no context is asked for
 * and this runs in a pod (KUBERNETES_SERVICE_HOST is set), the pod's service
 * account; else KJOIN_KUBEAPI_DEFAULT_KUBECONFIG. Errors as the loaders. */
kjoin_code kjoin_kubeapi_config_find(const char *path, const char *context, bool in_cluster, kjoin_kubeapi_config *out,
                                     kjoin_err *err);

/* An API client; opaque. Two threads may use one at once (each request is
 * its own connection; what it remembers, the server's clock, is atomic). */
typedef struct kjoin_kubeapi kjoin_kubeapi;

/* How a client behaves. Begin with KJOIN_KUBEAPI_OPTIONS_INIT (another
 * version is refused). */
#define KJOIN_KUBEAPI_OPTIONS_VERSION 1
typedef struct kjoin_kubeapi_options {
    unsigned version;    /* KJOIN_KUBEAPI_OPTIONS_VERSION */
    int64_t timeout_ms;  /* one deadline for everything the client does; > 0 */
    int64_t call_timeout_ms; /* each request's own bound, its retries included (within timeout_ms); 0: none */
    const char *audit_id; /* sent as Audit-ID with every request; may be NULL */
    kjoin_log_fn log;     /* may be NULL; level 4: each request, its status and timing */
    void *log_ctx;
} kjoin_kubeapi_options;
#define KJOIN_KUBEAPI_OPTIONS_INIT {.version = KJOIN_KUBEAPI_OPTIONS_VERSION}

/* Makes a client. The configuration is moved in (*cfg is left empty) and
 * freed with the client. *out is written only on success.
 * Errors: KJOIN_E_USAGE (no server, a key without a certificate),
 * KJOIN_E_OTHER. */
kjoin_code kjoin_kubeapi_new(kjoin_kubeapi_config *cfg, const kjoin_kubeapi_options *opts, kjoin_kubeapi **out,
                             kjoin_err *err);
void kjoin_kubeapi_free(kjoin_kubeapi *api);

/* The server URL and the CA bundle (NULL when the system roots are used) the
 * client trusts; borrowed from the client. */
const char *kjoin_kubeapi_server(const kjoin_kubeapi *api);
const char *kjoin_kubeapi_ca_pem(const kjoin_kubeapi *api, size_t *len);

#define KJOIN_KUBEAPI_REASON_MAX 48
#define KJOIN_KUBEAPI_MESSAGE_MAX 320

/* A final answer of the API. */
typedef struct kjoin_kubeapi_response {
    long status;                              /* HTTP status */
    char reason[KJOIN_KUBEAPI_REASON_MAX];    /* Status.reason of a failure ("NotFound"), else "" */
    char message[KJOIN_KUBEAPI_MESSAGE_MAX];  /* Status.message of a failure, else "" */
    char *body;                               /* newly-allocated, NUL-terminated */
    size_t len;
} kjoin_kubeapi_response;

/* Sends method to path (starting with "/") with an optional JSON body.
 * Retried with jittered exponential backoff (honouring Retry-After) until
 * the deadline: 429 always; for GET also connection failures and 5xx; for
 * other methods only what cannot have been applied (a request that never
 * left, or a 5xx with Retry-After). Any other answer is final and returned
 * as success, whatever its status (check it with kjoin_kubeapi_check); a
 * non-GET sent but never answered is KJOIN_E_OTHER, not repeated. *out is written only on success. Errors:
 * KJOIN_E_TIMEOUT (deadline passed; the message names the last failure),
 * KJOIN_E_TRUST (the server failed TLS verification), KJOIN_E_USAGE (the
 * client credentials cannot be used), KJOIN_E_OTHER. */
kjoin_code kjoin_kubeapi_request(kjoin_kubeapi *api, const char *method, const char *path, const char *body,
                                 kjoin_kubeapi_response *out, kjoin_err *err);
void kjoin_kubeapi_response_release(kjoin_kubeapi_response *r);

/* KJOIN_OK for a 2xx answer; otherwise KJOIN_E_API with a message that names
 * what (e.g. "create secret kube-system/bootstrap-token-abcdef"), the reason
 * and the API's message. */
kjoin_code kjoin_kubeapi_check(const kjoin_kubeapi_response *r, const char *what, kjoin_err *err);

#endif
