/* Private to pkg/certs: the PKI in memory and the entry helpers every file
 * shares (pki.c), and the table the two stores of a PKI fill (backend.c
 * picks one; dirstore.c and secrets.c are they). The decisions (manager.c)
 * and the readers (read.c) ask the table, never which store it is. */
#ifndef KJOIN_CERTS_PKI_H
#define KJOIN_CERTS_PKI_H

#include "internal.h"
#include "secret.h"
#include "store.h"

typedef certs_entry entry;
typedef struct certs_backend certs_backend;

typedef struct pki {
    const kjoin_certs_store *where;
    const certs_backend *be;           /* the store's backend (kjoin_certs__begin) */
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
    bool ca_saved;           /* this run's CA Secret was written (a later write may still lose a race) */
} pki;

/* Adds a line to the report. */
void kjoin_certs__say(pki *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kjoin_certs__rfc3339(int64_t t, char *out, size_t cap);
/* The Unix time of "YYYY-MM-DDTHH:MM:SSZ"; 0 when malformed. */
int64_t kjoin_certs__parse_time(const char *rfc3339);
char *kjoin_certs__hours(int64_t s, char *buf, size_t cap);
X509 *kjoin_certs__first(const entry *e);
entry *kjoin_certs__find(pki *p, const char *name);
/* Releases the entries. */
void kjoin_certs__release(pki *p);

/* ---- backend.c: one store of a PKI ---- */

struct certs_backend {
    /* Loads the PKI of the store's current generation. Errors:
     * KJOIN_E_USAGE (no PKI, refused store, malformed or foreign data),
     * KJOIN_E_API, KJOIN_E_TIMEOUT, KJOIN_E_TRUST, KJOIN_E_OTHER. */
    kjoin_code (*load)(pki *p, kjoin_store_mode mode, kjoin_err *err);
    /* Opens the store for a new PKI (init): an existing PKI is refused,
     * or, where a killed init can leave half of one (p->initialised
     * then), loaded to be finished; so is what it left of client. */
    kjoin_code (*open_new)(pki *p, const char *client, kjoin_err *err);
    /* Writes the whole PKI (a new generation, or each changed object).
     * Errors: KJOIN_E_TRANSIENT (someone else wrote first: read again and
     * decide again), KJOIN_E_OUTPUT, KJOIN_E_API, KJOIN_E_OTHER. */
    kjoin_code (*save)(pki *p, kjoin_err *err);
    /* Releases what load or open_new holds of the store. */
    void (*close)(pki *p);
    /* "DIR" or "Secrets NS/PREFIX-*", for messages. */
    const char *(*where)(const pki *p, char *buf, size_t cap);
    /* Whether the leaf e[i] holds a CA bundle without the current CA: a CA
     * rotation that has not reached it yet. */
    bool (*behind)(const pki *p, size_t i);
    /* init's options this store takes; *provided: the user gives the CA.
     * Errors: KJOIN_E_USAGE. */
    kjoin_code (*check_init)(const kjoin_certs_store *st, const kjoin_certs_init_opts *o, bool *provided,
                             kjoin_err *err);
    /* A CA changed outside kjoin is adopted by a rotation (the RFC's "new
     * CA" case in Secrets); false: it is refused until adopted by name. */
    bool adopts_changed_ca;
    /* Why adopt-ca does not apply to this store; NULL: it does. */
    const char *no_adopt_ca;
};

extern const certs_backend kjoin_certs__dir_backend;
extern const certs_backend kjoin_certs__secrets_backend;

/* The backend of st, once st is checked (kjoin_certs_store_check). */
const certs_backend *kjoin_certs__backend(const kjoin_certs_store *st);
/* Starts a run on st: *p zeroed, its store checked and its backend chosen.
 * Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_certs__begin(pki *p, const kjoin_certs_store *st, int64_t now, kjoin_certs_report *rep,
                              kjoin_err *err);
/* Ends a run: the store closed, the entries released. */
void kjoin_certs__end(pki *p);

/* ---- secrets.c: the Secret an entry is stored as ---- */

/* The Secret object an entry is stored as (old: as read, or NULL). */
json_object *kjoin_certs__entry_secret(pki *p, size_t i, const char *ns, const char *prefix, const certs_secret *old,
                                       kjoin_err *err);

/* Decisions (manager.c) that the readers report. */
bool kjoin_certs__not_yet_valid(const pki *p, const entry *e);
bool kjoin_certs__is_due(const pki *p, const entry *e);

#endif
