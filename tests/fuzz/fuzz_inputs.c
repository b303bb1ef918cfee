/* What a user types: endpoints, pins, durations and tokens. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include <kjoin/discovery.h>
#include <kjoin/pin.h>
#include <kjoin/token.h>
#include <kjoin/util.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    if (!s)
        return 0;
    kjoin_endpoint ep;
    kjoin_endpoint_parse(s, &ep, NULL);
    kjoin_pinset *pins = kjoin_pinset_new();
    if (pins)
        kjoin_pinset_add(pins, s, NULL);
    kjoin_pinset_free(pins);
    int64_t ms;
    kjoin_duration_parse(s, &ms, NULL);
    kjoin_token t;
    kjoin_token_parse(s, &t, NULL);
    free(s);
    return 0;
}
