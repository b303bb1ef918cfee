/* The node side of a worker join, after kubeadm's phases: preflight (the
 * machine can run a kubelet), kubelet-start (the cluster's kubelet
 * configuration and the node's flags written, the kubelet started),
 * kubelet-wait-bootstrap (the kubelet has its identity and its Node), and
 * reset (exactly what a join made, removed again). The library's own: not
 * installed, not exported. Messages name fields and check names, never
 * command-line flags. */
#ifndef KJOIN_PRIVATE_NODE_H
#define KJOIN_PRIVATE_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kjoin/err.h>
#include <kjoin/node.h>
#include <kjoin/private/cluster.h>
#include <kjoin/private/context.h>
#include <kjoin/private/record.h>
#include <kjoin/util.h>

/* What a join wrote, for reset: in the Kubernetes directory, mode 0600. */
#define KJOIN_NODE_STATE_NAME KJOIN_RECORD_FILE_NAME /* the join's one record: the node's part is in it */
#define KJOIN_NODE_STATE_MAX KJOIN_RECORD_FILE_MAX

/* The checks that need nothing from the cluster: IsPrivilegedUser, the
 * FileAvailable checks of the files a join writes (a warning for a file an
 * interrupted join of node_name left, as its record proves: the join goes on
 * with it; NULL: no such rule), CRI, KubeletVersion (the
 * binary and a release kjoin supports), Port-10250, Swap (a warning here),
 * and the forwarding FileContent check (for endpoint_host's family when it is
 * an IP literal; it may be NULL). Every finding is in *report (also
 * on failure). Errors: KJOIN_E_USAGE when an error was not ignored. */
kjoin_code kjoin_preflight_node(const kjoin_node_spec *spec, const char *node_name, const char *endpoint_host,
                                kjoin_preflight_report *report, kjoin_err *err);

/* The checks that need the cluster, run before anything is written:
 * KubeletVersion against the API server's minor version (kubeadm's skew:
 * not newer, at most three minors older) and Swap against the cluster
 * kubelet configuration's failSwapOn. Findings are added to *report.
 * Errors: KJOIN_E_USAGE. */
/* The kit a module's own preflight checks use (a control-plane node's,
 * kjoin_preflight_control_plane): a finding added to report (an error
 * unless named in spec's ignore list), whether a check is ignored, whether
 * a port can be listened on at addr (NULL: any), kubeadm's FileAvailable
 * check of path, the machine's memory in MiB (-1 unknown), the ImagePull
 * check of images (a dry run: a missing one is a warning, not pulled), and
 * the verdict of the findings from index from on (KJOIN_E_USAGE naming the
 * failed ones). */
void kjoin_preflight_add(kjoin_preflight_report *r, const kjoin_node_spec *s, bool error, const char *name,
                         const char *fmt, ...) __attribute__((format(printf, 5, 6)));
bool kjoin_preflight_ignored(const kjoin_node_spec *s, const char *name);
bool kjoin_preflight_port_free(const char *addr, int port);
/* The last error line kubelet.service's journal has about needle (a Pod,
 * "kube-system/etcd-cp-2") since the wall clock's second since, printable,
 * into out; false when there is none or no journal (a kubelet without
 * systemd). */
bool kjoin_node_journal_error_about(const char *needle, int64_t since, char *out, size_t cap);
void kjoin_preflight_file_available(kjoin_preflight_report *r, const kjoin_node_spec *s, const char *path);
long kjoin_preflight_mem_mib(const kjoin_node_spec *s);
void kjoin_preflight_images(kjoin_preflight_report *r, const kjoin_node_spec *s, const char *const *images, size_t n,
                            bool dry_run);
kjoin_code kjoin_preflight_verdict(const kjoin_preflight_report *r, size_t from, kjoin_err *err);

kjoin_code kjoin_preflight_cluster(const kjoin_node_spec *spec, int server_minor, bool fail_swap_on,
                                   kjoin_preflight_report *report, kjoin_err *err);

/* The kubelet's "Kubernetes v1.37.2" into version and *minor. Errors:
 * KJOIN_E_USAGE. */
kjoin_code kjoin_kubelet_version_parse(const char *text, char *version, size_t cap, int *minor, kjoin_err *err);

