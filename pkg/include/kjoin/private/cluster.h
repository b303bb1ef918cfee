/* kubeadm's ClusterConfiguration, as the kubeadm-config ConfigMap holds
 * it: what kubelet-start and a control-plane join read from the cluster,
 * each field checked as kubeadm checks it (the cluster's data goes into
 * files and certificates every client of the node trusts). Below node and
 * controlplane: it depends on neither. */
#ifndef KJOIN_CLUSTER_H
#define KJOIN_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kjoin/err.h>

/* Extra names for a certificate: each an IP address, a DNS-1123 subdomain
 * or a wildcard one; kubeadm leaves out (with a warning) what is neither,
 * and so does the parser (skipped counts them). */
#define KJOIN_SANS_MAX 32
typedef struct kjoin_san_list {
    size_t n, skipped;
    char name[KJOIN_SANS_MAX][254];
} kjoin_san_list;

/* Whether s is an RFC 1123 subdomain as Kubernetes checks one (lower case;
 * with wildcard, "*." before one too). */
bool kjoin_dns1123_subdomain(const char *s, bool wildcard);

/* A component's extraArgs (a map before v1beta4, a list of name and
 * value in it), in the file's order. */
#define KJOIN_EXTRA_ARGS_MAX 24
/* An argument's mergeMethod (v1beta4, kubeadm 1.37): replace the default's
 * value, or add to its end or its start. */
typedef enum { KJOIN_ARG_REPLACE, KJOIN_ARG_APPEND, KJOIN_ARG_PREPEND } kjoin_arg_merge;
typedef struct kjoin_extra_args {
    size_t n;
    struct {
        char name[64];   /* [a-z0-9-], without "--" */
        char value[512]; /* printable */
        kjoin_arg_merge merge;
    } v[KJOIN_EXTRA_ARGS_MAX];
} kjoin_extra_args;
/* The value of name in a, or NULL. */
const char *kjoin_extra_arg(const kjoin_extra_args *a, const char *name);

/* A component's extraVolumes: host paths mounted into its Pod. */
#define KJOIN_EXTRA_VOLUMES_MAX 8
typedef struct kjoin_extra_volumes {
    size_t n;
    struct {
        char name[64];         /* a DNS-1123 label */
        char host_path[512];   /* absolute, printable */
        char mount_path[512];  /* absolute, printable */
        bool read_only;
        char path_type[24];    /* "" or one of Kubernetes' HostPathType values */
    } v[KJOIN_EXTRA_VOLUMES_MAX];
} kjoin_extra_volumes;

/* A component's extraEnvs (v1beta4): variables with a value. */
#define KJOIN_EXTRA_ENVS_MAX 8
typedef struct kjoin_extra_envs {
    size_t n;
    struct {
        char name[128];  /* a C identifier, as Kubernetes' env names usually are: [A-Za-z_][A-Za-z0-9_.-]* */
        char value[512]; /* printable */
    } v[KJOIN_EXTRA_ENVS_MAX];
} kjoin_extra_envs;

/* kubeadm's ClusterConfiguration, as the kubeadm-config ConfigMap's
 * "ClusterConfiguration" key holds it, checked: one mapping, a
 * kubeadm.k8s.io ClusterConfiguration. Errors: KJOIN_E_OTHER (malformed). */
