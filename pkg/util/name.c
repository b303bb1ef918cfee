/* Names the API server checks: a DNS-1123 subdomain (Node, Secret and
 * most object names), and the node's name as kubeadm decides it. One rule
 * for every module, so that a name passes here exactly when the API server
 * would take it. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>

#include <kjoin/private/util.h>

bool kjoin_clean_path(const char *p)
{
    if (p[0] != '/' || !p[1])
        return false;
    for (const char *c = p + 1; *c;) {
        size_t len = strcspn(c, "/");
        if (!len || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        c += len;
        if (*c == '/' && !*++c)
            return false;
    }
    return true;
}

bool kjoin_path_clean(const char *p, char *out, size_t cap)
{
    size_t n = 0;
    if (!p || p[0] != '/' || cap < 2)
        return false;
    for (const char *c = p; *(c += strspn(c, "/"));) {
        size_t len = strcspn(c, "/");
        if (len == 2 && c[0] == '.' && c[1] == '.')
            return false;
        if (!(len == 1 && c[0] == '.')) {
            if (n + 1 + len >= cap)
                return false;
            out[n++] = '/';
            memcpy(out + n, c, len);
            n += len;
        }
        c += len;
    }
    out[n] = '\0';
    return n > 0;
}

bool kjoin_is_ip(const char *s)
{
    unsigned char a[16];
    return inet_pton(AF_INET, s, a) == 1 || inet_pton(AF_INET6, s, a) == 1;
}

bool kjoin_is_loopback(const char *s)
{
    unsigned char a[16];
    static const unsigned char v6_loopback[16] = {[15] = 1}, v4_mapped[12] = {[10] = 0xff, [11] = 0xff};
    if (inet_pton(AF_INET, s, a) == 1)
        return a[0] == 127;
    return inet_pton(AF_INET6, s, a) == 1 &&
           (!memcmp(a, v6_loopback, 16) || (!memcmp(a, v4_mapped, 12) && a[12] == 127));
}

bool kjoin_is_local_address(const char *ip)
{
    unsigned char want[16], have[16];
    int af = strchr(ip, ':') ? AF_INET6 : AF_INET;
    if (inet_pton(af, ip, want) != 1)
        return false;
    if (kjoin_is_loopback(ip))
        return true;
    struct ifaddrs *all = NULL;
    bool found = false;
    if (getifaddrs(&all) != 0)
        return false;
    for (struct ifaddrs *i = all; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != af)
            continue;
        if (af == AF_INET)
            memcpy(have, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, 4);
        else
            memcpy(have, &((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr, 16);
        found = !memcmp(want, have, af == AF_INET ? 4 : 16);
    }
    freeifaddrs(all);
    return found;
}

bool kjoin_url_host(const char *url, char *out, size_t cap, bool *userinfo)
{
    bool ok = false, user = false;
    char *host = NULL, *name = NULL, *password = NULL;
    CURLU *u = curl_url();
    if (cap)
        out[0] = '\0';
    /* libcurl's own parse: the host is the one a request would reach. */
    if (u && url && curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
        /* ("https://:secret@host" has a password and no user name: userinfo too) */
        user = curl_url_get(u, CURLUPART_USER, &name, 0) == CURLUE_OK ||
               curl_url_get(u, CURLUPART_PASSWORD, &password, 0) == CURLUE_OK;
        size_t n = strlen(host);
        bool bracketed = n >= 2 && host[0] == '[' && host[n - 1] == ']';
        ok = n - (bracketed ? 2 : 0) < cap;
        if (ok)
            snprintf(out, cap, "%.*s", (int)(bracketed ? n - 2 : n), host + bracketed);
    }
    if (ok && userinfo)
        *userinfo = user;
    curl_free(password);
    curl_free(name);
    curl_free(host);
    curl_url_cleanup(u);
    return ok;
}

bool kjoin_url_is_local(const char *url)
{
    char host[256];
    return kjoin_url_host(url, host, sizeof(host), NULL) && (!strcasecmp(host, "localhost") || kjoin_is_local_address(host));
}

kjoin_code kjoin_url_server_check(const char *url, const char *what, kjoin_err *err)
{
    char *scheme = NULL, *path = NULL, *query = NULL, *fragment = NULL;
    char host[256];
    bool userinfo = false;
    CURLU *u = curl_url();
    bool parsed = u && strlen(url) < KJOIN_SERVER_URL_MAX &&
                  curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK &&
                  curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK;
    bool https = parsed && !strcasecmp(scheme, "https") && !strncasecmp(url, "https://", 8);
    bool bare = parsed && curl_url_get(u, CURLUPART_QUERY, &query, 0) != CURLUE_OK &&
                curl_url_get(u, CURLUPART_FRAGMENT, &fragment, 0) != CURLUE_OK &&
                (curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK || !strcmp(path, "/"));
    curl_free(scheme);
    curl_free(path);
    curl_free(query);
    curl_free(fragment);
    curl_url_cleanup(u);
    if (!https)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s \"%.100s\" is no https:// URL", what, url);
    if (!kjoin_url_host(url, host, sizeof(host), &userinfo) || !*host || userinfo)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s \"%.100s\" names no host, or a user name or password", what, url);
    if (!bare)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s \"%.100s\" has a path, query or fragment: a server is "
                                                 "https://HOST[:PORT]",
                             what, url);
    return KJOIN_OK;
}

