/* Keys and certificates with OpenSSL 3: ECDSA P-256 by default, RSA and
 * Ed25519 on request; random 128-bit serials; CA, node and client profiles. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <kjoin/private/util.h>
#include <kjoin/private/err.h>

#include "internal.h"

EVP_PKEY *kjoin_certs__new_key(kjoin_key_type type, kjoin_err *err)
{
    EVP_PKEY *key = NULL;
    switch (type) {
    case KJOIN_KEY_ECDSA_P256: key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"); break;
    case KJOIN_KEY_RSA2048: key = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048); break;
    case KJOIN_KEY_RSA3072: key = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)3072); break;
    case KJOIN_KEY_RSA4096: key = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)4096); break;
    case KJOIN_KEY_ED25519: key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519"); break;
    case KJOIN_KEY_ECDSA_P384: key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-384"); break;
    }
    if (!key)
        kjoin_err_ossl(err, KJOIN_E_OTHER, "cannot generate a key");
    return key;
}

static bool add_ext(X509 *x, X509V3_CTX *ctx, int nid, const char *value)
{
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, ctx, nid, value);
    bool ok = ext && X509_add_ext(x, ext, -1) == 1;
    X509_EXTENSION_free(ext);
    return ok;
}

static bool random_serial(X509 *x)
{
    unsigned char bytes[16];
    if (kjoin_random_bytes(bytes, sizeof(bytes), NULL))
        return false;
    bytes[0] &= 0x7f; /* positive */
    bytes[0] |= 0x01; /* and 16 bytes long */
    BIGNUM *bn = BN_bin2bn(bytes, sizeof(bytes), NULL);
    bool ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
    BN_free(bn);
    return ok;
}

/* The subjectAltName extension: one GENERAL_NAME per name, an IP address
 * when it parses as one, else a DNS name (checked by the caller). Never a
 * config string, whose commas and "DNS:" prefixes a value could inject. */
static bool add_sans(X509 *x, const cert_request *req)
{
    GENERAL_NAMES *names = sk_GENERAL_NAME_new_null();
    bool ok = names != NULL;
    for (size_t i = 0; ok && i < req->n_sans; i++) {
        unsigned char addr[16];
        int len = inet_pton(AF_INET, req->sans[i], addr) == 1 ? 4 : inet_pton(AF_INET6, req->sans[i], addr) == 1 ? 16 : 0;
        GENERAL_NAME *gn = GENERAL_NAME_new();
        ASN1_STRING *value = len ? ASN1_OCTET_STRING_new() : ASN1_IA5STRING_new();
        ok = gn && value && ASN1_STRING_set(value, len ? addr : (const unsigned char *)req->sans[i],
                                              len ? len : (int)strlen(req->sans[i]));
        if (ok) {
            GENERAL_NAME_set0_value(gn, len ? GEN_IPADD : GEN_DNS, value);
            value = NULL;
            ok = sk_GENERAL_NAME_push(names, gn) > 0;
            gn = ok ? NULL : gn;
        }
        ASN1_STRING_free(value);
        GENERAL_NAME_free(gn);
    }
    ok = ok && X509_add1_ext_i2d(x, NID_subject_alt_name, names, 0, X509V3_ADD_DEFAULT) == 1;
    GENERAL_NAMES_free(names);
    return ok;
}

bool kjoin_certs__san_valid(const char *s)
{
    if (kjoin_is_ip(s))
        return true;
    /* A DNS name: labels of letters, digits and '-', not starting or ending with '-'. */
    size_t n = strlen(s), label = 0;
    if (!n || n > 253)
        return false;
    for (size_t i = 0; i <= n; i++) {
        char c = s[i];
        if (c == '.' || c == '\0') {
            if (!label || label > 63 || s[i - 1] == '-')
                return false;
            label = 0;
        } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   (c == '-' && label)) {
            label++;
        } else {
            return false;
        }
    }
    return true;
}

/* The hash a signature by key is made with, as Go's x509 picks it (what
 * kubeadm and the CockroachDB self-signer sign with): SHA-256 for RSA,
 * the curve's own size for ECDSA (P-384: SHA-384, P-521: SHA-512), none for
 * Ed25519. */
