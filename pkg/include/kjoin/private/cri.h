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

/* The gRPC message of an answer's body (one uncompressed frame): *msg
 * points into data. Errors: KJOIN_E_OTHER. */
kjoin_code kjoin_cri_message(const unsigned char *data, size_t len, const unsigned char **msg, size_t *msg_len,
                             kjoin_err *err);

/* Whether the runtime holds image (ImageService/ImageStatus: its answer
 * names the image only when it has it). Errors: KJOIN_E_TRANSIENT (no
 * gRPC answer), KJOIN_E_OTHER (refused, malformed), KJOIN_E_USAGE (a name
 * too long). */
kjoin_code kjoin_cri_image_present(const char *socket_path, const char *image, int64_t timeout_ms, bool *present,
                                   kjoin_err *err);
/* The runtime's sandbox (pause) image, from RuntimeService/Status's
 * verbose information, into out. Errors: as kjoin_cri_image_present, and
 * KJOIN_E_OTHER when it names none. */
kjoin_code kjoin_cri_sandbox_image(const char *socket_path, int64_t timeout_ms, char *out, size_t cap, kjoin_err *err);

/* The parsers of those answers (the runtime's bytes, untrusted): whether an
 * ImageStatusResponse names an image; a StatusResponse's config.sandboxImage
 * (or 2.x's config.pinnedImages.sandbox) into out; the same from the config
 * JSON alone. false: none, or malformed. */
bool kjoin_cri_image_status_present(const unsigned char *msg, size_t len);
bool kjoin_cri_status_sandbox_image(const unsigned char *msg, size_t len, char *out, size_t cap);
bool kjoin_cri_config_sandbox_image(const char *json, size_t len, char *out, size_t cap);

/* proto.c: protobuf's wire format, the little the CRI needs. A field
 * written (bytes, or a varint) into out: its length, 0 when cap is short. */
size_t kjoin_pb_put_bytes(unsigned char *out, size_t cap, unsigned field, const void *data, size_t len);
size_t kjoin_pb_put_varint(unsigned char *out, size_t cap, unsigned field, uint64_t value);
/* A message's next field from *p (before end): 1 with *f (data points into
 * the message), 0 at the end, -1 malformed (a length past the end, a bad
 * key or wire type). */
typedef struct kjoin_pb_field {
    unsigned field;
    int wire;                  /* 0 varint, 1 64-bit, 2 length-delimited, 5 32-bit */
    uint64_t varint;           /* wire 0 */
    const unsigned char *data; /* wires 1, 2, 5 */
    size_t len;
} kjoin_pb_field;
int kjoin_pb_next(const unsigned char **p, const unsigned char *end, kjoin_pb_field *f);

#endif
