/* How go-yaml v2 (resolve.go), under sigs.k8s.io/yaml and so under client-go,
 * kubeadm and the kubelet, reads a plain scalar: null, a bool (YAML 1.1's
 * yes/no/on/off too), an int, a float, or a string. Its encoder quotes a
 * string exactly when this says anything else, timestamps and base-60
 * floats included; its decoder gives the value. One rule for both. */
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "yamldoc.h"

static bool matches(const char *pattern, const char *s)
{
    regex_t re;
    if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
        return false;
    bool m = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return m;
}

/* Go's strconv.ParseInt(s, 0, 64) or ParseUint(s, 0, 64) succeeding: the
 * magnitude and the sign. */
static bool go_int(const char *s, uint64_t *magnitude, bool *negative)
{
    bool neg = *s == '-', sign = *s == '-' || *s == '+';
    const char *p = s + sign;
    unsigned base = 10;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        base = 16, p += 2;
    else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B'))
        base = 2, p += 2;
    else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O'))
        base = 8, p += 2;
    else if (p[0] == '0' && p[1])
        base = 8, p += 1;
    if (!*p)
        return false;
    uint64_t v = 0;
    for (; *p; p++) {
        unsigned d = *p >= '0' && *p <= '9' ? (unsigned)(*p - '0')
                     : *p >= 'a' && *p <= 'f' ? (unsigned)(*p - 'a' + 10)
                     : *p >= 'A' && *p <= 'F' ? (unsigned)(*p - 'A' + 10) : 99;
        if (d >= base || v > (UINT64_MAX - d) / base)
            return false;
        v = v * base + d;
    }
    *magnitude = v, *negative = neg;
    /* ParseInt takes a sign within int64; ParseUint no sign, within uint64. */
    return neg ? v <= (uint64_t)INT64_MAX + 1 : sign ? v <= (uint64_t)INT64_MAX : true;
}

/* Go's strconv.ParseFloat succeeding on a decimal form: only an overflow
 * fails (an underflow is 0). */
static bool go_float(const char *s, double *out)
{
    errno = 0;
    *out = strtod(s, NULL);
    return !(errno == ERANGE && isinf(*out));
}

static bool leap(long y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

/* go-yaml's parseTimestamp: YYYY-M-D, then optionally [Tt]H:M:S[.frac] with a
 * zone (Z or +hh:mm), or " H:M:S[.frac]" without one, each field in range. */
static bool go_timestamp(const char *s)
{
    static const char date[] = "^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}";
    static const char frac[] = "(\\.[0-9]+)?";
    char with_zone[200], no_zone[200], date_only[64];
    snprintf(date_only, sizeof(date_only), "%s$", date);
    snprintf(with_zone, sizeof(with_zone), "%s[Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}%s(Z|[-+][0-9]{2}:[0-9]{2})$", date, frac);
    snprintf(no_zone, sizeof(no_zone), "%s [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}%s$", date, frac);
    if (!matches(date_only, s) && !matches(with_zone, s) && !matches(no_zone, s))
        return false;
    long y = strtol(s, NULL, 10), m = strtol(s + 5, NULL, 10), d = strtol(strchr(s + 5, '-') + 1, NULL, 10);
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || d < 1 || d > days[m - 1] + (m == 2 && leap(y)))
        return false;
    const char *t = s + strcspn(s, "Tt ");
    if (!*t)
        return true;
    long hh = strtol(t + 1, NULL, 10), mm = strtol(strchr(t, ':') + 1, NULL, 10),
         ss = strtol(strchr(strchr(t, ':') + 1, ':') + 1, NULL, 10);
    const char *zone = strpbrk(t + 1, "Z+-");
    if (zone && *zone != 'Z' && (strtol(zone + 1, NULL, 10) > 23 || strtol(zone + 4, NULL, 10) > 59))
        return false; /* time.Parse: a zone out of range */
    return hh <= 23 && mm <= 59 && ss <= 59;
}

