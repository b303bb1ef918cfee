/* kjoin certs: a self-signing certificate manager (the CockroachDB chart's
 * certificate RFC): a CA, node and client certificates in a CockroachDB-style
 * certs directory or in Kubernetes Secrets, with durations, expiry windows
 * and non-disruptive CA rotation. Every decision takes "now" from the
 * caller. */
#ifndef KJOIN_CERTS_H
#define KJOIN_CERTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kjoin/err.h>
#include <kjoin/kubeapi.h>

/* Where the certificates live: a directory on this machine, or Secrets in a
 * namespace (one per certificate, shaped as the CockroachDB self-signer
 * shapes them). The same rules and decisions apply to both. */
typedef struct kjoin_certs_store {
    const char *dir;          /* the directory store; NULL selects Secrets */
    kjoin_kubeapi *api;       /* Secrets: the API client (borrowed) */
    const char *ns, *prefix;  /* Secrets: the namespace and the names' prefix */
    const char *ca_secret;    /* Secrets, init: a CA Secret the user provides (ca.crt, ca.key); never written */
} kjoin_certs_store;

typedef enum kjoin_key_type {
    KJOIN_KEY_ECDSA_P256,
    KJOIN_KEY_RSA2048,
    KJOIN_KEY_RSA3072,
    KJOIN_KEY_RSA4096,
    KJOIN_KEY_ED25519,
    KJOIN_KEY_ECDSA_P384
} kjoin_key_type;

/* Parses "ecdsa-p256", "ecdsa-p384", "rsa2048", "rsa3072", "rsa4096" or "ed25519". */
kjoin_code kjoin_key_type_parse(const char *s, kjoin_key_type *out, kjoin_err *err);

/* Durations in seconds. */
typedef struct kjoin_certs_settings {
    int64_t ca_duration, ca_window;
    int64_t node_duration, node_window;
    int64_t client_duration, client_window;
    int64_t minimum; /* 0: derived as min(client - window, node - window) */
    kjoin_key_type key_type;
} kjoin_certs_settings;

/* The defaults: CA 87600h with a 17520h window, node and client 8760h with
 * 168h windows. */
kjoin_certs_settings kjoin_certs_defaults(void);

/* What a run did: one line each, and whether anything changed. */
#define KJOIN_CERTS_REPORT_MAX 64
typedef struct kjoin_certs_report {
    size_t n;
    char lines[KJOIN_CERTS_REPORT_MAX][256];
    bool changed;
    bool restart_nodes, reload_clients; /* consumers to restart or SIGHUP */
} kjoin_certs_report;

typedef struct kjoin_certs_init_opts {
    kjoin_certs_settings settings;
    const char *ca_cert, *ca_key; /* a CA the user provides (may be an intermediate with its chain) */
    const char *user;             /* the client certificate's user; "root" when NULL */
    const char *const *sans;      /* extra names and addresses for the node certificate */
    size_t n_sans;
} kjoin_certs_init_opts;

/* Creates a CA, a node and a client certificate. Refuses a directory that
 * already holds a PKI. Secrets are idempotent: a complete set is left as it
 * is (its settings updated), a set a killed run left half-made is finished.
 * Errors: KJOIN_E_USAGE, KJOIN_E_OUTPUT, KJOIN_E_API, KJOIN_E_OTHER. */
kjoin_code kjoin_certs_init(const kjoin_certs_store *st, const kjoin_certs_init_opts *opts, int64_t now,
                            kjoin_certs_report *report, kjoin_err *err);

/* Adopts a new CA explicitly (the RFC's "new CA" case; never a side effect
 * of a rotation): the certificate (and chain) and key at ca_cert and ca_key
 * become the CA, ca.crt holds it followed by the CAs before it, and every
 * node and client certificate is marked needsRegeneration, to be reissued
 * under it on the next rotate (once peers trust it). kjoin never replaces an
 * adopted CA. Errors: KJOIN_E_USAGE, KJOIN_E_OUTPUT, KJOIN_E_OTHER. */
kjoin_code kjoin_certs_adopt_ca(const kjoin_certs_store *st, const char *ca_cert, const char *ca_key, int64_t now,
                                kjoin_certs_report *report, kjoin_err *err);

/* Issues a further node certificate (files node.<name>.crt/.key, CN "node")
 * or client certificate (client.<user>.crt/.key, CN user, O groups). */
kjoin_code kjoin_certs_issue_node(const kjoin_certs_store *st, const char *name, const char *const *sans, size_t n_sans,
                                  int64_t now, kjoin_certs_report *report, kjoin_err *err);
kjoin_code kjoin_certs_issue_client(const kjoin_certs_store *st, const char *user, const char *const *groups, size_t n_groups,
                                    int64_t now, kjoin_certs_report *report, kjoin_err *err);

/* What a rotate run may change: everything, only the CA (its CronJob), or
 * only the node and client certificates (theirs). */
typedef enum kjoin_certs_scope { KJOIN_CERTS_ALL, KJOIN_CERTS_CA, KJOIN_CERTS_LEAVES } kjoin_certs_scope;

/* The rotation job (see docs/certs.md). With dry_run nothing is written.
 * In Secrets every write is a compare-and-swap on the resourceVersion read;
 * when someone else wrote first the run reads again and decides again (a
 * few times, then KJOIN_E_API naming the Conflict). */
