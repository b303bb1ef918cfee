/* A control-plane join's steps, after kubeadm's phases (control-plane-prepare,
 * check-etcd, etcd-join, control-plane-join, wait-control-plane), their one
 * context, the record of what they wrote and its reset. The library's own:
 * not installed, not exported. */
#ifndef KJOIN_PRIVATE_CONTROLPLANE_H
#define KJOIN_PRIVATE_CONTROLPLANE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kjoin/controlplane.h>
#include <kjoin/err.h>
#include <kjoin/private/context.h>
#include <kjoin/private/node.h>
#include <kjoin/private/record.h>
#include <kjoin/private/release.h>
#include <kjoin/util.h>

_Static_assert(KJOIN_CP_RESET_PATHS_MAX == KJOIN_WRITTEN_FILES + KJOIN_WRITTEN_DIRS + 2,
               "a reset lists every path of a record");


/* One value of the Secret, decrypted: kubeadm's EncryptBytes is a 12-byte
 * nonce, then the ciphertext and its 16-byte tag. *out is NUL-terminated,
 * free it with kjoin_free_wiped. Errors: KJOIN_E_TRUST (too short, or the
 * tag does not match: another key, or the value was changed). */
kjoin_code kjoin_kubeadm_certs_decrypt(const kjoin_certificate_key *key, const unsigned char *in, size_t len,
                                       unsigned char **out, size_t *out_len, kjoin_err *err);

/* kubeadm's EncryptBytes: a fresh 12-byte nonce, then the AES-256-GCM
 * ciphertext and its tag; *out is newly-allocated. Errors: KJOIN_E_USAGE
 * (more than 1 MiB), KJOIN_E_OTHER. */
kjoin_code kjoin_kubeadm_certs_encrypt(const kjoin_certificate_key *key, const unsigned char *in, size_t len,
                                       unsigned char **out, size_t *out_len, kjoin_err *err);

/* An external etcd's client files in the Secret, as kubeadm uploads them. */
enum { KJOIN_EXTERNAL_ETCD_CA, KJOIN_EXTERNAL_ETCD_CERT, KJOIN_EXTERNAL_ETCD_KEY, KJOIN_EXTERNAL_ETCD_N };

typedef struct kjoin_shared_certs {
    struct {
        const char *name;       /* kubeadm's: "ca.crt", "etcd/ca.key" */
        unsigned mode;          /* as kubeadm writes it: 0600 for a key, 0644 otherwise */
        unsigned char *data;    /* NULL: empty in the Secret (kubeadm had none, as for an external etcd) */
        size_t len;
    } files[KJOIN_SHARED_N];
    struct {
        const char *secret_key; /* external-etcd-ca.crt, external-etcd.crt, external-etcd.key */
        unsigned mode;          /* 0644, 0644, 0600, as kubeadm writes them */
        bool present;           /* the Secret names it (kubeadm uploads them for a cluster with one) */
        unsigned char *data;    /* NULL: not there, or empty */
        size_t len;
    } external[KJOIN_EXTERNAL_ETCD_N]; /* written where etcd.external's caFile, certFile and keyFile say */
} kjoin_shared_certs;

/* The names and modes alone, no data. */
void kjoin_kubeadm_certs_names(kjoin_shared_certs *out);

/* The Secret (its JSON, from the API server: untrusted) opened with key and
 * checked before anything is kept: every value decrypts; ca.crt and ca.key
 * are there; each certificate is a CA, each key is its certificate's (the
 * service account's private key its public one); and ca.crt is one of
 * trusted_ca_pem, the CA discovery verified. An external etcd's files,
 * when the Secret has them: a certificate each for the CA and the client,
 * the client's key its certificate's. Errors: KJOIN_E_TRUST (a value that does not
 * decrypt, a CA that is not the trusted one, a key that is not its
 * certificate's), KJOIN_E_API (not a Secret, a value missing or not base64
 * where a file is required). */
kjoin_code kjoin_kubeadm_certs_open(const char *secret_json, size_t len, const kjoin_certificate_key *key,
                                    const char *trusted_ca_pem, size_t ca_len, kjoin_shared_certs *out,
                                    kjoin_err *err);

