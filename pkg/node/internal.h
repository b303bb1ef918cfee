/* Private to pkg/node. */
#ifndef KJOIN_NODE_INTERNAL_H
#define KJOIN_NODE_INTERNAL_H

#include <sys/types.h>

#include <kjoin/private/node.h>
#include <kjoin/private/safedir.h>
#include <yaml.h>

/* The node's paths with their defaults filled in. */
typedef struct kjoin_node__resolved {
    char kubernetes_dir[2048], kubelet_dir[2048];
    char bootstrap_kubeconfig[4096], kubelet_kubeconfig[4096], ca_cert_path[4096];
    char state[4096];
    char config_yaml[4096], flags_env[4096], instance_config[4096], kubelet_pki[4096];
    char systemd_unit_dir[2048], kubelet_proxy[4096], containerd_proxy[4096]; /* the proxy's drop-ins */
} kjoin_node__resolved;
void kjoin_node__resolve(const kjoin_node_paths *in, kjoin_node__resolved *out);

/* name as execvp would find it (a name with a slash is taken as it is), into
 * out. Errors: KJOIN_E_USAGE ("not found in PATH"). */
kjoin_code kjoin_node__find_program(const char *name, char *out, size_t cap, kjoin_err *err);

/* Runs argv (argv[0] a path), its stdin /dev/null, and collects its stdout
 * and stderr (at most 64 KiB) into *out; killed after timeout_ms. Errors:
 * KJOIN_E_OTHER (cannot run, killed, or a non-zero exit: the message has its
 * last line of output). */
kjoin_code kjoin_node__run(const char *const *argv, int64_t timeout_ms, char **out, kjoin_err *err);

/* systemctl VERB UNIT. Errors: as kjoin_node__run. */
kjoin_code kjoin_node__systemctl_unit(const char *verb, const char *unit, int64_t timeout_ms, kjoin_err *err);

/* proxy.c: a proxy's systemd drop-in for unit ("kubelet", "containerd")
 * into *out (malloc'd): HTTP_PROXY and HTTPS_PROXY, and NO_PROXY. Errors:
 * KJOIN_E_USAGE (a value systemd's Environment= cannot carry),
 * KJOIN_E_OTHER. */
kjoin_code kjoin_node__proxy_dropin(const char *unit, const char *proxy, const char *no_proxy, char **out,
                                    kjoin_err *err);
/* The NO_PROXY of a node (comma-separated, each once, into out): loopback,
 * link-local,
 * the cluster's service and Pod CIDRs, its DNS domain and ".svc", the API
 * server's host, the node's name and addresses, then extra. */
typedef struct kjoin_node__no_proxy_in {
    const char *service_subnet, *pod_subnet, *dns_domain; /* the ClusterConfiguration's; NULL or "" unknown */
    const char *const *hosts;                             /* the API servers' and the node's names and addresses */
    size_t n_hosts;
    const char *extra;                                    /* the operator's, comma-separated */
} kjoin_node__no_proxy_in;
kjoin_code kjoin_node__no_proxy(const kjoin_node__no_proxy_in *in, char *out, size_t cap, kjoin_err *err);
/* A proxy URL the drop-ins can hold: http:// or https://, a host, a port
 * at most, no path. Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_node__proxy_check(const char *proxy, kjoin_err *err);

/* The runtime's socket path: given (a path or unix:// URL), else the
 * first of kubeadm's known ones that exists; NULL: none. */
const char *kjoin_node__runtime_socket(const char *given);

/* images.c: an image archive the join imports (absolute, a readable
 * regular file, containerd's ctr on PATH: into ctr). Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_node__images_check(const char *archive, char *ctr, size_t cap, kjoin_err *err);
/* ctr --address SOCKET --namespace k8s.io images import ARCHIVE; the names
 * it unpacked into names, their number into *n. Errors: KJOIN_E_OTHER. */
kjoin_code kjoin_node__images_import(const char *ctr, const char *cri_socket, const char *archive, int64_t timeout_ms,
                                     char *names, size_t cap, size_t *n, kjoin_err *err);
/* An API server's list of DaemonSets (untrusted): each one's containers'
 * and initContainers' images added to out, each once. Errors:
 * KJOIN_E_OTHER (not a list). */
kjoin_code kjoin_node__daemonset_images(const char *body, size_t len, kjoin_node_images *out, kjoin_err *err);
/* ctr import's output: the names it unpacked (comma-separated) and how many. */
size_t kjoin_node__ctr_imported(const char *output, char *names, size_t cap);
/* Which of images (NULL or "" skipped) the runtime lacks, into missing.
 * Errors: the CRI's. */
kjoin_code kjoin_node__images_missing(const char *cri_socket, const char *const *images, size_t n, char *missing,
                                      size_t cap, kjoin_err *err);

