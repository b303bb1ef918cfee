/* The x509 helpers of pkg/certs (x509.c): keys, certificates as kubeadm
 * and the certificate manager issue them, PEM in and out. Shared with the
 * control-plane join and the TLS bootstrap through this header alone. */
#ifndef KJOIN_CERTS_X509_H
#define KJOIN_CERTS_X509_H

#include <stdbool.h>
#include <stdint.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <kjoin/private/certs.h>

/* What a certificate is for. */
typedef enum cert_kind { CERT_CA, CERT_NODE, CERT_SERVER, CERT_CLIENT } cert_kind;

typedef struct cert_request {
    cert_kind kind;
    const char *cn;
    const char *const *orgs; /* O=, for client groups */
    size_t n_orgs;
    const char *const *sans; /* DNS names or IP addresses, for nodes */
    size_t n_sans;
    int64_t not_before, not_after; /* Unix seconds */
    bool no_sub_ca;                /* a CA: pathlen:0, it signs no further CA */
    bool go_subject;               /* O= before CN=, as Go's x509 orders a subject */
    bool no_basic_constraints;     /* a leaf without CA:FALSE (kubeadm before 1.21 wrote none) */
    bool key_encipherment;         /* a leaf with keyEncipherment whatever its key (kubeadm's, every type);
                                    * else only an RSA key's */
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
/* The public keys of key and, unless NULL, more, as PEM. */
char *kjoin_certs__pem_public(EVP_PKEY *key, EVP_PKEY *more);
STACK_OF(X509) *kjoin_certs__parse_certs(const char *pem, size_t len);
EVP_PKEY *kjoin_certs__parse_key(const char *pem, size_t len);
/* Whether s may be a subject alternative name: an IPv4 or IPv6 address, or
 * a DNS name (no wildcard, no prefix, no comma). */
bool kjoin_certs__san_valid(const char *s);
#define KJOIN_CERTS_MAX_SANS 16
/* Whether issuer signed x (names, key ids and signature). */
bool kjoin_certs__issued_by(X509 *issuer, X509 *x);
/* "CN=...,O=..." of x's subject into out. */
void kjoin_certs__subject(X509 *x, char *out, size_t cap);

#endif
