#include <string.h>
#include <time.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <kjoin/private/util.h>
#include <kjoin/private/err.h>

#include "internal.h"

const char *kjoin_cert_role_name(kjoin_cert_role role)
{
    switch (role) {
    case KJOIN_CERT_ROOT: return "root";
    case KJOIN_CERT_INTERMEDIATE: return "intermediate";
    case KJOIN_CERT_LEAF: break;
    }
    return "leaf";
}

static bool sha256(const unsigned char *data, size_t len, unsigned char out[KJOIN_SHA256_LEN])
{
    return kjoin_sha256(data, len, out, NULL) == KJOIN_OK;
}

/* SHA-256 of the DER encoding that i2d produces for obj. */
#define HASH_DER(i2d, obj, out)                                   \
    __extension__({                                               \
        unsigned char *der_ = NULL;                               \
        int n_ = i2d(obj, &der_);                                 \
        bool ok_ = n_ > 0 && sha256(der_, (size_t)n_, out);       \
        OPENSSL_free(der_);                                       \
        ok_;                                                      \
    })

static void name_string(const X509_NAME *name, char *out, size_t cap)
{
    out[0] = '\0';
    BIO *bio = BIO_new(BIO_s_mem());
    if (!bio)
        return;
    X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253);
    int n = BIO_read(bio, out, (int)cap - 1);
    out[n > 0 ? n : 0] = '\0';
    BIO_free(bio);
}