static const EVP_MD *signature_digest(EVP_PKEY *key)
{
    if (EVP_PKEY_is_a(key, "ED25519"))
        return NULL;
    if (EVP_PKEY_is_a(key, "EC"))
        return EVP_PKEY_get_bits(key) > 384 ? EVP_sha512() : EVP_PKEY_get_bits(key) > 256 ? EVP_sha384() : EVP_sha256();
    return EVP_sha256();
}

X509 *kjoin_certs__issue(const cert_request *req, EVP_PKEY *key, X509 *issuer, EVP_PKEY *issuer_key, kjoin_err *err)
{
    X509 *x = X509_new();
    X509_NAME *name = X509_NAME_new();
    bool ok = x && name && X509_set_version(x, 2) && random_serial(x);
    for (int pass = 0; pass < 2; pass++) {
        if ((pass == 0) == !req->go_subject) /* CN first, or (Go) last */
            ok = ok && X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)req->cn, -1, -1, 0);
        else
            for (size_t i = 0; ok && i < req->n_orgs; i++)
                ok = X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, (const unsigned char *)req->orgs[i], -1, -1, 0);
    }
    ok = ok && X509_set_subject_name(x, name) &&
         X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name) && X509_set_pubkey(x, key) &&
         ASN1_TIME_set(X509_getm_notBefore(x), (time_t)req->not_before) &&
         ASN1_TIME_set(X509_getm_notAfter(x), (time_t)req->not_after);
    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, issuer ? issuer : x, x, NULL, NULL, 0);
    bool rsa = EVP_PKEY_is_a(key, "RSA") || req->key_encipherment;
    switch (req->kind) {
    case CERT_CA:
        ok = ok && add_ext(x, &ctx, NID_basic_constraints, req->no_sub_ca ? "critical,CA:TRUE,pathlen:0" : "critical,CA:TRUE") &&
             add_ext(x, &ctx, NID_key_usage, "critical,keyCertSign,cRLSign");
        break;
    case CERT_NODE:
        ok = ok && (req->no_basic_constraints || add_ext(x, &ctx, NID_basic_constraints, "critical,CA:FALSE")) &&
             add_ext(x, &ctx, NID_key_usage, rsa ? "critical,digitalSignature,keyEncipherment" : "critical,digitalSignature") &&
             add_ext(x, &ctx, NID_ext_key_usage, "serverAuth,clientAuth") &&
             (!req->n_sans || add_sans(x, req));
        break;
    case CERT_SERVER:
        ok = ok && (req->no_basic_constraints || add_ext(x, &ctx, NID_basic_constraints, "critical,CA:FALSE")) &&
             add_ext(x, &ctx, NID_key_usage, rsa ? "critical,digitalSignature,keyEncipherment" : "critical,digitalSignature") &&
             add_ext(x, &ctx, NID_ext_key_usage, "serverAuth") && (!req->n_sans || add_sans(x, req));
        break;
    case CERT_CLIENT:
        ok = ok && (req->no_basic_constraints || add_ext(x, &ctx, NID_basic_constraints, "critical,CA:FALSE")) &&
             add_ext(x, &ctx, NID_key_usage, rsa ? "critical,digitalSignature,keyEncipherment" : "critical,digitalSignature") &&
             add_ext(x, &ctx, NID_ext_key_usage, "clientAuth");
        break;
    }
    ok = ok && add_ext(x, &ctx, NID_subject_key_identifier, "hash") &&
         (!issuer || add_ext(x, &ctx, NID_authority_key_identifier, "keyid:always"));
    EVP_PKEY *signer = issuer ? issuer_key : key;
    const EVP_MD *md = signature_digest(signer);
    ok = ok && X509_sign(x, signer, md) > 0;
    X509_NAME_free(name);
    if (!ok) {
        X509_free(x);
        kjoin_err_ossl(err, KJOIN_E_OTHER, "cannot issue the certificate for \"%s\"", req->cn);
        return NULL;
    }
    return x;
}

