/* Kubeconfig documents: reading the one cluster of a discovery kubeconfig
 * and writing the TLS-bootstrap kubeconfig that kubelet and kubectl use. */
#ifndef KJOIN_KUBECONFIG_H
#define KJOIN_KUBECONFIG_H

#include <stddef.h>

#include <kjoin/err.h>

#define KJOIN_KUBECONFIG_MAX (1024 * 1024)

/* The one cluster of a discovery kubeconfig. Fields are newly-allocated and
 * released by kjoin_cluster_release(). */
typedef struct kjoin_cluster {
    char *name;           /* may be "" (kubeadm's cluster-info uses an unnamed cluster) */
    char *server;         /* https://host:port */
    unsigned char *ca_pem; /* PEM bundle, NUL-terminated; NULL when a discovery file has no CA */
    size_t ca_len;
} kjoin_cluster;

/* Parses a kubeconfig (YAML or JSON) that must hold exactly one cluster with
 * a server and certificate-authority-data. Mapping keys must be unique.
 * *out is written only on success. Errors: KJOIN_E_TRUST (the document is
 * discovery data). */
kjoin_code kjoin_kubeconfig_parse_cluster(const char *yaml, size_t len, kjoin_cluster *out,
                                          kjoin_err *err);
void kjoin_cluster_release(kjoin_cluster *c);

/* What the TLS-bootstrap kubeconfig holds; or, with a client certificate,
 * what kubeadm's admin.conf, controller-manager.conf and scheduler.conf do. */
typedef struct kjoin_bootstrap_config {
    const char *cluster_name; /* "kubernetes" when NULL */
    const char *server;
    const char *ca_pem; /* certificate-authority-data is left out when ca_len is 0 */
    size_t ca_len;
    const char *user;     /* the user entry's name; default "tls-bootstrap-token-user", or username */
    const char *token;    /* bearer token "<id>.<secret>": a secret; or NULL for basic auth */
    const char *username; /* basic auth (K3s agents), used when token is NULL */
    const char *password; /* a secret */
    const char *cert_pem; /* a client certificate (client-certificate-data), used when token and username are NULL */
    size_t cert_len;
    const char *key_pem;  /* its key (client-key-data): a secret */
    size_t key_len;
} kjoin_bootstrap_config;

/* Emits the kubeconfig the control plane publishes in cluster-info: one
 * unnamed cluster (server and certificate-authority-data), no contexts, no
 * users, as kubeadm writes it. Errors: KJOIN_E_OTHER. */
kjoin_code kjoin_kubeconfig_emit_cluster_info(const char *server, const char *ca_pem, size_t ca_len, char **out,
                                              size_t *out_len, kjoin_err *err);

/* Checks that a kubeconfig may be published: no user entries and no
 * credential anywhere (token, tokenFile, client keys and certificates,
 * username, password, exec, auth-provider), naming the first one found by
 * its path ("users[0].user.token"). Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_kubeconfig_check_public(const char *yaml, size_t len, kjoin_err *err);

#endif