/* Writes every file into cert_dir and its etcd/ (made 0700 if missing;
 * checked as ssh checks a directory it trusts), each atomically with its
 * mode: all or nothing (what this call created is taken back when a later
 * write fails). An existing file with other content is refused unless
 * force. Each file's outcome in written[] (may be NULL). With record_dir,
 * what is about to be written goes into the control-plane record there
 * first (kjoin_cp_record_pending). Errors: KJOIN_E_USAGE, KJOIN_E_OUTPUT. */
kjoin_code kjoin_shared_certs_write(const kjoin_shared_certs *c, const char *cert_dir, const char *record_dir,
                                    bool force, kjoin_write_result written[KJOIN_SHARED_N], kjoin_err *err);
void kjoin_shared_certs_release(kjoin_shared_certs *c);

/* ---- one control-plane join's context (kubeadm's JoinData) ------------- */

/* The files a join's control-plane steps replaced (a file there before with
 * other content: the operator asked for it to be replaced), each as it was,
 * so that a take-back puts it back instead of leaving it lost. Held in
 * memory by the join that replaced them; wiped when freed. */
typedef struct kjoin_cp_replaced kjoin_cp_replaced;
kjoin_cp_replaced *kjoin_cp_replaced_new(void);
void kjoin_cp_replaced_free(kjoin_cp_replaced *r);
/* Puts each file back as it was (its content and mode, written atomically),
 * the last replaced first, and forgets it; said(ctx, path, why) for each:
 * why NULL when it was put back. Returns how many could not be. */
size_t kjoin_cp_replaced_restore(kjoin_cp_replaced *r, void (*said)(void *ctx, const char *path, const char *why),
                                 void *ctx);

struct kjoin_cluster_configuration;
struct kjoin_kubeapi;

/* What every control-plane step of one join shares, decided once after the
 * cluster is read (kjoin_cp_context_init) and passed to each step: a step's
 * own inputs are only what is its alone. */
typedef struct kjoin_cp_context {
    const kjoin_join_context *join;    /* the join's one context: the node's name, the CA discovery verified (its
                                        * ca.crt must be it; NULL: unchecked), the bootstrap client, the patches
                                        * (applied to the static Pods by target), the deadline and stage bounds,
                                        * the IDs and the log */
    const struct kjoin_cluster_configuration *cluster; /* the cluster's ClusterConfiguration */
    int minor;                         /* its release (never 0: the newest's when it does not say) */
    const kjoin_release *release;      /* that release's row: what its kubeadm does */
    char advertise_address[64];        /* this node's API server and etcd address: an IP address */
    int bind_port;                     /* this node's API server port */
    char kubernetes_dir[1024];         /* the kubeconfigs: /etc/kubernetes */
    char cert_dir[1024];               /* the cluster's certificatesDir */
    char manifests_dir[1100];          /* kubernetes_dir/manifests */
    char admin_kubeconfig[1100];       /* kubernetes_dir/admin.conf: the node's API client once written */
    bool record;                       /* each step adds what it is about to write to the control-plane record in
                                        * kubernetes_dir first */
    struct kjoin_kubeapi *admin_api;   /* with the node's admin.conf once written; NULL: each step that needs it
                                        * reads admin_kubeconfig */
    bool force;                        /* replace files kubeadm would not keep */
    bool downloads_certs;              /* the shared certificates come from the kubeadm-certs Secret (with a
                                        * certificate key) */
    kjoin_cp_files *written;           /* each file a step writes is added here; NULL: not reported */
    kjoin_cp_replaced *replaced;       /* each file a step replaces is kept here as it was; NULL: not kept */
    int64_t now;                       /* Unix seconds: the certificates' clock */
} kjoin_cp_context;

/* Fills the defaults from the cluster's configuration c (borrowed): its
 * release and row, certificatesDir (/etc/kubernetes/pki when it has none),
 * the paths under kubernetes_dir, kubeadm's API server port, now. The
 * node's name and address, the CA and the client are the caller's.
 * Errors: KJOIN_E_USAGE (a path too long). */
kjoin_code kjoin_cp_context_init(kjoin_cp_context *cx, const struct kjoin_cluster_configuration *c,
                                 const char *kubernetes_dir, kjoin_err *err);
/* A client of the cluster as this node's admin (admin.conf, read through
 * its checked directory), within the context's deadline. Errors:
 * KJOIN_E_USAGE (missing, refused), the API client's. */
