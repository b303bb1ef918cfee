/* The certs state file (kjoin-certs.json), which sits in a directory another
 * user may write. */
#include <stdint.h>

#include "fuzz.h"

#include "../../pkg/certs/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kjoin_certs_settings s;
    certs_entry e[KJOIN_CERTS_MAX_ENTRIES];
    size_t n = 0;
    if (kjoin_certs__state_parse((const char *)data, size, &s, e, KJOIN_CERTS_MAX_ENTRIES, &n, NULL) == KJOIN_OK) {
        char *again = kjoin_certs__state_encode(&s, e, n);
        free(again);
        for (size_t i = 0; i < n; i++)
            kjoin_certs__entry_release(&e[i]);
    }
    return 0;
}
