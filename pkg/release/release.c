/* One row for each kubeadm release where something kjoin follows changed,
 * read from that release's kubeadm (cmd/kubeadm/app/...): a release
 * between two rows is the earlier row's. docs/join.md's table says where
 * each rule is proven. */
#include <kjoin/release.h>

#include <stddef.h>

#define N KJOIN_GATE_NONE
#define A KJOIN_GATE_ALPHA
#define B KJOIN_GATE_BETA
#define G KJOIN_GATE_GA

/* since, leaf basicConstraints, whole cp join, control-plane role, kubelet runtime flag, CSR usages client first,
 * cluster-admins group, etcd learner, kubelet-client admins, NodeLocalCRISocket, kubelet local mode, manifests,
 * flexvolume dir, etcd tag, pause, pause flag, the patch that dropped the kubelet client's group, unversioned
 * kubelet ConfigMap */
static const kjoin_release rows[] = {
    {20, false, false, false, true, false, false, false, false, N, false, 20, true, "3.4.13-0", "3.2", false, 0, false},
    {21, true, false, false, true, false, false, false, false, N, false, 0, true, NULL, "3.4.1", true, 0, false},
    {22, true, true, false, true, false, false, false, false, N, false, 0, true, NULL, "3.5", true, 0, false},
    {23, true, true, false, true, false, false, false, false, N, false, 0, true, NULL, "3.6", true, 0, false},
    {24, true, true, true, false, false, false, false, false, N, false, 0, true, NULL, "3.7", true, 0, true},
    {25, true, true, true, false, false, false, false, false, N, false, 0, true, NULL, "3.8", true, 0, true},
    {26, true, true, true, false, false, false, false, false, N, false, 0, true, NULL, "3.9", true, 0, true},
    {27, true, true, true, false, true, false, false, false, N, false, 0, true, NULL, "3.9", true, 0, true},
    {29, true, true, true, false, true, true, true, true, N, false, 0, true, NULL, "3.9", true, 0, true},
    {31, true, true, true, false, true, true, true, true, N, false, 0, true, NULL, "3.10", true, 0, true},
    {32, true, true, true, false, true, true, true, true, A, false, 0, true, NULL, "3.10", true, 0, true},
    {33, true, true, true, false, true, true, true, true, A, true, 0, true, NULL, "3.10", true, 12, true},
    {34, true, true, true, false, true, true, true, true, B, true, 37, true, "3.6.5-0", "3.10.1", true, 0, true},
    {35, true, true, true, false, true, true, true, true, B, true, 37, true, "3.6.6-0", "3.10.1", false, 0, true},
    {36, true, true, true, false, true, true, true, false, B, true, 37, false, "3.6.8-0", "3.10.2", false, 0, true},
    {37, true, true, true, false, true, true, true, false, G, true, 37, false, "3.7.0-0", "3.10.2", false, 0, true},
};

int kjoin_release_minor(int minor) { return minor ? minor : KJOIN_NEWEST_KUBEADM_MINOR; }

const kjoin_release *kjoin_release_of(int minor)
{
    size_t i = 0;
    minor = kjoin_release_minor(minor);
    while (i + 1 < sizeof(rows) / sizeof(rows[0]) && rows[i + 1].since <= minor)
        i++;
    return &rows[i];
}
