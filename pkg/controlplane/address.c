/* The address a new control-plane node advertises, when not told: the one
 * its routes use towards the cluster's API server, which the other members
 * can reach it at (kubeadm takes the default route's instead, which on a
 * machine with a public and a private network is often the wrong one). */
#include <kjoin/controlplane.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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
    freeaddrinfo(ai);
    if (!ok)
        return kjoin_err_set(err, KJOIN_E_USAGE, "no route from this machine to the API server at %s", host);
    char *scope = strchr(out, '%'); /* a link-local address's interface: not part of an IP SAN */
    if (scope)
        *scope = '\0';
    return KJOIN_OK;
}
