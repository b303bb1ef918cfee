#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <kjoin/private/util.h>

/* Go's duration units, longest names first so "ms" wins over "m". */
static const struct {
    const char *name;
    int64_t ns;
} units[] = {
    {"ns", 1},
    {"us", 1000},
    {"\xc2\xb5s", 1000}, /* U+00B5 micro sign */
    {"\xce\xbcs", 1000}, /* U+03BC Greek mu */
    {"ms", 1000000},
    {"s", 1000000000},
    {"m", 60LL * 1000000000},
    {"h", 3600LL * 1000000000},
};

#define MAX_NS INT64_MAX

kjoin_code kjoin_duration_parse(const char *s, int64_t *out_ms, kjoin_err *err)
{
    const char *orig = s;
    if (!s || !*s)
        return kjoin_err_set(err, KJOIN_E_USAGE, "empty duration");
    if (*s == '+' || *s == '-')
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "invalid duration \"%s\": must be positive and unsigned", orig);
    if (strcmp(s, "0") == 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "invalid duration \"0\": must be positive");

    int64_t total = 0;
    while (*s) {
        int64_t whole = 0;
        const char *start = s;
        while (*s >= '0' && *s <= '9') {
            int digit = *s++ - '0';
            if (whole > (MAX_NS - digit) / 10)
                return kjoin_err_set(err, KJOIN_E_USAGE, "invalid duration \"%s\": overflow", orig);
            whole = whole * 10 + digit;
        }
        int64_t frac = 0, scale = 1;
        bool has_frac_digits = false;
        if (*s == '.') {
            s++;
            while (*s >= '0' && *s <= '9') {
                has_frac_digits = true;
                if (scale < 1000000000000000000LL) { /* keep 18 digits, enough for ns */
                    frac = frac * 10 + (*s - '0');
                    scale *= 10;
                }
                s++;
            }
        }
        if (s == start || (s == start + 1 && *start == '.' && !has_frac_digits))
            return kjoin_err_set(err, KJOIN_E_USAGE,
                                 "invalid duration \"%s\": expected a number at \"%s\"", orig, start);
        int64_t unit = 0;
        size_t unit_len = 0;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
            size_t n = strlen(units[i].name);
            if (n > unit_len && strncmp(s, units[i].name, n) == 0) {
                unit = units[i].ns;
                unit_len = n;
            }
        }
        if (unit == 0)
            return kjoin_err_set(err, KJOIN_E_USAGE,
                                 "invalid duration \"%s\": missing or unknown unit (use ns, us, ms, s, m, h)",
                                 orig);
        s += unit_len;
        if (whole > MAX_NS / unit)
            return kjoin_err_set(err, KJOIN_E_USAGE, "invalid duration \"%s\": overflow", orig);
        int64_t part = whole * unit;
        /* frac/scale * unit, computed without overflow: unit <= 3.6e12, frac < scale */
        long double f = (long double)frac / (long double)scale * (long double)unit;
        part += (int64_t)f;
        if (part < 0 || total > MAX_NS - part)
            return kjoin_err_set(err, KJOIN_E_USAGE, "invalid duration \"%s\": overflow", orig);
        total += part;
    }
    if (total <= 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "invalid duration \"%s\": must be positive", orig);
    *out_ms = total / 1000000 + (total % 1000000 != 0);
    return KJOIN_OK;
}

char *kjoin_duration_format(int64_t ms, char *buf, size_t buflen)
{
    if (ms < 1000) {
        snprintf(buf, buflen, "%" PRId64 "ms", ms);
        return buf;
    }
    int64_t h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60, rest = ms % 1000;
    char sec[32];
    if (rest) {
        snprintf(sec, sizeof(sec), "%" PRId64 ".%03" PRId64, s, rest);
        size_t n = strlen(sec);
        while (sec[n - 1] == '0')
            sec[--n] = '\0';
    } else {
        snprintf(sec, sizeof(sec), "%" PRId64, s);
    }
    if (h)
        snprintf(buf, buflen, "%" PRId64 "h%" PRId64 "m%ss", h, m, sec);
    else if (m)
        snprintf(buf, buflen, "%" PRId64 "m%ss", m, sec);
    else
        snprintf(buf, buflen, "%ss", sec);
    return buf;
}
