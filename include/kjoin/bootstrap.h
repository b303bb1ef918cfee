/* The TLS bootstrap: from a bootstrap kubeconfig (a token) to the node's own
 * client certificate and kubelet.conf, as kubelet does it, for any agent. */
#ifndef KJOIN_BOOTSTRAP_H
#define KJOIN_BOOTSTRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kjoin/certs.h>
#include <kjoin/err.h>
#include <kjoin/util.h>

#define KJOIN_BOOTSTRAP_KUBELET_SIGNER "kubernetes.io/kube-apiserver-client-kubelet"
#define KJOIN_BOOTSTRAP_DEFAULT_KUBECONFIG "/etc/kubernetes/kubelet.conf"
#define KJOIN_BOOTSTRAP_DEFAULT_PKI_DIR "/var/lib/kubelet/pki"
#define KJOIN_BOOTSTRAP_DEFAULT_CA_CERT "/etc/kubernetes/pki/ca.crt"
#define KJOIN_BOOTSTRAP_MAX_ORGS 8
#define KJOIN_BOOTSTRAP_MAX_USAGES 8

/* What to ask for and where to write it. Strings are borrowed; NULL takes
 * the default named. Begin with KJOIN_BOOTSTRAP_SPEC_INIT (another version
 * is refused). */
#define KJOIN_BOOTSTRAP_SPEC_VERSION 1
typedef struct kjoin_bootstrap_spec {
    unsigned version;                   /* KJOIN_BOOTSTRAP_SPEC_VERSION */
    const char *bootstrap_kubeconfig;   /* the kubeconfig holding the bootstrap token (a path) */
    const char *node_name;              /* NULL: the host name, lower-cased (kubeadm's rule) */
    kjoin_key_type key_type;            /* ECDSA P-256 by default */
    const char *signer;                 /* NULL: KJOIN_BOOTSTRAP_KUBELET_SIGNER */
    const char *subject_cn;             /* NULL: "system:node:<node_name>" */
    const char *const *subject_o;       /* NULL (with n_o 0): {"system:nodes"} */
    size_t n_o;
    const char *const *usages;          /* NULL: kubelet's digital signature, key encipherment, client auth */
    size_t n_usages;
    int64_t duration_s;                 /* spec.expirationSeconds; 0: the signer's default */
    const char *kubeconfig_out;         /* NULL: KJOIN_BOOTSTRAP_DEFAULT_KUBECONFIG */
    const char *pki_dir;                /* NULL: KJOIN_BOOTSTRAP_DEFAULT_PKI_DIR */
    const char *ca_cert_path;           /* NULL: KJOIN_BOOTSTRAP_DEFAULT_CA_CERT */
    int64_t renew_before_percent;       /* due when less than this much of the life is left; 0: 30 */
    bool rotate;                        /* renew with the current certificate, not the bootstrap token */
    int64_t timeout_ms;                 /* one deadline; 0: 5 minutes */
    const char *audit_id;
    kjoin_log_fn log;
    void *log_ctx;
} kjoin_bootstrap_spec;
#define KJOIN_BOOTSTRAP_SPEC_INIT {.version = KJOIN_BOOTSTRAP_SPEC_VERSION}

typedef struct kjoin_bootstrap_result {
    bool changed;                       /* false: a valid certificate that is not due was kept */
    char csr_name[96];
    char node_name[254];
    char cert_path[4200];               /* the kubelet-client-<timestamp>.pem written (or kept) */
    int64_t not_after;
} kjoin_bootstrap_result;

/* Runs the bootstrap (or, with rotate, the renewal). Errors: KJOIN_E_USAGE,
 * KJOIN_E_TIMEOUT (no certificate by the deadline; the CSR stays, so a
 * re-run picks it up), KJOIN_E_TRUST (Denied or Failed, or a certificate
 * that is not ours, not what was asked or not from the trusted CA),
 * KJOIN_E_API, KJOIN_E_OUTPUT, KJOIN_E_OTHER. */
kjoin_code kjoin_tls_bootstrap(const kjoin_bootstrap_spec *spec, kjoin_bootstrap_result *out, kjoin_err *err);

#endif
