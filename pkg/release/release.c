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
 * the flags file's pause (kubeadm's constants.PauseVersion of that release) */
static const kjoin_release rows[] = {
    {20, false, false, false, true, false, false, false, false, N, false, 20, NULL},
    {21, true, false, false, true, false, false, false, false, N, false, 0, "3.4.1"},
    {22, true, true, false, true, false, false, false, false, N, false, 0, "3.5"},
    {23, true, true, false, true, false, false, false, false, N, false, 0, "3.6"},
    {24, true, true, true, false, false, false, false, false, N, false, 0, "3.7"},
    {25, true, true, true, false, false, false, false, false, N, false, 0, "3.8"},
    {26, true, true, true, false, false, false, false, false, N, false, 0, "3.9"},
    {27, true, true, true, false, true, false, false, false, N, false, 0, "3.9"},
    {29, true, true, true, false, true, true, true, true, N, false, 0, "3.9"},
    {31, true, true, true, false, true, true, true, true, N, false, 0, "3.10"},
    {32, true, true, true, false, true, true, true, true, A, false, 0, "3.10"},
    {33, true, true, true, false, true, true, true, true, A, true, 0, "3.10"},
    {34, true, true, true, false, true, true, true, true, B, true, 0, "3.10.1"},
    {35, true, true, true, false, true, true, true, true, B, true, 0, NULL},
    {36, true, true, true, false, true, true, true, false, B, true, 0, NULL},
    {37, true, true, true, false, true, true, true, false, G, true, 37, NULL},
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
