/* The err module's own plumbing, for the library's modules, its tests and
 * fuzzers: not installed, not exported. The public part is kjoin/err.h. */
#ifndef KJOIN_PRIVATE_ERR_H
#define KJOIN_PRIVATE_ERR_H

#include <kjoin/err.h>

/* As kjoin_err_set, then appends ": <reason>" from OpenSSL's error queue
 * (when it has one) and clears the queue. */
kjoin_code kjoin_err_ossl(kjoin_err *err, kjoin_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
