/* What a control-plane join's caller holds and is told: the certificate
 * key that opens the kube-system/kubeadm-certs Secret (which `kubeadm init
 * --upload-certs` and kjoin_upload_certs fill with the certificates every
 * control-plane node shares, each value encrypted with AES-256-GCM under
 * it), and the results of the control-plane phases and their reset. Whoever
 * holds that key and a bootstrap token holds the cluster's CA keys
 * (docs/trust-model.md). The steps themselves are the library's own
 * (pkg/include/kjoin/private/controlplane.h). */
#ifndef KJOIN_CONTROLPLANE_H
#define KJOIN_CONTROLPLANE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kjoin/err.h>
#include <kjoin/util.h>

/* The paths one record of a join holds (its files and directories), and two
 * more: what a reset or take-back can list. */
#define KJOIN_CP_RESET_PATHS_MAX 66

#define KJOIN_CERTIFICATE_KEY_LEN 32 /* kubeadm's CertificateKeySize: AES-256 */

typedef struct kjoin_certificate_key {
    unsigned char bytes[KJOIN_CERTIFICATE_KEY_LEN];
} kjoin_certificate_key;

/* The key as kubeadm prints it: 64 hex digits, surrounding blanks (a file's
 * newline) aside. Errors: KJOIN_E_USAGE, which never quotes the key. */
kjoin_code kjoin_certificate_key_parse(const char *text, kjoin_certificate_key *key, kjoin_err *err);
/* The key from a file ("-": standard input), trimmed, as a token file is
 * read. Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_certificate_key_read(const char *path, kjoin_certificate_key *key, kjoin_err *err);
/* Wipes the key. */
void kjoin_certificate_key_clear(kjoin_certificate_key *key);
/* A new key from OpenSSL's CSPRNG (kubeadm certs certificate-key). Errors:
 * KJOIN_E_OTHER. */
kjoin_code kjoin_certificate_key_generate(kjoin_certificate_key *key, kjoin_err *err);
/* The key as kubeadm prints it: 64 lower-case hex digits. Secret! */
void kjoin_certificate_key_format(const kjoin_certificate_key *key, char out[2 * KJOIN_CERTIFICATE_KEY_LEN + 1]);

/* The files the Secret carries, by kubeadm's names. */
enum {
    KJOIN_SHARED_CA_CRT,
    KJOIN_SHARED_CA_KEY,
    KJOIN_SHARED_FRONT_PROXY_CA_CRT,
    KJOIN_SHARED_FRONT_PROXY_CA_KEY,
    KJOIN_SHARED_SA_PUB,
    KJOIN_SHARED_SA_KEY,
    KJOIN_SHARED_ETCD_CA_CRT,
    KJOIN_SHARED_ETCD_CA_KEY,
    KJOIN_SHARED_N
};

/* The files a join's control-plane steps wrote (created or replaced), in
 * the order written: what the outputs print. */
#define KJOIN_CP_FILES_MAX 40
typedef struct kjoin_cp_files {
    size_t n;
    struct {
        char path[1200];
        unsigned mode;
    } v[KJOIN_CP_FILES_MAX];
} kjoin_cp_files;

/* This machine's kubeadm configuration (the text of kubeadm's --config
 * file), as kjoin_upload_certs reads it: its ClusterConfiguration's
 * certificatesDir and external etcd, into a new *out (free it with
 * kjoin_local_configuration_free). Errors: KJOIN_E_USAGE (not a kubeadm
 * configuration, a value refused), KJOIN_E_OTHER. */
typedef struct kjoin_local_configuration kjoin_local_configuration;
kjoin_code kjoin_local_configuration_parse(const char *yaml, size_t len, kjoin_local_configuration **out,
                                           kjoin_err *err);
void kjoin_local_configuration_free(kjoin_local_configuration *c);