/* The cluster's kubelet configuration, as the kubelet-config ConfigMap's
 * "kubelet" key holds it, checked: one mapping, kubelet.config.k8s.io/v1beta1
 * KubeletConfiguration. Errors: KJOIN_E_OTHER (malformed). */
typedef struct kjoin_kubelet_config {
    bool fail_swap_on;           /* default true */
    int healthz_port;            /* default 10248; 0 disables it */
    char healthz_address[64];    /* default 127.0.0.1 */
} kjoin_kubelet_config;
/* The kubelet's own defaults, for what a configuration leaves out. */
#define KJOIN_KUBELET_CONFIG_DEFAULTS {.fail_swap_on = true, .healthz_port = 10248, .healthz_address = "127.0.0.1"}
kjoin_code kjoin_kubelet_config_parse(const char *yaml, size_t len, kjoin_kubelet_config *out, kjoin_err *err);

/* Whether the kubeadm of release 1.minor writes the node's runtime into
 * /var/lib/kubelet/instance-config.yaml (the NodeLocalCRISocket gate: on
 * from 1.34, always from 1.36, asked for in 1.32 and 1.33) rather than
 * into the flags file and the Node's kubeadm.alpha.kubernetes.io/cri-socket
 * annotation. */
bool kjoin_kubeadm_instance_config(int minor, int node_local_cri_socket);
/* instance-config.yaml as kubeadm writes it: containerRuntimeEndpoint,
 * quoted. Newly-allocated. Errors: KJOIN_E_USAGE (a value Go's quoting would
 * escape). */
kjoin_code kjoin_kubelet_instance_config(const char *cri_socket, char **out, kjoin_err *err);

struct kjoin_patchset;
/* config.yaml as kubeadm writes it: the cluster's kubelet configuration
 * (yaml), the patches applied in order, then runtime_endpoint (when not
 * NULL) as containerRuntimeEndpoint, as kubeadm applies the instance
 * configuration. With neither, the cluster's text as it is. Newly-allocated.
 * Errors: KJOIN_E_USAGE (a patch that does not apply, named), KJOIN_E_OTHER. */
kjoin_code kjoin_kubelet_config_render(const char *yaml, size_t len, const struct kjoin_patchset *patches,
                                       const char *runtime_endpoint, char **out, kjoin_err *err);

/* The node's flags file (kubeadm-flags.env): KUBELET_KUBEADM_ARGS="...",
 * sorted by name: the runtime endpoint unless cri_socket is NULL (and
 * --container-runtime=remote where kubeadm_minor's release writes it and
 * the kubelet of kubelet_minor takes it; 0: unknown, not written),
 * --hostname-override unless the name is the
 * host's, --pod-infra-container-image when pause_image is not NULL, the
 * spec's taints, then its extra arguments ("name=value"), which override
 * kjoin's own. Newly-allocated into *out. Errors: KJOIN_E_USAGE (a
 * value the systemd environment file cannot hold as it is: quotes,
 * backslashes, whitespace, "$", control characters, bytes not UTF-8). */
kjoin_code kjoin_kubelet_flags_env(const kjoin_node_spec *spec, const kjoin_node_name *name, const char *cri_socket,
                                   int kubeadm_minor, int kubelet_minor, const char *pause_image, const char *node_ip,
                                   char **out, kjoin_err *err);

/* The files a join writes on the node, each with one rule for a file that
 * is there already (docs/join.md, "What --force means"). */
typedef enum kjoin_node_file_kind {
    KJOIN_NODE_FILE_BOOTSTRAP_KUBECONFIG, /* 0600; other content kept unless force */
    KJOIN_NODE_FILE_CA_CERT,              /* 0644; other content kept unless force */
    KJOIN_NODE_FILE_KUBELET_CONFIG,       /* 0644; replaced, as kubeadm does */
    KJOIN_NODE_FILE_FLAGS_ENV,            /* 0644; replaced, as kubeadm does */
    KJOIN_NODE_FILE_RECORD,               /* 0600; replaced (reset's record) */
    KJOIN_NODE_FILE_INSTANCE_CONFIG,      /* 0644; replaced, as kubeadm does */
    KJOIN_NODE_FILE_PROXY_DROPIN          /* 0600 (it may hold the proxy's password); replaced */
} kjoin_node_file_kind;

