/* The pieces of a TLS bootstrap that touch X.509: the CSR, its name, the
 * key file, and the checks of the certificate that comes back. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <kjoin/private/bootstrap.h>
#include <kjoin/private/util.h>
#include <kjoin/private/err.h>

#include "internal.h"

/* base64url without padding, as Go's RawURLEncoding. */
static char *raw_url(const unsigned char *data, size_t len)
{
    char *s = kjoin_b64_encode(data, len, true);
    if (s)
        s[strcspn(s, "=")] = '\0';
    return s;
}

static bool write_field(EVP_MD_CTX *md, const void *data, size_t len)
{
    char *enc = raw_url(data, len);
    bool ok = enc && EVP_DigestUpdate(md, enc, strlen(enc)) == 1 && EVP_DigestUpdate(md, "|", 1) == 1;
    free(enc);
    return ok;
}

kjoin_code kjoin_bootstrap_csr_name(const unsigned char *spki_der, size_t len, const char *cn,
                                    const char *const *orgs, size_t n_orgs, const char *const *usages,
                                    size_t n_usages, char out[96], kjoin_err *err)
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned char sum[32];
    unsigned int n = 0;
    bool ok = md && EVP_DigestInit_ex(md, EVP_sha512_256(), NULL) == 1 && write_field(md, spki_der, len) &&
              write_field(md, cn, strlen(cn));
    for (size_t i = 0; ok && i < n_orgs; i++)
        ok = write_field(md, orgs[i], strlen(orgs[i]));
    for (size_t i = 0; ok && i < n_usages; i++)
        ok = write_field(md, usages[i], strlen(usages[i]));
    ok = ok && EVP_DigestFinal_ex(md, sum, &n) == 1 && n == sizeof(sum);
    EVP_MD_CTX_free(md);
    char *enc = ok ? raw_url(sum, sizeof(sum)) : NULL;
    if (!enc)
        return kjoin_err_ossl(err, KJOIN_E_OTHER, "cannot name the CSR");
    snprintf(out, 96, "node-csr-%s", enc);
    free(enc);
    return KJOIN_OK;
}

kjoin_code kjoin_bootstrap__spki(EVP_PKEY *key, unsigned char **der, size_t *len, kjoin_err *err)
{
    int n = i2d_PUBKEY(key, NULL);
    *der = n > 0 ? OPENSSL_malloc((size_t)n) : NULL;
    unsigned char *p = *der;
    if (!*der || i2d_PUBKEY(key, &p) != n) {
        OPENSSL_free(*der);
        return kjoin_err_ossl(err, KJOIN_E_OTHER, "cannot encode the public key");
    }
    *len = (size_t)n;
    return KJOIN_OK;
}

char *kjoin_bootstrap__csr_pem(EVP_PKEY *key, const char *cn, const char *const *orgs, size_t n_orgs, kjoin_err *err)
{
    X509_REQ *req = X509_REQ_new();
    X509_NAME *name = X509_NAME_new();
    bool ok = req && name &&
              X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1, 0);
    /* Go's pkix.Name puts O before CN; the order does not matter to the signer. */
    for (size_t i = 0; ok && i < n_orgs; i++)
        ok = X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, (const unsigned char *)orgs[i], -1, -1, 0);
    const EVP_MD *md = EVP_PKEY_is_a(key, "ED25519") ? NULL : EVP_sha256();
    ok = ok && X509_REQ_set_version(req, 0) && X509_REQ_set_subject_name(req, name) && X509_REQ_set_pubkey(req, key) &&
         X509_REQ_sign(req, key, md) > 0;
    BIO *bio = ok ? BIO_new(BIO_s_mem()) : NULL;
    char *pem = NULL, *data = NULL;
    long n = bio && PEM_write_bio_X509_REQ(bio, req) ? BIO_get_mem_data(bio, &data) : 0;
    if (n > 0 && (pem = malloc((size_t)n + 1))) {
        memcpy(pem, data, (size_t)n);
        pem[n] = '\0';
    }
    BIO_free(bio);
    X509_NAME_free(name);
    X509_REQ_free(req);
    if (!pem)
        kjoin_err_ossl(err, KJOIN_E_OTHER, "cannot make the certificate signing request");
    return pem;
}

char *kjoin_bootstrap_throwaway_csr(const char *cn, kjoin_err *err)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    char *pem = key ? kjoin_bootstrap__csr_pem(key, cn, NULL, 0, err) : NULL;
    if (!key)
        kjoin_err_ossl(err, KJOIN_E_OTHER, "cannot make a key");
    EVP_PKEY_free(key);
    return pem;
}

EVP_PKEY *kjoin_bootstrap__csr_pubkey(const char *pem, size_t len)
{
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    X509_REQ *req = bio ? PEM_read_bio_X509_REQ(bio, NULL, NULL, NULL) : NULL;
    EVP_PKEY *key = req ? X509_REQ_get_pubkey(req) : NULL;
    X509_REQ_free(req);
    BIO_free(bio);
    ERR_clear_error();
    return key;
}

