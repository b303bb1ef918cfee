/* A CertificateSigningRequest as the API returns it while kjoin waits. */
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
    return 0;
}