kjoin_code kjoin_cp_admin_client(const kjoin_cp_context *cx, struct kjoin_kubeapi **out, kjoin_err *err);
/* Milliseconds left before the context's deadline (at least 1). */
int64_t kjoin_cp_time_left(const kjoin_cp_context *cx);
/* What a stage with its own bound (stage_ms, 0: none) has: the time left,
 * or its bound when that ends first (*bounded then true; may be NULL). */
int64_t kjoin_cp_stage_left(const kjoin_cp_context *cx, int64_t stage_ms, bool *bounded);
/* The record's directory for the writers: kubernetes_dir, or NULL without a record. */
const char *kjoin_cp_record_dir(const kjoin_cp_context *cx);
/* A dry run's control-plane steps (the join context's dry_run): the
 * files they judge before they write copied under its root as the node
 * holds them (the certificates, the kubeconfigs, the static Pods: kept,
 * replaced or refused as the join would). Every check runs for real;
 * nothing is recorded (record is false); etcd-join lists the members and
 * adds none, mark-control-plane and wait-control-plane say what they would
 * do. Errors: those of reading the node's files. */
kjoin_code kjoin_cp_dry_run_copy(const kjoin_cp_context *cx, kjoin_err *err);

/* The cluster's ClusterConfiguration, read with the bootstrap token (the
 * kubeadm-config ConfigMap) through api. Errors: KJOIN_E_USAGE (a cluster
 * kubeadm did not make: it has no control-plane join), those of
 * kjoin_cluster_configuration_get and the API client's. */
kjoin_code kjoin_control_plane_cluster(struct kjoin_kubeapi *api, struct kjoin_cluster_configuration *out,
                                       kjoin_err *err);

/* The local address this machine reaches server (https://host:port) from:
 * the address its routes pick. Errors: KJOIN_E_USAGE (no route, a name that
 * does not resolve, a route through this machine itself: loopback, or the
 * server's address is this machine's). */
kjoin_code kjoin_local_address_for(const char *server, char *out, size_t cap, kjoin_err *err);

/* Whether addr can be a control-plane node's advertise address: an IP
 * address, not loopback, on one of this machine's interfaces (why says
 * otherwise). Returns KJOIN_OK or KJOIN_E_USAGE. */
kjoin_code kjoin_advertise_address_check(const char *addr, char *why, size_t cap);

/* kubeadm's checks before a control-plane node joins (its InitNodeChecks
 * for a secondary control plane): ControlPlaneEndpoint (the cluster has a
 * stable one), NumCPU (2), Mem (1700 MB), Port-<bind port>, Port-10259,
 * Port-10257, Port-2379 and Port-2380 (at the advertise address), the
 * FileAvailable checks of the four static Pod manifests,
 * DirAvailable-<etcd's data directory> and ImagePull (images, in the
 * runtime of report->cri_socket or spec->cri_socket, pulled when missing,
 * never in a dry run; not run when ignored). Appended to *report. Errors:
 * KJOIN_E_USAGE (a failed check, named). */
kjoin_code kjoin_preflight_control_plane(const struct kjoin_node_spec *spec, const kjoin_cp_context *cx,
                                         const char *const *images, size_t n_images, kjoin_preflight_report *report,
                                         kjoin_err *err);

/* What the control-plane steps about to run will write. */
enum {
    KJOIN_CP_WRITES_SHARED = 1,      /* download-certs: the shared CAs */
    KJOIN_CP_WRITES_CERTS = 2,       /* certs: the node's own */
    KJOIN_CP_WRITES_KUBECONFIGS = 4, /* kubeconfig */
    KJOIN_CP_WRITES_MANIFESTS = 8,   /* control-plane: the static Pods */
    KJOIN_CP_WRITES_ETCD = 16        /* etcd-join: the member and etcd.yaml */
};

/* Whether those steps can carry the cluster, checked before the first of
 * them writes (writes: KJOIN_CP_WRITES_*): an external etcd (not yet), the manifests' release and
 * fields (for the static Pods and etcd.yaml), the advertise address, and
 * each directory they write into that is there already, as the writer will
 * check it. Errors: KJOIN_E_USAGE, KJOIN_E_OUTPUT. */
