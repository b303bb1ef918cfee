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

#include <kjoin/private/util.h>

#include "pki.h"

#define MAX_ENTRIES KJOIN_CERTS_MAX_ENTRIES
#define MAX_NAMES KJOIN_CERTS_MAX_NAMES
#define HOUR 3600
#define SETTLE_S HOUR

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

/* Runs fn on a freshly loaded PKI; in Secrets, again from the start when
 * someone else wrote a Secret first (KJOIN_E_TRANSIENT): the second run
 * sees what the other wrote and decides on that, so two runs at once make
 * one rotation. */
#define MAX_ATTEMPTS 5
typedef kjoin_code (*run_fn)(pki *p, const void *args, kjoin_err *err);

static kjoin_code run(const kjoin_certs_store *st, int64_t now, kjoin_certs_report *rep, run_fn fn, const void *args,
                      kjoin_err *err)
{
    kjoin_code rc = KJOIN_OK;
    char done[4][256]; /* what an attempt that then lost a race did write: its CA */
    size_t n_done = 0;
    for (int attempt = 1; !rc; attempt++) {
        pki p;
        memset(rep, 0, sizeof(*rep));
        for (size_t i = 0; i < n_done; i++)
            memcpy(rep->lines[rep->n++], done[i], sizeof(done[i]));
        if (n_done)
            rep->changed = rep->restart_nodes = rep->reload_clients = true;
        if (!(rc = kjoin_certs__begin(&p, st, now, rep, err)))
            rc = fn(&p, args, err);
        /* The CA Secret written before a later write lost a race: this run
         * did rotate (or adopt) the CA, and its report says so. */
        for (size_t i = n_done; rc == KJOIN_E_TRANSIENT && p.ca_saved && i < rep->n && n_done < 4; i++)
            if (!strncmp(rep->lines[i], "ca: rotated", 11) || !strncmp(rep->lines[i], "ca: the CA Secret was changed", 29))
                memcpy(done[n_done++], rep->lines[i], sizeof(done[0]));
        kjoin_certs__end(&p);
        if (rc != KJOIN_E_TRANSIENT)
            break;
        if (attempt == MAX_ATTEMPTS) {
            char last[KJOIN_ERR_MSG_MAX];
            snprintf(last, sizeof(last), "%s", err ? err->msg : "");
            return kjoin_err_set(err, KJOIN_E_API, "Conflict: other writers changed the Secrets %d times while this run "
                                 "decided; the last: %s", MAX_ATTEMPTS, last);
        }
        rc = KJOIN_OK;
    }
    return rc;
}

typedef struct rotate_args {
    kjoin_certs_scope scope;
    bool dry_run;
} rotate_args;

/* The RFC's "new CA" case in Secrets: someone replaced the CA Secret's
 * data. Its bundle kept the CAs the leaves chain to (secrets.c); the leaves
 * are marked and reissued under it on a later run. */
static void adopt_changed_ca(pki *p, entry *ca)
{
    stamp(p, ca);
    kjoin_certs__say(p, "ca: the CA Secret was changed outside kjoin: adopted as a new CA (%s); the bundle keeps the "
                     "CAs the certificates still chain to", ca->fingerprint);
    p->rep->changed = p->rep->restart_nodes = p->rep->reload_clients = true;
}

