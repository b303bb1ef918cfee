/* The certificate manager: the PKI in memory (entries loaded from DIR and
 * its state file), the RFC's rules, and what init, issue and rotate do. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#include <json-c/json.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <kjoin/util.h>

#include "internal.h"
#include "store.h"

#define STATE_FILE KJOIN_CERTS_STATE_FILE
#define MAX_ENTRIES KJOIN_CERTS_MAX_ENTRIES
#define MAX_NAMES KJOIN_CERTS_MAX_NAMES
#define HOUR 3600

typedef certs_entry entry;

typedef struct pki {
    kjoin_store store;
    kjoin_certs_settings s;
    entry e[MAX_ENTRIES];
    size_t n;
    int64_t now;
    kjoin_certs_report *rep;
} pki;

kjoin_certs_settings kjoin_certs_defaults(void)
{
    return (kjoin_certs_settings){.ca_duration = 87600 * HOUR, .ca_window = 17520 * HOUR,
                                  .node_duration = 8760 * HOUR, .node_window = 168 * HOUR,
                                  .client_duration = 8760 * HOUR, .client_window = 168 * HOUR};
}

static char *hours(int64_t s, char *buf, size_t cap)
{
    return kjoin_duration_format(s * 1000, buf, cap);
}

/* One rule: value must not be less than the minimum. */
static kjoin_code at_least(const char *what, int64_t value, int64_t minimum, kjoin_err *err)
{
    if (value >= minimum)
        return KJOIN_OK;
    char v[32], m[32], d[32];
    return kjoin_err_set(err, KJOIN_E_USAGE, "%s (%s) must not be less than the minimum duration (%s): short by %s",
                         what, hours(value, v, sizeof(v)), hours(minimum, m, sizeof(m)),
                         hours(minimum - value, d, sizeof(d)));
}

kjoin_code kjoin_certs_validate(kjoin_certs_settings *s, bool user_ca, kjoin_err *err)
{
    struct {
        const char *name;
        int64_t duration, window;
    } pairs[] = {{"CA", s->ca_duration, s->ca_window},
                 {"node", s->node_duration, s->node_window},
                 {"client", s->client_duration, s->client_window}};
    for (size_t i = user_ca ? 1 : 0; i < 3; i++)
        if (pairs[i].window <= 0 || pairs[i].duration <= pairs[i].window)
            return kjoin_err_set(err, KJOIN_E_USAGE, "the %s expiry window must be positive and shorter than the %s duration",
                                 pairs[i].name, pairs[i].name);
    int64_t node = s->node_duration - s->node_window, client = s->client_duration - s->client_window;
    if (s->minimum == 0)
        s->minimum = node < client ? node : client;
    kjoin_code rc = KJOIN_OK;
    if (!user_ca && !(rc = at_least("the CA expiry window", s->ca_window, s->minimum, err)))
        rc = at_least("the CA duration minus its expiry window", s->ca_duration - s->ca_window, s->minimum, err);
    if (!rc)
        rc = at_least("the node duration minus its expiry window", node, s->minimum, err);
    if (!rc)
        rc = at_least("the client duration minus its expiry window", client, s->minimum, err);
    return rc;
}

__attribute__((format(printf, 2, 3))) static void say(pki *p, const char *fmt, ...)
{
    if (!p->rep || p->rep->n >= KJOIN_CERTS_REPORT_MAX)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->rep->lines[p->rep->n++], sizeof(p->rep->lines[0]), fmt, ap);
    va_end(ap);
}

static void rfc3339(int64_t t, char *out, size_t cap)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static X509 *first(const entry *e) { return sk_X509_value(e->certs, 0); }

static entry *find(pki *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->e[i].name, name) == 0)
            return &p->e[i];
    return NULL;
}

static void pki_release(pki *p)
{
    for (size_t i = 0; i < p->n; i++)
        kjoin_certs__entry_release(&p->e[i]);
    p->n = 0;
    kjoin_store__close(&p->store);
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
        say(p, "WARNING: %s", p->store.notes[i]);
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
    OPENSSL_cleanse(pem, len);
    free(pem);
    if (!e->key || X509_check_private_key(first(e), e->key) != 1)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s does not hold the key of %s", p->store.path, key, crt);
    kjoin_certs__fingerprint(first(e), fp);
    e->changed_outside = strcmp(fp, e->fingerprint) != 0;
    return KJOIN_OK;
}

