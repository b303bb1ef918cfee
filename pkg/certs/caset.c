/* kjoin certs ca-set: the CAs a Kubernetes control plane needs (server,
 * client, request-header, etcd peer and server CAs, and the service-account
 * key pair), signed under an organisation's root, in the files K3s or
 * kubeadm read (K3s' ADR "CA certificate rotation, signing by external
 * root").
 *
 * Each CA file is a bundle: the CA, the intermediate, and the chain to the
 * self-signed root. A node pins the root (root-sha256: over its DER, or
 * kubeadm's sha256: over its key), and the pin holds across rotations of
 * the intermediate and of the cluster CAs, which is the point of the ADR.
 *
 * The directory is opened once (the certs store's checks: owner, modes, no
 * symlink followed) and every file is reached from that descriptor. A run
 * writes the whole set into DIR/.kjoin-ca-set.new/, marks it complete, then
 * renames each file into place; a run killed in between leaves either no
 * marker (the stage is discarded) or a marker (the next run finishes the
 * moves), never a CA next to another CA's key. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <kjoin/private/pin.h>
#include <kjoin/private/util.h>

#include "pki.h"

#define STAGE ".kjoin-ca-set.new"
#define MARK "complete"
#define TEN_YEARS (87600LL * 3600)
#define MAX_FILES (2 * KJOIN_CA_SET_MAX + 3)

typedef struct ca_slot {
    const char *role, *cn, *crt, *key;
} ca_slot;

typedef struct layout {
    const char *name;
    ca_slot cas[KJOIN_CA_SET_MAX];
    size_t n;
    const char *sa_key; /* K3s: service.key holds the new key, then the previous one */
    const char *sa_pub; /* kubeadm: sa.pub holds both public keys; NULL for K3s */
    /* kubeadm: each CA file holds the CA alone (kube-controller-manager's
     * signer takes exactly one certificate; etcd and the apiserver trust
     * every certificate of their CA files for client auth), and the first
     * CA's bundle, which nodes pin, is a file of its own for cluster-info.
     * NULL for K3s, which reads bundles from its CA files. */
    const char *bundle_file;
} layout;

static const layout layouts[] = {
    [KJOIN_CA_LAYOUT_K3S] = {"k3s",
                             {{"server", "server-ca", "server-ca.crt", "server-ca.key"},
                              {"client", "client-ca", "client-ca.crt", "client-ca.key"},
                              {"request-header", "request-header-ca", "request-header-ca.crt", "request-header-ca.key"},
                              {"etcd-peer", "etcd-peer-ca", "etcd/peer-ca.crt", "etcd/peer-ca.key"},
                              {"etcd-server", "etcd-server-ca", "etcd/server-ca.crt", "etcd/server-ca.key"}},
                             5, "service.key", NULL, NULL},
    /* kubeadm has one CA for servers and clients, and one for etcd. */
    [KJOIN_CA_LAYOUT_KUBEADM] = {"kubeadm",
                                 {{"server,client", "kubernetes-ca", "pki/ca.crt", "pki/ca.key"},
                                  {"request-header", "front-proxy-ca", "pki/front-proxy-ca.crt", "pki/front-proxy-ca.key"},
                                  {"etcd-peer,etcd-server", "etcd-ca", "pki/etcd/ca.crt", "pki/etcd/ca.key"}},
                                 3, "pki/sa.key", "pki/sa.pub", "pki/ca-bundle.crt"},
};

kjoin_code kjoin_ca_layout_parse(const char *s, kjoin_ca_layout *out, kjoin_err *err)
{
    for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
        if (strcmp(s, layouts[i].name) == 0) {
            *out = (kjoin_ca_layout)i;
            return KJOIN_OK;
        }
    return kjoin_err_set(err, KJOIN_E_USAGE, "the layout is k3s or kubeadm, not \"%.40s\"", s);
}

/* The files of a layout, in a fixed order: each CA's certificate and key,
 * then the service-account files. The stage names them by that index. */
static size_t layout_files(const layout *l, const char *names[MAX_FILES])
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++) {
        names[n++] = l->cas[i].crt;
        names[n++] = l->cas[i].key;
    }
    names[n++] = l->sa_key;
    if (l->sa_pub)
        names[n++] = l->sa_pub;
    if (l->bundle_file)
        names[n++] = l->bundle_file;
    return n;
}

