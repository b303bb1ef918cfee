#include <arpa/inet.h>
#include <stddef.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <kjoin/private/discovery.h>

/* RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens. */
static bool valid_hostname(const char *h, size_t n)
{
    if (n == 0 || n > 253)
        return false;
    size_t label = 0;
    for (size_t i = 0; i < n; i++) {
        char c = h[i];
        if (c == '.') {
            if (label == 0 || h[i - 1] == '-')
                return false;
            label = 0;
        } else if (isalnum((unsigned char)c) || (c == '-' && label > 0)) {
            if (++label > 63)
                return false;
        } else {
            return false;
        }
    }
    return label > 0 && h[n - 1] != '-';
}

/* Whether a "::" in s follows a long run of letters and digits, as in a
 * K3s token (K10<CA hash>::user:password), not an IPv6 address's group of
 * at most four hex digits. */
static bool k3s_token_like(const char *s)
{
    for (const char *p = strstr(s, "::"); p; p = strstr(p + 1, "::")) {
        size_t run = 0;
        while (p - run > s && isalnum((unsigned char)p[-(ptrdiff_t)run - 1]))
            run++;
        if (run > 4)
            return true;
    }
    return false;
}

/* Whether text an error would echo may carry a secret: userinfo, a K3s
 * token's "::", or a run shaped like a bootstrap token. */
static bool may_hold_secret(const char *s)
{
    if (strchr(s, '@') || k3s_token_like(s) || strlen(s) > 200)
        return true;
    for (const char *dot = strchr(s, '.'); dot; dot = strchr(dot + 1, '.')) {
        size_t before = 0, after = 0;
        while (dot - before > s && isalnum((unsigned char)dot[-(ptrdiff_t)before - 1]))
            before++;
        while (isalnum((unsigned char)dot[after + 1]))
            after++;
        if (before >= 6 && after >= 16)
            return true;
    }
    return false;
}

kjoin_code kjoin_endpoint_parse(const char *s, kjoin_endpoint *out, kjoin_err *err)
{
    static const char form[] = "expected host:port, ipv4:port or [ipv6]:port, optionally after https://";
    /* An endpoint is echoed in errors unless it may hold a secret (a token
     * pasted in the wrong place). */
    const char *orig = may_hold_secret(s) ? "<not shown: it may hold a secret>" : s;
    if (strncasecmp(s, "https://", 8) == 0)
        s += 8;
    else if (strstr(s, "://"))
        return kjoin_err_set(err, KJOIN_E_USAGE, "invalid endpoint \"%s\": only https:// is allowed", orig);
    size_t len = strlen(s);
    if (len && s[len - 1] == '/')
        len--;
    if (memchr(s, '/', len) || memchr(s, '?', len) || memchr(s, '#', len))
        return kjoin_err_set(err, KJOIN_E_USAGE, "invalid endpoint \"%s\": a path is not allowed; %s", orig, form);

    const char *host, *colon;
    size_t host_len;
    if (len && s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (!close || close + 1 >= s + len || close[1] != ':')
            return kjoin_err_set(err, KJOIN_E_USAGE, "invalid endpoint \"%s\": %s", orig, form);
        host = s + 1;
        host_len = (size_t)(close - host);
        colon = close + 1;
    } else {
        colon = NULL;
        for (const char *p = s; p < s + len; p++)
            if (*p == ':') {
                if (colon)
                    return kjoin_err_set(err, KJOIN_E_USAGE,
                                         "invalid endpoint \"%s\": IPv6 addresses must be in brackets, as [::1]:6443",
                                         orig);
                colon = p;
            }
        if (!colon)
            return kjoin_err_set(err, KJOIN_E_USAGE, "invalid endpoint \"%s\": missing port; %s", orig, form);
        host = s;
        host_len = (size_t)(colon - s);
    }
    const char *port_s = colon + 1;
    size_t port_len = (size_t)(s + len - port_s);
    unsigned long port = 0;
    for (size_t i = 0; i < port_len && port <= 65535; i++) {
        if (!isdigit((unsigned char)port_s[i]))
            return kjoin_err_set(err, KJOIN_E_USAGE, "invalid endpoint \"%s\": bad port", orig);
        port = port * 10 + (unsigned long)(port_s[i] - '0');
    }
    if (port_len == 0 || port_len > 5 || port == 0 || port > 65535)
        return kjoin_err_set(err, KJOIN_E_USAGE, "invalid endpoint \"%s\": port must be 1-65535", orig);
    if (host_len == 0 || host_len >= sizeof(out->host))
        return kjoin_err_set(err, KJOIN_E_USAGE, "invalid endpoint \"%s\": %s", orig, form);

    kjoin_endpoint ep = {.port = (unsigned)port};
    memcpy(ep.host, host, host_len);
    unsigned char addr[16];
    bool v6 = host > s && host[-1] == '[';
    if (v6 ? inet_pton(AF_INET6, ep.host, addr) != 1
           : inet_pton(AF_INET, ep.host, addr) != 1 && !valid_hostname(ep.host, host_len))
        return kjoin_err_set(err, KJOIN_E_USAGE, "invalid endpoint \"%s\": \"%s\" is not a valid %s", orig,
                             ep.host, v6 ? "IPv6 address" : "host name or IPv4 address");
    snprintf(ep.authority, sizeof(ep.authority), v6 ? "[%s]:%u" : "%s:%u", ep.host, ep.port);
    *out = ep;
    return KJOIN_OK;
}