static void time_string(const ASN1_TIME *t, char *out, size_t cap)
{
    struct tm tm;
    if (!t || ASN1_TIME_to_tm(t, &tm) != 1 || !strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
        out[0] = '\0';
}

/* True when issuer plausibly issued subject (names, key ids, key usage), is
 * a CA, and its key verifies subject's signature. */
static bool issued_by(X509 *issuer, X509 *subject)
{
    return X509_check_issued(issuer, subject) == X509_V_OK && X509_check_ca(issuer) >= 1 &&
           X509_verify(subject, X509_get0_pubkey(issuer)) == 1;
}

static kjoin_code describe(kjoin_cert *c, kjoin_err *err)
{
    X509 *x = c->x509;
    if (!HASH_DER(i2d_X509_PUBKEY, X509_get_X509_PUBKEY(x), c->spki_hash) ||
        !HASH_DER(i2d_X509, x, c->der_hash))
        return kjoin_err_ossl(err, KJOIN_E_TRUST, "cannot encode a certificate of the CA bundle");
    kjoin_cert_info *i = &c->info;
    name_string(X509_get_subject_name(x), i->subject, sizeof(i->subject));
    name_string(X509_get_issuer_name(x), i->issuer, sizeof(i->issuer));
    time_string(X509_get0_notBefore(x), i->not_before, sizeof(i->not_before));
    time_string(X509_get0_notAfter(x), i->not_after, sizeof(i->not_after));
    kjoin_pin__format(KJOIN_PIN_SPKI, c->spki_hash, i->spki_pin);
    i->self_signed = X509_check_issued(x, x) == X509_V_OK;
    i->is_ca = X509_check_ca(x) >= 1;
    ERR_clear_error();
    return KJOIN_OK;
}

/* Roles need the whole bundle: a root is self-signed or has no issuer here. */
static void assign_roles(kjoin_bundle *b)
{
    for (size_t i = 0; i < b->count; i++) {
        kjoin_cert *c = &b->certs[i];
        bool has_issuer = false;
        for (size_t j = 0; j < b->count && !has_issuer && !c->info.self_signed; j++)
            has_issuer = j != i && X509_check_issued(b->certs[j].x509, c->x509) == X509_V_OK;
        if (c->info.self_signed || !has_issuer) {
            c->info.role = KJOIN_CERT_ROOT;
            kjoin_pin__format(KJOIN_PIN_ROOT_DER, c->der_hash, c->info.root_pin);
        } else {
            c->info.role = c->info.is_ca ? KJOIN_CERT_INTERMEDIATE : KJOIN_CERT_LEAF;
        }
    }
    ERR_clear_error();
}

/* PEM blocks in the text: a bound on its certificates, known before any is parsed. */
static size_t count_pem_blocks(const char *pem, size_t len)
{
    static const char begin[] = "-----BEGIN ";
    size_t n = 0;
    for (const char *p = pem, *end = pem + len; (p = memmem(p, (size_t)(end - p), begin, sizeof(begin) - 1));
         p += sizeof(begin) - 1)
        n++;
    return n;
}

kjoin_code kjoin_bundle_parse(const void *pem, size_t len, kjoin_bundle **out, kjoin_err *err)
{
    if (len > INT32_MAX)
        return kjoin_err_set(err, KJOIN_E_TRUST, "CA bundle too large");
    if (count_pem_blocks(pem, len) > KJOIN_BUNDLE_MAX_CERTS)
        return kjoin_err_set(err, KJOIN_E_TRUST, "CA bundle holds more than %d PEM blocks (at most %d certificates)",
                             KJOIN_BUNDLE_MAX_CERTS, KJOIN_BUNDLE_MAX_CERTS);
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    kjoin_bundle *b = calloc(1, sizeof(*b));
    kjoin_code rc = KJOIN_OK;
    if (!bio || !b || !(b->certs = calloc(KJOIN_BUNDLE_MAX_CERTS, sizeof(*b->certs)))) {
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        goto out;
    }
    ERR_clear_error();
    /* As Go's certutil.ParseCertsPEM reads a bundle (kubeadm's and K3s'
     * agents): a block that is not a plain "CERTIFICATE" block (another
     * type, or headers) is skipped, never trusted; a CERTIFICATE block that
     * is not one certificate refuses the bundle. */
    for (;;) {
        char *name = NULL, *header = NULL;
        unsigned char *der = NULL;
        long der_len = 0;
        if (PEM_read_bio(bio, &name, &header, &der, &der_len) != 1) {
            unsigned long e = ERR_peek_last_error();
            if (ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE) {
                ERR_clear_error(); /* the normal end of the bundle */
                break;
            }
            rc = kjoin_err_ossl(err, KJOIN_E_TRUST, "PEM block %zu of the CA bundle is malformed", b->count + b->skipped + 1);
            goto out;
        }
        bool plain = strcmp(name, "CERTIFICATE") == 0 && !*header;
        const unsigned char *p = der;
        X509 *x = plain ? d2i_X509(NULL, &p, der_len) : NULL;
        bool whole = x && p == der + der_len;
        OPENSSL_free(name);
        OPENSSL_free(header);
        OPENSSL_free(der);
        if (!plain) {
            b->skipped++;
            continue;
        }
        if (!whole) {
            X509_free(x);
            rc = kjoin_err_ossl(err, KJOIN_E_TRUST, "certificate %zu of the CA bundle is malformed", b->count + 1);
            goto out;
        }
        /* RFC 5280 4.1.2.2: a serial is positive. Go's crypto/x509 refuses
         * to parse one that is not, so kubelet and K3s agents could not load
         * a kubeconfig holding it. */
        if (ASN1_STRING_type(X509_get0_serialNumber(x)) == V_ASN1_NEG_INTEGER) {
            X509_free(x);
            rc = kjoin_err_set(err, KJOIN_E_TRUST, "certificate %zu of the CA bundle has a negative serial number, which "
                               "RFC 5280 forbids and Go's clients (kubelet, K3s agents) refuse", b->count + 1);
            goto out;
        }
        if (b->count == KJOIN_BUNDLE_MAX_CERTS) {
            X509_free(x);
            rc = kjoin_err_set(err, KJOIN_E_TRUST, "CA bundle holds more than %d certificates",
                               KJOIN_BUNDLE_MAX_CERTS);
            goto out;
        }
        b->certs[b->count].x509 = x;
        rc = describe(&b->certs[b->count++], err);
        if (rc)
            goto out;
    }
    if (b->count == 0) {
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "CA bundle holds no PEM certificate");
        goto out;
    }
    assign_roles(b);
    *out = KJOIN_TAKE(b);
out:
    BIO_free(bio);
    kjoin_bundle_free(b);
    return rc;
}

void kjoin_bundle_free(kjoin_bundle *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->count; i++)
        X509_free(b->certs[i].x509);
    free(b->certs);
    free(b);
}

size_t kjoin_bundle_count(const kjoin_bundle *b) { return b ? b->count : 0; }

const kjoin_cert_info *kjoin_bundle_cert(const kjoin_bundle *b, size_t i)
{
    return i < b->count ? &b->certs[i].info : NULL;
}

X509 *kjoin_bundle_x509(const kjoin_bundle *b, size_t i) { return i < b->count ? b->certs[i].x509 : NULL; }

