/* The node in a join's specification and outcome (kjoin/phases.h): where
 * its files go, what the kubelet is told, and what preflight, kubelet-start,
 * kubelet-wait-bootstrap and reset report. The steps themselves are the
 * library's own (pkg/include/kjoin/private/node.h). */
#ifndef KJOIN_NODE_H
#define KJOIN_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kjoin/err.h>
#include <kjoin/util.h>

#define KJOIN_NODE_KUBERNETES_DIR "/etc/kubernetes"
#define KJOIN_NODE_KUBELET_DIR "/var/lib/kubelet"
#define KJOIN_NODE_KUBELET_PORT 10250

/* Where the node's files live; NULL fields take the defaults above. */
typedef struct kjoin_node_paths {
    const char *kubernetes_dir;       /* bootstrap-kubelet.conf, kubelet.conf, the state */
    const char *kubelet_dir;          /* config.yaml, kubeadm-flags.env, pki/ */
    const char *bootstrap_kubeconfig; /* NULL: <kubernetes_dir>/bootstrap-kubelet.conf */
    const char *kubelet_kubeconfig;   /* NULL: <kubernetes_dir>/kubelet.conf */
    const char *ca_cert_path;         /* NULL: <kubernetes_dir>/pki/ca.crt */
    const char *systemd_unit_dir;     /* NULL: /etc/systemd/system: the proxy's drop-ins for kubelet.service and
                                       * containerd.service */
} kjoin_node_paths;

#define KJOIN_PREFLIGHT_MAX 16

typedef struct kjoin_preflight_finding {
    char name[4200];     /* kubeadm's check name: "Port-10250", "CRI", "FileAvailable-<path>" (the whole path) */
    char message[480];   /* what is wrong and how to fix it */
    bool error;          /* false: a warning */
    bool ignored;        /* an error named in the ignore list (or "all") */
} kjoin_preflight_finding;

typedef struct kjoin_preflight_report {
    size_t n;
    kjoin_preflight_finding items[KJOIN_PREFLIGHT_MAX];
    char cri_socket[320];       /* the runtime's endpoint, "unix:///var/run/containerd/containerd.sock" */
    char kubelet[4096];         /* the kubelet binary found */
    char kubelet_version[64];   /* "v1.37.2" */
    int kubelet_minor;          /* 37; 0 when unknown */
} kjoin_preflight_report;

/* Everything the node side of a join is told: one structure, passed down
 * whole. Strings are borrowed; NULL takes the default named. */
/* kubeadm's nodeRegistration.imagePullPolicy, for the images of a
 * control-plane node's static Pods. */
typedef enum {
    KJOIN_PULL_IF_NOT_PRESENT, /* the default: pulled when the runtime lacks it */
    KJOIN_PULL_ALWAYS,         /* pulled each time */
    KJOIN_PULL_NEVER,          /* never pulled: a missing image fails the check */
} kjoin_pull_policy;

