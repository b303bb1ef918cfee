/* The kubeadm-certs Secret: the certificate key, the values decrypted and
 * checked, the files written all or nothing. */
#include <kjoin/private/controlplane.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <kjoin/private/kubeapi.h>
#include <kjoin/private/node.h>
#include <kjoin/private/safedir.h>
#include <kjoin/private/token.h>

#include "../certs/x509.h"
#include "internal.h"

#define VALUE_MAX (1 << 20)

static const struct {
    const char *name, *secret_key; /* kubeadm: the name with '/' as '-' */
    bool key, required;
} files[KJOIN_SHARED_N] = {
    [KJOIN_SHARED_CA_CRT] = {"ca.crt", "ca.crt", false, true},
    [KJOIN_SHARED_CA_KEY] = {"ca.key", "ca.key", true, true},
    [KJOIN_SHARED_FRONT_PROXY_CA_CRT] = {"front-proxy-ca.crt", "front-proxy-ca.crt", false, false},
    [KJOIN_SHARED_FRONT_PROXY_CA_KEY] = {"front-proxy-ca.key", "front-proxy-ca.key", true, false},
    [KJOIN_SHARED_SA_PUB] = {"sa.pub", "sa.pub", false, false},
    [KJOIN_SHARED_SA_KEY] = {"sa.key", "sa.key", true, false},
    [KJOIN_SHARED_ETCD_CA_CRT] = {"etcd/ca.crt", "etcd-ca.crt", false, false},
    [KJOIN_SHARED_ETCD_CA_KEY] = {"etcd/ca.key", "etcd-ca.key", true, false},
};
static const char *const external_etcd[KJOIN_EXTERNAL_ETCD_N] = {"external-etcd-ca.crt", "external-etcd.crt",
                                                                  "external-etcd.key"};

kjoin_code kjoin_certificate_key_parse(const char *text, kjoin_certificate_key *key, kjoin_err *err)
{
    const char *p = text ? text + strspn(text, " \t\r\n") : "";
    size_t n = strcspn(p, " \t\r\n"), hex = strspn(p, "0123456789abcdefABCDEF");
    const char *rest = p + n + strspn(p + n, " \t\r\n");
    bool ok = n == 2 * KJOIN_CERTIFICATE_KEY_LEN && !*rest && kjoin_hex_decode(p, KJOIN_CERTIFICATE_KEY_LEN, key->bytes);
    if (ok)
        return KJOIN_OK;
    kjoin_certificate_key_clear(key);
    char why[96]; /* what is wrong, never the key itself */
    if (*rest)
        snprintf(why, sizeof(why), "it has more than one word or line");
    else if (hex < n)
        snprintf(why, sizeof(why), "character %zu is not a hex digit", hex + 1);
    else
        snprintf(why, sizeof(why), "this one has %zu characters", n);
    return kjoin_err_set(err, KJOIN_E_USAGE, "the certificate key must be %d hex digits on one line (as kubeadm init "
                         "--upload-certs prints it): %s", 2 * KJOIN_CERTIFICATE_KEY_LEN, why);
}

kjoin_code kjoin_certificate_key_read(const char *path, kjoin_certificate_key *key, kjoin_err *err)
{
    char *text = NULL;
    size_t len = 0;
    struct stat st;
    kjoin_err inner;
    /* "-": standard input (a pipe from a secret store); else a secret file,
     * readable by its owner alone, as ssh wants a private key. */
    bool in = !strcmp(path, "-");
    int fd = in ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the certificate key file %s: %s", path, strerror(errno));
    kjoin_code rc = KJOIN_OK;
    if (!in && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "the certificate key file %s is not a regular file", path);
    if (!rc && !in)
        rc = kjoin_safedir_check("the certificate key file", path, &st, true, err);
    if (!rc)
        rc = kjoin_safedir_read_fd(fd, in ? "standard input" : path, 4096, &text, &len, err);
    if (!in)
        close(fd);
    if (!rc && (rc = kjoin_certificate_key_parse(text, key, &inner)))
        kjoin_err_set(err, rc, "%s: %s", path, inner.msg);
    kjoin_free_wiped(text, len);
    return rc;
}