/* Whether name is exactly what was asked: one CN equal to cn, the O values
 * equal to the set orgs (each once), and no other attribute. The API server
 * takes a client certificate's first CN as the user and every O as a
 * group, so anything more is an identity nobody asked for. */
static bool subject_is(X509_NAME *name, const char *cn, const char *const *orgs, size_t n_orgs)
{
    bool seen[KJOIN_BOOTSTRAP_MAX_ORGS] = {false};
    size_t cns = 0;
    if (n_orgs > KJOIN_BOOTSTRAP_MAX_ORGS)
        return false;
    for (int i = 0; i < X509_NAME_entry_count(name); i++) {
        X509_NAME_ENTRY *e = X509_NAME_get_entry(name, i);
        ASN1_STRING *v = X509_NAME_ENTRY_get_data(e);
        size_t len = (size_t)ASN1_STRING_length(v);
        const unsigned char *data = ASN1_STRING_get0_data(v);
        int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(e));
        if (nid == NID_commonName) {
            if (++cns > 1 || len != strlen(cn) || memcmp(data, cn, len) != 0)
                return false;
        } else if (nid == NID_organizationName) {
            size_t j = 0;
            while (j < n_orgs && !(len == strlen(orgs[j]) && memcmp(data, orgs[j], len) == 0 && !seen[j]))
                j++;
            if (j == n_orgs)
                return false; /* not asked for, or twice */
            seen[j] = true;
        } else {
            return false;
        }
    }
    for (size_t j = 0; j < n_orgs; j++)
        if (!seen[j])
            return false;
    return cns == 1;
}

kjoin_code kjoin_bootstrap__check_cert(X509 *cert, STACK_OF(X509) *chain, EVP_PKEY *key, const char *cn,
                                       const char *const *orgs, size_t n_orgs, const char *ca_pem, size_t ca_len,
                                       int64_t now, kjoin_err *err)
{
    if (EVP_PKEY_eq(X509_get0_pubkey(cert), key) != 1)
        return kjoin_err_set(err, KJOIN_E_TRUST, "the issued certificate is not for our key");
    if (!subject_is(X509_get_subject_name(cert), cn, orgs, n_orgs))
        return kjoin_err_set(err, KJOIN_E_TRUST, "the issued certificate's subject is not exactly the one asked for "
                                                 "(one CN=%s, the organisations asked, nothing else)", cn);
    X509_STORE *store = X509_STORE_new();
    BIO *bio = BIO_new_mem_buf(ca_pem, (int)ca_len);
    int added = 0;
    for (X509 *ca; store && bio && (ca = PEM_read_bio_X509(bio, NULL, NULL, NULL)); X509_free(ca))
        added += X509_STORE_add_cert(store, ca) == 1;
    ERR_clear_error();
    X509_STORE_CTX *ctx = added ? X509_STORE_CTX_new() : NULL;
    bool ok = ctx && X509_STORE_CTX_init(ctx, store, cert, chain) == 1;
    if (ok) {
        X509_VERIFY_PARAM *param = X509_STORE_CTX_get0_param(ctx);
        X509_VERIFY_PARAM_set_time(param, (time_t)now);
        X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_CLIENT);
        ok = X509_verify_cert(ctx) == 1;
    }
    int why = ctx ? X509_STORE_CTX_get_error(ctx) : 0;
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);
    BIO_free(bio);
    if (!ok)
        return kjoin_err_set(err, KJOIN_E_TRUST, "the issued certificate does not verify against the cluster CA: %s",
                             added ? X509_verify_cert_error_string(why) : "no CA certificate to verify with");
    return KJOIN_OK;
}


static const char *field(json_object *o, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                             : NULL;
}
/* The body as one JSON object (all of it, not up to a NUL), or NULL. */
static json_object *parse_object(const char *body, size_t len)
{
    json_tokener *tok = json_tokener_new();
    json_object *o = tok ? json_tokener_parse_ex(tok, body, (int)len) : NULL;
    bool whole = tok && json_tokener_get_error(tok) == json_tokener_success && (size_t)tok->char_offset == len;
    json_tokener_free(tok);
    if (o && (!whole || !json_object_is_type(o, json_type_object))) {
        json_object_put(o);
        o = NULL;
    }
    return o;
}

EVP_PKEY *kjoin_bootstrap__csr_body_pubkey(const char *body, size_t len)
{
    json_object *o = parse_object(body, len), *spec = NULL;
    const char *req = o && json_object_object_get_ex(o, "spec", &spec) ? field(spec, "request") : NULL;
    unsigned char *pem = NULL;
    size_t pem_len = 0;
    EVP_PKEY *key = NULL;
    if (req && kjoin_b64_decode(req, strlen(req), false, &pem, &pem_len, NULL) == KJOIN_OK)
        key = kjoin_bootstrap__csr_pubkey((const char *)pem, pem_len);
    free(pem);
    json_object_put(o);
    return key;
}

