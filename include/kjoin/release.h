/* What each kubeadm release does that kjoin follows, as one table: a row
 * for each release where kubeadm changed something kjoin writes or
 * checks, looked up once from the cluster's release (or the kubelet's).
 * The next release is one row (pkg/release/release.c). */
#ifndef KJOIN_RELEASE_H
#define KJOIN_RELEASE_H

#include <stdbool.h>

/* The releases kjoin follows: the oldest, the newest (a cluster newer than
 * that is taken as the newest). */
#define KJOIN_OLDEST_KUBEADM_MINOR 20
#define KJOIN_NEWEST_KUBEADM_MINOR 37

/* kubeadm's NodeLocalCRISocket feature gate, by stage. */
typedef enum { KJOIN_GATE_NONE, KJOIN_GATE_ALPHA, KJOIN_GATE_BETA, KJOIN_GATE_GA } kjoin_gate_stage;

typedef struct kjoin_release {
    int since;                      /* the first minor release this row holds for */
    bool leaf_basic_constraints;    /* 1.21: the node's leaf certificates carry basicConstraints CA:FALSE */
    bool whole_control_plane_join;  /* 1.22: no ClusterStatus (update-status) to keep: kjoin joins a control-plane
                                     * node whole */
    bool control_plane_role;        /* 1.24: the node-role.kubernetes.io/control-plane label and taint (before: master) */
    bool kubelet_runtime_flag;      /* before 1.24 (the kubelet's release): --container-runtime=remote beside the
                                     * endpoint */
    bool csr_usages_client_first;   /* 1.27: the kubelet asks for "client auth" before "key encipherment" */
    bool cluster_admins_group;      /* 1.29: admin.conf and the etcd clients' O=kubeadm:cluster-admins (not
                                     * system:masters) */
    bool etcd_learner;              /* 1.29: a joining etcd member is a learner first, then promoted */
    bool kubelet_client_admins;     /* 1.29 to 1.35: apiserver-kubelet-client in O=kubeadm:cluster-admins */
    kjoin_gate_stage node_local_cri_socket; /* 1.32 alpha, 1.34 beta (1.36's GA still reads a gate set off), 1.37
                                     * gone: instance-config.yaml holds the runtime's endpoint instead of
                                     * kubeadm-flags.env */
    bool kubelet_local_mode;        /* 1.33: a control-plane node's kubelet bootstraps through its own API server */
    int manifests;                  /* the static Pods' rules kjoin writes for it: 20 (1.20's), 37 (1.37's, which
                                     * 1.34 to 1.36 share but for the two below), 0 none */
    bool flexvolume_dir;            /* to 1.35: the controller manager mounts the flexvolume plugin directory */
    const char *etcd_tag;           /* the etcd image's tag (kubeadm's SupportedEtcdVersion); NULL: not known */
    const char *pause;              /* the pause image's tag (kubeadm's constants.PauseVersion) */
    bool pause_flag;                /* 1.21 to 1.34: kubeadm-flags.env pins it with --pod-infra-container-image
                                     * (for every runtime; 1.20 only for Docker's shim, which kjoin does not
                                     * join with) */
    int kubelet_client_admins_until; /* with kubelet_client_admins: the first patch of this minor whose kubeadm
                                     * dropped the group (a cherry-pick: 1.33.12); 0: none did */
    bool unversioned_kubelet_config; /* 1.24: the kubelet's ConfigMap is kube-system/kubelet-config (before:
                                     * kubelet-config-1.<minor>) */
} kjoin_release;

/* The row for release 1.minor (0: the newest; older than the oldest: the
 * oldest's). Never NULL. */
const kjoin_release *kjoin_release_of(int minor);

/* minor itself, or the newest's for 0. */
int kjoin_release_minor(int minor);

#endif