kjoin_yaml_kind kjoin_yaml__resolve(const char *v, kjoin_yaml_value *value)
{
    static const struct {
        const char *word;
        kjoin_yaml_kind kind;
        bool truth;
    } words[] = {
        {"y", KJOIN_YAML_BOOL, true},      {"Y", KJOIN_YAML_BOOL, true},       {"yes", KJOIN_YAML_BOOL, true},
        {"Yes", KJOIN_YAML_BOOL, true},    {"YES", KJOIN_YAML_BOOL, true},     {"true", KJOIN_YAML_BOOL, true},
        {"True", KJOIN_YAML_BOOL, true},   {"TRUE", KJOIN_YAML_BOOL, true},    {"on", KJOIN_YAML_BOOL, true},
        {"On", KJOIN_YAML_BOOL, true},     {"ON", KJOIN_YAML_BOOL, true},      {"n", KJOIN_YAML_BOOL, false},
        {"N", KJOIN_YAML_BOOL, false},     {"no", KJOIN_YAML_BOOL, false},     {"No", KJOIN_YAML_BOOL, false},
        {"NO", KJOIN_YAML_BOOL, false},    {"false", KJOIN_YAML_BOOL, false},  {"False", KJOIN_YAML_BOOL, false},
        {"FALSE", KJOIN_YAML_BOOL, false}, {"off", KJOIN_YAML_BOOL, false},    {"Off", KJOIN_YAML_BOOL, false},
        {"OFF", KJOIN_YAML_BOOL, false},   {"~", KJOIN_YAML_NULL, false},      {"null", KJOIN_YAML_NULL, false},
        {"Null", KJOIN_YAML_NULL, false},  {"NULL", KJOIN_YAML_NULL, false},   {".nan", KJOIN_YAML_INF_NAN, false},
        {".NaN", KJOIN_YAML_INF_NAN, false}, {".NAN", KJOIN_YAML_INF_NAN, false}, {".inf", KJOIN_YAML_INF_NAN, false},
        {".Inf", KJOIN_YAML_INF_NAN, false}, {".INF", KJOIN_YAML_INF_NAN, false}, {"+.inf", KJOIN_YAML_INF_NAN, false},
        {"+.Inf", KJOIN_YAML_INF_NAN, false}, {"+.INF", KJOIN_YAML_INF_NAN, false}, {"-.inf", KJOIN_YAML_INF_NAN, false},
        {"-.Inf", KJOIN_YAML_INF_NAN, false}, {"-.INF", KJOIN_YAML_INF_NAN, false},
    };
    kjoin_yaml_value ignored;
    kjoin_yaml_value *out = value ? value : &ignored;
    char c = v[0];
    memset(out, 0, sizeof(*out));
    if (!c)
        return KJOIN_YAML_NULL;
    bool numeric = (c >= '0' && c <= '9') || c == '+' || c == '-';
    /* base-60 floats: the encoder quotes them, whatever the resolver says */
    if (numeric && strchr(v, ':') && matches("^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\\.[0-9_]*)?$", v))
        return KJOIN_YAML_BASE60;
    if (!strchr("yYnNtTfFoO~.", c) && !numeric)
        return KJOIN_YAML_STRING; /* the resolver looks only at these starts */
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (!strcmp(v, words[i].word)) {
            out->truth = words[i].truth;
            return words[i].kind;
        }
    if (c == '.')
        return matches("^\\.[0-9]+([eE][-+]?[0-9]+)?$", v) && go_float(v, &out->d) ? KJOIN_YAML_FLOAT
                                                                                 : KJOIN_YAML_STRING;
    if (!numeric)
        return KJOIN_YAML_STRING;
    if (go_timestamp(v))
        return KJOIN_YAML_TIMESTAMP;
    /* resolve.go strips "_" before it parses a number */
    char plain[1024];
    size_t o = 0;
    if (strlen(v) >= sizeof(plain))
        return KJOIN_YAML_STRING; /* longer than any number */
    for (const char *p = v; *p; p++)
        if (*p != '_')
            plain[o++] = *p;
    plain[o] = '\0';
    if (go_int(plain, &out->magnitude, &out->negative))
        return KJOIN_YAML_INT;
    return matches("^[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?$", plain) && go_float(plain, &out->d)
               ? KJOIN_YAML_FLOAT
               : KJOIN_YAML_STRING;
}