static kjoin_code rotate_once(pki *p, const void *args, kjoin_err *err)
{
    const rotate_args *a = args;
    kjoin_certs_report *report = p->rep;
    char where[300];
    kjoin_code rc = p->be->load(p, KJOIN_STORE_WRITE, err);
    entry *ca = rc ? NULL : kjoin_certs__find(p, "ca");
    bool ca_rotated = false, leaves = a->scope != KJOIN_CERTS_CA;
    char when[32];
    if (ca && ca->changed_outside && p->be->adopts_changed_ca) {
        adopt_changed_ca(p, ca);
        ca_rotated = true;
    } else if (ca && ca->changed_outside) {
        /* A CA is adopted only when asked (adopt-ca), never as a side effect. */
        rc = kjoin_err_set(err, KJOIN_E_USAGE,
                           "%s: ca.crt is not the CA kjoin recorded (%s): it was changed outside kjoin. Restore it, or "
                           "adopt a new CA explicitly with kjoin certs adopt-ca", p->be->where(p, where, sizeof(where)),
                           ca->fingerprint);
    } else if (ca && kjoin_certs__is_due(p, ca) && a->scope == KJOIN_CERTS_LEAVES) {
        kjoin_certs__say(p, "ca: due, left to the CA's own rotation job");
    } else if (ca && kjoin_certs__is_due(p, ca)) {
        bool early = kjoin_certs__not_yet_valid(p, ca);
        kjoin_certs__rfc3339(kjoin_certs__not_after(kjoin_certs__first(ca)), when, sizeof(when));
        if (ca->user_provided) {
            kjoin_certs__say(p, "ca: WARNING: the CA you provided expires at %s; kjoin never replaces it: install a new one", when);
        } else if (!(rc = new_ca(p, ca, err))) {
            kjoin_certs__say(p, "ca: rotated (%s%s): ca.crt now holds the new CA followed by the old one",
                early ? "the old one is not valid yet; it would have expired " : "expires ", when);
            ca_rotated = true;
            report->changed = report->restart_nodes = report->reload_clients = true;
        }
    }
    bool behind = false;
    for (size_t i = 0; i < p->n; i++)
        behind |= p->be->behind(p, i);
    if (!rc && ca && behind && !ca_rotated) {
        /* A killed run, or a CA replaced by hand: finish giving every Secret
         * the bundle before any leaf is issued under the new CA. */
        kjoin_certs__say(p, "ca: finishing a CA rotation: every Secret gets the current CA bundle");
        ca_rotated = true;
        report->changed = report->restart_nodes = report->reload_clients = true;
    }
    /* Leaves move to a new CA on a later run, at least SETTLE_S after it
     * was made, once every peer trusts it: a run that lost a race to the
     * one that rotated the CA (or comes right after it) does not reissue. */
    bool settled = ca && p->now >= kjoin_certs__parse_time(ca->created) + SETTLE_S;
    for (size_t i = 0; !rc && ca && i < p->n; i++) {
        entry *e = &p->e[i];
        if (e->kind == CERT_CA)
            continue;
        bool under_ca = kjoin_certs__issued_by(kjoin_certs__first(ca), kjoin_certs__first(e));
        if ((ca_rotated || !settled) && !under_ca) {
            if (e->needs_regen) {
                kjoin_certs__say(p, "%s: needsRegeneration, waits until the CA is an hour old", e->name);
            } else {
                kjoin_certs__say(p, "%s: marked needsRegeneration (reissued on the next run)", e->name);
                e->needs_regen = p->rep->changed = true;
            }
            continue;
        }
        const char *why = e->changed_outside ? "changed outside kjoin"
                          : e->needs_regen ? "needsRegeneration after a CA rotation"
                          : strcmp(e->ca_fingerprint, ca->fingerprint) != 0 ? "issued under another CA"
                          : kjoin_certs__not_yet_valid(p, e) ? "not valid yet (its notBefore is after now)"
                          : kjoin_certs__is_due(p, e) ? "due: inside its expiry window or expiring before the next run"
                          : NULL;
        if (why && !leaves)
            kjoin_certs__say(p, "%s: due (%s), left to the leaves' rotation job", e->name, why);
        else if (why)
            rc = reissue(p, e, why, err);
    }
    if (!rc && ca && !ca->user_provided && a->scope != KJOIN_CERTS_LEAVES)
        prune_bundle(p, ca);
    if (!rc && report->changed && !a->dry_run)
        rc = p->be->save(p, err);
    if (!rc && !report->changed)
        kjoin_certs__say(p, "nothing to do");
    return rc;
}

