/* The certificate manager's decisions: the RFC's rules, and what init,
 * issue, rotate and adopt-ca do to the PKI (pki.c loads and saves it). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <kjoin/util.h>

#include "pki.h"

#define MAX_ENTRIES KJOIN_CERTS_MAX_ENTRIES
#define MAX_NAMES KJOIN_CERTS_MAX_NAMES
#define HOUR 3600

kjoin_certs_settings kjoin_certs_defaults(void)
{
    return (kjoin_certs_settings){.ca_duration = 87600 * HOUR, .ca_window = 17520 * HOUR,
                                  .node_duration = 8760 * HOUR, .node_window = 168 * HOUR,
                                  .client_duration = 8760 * HOUR, .client_window = 168 * HOUR};
}

/* One rule: value must not be less than the minimum. */
static kjoin_code at_least(const char *what, int64_t value, int64_t minimum, kjoin_err *err)
{
    if (value >= minimum)
        return KJOIN_OK;
    char v[32], m[32], d[32];
    return kjoin_err_set(err, KJOIN_E_USAGE, "%s (%s) must not be less than the minimum duration (%s): short by %s",
                         what, kjoin_certs__hours(value, v, sizeof(v)), kjoin_certs__hours(minimum, m, sizeof(m)),
                         kjoin_certs__hours(minimum - value, d, sizeof(d)));
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

/* ---- decisions ---------------------------------------------------------- */

static int64_t window_of(const pki *p, const entry *e)
{
    return e->kind == CERT_CA ? p->s.ca_window : e->kind == CERT_NODE ? p->s.node_window : p->s.client_window;
}

static int64_t duration_of(const pki *p, const entry *e)
{
    return e->kind == CERT_CA ? p->s.ca_duration : e->kind == CERT_NODE ? p->s.node_duration : p->s.client_duration;
}

bool kjoin_certs__not_yet_valid(const pki *p, const entry *e) { return p->now < kjoin_certs__not_before(kjoin_certs__first(e)); }

/* Due when now is inside the expiry window, it would expire before the next
 * run, or it is not valid yet (clock skew, or issued under a later clock). */
bool kjoin_certs__is_due(const pki *p, const entry *e)
{
    int64_t na = kjoin_certs__not_after(kjoin_certs__first(e));
    return p->now >= na - window_of(p, e) || na < p->now + p->s.minimum || kjoin_certs__not_yet_valid(p, e);
}

static void stamp(pki *p, entry *e)
{
    kjoin_certs__rfc3339(p->now, e->created, sizeof(e->created));
    kjoin_certs__fingerprint(kjoin_certs__first(e), e->fingerprint);
    e->changed_outside = false;
}

/* Issues e's leaf anew under the current CA (the bundle's first certificate),
 * never past the CA's notAfter. */
static kjoin_code reissue(pki *p, entry *e, const char *why, kjoin_err *err)
{
    entry *ca = kjoin_certs__find(p, "ca");
    X509 *ca_cert = kjoin_certs__first(ca);
    int64_t not_after = p->now + duration_of(p, e), ca_end = kjoin_certs__not_after(ca_cert);
    char when[32], cn[80];
    if (not_after > ca_end) {
        not_after = ca_end;
        kjoin_certs__rfc3339(ca_end, when, sizeof(when));
        kjoin_certs__say(p, "%s: shortened to end with its CA at %s (rotate the CA to issue full-length certificates)", e->name, when);
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
    kjoin_certs__rfc3339(not_after, when, sizeof(when));
    kjoin_certs__say(p, "%s: issued (%s), valid until %s", e->name, why, when);
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
            used = p->e[j].kind != CERT_CA && kjoin_certs__issued_by(old, kjoin_certs__first(&p->e[j]));
        if (used)
            continue;
        char fp[80];
        kjoin_certs__fingerprint(old, fp);
        kjoin_certs__say(p, "ca: dropped an expired CA from the bundle (%s)", fp);
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
    kjoin_code rc = kjoin_certs__load(&p, dir, KJOIN_STORE_WRITE, err);
    entry *ca = rc ? NULL : kjoin_certs__find(&p, "ca");
    bool ca_rotated = false;
    char when[32];
    if (ca && ca->changed_outside) {
        /* A CA is adopted only when asked (adopt-ca), never as a side effect. */
        rc = kjoin_err_set(err, KJOIN_E_USAGE,
                           "%s: ca.crt is not the CA kjoin recorded (%s): it was changed outside kjoin. Restore it, or "
                           "adopt a new CA explicitly with kjoin certs adopt-ca", dir, ca->fingerprint);
    } else if (ca && kjoin_certs__is_due(&p, ca)) {
        bool early = kjoin_certs__not_yet_valid(&p, ca);
        kjoin_certs__rfc3339(kjoin_certs__not_after(kjoin_certs__first(ca)), when, sizeof(when));
        if (ca->user_provided) {
            kjoin_certs__say(&p, "ca: WARNING: the CA you provided expires at %s; kjoin never replaces it: install a new one", when);
        } else if (!(rc = new_ca(&p, ca, err))) {
            kjoin_certs__say(&p, "ca: rotated (%s%s): ca.crt now holds the new CA followed by the old one",
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
                kjoin_certs__say(&p, "%s: marked needsRegeneration (reissued on the next run)", e->name);
            e->needs_regen = true;
            continue;
        }
        const char *why = e->changed_outside ? "changed outside kjoin"
                          : e->needs_regen ? "needsRegeneration after a CA rotation"
                          : strcmp(e->ca_fingerprint, ca->fingerprint) != 0 ? "issued under another CA"
                          : kjoin_certs__not_yet_valid(&p, e) ? "not valid yet (its notBefore is after now)"
                          : kjoin_certs__is_due(&p, e) ? "due: inside its expiry window or expiring before the next run"
                          : NULL;
        if (why)
            rc = reissue(&p, e, why, err);
    }
    if (!rc && ca && !ca->user_provided)
        prune_bundle(&p, ca);
    if (!rc && report->changed && !dry_run)
        rc = kjoin_certs__save(&p, err);
    if (!rc && !report->changed)
        kjoin_certs__say(&p, "nothing to do");
    kjoin_certs__release(&p);
    return rc;
}

/* ---- init and issue ------------------------------------------------------ */

static kjoin_code add_leaf(pki *p, cert_kind kind, const char *name, const char *user, const char *const *names,
                           size_t n_names, kjoin_err *err)
{
    entry *e = kjoin_certs__find(p, name);
    if (!e) {
        if (p->n == MAX_ENTRIES)
            return kjoin_err_set(err, KJOIN_E_USAGE, "too many certificates");
        e = &p->e[p->n++];
    } else {
        kjoin_certs__say(p, "%s: replacing the existing certificate", name);
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
        kjoin_certs__say(p, "WARNING: the CA key %s is readable by group or others (mode %04o): chmod 600 it", path,
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
    if (!ca->certs || X509_check_ca(kjoin_certs__first(ca)) < 1)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s holds no CA certificate", crt);
    if (!ca->key || X509_check_private_key(kjoin_certs__first(ca), ca->key) != 1)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s is not the key of the CA in %s", key, crt);
    ca->user_provided = true;
    ca->duration = kjoin_certs__not_after(kjoin_certs__first(ca)) - kjoin_certs__not_before(kjoin_certs__first(ca));
    stamp(p, ca);
    kjoin_certs__say(p, "ca: using the CA you provided (%d certificate(s) with its chain); kjoin will never replace it",
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
        kjoin_certs__release(&p);
        return rc;
    }
    entry *ca = &p.e[p.n++];
    snprintf(ca->name, sizeof(ca->name), "ca");
    ca->kind = CERT_CA;
    if (!rc && o->ca_cert)
        rc = user_ca(&p, ca, o->ca_cert, o->ca_key, err);
    else if (!rc && !(rc = new_ca(&p, ca, err)))
        kjoin_certs__say(&p, "ca: created a self-signed CA");
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
        rc = kjoin_certs__save(&p, err);
    kjoin_certs__release(&p);
    return rc;
}

kjoin_code kjoin_certs_adopt_ca(const char *dir, const char *ca_cert, const char *ca_key, int64_t now,
                                kjoin_certs_report *report, kjoin_err *err)
{
    pki p = {.now = now, .rep = report};
    entry fresh = {.kind = CERT_CA};
    memset(report, 0, sizeof(*report));
    kjoin_code rc = kjoin_certs__load(&p, dir, KJOIN_STORE_WRITE, err);
    entry *ca = rc ? NULL : kjoin_certs__find(&p, "ca");
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
        kjoin_certs__say(&p, "ca: adopted %s (%s) as the CA; ca.crt holds it followed by the previous CA(s)", ca_cert,
            ca->fingerprint);
        for (size_t i = 0; i < p.n; i++)
            if (p.e[i].kind != CERT_CA && !p.e[i].needs_regen) {
                p.e[i].needs_regen = true;
                kjoin_certs__say(&p, "%s: marked needsRegeneration (reissued under the adopted CA on the next rotate)",
                    p.e[i].name);
            }
        report->changed = report->restart_nodes = report->reload_clients = true;
        rc = kjoin_certs__save(&p, err);
    }
    kjoin_certs__entry_release(&fresh);
    kjoin_certs__release(&p);
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
    rc = kjoin_certs__load(&p, dir, KJOIN_STORE_WRITE, err);
    if (!rc)
        rc = add_leaf(&p, kind, entry_name, kind == CERT_CLIENT ? name : NULL, names, n, err);
    if (!rc)
        rc = kjoin_certs__save(&p, err);
    kjoin_certs__release(&p);
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

