#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include <kjoin/private/token.h>
#include <kjoin/private/util.h>

static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";

static bool is_token_char(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'); }

static bool all_token_chars(const char *s, size_t n)
{
    /* No early exit: the time taken does not depend on where a secret is bad. */
    bool ok = true;
    for (size_t i = 0; i < n; i++)
        ok &= is_token_char(s[i]);
    return ok;
}

bool kjoin_token_id_valid(const char *s)
{
    return s && strlen(s) == KJOIN_TOKEN_ID_LEN && all_token_chars(s, KJOIN_TOKEN_ID_LEN);
}

kjoin_code kjoin_token_parse(const char *s, kjoin_token *out, kjoin_err *err)
{
    static const char form[] = "a bootstrap token must look like [a-z0-9]{6}.[a-z0-9]{16}";
    if (!s || !*s)
        return kjoin_err_set(err, KJOIN_E_USAGE, "empty token: %s", form);
    size_t len = strlen(s);
    if (len != KJOIN_TOKEN_STR_MAX - 1 || s[KJOIN_TOKEN_ID_LEN] != '.')
        return kjoin_err_set(err, KJOIN_E_USAGE, "malformed token (%zu characters): %s", len, form);
    if (!all_token_chars(s, KJOIN_TOKEN_ID_LEN))
        return kjoin_err_set(err, KJOIN_E_USAGE, "malformed token id: %s", form);
    if (!all_token_chars(s + KJOIN_TOKEN_ID_LEN + 1, KJOIN_TOKEN_SECRET_LEN))
        return kjoin_err_set(err, KJOIN_E_USAGE, "malformed secret of token %.6s: %s", s, form);
    memcpy(out->id, s, KJOIN_TOKEN_ID_LEN);
    out->id[KJOIN_TOKEN_ID_LEN] = '\0';
    memcpy(out->secret, s + KJOIN_TOKEN_ID_LEN + 1, KJOIN_TOKEN_SECRET_LEN);
    out->secret[KJOIN_TOKEN_SECRET_LEN] = '\0';
    return KJOIN_OK;
}

kjoin_code kjoin_token_read_text(const char *path, char *out, size_t cap, kjoin_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    kjoin_code rc = kjoin_file_read(path, 8192, &buf, &len, err);
    if (rc)
        return rc;
    /* Go's strings.TrimSpace, as K3s trims a token file. */
    static const char space[] = " \t\r\n\v\f";
    char *start = buf + strspn(buf, space);
    size_t n = strlen(start);
    while (n && strchr(space, start[n - 1]))
        n--;
    if (memchr(buf, '\0', len))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "token file %s holds a NUL byte", path);
    else if (n >= cap)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "token file %s holds more than %zu bytes", path, cap - 1);
    else
        memcpy(out, start, n), out[n] = '\0';
    kjoin_free_wiped(buf, len);
    return rc;
}

kjoin_code kjoin_token_read_line(const char *path, char *out, size_t cap, kjoin_err *err)
{
    char text[8192];
    kjoin_code rc = kjoin_token_read_text(path, text, sizeof(text), err);
    size_t n = rc ? 0 : strcspn(text, "\r\n");
    while (n && (text[n - 1] == ' ' || text[n - 1] == '\t'))
        n--;
    if (!rc && n >= cap)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "token file %s: the first line is too long", path);
    else if (!rc)
        memcpy(out, text, n), out[n] = '\0';
    OPENSSL_cleanse(text, sizeof(text));
    return rc;
}

kjoin_code kjoin_token_read_file(const char *path, kjoin_token *out, kjoin_err *err)
{
    char line[KJOIN_TOKEN_STR_MAX + 8];
    kjoin_err inner;
    kjoin_code rc = kjoin_token_read_line(path, line, sizeof(line), err);
    if (!rc && (rc = kjoin_token_parse(line, out, &inner)))
        kjoin_err_set(err, rc, "token file %s: %s", path, inner.msg);
    OPENSSL_cleanse(line, sizeof(line));
    return rc;
}

/* Fills out with n characters drawn uniformly from the alphabet. */
static kjoin_code random_chars(char *out, size_t n, kjoin_err *err)
{
    /* 252 = 7 * 36: bytes at or above it are redrawn, so every character is
     * equally likely. */
    unsigned char pool[64];
    size_t have = 0, used = 0;
    while (n) {
        if (used == have) {
            kjoin_code rc = kjoin_random_bytes(pool, sizeof(pool), err);
            if (rc)
                return rc;
            have = sizeof(pool);
            used = 0;
        }
        unsigned char b = pool[used++];
        if (b >= 252)
            continue;
        *out++ = alphabet[b % 36];
        n--;
    }
    OPENSSL_cleanse(pool, sizeof(pool));
    return KJOIN_OK;
}

kjoin_code kjoin_token_generate(kjoin_token *out, kjoin_err *err)
{
    kjoin_token t;
    kjoin_code rc = random_chars(t.id, KJOIN_TOKEN_ID_LEN, err);
    if (!rc)
        rc = random_chars(t.secret, KJOIN_TOKEN_SECRET_LEN, err);
    if (!rc) {
        t.id[KJOIN_TOKEN_ID_LEN] = '\0';
        t.secret[KJOIN_TOKEN_SECRET_LEN] = '\0';
        *out = t;
    }
    kjoin_token_clear(&t);
    return rc;
}

void kjoin_token_format(const kjoin_token *t, char buf[KJOIN_TOKEN_STR_MAX])
{
    snprintf(buf, KJOIN_TOKEN_STR_MAX, "%s.%s", t->id, t->secret);
}

void kjoin_token_masked(const kjoin_token *t, char buf[KJOIN_TOKEN_STR_MAX])
{
    snprintf(buf, KJOIN_TOKEN_STR_MAX, "%s.****************", t->id);
}

void kjoin_token_clear(kjoin_token *t) { OPENSSL_cleanse(t, sizeof(*t)); }