kjoin_code kjoin_certs_rotate(const kjoin_certs_store *st, int64_t now, kjoin_certs_scope scope, bool dry_run,
                              kjoin_certs_report *report, kjoin_err *err)
{
    rotate_args a = {.scope = scope, .dry_run = dry_run};
    return run(st, now, report, rotate_once, &a, err);
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

/* Loads a CA the user provides: its certificate (and chain) and key. */
static kjoin_code user_ca(pki *p, entry *ca, const char *crt, const char *key, kjoin_err *err)
{
    bool key_shared = false;
    kjoin_code rc = kjoin_certs__read_ca(crt, key, &ca->certs, &ca->key, &key_shared, err);
    if (rc)
        return rc;
    if (key_shared)
        kjoin_certs__say(p, "WARNING: the CA key %s is readable by group or others: chmod 600 it", key);
    ca->user_provided = true;
    ca->duration = kjoin_certs__not_after(kjoin_certs__first(ca)) - kjoin_certs__not_before(kjoin_certs__first(ca));
    stamp(p, ca);
    kjoin_certs__say(p, "ca: using the CA you provided (%d certificate(s) with its chain); kjoin will never replace it",
        sk_X509_num(ca->certs));
    return KJOIN_OK;
}

typedef struct init_args {
    const kjoin_certs_init_opts *o;
    const char *user;
} init_args;

/* Secrets: a complete set is left as it is (init runs again on every Helm
 * upgrade); new settings are stored and apply from the next rotation. */
static kjoin_code init_again(pki *p, const kjoin_certs_settings *wanted, kjoin_err *err)
{
    char where[300];
    kjoin_certs__say(p, "%s already holds a kjoin PKI: nothing to create", p->be->where(p, where, sizeof(where)));
    const kjoin_certs_settings *had = &p->s;
    if (had->ca_duration == wanted->ca_duration && had->ca_window == wanted->ca_window &&
        had->node_duration == wanted->node_duration && had->node_window == wanted->node_window &&
        had->client_duration == wanted->client_duration && had->client_window == wanted->client_window &&
        had->minimum == wanted->minimum && had->key_type == wanted->key_type)
        return KJOIN_OK;
    p->s = *wanted;
    p->rep->changed = true;
    kjoin_certs__say(p, "settings updated: the certificates follow them from their next rotation");
    return p->be->save(p, err);
}

static kjoin_code init_once(pki *p, const void *args, kjoin_err *err)
{
    const init_args *a = args;
    const kjoin_certs_init_opts *o = a->o;
    char client[80], where[300];
    p->s = o->settings;
    snprintf(client, sizeof(client), "client.%s", a->user);
    kjoin_code rc = p->be->open_new(p, client, err);
    if (!rc && p->initialised)
        return init_again(p, &o->settings, err);
    if (rc)
        return rc;
    entry *ca = kjoin_certs__find(p, "ca");
    if (ca && ca->user_provided)
        kjoin_certs__say(p, "ca: using the CA Secret you provided (%s); kjoin will never write it", p->ca_secret);
    else if (ca && ca->changed_outside)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s: the CA Secret a previous init left was changed outside kjoin: "
                             "delete it or restore it", p->be->where(p, where, sizeof(where)));
    else if (ca)
        kjoin_certs__say(p, "ca: reusing the CA an interrupted init made (%s)", ca->fingerprint);
    if (!ca) {
        ca = &p->e[p->n++];
        snprintf(ca->name, sizeof(ca->name), "ca");
        ca->kind = CERT_CA;
        if (o->ca_cert)
            rc = user_ca(p, ca, o->ca_cert, o->ca_key, err);
        else if (!(rc = new_ca(p, ca, err)))
            kjoin_certs__say(p, "ca: created a self-signed CA");
    }
    const char *sans[MAX_NAMES] = {"localhost", "127.0.0.1", "::1"};
    size_t n_sans = 3;
    for (size_t i = 0; i < o->n_sans && n_sans < MAX_NAMES; i++)
        sans[n_sans++] = o->sans[i];
    if (!rc)
        rc = add_leaf(p, CERT_NODE, "node", NULL, sans, n_sans, err);
    if (!rc)
        rc = add_leaf(p, CERT_CLIENT, client, a->user, NULL, 0, err);
    if (!rc)
        rc = p->be->save(p, err);
    return rc;
}

