/* The directory store of a PKI (one of the two behind backend.c): the
 * state file, then each entry's certificate and key, checked against what
 * the state recorded, in the store's current generation; saved back as one
 * new generation. */
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include <kjoin/private/util.h>

#include "pki.h"

#define STATE_FILE KJOIN_CERTS_STATE_FILE
#define MAX_ENTRIES KJOIN_CERTS_MAX_ENTRIES

static const char *where(const pki *p, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", p->where->dir);
    return buf;
}

static void file_names(const entry *e, char *crt, char *key, size_t cap)
{
    snprintf(crt, cap, "%s.crt", e->name);
    snprintf(key, cap, "%s.key", e->name);
}

/* ---- loading and saving ------------------------------------------------ */

/* Reports what the store noticed (a key readable by others). */
static void say_notes(pki *p)
{
    for (size_t i = 0; i < p->store.n_notes; i++)
        kjoin_certs__say(p, "WARNING: %s", p->store.notes[i]);
    p->store.n_notes = 0;
}

/* Loads one entry's files and compares them with what the state recorded. */
static kjoin_code load_files(pki *p, entry *e, kjoin_err *err)
{
    char crt[96], key[96], fp[80];
    file_names(e, crt, key, sizeof(crt));
    char *pem = NULL;
    size_t len = 0;
    kjoin_code rc = kjoin_store__read(&p->store, crt, false, &pem, &len, err);
    if (rc)
        return rc;
    e->certs = kjoin_certs__parse_certs(pem, len);
    free(pem);
    if (!e->certs)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s holds no certificate", p->store.path, crt);
    if ((rc = kjoin_store__read(&p->store, key, true, &pem, &len, err)))
        return rc;
    e->key = kjoin_certs__parse_key(pem, len);
    kjoin_free_wiped(pem, len);
    if (!e->key || X509_check_private_key(kjoin_certs__first(e), e->key) != 1)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s does not hold the key of %s", p->store.path, key, crt);
    kjoin_certs__fingerprint(kjoin_certs__first(e), fp);
    e->changed_outside = strcmp(fp, e->fingerprint) != 0;
    return KJOIN_OK;
}

/* Opens the store and loads the PKI of its current generation. */
static kjoin_code load(pki *p, kjoin_store_mode mode, kjoin_err *err)
{
    const char *dir = p->where->dir;
    char *text = NULL;
    size_t len = 0;
    kjoin_err inner;
    kjoin_code rc = kjoin_store__open(dir, mode, &p->store, err);
    if (rc)
        return rc;
    if (!kjoin_store__has_pki(&p->store))
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s holds no kjoin PKI (run kjoin certs init)", dir);
    if ((rc = kjoin_store__read(&p->store, STATE_FILE, true, &text, &len, err)))
        return rc;
    rc = kjoin_certs__state_parse(text, len, &p->s, p->e, MAX_ENTRIES, &p->n, &inner);
    free(text);
    if (rc)
        return kjoin_err_set(err, rc, "%s/%s: %s", dir, STATE_FILE, inner.msg);
    for (size_t i = 0; !rc && i < p->n; i++)
        rc = load_files(p, &p->e[i], err);
    say_notes(p);
    return rc;
}

static kjoin_code save(pki *p, kjoin_err *err)
{
    kjoin_store_file files[2 * MAX_ENTRIES + 1];
    char names[2 * MAX_ENTRIES][96];
    size_t n = 0;
    kjoin_code rc = KJOIN_OK;
    for (size_t i = 0; i < p->n && !rc; i++) {
        entry *e = &p->e[i];
        file_names(e, names[n], names[n + 1], sizeof(names[0]));
        char *crt = kjoin_certs__pem_certs(e->certs, NULL), *key = kjoin_certs__pem_key(e->key);
        if (!crt || !key)
            rc = kjoin_err_set(err, KJOIN_E_OTHER, "cannot encode %s", e->name);
        files[n] = (kjoin_store_file){names[n], crt, crt ? strlen(crt) : 0, 0644};
        files[n + 1] = (kjoin_store_file){names[n + 1], key, key ? strlen(key) : 0, 0600};
        n += 2;
    }
    char *state = kjoin_certs__state_encode(&p->s, p->e, p->n);
    if (!rc && !state)
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    files[n++] = (kjoin_store_file){STATE_FILE, state, state ? strlen(state) : 0, 0600};
    if (!rc)
        rc = kjoin_store__commit(&p->store, files, n, err);
    for (size_t i = 0; i < n; i++) {
        if (files[i].data && files[i].mode == 0600)
            OPENSSL_cleanse((char *)files[i].data, files[i].len);
        free((char *)files[i].data);
    }
    return rc;
}


/* Checked while holding the lock: a half-made store (a killed init) has no
 * generation yet, and its leftovers are removed by the open. */
static kjoin_code open_new(pki *p, const char *client, kjoin_err *err)
{
    (void)client;
    kjoin_code rc = kjoin_store__open(p->where->dir, KJOIN_STORE_CREATE, &p->store, err);
    if (!rc && kjoin_store__has_pki(&p->store))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s already holds a kjoin PKI; use kjoin certs rotate or issue",
                           p->where->dir);
    return rc;
}

static void close_store(pki *p) { kjoin_store__close(&p->store); }

/* A directory's one ca.crt is the bundle: no leaf is behind it. */
static bool behind(const pki *p, size_t i)
{
    (void)p, (void)i;
    return false;
}

static kjoin_code check_init(const kjoin_certs_store *st, const kjoin_certs_init_opts *o, bool *provided,
                             kjoin_err *err)
{
    *provided = o->ca_cert != NULL;
    return st->ca_secret ? kjoin_err_set(err, KJOIN_E_USAGE, "`ca_secret` needs the Secrets store") : KJOIN_OK;
}

const certs_backend kjoin_certs__dir_backend = {
    .load = load,
    .open_new = open_new,
    .save = save,
    .close = close_store,
    .where = where,
    .behind = behind,
    .check_init = check_init,
    .adopts_changed_ca = false,
    .no_adopt_ca = NULL,
};
