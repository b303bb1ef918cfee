/* The pin module's own plumbing, for the library's modules, its tests and
 * fuzzers: not installed, not exported. The public part is kjoin/pin.h. */
#ifndef KJOIN_PRIVATE_PIN_H
#define KJOIN_PRIVATE_PIN_H

#include <kjoin/pin.h>

/* Adds one pin or a comma-separated list of pins. Nothing is added unless
 * every pin in spec is valid. Errors: KJOIN_E_USAGE. */
size_t kjoin_pinset_count(const kjoin_pinset *pins);

/* Certificate i as OpenSSL's X509, owned by b; NULL past the end. */
struct x509_st *kjoin_bundle_x509(const kjoin_bundle *b, size_t i);

/* Decides trust for every certificate. The certificates matching a pin are
 * the only anchors; a certificate is trusted beside them only when it chains
 * up to an anchor through CA certificates of the bundle with verified
 * signatures; every other one is dropped. Trust flows down, never up: an
 * anchor's issuer is not trusted because of it. With pins NULL or empty
 * (unsafe mode) every certificate is an anchor.
 * Errors: KJOIN_E_TRUST when no certificate matches a pin. */
kjoin_code kjoin_bundle_apply_pins(kjoin_bundle *b, const kjoin_pinset *pins, kjoin_err *err);

/* PEM of the certificates whose trust is in mask (bits 1 << kjoin_trust),
 * in bundle order. Newly-allocated; "" when none; NULL when out of memory. */
char *kjoin_bundle_pem(const kjoin_bundle *b, unsigned mask, size_t *out_len);

/* PEM of the certificates for which keep returns true, in bundle order.
 * Newly-allocated; "" when none; NULL when out of memory. */
char *kjoin_bundle_pem_filter(const kjoin_bundle *b, kjoin_cert_filter keep, void *ctx, size_t *out_len);

/* Checks hash against the one value K3s' hashCA gives for bytes (the bundle
 * as served, which b was parsed from). On KJOIN_K3S_ROOT_DER, *root (may be
 * NULL) is the root's index. */
kjoin_k3s_match kjoin_bundle_match_k3s_hash(const kjoin_bundle *b, const void *bytes, size_t len,
                                            const unsigned char hash[32], size_t *root);

#endif
