#ifndef KJOIN_CERTS_INTERNAL_H
#define KJOIN_CERTS_INTERNAL_H

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <kjoin/certs.h>

/* ---- x509.c: keys and certificates ---- */

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

/* ---- userca.c: a CA the user provides ---- */

/* Reads the CA certificate (first, with its chain) at crt and its key at
 * key. The key file must be owned by this user or root and writable by no
 * one else; *key_shared says it is readable by others. Errors:
 * KJOIN_E_USAGE. The caller frees *certs and *pkey in any case. */
kjoin_code kjoin_certs__read_ca(const char *crt, const char *key, STACK_OF(X509) **certs, EVP_PKEY **pkey,
                                bool *key_shared, kjoin_err *err);

/* ---- state.c: the state file (kjoin-certs.json), untrusted input ---- */

#define KJOIN_CERTS_STATE_FILE "kjoin-certs.json"
#define KJOIN_CERTS_MAX_ENTRIES 32
#define KJOIN_CERTS_MAX_NAMES 16

/* One certificate of the PKI: what the state records, and its files. */
typedef struct certs_entry {
    char name[80]; /* "ca", "node", "node.<name>", "client.<user>" */
    cert_kind kind;
    STACK_OF(X509) *certs; /* the CA bundle, or the one leaf */
    EVP_PKEY *key;
    char created[32];
    int64_t duration;
    char fingerprint[80], ca_fingerprint[80];
    bool needs_regen, user_provided, changed_outside;
    char *names[KJOIN_CERTS_MAX_NAMES]; /* SANs (node) or groups (client) */
    size_t n_names;
    char user[64];
} certs_entry;

/* Whether name is one of kjoin's entry names ("ca", "node", "node.<n>",
 * "client.<u>", n and u of letters, digits, '-' and '_'); sets its kind and,
 * for a client, its user. */
bool kjoin_certs__entry_name(const char *name, cert_kind *kind, char user[64]);
/* Whether s may be a node or user name (letters, digits, '-', '_', at most 48). */
bool kjoin_certs__name_valid(const char *s);

/* Parses the state: settings, and the entries' records (not their files).
 * Every field is checked for type and range; a malformed file is refused
 * naming the field. Release the entries with kjoin_certs__entry_release.
 * Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_certs__state_parse(const char *text, size_t len, kjoin_certs_settings *settings, certs_entry *entries,
                                    size_t cap, size_t *n, kjoin_err *err);
/* The settings alone (the Secrets store keeps them in an annotation): JSON
 * text, checked as the state file's. Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_certs__settings_parse(const char *text, size_t len, kjoin_certs_settings *settings, kjoin_err *err);
char *kjoin_certs__settings_encode(const kjoin_certs_settings *settings);
/* Whether s is "sha256:" and 64 lowercase hex digits. */
bool kjoin_certs__fingerprint_valid(const char *s);
/* The state as JSON text; newly-allocated, NULL when out of memory. */
char *kjoin_certs__state_encode(const kjoin_certs_settings *settings, const certs_entry *entries, size_t n);
void kjoin_certs__entry_release(certs_entry *e);

#endif
