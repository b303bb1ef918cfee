#include <stdio.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <kjoin/private/jws.h>
#include <kjoin/private/util.h>
#include <kjoin/private/err.h>

#define MAC_LEN 32
#define MAX_HEADER_B64 4096

typedef struct hs256_key {
    const void *bytes;
    size_t len;
} hs256_key;

/* HMAC-SHA256 over "<header_b64>.<b64url(content)>", the content encoded in
 * chunks as the MAC reads it: no copy of a large payload is held. */
static kjoin_code mac_over(const char *header_b64, size_t header_len, const char *content,
                           size_t content_len, hs256_key key, unsigned char mac[MAC_LEN], kjoin_err *err)
{
    enum { CHUNK = 3 * 1024 }; /* whole base64 groups: padding only at the end */
    /* OpenSSL refuses a NULL key even when it is empty. */
    static const unsigned char no_key[1];
    EVP_MAC *hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *ctx = hmac ? EVP_MAC_CTX_new(hmac) : NULL;
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", "SHA256", 0), OSSL_PARAM_construct_end()};
    bool ok = ctx && EVP_MAC_init(ctx, key.len ? key.bytes : no_key, key.len, params) == 1 &&
              EVP_MAC_update(ctx, (const unsigned char *)header_b64, header_len) == 1 &&
              EVP_MAC_update(ctx, (const unsigned char *)".", 1) == 1;
    unsigned char b64[CHUNK / 3 * 4 + 1];
    for (size_t off = 0; ok && off < content_len; off += CHUNK) {
        size_t n = content_len - off < CHUNK ? content_len - off : CHUNK;
        int w = EVP_EncodeBlock(b64, (const unsigned char *)content + off, (int)n);
        while (w > 0 && b64[w - 1] == '=')
            w--;
        for (int i = 0; i < w; i++)
            b64[i] = b64[i] == '+' ? '-' : b64[i] == '/' ? '_' : b64[i];
        ok = EVP_MAC_update(ctx, b64, (size_t)w) == 1;
    }
    size_t mac_len = 0;
    ok = ok && EVP_MAC_final(ctx, mac, &mac_len, MAC_LEN) == 1 && mac_len == MAC_LEN;
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(hmac);
    return ok ? KJOIN_OK : kjoin_err_ossl(err, KJOIN_E_OTHER, "HMAC-SHA256 failed");
}

static bool valid_kid(const char *kid)
{
    size_t n = strlen(kid);
    if (n == 0 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((kid[i] >= 'a' && kid[i] <= 'z') || (kid[i] >= '0' && kid[i] <= '9')))
            return false;
    return true;
}

kjoin_code kjoin_jws_sign(const char *content, size_t content_len, const char *kid, const void *key,
                          size_t key_len, char **out, kjoin_err *err)
{
    if (!valid_kid(kid))
        return kjoin_err_set(err, KJOIN_E_USAGE, "JWS key id must be 1-64 characters of [a-z0-9]");
    char header[96];
    snprintf(header, sizeof(header), "{\"alg\":\"HS256\",\"kid\":\"%s\"}", kid);
    KJOIN_AUTO_FREE char *header_b64 = kjoin_b64_encode(header, strlen(header), true);
    if (!header_b64)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    unsigned char mac[MAC_LEN];
    kjoin_code rc = mac_over(header_b64, strlen(header_b64), content, content_len,
                             (hs256_key){key, key_len}, mac, err);
    if (rc)
        return rc;
    KJOIN_AUTO_FREE char *sig = kjoin_b64_encode(mac, MAC_LEN, true);
    if (!sig)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    size_t n = strlen(header_b64) + 2 + strlen(sig) + 1;
    char *jws = malloc(n);
    if (!jws)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    snprintf(jws, n, "%s..%s", header_b64, sig);
    *out = jws;
    return KJOIN_OK;
}

/* Checks the decoded protected header against what HS256 with this token
 * allows. */
