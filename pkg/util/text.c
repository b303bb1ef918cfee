/* The one sanitiser for text that reaches a terminal or a log. */
#include <string.h>

#include <kjoin/private/util.h>

static bool is_token_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

/* The length of the UTF-8 sequence at p (at most n bytes) that may be shown:
 * 0 for a byte that starts no valid sequence, or one that encodes a C1
 * control (U+0080 to U+009F: 0x9b is CSI to many terminals). */
static size_t utf8_shown(const unsigned char *p, size_t n)
{
    size_t len = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;
    if (!len || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if (len == 2 && p[0] == 0xc2 && p[1] < 0xa0)
        return 0;
    if ((len == 3 && p[0] == 0xe0 && p[1] < 0xa0) || (len == 3 && p[0] == 0xed && p[1] >= 0xa0) ||
        (len == 4 && p[0] == 0xf0 && p[1] < 0x90) || (len == 4 && p[0] == 0xf4 && p[1] >= 0x90))
        return 0; /* overlong, surrogate, beyond U+10FFFF */
    return len;
}

bool kjoin_utf8_printable(const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t len = c < 0x80 ? (c >= 0x20 && c != 0x7f) : utf8_shown((const unsigned char *)s + i, n - i);
        if (!len)
            return false;
        i += len;
    }
    return true;
}

/* Whether in[i..] is a bootstrap token "[a-z0-9]{6}.[a-z0-9]{16}" standing
 * alone (not inside a longer run of such characters). */
static bool token_at(const char *in, size_t i, size_t n)
{
    if (i + 23 > n || (i > 0 && is_token_char(in[i - 1])) || (i + 23 < n && is_token_char(in[i + 23])))
        return false;
    for (size_t k = 0; k < 23; k++)
        if (k == 6 ? in[i + k] != '.' : !is_token_char(in[i + k]))
            return false;
    return true;
}

static bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
static bool is_word_char(char c) { return is_hex(c) || (c >= 'g' && c <= 'z') || (c >= 'G' && c <= 'Z') || c == '_'; }

char *kjoin_mask_keys(char *s)
{
    static const char pin[] = "sha256:";
    const size_t pin_len = sizeof(pin) - 1;
    for (size_t i = 0; s && s[i];) {
        size_t n = 0;
        while (is_hex(s[i + n]))
            n++;
        bool alone = n == 64 && (i == 0 || !is_word_char(s[i - 1])) && !is_word_char(s[i + n]);
        /* A pin names a public key's hash, and is shown on purpose. */
        bool is_pin = i >= pin_len && strncmp(s + i - pin_len, pin, pin_len) == 0;
        if (alone && !is_pin)
            memset(s + i, '*', n);
        i += n ? n : 1;
    }
    return s;
}

char *kjoin_printable(char *out, size_t cap, const char *in, bool keep_newlines)
{
    size_t n = in ? strlen(in) : 0, o = 0;
    if (!cap)
        return out;
    for (size_t i = 0; i < n && o + 1 < cap;) {
        const unsigned char c = (unsigned char)in[i];
        if (token_at(in, i, n)) {
            /* id.secret: the id, never the secret (it may be a path's or a value's slip). */
            for (size_t k = 0; k < 23 && o + 1 < cap; k++)
                out[o++] = k <= 6 ? in[i + k] : '*';
            i += 23;
        } else if (c == 'K' && strncmp(in + i, "K10", 3) == 0 && (i == 0 || !is_token_char(in[i - 1])) &&
                   strstr(in + i, "::") && strcspn(in + i, " \t\n\"'") > (size_t)(strstr(in + i, "::") - (in + i))) {
            /* K10<hash>::<user>:<password>: the hash shown, the rest masked. */
            size_t sep = (size_t)(strstr(in + i, "::") - (in + i)) + 2, end = strcspn(in + i, " \t\n\"'");
            if (end > sep && in[i + end - 1] == ':')
                end--; /* "cannot open K10…::…: reason" */
            for (size_t k = 0; k < end && o + 1 < cap; k++)
                out[o++] = k < sep ? in[i + k] : '*';
            i += end;
        } else if (c >= 0x20 && c < 0x7f) {
            out[o++] = (char)c;
            i++;
        } else if (keep_newlines && (c == '\n' || c == '\t')) {
            out[o++] = (char)c;
            i++;
        } else if (c >= 0x80 && utf8_shown((const unsigned char *)in + i, n - i)) {
            size_t len = utf8_shown((const unsigned char *)in + i, n - i);
            if (o + len >= cap)
                break;
            memcpy(out + o, in + i, len);
            o += len, i += len;
        } else {
            out[o++] = '?';
            i++;
        }
    }
    out[o] = '\0';
    return out;
}

bool kjoin_shell_word(char *out, size_t cap, const char *s)
{
    static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-:=@%+,";
    size_t used = strlen(out), len = strlen(s), need = 2;
    bool plain = len && strspn(s, safe) == len;
    for (const char *c = s; !plain && *c; c++)
        need += *c == '\'' ? 4 : 1; /* ' is written '\'' */
    if (plain)
        need = len;
    if (used + need + 1 > cap)
        return false;
    char *o = out + used;
    if (plain) {
        memcpy(o, s, len + 1);
        return true;
    }
    *o++ = '\'';
    for (const char *c = s; *c; c++) {
        if (*c != '\'')
            *o++ = *c;
        else
            memcpy(o, "'\\''", 4), o += 4;
    }
    memcpy(o, "'", 2);
    return true;
}

/* Optimal string alignment distance (Levenshtein with adjacent swaps),
 * capped: anything past cap is cap + 1. */
static size_t distance(const char *a, size_t la, const char *b, size_t lb, size_t cap)
{
    if (la > 64 || lb > 64)
        return cap + 1;
    size_t d[65][65];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1], best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb] > cap ? cap + 1 : d[la][lb];
}

const char *kjoin_did_you_mean(const char *word, size_t len, const char *const *names, size_t n)
{
    size_t cap = len >= 5 ? 2 : 1, best = cap + 1;
    const char *found = NULL;
    for (size_t i = 0; i < n; i++) {
        size_t dist = distance(word, len, names[i], strlen(names[i]), cap);
        if (dist < best && dist > 0)
            best = dist, found = names[i];
    }
    return found;
}
