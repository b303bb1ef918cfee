#include <stdlib.h>
#include <string.h>

#include "body.h"

size_t kjoin_http__body_append(kjoin_http_body *b, const char *ptr, size_t n)
{
    if (n > b->max - b->len) {
        b->overflow = true;
        return 0;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 16384;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *bigger = realloc(b->buf, cap);
        if (!bigger)
            return 0;
        b->buf = bigger;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, ptr, n);
    b->len += n;
    b->buf[b->len] = '\0';
    return n;
}

size_t kjoin_http__body_take(kjoin_http_body *b, const char *ptr, size_t n)
{
    if (!b->sunk)
        return kjoin_http__body_append(b, ptr, n);
    if (n > b->max - b->streamed) {
        b->overflow = true;
        return 0;
    }
    b->streamed += n;
    b->sink(ptr, n, b->sink_ctx);
    return n;
}
