/* The Secrets store of a PKI (one of the two behind backend.c): each certificate in a Kubernetes Secret shaped as the
 * CockroachDB self-signer shapes them, with the RFC's annotations. What a
 * Secret says is untrusted: every field is checked, and a Secret whose data
 * no longer matches the fingerprint kjoin wrote was changed by someone
 * else. Every write is a compare-and-swap on the resourceVersion read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <kjoin/private/kubeapi.h>
#include <kjoin/private/util.h>

#include "pki.h"

#define MAX_ENTRIES KJOIN_CERTS_MAX_ENTRIES
#define HUNDRED_YEARS (100LL * 365 * 24 * 3600)

/* kjoin's annotations. managed-by, creationTime, duration and
 * needsRegeneration are the RFC's names. */
#define A_MANAGED "managed-by"
#define A_CREATED "creationTime"
#define A_DURATION "duration"
#define A_REGEN "needsRegeneration"
#define A_ENTRY "kjoin.io/certificate"
#define A_DATA_FP "kjoin.io/data-sha256"
#define A_CA_FP "kjoin.io/ca-fingerprint"
#define A_SANS "kjoin.io/sans"
#define A_GROUPS "kjoin.io/groups"
#define A_SETTINGS "kjoin.io/settings"
#define A_INDEX "kjoin.io/certificates"
#define A_CA_SECRET "kjoin.io/ca-secret"

/* ---- the API ------------------------------------------------------------ */

static void secret_path(const pki *p, const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "/api/v1/namespaces/%s/secrets%s%s", p->where->ns, name ? "/" : "", name ? name : "");
}

/* GETs a Secret: *found false on 404. */
static kjoin_code get_secret(pki *p, const char *name, certs_secret *out, bool *found, kjoin_err *err)
{
    char path[400], what[300];
    kjoin_kubeapi_response r;
    secret_path(p, name, path, sizeof(path));
    snprintf(what, sizeof(what), "get secret %s/%s", p->where->ns, name);
    *found = false;
    kjoin_code rc = kjoin_kubeapi_request(p->where->api, "GET", path, NULL, &r, err);
    if (rc)
        return rc;
    if (r.status != 404 && !(rc = kjoin_kubeapi_check(&r, what, err))) {
        kjoin_err inner;
        if ((rc = kjoin_certs__secret_parse(r.body, r.len, out, &inner)))
            rc = kjoin_err_set(err, rc, "%s: %s", what, inner.msg);
        else if (strcmp(out->name, name) != 0) {
            kjoin_certs__secret_release(out);
            rc = kjoin_err_set(err, KJOIN_E_TRUST, "%s: the API answered with another Secret", what);
        } else
            *found = true;
    }
    OPENSSL_cleanse(r.body, r.len);
    kjoin_kubeapi_response_release(&r);
    return rc;
}

/* PUTs (old: the compare-and-swap on its resourceVersion) or POSTs one
 * Secret. A 409 (someone else wrote or created it) or a 404 on a PUT (it was
 * deleted) is KJOIN_E_TRANSIENT: the run reads again and decides again. */
static kjoin_code write_secret(pki *p, const char *name, json_object *obj, bool update, kjoin_err *err)
{
    char path[400], what[300];
    kjoin_kubeapi_response r;
    secret_path(p, update ? name : NULL, path, sizeof(path));
    snprintf(what, sizeof(what), "%s secret %s/%s", update ? "update" : "create", p->where->ns, name);
    const char *body = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    kjoin_code rc = body ? kjoin_kubeapi_request(p->where->api, update ? "PUT" : "POST", path, body, &r, err)
                         : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    if (body)
        OPENSSL_cleanse((char *)body, strlen(body));
    if (rc)
        return rc;
    if (r.status == 409 || (update && r.status == 404))
        rc = kjoin_err_set(err, KJOIN_E_TRANSIENT, "%s: %s since this run read it (%s)", what,
                           r.status == 409 ? "someone else wrote it" : "someone deleted it", r.reason);
    else
        rc = kjoin_kubeapi_check(&r, what, err);
    OPENSSL_cleanse(r.body, r.len);
    kjoin_kubeapi_response_release(&r);
    return rc;
}