kjoin_code kjoin_bootstrap__csr_status(const char *body, size_t len, const char *name, char **pem, size_t *pem_len,
                                       bool *issued, kjoin_err *err)
{
    json_object *o = parse_object(body, len), *status = NULL, *conds = NULL;
    *issued = false;
    kjoin_code rc = o
                        ? KJOIN_OK
                        : kjoin_err_set(err, KJOIN_E_TRUST, "%s: the API's answer is not a JSON object", name);
    if (!rc && json_object_object_get_ex(o, "status", &status) && json_object_is_type(status, json_type_object))
        json_object_object_get_ex(status, "conditions", &conds);
    for (size_t i = 0; !rc && json_object_is_type(conds, json_type_array) && i < json_object_array_length(conds); i++) {
        json_object *c = json_object_array_get_idx(conds, i);
        const char *type = field(c, "type"), *reason = field(c, "reason"), *msg = field(c, "message");
        /* kjoin approver's denial of a node-bound token: the token cannot make this node */
        bool bound = type && !strcmp(type, "Denied") && reason && !strcmp(reason, "KjoinTokenBound");
        if (type && (!strcmp(type, "Denied") || !strcmp(type, "Failed")))
            rc = kjoin_err_set(err, bound ? KJOIN_E_TOKEN_REJECTED : KJOIN_E_TRUST, "CertificateSigningRequest %s was %s: %.60s: %.200s", name,
                               !strcmp(type, "Denied") ? "denied" : "failed", reason ? reason : "no reason",
                               msg ? msg : "no message");
    }
    const char *cert = !rc && json_object_is_type(status, json_type_object) ? field(status, "certificate") : NULL;
    if (cert && *cert) {
        unsigned char *bytes = NULL;
        if (kjoin_b64_decode(cert, strlen(cert), false, &bytes, pem_len, NULL))
            rc = kjoin_err_set(err, KJOIN_E_TRUST, "%s: status.certificate is not base64", name);
        *pem = (char *)bytes;
        *issued = rc == KJOIN_OK;
    }
    json_object_put(o);
    return rc;
}

#define BEGIN_CERT "-----BEGIN CERTIFICATE-----"
#define END_CERT "-----END CERTIFICATE-----"

kjoin_code kjoin_bootstrap__issued_chain(const char *pem, size_t len, STACK_OF(X509) **out, kjoin_err *err)
{
    STACK_OF(X509) *chain = sk_X509_new_null();
    kjoin_code rc = chain ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    size_t i = 0;
    while (!rc) {
        while (i < len && (pem[i] == ' ' || pem[i] == '\t' || pem[i] == '\r' || pem[i] == '\n'))
            i++;
        if (i == len)
            break;
        const char *end = len - i > sizeof(BEGIN_CERT) - 1 && memcmp(pem + i, BEGIN_CERT, sizeof(BEGIN_CERT) - 1) == 0
                              ? memmem(pem + i, len - i, END_CERT, sizeof(END_CERT) - 1)
                              : NULL;
        if (!end) {
            rc = kjoin_err_set(err, KJOIN_E_TRUST, "status.certificate holds something other than certificates at "
                                                   "byte %zu: refusing the whole answer", i);
            break;
        }
        size_t block_end = (size_t)(end - pem) + sizeof(END_CERT) - 1;
        /* One block at a time, and no headers (Proc-Type, DEK-Info). */
        BIO *bio = BIO_new_mem_buf(pem + i, (int)(block_end - i));
        char *name = NULL, *header = NULL;
        unsigned char *der = NULL;
        long der_len = 0;
        X509 *x = NULL;
        if (bio && PEM_read_bio(bio, &name, &header, &der, &der_len) == 1 && strcmp(name, "CERTIFICATE") == 0 &&
            !*header) {
            const unsigned char *p = der;
            x = d2i_X509(NULL, &p, der_len);
            if (x && p != der + der_len) {
                X509_free(x); /* DER with bytes after the certificate */
                x = NULL;
            }
        }
        OPENSSL_free(name);
        OPENSSL_free(header);
        OPENSSL_free(der);
        BIO_free(bio);
        ERR_clear_error();
        if (!x || !sk_X509_push(chain, x)) {
            X509_free(x);
            rc = kjoin_err_set(err, KJOIN_E_TRUST, "status.certificate holds a CERTIFICATE block that is not one "
                                                   "certificate at byte %zu: refusing the whole answer", i);
        }
        i = block_end;
    }
    if (!rc && sk_X509_num(chain) == 0)
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "status.certificate holds no certificate");
    if (rc) {
        sk_X509_pop_free(chain, X509_free);
        return rc;
    }
    *out = chain;
    return KJOIN_OK;
}
