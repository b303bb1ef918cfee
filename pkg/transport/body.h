/* Private to pkg/transport: a response body collected under a cap, fed by
 * libcurl in pieces of any size (and by the fuzzer). */
#ifndef KJOIN_TRANSPORT_BODY_H
#define KJOIN_TRANSPORT_BODY_H

#include <stdbool.h>
#include <stddef.h>

typedef struct kjoin_http_body {
    char *buf; /* NUL-terminated when not NULL */
    size_t len, cap, max; /* len: the bytes in buf, never more */
    size_t streamed;      /* the bytes handed to sink (under max too) */
    bool overflow; /* more than max bytes were offered */
    /* A 200 answer's body goes to sink instead of buf (decided at its first piece). */
    void (*sink)(const char *data, size_t len, void *ctx);
    void *sink_ctx;
    void *curl;        /* the handle, to read the status */
    bool routed, sunk; /* the choice is made; the body goes to sink */
} kjoin_http_body;

/* Appends n bytes; returns n, or 0 to abort the transfer (over max, or out
 * of memory). */
size_t kjoin_http__body_append(kjoin_http_body *b, const char *ptr, size_t n);

/* One piece of the answer, routed (sunk) or collected: returns n, or 0 to
 * abort (over max, or out of memory). A sunk body leaves buf and len alone. */
size_t kjoin_http__body_take(kjoin_http_body *b, const char *ptr, size_t n);

#endif