/* ---- reading an entry ---------------------------------------------------- */

static kjoin_code bad(const certs_secret *s, const char *field, const char *what, kjoin_err *err)
{
    return kjoin_err_set(err, KJOIN_E_USAGE, "Secret %s: %s %s", s->name, field, what);
}

/* A required annotation that fits cap. */
static kjoin_code annotation(const certs_secret *s, const char *key, char *out, size_t cap, kjoin_err *err)
{
    const char *v = kjoin_certs__secret_annotation(s, key);
    if (!v)
        return bad(s, key, "annotation is missing", err);
    if (strlen(v) >= cap)
        return bad(s, key, "annotation is too long", err);
    memcpy(out, v, strlen(v) + 1);
    return KJOIN_OK;
}

static kjoin_code read_record(const certs_secret *s, entry *e, kjoin_err *err)
{
    char text[1100], regen[8], when[32];
    int64_t ms = 0;
    kjoin_code rc;
    if ((rc = annotation(s, A_ENTRY, text, sizeof(text), err)))
        return rc;
    if (strcmp(text, e->name) != 0)
        return bad(s, A_ENTRY, "annotation names another certificate", err);
    if ((rc = annotation(s, A_CREATED, e->created, sizeof(e->created), err)))
        return rc;
    if (!kjoin_certs__parse_time(e->created))
        return bad(s, A_CREATED, "annotation is not an RFC 3339 time in UTC", err);
    if ((rc = annotation(s, A_DURATION, when, sizeof(when), err)))
        return rc;
    if (kjoin_duration_parse(when, &ms, NULL) || ms / 1000 <= 0 || ms / 1000 > HUNDRED_YEARS)
        return bad(s, A_DURATION, "annotation is not a duration from 1 s to 100 years", err);
    e->duration = ms / 1000;
    if ((rc = annotation(s, A_REGEN, regen, sizeof(regen), err)))
        return rc;
    if (strcasecmp(regen, "true") && strcasecmp(regen, "false"))
        return bad(s, A_REGEN, "annotation is neither True nor False", err);
    e->needs_regen = strcasecmp(regen, "true") == 0;
    if (e->kind != CERT_CA) {
        if ((rc = annotation(s, A_CA_FP, e->ca_fingerprint, sizeof(e->ca_fingerprint), err)))
            return rc;
        if (!kjoin_certs__fingerprint_valid(e->ca_fingerprint))
            return bad(s, A_CA_FP, "annotation is not a sha256: fingerprint", err);
        const char *list = kjoin_certs__secret_annotation(s, e->kind == CERT_NODE ? A_SANS : A_GROUPS);
        if (list && strlen(list) >= sizeof(text))
            return bad(s, e->kind == CERT_NODE ? A_SANS : A_GROUPS, "annotation is too long", err);
        snprintf(text, sizeof(text), "%s", list ? list : "");
        for (char *save = NULL, *t = strtok_r(text, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            bool ok = e->kind == CERT_NODE ? kjoin_certs__san_valid(t) : strlen(t) <= 64;
            if (!ok || e->n_names == KJOIN_CERTS_MAX_NAMES)
                return bad(s, e->kind == CERT_NODE ? A_SANS : A_GROUPS, "annotation holds a bad or extra entry", err);
            if (!(e->names[e->n_names] = strdup(t)))
                return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
            e->n_names++;
        }
    }
    return KJOIN_OK;
}

/* The certificate (or bundle) and key of a Secret, the key matching the
 * first certificate. */
static kjoin_code read_pair(const certs_secret *s, secret_key crt, secret_key key, entry *e, kjoin_err *err)
{
    const char *crt_name = kjoin_certs__secret_key_name(crt), *key_name = kjoin_certs__secret_key_name(key);
    if (!s->data[crt] || !(e->certs = kjoin_certs__parse_certs(s->data[crt], s->len[crt])))
        return bad(s, crt_name, "holds no certificate", err);
    if (!s->data[key] || !(e->key = kjoin_certs__parse_key(s->data[key], s->len[key])) ||
        X509_check_private_key(kjoin_certs__first(e), e->key) != 1) {
        ERR_clear_error();
        return bad(s, key_name, "is not the key of its certificate", err);
    }
    kjoin_certs__fingerprint(kjoin_certs__first(e), e->fingerprint);
    return KJOIN_OK;
}

static bool in_stack(STACK_OF(X509) *sk, X509 *x)
{
    for (int i = 0; sk && i < sk_X509_num(sk); i++)
        if (X509_cmp(sk_X509_value(sk, i), x) == 0)
            return true;
    return false;
}

/* Loads the entry name from its Secret; *found false when there is none. */
static kjoin_code load_entry(pki *p, const char *name, const char *secret, bool user_ca, bool *found, kjoin_err *err)
{
    if (p->n == MAX_ENTRIES)
        return kjoin_err_set(err, KJOIN_E_USAGE, "too many certificates");
    size_t i = p->n;
    certs_secret *s = &p->sec[i];
    entry *e = &p->e[i];
    memset(e, 0, sizeof(*e));
    kjoin_code rc = get_secret(p, secret, s, found, err);
    if (rc || !*found)
        return rc;
    p->n++;
    snprintf(e->name, sizeof(e->name), "%s", name);
    kjoin_certs__entry_name(name, &e->kind, e->user);
    if (user_ca) {
        /* The RFC's caProvided: the user's Secret, checked and never written. */
        e->user_provided = true;
        if ((rc = read_pair(s, SECRET_CA_CRT, SECRET_CA_KEY, e, err)))
            return rc;
        if (X509_check_ca(kjoin_certs__first(e)) < 1)
            return bad(s, "ca.crt", "holds no CA certificate", err);
        kjoin_certs__rfc3339(kjoin_certs__not_before(kjoin_certs__first(e)), e->created, sizeof(e->created));
        e->duration = kjoin_certs__not_after(kjoin_certs__first(e)) - kjoin_certs__not_before(kjoin_certs__first(e));
        return KJOIN_OK;
    }
    if (!s->ours)
        return kjoin_err_set(err, KJOIN_E_USAGE, "Secret %s/%s exists and is not kjoin's (no label "
                             "app.kubernetes.io/managed-by=kjoin): kjoin never writes it", p->where->ns, secret);
    const char *managed = kjoin_certs__secret_annotation(s, A_MANAGED), *data_fp = kjoin_certs__secret_annotation(s, A_DATA_FP);
    if (!managed || strcmp(managed, "kjoin") != 0)
        return bad(s, A_MANAGED, "annotation is not kjoin", err);
    if ((rc = read_record(s, e, err)))
        return rc;
    char fp[80];
    kjoin_certs__data_fingerprint(s, fp);
    e->changed_outside = !data_fp || strcmp(fp, data_fp) != 0;
    kjoin_err inner;
    rc = e->kind == CERT_CA ? read_pair(s, SECRET_CA_CRT, SECRET_CA_KEY, e, &inner)
                            : read_pair(s, SECRET_TLS_CRT, SECRET_TLS_KEY, e, &inner);
    if (!rc && e->kind != CERT_CA && s->data[SECRET_CA_CRT])
        p->held_ca[i] = kjoin_certs__parse_certs(s->data[SECRET_CA_CRT], s->len[SECRET_CA_CRT]);
    if (rc)
        return kjoin_err_set(err, rc, "%s%s", inner.msg,
                             e->changed_outside ? " (it was changed outside kjoin: restore it)" : "");
    if (!rc && e->kind == CERT_CA && X509_check_ca(kjoin_certs__first(e)) < 1)
        rc = bad(s, "ca.crt", "holds no CA certificate", err);
    return rc;
}

/* After a CA Secret was changed by hand (the RFC's "new CA" case), its
 * bundle keeps every CA a leaf still chains to, as adopt-ca does. */
static kjoin_code keep_old_issuers(pki *p, entry *ca, kjoin_err *err)
{
    for (size_t i = 0; i < p->n; i++)
        for (int j = 0; p->held_ca[i] && j < sk_X509_num(p->held_ca[i]); j++) {
            X509 *x = sk_X509_value(p->held_ca[i], j);
            if (in_stack(ca->certs, x) || !kjoin_certs__issued_by(x, kjoin_certs__first(&p->e[i])))
                continue;
            if (X509_up_ref(x) != 1 || !sk_X509_push(ca->certs, x))
                return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        }
    return KJOIN_OK;
}

/* A leaf's Secret holds its own ca.crt: one without the current CA has not
 * had the CA's rotation yet (a killed run, a CA replaced by hand). */
static bool behind(const pki *p, size_t i)
{
    const entry *ca = kjoin_certs__find((pki *)p, "ca");
    return ca && p->e[i].kind != CERT_CA && !in_stack(p->held_ca[i], kjoin_certs__first(ca));
}

/* For init (mode CREATE) a missing Secret is not an error: what exists is
 * loaded, to be reused or replaced. */
static kjoin_code load(pki *p, kjoin_store_mode mode, kjoin_err *err)
{
    const kjoin_certs_store *w = p->where;
    char name[SECRET_NAME_MAX], index[1100] = "";
    bool init = mode == KJOIN_STORE_CREATE, found = false;
    kjoin_code rc = KJOIN_OK;
    if (kjoin_certs__secret_name(w->prefix, "node", name))
        rc = load_entry(p, "node", name, false, &found, err);
    p->initialised = found;
    if (!rc && !found && !init)
        return kjoin_err_set(err, KJOIN_E_USAGE, "namespace %s holds no kjoin PKI named %s (Secret %s not found): run "
                             "kjoin certs init", w->ns, w->prefix, name);
    if (!rc && found) {
        const certs_secret *node = &p->sec[0];
        const char *set = kjoin_certs__secret_annotation(node, A_SETTINGS), *idx = kjoin_certs__secret_annotation(node, A_INDEX);
        const char *user_ca = kjoin_certs__secret_annotation(node, A_CA_SECRET);
        kjoin_err inner;
        if (!set)
            rc = bad(node, A_SETTINGS, "annotation is missing", err);
        else if (kjoin_certs__settings_parse(set, strlen(set), &p->s, &inner))
            rc = kjoin_err_set(err, KJOIN_E_USAGE, "Secret %s: %s: %s", node->name, A_SETTINGS, inner.msg);
        else if (idx && strlen(idx) >= sizeof(index))
            rc = bad(node, A_INDEX, "annotation is too long", err);
        else if (user_ca && (strlen(user_ca) >= sizeof(p->ca_secret) || !*user_ca))
            rc = bad(node, A_CA_SECRET, "annotation is not a Secret name", err);
        if (!rc) {
            snprintf(index, sizeof(index), "%s", idx ? idx : "");
            snprintf(p->ca_secret, sizeof(p->ca_secret), "%s", user_ca ? user_ca : "");
        }
    }
    if (!rc && init && w->ca_secret)
        snprintf(p->ca_secret, sizeof(p->ca_secret), "%s", w->ca_secret);
    bool user_ca = !rc && *p->ca_secret;
    if (!rc) {
        if (!user_ca)
            kjoin_certs__secret_name(w->prefix, "ca", name);
        rc = load_entry(p, "ca", user_ca ? p->ca_secret : name, user_ca, &found, err);
        if (!rc && !found && (user_ca || !init))
            rc = kjoin_err_set(err, KJOIN_E_USAGE, "the CA Secret %s/%s does not exist", w->ns, user_ca ? p->ca_secret : name);
    }
    /* The index: the further nodes and clients, comma-separated. */
    for (char *save = NULL, *t = rc ? NULL : strtok_r(index, ",", &save); !rc && t; t = strtok_r(NULL, ",", &save)) {
        cert_kind kind;
        char user[64];
        if (!kjoin_certs__entry_name(t, &kind, user) || kind == CERT_CA || !strcmp(t, "node") ||
            !kjoin_certs__secret_name(w->prefix, t, name) || kjoin_certs__find(p, t))
            rc = bad(&p->sec[0], A_INDEX, "annotation holds a name that is not a further node or client", err);
        else if (!(rc = load_entry(p, t, name, false, &found, err)) && !found)
            rc = kjoin_err_set(err, KJOIN_E_USAGE, "Secret %s/%s of %s is missing: issue it again", w->ns, name, t);
    }
    entry *ca = rc ? NULL : kjoin_certs__find(p, "ca");
    if (ca && ca->changed_outside)
        rc = keep_old_issuers(p, ca, err);
    return rc;
}

/* What a killed init left is loaded, to be reused (the CA) or replaced:
 * the whole set, and the client's Secret, which the index does not name
 * until the node Secret is written. */
static kjoin_code open_new(pki *p, const char *client, kjoin_err *err)
{
    char secret[SECRET_NAME_MAX];
    bool found;
    kjoin_code rc = load(p, KJOIN_STORE_CREATE, err);
    if (rc || p->initialised || kjoin_certs__find(p, client))
        return rc;
    if (!kjoin_certs__secret_name(p->where->prefix, client, secret))
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s cannot be a Secret: a Secret name takes lowercase letters, digits "
                             "and '-'", client);
    return load_entry(p, client, secret, false, &found, err);
}