typedef struct kjoin_node_spec {
    kjoin_node_paths paths;
    const char *name;           /* NULL: the host name; kjoin_node_name_resolve decides (kubeadm's rule) */
    const char *cri_socket;     /* a path or unix:// URL; NULL: the first of containerd's and CRI-O's that exists */
    const char *kubelet;        /* the kubelet binary; NULL: "kubelet" on PATH */
    const char *ignore_preflight; /* comma-separated check names, or "all"; case does not matter */
    const char *const *taints;  /* "key=value:Effect" or "key:Effect", registered with the Node */
    size_t n_taints;
    bool taints_set;            /* taints were given, an empty list too (a control-plane node then gets no
                                 * default taint) */
    const char *const *extra_args; /* kubelet flags "name=value", over kjoin's own */
    size_t n_extra_args;
    const char *patches_dir;    /* kubeadm's patches directory; its kubeletconfiguration patches go into config.yaml */
    const char *kubelet_log;    /* without systemd: the file the kubelet's output goes to (the start command
                                   appends to it); the wait reads the kubelet's last error there */
    bool force;                 /* replace a bootstrap kubeconfig or CA that holds something else */
    kjoin_pull_policy pull_policy; /* the ImagePull check (a control-plane join): kubeadm's imagePullPolicy */
    bool pull_parallel;            /* kubeadm's imagePullSerial false: the images pulled at once (default: one
                                    * at a time) */
    const char *proxy;          /* http(s)://[USER:PASSWORD@]HOST:PORT: systemd drop-ins give the kubelet and
                                 * containerd HTTP_PROXY, HTTPS_PROXY and a NO_PROXY of the cluster's own
                                 * addresses; containerd restarted when its drop-in changed. NULL: none */
    const char *no_proxy;       /* more comma-separated NO_PROXY entries (a registry mirror inside), with proxy */
    const char *images;         /* an image archive (docker or OCI), imported into containerd's k8s.io namespace
                                 * with its ctr before the kubelet starts (a node without a way to a registry) */
    const char *node_ip;        /* the kubelet's --node-ip: one address, or one of each family; NULL: on a dual-stack
                                 * cluster the addresses of the default routes' interfaces when the node has both,
                                 * else the kubelet's own choice */
    /* The machine, for tests and unusual hosts: */
    const char *proc_dir;       /* NULL: "/proc" */
    const char *systemd_dir;    /* NULL: "/run/systemd/system": systemd runs when it exists */
    int kubelet_port;           /* 0: KJOIN_NODE_KUBELET_PORT */
    int control_plane_ports[4]; /* scheduler, controller manager, etcd's client and peer ports; 0: kubeadm's
                                 * (10259, 10257, 2379, 2380) */
    bool control_plane;         /* a control-plane node: the CA file is its own, not the join's to check */
    bool not_root_ok;           /* skip IsPrivilegedUser (tests of a library caller) */
} kjoin_node_spec;
#define KJOIN_NODE_MAX_FILES 12
#define KJOIN_NODE_MAX_STEPS 8

typedef struct kjoin_node_file {
    char path[4096];
    unsigned mode;
} kjoin_node_file;

typedef struct kjoin_node_step {
    const char *name;            /* static text: "node-check", "write", "start", "kubelet-healthz", ... */
    int64_t ms;
} kjoin_node_step;

typedef struct kjoin_kubelet_start_result {
    char config_map[64];               /* "kubelet-config" or "kubelet-config-1.20" */
    char kubernetes_version[64];       /* the ClusterConfiguration's kubernetesVersion; "" without one */
    int server_minor;
    int kubeadm_minor;                 /* the release whose kubeadm the files follow: the ClusterConfiguration's,
                                        * else the API server's */
    bool instance_config;              /* the runtime in instance-config.yaml (else in the flags file and the
                                        * Node's cri-socket annotation) */
    char pause_image[400];             /* the pause image the flags file pins (that release's kubeadm); "" none */
    bool cri_socket_annotated;         /* the Node got kubeadm's cri-socket annotation */
    size_t n_patches;                  /* patches applied to config.yaml */
    bool systemd;
    char start_command[8192];          /* without systemd: what starts the kubelet */
    size_t n_files;
    kjoin_node_file files[KJOIN_NODE_MAX_FILES];
    size_t n_steps;
    kjoin_node_step steps[KJOIN_NODE_MAX_STEPS];
    bool node_registered;
    bool bootstrap_removed;
    char node_ip[130];                 /* the flags file's --node-ip (given, or found for a dual-stack cluster); "" none */
    bool node_ip_found;                /* ... found: the addresses of the default routes' interfaces */
    char no_proxy[2048];               /* with a proxy: the NO_PROXY its drop-ins hold; "" none */
    bool containerd_restarted;         /* containerd restarted for its changed proxy drop-in */
    char sandbox_image[256];           /* the runtime's sandbox image, as it says; "" unknown */
    char kube_proxy_image[320];        /* kube-proxy's, as kubeadm's addon names it for the cluster; "" unknown */
    char images_missing[700];          /* those of the two the runtime lacks, comma-separated (after an import) */
    size_t images_imported;            /* images the archive held, imported */
    char images_imported_names[700];
} kjoin_kubelet_start_result;
/* kubeadm's timeouts (a v1beta4 JoinConfiguration's `timeouts`), each
 * bounding its stage within the join's one deadline (whichever ends first
 * ends the stage); 0: the stage has no bound of its own. */
