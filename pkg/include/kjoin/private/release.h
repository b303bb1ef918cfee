/* What each kubeadm release does that kjoin follows, as one table: a row
 * for each release where kubeadm changed something kjoin writes or
 * checks, looked up once from the cluster's release (or the kubelet's).
 * The next release is one row (pkg/release/release.c). */
#ifndef KJOIN_RELEASE_H
#define KJOIN_RELEASE_H

#include <stdbool.h>

#include <kjoin/join.h> /* the releases kjoin follows */

/* The newest kubelet that takes --container-runtime (1.27 removed it): the
 * one kubelet-release rule, as the kubelet refuses a flag it does not know. */
#define KJOIN_KUBELET_RUNTIME_FLAG_UNTIL 26

/* A kubeadm feature gate's stage in a release (kjoin_gate_on reads a gate set on, off or not at all by it):
 * NodeLocalCRISocket, ControlPlaneKubeletLocalMode, EtcdLearnerMode. */
typedef enum { KJOIN_GATE_NONE, KJOIN_GATE_ALPHA, KJOIN_GATE_BETA, KJOIN_GATE_GA } kjoin_gate_stage;

/* How kubeadm makes a component's command (util.ArgumentsToCommand): */
typedef enum {
    KJOIN_ARGS_MAP,      /* to 1.28: one map of both, the extra arguments winning, sorted */
    KJOIN_ARGS_SORTED,   /* 1.29 to 1.31: the extra arguments and the defaults they do not name, sorted by name,
                          * then value */
    KJOIN_ARGS_APPENDED, /* 1.32: the defaults they do not name sorted, then the extra arguments in their order */
} kjoin_args_order;

/* Which ConfigMap in kube-system kubeadm reads the kubelet's configuration
 * from (componentconfigs/kubelet.go), as UnversionedKubeletConfigMap moved. */
typedef enum {
    KJOIN_KUBELET_CONFIG_VERSIONED,   /* to 1.22: kubelet-config-1.<minor> */
    KJOIN_KUBELET_CONFIG_EITHER,      /* 1.23 and 1.24: kubelet-config, or, where that cannot be read,
                                       * kubelet-config-1.<minor> */
    KJOIN_KUBELET_CONFIG_UNVERSIONED, /* 1.25: kubelet-config */
} kjoin_kubelet_config_map;

/* The paths kubeadm probes etcd at. */
typedef enum {
    KJOIN_ETCD_HEALTH,              /* to 1.24: /health */
    KJOIN_ETCD_HEALTH_SERIALIZABLE, /* 1.25 to 1.30: /health?exclude=NOSPACE&serializable=true, startup
                                     * /health?serializable=false */
    KJOIN_ETCD_LIVEZ,               /* 1.31: /livez, with /readyz for readiness and startup */
} kjoin_etcd_probes;

