/* What etcd-join reads from the network: etcd's gateway answers (the
 * member list and the member added, a member's status), the API server's
 * list of etcd Pods (their kubeadm annotation) and the kubelet's Pod of this
 * node's etcd, etcd's /metrics text; and what kjoin reset reads from disk: the
 * control-plane record, and the manifests wait-control-plane reads back. The
 * first byte picks which. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"

#include <kjoin/private/controlplane.h>
#include <kjoin/private/controlplane.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *json = (const char *)data + 1;
    if (data[0] == '4') {
        kjoin_etcd_status st;
        kjoin_etcd_status_parse(json, size - 1, &st, NULL);
    } else if (data[0] == '6') {
        char why[700];
        kjoin_pod_not_running(json, size - 1, "etcd", why, sizeof(why));
    } else if (data[0] == '8') {
        kjoin_etcd_fsync_mean_ms(json, size - 1);
    } else if (data[0] == '3') { /* a manifest read back by wait-control-plane, as each of the three */
        const char *m[3] = {json, json, json};
        size_t len[3] = {size - 1, size - 1, size - 1};
        char urls[3][320];
        kjoin_control_plane_endpoints(m, len, "192.0.2.2", urls, NULL);
    } else if (data[0] == '2') {
        kjoin_cp_record *r = malloc(sizeof(*r));
        if (r)
            kjoin_cp_record_parse(json, size - 1, r, NULL);
        free(r);
    } else if (data[0] & 1) {
        kjoin_etcd_member m[4];
        bool learner[4];
        size_t n;
        kjoin_etcd_members_parse(json, size - 1, m, learner, 4, &n, NULL);
    } else {
        char urls[4][300];
        size_t n;
        kjoin_etcd_endpoints_parse(json, size - 1, urls, 4, &n);
    }
    return 0;
}
