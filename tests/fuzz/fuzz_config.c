/* A kubeadm configuration stream, as join --config and reset --config read it. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"

#include <kjoin/config.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kjoin_join_config c;
    if (kjoin_join_config_parse((const char *)data, size, &c, NULL) == KJOIN_OK)
        kjoin_join_config_release(&c);
    kjoin_reset_config r;
    if (kjoin_reset_config_parse((const char *)data, size, &r, NULL) == KJOIN_OK)
        kjoin_reset_config_release(&r);
    return 0;
}
