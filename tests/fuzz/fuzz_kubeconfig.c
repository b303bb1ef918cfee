/* The kubeconfig inside cluster-info, then its CA bundle; the same bytes
 * as a --discovery-file document (no directory: paths are refused); and
 * refresh's rewrite of the CA data, which must be stable: rewriting its own
 * result with the same CA gives the same bytes; and the control-plane
 * node's rewrite of the server, stable the same way. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"

#include <kjoin/private/kubeconfig.h>
#include <kjoin/private/pin.h>

static void rewrite(const uint8_t *data, size_t size)
{
    static const char pem[] = "-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n";
    char *once = NULL, *twice = NULL;
    size_t n1 = 0, n2 = 0;
    if (kjoin_kubeconfig_replace_ca((const char *)data, size, pem, sizeof(pem) - 1, &once, &n1, NULL) != KJOIN_OK)
        return;
    if (kjoin_kubeconfig_replace_ca(once, n1, pem, sizeof(pem) - 1, &twice, &n2, NULL) != KJOIN_OK || n1 != n2 ||
        memcmp(once, twice, n1) != 0)
        abort();
    free(once);
    free(twice);
}

static void rewrite_server(const uint8_t *data, size_t size)
{
    char *once = NULL, *twice = NULL;
    size_t n1 = 0, n2 = 0;
    if (kjoin_kubeconfig_replace_server((const char *)data, size, "https://[fd00::2]:6443", &once, &n1, NULL) != KJOIN_OK)
        return;
    if (kjoin_kubeconfig_replace_server(once, n1, "https://[fd00::2]:6443", &twice, &n2, NULL) != KJOIN_OK || n1 != n2 ||
        memcmp(once, twice, n1) != 0)
        abort();
    free(once);
    free(twice);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kjoin_cluster c;
    rewrite(data, size);
    rewrite_server(data, size);
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
