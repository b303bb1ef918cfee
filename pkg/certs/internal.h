#ifndef KJOIN_CERTS_INTERNAL_H
#define KJOIN_CERTS_INTERNAL_H

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <kjoin/private/certs.h>

#include "x509.h"

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