static void close_store(pki *p)
{
    for (size_t i = 0; i < KJOIN_CERTS_MAX_ENTRIES; i++) {
        if (p->sec[i].obj)
            kjoin_certs__secret_release(&p->sec[i]);
        sk_X509_pop_free(p->held_ca[i], X509_free);
        p->held_ca[i] = NULL;
    }
    p->initialised = false;
    p->ca_secret[0] = '\0';
}

static const char *where(const pki *p, char *buf, size_t cap)
{
    snprintf(buf, cap, "Secrets %s/%s-*", p->where->ns, p->where->prefix);
    return buf;
}

static kjoin_code check_init(const kjoin_certs_store *st, const kjoin_certs_init_opts *o, bool *provided,
                             kjoin_err *err)
{
    *provided = st->ca_secret != NULL;
    return o->ca_cert ? kjoin_err_set(err, KJOIN_E_USAGE, "in Secrets a CA you provide is a Secret (`ca_secret`), not "
                                      "files")
                      : KJOIN_OK;
}

/* ---- writing ------------------------------------------------------------ */

/* A leaf's ca.crt: the CA bundle, and its own issuer when the bundle lost
 * it (a CA the user replaced): a Secret never lacks its leaf's issuer. */
static char *leaf_ca_pem(pki *p, size_t i, const entry *ca)
{
    STACK_OF(X509) *held = p->held_ca[i], *out = sk_X509_dup(ca->certs);
    X509 *leaf = kjoin_certs__first(&p->e[i]);
    bool ok = out != NULL;
    for (int j = 0; ok && held && j < sk_X509_num(held) && !kjoin_certs__issued_by(kjoin_certs__first(ca), leaf); j++) {
        X509 *x = sk_X509_value(held, j);
        if (!in_stack(ca->certs, x) && kjoin_certs__issued_by(x, leaf)) {
            ok = sk_X509_push(out, x) > 0;
            break;
        }
    }
    char *pem = ok ? kjoin_certs__pem_certs(out, NULL) : NULL;
    sk_X509_free(out); /* borrowed certificates */
    return pem;
}