/* Opens the store and loads the PKI of its current generation. */
static kjoin_code load(pki *p, const char *dir, kjoin_store_mode mode, kjoin_err *err)
{
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

/* ---- decisions ---------------------------------------------------------- */

static int64_t window_of(const pki *p, const entry *e)
{
    return e->kind == CERT_CA ? p->s.ca_window : e->kind == CERT_NODE ? p->s.node_window : p->s.client_window;
}

static int64_t duration_of(const pki *p, const entry *e)
{
    return e->kind == CERT_CA ? p->s.ca_duration : e->kind == CERT_NODE ? p->s.node_duration : p->s.client_duration;
}

static bool not_yet_valid(const pki *p, const entry *e) { return p->now < kjoin_certs__not_before(first(e)); }

/* Due when now is inside the expiry window, it would expire before the next
 * run, or it is not valid yet (clock skew, or issued under a later clock). */
static bool is_due(const pki *p, const entry *e)
{
    int64_t na = kjoin_certs__not_after(first(e));
    return p->now >= na - window_of(p, e) || na < p->now + p->s.minimum || not_yet_valid(p, e);
}

static void stamp(pki *p, entry *e)
{
    rfc3339(p->now, e->created, sizeof(e->created));
    kjoin_certs__fingerprint(first(e), e->fingerprint);
    e->changed_outside = false;
}

/* Issues e's leaf anew under the current CA (the bundle's first certificate),
 * never past the CA's notAfter. */
static kjoin_code reissue(pki *p, entry *e, const char *why, kjoin_err *err)
{
    entry *ca = find(p, "ca");
    X509 *ca_cert = first(ca);
    int64_t not_after = p->now + duration_of(p, e), ca_end = kjoin_certs__not_after(ca_cert);
    char when[32], cn[80];
    if (not_after > ca_end) {
        not_after = ca_end;
        rfc3339(ca_end, when, sizeof(when));
        say(p, "%s: shortened to end with its CA at %s (rotate the CA to issue full-length certificates)", e->name, when);
    }
    snprintf(cn, sizeof(cn), "%s", e->kind == CERT_NODE ? "node" : e->user);
    cert_request req = {.kind = e->kind, .cn = cn, .orgs = e->kind == CERT_CLIENT ? (const char *const *)e->names : NULL,
                        .n_orgs = e->kind == CERT_CLIENT ? e->n_names : 0,
                        .sans = e->kind == CERT_NODE ? (const char *const *)e->names : NULL,
                        .n_sans = e->kind == CERT_NODE ? e->n_names : 0, .not_before = p->now, .not_after = not_after};
    EVP_PKEY *key = kjoin_certs__new_key(p->s.key_type, err);
    X509 *x = key ? kjoin_certs__issue(&req, key, ca_cert, ca->key, err) : NULL;
    if (!x) {
        EVP_PKEY_free(key);
        return err ? err->code : KJOIN_E_OTHER;
    }
    STACK_OF(X509) *certs = sk_X509_new_null();
    if (!certs || !sk_X509_push(certs, x)) {
        sk_X509_free(certs);
        X509_free(x);
        EVP_PKEY_free(key);
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    sk_X509_pop_free(e->certs, X509_free);
    EVP_PKEY_free(e->key);
    e->certs = certs;
    e->key = key;
    e->duration = not_after - p->now;
    e->needs_regen = false;
    snprintf(e->ca_fingerprint, sizeof(e->ca_fingerprint), "%s", ca->fingerprint);
    stamp(p, e);
    rfc3339(not_after, when, sizeof(when));
    say(p, "%s: issued (%s), valid until %s", e->name, why, when);
    p->rep->changed = true;
    if (e->kind == CERT_NODE)
        p->rep->restart_nodes = true;
    else
        p->rep->reload_clients = true;
    return KJOIN_OK;
}

static kjoin_code new_ca(pki *p, entry *ca, kjoin_err *err)
{
    char cn[64];
    snprintf(cn, sizeof(cn), "kjoin-ca@%lld", (long long)p->now);
    cert_request req = {.kind = CERT_CA, .cn = cn, .not_before = p->now, .not_after = p->now + p->s.ca_duration};
    EVP_PKEY *key = kjoin_certs__new_key(p->s.key_type, err);
    X509 *x = key ? kjoin_certs__issue(&req, key, NULL, NULL, err) : NULL;
    if (!x) {
        EVP_PKEY_free(key);
        return err ? err->code : KJOIN_E_OTHER;
    }
    if (!ca->certs)
        ca->certs = sk_X509_new_null();
    if (!ca->certs || !sk_X509_unshift(ca->certs, x)) { /* the new CA first, the old ones after it */
        X509_free(x);
        EVP_PKEY_free(key);
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    EVP_PKEY_free(ca->key);
    ca->key = key;
    ca->duration = p->s.ca_duration;
    stamp(p, ca);
    return KJOIN_OK;
}

/* Drops managed CAs that have expired and that no leaf chains to. */
static void prune_bundle(pki *p, entry *ca)
{
    for (int i = sk_X509_num(ca->certs) - 1; i >= 1; i--) {
        X509 *old = sk_X509_value(ca->certs, i);
        if (kjoin_certs__not_after(old) > p->now || X509_check_issued(old, old) != X509_V_OK)
            continue;
        bool used = false;
        for (size_t j = 0; j < p->n && !used; j++)
            used = p->e[j].kind != CERT_CA && kjoin_certs__issued_by(old, first(&p->e[j]));
        if (used)
            continue;
        char fp[80];
        kjoin_certs__fingerprint(old, fp);
        say(p, "ca: dropped an expired CA from the bundle (%s)", fp);
        X509_free(sk_X509_delete(ca->certs, i));
        p->rep->changed = true;
        p->rep->restart_nodes = p->rep->reload_clients = true;
    }
    ERR_clear_error();
}

kjoin_code kjoin_certs_rotate(const char *dir, int64_t now, bool dry_run, kjoin_certs_report *report, kjoin_err *err)
{
    pki p = {.now = now, .rep = report};
    memset(report, 0, sizeof(*report));
    kjoin_code rc = load(&p, dir, KJOIN_STORE_WRITE, err);
    entry *ca = rc ? NULL : find(&p, "ca");
    bool ca_rotated = false;
    char when[32];
    if (ca && ca->changed_outside) {
        /* A CA is adopted only when asked (adopt-ca), never as a side effect. */
        rc = kjoin_err_set(err, KJOIN_E_USAGE,
                           "%s: ca.crt is not the CA kjoin recorded (%s): it was changed outside kjoin. Restore it, or "
                           "adopt a new CA explicitly with kjoin certs adopt-ca", dir, ca->fingerprint);
    } else if (ca && is_due(&p, ca)) {
        bool early = not_yet_valid(&p, ca);
        rfc3339(kjoin_certs__not_after(first(ca)), when, sizeof(when));
        if (ca->user_provided) {
            say(&p, "ca: WARNING: the CA you provided expires at %s; kjoin never replaces it: install a new one", when);
        } else if (!(rc = new_ca(&p, ca, err))) {
            say(&p, "ca: rotated (%s%s): ca.crt now holds the new CA followed by the old one",
                early ? "the old one is not valid yet; it would have expired " : "expires ", when);
            ca_rotated = true;
            report->changed = report->restart_nodes = report->reload_clients = true;
        }
    }
    for (size_t i = 0; !rc && ca && i < p.n; i++) {
        entry *e = &p.e[i];
        if (e->kind == CERT_CA)
            continue;
        if (ca_rotated) {
            /* Reissued on the next run, once every peer trusts the new CA. */
            if (!e->needs_regen)
                say(&p, "%s: marked needsRegeneration (reissued on the next run)", e->name);
            e->needs_regen = true;
            continue;
        }
        const char *why = e->changed_outside ? "changed outside kjoin"
                          : e->needs_regen ? "needsRegeneration after a CA rotation"
                          : strcmp(e->ca_fingerprint, ca->fingerprint) != 0 ? "issued under another CA"
                          : not_yet_valid(&p, e) ? "not valid yet (its notBefore is after now)"
                          : is_due(&p, e) ? "due: inside its expiry window or expiring before the next run"
                          : NULL;
        if (why)
            rc = reissue(&p, e, why, err);
    }
    if (!rc && ca && !ca->user_provided)
        prune_bundle(&p, ca);
    if (!rc && report->changed && !dry_run)
        rc = save(&p, err);
    if (!rc && !report->changed)
        say(&p, "nothing to do");
    pki_release(&p);
    return rc;
}

/* ---- init and issue ------------------------------------------------------ */

static kjoin_code add_leaf(pki *p, cert_kind kind, const char *name, const char *user, const char *const *names,
                           size_t n_names, kjoin_err *err)
{
    entry *e = find(p, name);
    if (!e) {
        if (p->n == MAX_ENTRIES)
            return kjoin_err_set(err, KJOIN_E_USAGE, "too many certificates");
        e = &p->e[p->n++];
    } else {
        say(p, "%s: replacing the existing certificate", name);
        for (size_t j = 0; j < e->n_names; j++)
            free(e->names[j]);
        e->n_names = 0;
    }
    snprintf(e->name, sizeof(e->name), "%s", name);
    snprintf(e->user, sizeof(e->user), "%s", user ? user : "");
    e->kind = kind;
    for (size_t j = 0; j < n_names && e->n_names < MAX_NAMES; j++)
        if (!(e->names[e->n_names++] = strdup(names[j])))
            return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    return reissue(p, e, "new", err);
}

/* Each name a DNS name or an IP address, at most max of them. */
static kjoin_code check_sans(const char *const *sans, size_t n, size_t max, kjoin_err *err)
{
    if (n > max)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%zu subject alternative names given: at most %zu", n, max);
    for (size_t i = 0; i < n; i++)
        if (!kjoin_certs__san_valid(sans[i]))
            return kjoin_err_set(err, KJOIN_E_USAGE,
                                 "subject alternative name \"%.80s\" is neither a DNS name nor an IP address (one "
                                 "name a value: no commas, prefixes or wildcards)", sans[i]);
    return KJOIN_OK;
}

static kjoin_code check_groups(const char *const *groups, size_t n, kjoin_err *err)
{
    if (n > MAX_NAMES)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%zu groups given: at most %d", n, MAX_NAMES);
    for (size_t i = 0; i < n; i++)
        if (!*groups[i] || strlen(groups[i]) > 64)
            return kjoin_err_set(err, KJOIN_E_USAGE, "group %zu is empty or longer than 64 characters", i + 1);
    return KJOIN_OK;
}

/* A CA key given by path gets the store's rule: owned by this user or root,
 * writable by no one else; readable by others is reported. */
static kjoin_code check_key_file(pki *p, const char *path, kjoin_err *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "cannot open %s: %s", path, strerror(errno));
    if (st.st_uid != geteuid() && st.st_uid != 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the CA key %s is owned by uid %u, not by this user or root", path,
                             (unsigned)st.st_uid);
    if (st.st_mode & 022)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the CA key %s is writable by group or others (mode %04o): chmod "
                                                 "go-w it", path, (unsigned)(st.st_mode & 07777));
    if (st.st_mode & 077)
        say(p, "WARNING: the CA key %s is readable by group or others (mode %04o): chmod 600 it", path,
            (unsigned)(st.st_mode & 07777));
    return KJOIN_OK;
}

/* Loads a CA the user provides: its certificate (and chain) and key. */
static kjoin_code user_ca(pki *p, entry *ca, const char *crt, const char *key, kjoin_err *err)
{
    char *pem = NULL;
    size_t len = 0;
    kjoin_code rc = kjoin_file_read(crt, 4 * 1024 * 1024, &pem, &len, err);
    if (rc)
        return rc;
    ca->certs = kjoin_certs__parse_certs(pem, len);
    free(pem);
    if ((rc = check_key_file(p, key, err)) || (rc = kjoin_file_read(key, 1024 * 1024, &pem, &len, err)))
        return rc;
    ca->key = kjoin_certs__parse_key(pem, len);
    OPENSSL_cleanse(pem, len);
    free(pem);
    if (!ca->certs || X509_check_ca(first(ca)) < 1)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s holds no CA certificate", crt);
    if (!ca->key || X509_check_private_key(first(ca), ca->key) != 1)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s is not the key of the CA in %s", key, crt);
    ca->user_provided = true;
    ca->duration = kjoin_certs__not_after(first(ca)) - kjoin_certs__not_before(first(ca));
    stamp(p, ca);
    say(p, "ca: using the CA you provided (%d certificate(s) with its chain); kjoin will never replace it",
        sk_X509_num(ca->certs));
    return KJOIN_OK;
}

kjoin_code kjoin_certs_init(const char *dir, const kjoin_certs_init_opts *o, int64_t now, kjoin_certs_report *report,
                            kjoin_err *err)
{
    pki p = {.now = now, .rep = report, .s = o->settings};
    memset(report, 0, sizeof(*report));
    const char *user = o->user ? o->user : "root";
    char client[80];
    kjoin_code rc = kjoin_certs_validate(&p.s, o->ca_cert != NULL, err);
    if (!rc && (!!o->ca_cert != !!o->ca_key))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "give `ca_cert` and `ca_key` together");
    if (!rc && !kjoin_certs__name_valid(user))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "invalid user \"%.64s\": use letters, digits, '-' and '_'", user);
    if (!rc)
        rc = check_sans(o->sans, o->n_sans, MAX_NAMES - 3, err);
    if (rc)
        return rc;
    /* Checked while holding the lock: a half-made store (a killed init) has
     * no generation yet, and its leftovers are removed by the open. */
    rc = kjoin_store__open(dir, KJOIN_STORE_CREATE, &p.store, err);
    if (!rc && kjoin_store__has_pki(&p.store))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s already holds a kjoin PKI; use kjoin certs rotate or issue", dir);
    if (rc) {
        pki_release(&p);
        return rc;
    }
    entry *ca = &p.e[p.n++];
    snprintf(ca->name, sizeof(ca->name), "ca");
    ca->kind = CERT_CA;
    if (!rc && o->ca_cert)
        rc = user_ca(&p, ca, o->ca_cert, o->ca_key, err);
    else if (!rc && !(rc = new_ca(&p, ca, err)))
        say(&p, "ca: created a self-signed CA");
    const char *sans[MAX_NAMES] = {"localhost", "127.0.0.1", "::1"};
    size_t n_sans = 3;
    for (size_t i = 0; i < o->n_sans && n_sans < MAX_NAMES; i++)
        sans[n_sans++] = o->sans[i];
    snprintf(client, sizeof(client), "client.%s", user);
    if (!rc)
        rc = add_leaf(&p, CERT_NODE, "node", NULL, sans, n_sans, err);
    if (!rc)
        rc = add_leaf(&p, CERT_CLIENT, client, user, NULL, 0, err);
    if (!rc)
        rc = save(&p, err);
    pki_release(&p);
    return rc;
}

