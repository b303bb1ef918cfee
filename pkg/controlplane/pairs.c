/* Certificate pairs under the certificates directory: the CAs read and
 * checked, a pair found on disk judged, a new one issued as kubeadm issues
 * it. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/x509v3.h>

#include <kjoin/private/controlplane.h>
#include <kjoin/private/node.h>

#include "internal.h"

#define PEM_MAX (1 << 20)
#define BACKDATE_S 300                  /* kubeadm's CertificateBackdate */
#define VALIDITY_S (365LL * 24 * 3600) /* its CertificateValidityPeriod */
#define DRY_RUN_VALIDITY_S 3600LL

static kjoin_key_type key_type(const char *algorithm)
{
    return !strcmp(algorithm, "ECDSA-P256")   ? KJOIN_KEY_ECDSA_P256
           : !strcmp(algorithm, "ECDSA-P384") ? KJOIN_KEY_ECDSA_P384
           : !strcmp(algorithm, "RSA-3072")   ? KJOIN_KEY_RSA3072
           : !strcmp(algorithm, "RSA-4096")   ? KJOIN_KEY_RSA4096
                                              : KJOIN_KEY_RSA2048;
}

int kjoin_api_server_port(int bind_port) { return bind_port ? bind_port : KJOIN_API_SERVER_PORT; }

kjoin_code kjoin_cp_context_init(kjoin_cp_context *cx, const kjoin_cluster_configuration *c, const char *kubernetes_dir,
                                 kjoin_err *err)
{
    memset(cx, 0, sizeof(*cx));
    cx->cluster = c;
    cx->minor = kjoin_release_minor(c->minor);
    cx->release = kjoin_release_of(cx->minor);
    cx->bind_port = KJOIN_API_SERVER_PORT;
    cx->now = (int64_t)time(NULL);
    const char *certs = *c->certificates_dir ? c->certificates_dir : "/etc/kubernetes/pki";
    if (snprintf(cx->kubernetes_dir, sizeof(cx->kubernetes_dir), "%s", kubernetes_dir) >= (int)sizeof(cx->kubernetes_dir) ||
        snprintf(cx->cert_dir, sizeof(cx->cert_dir), "%s", certs) >= (int)sizeof(cx->cert_dir))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the %s directory's path is too long",
                             strlen(kubernetes_dir) >= sizeof(cx->kubernetes_dir) ? "kubeconfig" : "certificates");
    snprintf(cx->manifests_dir, sizeof(cx->manifests_dir), "%s/manifests", kubernetes_dir);
    snprintf(cx->admin_kubeconfig, sizeof(cx->admin_kubeconfig), "%s/admin.conf", kubernetes_dir);
    return KJOIN_OK;
}

int64_t kjoin_cp_time_left(const kjoin_cp_context *cx)
{
    return kjoin_join_context_left_ms(cx->join);
}

int64_t kjoin_cp_stage_left(const kjoin_cp_context *cx, int64_t stage_ms, bool *bounded)
{
    int64_t left = kjoin_cp_time_left(cx);
    bool by_stage = stage_ms > 0 && stage_ms < left;
    if (bounded)
        *bounded = by_stage;
    return by_stage ? stage_ms : left;
}

const char *kjoin_cp_record_dir(const kjoin_cp_context *cx) { return cx->record ? cx->kubernetes_dir : NULL; }

kjoin_code kjoin_cp__read_pair(const kjoin_safedir *d, const char *file, char **crt, size_t *crt_len, char **key,
                               size_t *key_len, bool *missing, kjoin_err *err)
{
    char name[128];
    bool no_crt = true, no_key = true;
    *crt = *key = NULL;
    *crt_len = *key_len = 0;
    snprintf(name, sizeof(name), "%s.crt", file);
    kjoin_code rc = kjoin_safedir_read(d, name, PEM_MAX, false, crt, crt_len, &no_crt, err);
    if (rc && no_crt)
        rc = KJOIN_OK, *crt = NULL;
    snprintf(name, sizeof(name), "%s.key", file);
    if (!rc && (rc = kjoin_safedir_read(d, name, PEM_MAX, true, key, key_len, &no_key, err)) && no_key)
        rc = KJOIN_OK, *key = NULL;
    *missing = !*crt && !*key;
    return rc;
}

kjoin_code kjoin_cp__load_ca(const kjoin_safedir *d, const char *cert_dir, const char *base, cp_pair *out,
                             kjoin_err *err)
{
    char *crt, *key;
    size_t crt_len, key_len;
    bool missing;
    const char *slash = strrchr(base, '/');
    kjoin_code rc = kjoin_cp__read_pair(d, slash ? slash + 1 : base, &crt, &crt_len, &key, &key_len, &missing, err);
    if (rc)
        return rc;
    STACK_OF(X509) *all = crt ? kjoin_certs__parse_certs(crt, crt_len) : NULL;
    out->crt = all ? sk_X509_shift(all) : NULL;
    sk_X509_pop_free(all, X509_free);
    out->key = key ? kjoin_certs__parse_key(key, key_len) : NULL;
    if (!crt)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s.crt is missing: the shared certificates come first (downloaded "
                           "with the certificate key, or copied from a control-plane node)", cert_dir, base);
    else if (!out->crt || X509_check_ca(out->crt) != 1)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s.crt is no CA certificate", cert_dir, base);
    else if (key && (!out->key || EVP_PKEY_eq(X509_get0_pubkey(out->crt), out->key) != 1))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s.key is not the key of %s.crt", cert_dir, base, base);
    kjoin_free_wiped(crt, crt_len);
    kjoin_free_wiped(key, key_len);
    return rc;
}