static bool put_pem(json_object *obj, certs_secret *view, secret_key k, char *pem)
{
    bool ok = pem && kjoin_certs__secret_put_data(obj, k, pem, strlen(pem));
    view->data[k] = pem;
    view->len[k] = pem ? strlen(pem) : 0;
    return ok;
}

json_object *kjoin_certs__entry_secret(pki *p, size_t i, const char *ns, const char *prefix, const certs_secret *old,
                                       kjoin_err *err)
{
    entry *e = &p->e[i], *ca = kjoin_certs__find(p, "ca");
    char name[SECRET_NAME_MAX], dur[32], list[1100] = "";
    if (!kjoin_certs__secret_name(prefix, e->name, name)) {
        kjoin_err_set(err, KJOIN_E_USAGE, "%s cannot be a Secret: a Secret name takes lowercase letters, digits and '-'", e->name);
        return NULL;
    }
    bool is_ca = e->kind == CERT_CA;
    json_object *obj = kjoin_certs__secret_new(old, ns, name, prefix, is_ca ? "Opaque" : "kubernetes.io/tls");
    certs_secret view = {0}; /* what the data fingerprint covers */
    bool ok = is_ca ? put_pem(obj, &view, SECRET_CA_CRT, kjoin_certs__pem_certs(e->certs, NULL)) &&
                          put_pem(obj, &view, SECRET_CA_KEY, kjoin_certs__pem_key(e->key))
                    : put_pem(obj, &view, SECRET_CA_CRT, leaf_ca_pem(p, i, ca)) &&
                          put_pem(obj, &view, SECRET_TLS_CRT, kjoin_certs__pem_certs(e->certs, NULL)) &&
                          put_pem(obj, &view, SECRET_TLS_KEY, kjoin_certs__pem_key(e->key));
    char fp[80];
    kjoin_certs__data_fingerprint(&view, fp);
    for (int k = 0; k < SECRET_N_KEYS; k++)
        kjoin_free_wiped(view.data[k], view.len[k]);
    kjoin_certs__secret_annotate(obj, A_MANAGED, "kjoin");
    kjoin_certs__secret_annotate(obj, A_CREATED, e->created);
    kjoin_certs__secret_annotate(obj, A_DURATION, kjoin_certs__hours(e->duration, dur, sizeof(dur)));
    kjoin_certs__secret_annotate(obj, A_REGEN, e->needs_regen ? "True" : "False");
    kjoin_certs__secret_annotate(obj, A_ENTRY, e->name);
    kjoin_certs__secret_annotate(obj, A_DATA_FP, fp);
    if (!is_ca) {
        kjoin_certs__secret_annotate(obj, A_CA_FP, e->ca_fingerprint);
        for (size_t j = 0; j < e->n_names; j++)
            snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", j ? "," : "", e->names[j]);
        if (e->n_names)
            kjoin_certs__secret_annotate(obj, e->kind == CERT_NODE ? A_SANS : A_GROUPS, list);
    }
    if (!ok) {
        kjoin_certs__json_free(obj);
        kjoin_err_set(err, KJOIN_E_OTHER, "cannot encode %s", e->name);
        return NULL;
    }
    return obj;
}