kjoin_code kjoin_certs_adopt_ca(const char *dir, const char *ca_cert, const char *ca_key, int64_t now,
                                kjoin_certs_report *report, kjoin_err *err)
{
    pki p = {.now = now, .rep = report};
    entry fresh = {.kind = CERT_CA};
    memset(report, 0, sizeof(*report));
    kjoin_code rc = load(&p, dir, KJOIN_STORE_WRITE, err);
    entry *ca = rc ? NULL : find(&p, "ca");
    if (!rc)
        rc = user_ca(&p, &fresh, ca_cert, ca_key, err);
    /* The adopted CA first, then every CA before it, so peers trust both
     * until the leaves are reissued. */
    for (int i = 0; !rc && i < sk_X509_num(ca->certs); i++) {
        X509 *old = sk_X509_value(ca->certs, i);
        if (X509_up_ref(old) != 1 || !sk_X509_push(fresh.certs, old))
            rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    if (!rc) {
        sk_X509_pop_free(ca->certs, X509_free);
        EVP_PKEY_free(ca->key);
        ca->certs = fresh.certs, ca->key = fresh.key, fresh.certs = NULL, fresh.key = NULL;
        ca->user_provided = true;
        ca->duration = fresh.duration;
        stamp(&p, ca);
        say(&p, "ca: adopted %s (%s) as the CA; ca.crt holds it followed by the previous CA(s)", ca_cert,
            ca->fingerprint);
        for (size_t i = 0; i < p.n; i++)
            if (p.e[i].kind != CERT_CA && !p.e[i].needs_regen) {
                p.e[i].needs_regen = true;
                say(&p, "%s: marked needsRegeneration (reissued under the adopted CA on the next rotate)",
                    p.e[i].name);
            }
        report->changed = report->restart_nodes = report->reload_clients = true;
        rc = save(&p, err);
    }
    kjoin_certs__entry_release(&fresh);
    pki_release(&p);
    return rc;
}

static kjoin_code issue(const char *dir, cert_kind kind, const char *name, const char *const *names, size_t n,
                        int64_t now, kjoin_certs_report *report, kjoin_err *err)
{
    pki p = {.now = now, .rep = report};
    memset(report, 0, sizeof(*report));
    if (!kjoin_certs__name_valid(name))
        return kjoin_err_set(err, KJOIN_E_USAGE, "invalid name \"%.64s\": use letters, digits, '-' and '_'", name);
    kjoin_code rc = kind == CERT_NODE ? check_sans(names, n, MAX_NAMES, err) : check_groups(names, n, err);
    if (rc)
        return rc;
    char entry_name[80];
    snprintf(entry_name, sizeof(entry_name), kind == CERT_NODE ? "node.%s" : "client.%s", name);
    rc = load(&p, dir, KJOIN_STORE_WRITE, err);
    if (!rc)
        rc = add_leaf(&p, kind, entry_name, kind == CERT_CLIENT ? name : NULL, names, n, err);
    if (!rc)
        rc = save(&p, err);
    pki_release(&p);
    return rc;
}

kjoin_code kjoin_certs_issue_node(const char *dir, const char *name, const char *const *sans, size_t n_sans,
                                  int64_t now, kjoin_certs_report *report, kjoin_err *err)
{
    return issue(dir, CERT_NODE, name, sans, n_sans, now, report, err);
}

kjoin_code kjoin_certs_issue_client(const char *dir, const char *user, const char *const *groups, size_t n_groups,
                                    int64_t now, kjoin_certs_report *report, kjoin_err *err)
{
    return issue(dir, CERT_CLIENT, user, groups, n_groups, now, report, err);
}

/* ---- reading ------------------------------------------------------------- */

static int by_name(const void *a, const void *b)
{
    return strcmp(((const kjoin_certs_status *)a)->name, ((const kjoin_certs_status *)b)->name);
}

kjoin_code kjoin_certs_check(const char *dir, int64_t now, kjoin_certs_status *out, size_t cap, size_t *n,
                             kjoin_err *err)
{
    pki p = {.now = now};
    kjoin_code rc = load(&p, dir, KJOIN_STORE_READ, err);
    *n = 0;
    for (size_t i = 0; !rc && i < p.n && *n < cap; i++) {
        entry *e = &p.e[i];
        kjoin_certs_status *s = &out[(*n)++];
        snprintf(s->name, sizeof(s->name), "%s", e->name);
        snprintf(s->ca_name, sizeof(s->ca_name), "%s", e->kind == CERT_CA ? "" : "ca");
        s->not_after = kjoin_certs__not_after(first(e));
        s->is_ca = e->kind == CERT_CA;
        s->user_provided = e->user_provided;
        s->needs_regeneration = e->needs_regen;
        s->due = is_due(&p, e) || e->needs_regen || e->changed_outside;
        s->not_yet_valid = not_yet_valid(&p, e);
    }
    if (!rc)
        qsort(out, *n, sizeof(*out), by_name);
    pki_release(&p);
    return rc;
}

static json_object *secret(const char *name, const char *ns, const char *type, const entry *e, const entry *ca,
                           bool with_ca_key)
{
    json_object *s = json_object_new_object(), *meta = json_object_new_object(), *ann = json_object_new_object(),
                *data = json_object_new_object();
    char dur[32];
    json_object_object_add(s, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(s, "kind", json_object_new_string("Secret"));
    json_object_object_add(meta, "name", json_object_new_string(name));
    json_object_object_add(meta, "namespace", json_object_new_string(ns));
    json_object_object_add(ann, "managed-by", json_object_new_string("kjoin"));
    json_object_object_add(ann, "creationTime", json_object_new_string(e->created));
    json_object_object_add(ann, "duration", json_object_new_string(hours(e->duration, dur, sizeof(dur))));
    json_object_object_add(ann, "needsRegeneration", json_object_new_string(e->needs_regen ? "True" : "False"));
    json_object_object_add(meta, "annotations", ann);
    json_object_object_add(s, "metadata", meta);
    json_object_object_add(s, "type", json_object_new_string(type));
    char *ca_pem = kjoin_certs__pem_certs(ca->certs, NULL);
    char *ca_b64 = ca_pem ? kjoin_b64_encode(ca_pem, strlen(ca_pem), false) : NULL;
    json_object_object_add(data, "ca.crt", json_object_new_string(ca_b64 ? ca_b64 : ""));
    if (e != ca || with_ca_key) {
        char *crt = kjoin_certs__pem_certs(e->certs, NULL), *key = kjoin_certs__pem_key(e->key);
        char *crt64 = crt ? kjoin_b64_encode(crt, strlen(crt), false) : NULL;
        char *key64 = key ? kjoin_b64_encode(key, strlen(key), false) : NULL;
        json_object_object_add(data, e == ca ? "ca.key" : "tls.key", json_object_new_string(key64 ? key64 : ""));
        if (e != ca)
            json_object_object_add(data, "tls.crt", json_object_new_string(crt64 ? crt64 : ""));
        if (key)
            OPENSSL_cleanse(key, strlen(key));
        if (key64)
            OPENSSL_cleanse(key64, strlen(key64));
        free(crt), free(key), free(crt64), free(key64);
    }
    json_object_object_add(s, "data", data);
    free(ca_pem);
    free(ca_b64);
    return s;
}

/* Wipes every string of a JSON tree (json-c frees without wiping), for trees
 * that held private keys. */
static void wipe_json_strings(json_object *o)
{
    if (json_object_is_type(o, json_type_string)) {
        OPENSSL_cleanse((char *)json_object_get_string(o), (size_t)json_object_get_string_len(o));
    } else if (json_object_is_type(o, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(o); i++)
            wipe_json_strings(json_object_array_get_idx(o, i));
    } else if (json_object_is_type(o, json_type_object)) {
        json_object_object_foreach(o, k, v) {
            (void)k;
            wipe_json_strings(v);
        }
    }
}

kjoin_code kjoin_certs_manifests(const char *dir, const char *ns, const char *prefix, char **out, kjoin_err *err)
{
    pki p = {0};
    kjoin_code rc = load(&p, dir, KJOIN_STORE_READ, err);
    if (rc)
        return rc;
    json_object *list = json_object_new_object(), *items = json_object_new_array();
    json_object_object_add(list, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(list, "kind", json_object_new_string("List"));
    entry *ca = find(&p, "ca");
    char name[200];
    for (size_t i = 0; i < p.n; i++) {
        entry *e = &p.e[i];
        if (e == ca && ca->user_provided)
            continue;
        if (e == ca)
            snprintf(name, sizeof(name), "%s-ca-secret", prefix);
        else if (e->kind == CERT_NODE)
            snprintf(name, sizeof(name), "%s-%s-secret", prefix, strcmp(e->name, "node") == 0 ? "node" : e->name);
        else if (strcmp(e->user, "root") == 0)
            snprintf(name, sizeof(name), "%s-client-secret", prefix);
        else
            snprintf(name, sizeof(name), "%s-client-secret", e->user);
        for (char *c = name; *c; c++)
            *c = *c == '.' || *c == '_' ? '-' : *c;
        json_object_array_add(items, secret(name, ns, e == ca ? "Opaque" : "kubernetes.io/tls", e, ca, e == ca));
    }
    json_object_object_add(list, "items", items);
    const char *s = json_object_to_json_string_ext(list, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    *out = strdup(s);
    OPENSSL_cleanse((char *)s, strlen(s));
    wipe_json_strings(list);
    json_object_put(list);
    pki_release(&p);
    return *out ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
}
