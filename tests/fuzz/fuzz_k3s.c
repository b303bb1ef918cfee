/* K3s CA-hash matching: a served /cacerts bundle against a token's hash. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"

#include <kjoin/private/pin.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 32)
        return 0;
    /* The first 32 bytes are the token's hash; the rest is the body. */
    kjoin_bundle *b = NULL;
    if (kjoin_bundle_parse(data + 32, size - 32, &b, NULL) == 0) {
        size_t root = 0;
        kjoin_bundle_match_k3s_hash(b, data + 32, size - 32, data, &root);
        kjoin_bundle_free(b);
    }
    return 0;
}
