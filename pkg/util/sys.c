#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <kjoin/private/util.h>
#include <kjoin/private/err.h>

int64_t kjoin_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void kjoin_vlogf(kjoin_log_fn fn, void *ctx, int level, const char *fmt, va_list ap)
{
    if (!fn)
        return;
    char line[1024];
    vsnprintf(line, sizeof(line), fmt, ap);
    fn(ctx, level, kjoin_mask_keys(line));
}

void kjoin_logf(kjoin_log_fn fn, void *ctx, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kjoin_vlogf(fn, ctx, level, fmt, ap);
    va_end(ap);
}

int64_t kjoin_backoff_ms(unsigned round, int64_t base, int64_t cap)
{
    int64_t ceiling = base > 0 ? base : 1;
    for (unsigned i = 0; i < round && ceiling < cap; i++)
        ceiling *= 2;
    if (ceiling > cap)
        ceiling = cap;
    uint32_t rnd = 0;
    if (kjoin_random_bytes(&rnd, sizeof(rnd), NULL))
        rnd = (uint32_t)round * 2654435761u; /* still spread, if the CSPRNG fails */
    return (int64_t)(rnd % (uint32_t)(ceiling > 0 ? ceiling : 1));
}

void kjoin_sleep_ms(int64_t ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

kjoin_code kjoin_random_bytes(void *buf, size_t len, kjoin_err *err)
{
    if (len > (size_t)INT32_MAX || RAND_bytes(buf, (int)len) != 1)
        return kjoin_err_ossl(err, KJOIN_E_OTHER, "random number generator failed");
    return KJOIN_OK;
}

kjoin_code kjoin_sha256(const void *data, size_t len, unsigned char out[32], kjoin_err *err)
{
    if (EVP_Digest(data, len, out, NULL, EVP_sha256(), NULL) != 1)
        return kjoin_err_ossl(err, KJOIN_E_OTHER, "SHA-256 failed");
    return KJOIN_OK;
}

char *kjoin_hex(const unsigned char *bytes, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * len] = '\0';
    return out;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

bool kjoin_hex_decode(const char *hex, size_t len, unsigned char *out)
{
    for (size_t i = 0; i < len; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    return true;
}

char *kjoin_url_redact(const char *url, char *out, size_t cap)
{
    const char *scheme_end = strstr(url, "://");
    if (!scheme_end) {
        snprintf(out, cap, "%s", url);
        return out;
    }
    const char *host = scheme_end + 3;
    size_t authority_len = strcspn(host, "/?#");
    const char *at = memrchr(host, '@', authority_len);
    if (at) {
        authority_len -= (size_t)(at + 1 - host);
        host = at + 1;
    }
    size_t path_len = strcspn(host + authority_len, "?#");
    bool hidden = host[authority_len + path_len] != '\0';
    snprintf(out, cap, "%.*s%.*s%s", (int)(scheme_end + 3 - url), url, (int)(authority_len + path_len), host,
             hidden ? "?<redacted>" : "");
    return out;
}

void kjoin_log_lines(kjoin_log_fn fn, void *ctx, int level, const char *prefix, const char *text)
{
    for (const char *p = text; fn && p && *p;) {
        size_t n = strcspn(p, "\n");
        kjoin_logf(fn, ctx, level, "%s%.*s", prefix, (int)n, p);
        p += n + (p[n] == '\n');
    }
}

void kjoin_free_wiped(void *p, size_t len)
{
    if (p)
        OPENSSL_cleanse(p, len);
    free(p);
}

void kjoin_free_wiped_str(char *s)
{
    kjoin_free_wiped(s, s ? strlen(s) : 0);
}
