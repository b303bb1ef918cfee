#include <string.h>
#include <time.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <kjoin/util.h>

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
    for (;;) {
        X509 *x = PEM_read_bio_X509(bio, NULL, NULL, NULL);
        if (!x) {
            unsigned long e = ERR_peek_last_error();
            if (ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE) {
                ERR_clear_error(); /* the normal end of the bundle */
                break;
            }
            rc = kjoin_err_ossl(err, KJOIN_E_TRUST, "certificate %zu of the CA bundle is malformed",
                                b->count + 1);
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

kjoin_k3s_match kjoin_bundle_match_k3s_hash(const kjoin_bundle *b, const void *bytes, size_t len,
                                            const unsigned char hash[32], size_t *root)
{
    unsigned char whole[KJOIN_SHA256_LEN];
    if (sha256(bytes, len, whole) && CRYPTO_memcmp(whole, hash, KJOIN_SHA256_LEN) == 0)
        return KJOIN_K3S_BUNDLE_BYTES;
    for (size_t i = 0; i < b->count; i++) {
        if (b->certs[i].info.role == KJOIN_CERT_ROOT &&
            CRYPTO_memcmp(b->certs[i].der_hash, hash, KJOIN_SHA256_LEN) == 0) {
            if (root)
                *root = i;
            return KJOIN_K3S_ROOT_DER;
        }
    }
    return KJOIN_K3S_NO_MATCH;
}