kjoin_code kjoin_control_plane_check(const kjoin_cp_context *cx, unsigned writes, kjoin_err *err);

/* kubeadm's download-certs: with the context's bootstrap client, the
 * kubeadm-certs Secret, opened with key and written into the certificates
 * directory as above. */
typedef struct kjoin_download_certs_result {
    char cert_dir[1024];
    bool present[KJOIN_SHARED_N];      /* the Secret held it (not empty) */
    kjoin_write_result written[KJOIN_SHARED_N];
} kjoin_download_certs_result;

/* Errors: those of kjoin_kubeadm_certs_open and kjoin_shared_certs_write;
 * KJOIN_E_API when the Secret is not there (it expires two hours after its
 * upload) or the token may not read it; the API client's. */
kjoin_code kjoin_download_certs(const kjoin_cp_context *cx, const kjoin_certificate_key *key,
                                kjoin_download_certs_result *out, kjoin_err *err);

/* ---- the node's own certificates (kubeadm's certs phase) ----------------- */

/* The API server's port on a control-plane node: bind_port, or kubeadm's
 * default, decided here alone. */
#define KJOIN_API_SERVER_PORT 6443
int kjoin_api_server_port(int bind_port);

/* The release whose kubeadm kjoin follows when the cluster does not say:
 * KJOIN_NEWEST_KUBEADM_MINOR, with the release table (<kjoin/release.h>). */

/* A control-plane node's own certificates, in kubeadm's order; each a pair
 * BASE.crt (0644) and BASE.key (0600) under the certificates directory. */
enum {
    KJOIN_CERT_APISERVER,                 /* apiserver: serving, for the API server's names and addresses */
    KJOIN_CERT_APISERVER_KUBELET_CLIENT,  /* apiserver-kubelet-client */
    KJOIN_CERT_FRONT_PROXY_CLIENT,        /* front-proxy-client, by front-proxy-ca */
    KJOIN_CERT_ETCD_SERVER,               /* etcd/server: the node's name, serving and client, by etcd/ca */
    KJOIN_CERT_ETCD_PEER,                 /* etcd/peer */
    KJOIN_CERT_ETCD_HEALTHCHECK_CLIENT,   /* etcd/healthcheck-client */
    KJOIN_CERT_APISERVER_ETCD_CLIENT,     /* apiserver-etcd-client */
    KJOIN_NODE_CERTS_N
};
/* kubeadm's name of certificate i ("etcd-server"), and its files' base
 * ("etcd/server"). */
const char *kjoin_node_cert_name(int i);
const char *kjoin_node_cert_base(int i);

typedef struct kjoin_node_certs_result {
    bool kept[KJOIN_NODE_CERTS_N];     /* there already, signed by its CA, its key's, with every name needed */
    bool written[KJOIN_NODE_CERTS_N];  /* made and written */
    size_t skipped_sans;               /* the cluster's extra names that are no IP or DNS name (left out) */
} kjoin_node_certs_result;

/* Makes the node's certificates kubeadm's certs phase makes on a joining
 * control-plane node: subjects, names, usages and lifetimes as kubeadm of
 * the cluster's release, keys of the cluster's encryptionAlgorithm (RSA
 * 2048 by default). Every pair is decided before any is written, and they
 * are written all or nothing. Errors: KJOIN_E_TRUST (ca.crt not the trusted
 * CA), KJOIN_E_USAGE (a CA missing or not a
 * CA, a pair there that kubeadm would not keep and force not set, a CA key
 * missing where a pair must be made, an external etcd, an address that is
 * not one), KJOIN_E_OUTPUT, KJOIN_E_OTHER. */
kjoin_code kjoin_node_certs(const kjoin_cp_context *cx, kjoin_node_certs_result *out, kjoin_err *err);

/* ---- the node's kubeconfigs (kubeadm's kubeconfig phase) ------------------- */

enum {
    KJOIN_KUBECONFIG_ADMIN,              /* admin.conf: kubernetes-admin, the cluster's endpoint */
    KJOIN_KUBECONFIG_CONTROLLER_MANAGER, /* controller-manager.conf: this node's API server */
    KJOIN_KUBECONFIG_SCHEDULER,          /* scheduler.conf: this node's API server */
    KJOIN_KUBECONFIGS_N
};
/* "admin.conf", ... */
const char *kjoin_kubeconfig_file_name(int i);