/* Whether NO_PROXY's list excludes host (libcurl's rule: "*", a host, a
 * domain suffix, with or without its leading dot; case apart). */
static bool no_proxy_lists(const char *list, const char *host)
{
    size_t hn = strlen(host);
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ", ");
        const char *e = p;
        size_t el = len;
        if (el && *e == '.')
            e++, el--;
        if ((len == 1 && *p == '*') ||
            (el && el <= hn && !strncasecmp(host + hn - el, e, el) && (el == hn || host[hn - el - 1] == '.')))
            return true;
        p += len;
        p += strspn(p, ", ");
    }
    return false;
}

bool kjoin_proxy_for(const char *host, char *proxy, size_t cap)
{
    static const char *const vars[] = {"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"};
    const char *found = NULL, *no = getenv("no_proxy");
    if (!host || !strcasecmp(host, "localhost") || kjoin_is_local_address(host))
        return false;
    for (size_t i = 0; !found && i < sizeof(vars) / sizeof(vars[0]); i++)
        if (getenv(vars[i]) && *getenv(vars[i]))
            found = getenv(vars[i]);
    if (!no || !*no)
        no = getenv("NO_PROXY");
    if (!found || no_proxy_lists(no, host))
        return false;
    snprintf(proxy, cap, "%s", found);
    return true;
}

static bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

/* k8s.io/apimachinery IsDNS1123Subdomain: at most 253 characters, dot-
 * separated labels of lower-case letters, digits and '-', each starting and
 * ending with a letter or digit. */
kjoin_code kjoin_dns_subdomain_check(const char *s, kjoin_err *err)
{
    size_t n = strlen(s);
    if (!n)
        return kjoin_err_set(err, KJOIN_E_USAGE, "it is empty");
    if (n > KJOIN_DNS_SUBDOMAIN_MAX)
        return kjoin_err_set(err, KJOIN_E_USAGE, "it has %zu characters: at most %d", n, KJOIN_DNS_SUBDOMAIN_MAX);
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool starts = i == 0 || s[i - 1] == '.', ends = i + 1 == n || s[i + 1] == '.';
        if (c == '.' && (starts || i + 1 == n))
            return kjoin_err_set(err, KJOIN_E_USAGE, "it has an empty label at character %zu: labels are separated "
                                 "by single dots", i + 1);
        if (c == '.')
            continue;
        if (c >= 'A' && c <= 'Z')
            return kjoin_err_set(err, KJOIN_E_USAGE, "it has an upper-case letter at character %zu: names are "
                                 "lower case", i + 1);
        if (!alnum(c) && c != '-')
            return kjoin_err_set(err, KJOIN_E_USAGE, "character %zu is not a lower-case letter, a digit, '-' or "
                                 "'.'", i + 1);
        if (c == '-' && (starts || ends))
            return kjoin_err_set(err, KJOIN_E_USAGE, "a label %s with '-' at character %zu: each label starts and "
                                 "ends with a letter or digit", starts ? "starts" : "ends", i + 1);
    }
    return KJOIN_OK;
}

bool kjoin_dns_subdomain_valid(const char *s)
{
    return kjoin_dns_subdomain_check(s, NULL) == KJOIN_OK;
}

/* kubeadm's GetHostname: white space trimmed, lower-cased. false when it
 * does not fit (the caller refuses it by its length). */
static bool kubeadm_form(const char *in, char *out, size_t cap)
{
    size_t start = strspn(in, " \t\r\n"), n = strlen(in + start);
    while (n && strchr(" \t\r\n", in[start + n - 1]))
        n--;
    if (n >= cap)
        return false;
    memcpy(out, in + start, n);
    out[n] = '\0';
    for (char *c = out; *c; c++)
        *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    return true;
}

kjoin_code kjoin_node_name_resolve(const char *given, const char *host, kjoin_node_name *out, kjoin_err *err)
{
    char raw[256] = "", host_name[sizeof(out->name)] = "";
    kjoin_node_name r = {0};
    kjoin_err in;
    if (!host) {
        if (gethostname(raw, sizeof(raw) - 1) != 0 && !given)
            return kjoin_err_set(err, KJOIN_E_OTHER, "cannot read the host name: %s", strerror(errno));
        host = raw;
    }
    bool host_fits = kubeadm_form(host, host_name, sizeof(host_name));
    const char *what = given ? "`node_name`" : "the host name";
    if (!kubeadm_form(given ? given : host, r.name, sizeof(r.name)))
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s has %zu characters: a node name has at most %d%s", what,
                             strlen(given ? given : host), KJOIN_DNS_SUBDOMAIN_MAX, given ? "" : ": set `node_name`");
    if (kjoin_dns_subdomain_check(r.name, &in))
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s \"%.253s\" is not a valid node name: %s%s", what, r.name, in.msg,
                             given ? "" : "; set `node_name`");
    r.is_host_name = host_fits && strcmp(r.name, host_name) == 0;
    *out = r;
    return KJOIN_OK;
}
