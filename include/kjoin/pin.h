/* CA pins and whole-bundle trust decisions.
 *
 * Two pin kinds, hex in any case:
 *   sha256:<64 hex>       SHA-256 of a certificate's DER SubjectPublicKeyInfo
 *                         (kubeadm's --discovery-token-ca-cert-hash);
 *   root-sha256:<64 hex>  SHA-256 of the DER encoding of a root of the bundle
 *                         (self-signed, or its issuer is not in the bundle).
 */
#ifndef KJOIN_PIN_H
#define KJOIN_PIN_H

#include <stdbool.h>
#include <stddef.h>

#include <kjoin/err.h>

#define KJOIN_PIN_STR_MAX 80 /* "root-sha256:" + 64 hex + NUL fits */
#define KJOIN_BUNDLE_MAX_CERTS 100

typedef struct kjoin_pinset kjoin_pinset;

/* Returns a newly-allocated empty set, or NULL when out of memory. */
kjoin_pinset *kjoin_pinset_new(void);
/* Frees the set; NULL is fine. */
void kjoin_pinset_free(kjoin_pinset *pins);
/* Adds one pin or a comma-separated list of pins. Nothing is added unless
 * every pin in spec is valid. Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_pinset_add(kjoin_pinset *pins, const char *spec, kjoin_err *err);

typedef enum kjoin_cert_role {
    KJOIN_CERT_ROOT,         /* self-signed, or its issuer is not in the bundle */
    KJOIN_CERT_INTERMEDIATE, /* a CA issued by another certificate of the bundle */
    KJOIN_CERT_LEAF          /* not a CA, issued by another certificate of the bundle */
} kjoin_cert_role;

typedef enum kjoin_trust {
    KJOIN_TRUST_NONE,    /* not decided yet: no pins applied */
    KJOIN_TRUST_ANCHOR,  /* matches a pin (or every certificate, in unsafe mode) */
    KJOIN_TRUST_CHAINED, /* issued, with a verified signature, by a trusted certificate */
    KJOIN_TRUST_DROPPED  /* neither: not trusted, not written */
} kjoin_trust;

typedef struct kjoin_cert_info {
    char subject[256];  /* RFC 2253 */
    char issuer[256];
    char not_before[32]; /* RFC 3339, UTC */
    char not_after[32];
    char spki_pin[KJOIN_PIN_STR_MAX];   /* sha256:<hex> */
    char root_pin[KJOIN_PIN_STR_MAX];   /* root-sha256:<hex>; "" unless role is ROOT */
    char matched_pin[KJOIN_PIN_STR_MAX]; /* the pin that made it an anchor, else "" */
    bool self_signed;
    bool is_ca;
    kjoin_cert_role role;
    kjoin_trust trust;
} kjoin_cert_info;

typedef struct kjoin_bundle kjoin_bundle;

/* Parses a PEM bundle of one to KJOIN_BUNDLE_MAX_CERTS certificates, as
 * Go's certutil.ParseCertsPEM reads it (kubeadm, K3s): text around the PEM
 * blocks is ignored, and so are blocks that are not plain "CERTIFICATE"
 * blocks (another type such as "X509 CERTIFICATE", or headers): skipped,
 * never trusted. *out is newly-allocated.
 * Errors: KJOIN_E_TRUST (the bundle is discovery data; callers reading a
 * user's file remap it). */
kjoin_code kjoin_bundle_parse(const void *pem, size_t len, kjoin_bundle **out, kjoin_err *err);
/* Parses a PEM bundle of one to KJOIN_BUNDLE_MAX_CERTS certificates, as
 * Go's certutil.ParseCertsPEM reads it (kubeadm, K3s): text around the PEM
 * blocks is ignored, and so are blocks that are not plain "CERTIFICATE"
 * blocks (another type such as "X509 CERTIFICATE", or headers): skipped,
 * never trusted. *out is newly-allocated.
 * Errors: KJOIN_E_TRUST (the bundle is discovery data; callers reading a
 * user's file remap it). */
void kjoin_bundle_free(kjoin_bundle *b);
/* Parses a PEM bundle of one to KJOIN_BUNDLE_MAX_CERTS certificates, as
 * Go's certutil.ParseCertsPEM reads it (kubeadm, K3s): text around the PEM
 * blocks is ignored, and so are blocks that are not plain "CERTIFICATE"
 * blocks (another type such as "X509 CERTIFICATE", or headers): skipped,
 * never trusted. *out is newly-allocated.
 * Errors: KJOIN_E_TRUST (the bundle is discovery data; callers reading a
 * user's file remap it). */
size_t kjoin_bundle_count(const kjoin_bundle *b);
/* Borrowed; valid while b lives. */
const kjoin_cert_info *kjoin_bundle_cert(const kjoin_bundle *b, size_t i);

/* PEM of the certificates for which keep returns true, in bundle order.
 * Newly-allocated; "" when none; NULL when out of memory. */
typedef bool (*kjoin_cert_filter)(const kjoin_cert_info *c, void *ctx);

#define KJOIN_TRUST_MASK(t) (1u << (t))
#define KJOIN_TRUSTED_MASK (KJOIN_TRUST_MASK(KJOIN_TRUST_ANCHOR) | KJOIN_TRUST_MASK(KJOIN_TRUST_CHAINED))

/* How a K3s token's CA hash (the "K10<hash>" part) matched a bundle, by K3s'
 * own rule (hashCA): one certificate hashes the served bytes; several hash
 * the DER of the root of the first certificate's chain when that chain
 * verifies now (roots: the other certificates without an authority key id
 * or with one equal to their subject key id), else the bytes. */
typedef enum kjoin_k3s_match {
    KJOIN_K3S_NO_MATCH,
    KJOIN_K3S_BUNDLE_BYTES, /* SHA-256 of the bytes as served: vouches for every certificate */
    KJOIN_K3S_ROOT_DER      /* SHA-256 of the DER of a root of the bundle: anchors that root */
} kjoin_k3s_match;

/* Name of a role: "root", "intermediate" or "leaf". */
const char *kjoin_cert_role_name(kjoin_cert_role role);

#endif