void kjoin_certificate_key_clear(kjoin_certificate_key *key) { OPENSSL_cleanse(key->bytes, sizeof(key->bytes)); }

kjoin_code kjoin_kubeadm_certs_decrypt(const kjoin_certificate_key *key, const unsigned char *in, size_t len,
                                       unsigned char **out, size_t *out_len, kjoin_err *err)
{
    *out = NULL, *out_len = 0;
    if (len < NONCE_LEN + TAG_LEN || len > VALUE_MAX)
        return kjoin_err_set(err, KJOIN_E_TRUST, "a value of %zu bytes is no AES-GCM ciphertext of kubeadm's", len);
    size_t n = len - NONCE_LEN - TAG_LEN;
    unsigned char *plain = malloc(n + 1);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int got = 0, last = 0;
    bool ok = plain && ctx && EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) == 1 &&
              EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, NONCE_LEN, NULL) == 1 &&
              EVP_DecryptInit_ex(ctx, NULL, NULL, key->bytes, in) == 1 &&
              EVP_DecryptUpdate(ctx, plain, &got, in + NONCE_LEN, (int)n) == 1 &&
              EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, TAG_LEN, (void *)(in + len - TAG_LEN)) == 1 &&
              EVP_DecryptFinal_ex(ctx, plain + got, &last) == 1;
    EVP_CIPHER_CTX_free(ctx);
    if (!ok) {
        kjoin_free_wiped(plain, n + 1);
        return kjoin_err_set(err, plain ? KJOIN_E_TRUST : KJOIN_E_OTHER,
                             plain ? "the certificate key does not open it (another key, or the value was changed): "
                                     "join with the key of the last upload, or upload the certificates again on a "
                                     "control-plane node for a new key (kjoin certs upload-certs, or kubeadm init "
                                     "phase upload-certs --upload-certs)"
                                   : "out of memory");
    }
    plain[got + last] = '\0';
    *out = plain, *out_len = (size_t)(got + last);
    return KJOIN_OK;
}

void kjoin_shared_certs_release(kjoin_shared_certs *c)
{
    for (size_t i = 0; i < KJOIN_SHARED_N; i++) {
        kjoin_free_wiped(c->files[i].data, c->files[i].len);
        c->files[i].data = NULL, c->files[i].len = 0;
    }
    for (size_t i = 0; i < KJOIN_EXTERNAL_ETCD_N; i++) {
        kjoin_free_wiped(c->external[i].data, c->external[i].len);
        c->external[i].data = NULL, c->external[i].len = 0;
    }
}

void kjoin_kubeadm_certs_names(kjoin_shared_certs *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < KJOIN_SHARED_N; i++)
        out->files[i].name = files[i].name, out->files[i].mode = files[i].key ? 0600 : 0644;
    for (size_t i = 0; i < KJOIN_EXTERNAL_ETCD_N; i++)
        out->external[i].secret_key = external_etcd[i], out->external[i].mode = i == KJOIN_EXTERNAL_ETCD_KEY ? 0600 : 0644;
}

/* ---- each value exactly what its name says ---------------------------------- */

/* The PEM labels a value may hold: a certificate, a private key as kubeadm
 * or OpenSSL write one, sa.pub's public key. */
static bool label_fits(size_t i, const char *label)
{
    if (i == KJOIN_SHARED_SA_PUB)
        return !strcmp(label, "PUBLIC KEY");
    if (files[i].key)
        return !strcmp(label, "RSA PRIVATE KEY") || !strcmp(label, "EC PRIVATE KEY") || !strcmp(label, "PRIVATE KEY");
    return !strcmp(label, "CERTIFICATE");
}

