#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <kjoin/private/util.h>

#include "internal.h"

kjoin_pinset *kjoin_pinset_new(void) { return calloc(1, sizeof(kjoin_pinset)); }

void kjoin_pinset_free(kjoin_pinset *pins)
{
    if (pins)
        free(pins->pins);
    free(pins);
}

size_t kjoin_pinset_count(const kjoin_pinset *pins) { return pins ? pins->count : 0; }

/* Parses one pin of length len (not NUL-terminated). */
static kjoin_code parse_one(const char *s, size_t len, kjoin_pin *out, kjoin_err *err)
{
    static const char expected[] =
        "expected \"sha256:<64 hex digits>\" or \"root-sha256:<64 hex digits>\"";
    const char *colon = memchr(s, ':', len);
    if (!colon)
        return kjoin_err_set(err, KJOIN_E_USAGE, "invalid CA pin \"%.*s\": %s", (int)len, s, expected);
    size_t kind_len = (size_t)(colon - s);
    if (kind_len == 6 && strncasecmp(s, "sha256", 6) == 0)
        out->kind = KJOIN_PIN_SPKI;
    else if (kind_len == 11 && strncasecmp(s, "root-sha256", 11) == 0)
        out->kind = KJOIN_PIN_ROOT_DER;
    else
        return kjoin_err_set(err, KJOIN_E_USAGE, "unknown CA pin type \"%.*s\": %s", (int)kind_len, s,
                             expected);
    const char *hex = colon + 1;
    size_t hex_len = len - kind_len - 1;
    if (hex_len != 2 * KJOIN_SHA256_LEN)
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "invalid CA pin \"%.*s\": expected 64 hex digits, found %zu characters",
                             (int)len, s, hex_len);
    if (!kjoin_hex_decode(hex, KJOIN_SHA256_LEN, out->hash))
        return kjoin_err_set(err, KJOIN_E_USAGE, "invalid CA pin \"%.*s\": not hexadecimal", (int)len, s);
    return KJOIN_OK;
}

kjoin_code kjoin_pinset_add(kjoin_pinset *pins, const char *spec, kjoin_err *err)
{
    size_t items = 1;
    for (const char *p = spec; *p; p++)
        items += *p == ',';
    kjoin_pin *grown = realloc(pins->pins, (pins->count + items) * sizeof(*grown));
    if (!grown)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    pins->pins = grown;

    size_t added = 0;
    for (const char *p = spec;; p++) {
        size_t len = strcspn(p, ",");
        kjoin_code rc = parse_one(p, len, &pins->pins[pins->count + added], err);
        if (rc)
            return rc; /* count untouched: nothing added */
        added++;
        p += len;
        if (!*p)
            break;
    }
    pins->count += added;
    return KJOIN_OK;
}

void kjoin_pin__format(kjoin_pin_kind kind, const unsigned char hash[KJOIN_SHA256_LEN],
                       char out[KJOIN_PIN_STR_MAX])
{
    int n = snprintf(out, KJOIN_PIN_STR_MAX, "%s:", kind == KJOIN_PIN_SPKI ? "sha256" : "root-sha256");
    for (size_t i = 0; i < KJOIN_SHA256_LEN; i++)
        n += snprintf(out + n, KJOIN_PIN_STR_MAX - (size_t)n, "%02x", hash[i]);
}
