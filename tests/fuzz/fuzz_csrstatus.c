/* A CertificateSigningRequest as the API returns it: its status while kjoin
 * waits, the certificates of status.certificate (only certificates, at
 * least one), and its request when one of that name exists already. The bytes after the JSON's first NUL are also tried
 * as a status.certificate of their own. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"

#include "../../pkg/bootstrap/internal.h"

static void chain(const char *pem, size_t len)
{
    STACK_OF(X509) *certs = NULL;
    if (kjoin_bootstrap__issued_chain(pem, len, &certs, NULL) != KJOIN_OK)
        return;
    if (sk_X509_num(certs) < 1)
        abort();
    sk_X509_pop_free(certs, X509_free);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *pem = NULL;
    size_t len = 0;
    bool issued = false;
    if (kjoin_bootstrap__csr_status((const char *)data, size, "node-csr-x", &pem, &len, &issued, NULL) == KJOIN_OK &&
        issued) {
        chain(pem, len);
        free(pem);
    }
    chain((const char *)data, size);
    EVP_PKEY_free(kjoin_bootstrap__csr_body_pubkey((const char *)data, size));
    return 0;
}
