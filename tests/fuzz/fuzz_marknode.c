/* The Node mark-control-plane reads before it patches (the API server's
 * answer: untrusted): JSON, its labels' and taints' shapes, the patch made
 * from it. The first byte picks the release and whether taints are given. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"

#include <kjoin/private/controlplane.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const char *const taints[] = {"a=b:NoSchedule", "c:NoExecute", "bad"};
    int minor = data[0] & 1 ? 20 : 37;
    kjoin_join_context join = {.name = {.name = "n"}};
    kjoin_cp_context cx = {.join = &join, .minor = minor, .release = kjoin_release_of(minor)};
    kjoin_mark_control_plane_spec s = {.taints = taints, .n_taints = (data[0] >> 1) % 4, .taints_set = data[0] & 8};
    char *patch = NULL;
    if (kjoin_mark_control_plane_patch(&cx, &s, (const char *)data + 1, size - 1, &patch, NULL) == KJOIN_OK)
        free(patch);
    return 0;
}
