/* The join: one specification in, a verified TLS-bootstrap kubeconfig out.
 * kubeadm's token precedence, K3s detection, the checks between inputs and
 * the choice of discovery source live here; a command (or a program linking
 * libkjoin) only fills the specification. Messages name the specification's
 * fields (token_file, discovery_token, ...), never command-line flags. */
#ifndef KJOIN_JOIN_H
#define KJOIN_JOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kjoin/discovery.h>
#include <kjoin/err.h>
#include <kjoin/pin.h>
#include <kjoin/token.h>
#include <kjoin/util.h>

/* The Kubernetes releases whose kubeadm kjoin follows: the oldest, the
 * newest (a cluster newer than that is taken as the newest). */
#define KJOIN_OLDEST_KUBEADM_MINOR 20
#define KJOIN_NEWEST_KUBEADM_MINOR 37

typedef enum kjoin_flavor {
    KJOIN_FLAVOR_AUTO,    /* K3s for a K10 token or K3S_URL/K3S_TOKEN, else kubeadm */
    KJOIN_FLAVOR_KUBEADM,
    KJOIN_FLAVOR_K3S
} kjoin_flavor;

#define KJOIN_JOIN_DEFAULT_OUT "/etc/kubernetes/bootstrap-kubelet.conf"
#define KJOIN_JOIN_DEFAULT_TIMEOUT_MS (5 * 60 * 1000)
/* A check of the join waits this long at most (a shorter timeout wins): a token not yet signed is not
 * waited for as a join waits. */
#define KJOIN_JOIN_CHECK_TIMEOUT_MS (10 * 1000)

/* Everything a join is told. Strings are borrowed; NULL means not given.
 * Token fields hold secrets: the caller wipes them after the call. Begin
 * with KJOIN_JOIN_SPEC_INIT: a specification of another version (a program
 * built against other headers) is refused. */
#define KJOIN_JOIN_SPEC_VERSION 1
typedef struct kjoin_join_spec {
    unsigned version;                 /* KJOIN_JOIN_SPEC_VERSION */
    kjoin_flavor flavor;
    const char *const *endpoints;     /* "host:port" strings, at most KJOIN_MAX_ENDPOINTS */
    size_t n_endpoints;
    const char *discovery_file;       /* path, "-" or https:// URL: file discovery */
    const char *token;                /* for discovery and TLS bootstrap */
    const char *token_file;           /* token read from this file's first line ("-": stdin) */
    const char *discovery_token;      /* for discovery only */
    const char *tls_bootstrap_token;  /* written into the kubeconfig only */
    const kjoin_pinset *pins;         /* CA pins; NULL or empty means none */
    bool unsafe_skip_ca_verification;
    bool wait_for_token;              /* token discovery: wait for a token the API server rejects to appear
                                       * (created after this node boots) instead of ending at once */
    int64_t timeout_ms;               /* 0: KJOIN_JOIN_DEFAULT_TIMEOUT_MS */
    const char *cluster_name;         /* NULL: "kubernetes" */
    const char *kubeconfig_out;       /* NULL: KJOIN_JOIN_DEFAULT_OUT */
    const char *ca_cert_path;         /* also write the trusted CA there (0644), as kubeadm does */
    bool force;                       /* replace a kubeconfig or CA with different content */
    bool dry_run;                     /* write nothing; the kubeconfig is in the outcome */
    /* The environment as the caller read it: */
    const char *env_token;            /* KJOIN_TOKEN: the token when no token field is set */
    const char *env_k3s_token;        /* K3S_TOKEN: chooses K3s unless the flavor is kubeadm */
    const char *env_k3s_token_file;   /* K3S_TOKEN_FILE: read (whole, trimmed) when K3S_TOKEN is not set */
    const char *env_k3s_url;          /* K3S_URL: likewise, and the endpoint when none is given */
    const char *audit_id;             /* sent as Audit-ID; NULL: none */
    kjoin_log_fn log;                 /* level 0 steps, 1 details, 4 requests; may be NULL */
    void *log_ctx;
} kjoin_join_spec;
#define KJOIN_JOIN_SPEC_INIT {.version = KJOIN_JOIN_SPEC_VERSION}

typedef enum kjoin_discovery_kind {
    KJOIN_DISCOVERY_TOKEN,
    KJOIN_DISCOVERY_FILE,
    KJOIN_DISCOVERY_K3S
} kjoin_discovery_kind;

typedef struct kjoin_join_outcome {
    kjoin_join_result result;         /* the kubeconfig, server, CA bundle, attempts */
    kjoin_discovery_kind kind;
    bool k3s;
    char token_id[KJOIN_TOKEN_ID_LEN + 1]; /* "" when the credentials are not a bootstrap token */
    bool written;                     /* false for a dry run */
    kjoin_write_result kubeconfig_write;
    bool ca_written;
    kjoin_write_result ca_write;
} kjoin_join_outcome;

/* Resolves, discovers, and writes the kubeconfig atomically (0600) and the
 * CA at ca_cert_path (0644), unless dry_run. *out is written only on
 * success; release it with kjoin_join_outcome_release(). Errors:
 * KJOIN_E_USAGE, KJOIN_E_TIMEOUT, KJOIN_E_TRUST, KJOIN_E_OUTPUT, KJOIN_E_OTHER. */
kjoin_code kjoin_join(const kjoin_join_spec *spec, kjoin_join_outcome *out, kjoin_err *err);
void kjoin_join_outcome_release(kjoin_join_outcome *o);

#endif