typedef struct kjoin_control_plane_kubeconfigs_result {
    bool kept[KJOIN_KUBECONFIGS_N];    /* there already: its server, the cluster CA, a client certificate of it */
    bool written[KJOIN_KUBECONFIGS_N];
} kjoin_control_plane_kubeconfigs_result;

/* Writes the kubeconfigs kubeadm's kubeconfig phase writes on a joining
 * control-plane node, 0600, each with a new client certificate the cluster
 * CA signs (subject by release: admin's group is system:masters before
 * 1.29, kubeadm:cluster-admins from it), all or nothing. A file there is
 * kept when kubeadm would keep it, refused otherwise unless force. Errors:
 * KJOIN_E_TRUST (ca.crt not the trusted CA), KJOIN_E_USAGE (no CA or its key, a file there not to keep), KJOIN_E_OUTPUT,
 * KJOIN_E_OTHER. */
kjoin_code kjoin_control_plane_kubeconfigs(const kjoin_cp_context *cx, kjoin_control_plane_kubeconfigs_result *out,
                                          kjoin_err *err);

typedef struct kjoin_control_plane_manifests_result {
    bool kept[KJOIN_MANIFESTS_N];      /* there already, the same bytes */
    bool written[KJOIN_MANIFESTS_N];
} kjoin_control_plane_manifests_result;

/* The three static Pod manifests kubeadm of the cluster's release writes
 * on a joining control-plane node (1.20's, and 1.37's for 1.37 and later),
 * made from the cluster's ClusterConfiguration and this node's endpoint:
 * out[i] newly-allocated YAML. The *_proxy variables are passed on from
 * environ (NULL: this process's). Errors: KJOIN_E_USAGE (a release whose
 * manifests kjoin does not know, a field it cannot carry yet, no
 * kubernetesVersion or imageRepository, an address that is none). */
kjoin_code kjoin_control_plane_manifests_make(const kjoin_cp_context *cx, char *const *environ,
                                             char *out[KJOIN_MANIFESTS_N], kjoin_err *err);

/* The images those Pods and etcd's run, and the release's pause, as
 * kubeadm's ImagePull check names them: the three components' in manifest
 * order, then etcd's ("" for an external etcd, whose image kubeadm does not
 * pull), then pause. Errors: as kjoin_control_plane_manifests_make. */
#define KJOIN_CP_IMAGES_N (KJOIN_MANIFESTS_N + 2)
kjoin_code kjoin_control_plane_images(const struct kjoin_cluster_configuration *c, int minor,
                                      char out[KJOIN_CP_IMAGES_N][400], kjoin_err *err);

/* Makes them and writes them, 0600, into manifests_dir (made 0700), all or
 * nothing; one there with the same bytes is kept, one with others refused
 * unless force. Errors: those of kjoin_control_plane_manifests_make,
 * KJOIN_E_OUTPUT. */
kjoin_code kjoin_control_plane_manifests(const kjoin_cp_context *cx, kjoin_control_plane_manifests_result *out,
                                        kjoin_err *err);

/* ---- etcd-join: this node's member of the stacked etcd --------------------- */

typedef struct kjoin_etcd_member {
    char name[254];     /* "" for a learner not started yet */
    char peer_url[300];
    char id[24];        /* decimal, as etcd's gateway writes it ("" when not known) */
} kjoin_etcd_member;

/* etcd.yaml as kubeadm of the cluster's release writes it for this node's
 * member joining members (the cluster's, this one among them; none: a
 * cluster of its own) (one without a name, a concurrent join's or a learner
 * not started yet, named by its ID in hex, as kubeadm names it). *out
 * newly-allocated. Errors: as kjoin_control_plane_manifests_make. */
kjoin_code kjoin_etcd_manifest_make(const kjoin_cp_context *cx, const kjoin_etcd_member *members, size_t n_members,
                                    char **out, kjoin_err *err);

