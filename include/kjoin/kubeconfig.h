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

/* Parses a --discovery-file document (YAML or JSON). Its cluster is the
 * unnamed one, else the current context's (as kubeadm chooses); no user entry
 * may carry client credentials (token, tokenFile, client-certificate(-data),
 * client-key(-data), username, password, exec, auth-provider). The CA comes
 * from certificate-authority-data, or from a certificate-authority path
 * relative to dir; dir NULL (standard input, URLs) refuses paths. The CA may
 * be absent: ca_pem NULL. Errors: KJOIN_E_TRUST (malformed or refused
 * document), KJOIN_E_USAGE (unreadable certificate-authority file). */
kjoin_code kjoin_kubeconfig_parse_discovery(const char *yaml, size_t len, const char *dir,
                                            kjoin_cluster *out, kjoin_err *err);

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

/* Emits a kubeconfig shaped as kubeadm's bootstrap-kubelet.conf (or, with a
 * client certificate, its admin.conf), context "<user>@<cluster>" as
 * current-context. *out is newly-allocated, NUL-terminated, and holds the
 * secret: wipe it before freeing. Errors: KJOIN_E_OTHER. */
kjoin_code kjoin_kubeconfig_emit_bootstrap(const kjoin_bootstrap_config *cfg, char **out,
                                           size_t *out_len, kjoin_err *err);

/* Emits the kubeconfig the control plane publishes in cluster-info: one
 * unnamed cluster (server and certificate-authority-data), no contexts, no
 * users, as kubeadm writes it. Errors: KJOIN_E_OTHER. */
kjoin_code kjoin_kubeconfig_emit_cluster_info(const char *server, const char *ca_pem, size_t ca_len, char **out,
                                              size_t *out_len, kjoin_err *err);

/* Emits the kubeconfig kubelet writes after its TLS bootstrap: cluster
 * "default-cluster" (server, CA data), user "default-auth" whose
 * client-certificate and client-key are both pem_path (the
 * kubelet-client-current.pem that holds both), context "default-context".
 * Errors: KJOIN_E_OTHER. */
kjoin_code kjoin_kubeconfig_emit_kubelet(const char *server, const char *ca_pem, size_t ca_len, const char *pem_path,
                                         char **out, size_t *out_len, kjoin_err *err);

/* The kubeconfig text with its current cluster's certificate-authority-data
 * (the current context's cluster, else the only one) replaced by ca_pem, in
 * base64, every other byte kept, whatever YAML style the value had. The
 * result is parsed again and must be the same document but for that value,
 * which must be exactly the new CA; else nothing is returned. *out is
 * newly-allocated (it may hold credentials: wipe it). Errors: KJOIN_E_USAGE
 * (malformed, no such value), KJOIN_E_OTHER (the check failed). */
kjoin_code kjoin_kubeconfig_replace_ca(const char *text, size_t len, const void *ca_pem, size_t ca_len, char **out,
                                       size_t *out_len, kjoin_err *err);

/* The same for the current cluster's server: server (an https URL) in place
 * of the one there, every other byte kept, checked the same way. kubeadm's
 * control-plane node points its kubelet at its own API server so.
 * Errors: KJOIN_E_USAGE (malformed, no server, not a URL), KJOIN_E_OTHER. */
kjoin_code kjoin_kubeconfig_replace_server(const char *text, size_t len, const char *server, char **out,
                                           size_t *out_len, kjoin_err *err);

/* Checks that a kubeconfig may be published: no user entries and no
 * credential anywhere (token, tokenFile, client keys and certificates,
 * username, password, exec, auth-provider), naming the first one found by
 * its path ("users[0].user.token"). Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_kubeconfig_check_public(const char *yaml, size_t len, kjoin_err *err);

#endif
