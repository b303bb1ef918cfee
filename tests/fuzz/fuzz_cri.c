/* A gRPC answer's header and trailer lines as a container runtime sends
 * them over its CRI socket: each line read for grpc-status and
 * grpc-message; the message stays printable and within its field. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include <kjoin/private/cri.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kjoin_cri_answer a = {.grpc_status = -1};
    const char *p = (const char *)data, *end = p + size;
    while (p < end) { /* line by line, as libcurl hands them over */
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        kjoin_cri_header_line(p, len, &a);
        p += len;
    }
    if (a.grpc_status < -1 || a.grpc_status > 999 || strlen(a.message) >= sizeof(a.message))
        abort();
    for (const unsigned char *c = (const unsigned char *)a.message; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            abort();
    return 0;
}