static int64_t asn1_unix(const ASN1_TIME *t)
{
    struct tm tm;
    if (!t || ASN1_TIME_to_tm(t, &tm) != 1)
        return 0;
    return (int64_t)timegm(&tm);
}

int64_t kjoin_certs__not_after(const X509 *x) { return asn1_unix(X509_get0_notAfter(x)); }
int64_t kjoin_certs__not_before(const X509 *x) { return asn1_unix(X509_get0_notBefore(x)); }

void kjoin_certs__fingerprint(X509 *x, char out[80])
{
    unsigned char md[32];
    unsigned int n = 0;
    char hex[65];
    if (X509_digest(x, EVP_sha256(), md, &n) != 1 || n != 32)
        memset(md, 0, sizeof(md));
    snprintf(out, 80, "sha256:%s", kjoin_hex(md, 32, hex));
}

static char *bio_text(BIO *bio, bool ok)
{
    char *data = NULL;
    long n = BIO_get_mem_data(bio, &data);
    char *out = ok && n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (out) {
        if (n)
            memcpy(out, data, (size_t)n);
        out[n] = '\0';
    }
    BIO_free(bio);
    return out;
}

char *kjoin_certs__pem_certs(STACK_OF(X509) *certs, X509 *one)
{
    BIO *bio = BIO_new(BIO_s_mem());
    if (!bio)
        return NULL;
    bool ok = !one || PEM_write_bio_X509(bio, one) == 1;
    for (int i = 0; ok && certs && i < sk_X509_num(certs); i++)
        ok = PEM_write_bio_X509(bio, sk_X509_value(certs, i)) == 1;
    return bio_text(bio, ok);
}

char *kjoin_certs__pem_key(EVP_PKEY *key)
{
    BIO *bio = BIO_new(BIO_s_secmem());
    if (!bio)
        bio = BIO_new(BIO_s_mem());
    if (!bio)
        return NULL;
    return bio_text(bio, PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL) == 1);
}

char *kjoin_certs__pem_public(EVP_PKEY *key, EVP_PKEY *more)
{
    BIO *bio = BIO_new(BIO_s_mem());
    if (!bio)
        return NULL;
    return bio_text(bio, PEM_write_bio_PUBKEY(bio, key) == 1 && (!more || PEM_write_bio_PUBKEY(bio, more) == 1));
}

STACK_OF(X509) *kjoin_certs__parse_certs(const char *pem, size_t len)
{
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    STACK_OF(X509) *out = sk_X509_new_null();
    for (X509 *x; bio && out && (x = PEM_read_bio_X509(bio, NULL, NULL, NULL));)
        if (!sk_X509_push(out, x))
            X509_free(x);
    ERR_clear_error();
    BIO_free(bio);
    if (out && sk_X509_num(out) == 0) {
        sk_X509_free(out);
        out = NULL;
    }
    return out;
}

/* An encrypted key is refused, never a passphrase prompt: kjoin runs unattended. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf, (void)size, (void)rwflag, (void)u;
    return -1;
}

EVP_PKEY *kjoin_certs__parse_key(const char *pem, size_t len)
{
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    EVP_PKEY *key = bio ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL) : NULL;
    BIO_free(bio);
    ERR_clear_error();
    return key;
}

void kjoin_certs__subject(X509 *x, char *out, size_t cap)
{
    out[0] = '\0';
    BIO *bio = BIO_new(BIO_s_mem());
    if (!bio)
        return;
    X509_NAME_print_ex(bio, X509_get_subject_name(x), 0, XN_FLAG_RFC2253);
    int n = BIO_read(bio, out, (int)cap - 1);
    out[n > 0 ? n : 0] = '\0';
    BIO_free(bio);
}

bool kjoin_certs__issued_by(X509 *issuer, X509 *x)
{
    bool ok = X509_check_issued(issuer, x) == X509_V_OK && X509_verify(x, X509_get0_pubkey(issuer)) == 1;
    ERR_clear_error();
    return ok;
}