/* Value i as PEM written anew from its blocks: one block of the right
 * type (ca.crt may hold several certificates, each checked against the
 * trusted CA later), no headers (an encrypted key), nothing else kept. */
static kjoin_code reencode(size_t i, unsigned char **data, size_t *len, kjoin_err *err)
{
    BIO *in = BIO_new_mem_buf(*data, (int)*len), *out = BIO_new(BIO_s_mem());
    char *label = NULL, *header = NULL;
    unsigned char *der = NULL;
    long der_len = 0;
    size_t blocks = 0;
    kjoin_code rc = in && out ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    while (!rc && PEM_read_bio(in, &label, &header, &der, &der_len) == 1) {
        blocks++;
        if (!label_fits(i, label))
            rc = kjoin_err_set(err, KJOIN_E_TRUST, "the Secret's %s holds a %.40s block, not what its name says",
                               files[i].name, label);
        else if (*header)
            rc = kjoin_err_set(err, KJOIN_E_TRUST, "the Secret's %s has PEM headers (an encrypted key?)", files[i].name);
        else if (blocks > 1 && i != KJOIN_SHARED_CA_CRT)
            rc = kjoin_err_set(err, KJOIN_E_TRUST, "the Secret's %s holds more than one PEM block", files[i].name);
        else if (PEM_write_bio(out, label, "", der, der_len) <= 0)
            rc = kjoin_err_ossl(err, KJOIN_E_OTHER, "the Secret's %s cannot be written as PEM", files[i].name);
        OPENSSL_free(label);
        OPENSSL_free(header);
        OPENSSL_clear_free(der, (size_t)der_len);
        label = header = NULL, der = NULL;
    }
    ERR_clear_error(); /* the end of the input reads as "no start line" */
    if (!rc && !blocks)
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "the Secret's %s holds no PEM block", files[i].name);
    char *pem = NULL;
    long pem_len = rc ? 0 : BIO_get_mem_data(out, &pem);
    unsigned char *copy = pem_len > 0 ? malloc((size_t)pem_len + 1) : NULL;
    if (!rc && !copy)
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    if (!rc) {
        memcpy(copy, pem, (size_t)pem_len);
        copy[pem_len] = '\0';
        kjoin_free_wiped(*data, *len);
        *data = copy, *len = (size_t)pem_len;
    }
    if (out && pem_len > 0) /* the key's PEM, wiped before the BIO lets it go */
        OPENSSL_cleanse(pem, (size_t)pem_len);
    BIO_free(in);
    BIO_free(out);
    return rc;
}

/* Every certificate of ca.crt among the CA discovery verified. */
static bool all_trusted(const kjoin_shared_certs *c, const char *trusted_ca, size_t ca_len)
{
    STACK_OF(X509) *all = kjoin_certs__parse_certs((const char *)c->files[KJOIN_SHARED_CA_CRT].data,
                                                   c->files[KJOIN_SHARED_CA_CRT].len);
    bool ok = all && sk_X509_num(all) > 0;
    for (int i = 0; ok && i < sk_X509_num(all); i++)
        ok = kjoin_cp__trusted(sk_X509_value(all, i), trusted_ca, ca_len);
    sk_X509_pop_free(all, X509_free);
    return ok;
}

/* ---- the checks ---------------------------------------------------------- */

/* The first certificate of a PEM value, and the first private key (an
 * encrypted one is refused): pkg/certs' parsers. */
static X509 *one_cert(const unsigned char *pem, size_t len)
{
    STACK_OF(X509) *all = kjoin_certs__parse_certs((const char *)pem, len);
    X509 *x = all ? sk_X509_shift(all) : NULL;
    sk_X509_pop_free(all, X509_free);
    return x;
}

static EVP_PKEY *private_key(const unsigned char *pem, size_t len)
{
    return kjoin_certs__parse_key((const char *)pem, len);
}