/* The pin that c matches, or NULL. Root pins match only roots. */
static const kjoin_pin *matching_pin(const kjoin_cert *c, const kjoin_pinset *pins)
{
    for (size_t p = 0; p < pins->count; p++) {
        const kjoin_pin *pin = &pins->pins[p];
        if (pin->kind == KJOIN_PIN_SPKI && memcmp(pin->hash, c->spki_hash, KJOIN_SHA256_LEN) == 0)
            return pin;
        if (pin->kind == KJOIN_PIN_ROOT_DER && c->info.role == KJOIN_CERT_ROOT &&
            memcmp(pin->hash, c->der_hash, KJOIN_SHA256_LEN) == 0)
            return pin;
    }
    return NULL;
}

kjoin_code kjoin_bundle_apply_pins(kjoin_bundle *b, const kjoin_pinset *pins, kjoin_err *err)
{
    bool unsafe = kjoin_pinset_count(pins) == 0;
    size_t anchors = 0;
    for (size_t i = 0; i < b->count; i++) {
        kjoin_cert *c = &b->certs[i];
        const kjoin_pin *pin = unsafe ? NULL : matching_pin(c, pins);
        c->info.trust = unsafe || pin ? KJOIN_TRUST_ANCHOR : KJOIN_TRUST_NONE;
        c->info.matched_pin[0] = '\0';
        if (pin)
            kjoin_pin__format(pin->kind, pin->hash, c->info.matched_pin);
        anchors += c->info.trust == KJOIN_TRUST_ANCHOR;
    }
    if (anchors == 0) {
        char seen[512] = "";
        for (size_t i = 0, n = 0; i < b->count && n + 70 < sizeof(seen); i++)
            n += (size_t)snprintf(seen + n, sizeof(seen) - n, "%s%s", i ? ", " : "",
                                  b->certs[i].info.spki_pin);
        return kjoin_err_set(err, KJOIN_E_TRUST,
                             "no certificate of the CA bundle matches a pinned hash (the bundle has %s)",
                             seen);
    }
    /* Spread trust down to what verified anchors and their descendants
     * issued, breadth first: each certificate is reached once, whatever the
     * order of the bundle. */
    size_t queue[KJOIN_BUNDLE_MAX_CERTS], head = 0, tail = 0;
    for (size_t i = 0; i < b->count; i++)
        if (b->certs[i].info.trust == KJOIN_TRUST_ANCHOR)
            queue[tail++] = i;
    while (head < tail) {
        kjoin_cert *issuer = &b->certs[queue[head++]];
        for (size_t i = 0; i < b->count; i++) {
            kjoin_cert *c = &b->certs[i];
            if (c->info.trust == KJOIN_TRUST_NONE && c != issuer && issued_by(issuer->x509, c->x509)) {
                c->info.trust = KJOIN_TRUST_CHAINED;
                queue[tail++] = i;
            }
        }
    }
    for (size_t i = 0; i < b->count; i++)
        if (b->certs[i].info.trust == KJOIN_TRUST_NONE)
            b->certs[i].info.trust = KJOIN_TRUST_DROPPED;
    ERR_clear_error();
    return KJOIN_OK;
}

static bool in_mask(const kjoin_cert_info *c, void *ctx) { return *(unsigned *)ctx & KJOIN_TRUST_MASK(c->trust); }

char *kjoin_bundle_pem(const kjoin_bundle *b, unsigned mask, size_t *out_len)
{
    return kjoin_bundle_pem_filter(b, in_mask, &mask, out_len);
}

char *kjoin_bundle_pem_filter(const kjoin_bundle *b, kjoin_cert_filter keep, void *ctx, size_t *out_len)
{
    BIO *bio = BIO_new(BIO_s_mem());
    if (!bio)
        return NULL;
    bool ok = true;
    for (size_t i = 0; i < b->count && ok; i++)
        if (keep(&b->certs[i].info, ctx))
            ok = PEM_write_bio_X509(bio, b->certs[i].x509) == 1;
    char *data = NULL;
    long n = BIO_get_mem_data(bio, &data);
    char *out = ok && n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (out) {
        if (n > 0)
            memcpy(out, data, (size_t)n);
        out[n] = '\0';
        if (out_len)
            *out_len = (size_t)n;
    }
    BIO_free(bio);
    return out;
}

/* Whether x has no authority key id, or one equal to its subject key id:
 * what K3s' hashCA takes for a root. */