typedef struct kjoin_release {
    int since;                      /* the first minor release this row holds for */
    bool leaf_basic_constraints;    /* 1.21: the node's leaf certificates carry basicConstraints CA:FALSE */
    bool whole_control_plane_join;  /* 1.22: no ClusterStatus (update-status) to keep: kjoin joins a control-plane
                                     * node whole */
    /* mark-control-plane (phases/markcontrolplane, util/config's default taints): */
    bool master_label;              /* to 1.23: the node-role.kubernetes.io/master label beside control-plane */
    bool exclude_lb_label;          /* 1.21: node.kubernetes.io/exclude-from-external-load-balancers */
    bool master_taint;              /* to 1.24: node-role.kubernetes.io/master:NoSchedule by default */
    bool control_plane_taint;       /* 1.24: node-role.kubernetes.io/control-plane:NoSchedule by default */
    bool kubelet_runtime_flag;      /* to 1.25: kubeadm-flags.env has --container-runtime=remote beside the
                                     * endpoint (whatever the kubelet; a kubelet from 1.27 refuses it:
                                     * KJOIN_KUBELET_RUNTIME_FLAG_UNTIL) */
    bool csr_usages_client_first;   /* 1.27: the kubelet asks for "client auth" before "key encipherment" */
    bool cluster_admins_group;      /* 1.29: admin.conf and the etcd clients' O=kubeadm:cluster-admins (not
                                     * system:masters) */
    kjoin_gate_stage etcd_learner;  /* EtcdLearnerMode: 1.27 alpha, 1.29 beta, 1.32 GA (locked on, then gone):
                                     * a joining etcd member is a learner first, then promoted */
    bool kubelet_client_admins;     /* 1.29 to 1.35: apiserver-kubelet-client in O=kubeadm:cluster-admins */
    kjoin_gate_stage node_local_cri_socket; /* 1.32 alpha, 1.34 beta (1.36's GA still reads a gate set off), 1.37
                                     * gone: instance-config.yaml holds the runtime's endpoint instead of
                                     * kubeadm-flags.env */
    kjoin_gate_stage kubelet_local_mode; /* ControlPlaneKubeletLocalMode: 1.31 alpha, 1.33 beta, 1.35 GA (locked
                                     * on, then gone): a control-plane node's kubelet bootstraps through its own
                                     * API server */
    bool flexvolume_dir;            /* to 1.35: the controller manager mounts the flexvolume plugin directory */
    const char *etcd_tag;           /* the etcd image's tag (kubeadm's SupportedEtcdVersion); NULL: not known */
    const char *pause;              /* the pause image's tag (kubeadm's constants.PauseVersion) */
    bool pause_flag;                /* 1.21 to 1.34: kubeadm-flags.env pins it with --pod-infra-container-image
                                     * (for every runtime; 1.20 only for Docker's shim, which kjoin does not
                                     * join with) */
    int kubelet_client_admins_until; /* with kubelet_client_admins: the first patch of this minor whose kubeadm
                                     * dropped the group (a cherry-pick: 1.33.12); 0: none did */
    kjoin_kubelet_config_map kubelet_config_map; /* the kubelet's ConfigMap kubeadm reads: kubelet-config-1.<minor>;
                                     * 1.23 and 1.24 kubelet-config, else that; 1.25 kubelet-config */
    /* The static Pods (phases/controlplane, util/staticpod, phases/etcd): */
    bool static_pods;               /* kjoin writes them for this release (not 1.21: never tested) */
    bool apiserver_insecure_port;   /* to 1.21: kube-apiserver --insecure-port=0 */
    bool components_port_zero;      /* to 1.22: the controller manager's and scheduler's --port=0 */
    bool pod_seccomp;               /* 1.22: securityContext.seccompProfile RuntimeDefault */
    bool pod_priority;              /* 1.25: spec.priority 2000001000 beside the class name */
    bool sorted_proxy_env;          /* 1.28: the *_proxy variables sorted by name (1.28 to 1.31 in Go's map order:
                                     * sorted is one of them; before, the environment's order) */
    kjoin_args_order arguments;     /* how a component's command is made from its defaults and extra arguments */
    bool authz_mode_extra;          /* 1.29 only: authorization-mode set among the extra arguments (1.30: a
                                     * default, unless authorization-config is given) */
    bool startup_from_cluster;      /* to 1.29: the startup probes' budget is apiServer.timeoutForControlPlane */
    bool ca_trust_dirs;             /* 1.31: /etc/pki/ca-trust and /etc/pki/tls/certs mounted (before: /etc/pki) */
    bool scheduler_livez;           /* 1.32: the scheduler probed at /livez, with a /readyz readiness probe */
    bool probe_port_named;          /* 1.34: probes on a container port named probe-port */
    bool etcd_ephemeral_storage;    /* to 1.20: etcd requests 100Mi of ephemeral storage */
    bool etcd_corrupt_check;        /* 1.22: etcd checks its data at start */
    bool etcd_watch_progress;       /* 1.25: etcd notifies watch progress every 5s */
    bool etcd_flags_by_version;     /* 1.34: etcd 3.6 or newer takes those two as feature-gates and a plain flag
                                     * (older: experimental-*) */
    kjoin_etcd_probes etcd_probes;  /* the etcd probes' paths */
} kjoin_release;

/* The row for release 1.minor (0: the newest; older than the oldest: the
 * oldest's). Never NULL. */
const kjoin_release *kjoin_release_of(int minor);

/* minor itself, or the newest's for 0. */
int kjoin_release_minor(int minor);

/* Whether kubeadm has a feature on, at its gate's stage, the cluster's
 * featureGates setting it to set (1, 0; -1: not set): GA on, beta unless
 * set off, alpha only when set on, none off. */
bool kjoin_gate_on(kjoin_gate_stage stage, int set);

#endif