static kjoin_code check_header(const unsigned char *json, size_t len, const char *kid, kjoin_err *err)
{
    json_tokener *tk = json_tokener_new();
    if (!tk)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    json_tokener_set_flags(tk, JSON_TOKENER_STRICT);
    json_object *hdr = json_tokener_parse_ex(tk, (const char *)json, (int)len);
    bool complete = hdr != NULL; /* strict mode refuses trailing data */
    json_tokener_free(tk);
    kjoin_code rc = KJOIN_OK;
    json_object *v = NULL;
    if (!complete || !json_object_is_type(hdr, json_type_object))
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "JWS header is not a JSON object");
    else if (!json_object_object_get_ex(hdr, "alg", &v) || !json_object_is_type(v, json_type_string))
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "JWS header has no \"alg\"");
    else if (strcmp(json_object_get_string(v), "HS256") != 0 ||
             (size_t)json_object_get_string_len(v) != 5)
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "JWS algorithm \"%.32s\" is not allowed; only HS256 is",
                           json_object_get_string(v));
    else if (json_object_object_get_ex(hdr, "kid", &v) &&
             (!json_object_is_type(v, json_type_string) ||
              strcmp(json_object_get_string(v), kid) != 0))
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "JWS key id \"%.32s\" is not the token id \"%s\"",
                           json_object_get_string(v), kid);
    else if (json_object_object_get_ex(hdr, "crit", NULL))
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "JWS header lists critical extensions; none are supported");
    else if (json_object_object_get_ex(hdr, "b64", &v) && !json_object_get_boolean(v))
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "JWS with an unencoded payload (\"b64\": false) is not supported");
    json_object_put(hdr);
    return rc;
}

kjoin_code kjoin_jws_verify(const char *jws, const char *content, size_t content_len, const char *kid,
                            const void *key, size_t key_len, kjoin_err *err)
{
    if (key_len == 0)
        return kjoin_err_set(err, KJOIN_E_TRUST, "refusing to verify a JWS with an empty key");
    if (!jws || !*jws)
        return kjoin_err_set(err, KJOIN_E_TRUST,
                             "empty signature for token id \"%s\": the token is invalid for this "
                             "cluster or has expired",
                             kid);
    const char *dots = strstr(jws, "..");
    if (!dots || strchr(dots + 2, '.') || memchr(jws, '.', (size_t)(dots - jws)))
        return kjoin_err_set(err, KJOIN_E_TRUST,
                             "signature for token id \"%s\" is not a detached JWS (header..signature)",
                             kid);
    size_t header_len = (size_t)(dots - jws);
    if (header_len == 0 || header_len > MAX_HEADER_B64)
        return kjoin_err_set(err, KJOIN_E_TRUST, "JWS header has an invalid length (%zu)", header_len);

    unsigned char *header = NULL, *sig = NULL;
    size_t hlen = 0, slen = 0;
    kjoin_err inner;
    kjoin_code rc = kjoin_b64_decode(jws, header_len, true, &header, &hlen, &inner);
    if (rc) {
        return kjoin_err_set(err, KJOIN_E_TRUST, "JWS header: %s", inner.msg);
    }
    rc = check_header(header, hlen, kid, err);
    free(header);
    if (rc)
        return rc;
    const char *sig_b64 = dots + 2;
    rc = kjoin_b64_decode(sig_b64, strlen(sig_b64), true, &sig, &slen, &inner);
    if (rc)
        return kjoin_err_set(err, KJOIN_E_TRUST, "JWS signature: %s", inner.msg);

    unsigned char mac[MAC_LEN];
    rc = mac_over(jws, header_len, content, content_len, (hs256_key){key, key_len}, mac, err);
    if (!rc && (slen != MAC_LEN || CRYPTO_memcmp(mac, sig, MAC_LEN) != 0))
        rc = kjoin_err_set(err, KJOIN_E_TRUST,
                           "JWS signature for token id \"%s\" does not match the cluster-info "
                           "kubeconfig: wrong token secret or tampered data",
                           kid);
    OPENSSL_cleanse(mac, sizeof(mac));
    free(sig);
    return rc;
}