/* The one writer of every node file: atomically, with its kind's mode and
 * rule (kjoin_file_write_mode). Errors: KJOIN_E_OUTPUT (refused or failed),
 * KJOIN_E_USAGE (a directory refused). */
kjoin_code kjoin_node_file_write(kjoin_node_file_kind kind, const char *path, const void *data, size_t len, bool force,
                                 kjoin_write_result *result, kjoin_err *err);
unsigned kjoin_node_file_mode(kjoin_node_file_kind kind);
/* Checks, before anything is written, that every file of a whole join can
 * go where paths put it: its directory, or the nearest one above it that
 * exists, is no symlink, root's and writable by no one else (no shared
 * sticky directory: the token must not sit where others write). Errors:
 * KJOIN_E_USAGE naming the file and the rule. */
kjoin_code kjoin_node_check_destinations(const kjoin_node_paths *paths, kjoin_err *err);
/* Where a node file of kind is, the defaults filled in, into out (cap
 * bytes; "" when it does not fit). */
void kjoin_node_file_path(const kjoin_node_paths *paths, kjoin_node_file_kind kind, char *out, size_t cap);


/* One worker join's node side, shared by its steps in order: fill the
 * inputs, run the steps the join needs, then kjoin_node_join_release(). */

typedef struct kjoin_node_join {
    /* Inputs, borrowed: */
    const kjoin_node_spec *spec;
    const struct kjoin_join_context *cx; /* the join's one context: its deadline, stage bounds, IDs and log, the
                                        * node's name, the trusted CA, the bootstrap client, the cluster read, the
                                        * patches */
    const char *bootstrap_kubeconfig;  /* the verified bootstrap kubeconfig (text); NULL for the wait alone */
    size_t bootstrap_len;
    const char *kubelet_bootstrap;     /* what is written as the kubelet's bootstrap kubeconfig (and its server
                                        * recorded), when not the above: a control-plane node's, its own API
                                        * server's; the cluster is still read with the above */
    size_t kubelet_bootstrap_len;
    const char *kubelet_server;        /* with kubelet_bootstrap: the server it names */
    /* What the steps found and did: */
    kjoin_preflight_report report;     /* preflight's findings; the runtime and kubelet found */
    kjoin_kubelet_start_result result;
    /* Between the steps: */
    kjoin_kubelet_config kubelet;      /* the cluster's (after check) or the node's (the wait alone) */
    bool checked;                      /* kjoin_kubelet_check passed */
    bool binding_known;                /* the API server said who the token is (1.27+) */
    bool bound;                        /* ... and that it is bound to this node (kjoin approver's to approve) */
    char *config_yaml, *flags_env;     /* what kubelet-start writes, once checked */
    char *instance_yaml;               /* instance-config.yaml; NULL when the release writes none */
    char kubelet_said[400];            /* the kubelet's last error line when the wait failed over it; else "" */
    char *proxy_dropin[2];             /* with a proxy: kubelet's and containerd's drop-ins, once checked */
    int64_t t0;
} kjoin_node_join;


/* Runs every check (none stops the others) through api, for node name and
 * the trusted CA (PEM). The verdict: KJOIN_OK when all passed, else the
 * first failure's code (KJOIN_E_TOKEN_REJECTED, KJOIN_E_USAGE: a Ready
 * Node of that name, KJOIN_E_API: no kubelet configuration or the CSRs need
 * approval by hand, KJOIN_E_TRUST: the clock) with every problem said. */
kjoin_code kjoin_join_check_cluster(struct kjoin_kubeapi *api, const char *node_name, const char *ca_pem, size_t ca_len,
                                    kjoin_join_check *out, kjoin_err *err);
/* The check's images: the runtime's (at cri_socket, or kubeadm's known
 * sockets) sandbox image and kube-proxy's as kubeadm names it for the
 * cluster, and which of them the runtime lacks, into out's images_*.
 * Errors: the CRI's and the API's. */
kjoin_code kjoin_join_check_images(struct kjoin_kubeapi *api, const char *cri_socket, kjoin_join_check *out,
                                   kjoin_err *err);