static EVP_PKEY *public_key(const unsigned char *pem, size_t len)
{
    BIO *b = BIO_new_mem_buf(pem, (int)len);
    EVP_PKEY *k = b ? PEM_read_bio_PUBKEY(b, NULL, NULL, NULL) : NULL;
    BIO_free(b);
    return k;
}

/* Whether the certificate's DER is one of the trusted bundle's. */
/* A CA certificate and its key (crt, key: indices of files[]), both present
 * or both absent. */
static kjoin_code check_pair(const kjoin_shared_certs *c, int crt, int key, kjoin_err *err)
{
    const unsigned char *cd = c->files[crt].data, *kd = c->files[key].data;
    if (!cd != !kd)
        return kjoin_err_set(err, KJOIN_E_TRUST, "the Secret holds %s without %s", cd ? files[crt].name : files[key].name,
                             cd ? files[key].name : files[crt].name);
    if (!cd)
        return KJOIN_OK;
    X509 *x = one_cert(cd, c->files[crt].len);
    EVP_PKEY *k = private_key(kd, c->files[key].len);
    kjoin_code rc = KJOIN_OK;
    if (!x)
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "%s in the Secret is no PEM certificate", files[crt].name);
    else if (!k)
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "%s in the Secret is no PEM private key", files[key].name);
    else if (X509_check_ca(x) != 1)
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "%s in the Secret is no CA certificate", files[crt].name);
    else if (EVP_PKEY_eq(X509_get0_pubkey(x), k) != 1)
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "%s in the Secret is not the key of %s", files[key].name,
                           files[crt].name);
    X509_free(x);
    EVP_PKEY_free(k);
    return rc;
}

static kjoin_code check_service_account(const kjoin_shared_certs *c, kjoin_err *err)
{
    const int pub = KJOIN_SHARED_SA_PUB, key = KJOIN_SHARED_SA_KEY;
    if (!c->files[pub].data != !c->files[key].data)
        return kjoin_err_set(err, KJOIN_E_TRUST, "the Secret holds only one of sa.pub and sa.key");
    if (!c->files[pub].data)
        return KJOIN_OK;
    EVP_PKEY *p = public_key(c->files[pub].data, c->files[pub].len);
    EVP_PKEY *k = private_key(c->files[key].data, c->files[key].len);
    bool ok = p && k && EVP_PKEY_eq(p, k) == 1;
    EVP_PKEY_free(p);
    EVP_PKEY_free(k);
    return ok ? KJOIN_OK
              : kjoin_err_set(err, KJOIN_E_TRUST, "sa.key and sa.pub in the Secret are not one key pair");
}

/* An external etcd's files: PEM of what their names say, the client's key
 * its certificate's. */
static kjoin_code check_external(const kjoin_shared_certs *c, kjoin_err *err)
{
    const unsigned char *ca = c->external[KJOIN_EXTERNAL_ETCD_CA].data, *crt = c->external[KJOIN_EXTERNAL_ETCD_CERT].data,
                        *key = c->external[KJOIN_EXTERNAL_ETCD_KEY].data;
    X509 *x = ca ? one_cert(ca, c->external[KJOIN_EXTERNAL_ETCD_CA].len) : NULL;
    kjoin_code rc = ca && !x ? kjoin_err_set(err, KJOIN_E_TRUST, "external-etcd-ca.crt in the Secret is no PEM "
                                             "certificate") : KJOIN_OK;
    X509_free(x);
    if (rc || (!crt && !key))
        return rc;
    x = crt ? one_cert(crt, c->external[KJOIN_EXTERNAL_ETCD_CERT].len) : NULL;
    EVP_PKEY *k = key ? private_key(key, c->external[KJOIN_EXTERNAL_ETCD_KEY].len) : NULL;
    if (!x || !k)
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "the Secret's external etcd client pair is not a PEM certificate and "
                           "private key");
    else if (EVP_PKEY_eq(X509_get0_pubkey(x), k) != 1)
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "external-etcd.key in the Secret is not the key of external-etcd.crt");
    X509_free(x);
    EVP_PKEY_free(k);
    return rc;
}

