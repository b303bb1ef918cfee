/* The join module's own plumbing, for the library's modules, its tests and
 * fuzzers: not installed, not exported. The public part is kjoin/join.h. */
#ifndef KJOIN_PRIVATE_JOIN_H
#define KJOIN_PRIVATE_JOIN_H

#include <kjoin/join.h>

/* What a specification resolves to, every value checked. Holds secrets:
 * release with kjoin_join_plan_clear. */
typedef struct kjoin_join_plan {
    kjoin_discovery_kind kind;
    const char *k3s_reason;           /* what chose K3s (static text), NULL for kubeadm */
    kjoin_endpoint endpoints[KJOIN_MAX_ENDPOINTS];
    size_t n_endpoints;
    bool has_discovery_token, has_tls_bootstrap_token;
    kjoin_token discovery_token, tls_bootstrap_token;
    kjoin_k3s_token k3s_token;
    int64_t timeout_ms;
} kjoin_join_plan;

/* Applies kubeadm's precedence (a specific token wins over the shared one;
 * the TLS-bootstrap token defaults to the discovery token) and checks the
 * inputs against each other, without network access. *out is written only
 * on success. Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_join_resolve(const kjoin_join_spec *spec, kjoin_join_plan *out, kjoin_err *err);
void kjoin_join_plan_clear(kjoin_join_plan *p);

/* The CA certificates the discovery trusts (anchors and what chains to
 * them), as PEM: newly-allocated, NULL (with *len 0) when there are none. */
char *kjoin_join_trusted_ca_pem(const kjoin_join_result *r, size_t *len);

#endif
