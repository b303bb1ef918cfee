/* The API server's answers a worker join reads besides cluster-info: the
 * Node (its Ready condition) and GET /version (its minor). Untrusted JSON:
 * nulls, other types, deep nesting, garbage. The first byte picks one. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"

#include <kjoin/private/kubeapi.h>
#include <kjoin/private/node.h>
#include <kjoin/private/node.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    if (data[0] % 2)
        (void)kjoin_kubeapi_version_minor(text, len);
    else
        (void)kjoin_node_ready(text, len);
    return 0;
}