static kjoin_code check(const kjoin_shared_certs *c, const char *trusted_ca, size_t ca_len, kjoin_err *err)
{
    kjoin_code rc = check_pair(c, KJOIN_SHARED_CA_CRT, KJOIN_SHARED_CA_KEY, err);
    if (!rc)
        rc = check_pair(c, KJOIN_SHARED_FRONT_PROXY_CA_CRT, KJOIN_SHARED_FRONT_PROXY_CA_KEY, err);
    if (!rc)
        rc = check_pair(c, KJOIN_SHARED_ETCD_CA_CRT, KJOIN_SHARED_ETCD_CA_KEY, err);
    if (!rc)
        rc = check_service_account(c, err);
    if (!rc)
        rc = check_external(c, err);
    if (rc)
        return rc;
    return all_trusted(c, trusted_ca, ca_len)
               ? KJOIN_OK
               : kjoin_err_set(err, KJOIN_E_TRUST, "ca.crt in the Secret is not the cluster CA discovery verified");
}

/* ---- the Secret ---------------------------------------------------------- */

kjoin_code kjoin_kubeadm_certs_open(const char *secret_json, size_t len, const kjoin_certificate_key *key,
                                    const char *trusted_ca_pem, size_t ca_len, kjoin_shared_certs *out, kjoin_err *err)
{
    kjoin_kubeadm_certs_names(out);
    json_tokener *tok = json_tokener_new();
    json_object *root = tok ? json_tokener_parse_ex(tok, secret_json, (int)len) : NULL, *data = NULL;
    json_tokener_free(tok);
    kjoin_code rc = KJOIN_OK;
    const char *kind = NULL;
    json_object *v;
    kjoin_err inner;
    if (json_object_object_get_ex(root, "kind", &v) && json_object_is_type(v, json_type_string))
        kind = json_object_get_string(v);
    if (!kind || strcmp(kind, "Secret") || !json_object_object_get_ex(root, "data", &data) ||
        !json_object_is_type(data, json_type_object))
        rc = kjoin_err_set(err, KJOIN_E_API, "the answer is no Secret with data");
    for (size_t i = 0; !rc && i < KJOIN_EXTERNAL_ETCD_N; i++) {
        unsigned char *sealed = NULL;
        size_t sealed_len = 0;
        if (!(out->external[i].present = json_object_object_get_ex(data, external_etcd[i], &v)))
            continue;
        if (!json_object_is_type(v, json_type_string))
            rc = kjoin_err_set(err, KJOIN_E_API, "the Secret's %s is no string", external_etcd[i]);
        else if (json_object_get_string_len(v) == 0)
            continue; /* kubeadm's: empty, not written */
        else if (kjoin_b64_decode(json_object_get_string(v), (size_t)json_object_get_string_len(v), false, &sealed,
                                  &sealed_len, &inner))
            rc = kjoin_err_set(err, KJOIN_E_API, "the Secret's %s is not base64", external_etcd[i]);
        else if ((rc = kjoin_kubeadm_certs_decrypt(key, sealed, sealed_len, &out->external[i].data,
                                                   &out->external[i].len, &inner)))
            kjoin_err_set(err, rc, "the Secret's %s: %s", external_etcd[i], inner.msg);
        free(sealed);
    }
    for (size_t i = 0; !rc && i < KJOIN_SHARED_N; i++) {
        unsigned char *sealed = NULL;
        size_t sealed_len = 0;
        bool present = json_object_object_get_ex(data, files[i].secret_key, &v);
        if (!present && !files[i].required) /* kubeadm: every name it transfers is there, maybe empty */
            continue;
        if (!present || !json_object_is_type(v, json_type_string))
            rc = kjoin_err_set(err, KJOIN_E_API, "the Secret does not hold %s", files[i].name);
        else if (json_object_get_string_len(v) == 0)
            rc = files[i].required ? kjoin_err_set(err, KJOIN_E_API, "the Secret's %s is empty", files[i].name)
                                   : KJOIN_OK;
        else if (kjoin_b64_decode(json_object_get_string(v), (size_t)json_object_get_string_len(v), false, &sealed,
                                  &sealed_len, &inner))
            rc = kjoin_err_set(err, KJOIN_E_API, "the Secret's %s is not base64", files[i].name);
        else if ((rc = kjoin_kubeadm_certs_decrypt(key, sealed, sealed_len, &out->files[i].data, &out->files[i].len,
                                                   &inner)))
            kjoin_err_set(err, rc, "the Secret's %s: %s", files[i].name, inner.msg);
        else
            rc = reencode(i, &out->files[i].data, &out->files[i].len, err);
        free(sealed);
    }
    json_object_put(root);
    if (!rc)
        rc = check(out, trusted_ca_pem, ca_len, err);
    if (rc)
        kjoin_shared_certs_release(out);
    return rc;
}

