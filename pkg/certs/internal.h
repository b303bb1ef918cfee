#ifndef KJOIN_CERTS_INTERNAL_H
#define KJOIN_CERTS_INTERNAL_H

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <kjoin/certs.h>

/* ---- x509.c: keys and certificates ---- */

/* What a certificate is for. */
typedef enum cert_kind { CERT_CA, CERT_NODE, CERT_CLIENT } cert_kind;

typedef struct cert_request {
    cert_kind kind;
    const char *cn;
    const char *const *orgs; /* O=, for client groups */
    size_t n_orgs;
    const char *const *sans; /* DNS names or IP addresses, for nodes */
    size_t n_sans;
    int64_t not_before, not_after; /* Unix seconds */
} cert_request;

EVP_PKEY *kjoin_certs__new_key(kjoin_key_type type, kjoin_err *err);
/* Issues a certificate for key; self-signed when issuer is NULL. */
X509 *kjoin_certs__issue(const cert_request *req, EVP_PKEY *key, X509 *issuer, EVP_PKEY *issuer_key, kjoin_err *err);
int64_t kjoin_certs__not_after(const X509 *x);
int64_t kjoin_certs__not_before(const X509 *x);
/* "sha256:<hex>" of the DER of x. */
void kjoin_certs__fingerprint(X509 *x, char out[80]);
/* PEM text of certificates and keys; newly-allocated. */
char *kjoin_certs__pem_certs(STACK_OF(X509) *certs, X509 *one);
char *kjoin_certs__pem_key(EVP_PKEY *key);
STACK_OF(X509) *kjoin_certs__parse_certs(const char *pem, size_t len);
EVP_PKEY *kjoin_certs__parse_key(const char *pem, size_t len);
/* Whether issuer signed x (names, key ids and signature). */
bool kjoin_certs__issued_by(X509 *issuer, X509 *x);

#endif
