/* Prints a TCP port that is free on the given loopback address
 * (default 127.0.0.1), so tests can start servers without collisions. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *addr = argc > 1 ? argv[1] : "127.0.0.1";
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    socklen_t len;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        len = sizeof(*v4);
    } else if (inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        len = sizeof(*v6);
    } else {
        fprintf(stderr, "freeport: bad address %s\n", addr);
        return 2;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) != 0 ||
        getsockname(fd, (struct sockaddr *)&ss, &len) != 0) {
        perror("freeport");
        return 1;
    }
    printf("%u\n", ntohs(ss.ss_family == AF_INET ? v4->sin_port : v6->sin6_port));
    close(fd);
    return 0;
}