/* kubeadm's etcd-join: the member added to the stacked etcd the etcd Pods
 * name (a learner from 1.29; none added when this node's peer URL is a
 * member already), etcd.yaml written (0600, data directory 0700; an
 * etcd.yaml there is refused before the member is added unless force, and
 * the member is removed again when the manifest cannot be written), the
 * learner promoted once the kubelet runs it, and a wait until every member
 * answers. A dry run (the join context's dry_run) lists the members and writes
 * etcd.yaml with this node's among them into its directory: no member
 * added, no data directory, nothing waited for. Errors: KJOIN_E_USAGE (the
 * manifest's inputs, certificates missing), KJOIN_E_OUTPUT, KJOIN_E_API (refused), KJOIN_E_TIMEOUT,
 * KJOIN_E_TRUST. */
kjoin_code kjoin_etcd_join(const kjoin_cp_context *cx, kjoin_etcd_join_result *out, kjoin_err *err);

/* kubeadm's check-etcd: the stacked etcd the etcd Pods name is healthy,
 * every started voting member answering (*members: how many), before this
 * node adds one. Errors: KJOIN_E_USAGE (certificates or admin.conf missing;
 * an external etcd, which has no stacked members to check),
 * KJOIN_E_TIMEOUT (a member not answering by the deadline, named). */
kjoin_code kjoin_check_etcd(const kjoin_cp_context *cx, size_t *members, kjoin_err *err);

/* kjoin join --check --control-plane's: each member of the stacked etcd
 * (its status at its client URL, its peer URL reached from this node), and
 * whether this node could add its own (its peer port free, or a member
 * already); what would fail in out->problems, the code of the first in
 * *verdict (KJOIN_OK: none). Errors (the cluster's etcd not read at all):
 * as kjoin_check_etcd's. */
kjoin_code kjoin_check_etcd_members(const kjoin_cp_context *cx, kjoin_etcd_check *out, kjoin_code *verdict,
                                    kjoin_err *err);

/* ---- what a joining member is doing (etcd-status.c; each input untrusted) ---- */

/* What etcd's status call says of the member that answered. */
typedef struct kjoin_etcd_status {
    char member_id[24];     /* decimal */
    char leader_id[24];     /* decimal; "" while it knows of no leader */
    uint64_t raft_index;    /* the entries in its log */
    uint64_t applied_index; /* those applied (raftAppliedIndex; etcd 3.3's: its log's) */
    bool learner;
} kjoin_etcd_status;
/* Errors: KJOIN_E_API (not a status answer kjoin reads). */
kjoin_code kjoin_etcd_status_parse(const char *json, size_t len, kjoin_etcd_status *out, kjoin_err *err);

/* Whether the container named container of a Pod (the kubelet's Pod of a
 * static Pod, the API server's JSON) does not run, and why into why
 * (printable, at most cap bytes): its waiting reason and message (with its
 * last termination's after a restart), its termination's, or the Pod's
 * phase while the container has no status. false when it runs or the Pod
 * cannot be read. */
bool kjoin_pod_not_running(const char *json, size_t len, const char *container, char *why, size_t cap);

/* The line said of a started member while it catches up (into line, at
 * most cap bytes): its applied index against the leader's log, from their
 * statuses, secs into the wait. true when it is behind and no further than
 * at the last line (last: its applied index then; NULL: the first line): a
 * stall, whose cause is looked for. */
bool kjoin_etcd_progress_line(const kjoin_etcd_status *mine, const kjoin_etcd_status *leader, const uint64_t *last,
                              long secs, char *line, size_t cap);

/* The mean of etcd's WAL fsyncs in milliseconds, from its /metrics text;
 * -1 when it has no such figures. */
double kjoin_etcd_fsync_mean_ms(const char *text, size_t len);

/* ---- what a control-plane join made, and kjoin reset of it --------------- */

/* The control-plane part is kept in the join's one record file
 * (KJOIN_NODE_STATE_NAME, its member "controlPlane"); kjoin before it kept
 * it in this file of its own (in the kubeconfig directory): still read,
 * taken into the one record by the next write, removed by reset. */
#define KJOIN_CP_LEGACY_RECORD_NAME "kjoin-control-plane.json"
typedef struct kjoin_cp_record {
    kjoin_written written;             /* each file a step wrote, as written; each directory a step made (removed
                                        * again when empty) */
    char etcd_peer[300];               /* the member etcd-join added ("" when none) */
    char etcd_id[24];
    char cert_dir[1024];               /* where its client certificates are */
    char etcd_data_dir[1024];
    bool data_dir_made;                /* etcd-join made the data directory */
} kjoin_cp_record;

