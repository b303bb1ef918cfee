/* Private to pkg/certs: the PKI in memory, loaded from and saved to the
 * store, shared by the decisions (manager.c) and the readers (read.c). */
#ifndef KJOIN_CERTS_PKI_H
#define KJOIN_CERTS_PKI_H

#include "internal.h"
#include "secret.h"
#include "store.h"

typedef certs_entry entry;

typedef struct pki {
    const kjoin_certs_store *where;
    kjoin_store store;                 /* the directory store */
    /* The Secrets store: each entry's Secret as read (obj NULL: none yet)
     * and, for a leaf, the ca.crt it held, parsed; the user's CA Secret. */
    certs_secret sec[KJOIN_CERTS_MAX_ENTRIES];
    STACK_OF(X509) *held_ca[KJOIN_CERTS_MAX_ENTRIES];
    char ca_secret[SECRET_NAME_MAX];
    bool initialised;                  /* the node Secret (settings and index) exists */
    kjoin_certs_settings s;
    entry e[KJOIN_CERTS_MAX_ENTRIES];
    size_t n;
    int64_t now;
    kjoin_certs_report *rep; /* NULL for readers */
} pki;

/* Adds a line to the report. */
void kjoin_certs__say(pki *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kjoin_certs__rfc3339(int64_t t, char *out, size_t cap);
/* The Unix time of "YYYY-MM-DDTHH:MM:SSZ"; 0 when malformed. */
int64_t kjoin_certs__parse_time(const char *rfc3339);
char *kjoin_certs__hours(int64_t s, char *buf, size_t cap);
X509 *kjoin_certs__first(const entry *e);
entry *kjoin_certs__find(pki *p, const char *name);
/* Releases the entries and closes the store. */
void kjoin_certs__release(pki *p);
/* Opens the store (p->where) and loads the PKI of its current generation.
 * Errors: KJOIN_E_USAGE (no PKI, refused store, malformed files), ... */
kjoin_code kjoin_certs__load(pki *p, kjoin_store_mode mode, kjoin_err *err);
/* Writes the whole PKI as a new generation. Errors: KJOIN_E_OUTPUT, KJOIN_E_OTHER. */
kjoin_code kjoin_certs__save(pki *p, kjoin_err *err);
/* "DIR" or "Secrets NS/PREFIX-*", for messages. */
const char *kjoin_certs__where(const pki *p, char *buf, size_t cap);

/* ---- secrets.c: the Secrets store ---- */

/* Loads the Secrets. For init (mode CREATE) a missing Secret is not an
 * error: what exists is loaded, to be reused or replaced. Errors:
 * KJOIN_E_USAGE (no PKI, malformed or foreign Secrets), KJOIN_E_API,
 * KJOIN_E_TIMEOUT, KJOIN_E_TRUST, KJOIN_E_OTHER. */
kjoin_code kjoin_certs__secrets_load(pki *p, kjoin_store_mode mode, kjoin_err *err);
/* Init: loads the Secret of entry name that a killed init may have left
 * (none is no error). Errors as kjoin_certs__secrets_load. */
kjoin_code kjoin_certs__secrets_load_leftover(pki *p, const char *name, kjoin_err *err);
/* Whether the leaf e[i]'s Secret held a ca.crt without the current CA: a
 * CA rotation that has not reached it yet (a killed run, a CA replaced by
 * hand). Always false in a directory, whose one ca.crt is the bundle. */
bool kjoin_certs__behind(const pki *p, size_t i);
/* Writes each Secret whose content changed: the CA, the leaves, the node
 * Secret (which holds the settings and the index) last, each a
 * compare-and-swap. Errors: KJOIN_E_TRANSIENT (someone else wrote one
 * first: read again and decide again), KJOIN_E_API, ... */
kjoin_code kjoin_certs__secrets_save(pki *p, kjoin_err *err);
/* The Secret object an entry is stored as (old: as read, or NULL). */
json_object *kjoin_certs__entry_secret(pki *p, size_t i, const char *ns, const char *prefix, const certs_secret *old,
                                       kjoin_err *err);

/* Decisions (manager.c) that the readers report. */
bool kjoin_certs__not_yet_valid(const pki *p, const entry *e);
bool kjoin_certs__is_due(const pki *p, const entry *e);

#endif
