#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include <kjoin/private/util.h>

char *kjoin_b64_encode(const void *data, size_t len, bool url)
{
    if (len > (size_t)INT_MAX / 4 * 3 - 3)
        return NULL;
    size_t cap = 4 * ((len + 2) / 3) + 1;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    int n = EVP_EncodeBlock((unsigned char *)out, data, (int)len);
    if (url) {
        while (n > 0 && out[n - 1] == '=')
            n--;
        for (int i = 0; i < n; i++) {
            if (out[i] == '+')
                out[i] = '-';
            else if (out[i] == '/')
                out[i] = '_';
        }
    }
    out[n] = '\0';
    return out;
}

static bool is_url_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_';
}

static bool is_std_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/' || c == '=' || c == '\n' || c == '\r' || c == ' ' || c == '\t';
}

/* Decodes the standard alphabet (white space tolerated, padding as OpenSSL
 * requires) into a fresh buffer. OpenSSL's decoder is lenient about some
 * characters, so the alphabet is checked first. */
static kjoin_code decode_std(const char *in, size_t len, unsigned char **out, size_t *out_len,
                             kjoin_err *err)
{
    if (len > INT_MAX)
        return kjoin_err_set(err, KJOIN_E_TRUST, "base64 input too large");
    for (size_t i = 0; i < len; i++)
        if (!is_std_char(in[i]))
            return kjoin_err_set(err, KJOIN_E_TRUST, "invalid base64 character at offset %zu", i);
    unsigned char *buf = malloc(len / 4 * 3 + 4);
    if (!buf)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    EVP_ENCODE_CTX *ctx = EVP_ENCODE_CTX_new();
    int n = 0, tail = 0;
    bool ok = ctx != NULL;
    if (ok) {
        EVP_DecodeInit(ctx);
        ok = EVP_DecodeUpdate(ctx, buf, &n, (const unsigned char *)in, (int)len) >= 0 &&
             EVP_DecodeFinal(ctx, buf + n, &tail) == 1;
    }
    EVP_ENCODE_CTX_free(ctx);
    if (!ok) {
        free(buf);
        return kjoin_err_set(err, KJOIN_E_TRUST, "invalid base64");
    }
    buf[n + tail] = '\0';
    *out = buf;
    *out_len = (size_t)(n + tail);
    return KJOIN_OK;
}

kjoin_code kjoin_b64_decode(const char *in, size_t len, bool url, unsigned char **out,
                            size_t *out_len, kjoin_err *err)
{
    if (!url)
        return decode_std(in, len, out, out_len, err);

    if (len % 4 == 1)
        return kjoin_err_set(err, KJOIN_E_TRUST, "invalid base64url length %zu", len);
    KJOIN_AUTO_FREE char *std = malloc(len + 4);
    if (!std)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    for (size_t i = 0; i < len; i++) {
        if (!is_url_char(in[i]))
            return kjoin_err_set(err, KJOIN_E_TRUST, "invalid base64url character at offset %zu", i);
        std[i] = in[i] == '-' ? '+' : in[i] == '_' ? '/' : in[i];
    }
    size_t padded = len;
    while (padded % 4)
        std[padded++] = '=';

    unsigned char *buf = NULL;
    size_t n = 0;
    kjoin_code rc = decode_std(std, padded, &buf, &n, err);
    if (rc)
        return rc;
    /* Only the canonical encoding is accepted: unused trailing bits must be
     * zero, so one value has exactly one spelling. */
    KJOIN_AUTO_FREE char *again = kjoin_b64_encode(buf, n, true);
    if (!again || strlen(again) != len || memcmp(again, in, len) != 0) {
        free(buf);
        return kjoin_err_set(err, KJOIN_E_TRUST, "non-canonical base64url");
    }
    *out = buf;
    *out_len = n;
    return KJOIN_OK;
}
