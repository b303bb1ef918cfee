/* The address a new control-plane node advertises, when not told: the one
 * its routes use towards the cluster's API server, which the other members
 * can reach it at (kubeadm takes the default route's instead, which on a
 * machine with a public and a private network is often the wrong one). */
#include <kjoin/private/controlplane.h>
#include <kjoin/private/util.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Whether a and b are the same IP address, however spelled. */
static bool same_ip(const char *a, const char *b)
{
    unsigned char x[16], y[16];
    int af = strchr(a, ':') ? AF_INET6 : AF_INET;
    return (strchr(b, ':') ? AF_INET6 : AF_INET) == af && inet_pton(af, a, x) == 1 && inet_pton(af, b, y) == 1 &&
           !memcmp(x, y, af == AF_INET ? 4 : 16);
}

kjoin_code kjoin_local_address_for(const char *server, char *out, size_t cap, kjoin_err *err)
{
    char host[256], port[8] = "443";
    const char *p = server && !strncmp(server, "https://", 8) ? server + 8 : NULL;
    size_t len = !p ? 0 : p[0] == '[' ? strcspn(p, "]") : strcspn(p, ":/");
    if (!p || !len || len >= sizeof(host) || (p[0] == '[' && p[len] != ']'))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the API server's URL has no host");
    snprintf(host, sizeof(host), "%.*s", (int)(p[0] == '[' ? len - 1 : len), p + (p[0] == '['));
    const char *rest = p + len + (p[0] == '[');
    if (*rest == ':')
        snprintf(port, sizeof(port), "%.*s", (int)strcspn(rest + 1, "/"), rest + 1);
    struct addrinfo hints = {.ai_socktype = SOCK_DGRAM}, *ai = NULL;
    if (getaddrinfo(host, port, &hints, &ai) != 0 || !ai)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the API server's host \"%s\" does not resolve", host);
    /* A datagram socket's connect asks the routes, and sends nothing. */
    int fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_storage local;
    socklen_t local_len = sizeof(local);
    bool ok = fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
              getsockname(fd, (struct sockaddr *)&local, &local_len) == 0 &&
              getnameinfo((struct sockaddr *)&local, local_len, out, (socklen_t)cap, NULL, 0, NI_NUMERICHOST) == 0;
    if (fd >= 0)
        close(fd);
    if (!ok) {
        freeaddrinfo(ai);
        return kjoin_err_set(err, KJOIN_E_USAGE, "no route from this machine to the API server at %s", host);
    }
    char *scope = strchr(out, '%'); /* a link-local address's interface: not part of an IP SAN */
    if (scope)
        *scope = '\0';
    /* A per-node load balancer on loopback, or a VIP this machine holds:
     * the route is this machine itself, and its address is no place the
     * other members can reach this node at. */
    char server_addr[64] = "";
    if (getnameinfo(ai->ai_addr, ai->ai_addrlen, server_addr, sizeof(server_addr), NULL, 0, NI_NUMERICHOST) == 0 &&
        (scope = strchr(server_addr, '%')))
        *scope = '\0';
    bool itself = kjoin_is_loopback(out) || same_ip(server_addr, out);
    freeaddrinfo(ai);
    if (itself)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the API server at %s is reached through this machine itself (%s %s): "
                             "the address other members reach this node at cannot be told from it; give the "
                             "advertise address", host, kjoin_is_loopback(out) ? "loopback," : "its own address",
                             out);
    return KJOIN_OK;
}

kjoin_code kjoin_advertise_address_check(const char *addr, char *why, size_t cap)
{
    if (!kjoin_is_ip(addr))
        return snprintf(why, cap, "%.64s is not an IP address", addr), KJOIN_E_USAGE;
    if (kjoin_is_loopback(addr))
        return snprintf(why, cap, "%s is a loopback address: no other member can reach this node there", addr),
               KJOIN_E_USAGE;
    bool on_interface = kjoin_is_local_address(addr);
    if (!on_interface)
        return snprintf(why, cap, "%s is on none of this machine's interfaces: the API server and etcd could not "
                        "listen there", addr), KJOIN_E_USAGE;
    return KJOIN_OK;
}
