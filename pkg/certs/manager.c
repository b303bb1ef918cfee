/* The certificate manager: the PKI in memory (entries loaded from DIR and
 * its state file), the RFC's rules, and what init, issue and rotate do. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <json-c/json.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <kjoin/util.h>

#include "internal.h"
#include "store.h"

#define STATE_FILE "kjoin-certs.json"
#define MAX_ENTRIES 32
#define MAX_NAMES 16
#define HOUR 3600

typedef struct entry {
    char name[80]; /* "ca", "node", "node.<name>", "client.<user>" */
    cert_kind kind;
    STACK_OF(X509) *certs; /* the CA bundle, or the one leaf */
    EVP_PKEY *key;
    char created[32];
    int64_t duration;
    char fingerprint[80], ca_fingerprint[80];
    bool needs_regen, user_provided, changed_outside;
    char *names[MAX_NAMES]; /* SANs (node) or groups (client) */
    size_t n_names;
    char user[64];
} entry;

typedef struct pki {
    const char *dir;
    kjoin_certs_settings s;
    entry e[MAX_ENTRIES];
    size_t n;
    int64_t now;
    kjoin_certs_report *rep;
} pki;

static const char *const key_names[] = {"ecdsa-p256", "rsa2048", "rsa3072", "rsa4096", "ed25519"};

kjoin_code kjoin_key_type_parse(const char *s, kjoin_key_type *out, kjoin_err *err)
{
    for (size_t i = 0; i < sizeof(key_names) / sizeof(key_names[0]); i++)
        if (strcmp(s, key_names[i]) == 0) {
            *out = (kjoin_key_type)i;
            return KJOIN_OK;
        }
    return kjoin_err_set(err, KJOIN_E_USAGE, "unknown key type \"%s\" (use ecdsa-p256, rsa2048, rsa3072, rsa4096 or ed25519)", s);
}

const char *kjoin_key_type_name(kjoin_key_type t) { return key_names[t]; }

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

static void entry_release(entry *e)
{
    sk_X509_pop_free(e->certs, X509_free);
    EVP_PKEY_free(e->key);
    for (size_t i = 0; i < e->n_names; i++)
        free(e->names[i]);
    memset(e, 0, sizeof(*e));
}

static void pki_release(pki *p)
{
    for (size_t i = 0; i < p->n; i++)
        entry_release(&p->e[i]);
    p->n = 0;
}

static void file_names(const entry *e, char *crt, char *key, size_t cap)
{
    snprintf(crt, cap, "%s.crt", e->name);
    snprintf(key, cap, "%s.key", e->name);
}

/* ---- state ----------------------------------------------------------- */

static json_object *state_json(const pki *p)
{
    json_object *root = json_object_new_object(), *set = json_object_new_object(), *certs = json_object_new_object();
    json_object_object_add(root, "version", json_object_new_int(1));
    const struct {
        const char *k;
        int64_t v;
    } nums[] = {{"caDuration", p->s.ca_duration},         {"caExpiryWindow", p->s.ca_window},
                {"nodeDuration", p->s.node_duration},     {"nodeExpiryWindow", p->s.node_window},
                {"clientDuration", p->s.client_duration}, {"clientExpiryWindow", p->s.client_window},
                {"minimumDuration", p->s.minimum}};
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
        json_object_object_add(set, nums[i].k, json_object_new_int64(nums[i].v));
    json_object_object_add(set, "keyType", json_object_new_string(kjoin_key_type_name(p->s.key_type)));
    json_object_object_add(root, "settings", set);
    for (size_t i = 0; i < p->n; i++) {
        const entry *e = &p->e[i];
        json_object *o = json_object_new_object(), *names = json_object_new_array();
        char dur[32];
        json_object_object_add(o, "managedBy", json_object_new_string(e->user_provided ? "user" : "kjoin"));
        json_object_object_add(o, "creationTime", json_object_new_string(e->created));
        json_object_object_add(o, "duration", json_object_new_string(hours(e->duration, dur, sizeof(dur))));
        json_object_object_add(o, "durationSeconds", json_object_new_int64(e->duration));
        json_object_object_add(o, "fingerprint", json_object_new_string(e->fingerprint));
        if (e->kind != CERT_CA)
            json_object_object_add(o, "caFingerprint", json_object_new_string(e->ca_fingerprint));
        json_object_object_add(o, "needsRegeneration", json_object_new_boolean(e->needs_regen));
        for (size_t j = 0; j < e->n_names; j++)
            json_object_array_add(names, json_object_new_string(e->names[j]));
        json_object_object_add(o, e->kind == CERT_NODE ? "sans" : "groups", names);
        json_object_object_add(certs, e->name, o);
    }
    json_object_object_add(root, "certificates", certs);
    return root;
}

