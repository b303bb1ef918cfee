/* A CertificateSigningRequest as the API returns it: its status while kjoin
 * waits, and its request when one of that name exists already. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"

#include "../../pkg/bootstrap/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *pem = NULL;
    size_t len = 0;
    bool issued = false;
    if (kjoin_bootstrap__csr_status((const char *)data, size, "node-csr-x", &pem, &len, &issued, NULL) == KJOIN_OK &&
        issued)
        free(pem);
    EVP_PKEY_free(kjoin_bootstrap__csr_body_pubkey((const char *)data, size));
    return 0;
}