/* The record (untrusted: clean absolute paths, digests, an https peer URL,
 * an ID of digits). Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_cp_record_parse(const char *text, size_t len, kjoin_cp_record *out, kjoin_err *err);
/* The control plane's part of the join's one record file (its text, untrusted): *found false when it
 * holds none. Errors: KJOIN_E_USAGE (not a kjoin join record, or the part as kjoin_cp_record_parse). */
kjoin_code kjoin_cp_record_parse_file(const char *text, size_t len, kjoin_cp_record *out, bool *found, kjoin_err *err);
/* The record in kubernetes_dir, read through its checked directory; *found
 * false (with success) when there is none. */
kjoin_code kjoin_cp_record_read(const char *kubernetes_dir, kjoin_cp_record *out, bool *found, kjoin_err *err);
/* Adds to the record in kubernetes_dir, before anything is written (a join
 * killed halfway then leaves what reset needs): the files at paths with the
 * digests (hex SHA-256) of what is about to be written there, each
 * directory of dirs and its ancestors that do not exist yet (what writing
 * there makes), and kubernetes_dir's own when the record makes it.
 * Errors: KJOIN_E_USAGE, KJOIN_E_OUTPUT, KJOIN_E_OTHER (more than the
 * record holds). */
kjoin_code kjoin_cp_record_pending(const char *kubernetes_dir, const char *const *paths, const char *const *sha256,
                                   size_t n, const char *const *dirs, size_t n_dirs, kjoin_err *err);
/* Records the etcd member added (before its manifest is written). */
kjoin_code kjoin_cp_record_etcd(const char *kubernetes_dir, const char *peer, const char *id, const char *cert_dir,
                                const char *data_dir, bool data_dir_made, kjoin_err *err);
/* The member etcd-join recorded forgotten (it left the cluster, never
 * having started), and manifest (its etcd.yaml) removed when it still
 * holds what the record says was written there (*removed). Errors:
 * KJOIN_E_OUTPUT, KJOIN_E_USAGE (the record). */
kjoin_code kjoin_cp_record_forget_etcd(const char *kubernetes_dir, const char *manifest, bool *removed, kjoin_err *err);

/* What one run writes, taken back when it fails before the node runs
 * anything: *before (newly-allocated, free it) is the record as the run
 * found it (empty when there is none). Errors: as kjoin_cp_record_read. */
kjoin_code kjoin_cp_record_begin(const char *kubernetes_dir, kjoin_cp_record **before, kjoin_err *err);

typedef struct kjoin_cp_reset_spec {
    const kjoin_join_context *join;    /* the reset's context: its deadline, Audit-ID and log */
    const char *kubernetes_dir;        /* the record and admin.conf are there */
    bool dry_run;                      /* decide and report (removed: what would be), change nothing */
} kjoin_cp_reset_spec;

/* kubeadm reset's first step: this node's etcd member out of the cluster
 * (through the other members, found as etcd-join finds them). A member
 * that cannot be removed (no API server, no quorum) is reported, not an
 * error, as kubeadm reports it: the rest of the reset goes on. */
kjoin_code kjoin_cp_reset_etcd(const kjoin_cp_reset_spec *s, kjoin_cp_reset_result *out, kjoin_err *err);
/* Then, after the kubelet stopped: each recorded file that still holds what
 * was written, the etcd data directory the join made, the record, and each
 * directory the join made that is empty then.
 * Errors: KJOIN_E_USAGE (a record not kjoin's). */
kjoin_code kjoin_cp_reset_files(const kjoin_cp_reset_spec *s, kjoin_cp_reset_result *out, kjoin_written *dirs,
                                kjoin_err *err);
/* What undoing one of the part's directories did, into out (a
 * kjoin_cp_reset_result): kjoin_written_undo_parts' report. */
void kjoin_cp_reset_report(void *out, const char *path, kjoin_undo what, const char *why);

/* Takes back what the run that began with before wrote: each file
 * recorded since that still holds what was written, each directory made
 * since when empty; the record as it was (none: removed). out->had_record
 * tells whether the run had written anything; removed and left list what
 * was taken back and what could not be. Errors: KJOIN_E_USAGE (the record
 * is not kjoin's), KJOIN_E_OUTPUT. */
