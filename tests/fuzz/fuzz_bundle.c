/* A PEM CA bundle, then pins applied to it. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"

#include <kjoin/private/pin.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kjoin_bundle *b = NULL;
    if (kjoin_bundle_parse(data, size, &b, NULL) != KJOIN_OK)
        return 0;
    kjoin_pinset *pins = kjoin_pinset_new();
    if (pins && kjoin_pinset_add(pins, kjoin_bundle_cert(b, 0)->spki_pin, NULL) == KJOIN_OK)
        kjoin_bundle_apply_pins(b, pins, NULL);
    free(kjoin_bundle_pem(b, KJOIN_TRUSTED_MASK, NULL));
    kjoin_pinset_free(pins);
    kjoin_bundle_free(b);
    return 0;
}
