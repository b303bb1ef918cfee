/* What a container runtime sends over its CRI socket: a gRPC answer's
 * header and trailer lines (grpc-status and grpc-message: the message stays
 * printable and within its field), and its answers' bytes, read as the
 * gRPC frame, an ImageStatusResponse, a StatusResponse and the config JSON
 * (a sandbox image printable, without spaces or quotes). */
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
    const unsigned char *msg = data;
    size_t msg_len = size;
    kjoin_err err;
    if (kjoin_cri_message(data, size, &msg, &msg_len, &err)) /* framed or not, both read */
        msg = data, msg_len = size;
    char image[256];
    kjoin_cri_image_status_present(msg, msg_len);
    if (kjoin_cri_status_sandbox_image(msg, msg_len, image, sizeof(image)) && strpbrk(image, " \t\"'"))
        abort();
    if (kjoin_cri_config_sandbox_image((const char *)data, size, image, sizeof(image)) && strlen(image) >= sizeof(image))
        abort();
    return 0;
}