/* The node Secret also holds the settings, the index of further
 * certificates and the user's CA Secret: it is written last, so a run
 * killed before it leaves a set the next run finishes. */
static kjoin_code annotate_node(pki *p, json_object *obj, kjoin_err *err)
{
    char index[1100] = "";
    for (size_t i = 0; i < p->n; i++)
        if (p->e[i].kind != CERT_CA && strcmp(p->e[i].name, "node") != 0)
            snprintf(index + strlen(index), sizeof(index) - strlen(index), "%s%s", *index ? "," : "", p->e[i].name);
    char *set = kjoin_certs__settings_encode(&p->s);
    if (!set)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_certs__secret_annotate(obj, A_SETTINGS, set);
    free(set);
    kjoin_certs__secret_annotate(obj, A_INDEX, index);
    if (*p->ca_secret)
        kjoin_certs__secret_annotate(obj, A_CA_SECRET, p->ca_secret);
    return KJOIN_OK;
}

/* The Secret of e[i] as it would be written, or NULL when nothing kjoin
 * owns in it changes (*rc is then KJOIN_OK). */
static json_object *encode(pki *p, size_t i, kjoin_code *rc, kjoin_err *err)
{
    certs_secret *old = p->sec[i].obj ? &p->sec[i] : NULL;
    json_object *obj = kjoin_certs__entry_secret(p, i, p->where->ns, p->where->prefix, old, err);
    *rc = obj ? KJOIN_OK : (err ? err->code : KJOIN_E_OTHER);
    if (!*rc && strcmp(p->e[i].name, "node") == 0)
        *rc = annotate_node(p, obj, err);
    unsigned char sig[32];
    if (!*rc)
        kjoin_certs__secret_sig(obj, sig);
    if (*rc || (old && CRYPTO_memcmp(sig, old->sig, sizeof(sig)) == 0)) {
        kjoin_certs__json_free(obj);
        return NULL;
    }
    return obj;
}