/* ---- the files ------------------------------------------------------------ */

static kjoin_code write_shared(const kjoin_shared_certs *c, const char *cert_dir, const char *record_dir, bool force,
                               kjoin_write_result written[KJOIN_SHARED_N], const kjoin_cp_context *cx, kjoin_err *err)
{
    cp_file f[KJOIN_SHARED_N];
    for (size_t i = 0; i < KJOIN_SHARED_N; i++)
        f[i] = (cp_file){c->files[i].name, c->files[i].mode, c->files[i].data, c->files[i].len};
    return kjoin_cp__write_files(record_dir, cert_dir, f, KJOIN_SHARED_N, force, written, cx, err);
}

kjoin_code kjoin_shared_certs_write(const kjoin_shared_certs *c, const char *cert_dir, const char *record_dir, bool force,
                                    kjoin_write_result written[KJOIN_SHARED_N], kjoin_err *err)
{
    return write_shared(c, cert_dir, record_dir, force, written, NULL, err);
}

/* ---- download-certs --------------------------------------------------------- */

#define logf_(s, level, ...) kjoin_logf((s)->join->log, (s)->join->log_ctx, level, __VA_ARGS__)
#define SECRET_PATH "/api/v1/namespaces/kube-system/secrets/kubeadm-certs"

static kjoin_code get_secret(kjoin_kubeapi *api, char **body, size_t *len, kjoin_err *err)
{
    kjoin_kubeapi_response resp;
    kjoin_code rc = kjoin_kubeapi_request(api, "GET", SECRET_PATH, NULL, &resp, err);
    if (rc)
        return rc;
    if (resp.status == 404)
        rc = kjoin_err_set(err, KJOIN_E_API, "Secret kube-system/kubeadm-certs was not found: it expires two hours "
                           "after its upload (upload it again on a control-plane node: kjoin certs upload-certs, or "
                           "kubeadm init phase upload-certs --upload-certs; each prints a new key)");
    else if (!(rc = kjoin_kubeapi_check(&resp, "get secret kube-system/kubeadm-certs", err))) {
        *body = resp.body, *len = resp.len;
        resp.body = NULL;
    }
    kjoin_kubeapi_response_release(&resp);
    return rc;
}

kjoin_code kjoin_control_plane_cluster(kjoin_kubeapi *api, kjoin_cluster_configuration *out, kjoin_err *err)
{
    bool found = false;
    kjoin_code rc = kjoin_cluster_configuration_get(api, out, &found, err);
    if (!rc && !found)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "the cluster has no kubeadm ClusterConfiguration (configmap "
                                               "kube-system/kubeadm-config): a control-plane join is kubeadm's");
    return rc;
}

