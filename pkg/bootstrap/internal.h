#ifndef KJOIN_BOOTSTRAP_INTERNAL_H
#define KJOIN_BOOTSTRAP_INTERNAL_H

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <kjoin/private/bootstrap.h>

/* Private to pkg/bootstrap. */

/* The public key's DER (SubjectPublicKeyInfo); OPENSSL_free it. */
kjoin_code kjoin_bootstrap__spki(EVP_PKEY *key, unsigned char **der, size_t *len, kjoin_err *err);
/* A PEM CSR for key with subject CN and O; newly-allocated. */
char *kjoin_bootstrap__csr_pem(EVP_PKEY *key, const char *cn, const char *const *orgs, size_t n_orgs, kjoin_err *err);
/* The public key of a PEM CSR, or NULL. */
EVP_PKEY *kjoin_bootstrap__csr_pubkey(const char *pem, size_t len);
/* The checks of an issued certificate: our key, the subject asked for, a
 * chain to a certificate of ca_pem valid at now for client auth.
 * Errors: KJOIN_E_TRUST. */
kjoin_code kjoin_bootstrap__check_cert(X509 *cert, STACK_OF(X509) *chain, EVP_PKEY *key, const char *cn,
                                       const char *const *orgs, size_t n_orgs, const char *ca_pem, size_t ca_len,
                                       int64_t now, kjoin_err *err);

/* The public key of the request (spec.request) in a CertificateSigningRequest
 * the API returned (untrusted bytes), or NULL. */
EVP_PKEY *kjoin_bootstrap__csr_body_pubkey(const char *body, size_t len);
/* Reads a CertificateSigningRequest the API returned (untrusted bytes):
 * *issued with *pem the certificate chain once it carries one (free it).
 * Errors: KJOIN_E_TRUST (Denied or Failed, with its reason and message, or a
 * malformed answer). */
kjoin_code kjoin_bootstrap__csr_status(const char *body, size_t len, const char *name, char **pem, size_t *pem_len,
                                       bool *issued, kjoin_err *err);

/* The certificates of status.certificate (untrusted bytes): PEM
 * CERTIFICATE blocks without headers, each exactly one certificate, with
 * only white space around them. Anything else (a key, other text, escape
 * bytes) refuses the whole answer: what is written is re-encoded from what
 * was parsed, never the bytes received. Errors: KJOIN_E_TRUST. */
kjoin_code kjoin_bootstrap__issued_chain(const char *pem, size_t len, STACK_OF(X509) **out, kjoin_err *err);

#endif