/* Each Secret whose content changed: the CA, the leaves, the node Secret
 * (which holds the settings and the index) last, each a compare-and-swap. */
static kjoin_code save(pki *p, kjoin_err *err)
{
    /* The order: the CA, the leaves, the node Secret (the settings and the
     * index) last. All are encoded before the first write, so a
     * certificate that cannot be a Secret stops the run with nothing
     * written. */
    size_t order[KJOIN_CERTS_MAX_ENTRIES], n = 0, node = p->n;
    json_object *objs[KJOIN_CERTS_MAX_ENTRIES] = {0};
    for (size_t i = 0; i < p->n; i++)
        if (p->e[i].kind == CERT_CA && !p->e[i].user_provided)
            order[n++] = i;
    for (size_t i = 0; i < p->n; i++) {
        if (p->e[i].kind != CERT_CA && strcmp(p->e[i].name, "node") != 0)
            order[n++] = i;
        else if (p->e[i].kind != CERT_CA)
            node = i;
    }
    if (node < p->n)
        order[n++] = node;
    kjoin_code rc = KJOIN_OK;
    for (size_t k = 0; !rc && k < n; k++)
        objs[k] = encode(p, order[k], &rc, err);
    for (size_t k = 0; !rc && k < n; k++) {
        if (k + 1 == n && node < p->n)
            kjoin_store__crash_point("before-node-secret");
        if (objs[k]) {
            json_object *meta = json_object_object_get(objs[k], "metadata");
            rc = write_secret(p, json_object_get_string(json_object_object_get(meta, "name")), objs[k],
                              p->sec[order[k]].obj != NULL, err);
        }
        if (k == 0 && p->e[order[0]].kind == CERT_CA) {
            p->ca_saved = !rc && objs[0];
            kjoin_store__crash_point("after-ca-secret");
        }
    }
    for (size_t k = 0; k < n; k++)
        kjoin_certs__json_free(objs[k]);
    return rc;
}

const certs_backend kjoin_certs__secrets_backend = {
    .load = load,
    .open_new = open_new,
    .save = save,
    .close = close_store,
    .where = where,
    .behind = behind,
    .check_init = check_init,
    .adopts_changed_ca = true,
    .no_adopt_ca = "adopt-ca works on a directory; in Secrets, put the new CA into the CA Secret and the next rotate "
                   "adopts it (the RFC's new CA case)",
};