/* One CA of a set: its bundle (the CA first, then its chain to the root,
 * then the previous CA and its own issuers) and key. */
typedef struct ca_pair {
    STACK_OF(X509) *certs;
    EVP_PKEY *key;
} ca_pair;

typedef struct ca_set {
    const kjoin_ca_set_opts *o;
    const layout *l;
    int64_t now;
    kjoin_store store;
    STACK_OF(X509) *chain; /* the signer first, then its chain; the root last */
    EVP_PKEY *signer_key;
    ca_pair old[KJOIN_CA_SET_MAX]; /* the set in dir, if any */
    EVP_PKEY *old_sa;
    char tag[9]; /* random hex shared by the set's names */
    X509 *intermediate;
    EVP_PKEY *intermediate_key;
    ca_pair made[KJOIN_CA_SET_MAX];
    EVP_PKEY *sa;
    kjoin_ca_set_result *r;
} ca_set;

static void release(ca_set *c)
{
    kjoin_store__close(&c->store);
    sk_X509_pop_free(c->chain, X509_free);
    EVP_PKEY_free(c->signer_key);
    for (size_t i = 0; i < KJOIN_CA_SET_MAX; i++) {
        sk_X509_pop_free(c->old[i].certs, X509_free);
        EVP_PKEY_free(c->old[i].key);
        sk_X509_pop_free(c->made[i].certs, X509_free);
        EVP_PKEY_free(c->made[i].key);
    }
    EVP_PKEY_free(c->old_sa);
    X509_free(c->intermediate);
    EVP_PKEY_free(c->intermediate_key);
    EVP_PKEY_free(c->sa);
}

static X509 *root_of(STACK_OF(X509) *chain) { return sk_X509_value(chain, sk_X509_num(chain) - 1); }

static bool in_chain(STACK_OF(X509) *chain, X509 *x)
{
    for (int i = 0; i < sk_X509_num(chain); i++)
        if (X509_cmp(sk_X509_value(chain, i), x) == 0)
            return true;
    return false;
}

/* Whether bundle[0] chains to root at now through the rest of bundle, with
 * OpenSSL's full checks (validity, CA flags, path lengths, key usage);
 * the reason when not. */
static bool verifies(STACK_OF(X509) *bundle, X509 *root, int64_t now, const char **why)
{
    X509_STORE *store = X509_STORE_new();
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    bool ok = store && ctx && X509_STORE_add_cert(store, root) == 1 &&
              X509_STORE_CTX_init(ctx, store, sk_X509_value(bundle, 0), bundle) == 1;
    if (ok) {
        X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(ctx), (time_t)now);
        ok = X509_verify_cert(ctx) == 1;
        *why = ok ? "" : X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx));
    } else {
        *why = "out of memory";
    }
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);
    ERR_clear_error();
    return ok;
}

/* The signer and its chain: the first certificate signs, the last is a
 * self-signed root (the pin's anchor; K3s hashes it too), and the chain
 * verifies now. */
static kjoin_code load_signer(ca_set *c, kjoin_err *err)
{
    kjoin_code rc = kjoin_certs__read_ca(c->o->root_cert, c->o->root_key, &c->chain, &c->signer_key,
                                         &c->r->root_key_shared, err);
    if (rc)
        return rc;
    X509 *root = root_of(c->chain);
    char subject[256];
    kjoin_certs__subject(root, subject, sizeof(subject));
    if (X509_check_issued(root, root) != X509_V_OK) {
        ERR_clear_error();
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "%s ends with \"%s\", which is not self-signed: append the chain up to the root, whose "
                             "hash the nodes pin",
                             c->o->root_cert, subject);
    }
    const char *why = "";
    if (!verifies(c->chain, root, c->now, &why))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the CA in %s does not verify to its root \"%s\": %s",
                             c->o->root_cert, subject, why);
    return KJOIN_OK;
}

/* ---- files under the directory, reached from its descriptor ---- */

