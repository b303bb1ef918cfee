/* What a user types: endpoints, pins, durations, bootstrap and K3s tokens. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include <kjoin/private/discovery.h>
#include <kjoin/private/pin.h>
#include <kjoin/private/token.h>
#include <kjoin/private/util.h>

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
    kjoin_k3s_token k;
    kjoin_k3s_token_parse(s, &k, NULL);
    kjoin_token_is_k3s(s);
    free(s);
    return 0;
}
