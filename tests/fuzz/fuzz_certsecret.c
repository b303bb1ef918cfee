/* A Secret the API returns to the Secrets store of kjoin certs. */
#include <stdint.h>

#include "fuzz.h"

#include "../../pkg/certs/secret.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    certs_secret s;
    if (kjoin_certs__secret_parse((const char *)data, size, &s, NULL) == KJOIN_OK) {
        char fp[80];
        kjoin_certs__data_fingerprint(&s, fp);
        (void)kjoin_certs__secret_annotation(&s, "kjoin.io/settings");
        kjoin_certs__secret_release(&s);
    }
    return 0;
}
