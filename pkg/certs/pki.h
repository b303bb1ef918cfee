/* Private to pkg/certs: the PKI in memory, loaded from and saved to the
 * store, shared by the decisions (manager.c) and the readers (read.c). */
#ifndef KJOIN_CERTS_PKI_H
#define KJOIN_CERTS_PKI_H

#include "internal.h"
#include "store.h"

typedef certs_entry entry;

typedef struct pki {
    kjoin_store store;
    kjoin_certs_settings s;
    entry e[KJOIN_CERTS_MAX_ENTRIES];
    size_t n;
    int64_t now;
    kjoin_certs_report *rep; /* NULL for readers */
} pki;

/* Adds a line to the report. */
void kjoin_certs__say(pki *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kjoin_certs__rfc3339(int64_t t, char *out, size_t cap);
char *kjoin_certs__hours(int64_t s, char *buf, size_t cap);
X509 *kjoin_certs__first(const entry *e);
entry *kjoin_certs__find(pki *p, const char *name);
/* Releases the entries and closes the store. */
void kjoin_certs__release(pki *p);
/* Opens the store and loads the PKI of its current generation.
 * Errors: KJOIN_E_USAGE (no PKI, refused store, malformed files), ... */
kjoin_code kjoin_certs__load(pki *p, const char *dir, kjoin_store_mode mode, kjoin_err *err);
/* Writes the whole PKI as a new generation. Errors: KJOIN_E_OUTPUT, KJOIN_E_OTHER. */
kjoin_code kjoin_certs__save(pki *p, kjoin_err *err);

/* Decisions (manager.c) that the readers report. */
bool kjoin_certs__not_yet_valid(const pki *p, const entry *e);
bool kjoin_certs__is_due(const pki *p, const entry *e);

#endif
