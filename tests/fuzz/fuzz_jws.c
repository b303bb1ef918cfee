/* A detached JWS and its content, split at the first newline. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include <kjoin/private/jws.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    if (!s)
        return 0;
    char *content = strchr(s, '\n');
    size_t content_len = 0;
    if (content) {
        *content++ = '\0';
        content_len = size - (size_t)(content - s);
    } else {
        content = s + size;
    }
    kjoin_jws_verify(s, content, content_len, "joshua", "my voice is my passcode", 23, NULL);
    free(s);
    return 0;
}
