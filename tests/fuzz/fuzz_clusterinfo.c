/* The cluster-info ConfigMap as served by an unverified server: parsed whole
 * and as the network hands it, in pieces whose sizes the input picks. Both
 * must agree, errors word for word; compared with the whole's kubeconfig the pieces must be found
 * the same, and with one byte of it changed, not the same. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"

#include <kjoin/discovery.h>

#include "../../pkg/discovery/internal.h"

static kjoin_code in_pieces(const uint8_t *data, size_t size, const char *expect, size_t expect_len,
                            kjoin_cluster_info *out, bool *same, kjoin_err *err)
{
    kjoin_discovery__ci *p = kjoin_discovery__ci_new(expect, expect_len);
    if (!p)
        return KJOIN_E_OTHER;
    size_t step = size ? (size_t)data[size / 2] * 97 % 20000 + 1 : 1;
    for (size_t off = 0; off < size; off += step)
        kjoin_discovery__ci_feed(p, (const char *)data + off, size - off < step ? size - off : step);
    kjoin_code rc = kjoin_discovery__ci_finish(p, expect ? NULL : "abcdef", out, same, err);
    kjoin_discovery__ci_free(p);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kjoin_cluster_info whole, pieces;
    kjoin_err e1 = {0}, e2 = {0};
    kjoin_code rc = kjoin_cluster_info_parse((const char *)data, size, "abcdef", &whole, &e1);
    if (in_pieces(data, size, NULL, 0, &pieces, NULL, &e2) != rc)
        abort();
    if (rc) {
        if (strcmp(e1.msg, e2.msg) != 0) /* the same answer however the bytes were cut */
            abort();
        return 0;
    }
    bool same = false;
    kjoin_cluster_info again;
    if (pieces.kubeconfig_len != whole.kubeconfig_len ||
        memcmp(pieces.kubeconfig, whole.kubeconfig, whole.kubeconfig_len) != 0 ||
        (!whole.jws) != (!pieces.jws) || (whole.jws && strcmp(whole.jws, pieces.jws) != 0) ||
        in_pieces(data, size, whole.kubeconfig, whole.kubeconfig_len, &again, &same, NULL) != KJOIN_OK || !same)
        abort();
    kjoin_cluster_info_release(&again);
    /* One byte changed: not the same, and the length still counted. */
    whole.kubeconfig[size % whole.kubeconfig_len] ^= 1;
    if (in_pieces(data, size, whole.kubeconfig, whole.kubeconfig_len, &again, &same, NULL) != KJOIN_OK || same ||
        again.kubeconfig_len != whole.kubeconfig_len)
        abort();
    kjoin_cluster_info_release(&again);
    whole.kubeconfig[size % whole.kubeconfig_len] ^= 1;
    kjoin_cluster_info_release(&whole);
    kjoin_cluster_info_release(&pieces);
    return 0;
}