bool kjoin_cp__trusted(X509 *x, const char *pem, size_t len)
{
    STACK_OF(X509) *all = pem ? kjoin_certs__parse_certs(pem, len) : NULL;
    bool found = false;
    for (int i = 0; all && !found && i < sk_X509_num(all); i++)
        found = X509_cmp(x, sk_X509_value(all, i)) == 0;
    sk_X509_pop_free(all, X509_free);
    return found;
}

kjoin_code kjoin_cp__check_trusted(const cp_pair *ca, const char *cert_dir, const char *pem, size_t len,
                                   kjoin_err *err)
{
    if (!pem || kjoin_cp__trusted(ca->crt, pem, len))
        return KJOIN_OK;
    return kjoin_err_set(err, KJOIN_E_TRUST, "%s/ca.crt is not the cluster CA discovery verified: these are another "
                         "cluster's certificates; nothing was written", cert_dir);
}

void kjoin_cp__pair_release(cp_pair *p)
{
    X509_free(p->crt);
    EVP_PKEY_free(p->key);
    p->crt = NULL, p->key = NULL;
}

void kjoin_cp__judge(X509 *x, EVP_PKEY *k, const cp_pair *ca, const char *ca_name, int64_t now, char *why,
                     size_t cap)
{
    *why = '\0';
    if (!x || !k)
        snprintf(why, cap, "only one of the pair is there, or one is not PEM");
    else if (!kjoin_certs__issued_by(ca->crt, x))
        snprintf(why, cap, "it is not signed by %s", ca_name);
    else if (EVP_PKEY_eq(X509_get0_pubkey(x), k) != 1)
        snprintf(why, cap, "the key is not the certificate's");
    else if (kjoin_certs__not_after(x) <= now || kjoin_certs__not_before(x) > now)
        snprintf(why, cap, "it is not valid now");
}


typedef struct keygen {
    kjoin_key_type type;
    EVP_PKEY *key;
} keygen;

static void *generate(void *arg)
{
    keygen *k = arg;
    k->key = kjoin_certs__new_key(k->type, NULL);
    return NULL;
}

kjoin_code kjoin_cp__new_keys(const kjoin_cluster_configuration *c, EVP_PKEY **keys, size_t n, kjoin_err *err)
{
    keygen jobs[KJOIN_CP_KEYS_MAX];
    pthread_t threads[KJOIN_CP_KEYS_MAX];
    bool started[KJOIN_CP_KEYS_MAX] = {false};
    if (n > KJOIN_CP_KEYS_MAX)
        return kjoin_err_set(err, KJOIN_E_OTHER, "too many keys at once");
    /* One thread a key: an RSA key's prime search is most of a pair's cost,
     * and the keys do not depend on each other. */
    for (size_t i = 0; i < n; i++) {
        jobs[i] = (keygen){.type = key_type(c->encryption_algorithm)};
        started[i] = pthread_create(&threads[i], NULL, generate, &jobs[i]) == 0;
        if (!started[i])
            generate(&jobs[i]);
    }
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        if (started[i])
            pthread_join(threads[i], NULL);
        keys[i] = jobs[i].key;
        ok &= keys[i] != NULL;
    }
    if (ok)
        return KJOIN_OK;
    for (size_t i = 0; i < n; i++)
        EVP_PKEY_free(keys[i]), keys[i] = NULL;
    return kjoin_err_set(err, KJOIN_E_OTHER, "cannot generate a key");
}

kjoin_code kjoin_cp__sign(cert_request *req, const kjoin_cp_context *cx, const cp_pair *ca, EVP_PKEY *key, char **crt,
                          char **key_pem, size_t *key_len, kjoin_err *err)
{
    const kjoin_cluster_configuration *c = cx->cluster;
    int minor = cx->minor;
    int64_t now = cx->now;
    *crt = *key_pem = NULL;
    *key_len = 0;
    if (!ca->key)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the CA's key is not there to sign \"%s\" with", req->cn);
    req->not_before = now - BACKDATE_S;
    req->not_after = now + (c->certificate_validity_s ? c->certificate_validity_s : VALIDITY_S);
    /* A dry run's certificates are shown and removed: should one outlive it
     * (the machine down mid-run), it is of no use for long. */
    if (cx->join->dry_run && req->not_after > now + DRY_RUN_VALIDITY_S)
        req->not_after = now + DRY_RUN_VALIDITY_S;
    req->go_subject = true;
    req->no_basic_constraints = !kjoin_release_of(minor)->leaf_basic_constraints;
    req->key_encipherment = true; /* kubeadm's leaves have it whatever the key type (pkiutil's KeyUsage) */
    X509 *x = kjoin_certs__issue(req, key, ca->crt, ca->key, err);
    if (x) {
        *crt = kjoin_certs__pem_certs(NULL, x);
        *key_pem = kjoin_certs__pem_key(key);
        *key_len = *key_pem ? strlen(*key_pem) : 0;
    }
    X509_free(x);
    if (!x)
        return KJOIN_E_OTHER;
    return *crt && *key_pem ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
}