/* Opens (creating with 0700 when asked) the directories of rel's parent,
 * one component at a time, never following a symlink; each must be owned
 * by this user or root and writable by no one else. */
static kjoin_code open_parent(ca_set *c, const char *rel, bool create, int *out, const char **base, kjoin_err *err)
{
    char path[64];
    snprintf(path, sizeof(path), "%s", rel);
    int fd = dup(c->store.dirfd);
    char *p = path, *slash;
    while (fd >= 0 && (slash = strchr(p, '/'))) {
        *slash = '\0';
        if (create && mkdirat(fd, p, 0700) != 0 && errno != EEXIST) {
            close(fd);
            return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot create %s/%s: %s", c->o->dir, path, strerror(errno));
        }
        int sub = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int saved = errno;
        close(fd);
        if (sub < 0) {
            *out = -1;
            if (saved == ENOENT && !create)
                return KJOIN_OK;
            return kjoin_err_set(err, KJOIN_E_USAGE, "cannot open %s/%s: %s%s", c->o->dir, path, strerror(saved),
                                 saved == ELOOP || saved == ENOTDIR ? " (a symlink is not followed)" : "");
        }
        struct stat st;
        if (fstat(sub, &st) != 0 || (st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & 022)) {
            close(sub);
            return kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s must be owned by this user or root and writable by no "
                                                     "one else", c->o->dir, path);
        }
        fd = sub;
        *slash = '/';
        p = slash + 1;
    }
    if (fd < 0)
        return kjoin_err_set(err, KJOIN_E_OTHER, "cannot open %s: %s", c->o->dir, strerror(errno));
    *out = fd;
    *base = rel + (p - path);
    return KJOIN_OK;
}

/* Reads DIR/rel (*out NULL when it does not exist): a regular file, not a
 * symlink, owned by this user or root, writable by no one else, and for a
 * key readable by no one else either (ssh's rule for a private key). */
static kjoin_code read_file(ca_set *c, const char *rel, bool secret, char **out, size_t *len, kjoin_err *err)
{
    *out = NULL;
    *len = 0;
    int dirfd = -1;
    const char *base = NULL;
    kjoin_code rc = open_parent(c, rel, false, &dirfd, &base, err);
    if (rc || dirfd < 0)
        return rc;
    int fd = openat(dirfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    int saved = errno;
    close(dirfd);
    if (fd < 0)
        return saved == ENOENT ? KJOIN_OK
                               : kjoin_err_set(err, KJOIN_E_USAGE, "cannot open %s/%s: %s%s", c->o->dir, rel,
                                               strerror(saved), saved == ELOOP ? " (a symlink is not followed)" : "");
    struct stat st;
    char what[300];
    snprintf(what, sizeof(what), "%s/%s", c->o->dir, rel);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s is not a regular file", what);
    else if ((st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & (secret ? 077 : 022)))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s must be owned by this user or root and %s by no one else "
                                               "(mode %04o)", what, secret ? "readable" : "writable",
                           (unsigned)(st.st_mode & 07777));
    else
        rc = kjoin_store__read_fd(fd, what, out, len, err);
    close(fd);
    return rc;
}

/* The first private key of a PEM file holding one or more (K3s'
 * service.key keeps old keys after the new one). */
static kjoin_code read_key(ca_set *c, const char *rel, EVP_PKEY **out, bool *present, kjoin_err *err)
{
    char *pem = NULL;
    size_t len = 0;
    kjoin_code rc = read_file(c, rel, true, &pem, &len, err);
    *present = pem != NULL;
    if (rc || !pem)
        return rc;
    *out = kjoin_certs__parse_key(pem, len);
    kjoin_free_wiped(pem, len);
    return *out ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s holds no private key", c->o->dir, rel);
}

/* The certificates of DIR/rel; *out NULL when the file does not exist. */
static kjoin_code read_certs(ca_set *c, const char *rel, STACK_OF(X509) **out, kjoin_err *err)
{
    char *pem = NULL;
    size_t len = 0;
    kjoin_code rc = read_file(c, rel, false, &pem, &len, err);
    if (rc || !pem)
        return rc;
    *out = kjoin_certs__parse_certs(pem, len);
    free(pem);
    return *out ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s holds no certificate", c->o->dir, rel);
}

