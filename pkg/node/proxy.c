/* A node behind a proxy: systemd drop-ins that give the kubelet and
 * containerd the proxy, and a NO_PROXY of the cluster's own addresses
 * (kubespray's and KubeOne's list, computed at the join from the cluster's
 * ClusterConfiguration), so that image pulls go out through the proxy and
 * nothing of the cluster does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include <kjoin/private/util.h>

#include "internal.h"

kjoin_code kjoin_node__proxy_check(const char *proxy, kjoin_err *err)
{
    char *scheme = NULL, *path = NULL, *query = NULL, host[256];
    CURLU *u = curl_url();
    bool parsed = u && strlen(proxy) < 1024 &&
                  curl_url_set(u, CURLUPART_URL, proxy, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK &&
                  curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK;
    bool scheme_ok = parsed && (!strcasecmp(scheme, "http") || !strcasecmp(scheme, "https")) && strstr(proxy, "://");
    bool bare = parsed && curl_url_get(u, CURLUPART_QUERY, &query, 0) != CURLUE_OK &&
                (curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK || !strcmp(path, "/"));
    curl_free(scheme);
    curl_free(path);
    curl_free(query);
    curl_url_cleanup(u);
    char shown[300];
    kjoin_url_redact(proxy, shown, sizeof(shown));
    if (!scheme_ok || !kjoin_url_host(proxy, host, sizeof(host), NULL) || !*host)
        return kjoin_err_set(err, KJOIN_E_USAGE, "`proxy` \"%.200s\" is no http:// or https:// URL with a host", shown);
    if (!bare)
        return kjoin_err_set(err, KJOIN_E_USAGE, "`proxy` \"%.200s\" has a path or query: a proxy is "
                                                 "http://HOST:PORT", shown);
    for (const unsigned char *c = (const unsigned char *)proxy; *c; c++)
        if (*c <= ' ' || *c == '"' || *c == '\\' || *c == '\'' || *c == 0x7f)
            return kjoin_err_set(err, KJOIN_E_USAGE, "`proxy` \"%.200s\" has a space, quote or control character",
                                 shown);
    return KJOIN_OK;
}

/* One NO_PROXY entry, once; false when it does not fit. */
static bool add(char *out, size_t cap, const char *entry, size_t len)
{
    while (len && (*entry == ' ' || *entry == '\t'))
        entry++, len--;
    while (len && (entry[len - 1] == ' ' || entry[len - 1] == '\t'))
        len--;
    if (!len)
        return true;
    for (const char *p = out; *p;) { /* each once */
        size_t n = strcspn(p, ",");
        if (n == len && !strncasecmp(p, entry, len))
            return true;
        p += n + (p[n] == ',');
    }
    size_t used = strlen(out);
    if (used + len + 2 > cap)
        return false;
    snprintf(out + used, cap - used, "%s%.*s", used ? "," : "", (int)len, entry);
    return true;
}

/* Each entry of a comma-separated list. */
static bool add_list(char *out, size_t cap, const char *list)
{
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, ",");
        if (!add(out, cap, p, n))
            return false;
        p += n + (p[n] == ',');
    }
    return true;
}

kjoin_code kjoin_node__no_proxy(const kjoin_node__no_proxy_in *in, char *out, size_t cap, kjoin_err *err)
{
    char domain[300];
    const char *dns = in->dns_domain && *in->dns_domain ? in->dns_domain : "cluster.local";
    snprintf(domain, sizeof(domain), ".%s", dns);
    *out = '\0';
    /* (link-local: a cloud's metadata service, which cadvisor asks, is never behind a proxy) */
    bool ok = add_list(out, cap, "localhost,127.0.0.1,::1,169.254.0.0/16,.svc") && add(out, cap, domain, strlen(domain)) &&
              add_list(out, cap, in->service_subnet) && add_list(out, cap, in->pod_subnet);
    for (size_t i = 0; ok && i < in->n_hosts; i++)
        ok = !in->hosts[i] || add(out, cap, in->hosts[i], strlen(in->hosts[i]));
    ok = ok && add_list(out, cap, in->extra);
    if (!ok) {
        *out = '\0';
        return kjoin_err_set(err, KJOIN_E_USAGE, "NO_PROXY would be longer than %zu characters", cap - 1);
    }
    for (const unsigned char *c = (const unsigned char *)out; *c; c++)
        if (*c < ' ' || *c == '"' || *c == '\\' || *c == '\'' || *c == ' ' || *c == 0x7f) {
            *out = '\0';
            return kjoin_err_set(err, KJOIN_E_USAGE, "a NO_PROXY entry has a space, quote or control character");
        }
    return KJOIN_OK;
}

/* value with systemd's specifier character doubled ("%" is "%%" in
 * Environment=), into out. */
static bool unspecified(const char *value, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *c = value; *c; c++) {
        if (o + 3 > cap)
            return false;
        out[o++] = *c;
        if (*c == '%')
            out[o++] = '%';
    }
    out[o] = '\0';
    return true;
}

kjoin_code kjoin_node__proxy_dropin(const char *unit, const char *proxy, const char *no_proxy, char **out,
                                    kjoin_err *err)
{
    char p[2100], np[4200];
    *out = NULL;
    if (!unspecified(proxy, p, sizeof(p)) || !unspecified(no_proxy, np, sizeof(np)))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the proxy or NO_PROXY is too long for a drop-in");
    size_t cap = strlen(p) * 2 + strlen(np) + 512;
    char *text = malloc(cap);
    if (!text)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    snprintf(text, cap,
             "# Written by kjoin join (a proxy): %s's requests go through it, the cluster's own addresses past it.\n"
             "# kjoin reset removes this file.\n"
             "[Service]\n"
             "Environment=\"HTTP_PROXY=%s\"\n"
             "Environment=\"HTTPS_PROXY=%s\"\n"
             "Environment=\"NO_PROXY=%s\"\n",
             unit, p, p, np);
    *out = text;
    return KJOIN_OK;
}