static int64_t num(json_object *o, const char *k)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, k, &v) ? json_object_get_int64(v) : 0;
}

static const char *str(json_object *o, const char *k)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

/* Loads one entry's files and compares them with what the state recorded. */
static kjoin_code load_entry(pki *p, const char *name, json_object *o, kjoin_err *err)
{
    if (p->n == MAX_ENTRIES)
        return kjoin_err_set(err, KJOIN_E_USAGE, "too many certificates in %s", p->dir);
    entry *e = &p->e[p->n++];
    snprintf(e->name, sizeof(e->name), "%s", name);
    e->kind = strcmp(name, "ca") == 0 ? CERT_CA : strncmp(name, "node", 4) == 0 ? CERT_NODE : CERT_CLIENT;
    snprintf(e->created, sizeof(e->created), "%s", str(o, "creationTime"));
    e->duration = num(o, "durationSeconds");
    snprintf(e->fingerprint, sizeof(e->fingerprint), "%s", str(o, "fingerprint"));
    snprintf(e->ca_fingerprint, sizeof(e->ca_fingerprint), "%s", str(o, "caFingerprint"));
    e->user_provided = strcmp(str(o, "managedBy"), "user") == 0;
    json_object *flag = NULL, *names = NULL;
    e->needs_regen = json_object_object_get_ex(o, "needsRegeneration", &flag) && json_object_get_boolean(flag);
    if (json_object_object_get_ex(o, e->kind == CERT_NODE ? "sans" : "groups", &names))
        for (size_t j = 0; j < json_object_array_length(names) && e->n_names < MAX_NAMES; j++)
            e->names[e->n_names++] = strdup(json_object_get_string(json_object_array_get_idx(names, j)));
    if (e->kind == CERT_CLIENT)
        snprintf(e->user, sizeof(e->user), "%s", name + strlen("client."));

    char crt[96], key[96], fp[80];
    file_names(e, crt, key, sizeof(crt));
    char *pem = NULL;
    size_t len = 0;
    kjoin_code rc = kjoin_store__read(p->dir, crt, &pem, &len, err);
    if (rc)
        return rc;
    e->certs = kjoin_certs__parse_certs(pem, len);
    free(pem);
    if (!e->certs)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s holds no certificate", p->dir, crt);
    if ((rc = kjoin_store__read(p->dir, key, &pem, &len, err)))
        return rc;
    e->key = kjoin_certs__parse_key(pem, len);
    OPENSSL_cleanse(pem, len);
    free(pem);
    if (!e->key || X509_check_private_key(first(e), e->key) != 1)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s does not hold the key of %s", p->dir, key, crt);
    kjoin_certs__fingerprint(first(e), fp);
    e->changed_outside = strcmp(fp, e->fingerprint) != 0;
    return KJOIN_OK;
}