/* Notes the first file found and the first one missing, in layout order. */
static void account(const char *name, bool here, const char **present, const char **missing)
{
    if (here && !*present)
        *present = name;
    if (!here && !*missing)
        *missing = name;
}

/* kubeadm: each CA file holds the CA alone; the chain is in the bundle
 * file, which must start with the first CA. Each CA gets the bundle's
 * certificates after its own, to be checked (and kept) as K3s' are. */
static kjoin_code join_bundle_file(ca_set *c, STACK_OF(X509) *bundle, kjoin_err *err)
{
    if (X509_cmp(sk_X509_value(bundle, 0), sk_X509_value(c->old[0].certs, 0)) != 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s does not start with the CA of %s/%s: restore it", c->o->dir,
                             c->l->bundle_file, c->o->dir, c->l->cas[0].crt);
    for (size_t i = 0; i < c->l->n; i++)
        for (int j = 1; j < sk_X509_num(bundle); j++)
            if (!X509_up_ref(sk_X509_value(bundle, j)) || !sk_X509_push(c->old[i].certs, sk_X509_value(bundle, j)))
                return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    return KJOIN_OK;
}

/* The set in the directory: none (*complete false, nothing present), or
 * complete and made under the given root. Anything between is refused:
 * kjoin does not replace CAs it cannot account for. */
static kjoin_code read_existing(ca_set *c, bool *complete, kjoin_err *err)
{
    const char *missing = NULL, *present = NULL;
    kjoin_code rc = KJOIN_OK;
    for (size_t i = 0; i < c->l->n && !rc; i++) {
        const ca_slot *s = &c->l->cas[i];
        bool has_key = false;
        if ((rc = read_certs(c, s->crt, &c->old[i].certs, err)) ||
            (rc = read_key(c, s->key, &c->old[i].key, &has_key, err)))
            break;
        if (c->old[i].certs && has_key && X509_check_private_key(sk_X509_value(c->old[i].certs, 0), c->old[i].key) != 1) {
            ERR_clear_error();
            rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s is not the key of the CA in %s/%s", c->o->dir, s->key,
                               c->o->dir, s->crt);
        }
        account(s->crt, c->old[i].certs != NULL, &present, &missing);
        account(s->key, has_key, &present, &missing);
    }
    bool has_sa = false;
    STACK_OF(X509) *bundle = NULL;
    if (!rc && !(rc = read_key(c, c->l->sa_key, &c->old_sa, &has_sa, err)))
        account(c->l->sa_key, has_sa, &present, &missing);
    if (!rc && c->l->bundle_file && !(rc = read_certs(c, c->l->bundle_file, &bundle, err)))
        account(c->l->bundle_file, bundle != NULL, &present, &missing);
    *complete = !missing;
    if (!rc && present && missing)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s holds %s but not %s: not a complete %s set; move the files away "
                                               "or restore them", c->o->dir, present, missing, c->l->name);
    if (!rc && present && bundle)
        rc = join_bundle_file(c, bundle, err);
    sk_X509_pop_free(bundle, X509_free);
    X509 *root = root_of(c->chain);
    for (size_t i = 0; !rc && present && i < c->l->n; i++) {
        STACK_OF(X509) *b = c->old[i].certs;
        const char *why = "";
        if (!in_chain(b, root) || !verifies(b, root, c->now, &why)) {
            char subject[256];
            kjoin_certs__subject(root, subject, sizeof(subject));
            rc = kjoin_err_set(err, KJOIN_E_USAGE,
                               "the CA in %s/%s is not under the root \"%s\"%s%s: a set under another root changes "
                               "every node's pin, which kjoin does not do in place; write the new set to another "
                               "directory", c->o->dir, c->l->cas[i].crt, subject, *why ? ": " : "", why);
        }
    }
    return rc;
}

/* ---- making the set ---- */

/* The notAfter of a new CA under issuer: now + duration, or by default the
 * shorter of ten years and the issuer's end. A CA that would outlive its
 * issuer is refused: it would fail on that day, not on its own. */
