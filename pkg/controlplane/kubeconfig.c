/* kubeadm's kubeconfig step of a control-plane join: admin.conf,
 * controller-manager.conf and scheduler.conf, each with a client
 * certificate the cluster CA signs on the node, as the cluster release's
 * kubeadm writes them. */
#include <kjoin/private/controlplane.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <kjoin/private/kubeapi.h>
#include <kjoin/private/kubeconfig.h>
#include <kjoin/private/node.h>

#include "internal.h"

#define CONF_MAX (1 << 20)

static const struct {
    const char *file, *user;
    bool admin; /* the cluster's endpoint, and a group */
} confs[KJOIN_KUBECONFIGS_N] = {
    [KJOIN_KUBECONFIG_ADMIN] = {"admin.conf", "kubernetes-admin", true},
    [KJOIN_KUBECONFIG_CONTROLLER_MANAGER] = {"controller-manager.conf", "system:kube-controller-manager", false},
    [KJOIN_KUBECONFIG_SCHEDULER] = {"scheduler.conf", "system:kube-scheduler", false},
};

const char *kjoin_kubeconfig_file_name(int i) { return confs[i].file; }

/* https://host:port, brackets around an IPv6 address. */
static void url(const char *host, const char *port, char *out, size_t cap)
{
    bool v6 = strchr(host, ':') != NULL;
    snprintf(out, cap, "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port);
}

/* kubeadm's GetControlPlaneEndpoint: controlPlaneEndpoint's host and port
 * (the bind port when it has none), else the node's own endpoint. */
static void admin_server(const kjoin_cp_context *s, const char *local, char *out, size_t cap)
{
    const kjoin_cluster_configuration *c = s->cluster;
    if (!*c->control_plane_endpoint) {
        snprintf(out, cap, "%s", local);
        return;
    }
    char port[8];
    snprintf(port, sizeof(port), "%d", c->control_plane_port ? c->control_plane_port : s->bind_port);
    url(c->control_plane_host, port, out, cap);
}

/* Why the kubeconfig text there is not one kubeadm would keep ("" when it
 * is): its server, its CA, its client certificate's. */
static void judge(const char *text, size_t len, const char *server, const cp_pair *ca, int64_t now, char *why,
                  size_t cap)
{
    kjoin_kubeapi_config cfg;
    kjoin_err in;
    *why = '\0';
    if (kjoin_kubeapi_config_parse(text, len, NULL, NULL, &cfg, &in)) {
        snprintf(why, cap, "it is not a kubeconfig kjoin reads (%.200s)", in.msg);
        return;
    }
    STACK_OF(X509) *cas = cfg.ca_pem ? kjoin_certs__parse_certs(cfg.ca_pem, cfg.ca_len) : NULL;
    STACK_OF(X509) *certs = cfg.cert_pem ? kjoin_certs__parse_certs(cfg.cert_pem, cfg.cert_len) : NULL;
    EVP_PKEY *key = cfg.key_pem ? kjoin_certs__parse_key(cfg.key_pem, cfg.key_len) : NULL;
    if (strcmp(cfg.server, server))
        snprintf(why, cap, "its server is %.120s, not %.120s", cfg.server, server);
    else if (!cas || sk_X509_num(cas) < 1 || X509_cmp(sk_X509_value(cas, 0), ca->crt))
        snprintf(why, cap, "its CA is not the cluster's");
    else
        kjoin_cp__judge(certs ? sk_X509_value(certs, 0) : NULL, key, ca, "ca", now, why, cap);
    sk_X509_pop_free(cas, X509_free);
    sk_X509_pop_free(certs, X509_free);
    EVP_PKEY_free(key);
    kjoin_kubeapi_config_release(&cfg);
}

static kjoin_code make(const kjoin_cp_context *s, int i, const char *server, const cp_pair *ca,
                       EVP_PKEY *key_pair, const char *ca_pem, size_t ca_len, char **out, size_t *out_len,
                       kjoin_err *err)
{
    int minor = s->minor;
    /* admin.conf's group: kubeadm:cluster-admins, bound to cluster-admin, from 1.29 */
    const char *org = kjoin_release_of(minor)->cluster_admins_group ? "kubeadm:cluster-admins" : "system:masters";
    cert_request req = {.kind = CERT_CLIENT, .cn = confs[i].user, .orgs = confs[i].admin ? &org : NULL,
                        .n_orgs = confs[i].admin ? 1 : 0};
    char *crt = NULL, *key = NULL;
    size_t key_len = 0;
    kjoin_code rc = kjoin_cp__sign(&req, s, ca, key_pair, &crt, &key, &key_len, err);
    if (!rc) {
        kjoin_bootstrap_config c = {.cluster_name = *s->cluster->cluster_name ? s->cluster->cluster_name : "kubernetes",
                                    .server = server, .ca_pem = ca_pem, .ca_len = ca_len, .user = confs[i].user,
                                    .cert_pem = crt, .cert_len = strlen(crt), .key_pem = key, .key_len = key_len};
        rc = kjoin_kubeconfig_emit_bootstrap(&c, out, out_len, err);
    }
    free(crt);
    kjoin_free_wiped(key, key_len);
    return rc;
}

kjoin_code kjoin_control_plane_kubeconfigs(const kjoin_cp_context *s, kjoin_control_plane_kubeconfigs_result *out,
                                          kjoin_err *err)
{
    kjoin_safedir certs = {.fd = -1}, dir = {.fd = -1};
    cp_pair ca = {0};
    char local[128], admin[400], *text[KJOIN_KUBECONFIGS_N] = {0}, *ca_pem = NULL, *ca_key = NULL;
    size_t len[KJOIN_KUBECONFIGS_N] = {0}, ca_len = 0, ca_key_len = 0;
    bool missing;
    memset(out, 0, sizeof(*out));
    char port[8];
    snprintf(port, sizeof(port), "%d", s->bind_port);
    url(s->advertise_address, port, local, sizeof(local));
    admin_server(s, local, admin, sizeof(admin));
    /* where they are read and written: the node's, or a dry run's (messages name the node's) */
    char cert_dir[1400], conf_dir[1400];
    kjoin_code rc = kjoin_join_context_write_path(s->join, s->cert_dir, cert_dir, sizeof(cert_dir), err);
    if (!rc)
        rc = kjoin_join_context_write_path(s->join, s->kubernetes_dir, conf_dir, sizeof(conf_dir), err);
    if (!rc)
        rc = kjoin_safedir_open(cert_dir, 0, &certs, err);
    if (!rc)
        rc = kjoin_cp__load_ca(&certs, s->cert_dir, "ca", &ca, err);
    if (!rc)
        rc = kjoin_cp__check_trusted(&ca, s->cert_dir, s->join->ca_pem, s->join->ca_len, err);
    if (!rc) /* the CA as the file holds it, for certificate-authority-data */
        rc = kjoin_cp__read_pair(&certs, "ca", &ca_pem, &ca_len, &ca_key, &ca_key_len, &missing, err);
    kjoin_free_wiped(ca_key, ca_key_len);
    /* What is there is judged; a directory not there yet has nothing (the
     * write makes it, and takes it back if a later write fails). */
    struct stat st;
    bool empty = !rc && lstat(conf_dir, &st) != 0 && errno == ENOENT;
    if (!rc && !empty)
        rc = kjoin_safedir_open(conf_dir, 0, &dir, err);
    cp_file files[KJOIN_KUBECONFIGS_N] = {{0}};
    EVP_PKEY *keys[KJOIN_KUBECONFIGS_N] = {NULL};
    size_t n_new = 0;
    for (int i = 0; !rc && i < KJOIN_KUBECONFIGS_N; i++) { /* each file decided first */
        char *had = NULL, why[600] = "";
        size_t had_len = 0;
        bool gone = empty;
        if (!empty && (rc = kjoin_safedir_read(&dir, confs[i].file, CONF_MAX, true, &had, &had_len, &gone, err)) &&
            gone)
            rc = KJOIN_OK;
        if (!rc && !gone)
            judge(had, had_len, confs[i].admin ? admin : local, &ca, s->now, why, sizeof(why));
        kjoin_free_wiped(had, had_len);
        out->kept[i] = !rc && !gone && !*why;
        if (!rc && *why && !s->force)
            rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s is already there and %s; it is left as it is (remove it, "
                               "or ask for it to be replaced)", s->kubernetes_dir, confs[i].file, why);
        n_new += !rc && !out->kept[i];
    }
    if (!rc && n_new && !ca.key)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s/ca.key is not there to sign the kubeconfigs' certificates with",
                           s->cert_dir);
    if (!rc) /* made at once: most of a kubeconfig's cost, and one does not wait for another */
        rc = kjoin_cp__new_keys(s->cluster, keys, n_new, err);
    for (int i = 0, k = 0; !rc && i < KJOIN_KUBECONFIGS_N; i++)
        if (!out->kept[i] && !(rc = make(s, i, confs[i].admin ? admin : local, &ca, keys[k++], ca_pem, ca_len, &text[i],
                                         &len[i], err)))
            files[i] = (cp_file){confs[i].file, 0600, text[i], len[i]};
    kjoin_safedir_close(&dir);
    kjoin_safedir_close(&certs);
    if (!rc) /* what is replaced was judged above */
        rc = kjoin_cp__write_files(kjoin_cp_record_dir(s), conf_dir, files, KJOIN_KUBECONFIGS_N, true, NULL, s, err);
    for (int i = 0; i < KJOIN_KUBECONFIGS_N; i++) {
        out->written[i] = !rc && text[i];
        kjoin_free_wiped(text[i], len[i]);
    }
    for (size_t k = 0; k < n_new; k++)
        EVP_PKEY_free(keys[k]);
    free(ca_pem);
    kjoin_cp__pair_release(&ca);
    return rc;
}
