/* The HTTP body collector: the server chooses the bytes and libcurl the
 * sizes of the pieces; the cap must hold and nothing may be lost. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include "../../pkg/transport/body.h"

static void count(const char *data, size_t len, void *ctx)
{
    (void)data;
    *(size_t *)ctx += len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    /* The first bytes choose the cap and the piece size; the rest is the body. */
    size_t max = ((size_t)data[0] << 12 | (size_t)data[1] << 4) + 1, piece = (size_t)data[2] * 64 + 1;
    const char *body = (const char *)data + 3;
    size_t len = size - 3, fed = 0;
    kjoin_http_body b = {.max = max};
    while (fed < len) {
        size_t n = len - fed < piece ? len - fed : piece;
        if (kjoin_http__body_append(&b, body + fed, n) != n)
            break;
        fed += n;
    }
    assert(b.len <= max);
    assert(b.len == fed);
    assert(b.overflow == (fed < len));
    assert(!b.len || (memcmp(b.buf, body, b.len) == 0 && b.buf[b.len] == '\0'));
    free(b.buf);
    /* The same answer as a watch's 200, handed to a sink: the same cap, and
     * nothing collected (the collected length is what a release wipes). */
    size_t sunk = 0;
    kjoin_http_body w = {.max = max, .sink = count, .sink_ctx = &sunk, .routed = true, .sunk = true};
    for (fed = 0; fed < len;) {
        size_t n = len - fed < piece ? len - fed : piece;
        if (kjoin_http__body_take(&w, body + fed, n) != n)
            break;
        fed += n;
    }
    assert(w.buf == NULL && w.len == 0);
    assert(w.streamed == fed && sunk == fed && w.streamed <= max);
    assert(w.overflow == (fed < len));
    return 0;
}