/* kubelet-start's cluster checks, with the bootstrap identity: no Ready
 * Node of this name, the kubelet-config ConfigMap, kubeadm's
 * ClusterConfiguration, and (preflight) KubeletVersion's skew and Swap
 * against the cluster; the files' contents made ready. Nothing is written.
 * Errors: KJOIN_E_USAGE (a check, a Ready Node of that name), KJOIN_E_API
 * (refused or missing), KJOIN_E_OTHER (malformed). */
kjoin_code kjoin_kubelet_check(kjoin_node_join *j, bool preflight, kjoin_err *err);
/* kubelet-start's writes: the record, the bootstrap kubeconfig, config.yaml,
 * kubeadm-flags.env and the CA, each by its rule (the kubelet is stopped
 * first under systemd). In a dry run (the context's dry_run) each goes
 * under its root, the node's copied there first, nothing is stopped, and
 * the record and the files still name the node's paths. Errors:
 * KJOIN_E_OUTPUT, KJOIN_E_USAGE. */
kjoin_code kjoin_kubelet_write(kjoin_node_join *j, kjoin_err *err);
/* The shell line that starts the kubelet without systemd, as kubeadm's
 * drop-in does: sh -c 'set -f; . FLAGS_ENV; exec KUBELET
 * --bootstrap-kubeconfig=... --kubeconfig=... --config=...
 * $KUBELET_KUBEADM_ARGS', every path quoted for the shell. Errors:
 * KJOIN_E_USAGE (too long for cap). */
kjoin_code kjoin_kubelet_start_command(const char *kubelet, const kjoin_node_paths *paths, char *out, size_t cap,
                                       kjoin_err *err);
/* kubelet-start's last step: systemctl restart kubelet, or (without systemd)
 * the command that starts it in result.start_command. Errors: KJOIN_E_OTHER. */
kjoin_code kjoin_kubelet_launch(kjoin_node_join *j, kjoin_err *err);
/* kubelet-wait-bootstrap: healthz, a usable kubelet.conf and the Node, by the
 * deadline; then the bootstrap kubeconfig removed. Errors: KJOIN_E_TIMEOUT
 * (the message has the last thing seen and the kubelet's last log line). */
kjoin_code kjoin_kubelet_wait(kjoin_node_join *j, kjoin_err *err);
void kjoin_node_join_release(kjoin_node_join *j);


/* Stops the kubelet (systemd) and removes what the join recorded, each file
 * only when it still holds what was written (the kubelet's own identity
 * files and state only when they are what a kubelet makes), never through a
 * symlink or across a mount point, and the directories the join created
 * when empty; the record last. Idempotent. Errors: KJOIN_E_USAGE (a record
 * that is not kjoin's or is malformed), KJOIN_E_OUTPUT. */
kjoin_code kjoin_kubelet_reset(const kjoin_kubelet_reset_spec *spec, kjoin_kubelet_reset_result *out, kjoin_err *err);
void kjoin_kubelet_reset_result_release(kjoin_kubelet_reset_result *r);

/* kjoin_kubelet_reset's two halves, for a reset that does more in between (a
 * control-plane node's: kjoin_reset). The first reads the record (out
 * fresh: had_state, node_name) and stops the kubelet; every refusal (a
 * record not kjoin's, a kubelet systemd cannot stop, a kubelet running
 * without systemd) comes from it, before anything is removed. The second
 * removes, into the same out. Errors: as kjoin_kubelet_reset (KJOIN_E_OTHER: the
 * kubelet did not stop). */
kjoin_code kjoin_kubelet_reset_stop(const kjoin_kubelet_reset_spec *spec, kjoin_kubelet_reset_result *out, kjoin_err *err);
kjoin_code kjoin_kubelet_reset_remove(const kjoin_kubelet_reset_spec *spec, kjoin_kubelet_reset_result *out, kjoin_err *err);
/* kjoin_kubelet_reset_remove with the directories the join made left to
 * the caller (a reset that undoes the control plane's part too: every
 * directory at once, deepest first): *dirs gets them, and *reporter what
 * kjoin_written_undo_parts needs to tell this part what it did. */
