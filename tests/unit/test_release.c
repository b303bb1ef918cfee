/* The release table: each rule on both sides of the release where kubeadm
 * changed it, an older release taken as the oldest, a newer one (and 0) as
 * the newest. */
#include <string.h>

#include <kjoin/release.h>

#include "testutil.h"

static void test_boundaries(void **state)
{
    (void)state;
    static const struct {
        int minor;
        bool basic, whole, role /* and the unversioned kubelet ConfigMap, both 1.24 */, runtime, client_first, admins, learner, kubelet_admins, local;
        kjoin_gate_stage gate;
        int manifests;
    } want[] = {
        {19, false, false, false, true, false, false, false, false, false, KJOIN_GATE_NONE, 20},
        {20, false, false, false, true, false, false, false, false, false, KJOIN_GATE_NONE, 20},
        {21, true, false, false, true, false, false, false, false, false, KJOIN_GATE_NONE, 0},
        {22, true, true, false, true, false, false, false, false, false, KJOIN_GATE_NONE, 0},
        {23, true, true, false, true, false, false, false, false, false, KJOIN_GATE_NONE, 0},
        {24, true, true, true, false, false, false, false, false, false, KJOIN_GATE_NONE, 0},
        {26, true, true, true, false, false, false, false, false, false, KJOIN_GATE_NONE, 0},
        {27, true, true, true, false, true, false, false, false, false, KJOIN_GATE_NONE, 0},
        {28, true, true, true, false, true, false, false, false, false, KJOIN_GATE_NONE, 0},
        {29, true, true, true, false, true, true, true, true, false, KJOIN_GATE_NONE, 0},
        {31, true, true, true, false, true, true, true, true, false, KJOIN_GATE_NONE, 0},
        {32, true, true, true, false, true, true, true, true, false, KJOIN_GATE_ALPHA, 0},
        {33, true, true, true, false, true, true, true, true, true, KJOIN_GATE_ALPHA, 0},
        {34, true, true, true, false, true, true, true, true, true, KJOIN_GATE_BETA, 37},
        {35, true, true, true, false, true, true, true, true, true, KJOIN_GATE_BETA, 37},
        {36, true, true, true, false, true, true, true, false, true, KJOIN_GATE_BETA, 37}, /* kubeadm 1.36.3's source */
        {37, true, true, true, false, true, true, true, false, true, KJOIN_GATE_GA, 37},
        {99, true, true, true, false, true, true, true, false, true, KJOIN_GATE_GA, 37},
        {0, true, true, true, false, true, true, true, false, true, KJOIN_GATE_GA, 37},
    };
    for (size_t i = 0; i < TU_LEN(want); i++) {
        const kjoin_release *r = kjoin_release_of(want[i].minor);
        if (r->leaf_basic_constraints != want[i].basic || r->whole_control_plane_join != want[i].whole ||
            r->control_plane_role != want[i].role || r->kubelet_runtime_flag != want[i].runtime ||
            r->csr_usages_client_first != want[i].client_first || r->cluster_admins_group != want[i].admins ||
            r->etcd_learner != want[i].learner || r->kubelet_client_admins != want[i].kubelet_admins ||
            r->kubelet_local_mode != want[i].local || r->node_local_cri_socket != want[i].gate ||
            r->manifests != want[i].manifests || r->unversioned_kubelet_config != want[i].role)
            fail_msg("release 1.%d: the row since 1.%d is not the rules of that release", want[i].minor, r->since);
    }
    /* The flags file's pause image: kubeadm 1.21 (every runtime) to 1.34, each release's PauseVersion. */
    static const struct {
        int minor;
        const char *pause;
    } pauses[] = {{20, NULL},  {21, "3.4.1"}, {22, "3.5"},  {23, "3.6"},    {24, "3.7"}, {25, "3.8"}, {26, "3.9"},
                  {30, "3.9"}, {31, "3.10"},  {33, "3.10"}, {34, "3.10.1"}, {35, NULL},  {36, NULL},  {37, NULL}};
    for (size_t i = 0; i < TU_LEN(pauses); i++) {
        const kjoin_release *r = kjoin_release_of(pauses[i].minor);
        const char *got = r->pause_flag ? r->pause : NULL;
        if ((got == NULL) != (pauses[i].pause == NULL) || (got && strcmp(got, pauses[i].pause)))
            fail_msg("release 1.%d pins pause %s, not %s", pauses[i].minor, got ? got : "none",
                     pauses[i].pause ? pauses[i].pause : "none");
    }
    /* What the manifests of 1.34 to 1.37 differ in, as each release's kubeadm writes them. */
    static const struct {
        int minor;
        bool flexvolume;
        const char *etcd, *pause;
    } manifests[] = {{20, true, "3.4.13-0", "3.2"},     {34, true, "3.6.5-0", "3.10.1"}, {35, true, "3.6.6-0", "3.10.1"},
                     {36, false, "3.6.8-0", "3.10.2"}, {37, false, "3.7.0-0", "3.10.2"}, {30, true, NULL, "3.9"}};
    for (size_t i = 0; i < TU_LEN(manifests); i++) {
        const kjoin_release *r = kjoin_release_of(manifests[i].minor);
        if (r->flexvolume_dir != manifests[i].flexvolume || strcmp(r->pause, manifests[i].pause) ||
            (r->etcd_tag == NULL) != (manifests[i].etcd == NULL) || (r->etcd_tag && strcmp(r->etcd_tag, manifests[i].etcd)))
            fail_msg("release 1.%d: its manifests' images or volumes are not its kubeadm's", manifests[i].minor);
    }
    assert_int_equal(kjoin_release_of(0)->since, KJOIN_NEWEST_KUBEADM_MINOR);
    assert_int_equal(kjoin_release_of(KJOIN_OLDEST_KUBEADM_MINOR)->since, KJOIN_OLDEST_KUBEADM_MINOR);
    assert_int_equal(kjoin_release_minor(0), KJOIN_NEWEST_KUBEADM_MINOR);
    assert_int_equal(kjoin_release_minor(30), 30);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_boundaries)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