typedef struct kjoin_cluster_configuration {
    char version[64];           /* kubernetesVersion, "v1.37.2"; "" when absent */
    int minor;                  /* 37; 0 when absent */
    int patch;                  /* 2; -1 when absent */
    int node_local_cri_socket;  /* featureGates.NodeLocalCRISocket: 1, 0; -1 when not set */
    int etcd_learner_mode;      /* featureGates.EtcdLearnerMode (1.27 alpha, 1.29 beta): 1, 0; -1 when not set */
    int kubelet_local_mode;     /* featureGates.ControlPlaneKubeletLocalMode (1.31 alpha, 1.33 beta): 1, 0; -1 when
                                 * not set */
    char certificates_dir[1024]; /* certificatesDir: an absolute path without "..", printable; "" when absent */
    /* What a control-plane node's own certificates are made from; every
     * field checked as kubeadm checks it ("" or 0 when absent: kubeadm's
     * default applies). */
    char cluster_name[64];      /* clusterName: printable, no quotes or backslashes */
    char service_subnet[128];   /* networking.serviceSubnet: CIDRs, comma-separated */
    char dns_domain[254];       /* networking.dnsDomain */
    char control_plane_endpoint[300]; /* controlPlaneEndpoint: host or host:port */
    char control_plane_host[300];     /* its host (an IPv6 address without brackets) */
    int control_plane_port;           /* its port; 0 when it has none */
    kjoin_san_list apiserver_sans;    /* apiServer.certSANs */
    kjoin_san_list etcd_server_sans;  /* etcd.local.serverCertSANs */
    kjoin_san_list etcd_peer_sans;    /* etcd.local.peerCertSANs */
    bool external_etcd;         /* etcd.external is set: */
    char external_endpoints[1024]; /* its endpoints, comma-separated (http:// only without files) */
    char external_ca_file[512];    /* caFile, certFile, keyFile: absolute paths without ".." ("" when not set; */
    char external_cert_file[512];  /* a certificate and key both or neither, and then a CA) */
    char external_key_file[512];
    char encryption_algorithm[16]; /* encryptionAlgorithm: RSA-2048, RSA-3072, RSA-4096, ECDSA-P256, ECDSA-P384 */
    char etcd_data_dir[1024];   /* etcd.local.dataDir: an absolute path without ".." */
    int64_t certificate_validity_s; /* certificateValidityPeriod, in seconds */
    /* What the static Pod manifests are made from: */
    char image_repository[256]; /* imageRepository (ciImageRepository when set) */
    char pod_subnet[128];       /* networking.podSubnet: CIDRs, comma-separated */
    int64_t control_plane_timeout_s; /* apiServer.timeoutForControlPlane (before v1beta4); 0: absent */
    kjoin_extra_args apiserver_args, controller_manager_args, scheduler_args, etcd_args; /* extraArgs */
    kjoin_extra_volumes apiserver_volumes, controller_manager_volumes, scheduler_volumes; /* extraVolumes */
    kjoin_extra_envs apiserver_envs, controller_manager_envs, scheduler_envs, etcd_envs; /* extraEnvs */
    char etcd_image_repository[256], etcd_image_tag[128]; /* etcd.local.imageRepository, .imageTag */
    char unsupported[80];       /* the first field set that kjoin's manifests cannot carry yet
                                 * ("apiServer.extraEnvs[].valueFrom"); "" when none */
} kjoin_cluster_configuration;
kjoin_code kjoin_cluster_configuration_parse(const char *yaml, size_t len, kjoin_cluster_configuration *out,
                                             kjoin_err *err);
/* The ClusterConfiguration of a kubeadm configuration file on this machine
 * (a stream of documents, as kubeadm init --config reads it), or kubeadm's
 * defaults when it has none. Errors: KJOIN_E_OTHER (malformed), as
 * kjoin_cluster_configuration_parse. */
kjoin_code kjoin_cluster_configuration_from_file(const char *yaml, size_t len, kjoin_cluster_configuration *out,
                                                 kjoin_err *err);
struct kjoin_kubeapi;
/* The cluster's ClusterConfiguration, read from configmap
 * kube-system/kubeadm-config and parsed; *found is false (with success) for
 * a cluster kubeadm did not make. Errors: KJOIN_E_OTHER (malformed), and
 * those of kjoin_kubeapi_request. */
kjoin_code kjoin_cluster_configuration_get(struct kjoin_kubeapi *api, kjoin_cluster_configuration *out, bool *found,
                                           kjoin_err *err);

#endif