kjoin_code kjoin_cp_take_back(const char *kubernetes_dir, const kjoin_cp_record *before, kjoin_cp_reset_result *out,
                              kjoin_err *err);

/* ---- wait-control-plane --------------------------------------------------- */

/* Where kubeadm checks each component's health, from its manifest
 * (yaml[i], len[i]: KJOIN_MANIFEST_* order): --advertise-address or
 * --bind-address, --secure-port, else the defaults (advertise_address:6443,
 * 127.0.0.1:10257, 127.0.0.1:10259); the path of its liveness probe, else
 * kubeadm's /livez, /healthz, /livez. Errors:
 * KJOIN_E_USAGE (not a Pod running it, not an address). */
kjoin_code kjoin_control_plane_endpoints(const char *const yaml[KJOIN_MANIFESTS_N], const size_t len[KJOIN_MANIFESTS_N],
                                         const char *advertise_address, char urls[KJOIN_MANIFESTS_N][320],
                                         kjoin_err *err);

/* kubeadm's wait-control-plane: polls each component's health endpoint
 * until every one answers 200. The controller manager and scheduler serve
 * certificates they made for themselves, which nothing verifies (as
 * kubeadm): only the status of this machine's own endpoint is read. A dry
 * run only says it would. Errors: KJOIN_E_USAGE (a manifest missing or unreadable), KJOIN_E_TIMEOUT
 * (naming each component not healthy, its URL and its last answer). */
kjoin_code kjoin_wait_control_plane(const kjoin_cp_context *cx, kjoin_wait_control_plane_result *out,
                                    kjoin_err *err);

/* ---- mark-control-plane (kubeadm's control-plane-join phase) --------------- */

/* mark-control-plane's own input: the taints (else kubeadm's default). */
typedef struct kjoin_mark_control_plane_spec {
    const char *const *taints;         /* "key=value:Effect"; with taints_set, instead of kubeadm's default */
    size_t n_taints;
    bool taints_set;
} kjoin_mark_control_plane_spec;

/* Labels the Node as kubeadm's mark-control-plane does
 * (node-role.kubernetes.io/control-plane and
 * node.kubernetes.io/exclude-from-external-load-balancers; before 1.24
 * node-role.kubernetes.io/master and control-plane) and adds the taints (by
 * default node-role.kubernetes.io/control-plane:NoSchedule, before 1.24
 * node-role.kubernetes.io/master:NoSchedule) to those the Node has: one
 * merge patch, made against the version read (a conflict is read again).
 * A dry run only says it would. Errors: KJOIN_E_USAGE (admin.conf refused, a malformed taint),
 * KJOIN_E_API (no such Node, refused), the API client's. */
kjoin_code kjoin_mark_control_plane(const kjoin_cp_context *cx, const kjoin_mark_control_plane_spec *s, kjoin_err *err);
/* The merge patch for the Node as the API server answered it (untrusted
 * JSON): newly-allocated. Errors: KJOIN_E_API (not a Node object, no
 * resourceVersion), KJOIN_E_USAGE (a malformed taint given). */
kjoin_code kjoin_mark_control_plane_patch(const kjoin_cp_context *cx, const kjoin_mark_control_plane_spec *s,
                                          const char *node_json, size_t len, char **out, kjoin_err *err);

/* The parsers of untrusted answers the join uses inside (the fuzzers' too). */
/* The members in an answer of etcd's gateway (/v3/cluster/member/list or
 * /add; untrusted: an ID of digits, https peer URLs, names without
 * separators), at most cap into out and learner. Errors: KJOIN_E_API. */
kjoin_code kjoin_etcd_members_parse(const char *json, size_t len, kjoin_etcd_member *out, bool *learner, size_t cap,
                                    size_t *n, kjoin_err *err);
/* The client URLs kubeadm's etcd.advertise-client-urls annotation gives in
 * a list of Pods (JSON; each an https URL), at most cap;
 * returns how many Pods the list has. */
size_t kjoin_etcd_endpoints_parse(const char *json, size_t len, char (*urls)[300], size_t cap, size_t *n);

#endif
