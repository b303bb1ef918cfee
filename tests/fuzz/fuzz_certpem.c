/* The PEM certificates and keys the certs store and --ca-cert/--ca-key read. */
#include <stdint.h>

#include "fuzz.h"

#include <openssl/err.h>

#include "../../pkg/certs/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    STACK_OF(X509) *certs = kjoin_certs__parse_certs((const char *)data, size);
    EVP_PKEY *key = kjoin_certs__parse_key((const char *)data, size);
    if (certs && key)
        X509_check_private_key(sk_X509_value(certs, 0), key);
    sk_X509_pop_free(certs, X509_free);
    EVP_PKEY_free(key);
    ERR_clear_error();
    return 0;
}
