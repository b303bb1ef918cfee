/* One row for each kubeadm release, read from that release's kubeadm
 * (cmd/kubeadm/app/..., the newest patch the Go module proxy serves).
 * docs/join.md's table says where
 * each rule is proven. */
#include <kjoin/private/release.h>

#include <stddef.h>

/* Each row says what that release's kubeadm does; a field left out is
 * false (or 0, NULL). The flags that end at a release are set on the rows
 * before it. */
static const kjoin_release rows[] = {
    {.since = 20, .master_label = true, .master_taint = true, .kubelet_runtime_flag = true, .flexvolume_dir = true,
     .etcd_tag = "3.4.13-0", .pause = "3.2", .static_pods = true, .apiserver_insecure_port = true,
     .components_port_zero = true, .startup_from_cluster = true, .etcd_ephemeral_storage = true},
    {.since = 21, .master_label = true, .exclude_lb_label = true, .master_taint = true, .kubelet_runtime_flag = true,
     .leaf_basic_constraints = true, .flexvolume_dir = true, .etcd_tag = "3.4.13-0", .pause = "3.4.1",
     .pause_flag = true, .apiserver_insecure_port = true, .components_port_zero = true, .startup_from_cluster = true},
    {.since = 22, .master_label = true, .exclude_lb_label = true, .master_taint = true, .kubelet_runtime_flag = true,
     .leaf_basic_constraints = true, .whole_control_plane_join = true, .flexvolume_dir = true, .etcd_tag = "3.5.6-0",
     .pause = "3.5", .pause_flag = true, .static_pods = true, .components_port_zero = true, .pod_seccomp = true,
     .startup_from_cluster = true, .etcd_corrupt_check = true},
    {.since = 23, .master_label = true, .exclude_lb_label = true, .master_taint = true, .kubelet_runtime_flag = true,
     .leaf_basic_constraints = true, .whole_control_plane_join = true, .flexvolume_dir = true, .etcd_tag = "3.5.6-0",
     .pause = "3.6", .pause_flag = true, .kubelet_config_map = KJOIN_KUBELET_CONFIG_EITHER, .static_pods = true,
     .pod_seccomp = true, .startup_from_cluster = true, .etcd_corrupt_check = true},
    {.since = 24, .exclude_lb_label = true, .master_taint = true, .control_plane_taint = true,
     .kubelet_runtime_flag = true, .leaf_basic_constraints = true, .whole_control_plane_join = true,
     .flexvolume_dir = true, .etcd_tag = "3.5.6-0", .pause = "3.7", .pause_flag = true,
     .kubelet_config_map = KJOIN_KUBELET_CONFIG_EITHER, .static_pods = true, .pod_seccomp = true,
     .startup_from_cluster = true, .etcd_corrupt_check = true},
    {.since = 25, .exclude_lb_label = true, .control_plane_taint = true, .kubelet_runtime_flag = true,
     .leaf_basic_constraints = true, .whole_control_plane_join = true, .flexvolume_dir = true, .etcd_tag = "3.5.9-0",
     .pause = "3.8", .pause_flag = true, .kubelet_config_map = KJOIN_KUBELET_CONFIG_UNVERSIONED, .static_pods = true,
     .pod_seccomp = true, .pod_priority = true, .startup_from_cluster = true, .etcd_corrupt_check = true,
     .etcd_watch_progress = true, .etcd_probes = KJOIN_ETCD_HEALTH_SERIALIZABLE},
    {.since = 26, .exclude_lb_label = true, .control_plane_taint = true, .leaf_basic_constraints = true,
     .whole_control_plane_join = true, .flexvolume_dir = true, .etcd_tag = "3.5.10-0", .pause = "3.9",
     .pause_flag = true, .kubelet_config_map = KJOIN_KUBELET_CONFIG_UNVERSIONED, .static_pods = true,
     .pod_seccomp = true, .pod_priority = true, .startup_from_cluster = true, .etcd_corrupt_check = true,
     .etcd_watch_progress = true, .etcd_probes = KJOIN_ETCD_HEALTH_SERIALIZABLE},
    {.since = 27, .exclude_lb_label = true, .control_plane_taint = true, .leaf_basic_constraints = true,
     .whole_control_plane_join = true, .csr_usages_client_first = true, .etcd_learner = KJOIN_GATE_ALPHA,
     .flexvolume_dir = true, .etcd_tag = "3.5.12-0", .pause = "3.9", .pause_flag = true,
     .kubelet_config_map = KJOIN_KUBELET_CONFIG_UNVERSIONED, .static_pods = true, .pod_seccomp = true,
     .pod_priority = true, .startup_from_cluster = true, .etcd_corrupt_check = true, .etcd_watch_progress = true,
     .etcd_probes = KJOIN_ETCD_HEALTH_SERIALIZABLE},
    {.since = 28, .exclude_lb_label = true, .control_plane_taint = true, .leaf_basic_constraints = true,
     .whole_control_plane_join = true, .csr_usages_client_first = true, .etcd_learner = KJOIN_GATE_ALPHA,
     .flexvolume_dir = true, .etcd_tag = "3.5.15-0", .pause = "3.9", .pause_flag = true,
     .kubelet_config_map = KJOIN_KUBELET_CONFIG_UNVERSIONED, .static_pods = true, .pod_seccomp = true,
     .pod_priority = true, .sorted_proxy_env = true, .startup_from_cluster = true, .etcd_corrupt_check = true,
     .etcd_watch_progress = true, .etcd_probes = KJOIN_ETCD_HEALTH_SERIALIZABLE},
    {.since = 29, .exclude_lb_label = true, .control_plane_taint = true, .leaf_basic_constraints = true,
     .whole_control_plane_join = true, .csr_usages_client_first = true, .cluster_admins_group = true,
     .etcd_learner = KJOIN_GATE_BETA, .kubelet_client_admins = true, .flexvolume_dir = true, .etcd_tag = "3.5.16-0",
     .pause = "3.9", .pause_flag = true, .kubelet_config_map = KJOIN_KUBELET_CONFIG_UNVERSIONED, .static_pods = true,
     .pod_seccomp = true, .pod_priority = true, .arguments = KJOIN_ARGS_SORTED, .sorted_proxy_env = true,
     .authz_mode_extra = true, .startup_from_cluster = true, .etcd_corrupt_check = true, .etcd_watch_progress = true,
     .etcd_probes = KJOIN_ETCD_HEALTH_SERIALIZABLE},
    {.since = 30, .exclude_lb_label = true, .control_plane_taint = true, .leaf_basic_constraints = true,
     .whole_control_plane_join = true, .csr_usages_client_first = true, .cluster_admins_group = true,
     .etcd_learner = KJOIN_GATE_BETA, .kubelet_client_admins = true, .flexvolume_dir = true, .etcd_tag = "3.5.15-0",
     .pause = "3.9", .pause_flag = true, .kubelet_config_map = KJOIN_KUBELET_CONFIG_UNVERSIONED, .static_pods = true,
     .pod_seccomp = true, .pod_priority = true, .arguments = KJOIN_ARGS_SORTED, .sorted_proxy_env = true,
     .etcd_corrupt_check = true, .etcd_watch_progress = true, .etcd_probes = KJOIN_ETCD_HEALTH_SERIALIZABLE},
    {.since = 31, .exclude_lb_label = true, .control_plane_taint = true, .leaf_basic_constraints = true,
     .whole_control_plane_join = true, .csr_usages_client_first = true, .cluster_admins_group = true,
     .etcd_learner = KJOIN_GATE_BETA, .kubelet_client_admins = true, .kubelet_local_mode = KJOIN_GATE_ALPHA,
     .flexvolume_dir = true, .etcd_tag = "3.5.24-0", .pause = "3.10", .pause_flag = true,
     .kubelet_config_map = KJOIN_KUBELET_CONFIG_UNVERSIONED, .static_pods = true, .pod_seccomp = true,
     .pod_priority = true, .arguments = KJOIN_ARGS_SORTED, .sorted_proxy_env = true, .ca_trust_dirs = true,
     .etcd_corrupt_check = true, .etcd_watch_progress = true, .etcd_probes = KJOIN_ETCD_LIVEZ},
    {.since = 32, .exclude_lb_label = true, .control_plane_taint = true, .leaf_basic_constraints = true,
     .whole_control_plane_join = true, .csr_usages_client_first = true, .cluster_admins_group = true,
     .etcd_learner = KJOIN_GATE_GA, .kubelet_client_admins = true, .node_local_cri_socket = KJOIN_GATE_ALPHA,
     .kubelet_local_mode = KJOIN_GATE_ALPHA, .flexvolume_dir = true, .etcd_tag = "3.5.24-0", .pause = "3.10",
     .pause_flag = true, .kubelet_config_map = KJOIN_KUBELET_CONFIG_UNVERSIONED, .static_pods = true,
     .pod_seccomp = true, .pod_priority = true, .arguments = KJOIN_ARGS_APPENDED, .sorted_proxy_env = true,
     .ca_trust_dirs = true, .scheduler_livez = true, .etcd_corrupt_check = true, .etcd_watch_progress = true,
     .etcd_probes = KJOIN_ETCD_LIVEZ},
    {.since = 33, .exclude_lb_label = true, .control_plane_taint = true, .leaf_basic_constraints = true,
     .whole_control_plane_join = true, .csr_usages_client_first = true, .cluster_admins_group = true,
     .etcd_learner = KJOIN_GATE_GA, .kubelet_client_admins = true, .node_local_cri_socket = KJOIN_GATE_ALPHA,
     .kubelet_local_mode = KJOIN_GATE_BETA, .flexvolume_dir = true, .etcd_tag = "3.5.24-0", .pause = "3.10",
     .pause_flag = true, .kubelet_client_admins_until = 12, .kubelet_config_map = KJOIN_KUBELET_CONFIG_UNVERSIONED,
     .static_pods = true, .pod_seccomp = true, .pod_priority = true, .arguments = KJOIN_ARGS_APPENDED,
     .sorted_proxy_env = true, .ca_trust_dirs = true, .scheduler_livez = true, .etcd_corrupt_check = true,
     .etcd_watch_progress = true, .etcd_probes = KJOIN_ETCD_LIVEZ},
    {.since = 34, .exclude_lb_label = true, .control_plane_taint = true, .leaf_basic_constraints = true,
     .whole_control_plane_join = true, .csr_usages_client_first = true, .cluster_admins_group = true,
     .etcd_learner = KJOIN_GATE_GA, .kubelet_client_admins = true, .node_local_cri_socket = KJOIN_GATE_BETA,
     .kubelet_local_mode = KJOIN_GATE_BETA, .flexvolume_dir = true, .etcd_tag = "3.6.5-0", .pause = "3.10.1",
     .pause_flag = true, .kubelet_config_map = KJOIN_KUBELET_CONFIG_UNVERSIONED, .static_pods = true,
     .pod_seccomp = true, .pod_priority = true, .arguments = KJOIN_ARGS_APPENDED, .sorted_proxy_env = true,
     .ca_trust_dirs = true, .scheduler_livez = true, .probe_port_named = true, .etcd_corrupt_check = true,
     .etcd_watch_progress = true, .etcd_flags_by_version = true, .etcd_probes = KJOIN_ETCD_LIVEZ},
    {.since = 35, .exclude_lb_label = true, .control_plane_taint = true, .leaf_basic_constraints = true,
     .whole_control_plane_join = true, .csr_usages_client_first = true, .cluster_admins_group = true,
     .etcd_learner = KJOIN_GATE_GA, .kubelet_client_admins = true, .node_local_cri_socket = KJOIN_GATE_BETA,
     .kubelet_local_mode = KJOIN_GATE_GA, .flexvolume_dir = true, .etcd_tag = "3.6.6-0", .pause = "3.10.1",
     .kubelet_config_map = KJOIN_KUBELET_CONFIG_UNVERSIONED, .static_pods = true, .pod_seccomp = true,
     .pod_priority = true, .arguments = KJOIN_ARGS_APPENDED, .sorted_proxy_env = true, .ca_trust_dirs = true,
     .scheduler_livez = true, .probe_port_named = true, .etcd_corrupt_check = true, .etcd_watch_progress = true,
     .etcd_flags_by_version = true, .etcd_probes = KJOIN_ETCD_LIVEZ},
    {.since = 36, .exclude_lb_label = true, .control_plane_taint = true, .leaf_basic_constraints = true,
     .whole_control_plane_join = true, .csr_usages_client_first = true, .cluster_admins_group = true,
     .etcd_learner = KJOIN_GATE_GA, .node_local_cri_socket = KJOIN_GATE_BETA, .kubelet_local_mode = KJOIN_GATE_GA,
     .etcd_tag = "3.6.8-0", .pause = "3.10.2", .kubelet_config_map = KJOIN_KUBELET_CONFIG_UNVERSIONED,
     .static_pods = true, .pod_seccomp = true, .pod_priority = true, .arguments = KJOIN_ARGS_APPENDED,
     .sorted_proxy_env = true, .ca_trust_dirs = true, .scheduler_livez = true, .probe_port_named = true,
     .etcd_corrupt_check = true, .etcd_watch_progress = true, .etcd_flags_by_version = true,
     .etcd_probes = KJOIN_ETCD_LIVEZ},
    {.since = 37, .exclude_lb_label = true, .control_plane_taint = true, .leaf_basic_constraints = true,
     .whole_control_plane_join = true, .csr_usages_client_first = true, .cluster_admins_group = true,
     .etcd_learner = KJOIN_GATE_GA, .node_local_cri_socket = KJOIN_GATE_GA, .kubelet_local_mode = KJOIN_GATE_GA,
     .etcd_tag = "3.7.0-0", .pause = "3.10.2", .kubelet_config_map = KJOIN_KUBELET_CONFIG_UNVERSIONED,
     .static_pods = true, .pod_seccomp = true, .pod_priority = true, .arguments = KJOIN_ARGS_APPENDED,
     .sorted_proxy_env = true, .ca_trust_dirs = true, .scheduler_livez = true, .probe_port_named = true,
     .etcd_corrupt_check = true, .etcd_watch_progress = true, .etcd_flags_by_version = true,
     .etcd_probes = KJOIN_ETCD_LIVEZ},
};

bool kjoin_gate_on(kjoin_gate_stage stage, int set)
{
    switch (stage) {
    case KJOIN_GATE_GA: return true;
    case KJOIN_GATE_BETA: return set != 0;
    case KJOIN_GATE_ALPHA: return set == 1;
    case KJOIN_GATE_NONE: break;
    }
    return false;
}

int kjoin_release_minor(int minor) { return minor ? minor : KJOIN_NEWEST_KUBEADM_MINOR; }

const kjoin_release *kjoin_release_of(int minor)
{
    size_t i = 0;
    minor = kjoin_release_minor(minor);
    while (i + 1 < sizeof(rows) / sizeof(rows[0]) && rows[i + 1].since <= minor)
        i++;
    return &rows[i];
}