/* kubeadm's upload-certs (init phase upload-certs --upload-certs), with a
 * client of the cluster's admins: the shared files of cert_dir (NULL: local's
 * certificatesDir, else /etc/kubernetes/pki), and an external etcd's files
 * where local says (local is this machine's configuration, as kubeadm's
 * --config, kjoin_local_configuration_parse; NULL: kubeadm's defaults,
 * no external etcd; never the cluster's kubeadm-config) encrypted with key into
 * kube-system's kubeadm-certs Secret, created or replaced, owned by a new
 * bootstrap token (no usages) that expires two hours after now, so the
 * Secret goes with it; and the Role and RoleBinding kubeadm:kubeadm-certs
 * that let kubeadm's bootstrap tokens read it. Checked before anything is
 * made in the cluster: ca.crt and ca.key are there, and what goes up opens
 * as kjoin_kubeadm_certs_open opens it (each CA with its key). */
typedef struct kjoin_upload_certs_result {
    char cert_dir[1024];
    char token_id[8];                       /* the owner token's id (its secret is never kept) */
    long long expires;                      /* its expiry, Unix seconds */
    bool uploaded[KJOIN_SHARED_N];          /* a file went up (else an empty value, as kubeadm's) */
} kjoin_upload_certs_result;
/* Errors: KJOIN_E_USAGE (an external etcd, not yet; a file refused or
 * missing), KJOIN_E_TRUST (a key that is not its certificate's), the API
 * client's (KJOIN_E_API: refused, as for a client that is no admin). */
struct kjoin_kubeapi;
kjoin_code kjoin_upload_certs(struct kjoin_kubeapi *api, const struct kjoin_local_configuration *local,
                              const char *cert_dir, const kjoin_certificate_key *key, int64_t now,
                              kjoin_upload_certs_result *out, kjoin_err *err);

/* ---- the static Pod manifests (kubeadm's control-plane step) ------------ */

enum {
    KJOIN_MANIFEST_APISERVER,          /* kube-apiserver.yaml */
    KJOIN_MANIFEST_CONTROLLER_MANAGER, /* kube-controller-manager.yaml */
    KJOIN_MANIFEST_SCHEDULER,          /* kube-scheduler.yaml */
    KJOIN_MANIFESTS_N
};
/* "kube-apiserver", ...: the Pod's and the file's name. */
const char *kjoin_manifest_component(int i);

typedef struct kjoin_etcd_join_result {
    char member_id[24];                /* decimal, as etcd's gateway writes it */
    bool added;                        /* false: a member already (the same join run again) */
    bool promoted;                     /* a learner made a voting member */
    bool manifest_kept;                /* etcd.yaml there already, the same Pod */
    size_t members;                    /* the cluster's members at the end */
    bool unstarted_removed;            /* it never started: removed again, its etcd.yaml taken back */
} kjoin_etcd_join_result;

/* kjoin join --check --control-plane: the stacked etcd's members as this
 * node sees them, before it would add one. */
#define KJOIN_ETCD_CHECK_MAX 16
typedef struct kjoin_etcd_member_check {
    char name[254];                    /* "" for a member that has not started */
    char peer_url[300];
    bool learner;
    bool healthy;                      /* it answered etcd's status at its client URL */
    bool peer_reachable;               /* this node reached its peer URL (TLS with the cluster's etcd CA) */
} kjoin_etcd_member_check;
typedef struct kjoin_etcd_check {
    size_t n;
    kjoin_etcd_member_check members[KJOIN_ETCD_CHECK_MAX];
    bool member_already;               /* this node's peer URL is a member already (an earlier join's) */
    bool peer_port_free;               /* else: nothing holds etcd's peer port on this node's advertise address */
    char problems[700];                /* each check that failed, "; " between them ("" when none) */
} kjoin_etcd_check;

typedef struct kjoin_cp_reset_result {
    bool had_record;                   /* false: no control-plane join of kjoin's here */
    bool had_member;                   /* the record names an etcd member */
    bool member_removed;               /* it is out of the cluster (or was already) */
    char why_not[600];                 /* why it could not be removed */
    size_t n_removed, n_left;
    char removed[KJOIN_CP_RESET_PATHS_MAX][1100];
    char left[KJOIN_CP_RESET_PATHS_MAX][1200]; /* "path: why" */
} kjoin_cp_reset_result;

typedef struct kjoin_wait_control_plane_result {
    int64_t healthy_ms[KJOIN_MANIFESTS_N]; /* when each answered 200 (0: never) */
} kjoin_wait_control_plane_result;

#endif
