/* The cluster-info ConfigMap as served by an unverified server. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"

#include <kjoin/discovery.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kjoin_cluster_info ci;
    if (kjoin_cluster_info_parse((const char *)data, size, "abcdef", &ci, NULL) == KJOIN_OK)
        kjoin_cluster_info_release(&ci);
    return 0;
}
