/* The TLS bootstrap as kubelet runs it: a key (kept across retries), a CSR
 * named after it, the wait for approval, the checks of what comes back, and
 * the files kubeadm and kubelet leave on a node. */
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include <kjoin/private/bootstrap.h>
#include <kjoin/private/kubeapi.h>
#include <kjoin/private/kubeconfig.h>
#include <kjoin/private/release.h>
#include <kjoin/private/safedir.h>
#include <kjoin/private/util.h>

#include "../certs/x509.h"
#include "internal.h"

#define CSR_PATH "/apis/certificates.k8s.io/v1/certificatesigningrequests"
#define KEY_TMP "kubelet-client.key.tmp" /* kubelet's name for the key of a pending CSR */
#define CURRENT "kubelet-client-current.pem"
#define MAX_PEM (1024 * 1024)

/* Everything one run resolved and holds. */
typedef struct run {
    const kjoin_bootstrap_spec *spec;
    char node[254], cn[300];
    char held_orgs[KJOIN_BOOTSTRAP_MAX_ORGS][128]; /* the current certificate's O, for a renewal */
    const char *orgs[KJOIN_BOOTSTRAP_MAX_ORGS];
    size_t n_orgs;
    const char *usages[KJOIN_BOOTSTRAP_MAX_USAGES];
    size_t n_usages;
    const char *signer, *kubeconfig_out, *pki_dir, *ca_cert_path;
    char current[4200], key_tmp[4200];
    kjoin_safedir pki; /* every file of the PKI directory is read and written through it */
    kjoin_kubeapi *api;
    EVP_PKEY *key;
    char *ca_pem; /* the CA the run trusts (the bootstrap kubeconfig's) */
    size_t ca_len;
    char *server;
    int64_t now;
} run;