kjoin_code kjoin_download_certs(const kjoin_cp_context *s, const kjoin_certificate_key *key,
                                kjoin_download_certs_result *out, kjoin_err *err)
{
    kjoin_shared_certs certs;
    char *body = NULL;
    size_t len = 0;
    memset(out, 0, sizeof(*out));
    snprintf(out->cert_dir, sizeof(out->cert_dir), "%s", s->cert_dir);
    logf_(s, 0, "[download-certs] Downloading the certificates in Secret \"kubeadm-certs\" in the \"kube-system\" "
                "Namespace");
    kjoin_code rc = get_secret(s->join->bootstrap_api, &body, &len, err);
    if (!rc)
        rc = kjoin_kubeadm_certs_open(body, len, key, s->join->ca_pem, s->join->ca_len, &certs, err);
    kjoin_free_wiped(body, len);
    if (rc)
        return rc;
    /* An external etcd's files, where the cluster says: each the cluster names must be in the Secret
     * (kubeadm's certsToTransfer); an empty one is not written. */
    const kjoin_cluster_configuration *c = s->cluster;
    const char *const paths[KJOIN_EXTERNAL_ETCD_N] = {c->external_ca_file, c->external_cert_file, c->external_key_file};
    static const char *const fields[KJOIN_EXTERNAL_ETCD_N] = {"caFile", "certFile", "keyFile"};
    for (size_t i = 0; !rc && c->external_etcd && i < KJOIN_EXTERNAL_ETCD_N; i++)
        if (*paths[i] && !certs.external[i].present)
            rc = kjoin_err_set(err, KJOIN_E_API, "the Secret does not hold %s, the cluster's etcd.external.%s (%s): "
                               "upload the certificates again from a control-plane node that has it",
                               external_etcd[i], fields[i], paths[i]);
    if (rc) {
        kjoin_shared_certs_release(&certs);
        return rc;
    }
    for (int i = KJOIN_SHARED_ETCD_CA_CRT; c->external_etcd && i <= KJOIN_SHARED_ETCD_CA_KEY; i++) {
        /* kubeadm's certsToTransfer: no stacked etcd's CA with an external etcd, whatever the Secret holds */
        kjoin_free_wiped(certs.files[i].data, certs.files[i].len);
        certs.files[i].data = NULL, certs.files[i].len = 0;
    }
    char dir[1400]; /* the node's, or a dry run's */
    logf_(s, 0, "[download-certs] Saving the certificates to the folder: \"%s\"", out->cert_dir);
    rc = kjoin_join_context_write_path(s->join, out->cert_dir, dir, sizeof(dir), err);
    if (!rc)
        rc = write_shared(&certs, dir, kjoin_cp_record_dir(s), s->force, out->written, s, err);
    for (size_t i = 0; !rc && c->external_etcd && i < KJOIN_EXTERNAL_ETCD_N; i++) {
        if (!*paths[i] || !certs.external[i].data)
            continue;
        char parent[sizeof(c->external_ca_file)], where[1400];
        snprintf(parent, sizeof(parent), "%s", paths[i]);
        char *slash = strrchr(parent, '/');
        *slash = '\0'; /* a clean absolute path: a file in a directory */
        cp_file f = {slash + 1 - parent + paths[i], certs.external[i].mode, certs.external[i].data,
                     certs.external[i].len};
        if (!(rc = kjoin_join_context_write_path(s->join, *parent ? parent : "/", where, sizeof(where), err)) &&
            !(rc = kjoin_cp__write_files(kjoin_cp_record_dir(s), where, &f, 1, s->force, NULL, s, err)))
            logf_(s, 1, "[download-certs] Wrote %s (%04o)", paths[i], certs.external[i].mode);
    }
    for (size_t i = 0; i < KJOIN_SHARED_N; i++) {
        out->present[i] = certs.files[i].data != NULL;
        if (!rc && out->present[i])
            logf_(s, 1, "[download-certs] %s %s/%s (%04o)",
                  out->written[i] == KJOIN_WRITE_UNCHANGED ? "Unchanged:" : "Wrote", out->cert_dir, certs.files[i].name,
                  certs.files[i].mode);
    }
    kjoin_shared_certs_release(&certs);
    return rc;
}