static kjoin_code lifetime(ca_set *c, const char *what, int64_t duration, X509 *issuer, int64_t *not_after,
                           kjoin_err *err)
{
    int64_t end = kjoin_certs__not_after(issuer);
    if (!duration) {
        *not_after = c->now + TEN_YEARS < end ? c->now + TEN_YEARS : end;
        return KJOIN_OK;
    }
    *not_after = c->now + duration;
    if (*not_after <= end)
        return KJOIN_OK;
    char subject[256], hours[32];
    kjoin_certs__subject(issuer, subject, sizeof(subject));
    return kjoin_err_set(err, KJOIN_E_USAGE, "the %s would outlive its issuer \"%s\" by %s: give a duration of at "
                                             "most %s", what, subject,
                         kjoin_certs__hours(*not_after - end, hours, sizeof(hours)),
                         kjoin_certs__hours(end - c->now, (char[32]){0}, 32));
}

/* A CA named as K3s names its own ("k3s-server-ca@<time>"), plus the set's
 * tag, so that a set rotated within the same second has other names. Its
 * notBefore allows 5 minutes of clock skew, but not before its issuer's. */
static X509 *new_ca(ca_set *c, const char *cn, bool no_sub_ca, int64_t not_after, EVP_PKEY *key, X509 *issuer,
                    EVP_PKEY *issuer_key, kjoin_err *err)
{
    char name[96];
    snprintf(name, sizeof(name), "kjoin-%s@%lld-%s", cn, (long long)c->now, c->tag);
    int64_t not_before = c->now - 300, issuer_from = kjoin_certs__not_before(issuer);
    cert_request req = {.kind = CERT_CA, .cn = name, .not_before = not_before > issuer_from ? not_before : issuer_from,
                        .not_after = not_after, .no_sub_ca = no_sub_ca};
    return kjoin_certs__issue(&req, key, issuer, issuer_key, err);
}

/* The previous CA and its own issuers that the new bundle keeps: what they
 * issued stays trusted until renewed. Expired ones and the shared chain are
 * left out; so is anything older (one generation is kept). */
static bool keep_previous(ca_set *c, STACK_OF(X509) *bundle, STACK_OF(X509) *old)
{
    X509 *prev = sk_X509_value(old, 0);
    for (X509 *x = prev; x && !in_chain(c->chain, x) && kjoin_certs__not_after(x) > c->now;) {
        if (!X509_up_ref(x) || !sk_X509_push(bundle, x))
            return false;
        X509 *up = NULL;
        for (int j = 1; j < sk_X509_num(old) && !up; j++)
            if (sk_X509_value(old, j) != x && kjoin_certs__issued_by(sk_X509_value(old, j), x))
                up = sk_X509_value(old, j);
        x = up;
    }
    return true;
}

static kjoin_code make_set(ca_set *c, kjoin_err *err)
{
    X509 *signer = sk_X509_value(c->chain, 0);
    EVP_PKEY *signer_key = c->signer_key;
    int64_t not_after = 0;
    unsigned char tag[4];
    kjoin_code rc = kjoin_random_bytes(tag, sizeof(tag), err);
    if (rc)
        return rc;
    kjoin_hex(tag, sizeof(tag), c->tag);
    if (c->o->intermediate) {
        if ((rc = lifetime(c, "intermediate", c->o->intermediate_duration, signer, &not_after, err)) ||
            !(c->intermediate_key = kjoin_certs__new_key(c->o->key_type, err)) ||
            !(c->intermediate = new_ca(c, "intermediate-ca", false, not_after, c->intermediate_key, signer,
                                       signer_key, err)))
            return rc ? rc : KJOIN_E_OTHER;
        signer = c->intermediate;
        signer_key = c->intermediate_key;
    }
    if ((rc = lifetime(c, "cluster CAs", c->o->ca_duration, signer, &not_after, err)))
        return rc;
    for (size_t i = 0; i < c->l->n; i++) {
        ca_pair *m = &c->made[i];
        X509 *x = NULL;
        if (!(m->key = kjoin_certs__new_key(c->o->key_type, err)) ||
            !(x = new_ca(c, c->l->cas[i].cn, true, not_after, m->key, signer, signer_key, err)))
            return KJOIN_E_OTHER;
        bool ok = (m->certs = sk_X509_new_null()) && sk_X509_push(m->certs, x);
        if (!ok)
            X509_free(x);
        ok = ok && (!c->intermediate || (X509_up_ref(c->intermediate) && sk_X509_push(m->certs, c->intermediate)));
        for (int j = 0; ok && j < sk_X509_num(c->chain); j++)
            ok = X509_up_ref(sk_X509_value(c->chain, j)) && sk_X509_push(m->certs, sk_X509_value(c->chain, j));
        ok = ok && (!c->old[i].certs || keep_previous(c, m->certs, c->old[i].certs));
        if (!ok)
            return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        const char *why = "";
        if (!verifies(m->certs, root_of(c->chain), c->now, &why))
            return kjoin_err_set(err, KJOIN_E_USAGE, "the new %s CA does not verify to the root: %s (check the "
                                                     "root's path length and key usage)", c->l->cas[i].role, why);
    }
    /* The service-account signing key: RSA 2048, what every apiserver accepts. */
    return (c->sa = kjoin_certs__new_key(KJOIN_KEY_RSA2048, err)) ? KJOIN_OK : KJOIN_E_OTHER;
}

