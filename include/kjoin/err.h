/* kjoin error type: one code plus a human message, shared by every module. */
#ifndef KJOIN_ERR_H
#define KJOIN_ERR_H

#include <stddef.h>

/* The codes are the command's exit codes (see docs/exit-codes.md), except
 * KJOIN_E_TRANSIENT, which the discovery engine retries and never surfaces. */
typedef enum kjoin_code {
    KJOIN_OK = 0,
    KJOIN_E_OTHER = 1,     /* anything else */
    KJOIN_E_USAGE = 2,     /* usage or bad input from the user */
    KJOIN_E_TIMEOUT = 3,   /* discovery deadline passed */
    KJOIN_E_TRUST = 4,     /* signature, pin, TLS verification, malformed discovery data */
    KJOIN_E_OUTPUT = 5,    /* output cannot be written or would overwrite a different file */
    KJOIN_E_API = 6,       /* the Kubernetes API refused a request (Forbidden, NotFound, ...) */
    KJOIN_E_TAKEN_BACK = 7, /* a join failed after it had written, and took back what it wrote */
    KJOIN_E_TOKEN_REJECTED = 8, /* the API server rejects the bootstrap token (expired, deleted, never created) */
    KJOIN_E_TRANSIENT = 75 /* internal: worth retrying (EX_TEMPFAIL) */
} kjoin_code;

#define KJOIN_ERR_MSG_MAX 512

typedef struct kjoin_err {
    kjoin_code code;
    char msg[KJOIN_ERR_MSG_MAX];
} kjoin_err;

/* Records code and a printf-style message in err (which may be NULL) and
 * returns code, so callers can write `return kjoin_err_set(...)`. */
kjoin_code kjoin_err_set(kjoin_err *err, kjoin_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Stable machine-readable name of a code, e.g. "TrustVerificationFailed". */
const char *kjoin_code_reason(kjoin_code code);

#endif