static void logf_(const run *r, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void logf_(const run *r, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kjoin_vlogf(r->spec->log, r->spec->log_ctx, level, fmt, ap);
    va_end(ap);
}

static kjoin_code read_current(run *r, X509 **cert, STACK_OF(X509) **chain, EVP_PKEY **key, kjoin_err *err);

/* A renewal asks for the subject the current certificate holds. */
static kjoin_code subject_of_current(run *r, kjoin_err *err)
{
    X509 *cert = NULL;
    STACK_OF(X509) *chain = NULL;
    EVP_PKEY *key = NULL;
    const char *path = r->current;
    kjoin_code rc = read_current(r, &cert, &chain, &key, err);
    X509_NAME *name = rc ? NULL : X509_get_subject_name(cert);
    if (name && X509_NAME_get_text_by_NID(name, NID_commonName, r->cn, sizeof(r->cn)) < 0)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s: the certificate has no CN", path);
    for (int i = -1; !rc && (i = X509_NAME_get_index_by_NID(name, NID_organizationName, i)) >= 0 &&
                     r->n_orgs < KJOIN_BOOTSTRAP_MAX_ORGS;) {
        ASN1_STRING *v = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
        snprintf(r->held_orgs[r->n_orgs], sizeof(r->held_orgs[0]), "%.*s", ASN1_STRING_length(v),
                 (const char *)ASN1_STRING_get0_data(v));
        r->orgs[r->n_orgs] = r->held_orgs[r->n_orgs];
        r->n_orgs++;
    }
    if (!rc && strncmp(r->cn, "system:node:", 12) == 0)
        snprintf(r->node, sizeof(r->node), "%s", r->cn + 12);
    X509_free(cert);
    sk_X509_pop_free(chain, X509_free);
    EVP_PKEY_free(key);
    return rc;
}

/* Defaults, names and the subject, checked before anything is sent. */
static kjoin_code resolve(run *r, kjoin_err *err)
{
    const kjoin_bootstrap_spec *s = r->spec;
    bool from_current = s->rotate && !s->node_name && !s->subject_cn;
    r->pki_dir = s->pki_dir ? s->pki_dir : KJOIN_BOOTSTRAP_DEFAULT_PKI_DIR;
    snprintf(r->current, sizeof(r->current), "%s/" CURRENT, r->pki_dir);
    snprintf(r->key_tmp, sizeof(r->key_tmp), "%s/" KEY_TMP, r->pki_dir);
    /* Opened when it is there; made only at the first write, so that bad
     * input leaves nothing behind (load_or_make_key). */
    kjoin_code rc = access(r->pki_dir, F_OK) == 0 || from_current ? kjoin_safedir_open(r->pki_dir, 0, &r->pki, err)
                                                                   : KJOIN_OK;
    if (!rc && from_current)
        rc = subject_of_current(r, err);
    if (rc)
        return rc;
    kjoin_err in;
    if (from_current && !*r->node) {
        snprintf(r->node, sizeof(r->node), "agent"); /* not a kubelet's: the node name is not used */
    } else if (!from_current) {
        kjoin_node_name name;
        if ((rc = kjoin_node_name_resolve(s->node_name, NULL, &name, err)))
            return rc;
        snprintf(r->node, sizeof(r->node), "%s", name.name);
    }
    if (kjoin_dns_subdomain_check(r->node, &in)) /* a renewal's, from the current certificate */
        return kjoin_err_set(err, KJOIN_E_USAGE, "the current certificate's node name \"%.253s\" is not valid: %s",
                             r->node, in.msg);
    if (s->n_o > KJOIN_BOOTSTRAP_MAX_ORGS || s->n_usages > KJOIN_BOOTSTRAP_MAX_USAGES)
        return kjoin_err_set(err, KJOIN_E_USAGE, "at most %d subject organisations and %d usages",
                             KJOIN_BOOTSTRAP_MAX_ORGS, KJOIN_BOOTSTRAP_MAX_USAGES);
    if (!from_current) {
        snprintf(r->cn, sizeof(r->cn), "%s", s->subject_cn ? s->subject_cn : "");
        if (!s->subject_cn)
            snprintf(r->cn, sizeof(r->cn), "system:node:%s", r->node);
        r->n_orgs = s->subject_o ? s->n_o : 1;
        for (size_t i = 0; i < r->n_orgs; i++)
            r->orgs[i] = s->subject_o ? s->subject_o[i] : "system:nodes";
    }
    /* The usages asked for; without any, kubelet's (kubelet_usages, once
     * the key and the server's release are known). */
    r->n_usages = s->usages ? s->n_usages : 0;
    for (size_t i = 0; i < r->n_usages; i++)
        r->usages[i] = s->usages[i];
    r->signer = s->signer ? s->signer : KJOIN_BOOTSTRAP_KUBELET_SIGNER;
    if (!s->subject_cn && !from_current && strcmp(r->signer, KJOIN_BOOTSTRAP_KUBELET_SIGNER) != 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "a `signer` other than the kubelet's needs a `subject_cn`");
    r->kubeconfig_out = s->kubeconfig_out ? s->kubeconfig_out : KJOIN_BOOTSTRAP_DEFAULT_KUBECONFIG;
    r->ca_cert_path = s->ca_cert_path ? s->ca_cert_path : KJOIN_BOOTSTRAP_DEFAULT_CA_CERT;
    if (s->duration_s && s->duration_s < 600)
        return kjoin_err_set(err, KJOIN_E_USAGE, "`duration` must be at least 10m (the API's minimum)");
    r->now = (int64_t)time(NULL);
    return KJOIN_OK;
}

/* The certificate and key of kubelet-client-current.pem, which holds both
 * (kubelet's format): a regular file, or kubelet's link to a file of the
 * same directory; either must pass the directory's checks as a secret. */
static kjoin_code read_current(run *r, X509 **cert, STACK_OF(X509) **chain, EVP_PKEY **key, kjoin_err *err)
{
    char *pem = NULL, target[256] = CURRENT;
    size_t len = 0;
    struct stat st;
    *cert = NULL, *chain = NULL, *key = NULL;
    if (r->pki.fd < 0) /* no PKI directory yet: nothing current */
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s does not exist", r->pki_dir);
    kjoin_code rc = KJOIN_OK;
    if (fstatat(r->pki.fd, CURRENT, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
        rc = kjoin_safedir_readlink(&r->pki, CURRENT, target, sizeof(target), err);
    if (!rc)
        rc = kjoin_safedir_read(&r->pki, target, MAX_PEM, true, &pem, &len, NULL, err);
    if (rc)
        return rc;
    STACK_OF(X509) *all = kjoin_certs__parse_certs(pem, len);
    *key = kjoin_certs__parse_key(pem, len);
    kjoin_free_wiped(pem, len);
    if (all && sk_X509_num(all) > 0)
        *cert = sk_X509_shift(all);
    *chain = all;
    return *cert && *key ? KJOIN_OK
                         : kjoin_err_set(err, KJOIN_E_USAGE, "%s holds no certificate and key to renew", r->current);
}

/* Whether less than the renew-before share of the certificate's life is left. */
static bool due(const run *r, X509 *cert)
{
    int64_t nb = kjoin_certs__not_before(cert), na = kjoin_certs__not_after(cert);
    int64_t pct = r->spec->renew_before_percent ? r->spec->renew_before_percent : 30;
    return r->now < nb || r->now >= na || (na - r->now) * 100 < (na - nb) * pct;
}

static kjoin_code make_client(run *r, const char *kubeconfig, kjoin_err *err)
{
    kjoin_kubeapi_config cfg;
    kjoin_code rc = kjoin_kubeapi_config_load(kubeconfig, NULL, &cfg, err);
    if (rc)
        return rc;
    if (!cfg.ca_pem) {
        kjoin_kubeapi_config_release(&cfg);
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s has no certificate authority: kjoin trusts only the cluster's CA",
                             kubeconfig);
    }
    if (!r->spec->rotate && !cfg.token) {
        kjoin_kubeapi_config_release(&cfg);
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s holds no bootstrap token", kubeconfig);
    }
    r->ca_pem = malloc(cfg.ca_len + 1);
    r->server = strdup(cfg.server);
    if (!r->ca_pem || !r->server) {
        kjoin_kubeapi_config_release(&cfg);
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    memcpy(r->ca_pem, cfg.ca_pem, cfg.ca_len + 1);
    r->ca_len = cfg.ca_len;
    kjoin_kubeapi_options o = {.version = KJOIN_KUBEAPI_OPTIONS_VERSION,
                               .timeout_ms = r->spec->timeout_ms ? r->spec->timeout_ms : 5 * 60 * 1000,
                               .audit_id = r->spec->audit_id,
                               .log = r->spec->log,
                               .log_ctx = r->spec->log_ctx};
    rc = kjoin_kubeapi_new(&cfg, &o, &r->api, err);
    kjoin_kubeapi_config_release(&cfg);
    return rc;
}

/* The key of a pending CSR (a run killed while waiting left it), else a new
 * one written first, so that a re-run asks with the same key and finds its
 * own CSR by name. A key file another user could have written or read is
 * refused, never used: the node's identity would be theirs. */
static kjoin_code load_or_make_key(run *r, bool fresh, kjoin_err *err)
{
    char *pem = NULL;
    size_t len = 0;
    bool missing = false;
    kjoin_err inner;
    if (r->pki.fd < 0) { /* the first write: the directory is made now */
        kjoin_code rc = kjoin_safedir_open(r->pki_dir, KJOIN_SAFEDIR_CREATE, &r->pki, err);
        if (rc)
            return rc;
        fresh = true; /* nothing pending in a new directory */
    }
    if (!fresh) {
        kjoin_code rc = kjoin_safedir_read(&r->pki, KEY_TMP, MAX_PEM, true, &pem, &len, &missing, &inner);
        if (rc && !missing)
            return kjoin_err_set(err, rc, "the key of a pending request: %s", inner.msg);
        if (!rc) {
            r->key = kjoin_certs__parse_key(pem, len);
            kjoin_free_wiped(pem, len);
            if (r->key) {
                logf_(r, 1, "[kubelet-start] Using the key of a pending request (%s)", r->key_tmp);
                return KJOIN_OK;
            }
            logf_(r, 0, "[kubelet-start] %s holds no usable key: replacing it", r->key_tmp);
        }
    }
    if (!(r->key = kjoin_certs__new_key(r->spec->key_type, err)))
        return KJOIN_E_OTHER;
    if (!(pem = kjoin_certs__pem_key(r->key)))
        return kjoin_err_set(err, KJOIN_E_OTHER, "cannot encode the key");
    kjoin_code rc = kjoin_safedir_write(&r->pki, KEY_TMP, pem, strlen(pem), 0600, true, NULL, err);
    kjoin_free_wiped_str(pem);
    return rc;
}

static char *csr_body(const run *r, const char *name, const char *csr_pem)
{
    char *b64 = kjoin_b64_encode(csr_pem, strlen(csr_pem), false);
    if (!b64)
        return NULL;
    json_object *root = json_object_new_object(), *meta = json_object_new_object(), *spec = json_object_new_object(),
                *usages = json_object_new_array();
    json_object_object_add(root, "apiVersion", json_object_new_string("certificates.k8s.io/v1"));
    json_object_object_add(root, "kind", json_object_new_string("CertificateSigningRequest"));
    json_object_object_add(meta, "name", json_object_new_string(name));
    json_object_object_add(root, "metadata", meta);
    json_object_object_add(spec, "request", json_object_new_string(b64));
    json_object_object_add(spec, "signerName", json_object_new_string(r->signer));
    for (size_t i = 0; i < r->n_usages; i++)
        json_object_array_add(usages, json_object_new_string(r->usages[i]));
    json_object_object_add(spec, "usages", usages);
    if (r->spec->duration_s)
        json_object_object_add(spec, "expirationSeconds", json_object_new_int64(r->spec->duration_s));
    json_object_object_add(root, "spec", spec);
    char *out = strdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(root);
    free(b64);
    return out;
}

/* A CSR of that name exists: it must be ours (same key), or it is not ours
 * to wait for. */
static kjoin_code check_existing(const run *r, const char *name, const char *body, size_t len, kjoin_err *err)
{
    EVP_PKEY *theirs = kjoin_bootstrap__csr_body_pubkey(body, len);
    bool ours = theirs && EVP_PKEY_eq(theirs, r->key) == 1;
    EVP_PKEY_free(theirs);
    return ours ? KJOIN_OK
                : kjoin_err_set(err, KJOIN_E_TRUST, "a CertificateSigningRequest named %s exists for another key", name);
}

/* Creates the CSR, or finds our own from an earlier run. */
static kjoin_code submit(run *r, const char *name, const char *csr_pem, kjoin_err *err)
{
    char *body = csr_body(r, name, csr_pem), path[256];
    kjoin_kubeapi_response resp = {0};
    if (!body)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_code rc = kjoin_kubeapi_request(r->api, "POST", CSR_PATH, body, &resp, err);
    free(body);
    if (!rc && resp.status == 409) {
        kjoin_kubeapi_response_release(&resp);
        snprintf(path, sizeof(path), CSR_PATH "/%s", name);
        rc = kjoin_kubeapi_request(r->api, "GET", path, NULL, &resp, err);
        if (!rc && !(rc = kjoin_kubeapi_check(&resp, "get certificatesigningrequest", err)))
            rc = check_existing(r, name, resp.body, resp.len, err);
        if (!rc)
            logf_(r, 0, "[kubelet-start] Waiting for %s, made by an earlier run with this key", name);
    } else if (!rc && !(rc = kjoin_kubeapi_check(&resp, "create certificatesigningrequest", err))) {
        logf_(r, 0, "[kubelet-start] Requested a client certificate for %s: CertificateSigningRequest %s (signer %s)",
              r->cn, name, r->signer);
    }
    kjoin_kubeapi_response_release(&resp);
    return rc;
}

/* Polls the CSR until it carries a certificate, is Denied or Failed, or the
 * deadline passes. *pem is the issued certificate chain (PEM). */
static kjoin_code wait_for_certificate(run *r, const char *name, char **pem, size_t *pem_len, kjoin_err *err)
{
    char path[256];
    snprintf(path, sizeof(path), CSR_PATH "/%s", name);
    for (unsigned round = 0;; round++) {
        kjoin_kubeapi_response resp = {0};
        kjoin_err inner;
        kjoin_code rc = kjoin_kubeapi_request(r->api, "GET", path, NULL, &resp, &inner);
        if (rc == KJOIN_E_TIMEOUT)
            return kjoin_err_set(err, KJOIN_E_TIMEOUT, "no certificate for CertificateSigningRequest %s before the "
                                                       "deadline; it stays on the cluster, and a re-run picks it up",
                                 name);
        if (!rc)
            rc = kjoin_kubeapi_check(&resp, "get certificatesigningrequest", &inner);
        if (rc) {
            kjoin_kubeapi_response_release(&resp);
            return kjoin_err_set(err, rc, "%s", inner.msg);
        }
        bool issued = false;
        rc = kjoin_bootstrap__csr_status(resp.body, resp.len, name, pem, pem_len, &issued, err);
        kjoin_kubeapi_response_release(&resp);
        if (rc || issued)
            return rc;
        int64_t pause = kjoin_backoff_ms(round, 250, 2000) + 100, left = kjoin_kubeapi_remaining_ms(r->api);
        if (left <= 0)
            return kjoin_err_set(err, KJOIN_E_TIMEOUT, "no certificate for CertificateSigningRequest %s before the "
                                                       "deadline; it stays on the cluster, and a re-run picks it up",
                                 name);
        if (round == 0)
            logf_(r, 0, "[kubelet-start] Waiting for %s to be approved and signed", name);
        kjoin_sleep_ms(pause < left ? pause : left);
    }
}

/* Writes what kubelet and kubeadm leave on a node, the switch of
 * kubelet-client-current.pem last: a kill before it leaves the old
 * certificate in use, after it the new one. The certificate file holds what
 * was parsed and checked, re-encoded, then our key: never the bytes the
 * server sent. */
static kjoin_code write_node_files(run *r, X509 *cert, STACK_OF(X509) *chain, kjoin_bootstrap_result *out,
                                   kjoin_err *err)
{
    char stamp[32], name[64], pem_path[4200];
    time_t t = (time_t)r->now;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%d-%H-%M-%S", &tm);
    snprintf(name, sizeof(name), "kubelet-client-%s.pem", stamp);
    snprintf(pem_path, sizeof(pem_path), "%s/%s", r->pki_dir, name);
    char *key = kjoin_certs__pem_key(r->key), *certs = kjoin_certs__pem_certs(chain, cert), *pair = NULL,
         *kubeconfig = NULL;
    size_t key_len = key ? strlen(key) : 0, certs_len = certs ? strlen(certs) : 0, kc_len = 0, pair_len = 0;
    kjoin_code rc = key && certs && (pair = malloc(certs_len + key_len + 1))
                        ? KJOIN_OK
                        : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    if (!rc) {
        memcpy(pair, certs, certs_len);
        memcpy(pair + certs_len, key, key_len);
        pair_len = certs_len + key_len;
        rc = kjoin_safedir_write(&r->pki, name, pair, pair_len, 0600, true, NULL, err);
    }
    if (!rc)
        rc = kjoin_file_write_mode(r->ca_cert_path, r->ca_pem, r->ca_len, 0644, true, NULL, err);
    if (!rc)
        rc = kjoin_kubeconfig_emit_kubelet(r->server, r->ca_pem, r->ca_len, r->current, &kubeconfig, &kc_len, err);
    if (!rc)
        rc = kjoin_file_write_atomic(r->kubeconfig_out, kubeconfig, kc_len, true, NULL, err);
    if (!rc)
        rc = kjoin_safedir_link(&r->pki, CURRENT, name, err);
    if (!rc)
        rc = kjoin_safedir_unlink(&r->pki, KEY_TMP, err); /* the request is done */
    kjoin_free_wiped(key, key_len);
    kjoin_free_wiped(pair, pair_len);
    free(certs);
    free(kubeconfig);
    if (!rc) {
        snprintf(out->cert_path, sizeof(out->cert_path), "%s", pem_path);
        logf_(r, 0, "[kubelet-start] Wrote %s (mode 0600), %s -> it, %s and %s", pem_path, r->current,
              r->kubeconfig_out, r->ca_cert_path);
    }
    return rc;
}

/* Whether the node already holds a valid certificate that is not due; then
 * nothing is written. */
static bool still_good(run *r, kjoin_bootstrap_result *out)
{
    X509 *cert = NULL;
    STACK_OF(X509) *chain = NULL;
    EVP_PKEY *key = NULL;
    struct stat st;
    bool good = stat(r->kubeconfig_out, &st) == 0 && read_current(r, &cert, &chain, &key, NULL) == KJOIN_OK &&
                kjoin_bootstrap__check_cert(cert, chain, key, r->cn, r->orgs, r->n_orgs, r->ca_pem, r->ca_len, r->now,
                                            NULL) == KJOIN_OK &&
                !due(r, cert);
    if (good) {
        out->not_after = kjoin_certs__not_after(cert);
        snprintf(out->cert_path, sizeof(out->cert_path), "%s", r->current);
    }
    X509_free(cert);
    sk_X509_pop_free(chain, X509_free);
    EVP_PKEY_free(key);
    ERR_clear_error();
    return good;
}

/* kubelet's usages for its client CSR, in its order, as the kubelet of the
 * server's release asks: from 1.27 digital signature and client auth, with
 * key encipherment last for an RSA key only; before, all three with key
 * encipherment second, whatever the key (the approvers of those releases
 * require it). The CSR's name depends on them, so a kubelet's pending
 * request is found by its key. */
static void kubelet_usages(run *r)
{
    bool rsa = EVP_PKEY_is_a(r->key, "RSA");
    long minor = kjoin_kubeapi_server_minor(r->api);
    static const char *const old[] = {"digital signature", "key encipherment", "client auth"};
    static const char *const now[] = {"digital signature", "client auth", "key encipherment"};
    const char *const *set = minor && !kjoin_release_of((int)minor)->csr_usages_client_first ? old : now;
    r->n_usages = set == old || rsa ? 3 : 2;
    for (size_t i = 0; i < r->n_usages; i++)
        r->usages[i] = set[i];
    logf_(r, 1, "[kubelet-start] Asking for kubelet's usages of release 1.%ld: %s, %s%s%s", minor, r->usages[0],
          r->usages[1], r->n_usages > 2 ? ", " : "", r->n_usages > 2 ? r->usages[2] : "");
}

static kjoin_code request_and_write(run *r, kjoin_bootstrap_result *out, kjoin_err *err)
{
    unsigned char *spki = NULL;
    size_t spki_len = 0;
    char *csr = NULL, *issued = NULL;
    size_t issued_len = 0;
    if (!r->n_usages)
        kubelet_usages(r);
    kjoin_code rc = kjoin_bootstrap__spki(r->key, &spki, &spki_len, err);
    if (!rc)
        rc = kjoin_bootstrap_csr_name(spki, spki_len, r->cn, r->orgs, r->n_orgs, r->usages, r->n_usages,
                                      out->csr_name, err);
    OPENSSL_free(spki);
    if (!rc && !(csr = kjoin_bootstrap__csr_pem(r->key, r->cn, r->orgs, r->n_orgs, err)))
        rc = KJOIN_E_OTHER;
    if (!rc)
        rc = submit(r, out->csr_name, csr, err);
    if (!rc)
        rc = wait_for_certificate(r, out->csr_name, &issued, &issued_len, err);
    STACK_OF(X509) *chain = NULL;
    kjoin_err inner;
    if (!rc && kjoin_bootstrap__issued_chain(issued, issued_len, &chain, &inner))
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "%s: %s", out->csr_name, inner.msg);
    X509 *cert = chain ? sk_X509_shift(chain) : NULL;
    r->now = (int64_t)time(NULL);
    if (!rc)
        rc = kjoin_bootstrap__check_cert(cert, chain, r->key, r->cn, r->orgs, r->n_orgs, r->ca_pem, r->ca_len, r->now,
                                         err);
    if (!rc) {
        out->not_after = kjoin_certs__not_after(cert);
        rc = write_node_files(r, cert, chain, out, err);
    }
    X509_free(cert);
    sk_X509_pop_free(chain, X509_free);
    free(csr);
    free(issued);
    return rc;
}

kjoin_code kjoin_tls_bootstrap(const kjoin_bootstrap_spec *spec, kjoin_bootstrap_result *out, kjoin_err *err)
{
    if (kjoin_version_check(spec ? &spec->version : NULL, KJOIN_BOOTSTRAP_SPEC_VERSION,
                            "TLS bootstrap's specification", "KJOIN_BOOTSTRAP_SPEC_INIT", err))
        return KJOIN_E_USAGE;
    run r = {.spec = spec, .pki = {.fd = -1}};
    kjoin_bootstrap_result res = {0};
    kjoin_code rc = resolve(&r, err);
    const char *client_kubeconfig = spec->rotate ? r.kubeconfig_out : spec->bootstrap_kubeconfig;
    if (!rc && !client_kubeconfig)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "`bootstrap_kubeconfig` is not set");
    if (!rc)
        rc = make_client(&r, client_kubeconfig, err);
    if (!rc && still_good(&r, &res)) {
        logf_(&r, 0, "[kubelet-start] %s holds a valid client certificate for %s that is not due yet: nothing to do",
              r.current, r.cn);
    } else if (!rc) {
        if (spec->rotate)
            logf_(&r, 0, "[kubelet-start] Renewing the client certificate of %s with its current identity", r.cn);
        if (!(rc = load_or_make_key(&r, spec->rotate, err)))
            rc = request_and_write(&r, &res, err);
        res.changed = rc == KJOIN_OK;
    }
    snprintf(res.node_name, sizeof(res.node_name), "%s", r.node);
    kjoin_kubeapi_free(r.api);
    kjoin_safedir_close(&r.pki);
    EVP_PKEY_free(r.key);
    free(r.ca_pem);
    free(r.server);
    if (!rc)
        *out = res;
    return rc;
}