/* Two keys' PEM, one after the other. */
static char *pem_keys(EVP_PKEY *a, EVP_PKEY *b)
{
    char *x = kjoin_certs__pem_key(a), *y = b ? kjoin_certs__pem_key(b) : NULL;
    size_t nx = x ? strlen(x) : 0, ny = y ? strlen(y) : 0;
    char *out = x && (y || !b) ? malloc(nx + ny + 1) : NULL;
    if (out) {
        memcpy(out, x, nx);
        memcpy(out + nx, y ? y : "", ny + 1);
    }
    kjoin_free_wiped_str(x);
    kjoin_free_wiped_str(y);
    return out;
}

/* ---- the stage, and moving it in place ---- */

/* Removes the stage: its entries (never followed), then the directory. */
static void remove_stage(ca_set *c)
{
    kjoin_store__remove_dir(c->store.dirfd, STAGE, false);
    fsync(c->store.dirfd);
}

/* Moves each staged file to its name (a file already moved is skipped),
 * then removes the stage. */
static kjoin_code move_stage(ca_set *c, const layout *l, int stage, kjoin_err *err)
{
    const char *names[MAX_FILES];
    size_t n = layout_files(l, names);
    for (size_t i = 0; i < n; i++) {
        char staged[24];
        struct stat st;
        snprintf(staged, sizeof(staged), "%zu", i);
        if (fstatat(stage, staged, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        int dirfd = -1;
        const char *base = NULL;
        kjoin_code rc = S_ISREG(st.st_mode) && st.st_uid == geteuid()
                            ? open_parent(c, names[i], true, &dirfd, &base, err)
                            : kjoin_err_set(err, KJOIN_E_USAGE, "%s/" STAGE "/%s is not a file kjoin staged: remove "
                                                                "the stage", c->o->dir, staged);
        if (rc)
            return rc;
        bool ok = renameat(stage, staged, dirfd, base) == 0 && fsync(dirfd) == 0;
        int saved = errno;
        close(dirfd);
        if (!ok)
            return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot move the new %s into %s: %s", names[i], c->o->dir,
                                 strerror(saved));
        if (i == 0) /* a CA in place, its key not yet: the worst moment */
            kjoin_store__crash_point("ca-set-moving");
    }
    remove_stage(c);
    return KJOIN_OK;
}

/* A stage a killed run left: finished when marked complete (its set was
 * whole), else discarded. *finished says which. */
static kjoin_code recover_stage(ca_set *c, bool *finished, kjoin_err *err)
{
    *finished = false;
    int stage = openat(c->store.dirfd, STAGE, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (stage < 0 && errno == ENOENT)
        return KJOIN_OK;
    struct stat st;
    if (stage < 0 || fstat(stage, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
        if (stage >= 0)
            close(stage);
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s/" STAGE " is not kjoin's stage (a symlink, another owner or "
                                                 "open modes): remove it", c->o->dir);
    }
    /* The mark: a regular file of ours (never a FIFO to block on). */
    char mark[16] = "";
    int fd = openat(stage, MARK, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    ssize_t n = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()
                    ? read(fd, mark, sizeof(mark) - 1)
                    : -1;
    if (fd >= 0)
        close(fd);
    mark[n > 0 ? n : 0] = '\0';
    kjoin_code rc = KJOIN_OK;
    if (n > 0) {
        kjoin_ca_layout staged;
        if (kjoin_ca_layout_parse(mark, &staged, err) || staged != c->o->layout)
            rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s/" STAGE " holds a set of another layout (%.15s): finish it "
                                                   "with that layout or remove it", c->o->dir, mark);
        else if (!(rc = move_stage(c, c->l, stage, err)))
            *finished = true;
    } else {
        remove_stage(c);
    }
    close(stage);
    return rc;
}

static kjoin_code stage_and_move(ca_set *c, kjoin_err *err)
{
    const char *names[MAX_FILES];
    char *data[MAX_FILES] = {0};
    size_t n = layout_files(c->l, names), k = 0;
    for (size_t i = 0; i < c->l->n; i++) {
        STACK_OF(X509) *b = c->made[i].certs;
        data[k++] = c->l->bundle_file ? kjoin_certs__pem_certs(NULL, sk_X509_value(b, 0))
                                      : kjoin_certs__pem_certs(b, NULL);
        data[k++] = kjoin_certs__pem_key(c->made[i].key);
    }
    data[k++] = c->l->sa_pub ? kjoin_certs__pem_key(c->sa) : pem_keys(c->sa, c->old_sa);
    if (c->l->sa_pub)
        data[k++] = kjoin_certs__pem_public(c->sa, c->old_sa);
    if (c->l->bundle_file)
        data[k++] = kjoin_certs__pem_certs(c->made[0].certs, NULL);
    kjoin_code rc = KJOIN_OK;
    for (size_t i = 0; i < n && !rc; i++)
        if (!data[i])
            rc = kjoin_err_set(err, KJOIN_E_OTHER, "cannot encode %s", names[i]);
    int stage = -1;
    if (!rc && (mkdirat(c->store.dirfd, STAGE, 0700) != 0 ||
                (stage = openat(c->store.dirfd, STAGE, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0))
        rc = kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot create %s/" STAGE ": %s", c->o->dir, strerror(errno));
    for (size_t i = 0; i < n && !rc; i++) {
        char staged[24];
        snprintf(staged, sizeof(staged), "%zu", i);
        if (!kjoin_store__write_at(stage, staged, data[i], strlen(data[i]), 0600))
            rc = kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot write %s/" STAGE "/%s: %s", c->o->dir, staged,
                               strerror(errno));
    }
    /* The commit point: once the mark is on disk, the set is whole and any
     * later run puts it in place. */
    if (!rc && (fsync(stage) != 0 || !kjoin_store__write_at(stage, MARK, c->l->name, strlen(c->l->name), 0600) ||
                fsync(stage) != 0))
        rc = kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot write %s/" STAGE ": %s", c->o->dir, strerror(errno));
    for (size_t i = 0; i < n; i++)
        kjoin_free_wiped_str(data[i]);
    if (rc) {
        if (stage >= 0)
            close(stage);
        remove_stage(c);
        return rc;
    }
    kjoin_store__crash_point("ca-set-staged");
    rc = move_stage(c, c->l, stage, err);
    close(stage);
    return rc;
}

/* ---- the result ---- */

static kjoin_code describe(ca_set *c, STACK_OF(X509) *const *bundles, kjoin_err *err)
{
    kjoin_ca_set_result *r = c->r;
    X509 *root = root_of(c->chain);
    kjoin_certs__subject(root, r->root, sizeof(r->root));
    kjoin_certs__subject(sk_X509_value(c->chain, 0), r->signer, sizeof(r->signer));
    r->intermediate[0] = '\0';
    snprintf(r->bundle_file, sizeof(r->bundle_file), "%s", c->l->bundle_file ? c->l->bundle_file : c->l->cas[0].crt);
    r->bundle = (size_t)sk_X509_num(bundles[0]);
    r->n = c->l->n;
    for (size_t i = 0; i < c->l->n; i++) {
        X509 *ca = sk_X509_value(bundles[i], 0);
        snprintf(r->cas[i].role, sizeof(r->cas[i].role), "%s", c->l->cas[i].role);
        snprintf(r->cas[i].file, sizeof(r->cas[i].file), "%s", c->l->cas[i].crt);
        kjoin_certs__subject(ca, r->cas[i].subject, sizeof(r->cas[i].subject));
        r->cas[i].not_after = kjoin_certs__not_after(ca);
        r->cas[i].bundle = c->l->bundle_file ? 1 : (size_t)sk_X509_num(bundles[i]);
        X509 *up = sk_X509_num(bundles[i]) > 1 ? sk_X509_value(bundles[i], 1) : NULL;
        if (i == 0 && up && !in_chain(c->chain, up))
            kjoin_certs__subject(up, r->intermediate, sizeof(r->intermediate));
    }
    /* The pins come from the code a join runs, parsing the server CA file
     * as a node receives it. */
    char *pem = kjoin_certs__pem_certs(bundles[0], NULL);
    kjoin_bundle *b = NULL;
    if (pem && kjoin_bundle_parse(pem, strlen(pem), &b, err) == KJOIN_OK) {
        for (size_t i = 0; i < kjoin_bundle_count(b); i++)
            if (X509_cmp(kjoin_bundle_x509(b, i), root) == 0) {
                snprintf(r->root_pin, sizeof(r->root_pin), "%s", kjoin_bundle_cert(b, i)->root_pin);
                snprintf(r->spki_pin, sizeof(r->spki_pin), "%s", kjoin_bundle_cert(b, i)->spki_pin);
            }
    }
    kjoin_bundle_free(b);
    free(pem);
    return *r->root_pin ? KJOIN_OK
                        : kjoin_err_set(err, KJOIN_E_OTHER, "the server CA file does not hold the root: no pin to give");
}

kjoin_code kjoin_certs_ca_set(const kjoin_ca_set_opts *o, int64_t now, kjoin_ca_set_result *r, kjoin_err *err)
{
    memset(r, 0, sizeof(*r));
    if (!o->dir || !*o->dir || !o->root_cert || !o->root_key)
        return kjoin_err_set(err, KJOIN_E_USAGE, "a CA set needs a directory, the root's certificate and its key");
    if ((unsigned)o->layout >= sizeof(layouts) / sizeof(layouts[0]))
        return kjoin_err_set(err, KJOIN_E_USAGE, "unknown layout");
    if (o->ca_duration < 0 || o->intermediate_duration < 0 || (o->intermediate_duration && !o->intermediate))
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s", o->ca_duration < 0 || o->intermediate_duration < 0
                                                           ? "durations must be positive"
                                                           : "an intermediate duration needs an intermediate");
    ca_set c = {.o = o, .l = &layouts[o->layout], .now = now, .r = r, .store = {.dirfd = -1, .lockfd = -1,
                                                                             .genfd = -1}};
    bool finished = false, complete = false;
    kjoin_code rc = load_signer(&c, err);
    if (!rc)
        rc = kjoin_store__open(o->dir, KJOIN_STORE_CREATE, &c.store, err);
    if (!rc)
        rc = recover_stage(&c, &finished, err);
    if (!rc)
        rc = read_existing(&c, &complete, err);
    if (!rc && o->rotate && !complete && !finished)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s holds no %s set to rotate: make one first (without rotating)",
                           o->dir, c.l->name);
    STACK_OF(X509) *bundles[KJOIN_CA_SET_MAX] = {0};
    if (!rc && (finished || (complete && !o->rotate))) {
        /* Done already: by the killed run this one finished, or before. */
        r->finished = finished;
        r->rotated = finished && o->rotate;
        for (size_t i = 0; i < c.l->n; i++)
            bundles[i] = c.old[i].certs;
        rc = describe(&c, bundles, err);
    } else if (!rc && !(rc = make_set(&c, err)) && !(rc = stage_and_move(&c, err))) {
        r->written = true;
        r->rotated = o->rotate;
        for (size_t i = 0; i < c.l->n; i++)
            bundles[i] = c.made[i].certs;
        rc = describe(&c, bundles, err);
    }
    release(&c);
    return rc;
}
