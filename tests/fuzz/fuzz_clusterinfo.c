/* The cluster-info ConfigMap as served by an unverified server: parsed whole
 * and as the network hands it, in pieces whose sizes the input picks. Both
 * must agree, errors word for word; compared with the whole's kubeconfig the pieces must be found
 * the same, and with one byte of it changed, not the same. A kubeconfig
 * accepted must be the one json-c's own tree of the body holds. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"

#include <json-c/json.h>

#include <kjoin/private/discovery.h>

#include "../../pkg/discovery/internal.h"

/* json-c's whole tree of the body: is data.kubeconfig exactly kc? */
static bool json_c_holds(const uint8_t *data, size_t size, const char *kc, size_t kc_len)
{
    json_tokener *t = json_tokener_new();
    if (!t)
        abort();
    json_tokener_set_flags(t, JSON_TOKENER_STRICT);
    json_object *root = json_tokener_parse_ex(t, (const char *)data, (int)size), *d = NULL, *v = NULL;
    bool holds = json_object_object_get_ex(root, "data", &d) && json_object_object_get_ex(d, "kubeconfig", &v) &&
                 json_object_is_type(v, json_type_string) && (size_t)json_object_get_string_len(v) == kc_len &&
                 memcmp(json_object_get_string(v), kc, kc_len) == 0;
    json_object_put(root);
    json_tokener_free(t);
    return holds;
}

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
    if (!json_c_holds(data, size, whole.kubeconfig, whole.kubeconfig_len))
        abort();
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
