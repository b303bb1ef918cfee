/* The container runtime asked over its CRI: gRPC over HTTP/2 on its unix
 * socket. The module's own plumbing: not installed, not exported. */
#ifndef KJOIN_PRIVATE_CRI_H
#define KJOIN_PRIVATE_CRI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kjoin/err.h>

/* What a gRPC answer's headers and trailers said. */
typedef struct kjoin_cri_answer {
    int grpc_status;  /* -1: none came */
    char message[256]; /* grpc-message, printable */
} kjoin_cri_answer;

/* One header or trailer line of a gRPC answer (the runtime's, untrusted):
 * its grpc-status and grpc-message kept in out. */
void kjoin_cri_header_line(const char *line, size_t len, kjoin_cri_answer *out);

/* Whether the runtime at socket_path (a unix socket) implements method
 * ("runtime.v1.RuntimeService/RuntimeConfig"). It is asked with a request
 * that carries no message: a runtime without the method answers
 * Unimplemented (12), one with it refuses the missing message with another
 * status, and either answers at once (a whole request would race a
 * runtime's answer to an unknown method against its reset of the stream).
 * *said: the runtime's grpc-message. Errors: KJOIN_E_TRANSIENT (no gRPC
 * answer by timeout_ms: the runtime does not speak HTTP/2 there, or closed
 * the stream), KJOIN_E_OTHER. */
kjoin_code kjoin_cri_implements(const char *socket_path, const char *method, int64_t timeout_ms, bool *implemented,
                                kjoin_cri_answer *said, kjoin_err *err);

#endif
