/* The release table: each rule on both sides of the release where kubeadm
 * changed it, an older release taken as the oldest, a newer one (and 0) as
 * the newest. */
#include <stddef.h>
#include <string.h>

#include <kjoin/private/release.h>

#include "testutil.h"

static void test_boundaries(void **state)
{
    (void)state;
    static const struct {
        int minor;
        bool basic, whole, unversioned /* kubelet-config read first */, runtime, client_first, admins, learner, kubelet_admins, local;
        kjoin_gate_stage gate;
        bool pods;
    } want[] = {
        {19, false, false, false, true, false, false, false, false, false, KJOIN_GATE_NONE, true},
        {20, false, false, false, true, false, false, false, false, false, KJOIN_GATE_NONE, true},
        {21, true, false, false, true, false, false, false, false, false, KJOIN_GATE_NONE, false},
        {22, true, true, false, true, false, false, false, false, false, KJOIN_GATE_NONE, true},
        {23, true, true, true, true, false, false, false, false, false, KJOIN_GATE_NONE, true},
        {24, true, true, true, true, false, false, false, false, false, KJOIN_GATE_NONE, true},
        {25, true, true, true, true, false, false, false, false, false, KJOIN_GATE_NONE, true},
        {26, true, true, true, false, false, false, false, false, false, KJOIN_GATE_NONE, true},
        {27, true, true, true, false, true, false, false, false, false, KJOIN_GATE_NONE, true},
        {28, true, true, true, false, true, false, false, false, false, KJOIN_GATE_NONE, true},
        {29, true, true, true, false, true, true, true, true, false, KJOIN_GATE_NONE, true},
        {31, true, true, true, false, true, true, true, true, false, KJOIN_GATE_NONE, true},
        {32, true, true, true, false, true, true, true, true, false, KJOIN_GATE_ALPHA, true},
        {33, true, true, true, false, true, true, true, true, true, KJOIN_GATE_ALPHA, true},
        {34, true, true, true, false, true, true, true, true, true, KJOIN_GATE_BETA, true},
        {35, true, true, true, false, true, true, true, true, true, KJOIN_GATE_BETA, true},
        {36, true, true, true, false, true, true, true, false, true, KJOIN_GATE_BETA, true}, /* kubeadm 1.36.3's source */
        {37, true, true, true, false, true, true, true, false, true, KJOIN_GATE_GA, true},
        {99, true, true, true, false, true, true, true, false, true, KJOIN_GATE_GA, true},
        {0, true, true, true, false, true, true, true, false, true, KJOIN_GATE_GA, true},
    };
    for (size_t i = 0; i < TU_LEN(want); i++) {
        const kjoin_release *r = kjoin_release_of(want[i].minor);
        if (r->leaf_basic_constraints != want[i].basic || r->whole_control_plane_join != want[i].whole ||
            (r->kubelet_config_map != KJOIN_KUBELET_CONFIG_VERSIONED) != want[i].unversioned || r->kubelet_runtime_flag != want[i].runtime ||
            r->csr_usages_client_first != want[i].client_first || r->cluster_admins_group != want[i].admins ||
            kjoin_gate_on(r->etcd_learner, -1) != want[i].learner || r->kubelet_client_admins != want[i].kubelet_admins ||
            kjoin_gate_on(r->kubelet_local_mode, -1) != want[i].local || r->node_local_cri_socket != want[i].gate ||
            r->static_pods != want[i].pods)
            fail_msg("release 1.%d: the row since 1.%d is not the rules of that release", want[i].minor, r->since);
    }
    /* ControlPlaneKubeletLocalMode by stage, set on, off or not at all, as each release's kubeadm reads it
     * (cmd/kubeadm/app/features): 1.31 alpha, 1.33 beta, 1.35 GA and locked on, 1.36 gone (always on). */
    static const struct {
        int minor;
        bool on, off, unset;
    } local[] = {{30, false, false, false}, {31, true, false, false}, {32, true, false, false},
                 {33, true, false, true},   {34, true, false, true},  {35, true, true, true},
                 {36, true, true, true},    {37, true, true, true}};
    for (size_t i = 0; i < TU_LEN(local); i++) {
        kjoin_gate_stage g = kjoin_release_of(local[i].minor)->kubelet_local_mode;
        if (kjoin_gate_on(g, 1) != local[i].on || kjoin_gate_on(g, 0) != local[i].off ||
            kjoin_gate_on(g, -1) != local[i].unset)
            fail_msg("release 1.%d: ControlPlaneKubeletLocalMode is not its kubeadm's", local[i].minor);
    }
    /* EtcdLearnerMode likewise: 1.27 alpha, 1.29 beta, 1.32 GA and locked on, 1.33 gone (always a learner). */
    static const struct {
        int minor;
        bool on, off, unset;
    } learner[] = {{26, false, false, false}, {27, true, false, false}, {28, true, false, false},
                   {29, true, false, true},   {31, true, false, true},  {32, true, true, true},
                   {33, true, true, true},    {37, true, true, true},   {0, true, true, true}};
    for (size_t i = 0; i < TU_LEN(learner); i++) {
        kjoin_gate_stage g = kjoin_release_of(learner[i].minor)->etcd_learner;
        if (kjoin_gate_on(g, 1) != learner[i].on || kjoin_gate_on(g, 0) != learner[i].off ||
            kjoin_gate_on(g, -1) != learner[i].unset)
            fail_msg("release 1.%d: EtcdLearnerMode is not its kubeadm's", learner[i].minor);
    }
    /* The kubelet's ConfigMap as each release's kubeadm reads it: the versioned one, either (1.23 and 1.24,
     * while UnversionedKubeletConfigMap moved), the unversioned one. */
    static const struct {
        int minor;
        kjoin_kubelet_config_map map;
    } maps[] = {{20, KJOIN_KUBELET_CONFIG_VERSIONED}, {22, KJOIN_KUBELET_CONFIG_VERSIONED},
                {23, KJOIN_KUBELET_CONFIG_EITHER},    {24, KJOIN_KUBELET_CONFIG_EITHER},
                {25, KJOIN_KUBELET_CONFIG_UNVERSIONED}, {37, KJOIN_KUBELET_CONFIG_UNVERSIONED}};
    for (size_t i = 0; i < TU_LEN(maps); i++)
        if (kjoin_release_of(maps[i].minor)->kubelet_config_map != maps[i].map)
            fail_msg("release 1.%d: the kubelet's ConfigMap is not read as its kubeadm reads it", maps[i].minor);
    /* mark-control-plane's labels and default taints, as 1.20 to 1.25's kubeadm set them (the master label
     * to 1.23, the load balancers' from 1.21, both taints in 1.24). */
    static const struct {
        int minor;
        bool master_label, exclude_lb, master_taint, control_plane_taint;
    } marks[] = {{19, true, false, true, false}, {20, true, false, true, false}, {21, true, true, true, false},
                 {23, true, true, true, false},  {24, false, true, true, true},  {25, false, true, false, true},
                 {37, false, true, false, true}, {0, false, true, false, true}};
    for (size_t i = 0; i < TU_LEN(marks); i++) {
        const kjoin_release *r = kjoin_release_of(marks[i].minor);
        if (r->master_label != marks[i].master_label || r->exclude_lb_label != marks[i].exclude_lb ||
            r->master_taint != marks[i].master_taint || r->control_plane_taint != marks[i].control_plane_taint)
            fail_msg("release 1.%d: its marks are not its kubeadm's", marks[i].minor);
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
    /* What the manifests' images and volumes are, as each release's kubeadm (its newest patch) writes them. */
    static const struct {
        int minor;
        bool flexvolume;
        const char *etcd, *pause;
    } manifests[] = {{20, true, "3.4.13-0", "3.2"},     {34, true, "3.6.5-0", "3.10.1"}, {35, true, "3.6.6-0", "3.10.1"},
                     {36, false, "3.6.8-0", "3.10.2"}, {37, false, "3.7.0-0", "3.10.2"}, {30, true, "3.5.15-0", "3.9"},
                     {22, true, "3.5.6-0", "3.5"},     {25, true, "3.5.9-0", "3.8"},    {26, true, "3.5.10-0", "3.9"},
                     {27, true, "3.5.12-0", "3.9"},    {28, true, "3.5.15-0", "3.9"},   {29, true, "3.5.16-0", "3.9"},
                     {31, true, "3.5.24-0", "3.10"},   {33, true, "3.5.24-0", "3.10"}};
    for (size_t i = 0; i < TU_LEN(manifests); i++) {
        const kjoin_release *r = kjoin_release_of(manifests[i].minor);
        if (r->flexvolume_dir != manifests[i].flexvolume || strcmp(r->pause, manifests[i].pause) ||
            (r->etcd_tag == NULL) != (manifests[i].etcd == NULL) || (r->etcd_tag && strcmp(r->etcd_tag, manifests[i].etcd)))
            fail_msg("release 1.%d: its manifests' images or volumes are not its kubeadm's", manifests[i].minor);
    }
    /* The static Pods' rules: each set from its first release on (or until one), on both sides. */
    static const struct {
        const char *name;
        size_t field;
        int from, until; /* true for from <= minor < until */
    } rules[] = {
        {"apiserver_insecure_port", offsetof(kjoin_release, apiserver_insecure_port), 20, 22},
        {"components_port_zero", offsetof(kjoin_release, components_port_zero), 20, 23},
        {"pod_seccomp", offsetof(kjoin_release, pod_seccomp), 22, 99},
        {"pod_priority", offsetof(kjoin_release, pod_priority), 25, 99},
        {"sorted_proxy_env", offsetof(kjoin_release, sorted_proxy_env), 28, 99},
        {"authz_mode_extra", offsetof(kjoin_release, authz_mode_extra), 29, 30},
        {"startup_from_cluster", offsetof(kjoin_release, startup_from_cluster), 20, 30},
        {"ca_trust_dirs", offsetof(kjoin_release, ca_trust_dirs), 31, 99},
        {"scheduler_livez", offsetof(kjoin_release, scheduler_livez), 32, 99},
        {"probe_port_named", offsetof(kjoin_release, probe_port_named), 34, 99},
        {"flexvolume_dir", offsetof(kjoin_release, flexvolume_dir), 20, 36},
        {"etcd_ephemeral_storage", offsetof(kjoin_release, etcd_ephemeral_storage), 20, 21},
        {"etcd_corrupt_check", offsetof(kjoin_release, etcd_corrupt_check), 22, 99},
        {"etcd_watch_progress", offsetof(kjoin_release, etcd_watch_progress), 25, 99},
        {"etcd_flags_by_version", offsetof(kjoin_release, etcd_flags_by_version), 34, 99},
    };
    for (size_t i = 0; i < TU_LEN(rules); i++)
        for (int minor = 20; minor <= 38; minor++) {
            bool got = *(const bool *)((const char *)kjoin_release_of(minor) + rules[i].field);
            if (got != (minor >= rules[i].from && minor < rules[i].until))
                fail_msg("release 1.%d: %s is %s", minor, rules[i].name, got ? "set" : "not set");
        }
    for (int minor = 20; minor <= 38; minor++) {
        const kjoin_release *r = kjoin_release_of(minor);
        kjoin_args_order order = minor < 29 ? KJOIN_ARGS_MAP : minor < 32 ? KJOIN_ARGS_SORTED : KJOIN_ARGS_APPENDED;
        kjoin_etcd_probes probes = minor < 25 ? KJOIN_ETCD_HEALTH : minor < 31 ? KJOIN_ETCD_HEALTH_SERIALIZABLE
                                                                               : KJOIN_ETCD_LIVEZ;
        if (r->arguments != order || r->etcd_probes != probes)
            fail_msg("release 1.%d: its arguments' order or etcd's probes are not its kubeadm's", minor);
        if (minor >= 22 && (!r->static_pods || !r->etcd_tag || r->since != (minor > 37 ? 37 : minor)))
            fail_msg("release 1.%d has no row of its own with its static Pods", minor);
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
