/* Reading a token from a file (--token-file): any bytes, any length; the
 * whole-file reading K3s uses, whose result must carry no surrounding white
 * space, then parsed as a K3s token. */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

#include <kjoin/private/token.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("token", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) == (ssize_t)size) {
        char path[64], line[600];
        kjoin_token t;
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        kjoin_token_read_line(path, line, sizeof(line), NULL);
        kjoin_token_read_file(path, &t, NULL);
        static char text[2200];
        if (kjoin_token_read_text(path, text, sizeof(text), NULL) == KJOIN_OK) {
            size_t n = strlen(text);
            if (n && (strchr(" \t\r\n\v\f", text[0]) || strchr(" \t\r\n\v\f", text[n - 1])))
                abort();
            kjoin_k3s_token k;
            kjoin_k3s_token_parse(text, &k, NULL);
        }
    }
    close(fd);
    return 0;
}