typedef struct kjoin_kubelet_reset_reporter {
    const kjoin_kubelet_reset_spec *spec;
    kjoin_kubelet_reset_result *out;
} kjoin_kubelet_reset_reporter;
void kjoin_kubelet_reset_report(void *reporter, const char *path, kjoin_undo what, const char *why);
kjoin_code kjoin_kubelet_reset_remove_files(const kjoin_kubelet_reset_spec *spec, kjoin_kubelet_reset_result *out,
                                            kjoin_written *dirs, kjoin_err *err);
/* The reason a directory the join made was left, when it held others' files
 * (a later step may empty it: kjoin_reset tries again). */
#define KJOIN_RESET_NOT_EMPTY "not empty: it holds files the join did not make"

/* The container runtime the join's kubelet used (its instance-config.yaml,
 * else kubeadm-flags.env), into sock ("" when neither names one). */
void kjoin_reset_runtime(const kjoin_node_paths *paths, char *sock, size_t cap);
/* Stops every container the kubelet started there (the Pods' sandboxes and
 * containers): crictl removes the Pods (rmp --force --all), else
 * containerd's ctr kills their tasks (namespace k8s.io). *n: how many.
 * Errors: KJOIN_E_OTHER (no client, or the runtime refused: the message
 * says which), KJOIN_E_TIMEOUT (still running after 30 s). */
kjoin_code kjoin_reset_pods(const char *sock, size_t *n, kjoin_err *err);

/* The record a join writes (KJOIN_NODE_STATE_NAME), parsed and checked:
 * clean absolute paths, SHA-256 digests; each file under the node's
 * directories or one of the outputs the record names (the bootstrap
 * kubeconfig and the CA, wherever the join was told to put them); each
 * created directory one on the way to such a file.
 * For the fuzzer and reset. Errors: KJOIN_E_USAGE. */
#define KJOIN_NODE_STATE_MAX_ENTRIES 256   /* names in the kubelet directory before the join */
#define KJOIN_NODE_STATE_MAX_MOUNTS 16   /* mounts at or below the kubelet directory before the join */
/* What kubelet-start wrote the kubelet's files from, beyond the cluster's
 * configuration: kept in the record ("kubeletInputs") so kjoin sync makes
 * them again as the join would now. */
#define KJOIN_NODE_INPUTS_MAX_ARGS 32
typedef struct kjoin_node_inputs {
    bool has;
    char cri_socket[320];              /* the runtime's endpoint */
    char patches_dir[4096];            /* kubeadm's patches directory, absolute; "" none */
    char node_ip[130];                 /* the flags file's --node-ip; "" none */
    bool hostname_override;            /* the node's name is not the host's */
    size_t n_taints;
    char taints[KJOIN_NODE_INPUTS_MAX_ARGS][320];
    size_t n_extra_args;               /* kubeletExtraArgs, "name=value" */
    char extra_args[KJOIN_NODE_INPUTS_MAX_ARGS][1024];
} kjoin_node_inputs;
typedef struct kjoin_node_state {
    char join_id[40];
    char server[512];
    char node_name[254];
    kjoin_written written;             /* each file with its digest; the directories the join created on the way */
    size_t n_kubelet_entries;          /* what the kubelet directory held before the join */
    char kubelet_entries[KJOIN_NODE_STATE_MAX_ENTRIES][256];
    size_t n_pki_entries;              /* what its pki/ held before the join (none in records before it was kept) */
    char pki_entries[KJOIN_NODE_STATE_MAX_ENTRIES][256];
    bool has_mounts;                   /* the record says which mounts were there (records before it was kept do not) */
    size_t n_mounts;                   /* mount points at or below the kubelet directory before the join, once a mount */
    char mounts[KJOIN_NODE_STATE_MAX_MOUNTS][4096];
    kjoin_node_inputs inputs;          /* what kubelet-start wrote from (has: absent in records before it was kept) */
} kjoin_node_state;
kjoin_code kjoin_node_state_parse(const char *json, size_t len, const kjoin_node_paths *paths, kjoin_node_state *out,
                                  kjoin_err *err);

/* Whether a Node, as the API server answers it (JSON), has the condition
 * Ready=True. Untrusted: nulls, other types and garbage are not Ready. */
bool kjoin_node_ready(const char *json, size_t len);

#endif