/* Whether systemd runs this machine (sd_booted(3)'s test on dir). */
bool kjoin_node__systemd(const char *dir);

/* systemctl VERB kubelet, within timeout_ms. Errors: as kjoin_node__run,
 * and KJOIN_E_USAGE when there is no systemctl. */
kjoin_code kjoin_node__systemctl(const char *verb, int64_t timeout_ms, kjoin_err *err);

/* What systemd says of kubelet.service (systemctl show): its ActiveState
 * ("active", "activating", "failed"), SubState ("running", "auto-restart")
 * and how often it restarted it (NRestarts). false when systemctl did not
 * tell. */
typedef struct kjoin_node__unit {
    char active[32], sub[32];
    long restarts;
    long main_pid;      /* MainPID: 0 when it does not run */
} kjoin_node__unit;
bool kjoin_node__kubelet_unit(kjoin_node__unit *u);
/* When process pid started, in ms of the wall clock (proc_dir's <pid>/stat
 * and its boot time; NULL: "/proc"); -1 unknown. Whole seconds' precision
 * from the boot time. */
int64_t kjoin_node__process_start_ms(const char *proc_dir, long pid);
/* sync.c: a flags file (KUBELET_KUBEADM_ARGS="--a=b --c") by meaning,
 * {"--a": "b", "--c": ""}; NULL when text is not one such line. Untrusted. */
struct json_object *kjoin_node__flags_json(const char *text, size_t len);
/* What differs between have and want, field by field under path ("" the
 * whole), as kjoin_sync_file's change lines. */
void kjoin_node__sync_diff(struct json_object *have, struct json_object *want, const char *path, kjoin_sync_file *f);
/* The kubelet binary (kubelet: a path or a name on PATH; NULL "kubelet")
 * into path, and its --version's into version and *minor. Errors:
 * KJOIN_E_USAGE (not found: path is ""), KJOIN_E_OTHER. */
kjoin_code kjoin_node__kubelet_version(const char *kubelet, char *path, size_t path_cap, char *version, size_t cap,
                                       int *minor, kjoin_err *err);
/* The sandbox (pause) image kubeadm 1.minor names for a cluster of
 * image_repository ("": registry.k8s.io) into out; false (out "") when
 * kjoin does not know the release's. */
bool kjoin_node__pause_image(int minor, const char *image_repository, char *out, size_t cap);
/* kube-proxy's image as kubeadm's addon names it for the cluster (its
 * repository, its version) into out; "" when the cluster names no version. */
void kjoin_node__kube_proxy_image(const kjoin_cluster_configuration *cc, char *out, size_t cap);

/* What the kubelet's output says: its last error line (else its last
 * line) as "; the kubelet's last error: ...", printable, and how often it
 * exited (a fatal or "command failed" line), the last line one of those. */
typedef struct kjoin_node__words {
    int exits;
    bool ends_with_exit;
    char said[400];
} kjoin_node__words;
void kjoin_node__kubelet_words(const char *text, size_t len, kjoin_node__words *w);
/* The same of kubelet.service's last 50 journal lines (empty without
 * journalctl). */
void kjoin_node__journal_words(kjoin_node__words *w);
/* The last error line of the kubelet's output that names needle (a Pod,
 * "kube-system/etcd-cp-2"), its klog header left out, into out (printable,
 * keys masked); false when there is none. */
bool kjoin_node__kubelet_error_about(const char *text, size_t len, const char *needle, char *out, size_t cap);

/* Without systemd, the file the kubelet's output goes to, if one is named:
 * an absolute path, a regular file if it exists (never a symlink). Errors:
 * KJOIN_E_USAGE. */
kjoin_code kjoin_node__log_check(const char *path, kjoin_err *err);
/* The log as a wait watches it: what was there when the wait began is an
 * earlier kubelet's. */
typedef struct kjoin_node__log {
    const char *path;
    off_t from, seen;
    int64_t changed_ms;
} kjoin_node__log;
void kjoin_node__log_start(kjoin_node__log *lg, const char *path, int64_t now_ms);
/* Whether the kubelet has ended for good, as its output since the start
 * says: an exit and 15 s of quiet (nothing started it again), or three
 * exits (it keeps exiting); why says which, *w what it said. */
bool kjoin_node__log_gone(kjoin_node__log *lg, int64_t now_ms, char *why, size_t cap, kjoin_node__words *w);
/* The log's last words, earlier kubelets' included (for the deadline). */
void kjoin_node__log_words(const kjoin_node__log *lg, kjoin_node__words *w);

/* The kubelet configuration this node's config.yaml holds (defaults when it
 * is missing or unusable); true when it was read. */
bool kjoin_node__kubelet_config(const kjoin_node__resolved *p, kjoin_kubelet_config *out);