kjoin_code kjoin_certs_init(const kjoin_certs_store *st, const kjoin_certs_init_opts *o, int64_t now,
                            kjoin_certs_report *report, kjoin_err *err)
{
    memset(report, 0, sizeof(*report));
    init_args a = {.o = o, .user = o->user ? o->user : "root"};
    kjoin_certs_settings s = o->settings;
    bool provided = false;
    kjoin_code rc = kjoin_certs_store_check(st, err);
    if (!rc && (!!o->ca_cert != !!o->ca_key))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "give `ca_cert` and `ca_key` together");
    if (!rc)
        rc = kjoin_certs__backend(st)->check_init(st, o, &provided, err);
    if (!rc)
        rc = kjoin_certs_validate(&s, provided, err);
    if (!rc && !kjoin_certs__name_valid(a.user))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "invalid user \"%.64s\": use letters, digits, '-' and '_'", a.user);
    if (!rc)
        rc = check_sans(o->sans, o->n_sans, MAX_NAMES - 3, err);
    kjoin_certs_init_opts validated = *o;
    validated.settings = s;
    a.o = &validated;
    return rc ? rc : run(st, now, report, init_once, &a, err);
}

kjoin_code kjoin_certs_adopt_ca(const kjoin_certs_store *st, const char *ca_cert, const char *ca_key, int64_t now,
                                kjoin_certs_report *report, kjoin_err *err)
{
    pki p;
    entry fresh = {.kind = CERT_CA};
    memset(report, 0, sizeof(*report));
    kjoin_code rc = kjoin_certs__begin(&p, st, now, report, err);
    if (!rc && p.be->no_adopt_ca)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s", p.be->no_adopt_ca);
    if (!rc)
        rc = p.be->load(&p, KJOIN_STORE_WRITE, err);
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
        rc = p.be->save(&p, err);
    }
    kjoin_certs__entry_release(&fresh);
    kjoin_certs__end(&p);
    return rc;
}

typedef struct issue_args {
    cert_kind kind;
    const char *name, *entry_name;
    const char *const *names;
    size_t n;
} issue_args;

static kjoin_code issue_once(pki *p, const void *args, kjoin_err *err)
{
    const issue_args *a = args;
    kjoin_code rc = p->be->load(p, KJOIN_STORE_WRITE, err);
    if (!rc)
        rc = add_leaf(p, a->kind, a->entry_name, a->kind == CERT_CLIENT ? a->name : NULL, a->names, a->n, err);
    if (!rc)
        rc = p->be->save(p, err);
    return rc;
}

static kjoin_code issue(const kjoin_certs_store *st, cert_kind kind, const char *name, const char *const *names, size_t n,
                        int64_t now, kjoin_certs_report *report, kjoin_err *err)
{
    memset(report, 0, sizeof(*report));
    if (!kjoin_certs__name_valid(name))
        return kjoin_err_set(err, KJOIN_E_USAGE, "invalid name \"%.64s\": use letters, digits, '-' and '_'", name);
    kjoin_code rc = kind == CERT_NODE ? check_sans(names, n, MAX_NAMES, err) : check_groups(names, n, err);
    if (rc)
        return rc;
    char entry_name[80];
    snprintf(entry_name, sizeof(entry_name), kind == CERT_NODE ? "node.%s" : "client.%s", name);
    issue_args a = {.kind = kind, .name = name, .entry_name = entry_name, .names = names, .n = n};
    return run(st, now, report, issue_once, &a, err);
}

kjoin_code kjoin_certs_issue_node(const kjoin_certs_store *st, const char *name, const char *const *sans, size_t n_sans,
                                  int64_t now, kjoin_certs_report *report, kjoin_err *err)
{
    return issue(st, CERT_NODE, name, sans, n_sans, now, report, err);
}

kjoin_code kjoin_certs_issue_client(const kjoin_certs_store *st, const char *user, const char *const *groups, size_t n_groups,
                                    int64_t now, kjoin_certs_report *report, kjoin_err *err)
{
    return issue(st, CERT_CLIENT, user, groups, n_groups, now, report, err);
}