kjoin_code kjoin_certs_rotate(const kjoin_certs_store *st, int64_t now, kjoin_certs_scope scope, bool dry_run,
                              kjoin_certs_report *report, kjoin_err *err);

/* One certificate's expiry, for check-expiration. */
typedef struct kjoin_certs_status {
    char name[80];
    char ca_name[16];     /* "ca" for leaves, "" for the CA */
    int64_t not_after;
    bool is_ca, user_provided, due, needs_regeneration;
    bool not_yet_valid; /* its notBefore is after now (clock skew): due too */
} kjoin_certs_status;

/* Fills up to cap entries, sorted by name. Errors: KJOIN_E_USAGE (no PKI). */
kjoin_code kjoin_certs_check(const kjoin_certs_store *st, int64_t now, kjoin_certs_status *out, size_t cap, size_t *n,
                             kjoin_err *err);

/* The RFC's objects for the Secrets store, as YAML for kubectl apply or a
 * chart: ServiceAccount, Role and RoleBinding (Helm pre-install hooks,
 * weights 1-3), the Job running init (weight 4, deleted once done), and the
 * rotation CronJobs (leaves; and the CA unless ca_secret). */
typedef struct kjoin_certs_job_opts {
    const char *ns, *prefix, *image;
    const char *ca_secret;          /* a CA Secret the user provides, or NULL */
    const char *cronjob_api;        /* "batch/v1" (NULL) or "batch/v1beta1" */
    kjoin_certs_settings settings;  /* checked by the RFC's rules first */
} kjoin_certs_job_opts;
kjoin_code kjoin_certs_job_manifests(const kjoin_certs_job_opts *o, char **yaml, kjoin_err *err);

/* A cron schedule that runs at least every period seconds (at minute and
 * hour where the interval allows), and the interval it really gives.
 * Errors: KJOIN_E_USAGE (under a minute). */
#define KJOIN_CERTS_CRON_MAX 32

/* Kubernetes Secret manifests as a JSON List (newly-allocated). */
kjoin_code kjoin_certs_manifests(const char *dir, const char *ns, const char *prefix, char **out, kjoin_err *err);

/* ---- ca-set: a control plane's CAs under an organisation's root ---- */

/* The file layout a control plane reads: K3s' server/tls directory
 * (server-ca, client-ca, request-header-ca, etcd/peer-ca, etcd/server-ca,
 * service.key) or kubeadm's /etc/kubernetes (pki/ca, pki/front-proxy-ca,
 * pki/etcd/ca, pki/sa.key and sa.pub). */
typedef enum kjoin_ca_layout { KJOIN_CA_LAYOUT_K3S, KJOIN_CA_LAYOUT_KUBEADM } kjoin_ca_layout;

/* Parses "k3s" or "kubeadm". Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_ca_layout_parse(const char *s, kjoin_ca_layout *out, kjoin_err *err);

typedef struct kjoin_ca_set_opts {
    const char *dir;
    kjoin_ca_layout layout;
    const char *root_cert, *root_key; /* paths: the signing CA (first), its chain up to the self-signed root */
    bool intermediate;                /* sign the cluster CAs with an intermediate made under the root */
    bool rotate;                      /* replace the set in dir (made under the same root) */
    int64_t ca_duration, intermediate_duration; /* seconds; 0: 10 years, or to the issuer's end */
    kjoin_key_type key_type;
} kjoin_ca_set_opts;

#define KJOIN_CA_SET_MAX 5
typedef struct kjoin_ca_set_result {
    bool written, rotated, finished; /* finished: a killed run's set was put in place */
    bool root_key_shared;            /* the root's key file is readable by others: warn */
    char root[256], signer[256], intermediate[256]; /* subjects; intermediate "" without one */
    char root_pin[80], spki_pin[80];  /* root-sha256: of the root's DER, sha256: of its key */
    char bundle_file[48];             /* the server CA's bundle, for cluster-info and nodes */
    size_t bundle;                    /* certificates in it */
    size_t n;
    struct {
        char role[32], file[48], subject[256];
        int64_t not_after;
        size_t bundle; /* certificates in the file */
    } cas[KJOIN_CA_SET_MAX];
} kjoin_ca_set_result;

/* Makes the cluster CAs and the service-account key pair, each CA signed by
 * the intermediate (or the signer), with bundles "CA, intermediate, chain to
 * the root" so that a root-sha256: pin (and kubeadm's sha256: pin of the
 * root's key) joins: K3s' CA files are bundles; kubeadm's hold one
 * certificate each (its controller-manager takes no more) and the server
 * CA's bundle is pki/ca-bundle.crt, to publish in cluster-info. With rotate, the new set keeps the previous CA and
 * service-account key in its bundles, so what they issued stays trusted
 * until it is renewed. Every file is staged, then moved in place; a killed
 * run's staged set is finished by the next. A run without rotate on a set
 * already made under this root changes nothing. Errors: KJOIN_E_USAGE
 * (unusable root, foreign files, lifetimes past the issuer's), KJOIN_E_OUTPUT,
 * KJOIN_E_OTHER. */
kjoin_code kjoin_certs_ca_set(const kjoin_ca_set_opts *o, int64_t now, kjoin_ca_set_result *r, kjoin_err *err);

#endif
