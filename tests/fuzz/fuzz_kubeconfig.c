/* The kubeconfig inside cluster-info, then its CA bundle; and the same bytes
 * as a --discovery-file document (no directory: paths are refused). */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"

#include <kjoin/kubeconfig.h>
#include <kjoin/pin.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kjoin_cluster c;
    if (kjoin_kubeconfig_parse_discovery((const char *)data, size, NULL, &c, NULL) == KJOIN_OK)
        kjoin_cluster_release(&c);
    if (kjoin_kubeconfig_parse_cluster((const char *)data, size, &c, NULL) != KJOIN_OK)
        return 0;
    kjoin_bundle *b = NULL;
    if (kjoin_bundle_parse(c.ca_pem, c.ca_len, &b, NULL) == KJOIN_OK) {
        kjoin_bundle_apply_pins(b, NULL, NULL);
        kjoin_bundle_free(b);
    }
    kjoin_cluster_release(&c);
    return 0;
}