typedef struct kjoin_stage_timeouts {
    int64_t kubelet_health_ms; /* kubeletHealthCheck: until the kubelet's healthz answers */
    int64_t tls_bootstrap_ms;  /* tlsBootstrap: then until its client certificate and its Node */
    int64_t control_plane_ms;  /* controlPlaneComponentHealthCheck: wait-control-plane */
    int64_t etcd_ms;           /* etcdAPICall: etcd-join's calls and its wait for the member */
    int64_t api_call_ms;       /* kubernetesAPICall: each API request, its retries included */
} kjoin_stage_timeouts;
/* What kjoin join --check asks the cluster, with the bootstrap identity,
 * before anything on the node changes. */
typedef struct kjoin_join_check {
    bool token_valid;                  /* the API server authenticates the token */
    bool node_name_free;               /* no Ready Node of this name */
    bool kubelet_config;               /* the cluster's kubelet configuration is there */
    bool csr_auto_approved;            /* the token may create node client CSRs the cluster approves by itself
                                        * (create certificatesigningrequests/nodeclient) */
    bool csr_approver;                 /* else: a kjoin approver holds its Lease (a node-bound token's CSR) */
    char approver[256];                /* its holder, when one was read */
    bool clock_ok;                     /* this machine's clock is within the cluster CA's validity */
    char problems[900];                /* each check that failed, "; " between them ("" when none) */
    bool images_checked;               /* the runtime was asked for the images the node needs (not a verdict: */
    char images_sandbox[256];          /* the kubelet has the missing ones pulled), its sandbox image, */
    char images_kube_proxy[320];       /* kube-proxy's as kubeadm names it for the cluster, */
    char images_missing[700];          /* and those it lacks, comma-separated */
} kjoin_join_check;
/* A file a dry run would write: its path, mode and content, shown with
 * tokens masked and control characters replaced. */
typedef struct kjoin_planned_file {
    char path[4096];
    unsigned mode;
    char *content;
} kjoin_planned_file;
#define KJOIN_PLANNED_MAX 64 /* a control-plane node's: about 40 */
typedef struct kjoin_planned_files {
    size_t n;
    kjoin_planned_file files[KJOIN_PLANNED_MAX];
} kjoin_planned_files;
typedef struct kjoin_kubelet_reset_spec {
    kjoin_node_paths paths;
    const char *systemd_dir;           /* as for kjoin_kubelet_start */
    bool dry_run;                      /* decide and report (removed: what would be), change nothing */
    kjoin_log_fn log;
    void *log_ctx;
} kjoin_kubelet_reset_spec;

typedef struct kjoin_kubelet_reset_result {
    bool had_state;                    /* false: no join to undo (nothing done) */
    bool kubelet_stopped;              /* through systemd */
    char node_name[254];
    char **removed;                    /* paths removed */
    size_t n_removed;
    char **kept;                       /* "path: why it was left" */
    size_t n_kept;
} kjoin_kubelet_reset_result;
/* The images a node of the cluster needs that it would pull: the sandbox
 * image kubeadm's release names for the cluster (imageRepository/pause)
 * and each DaemonSet's containers' images (kube-proxy's, the network
 * plugin's), each once, with where it comes from. For an image archive
 * (kjoin join --images) made before a node has a way to a registry. */
#define KJOIN_NODE_IMAGES_MAX 64
typedef struct kjoin_node_image {
    char image[320];
    char source[200]; /* "sandbox (kubeadm 1.37's pause)", "DaemonSet kube-system/kube-proxy" */
} kjoin_node_image;
typedef struct kjoin_node_images {
    size_t n;
    bool truncated;   /* more than KJOIN_NODE_IMAGES_MAX */
    kjoin_node_image items[KJOIN_NODE_IMAGES_MAX];
} kjoin_node_images;
struct kjoin_kubeapi;
/* Asked with an admin's client (kjoin_kubeapi_new): get kube-system's
 * kubeadm-config, list daemonsets. Errors: those of kjoin_kubeapi_request,
 * KJOIN_E_OTHER (a malformed answer). */
kjoin_code kjoin_node_images_list(struct kjoin_kubeapi *api, kjoin_node_images *out, kjoin_err *err);

