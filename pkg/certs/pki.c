/* The PKI in memory: loaded from the store (state file, then each entry's
 * certificate and key, checked against what the state recorded) and saved
 * back as one new generation. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include <kjoin/util.h>

#include "pki.h"

#define STATE_FILE KJOIN_CERTS_STATE_FILE
#define MAX_ENTRIES KJOIN_CERTS_MAX_ENTRIES

char *kjoin_certs__hours(int64_t s, char *buf, size_t cap)
{
    return kjoin_duration_format(s * 1000, buf, cap);
}

void kjoin_certs__say(pki *p, const char *fmt, ...)
{
    if (!p->rep || p->rep->n >= KJOIN_CERTS_REPORT_MAX)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->rep->lines[p->rep->n++], sizeof(p->rep->lines[0]), fmt, ap);
    va_end(ap);
}

void kjoin_certs__rfc3339(int64_t t, char *out, size_t cap)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int64_t kjoin_certs__parse_time(const char *rfc3339)
{
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    const char *end = strptime(rfc3339, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return end && !*end ? (int64_t)timegm(&tm) : 0;
}

X509 *kjoin_certs__first(const entry *e) { return sk_X509_value(e->certs, 0); }

entry *kjoin_certs__find(pki *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->e[i].name, name) == 0)
            return &p->e[i];
    return NULL;
}

void kjoin_certs__release(pki *p)
{
    for (size_t i = 0; i < KJOIN_CERTS_MAX_ENTRIES; i++) {
        if (i < p->n)
            kjoin_certs__entry_release(&p->e[i]);
        if (p->sec[i].obj)
            kjoin_certs__secret_release(&p->sec[i]);
        sk_X509_pop_free(p->held_ca[i], X509_free);
        p->held_ca[i] = NULL;
    }
    p->n = 0;
    p->initialised = false;
    p->ca_secret[0] = '\0';
    if (p->where && p->where->dir)
        kjoin_store__close(&p->store);
}

const char *kjoin_certs__where(const pki *p, char *buf, size_t cap)
{
    if (p->where->dir)
        snprintf(buf, cap, "%s", p->where->dir);
    else
        snprintf(buf, cap, "Secrets %s/%s-*", p->where->ns, p->where->prefix);
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
kjoin_code kjoin_certs__load(pki *p, kjoin_store_mode mode, kjoin_err *err)
{
    if (!p->where->dir)
        return kjoin_certs__secrets_load(p, mode, err);
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

kjoin_code kjoin_certs__save(pki *p, kjoin_err *err)
{
    if (!p->where->dir)
        return kjoin_certs__secrets_save(p, err);
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