static bool k3s_root_like(X509 *x)
{
    const ASN1_OCTET_STRING *aki = X509_get0_authority_key_id(x), *ski = X509_get0_subject_key_id(x);
    return !aki || (ski && ASN1_OCTET_STRING_cmp(aki, ski) == 0);
}

/* Go's extended key usage rule for a chain verified for a TLS server (the
 * default of x509.VerifyOptions): every certificate that names usages names
 * serverAuth or any. */
static bool go_server_usage(STACK_OF(X509) *chain)
{
    for (int i = 0; i < sk_X509_num(chain); i++) {
        X509 *x = sk_X509_value(chain, i);
        uint32_t xku = X509_get_extended_key_usage(x);
        if (X509_get_ext_by_NID(x, NID_ext_key_usage, -1) >= 0 && !(xku & (XKU_SSL_SERVER | XKU_ANYEKU)))
            return false;
    }
    return true;
}

/* Go's verifier never puts a certificate into a chain twice, nor another
 * with the same subject and key (a cross-signed copy): alreadyInChain. */
static bool go_no_repeats(STACK_OF(X509) *chain)
{
    for (int i = 0; i < sk_X509_num(chain); i++)
        for (int j = i + 1; j < sk_X509_num(chain); j++) {
            X509 *a = sk_X509_value(chain, i), *b = sk_X509_value(chain, j);
            if (X509_NAME_cmp(X509_get_subject_name(a), X509_get_subject_name(b)) == 0 &&
                EVP_PKEY_eq(X509_get0_pubkey(a), X509_get0_pubkey(b)) == 1)
                return false;
        }
    return true;
}

/* The root of certificate 0's chain, as K3s' hashCA finds it: the other
 * certificates that look like roots are the roots, the rest intermediates,
 * verified now; -1 when there is none. */
static ptrdiff_t k3s_chain_root(const kjoin_bundle *b)
{
    X509_STORE *roots = X509_STORE_new();
    STACK_OF(X509) *intermediates = sk_X509_new_null();
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    bool ok = roots && intermediates && ctx && X509_STORE_set_flags(roots, X509_V_FLAG_PARTIAL_CHAIN) == 1;
    for (size_t i = 1; ok && i < b->count; i++)
        ok = k3s_root_like(b->certs[i].x509) ? X509_STORE_add_cert(roots, b->certs[i].x509) == 1
                                             : sk_X509_push(intermediates, b->certs[i].x509) > 0;
    ptrdiff_t found = -1;
    if (ok && X509_STORE_CTX_init(ctx, roots, b->certs[0].x509, intermediates) == 1 && X509_verify_cert(ctx) == 1 &&
        go_server_usage(X509_STORE_CTX_get0_chain(ctx)) && go_no_repeats(X509_STORE_CTX_get0_chain(ctx))) {
        STACK_OF(X509) *chain = X509_STORE_CTX_get0_chain(ctx);
        X509 *top = sk_X509_value(chain, sk_X509_num(chain) - 1);
        for (size_t i = 1; found < 0 && i < b->count; i++)
            if (X509_cmp(top, b->certs[i].x509) == 0)
                found = (ptrdiff_t)i;
    }
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(roots);
    sk_X509_free(intermediates);
    ERR_clear_error();
    return found;
}

kjoin_k3s_match kjoin_bundle_match_k3s_hash(const kjoin_bundle *b, const void *bytes, size_t len,
                                            const unsigned char hash[32], size_t *root)
{
    /* K3s' hashCA (pkg/clientaccess/token.go): several certificates hash the
     * DER of the root of the first one's chain when that chain verifies now,
     * else (and one certificate always) the bytes as served. One value,
     * compared exactly. */
    ptrdiff_t r = b->count > 1 ? k3s_chain_root(b) : -1;
    unsigned char whole[KJOIN_SHA256_LEN];
    if (r >= 0) {
        if (CRYPTO_memcmp(b->certs[r].der_hash, hash, KJOIN_SHA256_LEN) != 0)
            return KJOIN_K3S_NO_MATCH;
        if (root)
            *root = (size_t)r;
        return KJOIN_K3S_ROOT_DER;
    }
    return sha256(bytes, len, whole) && CRYPTO_memcmp(whole, hash, KJOIN_SHA256_LEN) == 0 ? KJOIN_K3S_BUNDLE_BYTES
                                                                                          : KJOIN_K3S_NO_MATCH;
}