static kjoin_code load(pki *p, kjoin_err *err)
{
    char *text = NULL;
    size_t len = 0;
    kjoin_err inner;
    if (kjoin_store__read(p->dir, STATE_FILE, &text, &len, &inner))
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s holds no kjoin PKI (run kjoin certs init): %s", p->dir, inner.msg);
    json_object *root = json_tokener_parse(text);
    free(text);
    json_object *set = NULL, *certs = NULL;
    if (!root || !json_object_object_get_ex(root, "settings", &set) ||
        !json_object_object_get_ex(root, "certificates", &certs)) {
        json_object_put(root);
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s is not a kjoin state file", p->dir, STATE_FILE);
    }
    p->s = (kjoin_certs_settings){num(set, "caDuration"),   num(set, "caExpiryWindow"),     num(set, "nodeDuration"),
                                  num(set, "nodeExpiryWindow"), num(set, "clientDuration"), num(set, "clientExpiryWindow"),
                                  num(set, "minimumDuration"), KJOIN_KEY_ECDSA_P256};
    kjoin_key_type_parse(str(set, "keyType"), &p->s.key_type, NULL);
    kjoin_code rc = KJOIN_OK;
    json_object_object_foreach(certs, name, o)
    {
        if (!rc)
            rc = load_entry(p, name, o, err);
    }
    json_object_put(root);
    if (!rc && (!find(p, "ca") || !find(p, "ca")->key))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s has no CA", p->dir);
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
    json_object *state = state_json(p);
    const char *text = json_object_to_json_string_ext(state, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    files[n++] = (kjoin_store_file){STATE_FILE, text, strlen(text), 0600};
    if (!rc)
        rc = kjoin_store__commit(p->dir, files, n, err);
    for (size_t i = 0; i + 1 < n; i++) {
        if (files[i].data && files[i].mode == 0600)
            OPENSSL_cleanse((char *)files[i].data, files[i].len);
        free((char *)files[i].data);
    }
    json_object_put(state);
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

/* Due when now is inside the expiry window, or it would expire before the next run. */
static bool is_due(const pki *p, const entry *e)
{
    int64_t na = kjoin_certs__not_after(first(e));
    return p->now >= na - window_of(p, e) || na < p->now + p->s.minimum;
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
    sk_X509_pop_free(e->certs, X509_free);
    EVP_PKEY_free(e->key);
    e->certs = sk_X509_new_null();
    sk_X509_push(e->certs, x);
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
    sk_X509_unshift(ca->certs, x); /* the new CA first, the old ones after it */
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
    pki p = {.dir = dir, .now = now, .rep = report};
    memset(report, 0, sizeof(*report));
    int lock = -1;
    kjoin_code rc = kjoin_store__lock(dir, &lock, err);
    if (!rc)
        rc = load(&p, err);
    entry *ca = rc ? NULL : find(&p, "ca");
    bool ca_rotated = false;
    char when[32];
    if (ca && ca->changed_outside) {
        /* The RFC's "new CA" case: adopt it, never overwrite it. */
        kjoin_certs__fingerprint(first(ca), ca->fingerprint);
        say(&p, "ca: changed outside kjoin (now %s); adopting it as a new CA: node and client certificates will be "
                "reissued under it",
            ca->fingerprint);
        ca->changed_outside = false;
        ca_rotated = true;
        report->changed = true;
    } else if (ca && is_due(&p, ca)) {
        rfc3339(kjoin_certs__not_after(first(ca)), when, sizeof(when));
        if (ca->user_provided) {
            say(&p, "ca: WARNING: the CA you provided expires at %s; kjoin never replaces it: install a new one", when);
        } else if (!(rc = new_ca(&p, ca, err))) {
            say(&p, "ca: rotated (expires %s): ca.crt now holds the new CA followed by the old one", when);
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
    kjoin_store__unlock(lock);
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
        e->names[e->n_names++] = strdup(names[j]);
    return reissue(p, e, "new", err);
}

static bool valid_name(const char *s)
{
    if (!*s || strlen(s) > 48)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || strchr("-_", *s)))
            return false;
    return true;
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
    if ((rc = kjoin_file_read(key, 1024 * 1024, &pem, &len, err)))
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
    pki p = {.dir = dir, .now = now, .rep = report, .s = o->settings};
    memset(report, 0, sizeof(*report));
    const char *user = o->user ? o->user : "root";
    char state[4200], client[80];
    struct stat st;
    snprintf(state, sizeof(state), "%s/%s", dir, STATE_FILE);
    kjoin_code rc = kjoin_certs_validate(&p.s, o->ca_cert != NULL, err);
    if (!rc && (!!o->ca_cert != !!o->ca_key))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "give `ca_cert` and `ca_key` together");
    if (!rc && !valid_name(user))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "invalid user \"%s\"", user);
    if (!rc && lstat(state, &st) == 0)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s already holds a kjoin PKI; use kjoin certs rotate or issue", dir);
    if (rc)
        return rc;
    if (mkdir(dir, 0700) != 0 && lstat(dir, &st) != 0)
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot create %s", dir);
    int lock = -1;
    rc = kjoin_store__lock(dir, &lock, err);
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
    kjoin_store__unlock(lock);
    return rc;
}

static kjoin_code issue(const char *dir, cert_kind kind, const char *name, const char *const *names, size_t n,
                        int64_t now, kjoin_certs_report *report, kjoin_err *err)
{
    pki p = {.dir = dir, .now = now, .rep = report};
    memset(report, 0, sizeof(*report));
    if (!valid_name(name))
        return kjoin_err_set(err, KJOIN_E_USAGE, "invalid name \"%s\": use letters, digits, '-' and '_'", name);
    char entry_name[80];
    snprintf(entry_name, sizeof(entry_name), kind == CERT_NODE ? "node.%s" : "client.%s", name);
    int lock = -1;
    kjoin_code rc = kjoin_store__lock(dir, &lock, err);
    if (!rc)
        rc = load(&p, err);
    if (!rc)
        rc = add_leaf(&p, kind, entry_name, kind == CERT_CLIENT ? name : NULL, names, n, err);
    if (!rc)
        rc = save(&p, err);
    pki_release(&p);
    kjoin_store__unlock(lock);
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
    pki p = {.dir = dir, .now = now};
    kjoin_code rc = load(&p, err);
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
    pki p = {.dir = dir};
    kjoin_code rc = load(&p, err);
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