/* kjoin sync: the kubelet's files of a joined node made again as
 * kubelet-start would write them now (the cluster's kubelet-config for its
 * kubeadm release, the join's recorded patches and flags, the release's
 * instance configuration), compared with the node's by meaning (kubeadm's
 * formatting of the same configuration is no difference), and, unless
 * only checked, written (atomically, each by its rule) and recorded in the
 * join record. Both label the node's own Node with the outcome (its
 * credentials, kubelet.conf, may). */
#define KJOIN_SYNC_SPEC_VERSION 1
typedef struct kjoin_sync_spec {
    unsigned version;                  /* KJOIN_SYNC_SPEC_VERSION */
    kjoin_node_paths paths;
    bool check;                        /* compare and label only: nothing on the node changes */
    bool restart;                      /* after a change, restart the kubelet (systemd) and wait for its health */
    int64_t timeout_ms;                /* one deadline; 0: 1 minute */
    const char *kubelet;               /* the kubelet binary (its version); NULL: "kubelet" on PATH */
    const char *systemd_dir;           /* NULL: "/run/systemd/system" */
    const char *proc_dir;              /* NULL: "/proc" */
    const char *audit_id;              /* sent as Audit-ID; may be NULL */
    kjoin_log_fn log;
    void *log_ctx;
} kjoin_sync_spec;
#define KJOIN_SYNC_SPEC_INIT {.version = KJOIN_SYNC_SPEC_VERSION}

#define KJOIN_SYNC_MAX_FILES 3
#define KJOIN_SYNC_MAX_CHANGES 32
typedef struct kjoin_sync_file {
    char path[4096];
    bool differs;                      /* the node's differs from what kubelet-start would write now */
    bool missing;                      /* ... because it is not there */
    bool written;                      /* sync wrote it */
    size_t n_changes;                  /* what differs, one field each: "maxPods: 110 -> 90", "+ key: value", */
    char changes[KJOIN_SYNC_MAX_CHANGES][320]; /* "- key: value" (values as JSON, each cut at 120 bytes) */
    bool more_changes;                 /* more than KJOIN_SYNC_MAX_CHANGES */
} kjoin_sync_file;

typedef enum kjoin_sync_state {
    KJOIN_SYNC_IN_SYNC,                /* the node's files are what the join would write now, the kubelet runs them */
    KJOIN_SYNC_DRIFTED,                /* a file differs */
    KJOIN_SYNC_RESTART_NEEDED,         /* the files are right, the kubelet started before they were written */
} kjoin_sync_state;

typedef struct kjoin_sync_result {
    char node_name[254];
    char config_map[64];               /* "kubelet-config" */
    int kubeadm_minor;                 /* the cluster's kubeadm release */
    bool flags_kept;                   /* a record without the join's flags: the flags file was left as it is */
    size_t n_files;
    kjoin_sync_file files[KJOIN_SYNC_MAX_FILES];
    bool drift;                        /* a file differed when the run began */
    bool written;                      /* files were written */
    bool restarted;                    /* the kubelet was restarted and answered healthz */
    kjoin_sync_state state;            /* after the run */
    char hash[65];                     /* SHA-256 of the node's config.yaml by meaning after the run (the same on
                                        * nodes that run the same configuration: the flags, per node, left out) */
    bool labeled;                      /* the Node has the labels */
} kjoin_sync_result;

/* The label values (kjoin.io/kubelet-config): "in-sync", "drifted",
 * "restart-needed". */
const char *kjoin_sync_state_name(kjoin_sync_state s);

/* Errors: KJOIN_E_USAGE (no join record, or one kjoin cannot read; a
 * restart without systemd; a patch that no longer applies: nothing
 * written), KJOIN_E_API (the cluster's configuration refused or missing;
 * the Node's labels refused, after the rest is done), KJOIN_E_TIMEOUT (the
 * API server, or the restarted kubelet's health, by the deadline),
 * KJOIN_E_OUTPUT, KJOIN_E_OTHER. out holds what was found and done in every
 * case. */
kjoin_code kjoin_sync(const kjoin_sync_spec *spec, kjoin_sync_result *out, kjoin_err *err);

#endif
