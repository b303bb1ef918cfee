/* The bootstrap module's own plumbing, for the library's modules, its tests and
 * fuzzers: not installed, not exported. The public part is kjoin/bootstrap.h. */
#ifndef KJOIN_PRIVATE_BOOTSTRAP_H
#define KJOIN_PRIVATE_BOOTSTRAP_H

#include <kjoin/bootstrap.h>

/* The CSR name kubelet gives: "node-csr-" and the base64url SHA-512/256 of
 * the public key (DER), the subject's CN and O and the usages, each
 * base64url-encoded and followed by '|'. Errors: KJOIN_E_OTHER. */
kjoin_code kjoin_bootstrap_csr_name(const unsigned char *spki_der, size_t len, const char *cn,
                                    const char *const *orgs, size_t n_orgs, const char *const *usages,
                                    size_t n_usages, char out[96], kjoin_err *err);

/* A PEM CSR with subject CN cn for a new P-256 key, thrown away at once: a
 * request no one can use (a join report's). Newly-allocated, or NULL.
 * Errors: KJOIN_E_OTHER. */
char *kjoin_bootstrap_throwaway_csr(const char *cn, kjoin_err *err);

#endif