/* Whether the kubelet's healthz answers 200 (plain HTTP on loopback, as
 * kubeadm polls it); why says what failed. A port of 0 counts as healthy. */
bool kjoin_node__healthz(const kjoin_kubelet_config *c, char *why, size_t cap);

/* address.c: the node's addresses for the kubelet's node-ip. */
typedef struct kjoin_node__addresses {
    char if4[64], if6[64];  /* the interfaces of the IPv4 and IPv6 default routes; "" none */
    char v4[64], v6[64];    /* an address of each family there (not loopback, not link-local); "" none */
} kjoin_node__addresses;
/* From proc_dir's net/route and net/ipv6_route (NULL: "/proc") and the
 * interfaces' addresses. */
void kjoin_node__default_route_addresses(const char *proc_dir, kjoin_node__addresses *out);
/* The interface of the lowest-metric default route in /proc/net/route's
 * text (v6 false) or /proc/net/ipv6_route's, into ifname; false: none. */
bool kjoin_node__default_route_if(const char *text, bool v6, char *ifname, size_t cap);
/* Whether the cluster is dual-stack: service_subnet holds both families,
 * pod_subnet too when set. */
bool kjoin_node__dual_stack_cluster(const char *service_subnet, const char *pod_subnet);
/* "A,B" into out when the cluster is dual-stack (service_subnet holds both
 * families, pod_subnet too when set) and the node has both addresses: the
 * family of service_subnet's first CIDR first. false (out "") otherwise. */
bool kjoin_node__dual_stack_ip(const char *service_subnet, const char *pod_subnet, const char *v4, const char *v6,
                               char *out, size_t cap);
/* A node-ip value the kubelet takes: one IP address, or two of different
 * families, comma-separated. Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_node__node_ip_check(const char *value, kjoin_err *err);

/* The join record in the Kubernetes directory, read through its safe
 * directory (a secret: owner-only) and checked. *found is false, with
 * success, when there is none. With file (may be NULL), the whole record
 * file as it parsed (both parts; NULL when none did), also on failure: a
 * new reference. Errors: KJOIN_E_USAGE. */
struct json_object;
kjoin_code kjoin_node__read_record(const kjoin_node__resolved *p, const kjoin_node_paths *paths, kjoin_node_state *st,
                                   bool *found, struct json_object **file, kjoin_err *err);

/* Whether text is the kubeconfig the kubelet writes after its TLS
 * bootstrap, for server: its rotating client certificate in p's pki/. */
bool kjoin_node__is_kubelets_kubeconfig(const char *text, const kjoin_node__resolved *p, const char *server);

/* Whether the join record st lists path with data's SHA-256. */

/* For the suite's kill tests: SIGKILL when KJOIN_JOIN_CRASH_AT names point
 * (a step boundary of the join or reset; docs/development.md lists them). */
void kjoin_node__crash_point(const char *point);

/* The mount points at or below dir (/proc/self/mountinfo, in mount order;
 * a point mounted twice is there twice), at most cap of them into out.
 * Returns how many there are. */
size_t kjoin_node__mounts_under(const char *dir, char (*out)[4096], size_t cap);


/* ---- the node's reads of the API server (api.c) ---- */
struct json_object;
struct kjoin_kubeapi;
/* GET path as JSON into *out; NULL when the API says NotFound (or, when
 * forbidden_absent, Forbidden: not there for this identity). what names the
 * request in errors. */
kjoin_code kjoin_node__get_json_or_absent(struct kjoin_kubeapi *api, const char *path, const char *what,
                                          bool forbidden_absent, struct json_object **out, kjoin_err *err);
/* The same; NotFound is an error. */
kjoin_code kjoin_node__get_json(struct kjoin_kubeapi *api, const char *path, const char *what, struct json_object **out,
                                kjoin_err *err);
/* A string member of o, or NULL (a null or another type is no string). */
const char *kjoin_node__string_member(struct json_object *o, const char *key);
/* Whether a Node's conditions say Ready=True. */
bool kjoin_node__ready_of(struct json_object *node);
/* The kubelet's ConfigMap in kube-system as the cluster's kubeadm release
 * (minor) reads it, into *cm (NULL: not there) and its name into name. */
kjoin_code kjoin_node__get_kubelet_config_map(struct kjoin_kubeapi *api, int minor, char *name, size_t cap,
                                              struct json_object **cm, kjoin_err *err);
/* That ConfigMap's (named name) "kubelet" key, checked as a kubelet
 * configuration (*parsed), into *text (borrowed from cm). Errors:
 * KJOIN_E_OTHER (no such key, not a KubeletConfiguration). */
kjoin_code kjoin_node__kubelet_config_of(struct json_object *cm, const char *name, const char **text,
                                         kjoin_kubelet_config *parsed, kjoin_err *err);

#endif
