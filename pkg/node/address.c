/* The kubelet's node-ip on a dual-stack cluster, as K3s decides it: the
 * addresses of each family on the interface of that family's default
 * route, the cluster's primary family first. A single-stack cluster or
 * node keeps kubeadm's files (the kubelet's own choice). */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The family of an address or a CIDR's address part: AF_INET, AF_INET6 or 0. */
static int family_of(const char *text, size_t len)
{
    char buf[INET6_ADDRSTRLEN];
    unsigned char bin[sizeof(struct in6_addr)];
    size_t n = strcspn(text, "/");
    if (n > len)
        n = len;
    if (n >= sizeof(buf))
        return 0;
    memcpy(buf, text, n);
    buf[n] = '\0';
    return inet_pton(AF_INET, buf, bin) == 1 ? AF_INET : inet_pton(AF_INET6, buf, bin) == 1 ? AF_INET6 : 0;
}

/* Which families a comma-separated list of CIDRs holds (bit 1: IPv4, bit 2:
 * IPv6), and the first one's into *first. */
static unsigned families(const char *list, int *first)
{
    unsigned seen = 0;
    *first = 0;
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ",");
        int f = family_of(p, len);
        if (f && !*first)
            *first = f;
        seen |= f == AF_INET ? 1u : f == AF_INET6 ? 2u : 0u;
        p += len + (p[len] == ',');
    }
    return seen;
}

bool kjoin_node__dual_stack_cluster(const char *service_subnet, const char *pod_subnet)
{
    int first;
    /* kubeadm's dual-stack: both families among the Services' CIDRs, and among the Pods' when set */
    return families(service_subnet, &first) == 3 && (!pod_subnet || !*pod_subnet || families(pod_subnet, &first) == 3);
}

bool kjoin_node__dual_stack_ip(const char *service_subnet, const char *pod_subnet, const char *v4, const char *v6,
                               char *out, size_t cap)
{
    int primary;
    *out = '\0';
    if (!kjoin_node__dual_stack_cluster(service_subnet, pod_subnet))
        return false;
    families(service_subnet, &primary);
    if (!v4 || !*v4 || !v6 || !*v6)
        return false;
    const char *a = primary == AF_INET6 ? v6 : v4, *b = primary == AF_INET6 ? v4 : v6;
    return (size_t)snprintf(out, cap, "%s,%s", a, b) < cap || (*out = '\0', false);
}

kjoin_code kjoin_node__node_ip_check(const char *value, kjoin_err *err)
{
    size_t n = 0;
    unsigned seen = 0;
    for (const char *p = value; p;) {
        size_t len = strcspn(p, ",");
        int f = family_of(p, len);
        if (!f || memchr(p, '/', len))
            return kjoin_err_set(err, KJOIN_E_USAGE, "`node_ip` \"%.100s\": \"%.*s\" is no IP address", value,
                                 (int)(len > 64 ? 64 : len), p);
        if (seen & (f == AF_INET ? 1u : 2u))
            return kjoin_err_set(err, KJOIN_E_USAGE, "`node_ip` \"%.100s\" names two addresses of one family: "
                                                     "a dual-stack node has one of each", value);
        seen |= f == AF_INET ? 1u : 2u;
        n++;
        p = p[len] == ',' ? p + len + 1 : NULL;
    }
    return n ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_USAGE, "`node_ip` is empty");
}

/* The interface of the default route of /proc/net/route's text (IPv4) or
 * /proc/net/ipv6_route's (IPv6), the lowest metric's; false when there is
 * none. Rejecting routes (unreachable, prohibit) and the loopback's are no
 * way out. */
#define RTF_UP_ 0x0001u
#define RTF_REJECT_ 0x0200u
bool kjoin_node__default_route_if(const char *text, bool v6, char *ifname, size_t cap)
{
    unsigned long best = ~0ul;
    bool found = false;
    *ifname = '\0';
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[512], name[64], dest[40], mask[40], gw[40];
        unsigned flags = 0, plen = 0, refs, use;
        unsigned long metric = 0;
        bool dflt = false;
        if (len < sizeof(buf)) {
            memcpy(buf, line, len);
            buf[len] = '\0';
            if (v6)
                dflt = sscanf(buf, "%32s %x %*32s %*x %32s %lx %x %x %x %63s", dest, &plen, gw, &metric, &refs, &use,
                              &flags, name) == 8 &&
                       strspn(dest, "0") == 32 && plen == 0;
            else
                dflt = sscanf(buf, "%63s %39s %39s %x %*d %*d %lu %39s", name, dest, gw, &flags, &metric, mask) == 6 &&
                       !strcmp(dest, "00000000") && !strcmp(mask, "00000000");
        }
        if (dflt && (flags & RTF_UP_) && !(flags & RTF_REJECT_) && strcmp(name, "lo") && metric < best &&
            strlen(name) < cap) {
            best = metric;
            snprintf(ifname, cap, "%s", name);
            found = true;
        }
        line = end ? end + 1 : NULL;
    }
    return found;
}

/* The first address of family on interface ifname that is the node's to
 * name: not loopback, not link-local. */
static bool interface_address(const struct ifaddrs *all, const char *ifname, int family, char *out, size_t cap)
{
    for (const struct ifaddrs *a = all; a; a = a->ifa_next) {
        if (!a->ifa_addr || a->ifa_addr->sa_family != family || strcmp(a->ifa_name, ifname))
            continue;
        if (family == AF_INET) {
            const struct in_addr *in = &((const struct sockaddr_in *)(const void *)a->ifa_addr)->sin_addr;
            uint32_t h = ntohl(in->s_addr);
            if ((h >> 24) == 127 || (h >> 16) == 0xa9fe)
                continue;
            if (inet_ntop(AF_INET, in, out, (socklen_t)cap))
                return true;
        } else {
            const struct in6_addr *in = &((const struct sockaddr_in6 *)(const void *)a->ifa_addr)->sin6_addr;
            if (IN6_IS_ADDR_LOOPBACK(in) || IN6_IS_ADDR_LINKLOCAL(in))
                continue;
            if (inet_ntop(AF_INET6, in, out, (socklen_t)cap))
                return true;
        }
    }
    return false;
}

static char *read_small(const char *path)
{
    char *text = NULL;
    size_t len = 0;
    kjoin_err e;
    return kjoin_file_read(path, 1 << 20, &text, &len, &e) ? NULL : text;
}

void kjoin_node__default_route_addresses(const char *proc_dir, kjoin_node__addresses *out)
{
    char path[512];
    struct ifaddrs *all = NULL;
    memset(out, 0, sizeof(*out));
    const char *proc = proc_dir ? proc_dir : "/proc";
    if (getifaddrs(&all) != 0)
        return;
    for (int v6 = 0; v6 <= 1; v6++) {
        snprintf(path, sizeof(path), "%s/net/%s", proc, v6 ? "ipv6_route" : "route");
        char *text = read_small(path);
        char *ifname = v6 ? out->if6 : out->if4, *addr = v6 ? out->v6 : out->v4;
        if (text && kjoin_node__default_route_if(text, v6, ifname, sizeof(out->if4)) &&
            !interface_address(all, ifname, v6 ? AF_INET6 : AF_INET, addr, sizeof(out->v4)))
            *addr = '\0';
        free(text);
    }
    freeifaddrs(all);
}
