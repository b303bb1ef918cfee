/* A control-plane node's own certificates, as kubeadm's certs phase makes
 * them on a joining node: signed by the shared CAs in the certificates
 * directory, for this node's name and address and the cluster's
 * ClusterConfiguration. A pair already there is kept when it is what kubeadm
 * would make (its CA's, its key's, every name it needs); anything else there
 * is refused unless replacing was asked for. */
#include <kjoin/private/controlplane.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/x509v3.h>

#include <kjoin/private/node.h>
#include <kjoin/private/safedir.h>

#include "internal.h"

#define SANS_MAX (8 + KJOIN_SANS_MAX)

enum { CA_CLUSTER, CA_FRONT_PROXY, CA_ETCD, CA_N };
static const char *const ca_base[CA_N] = {"ca", "front-proxy-ca", "etcd/ca"};

enum { SANS_NONE, SANS_APISERVER, SANS_ETCD_SERVER, SANS_ETCD_PEER };

/* kubeadm's certificate list for a joining control-plane node, in its
 * order (GetDefaultCertList without the CAs). */
static const struct {
    const char *name, *base, *cn; /* cn NULL: the node's name */
    int ca;
    cert_kind kind;
    int sans;
    bool admins;                   /* O=system:masters, or from 1.29 (the release table) kubeadm:cluster-admins */
} leaves[KJOIN_NODE_CERTS_N] = {
    [KJOIN_CERT_APISERVER] = {"apiserver", "apiserver", "kube-apiserver", CA_CLUSTER, CERT_SERVER, SANS_APISERVER, false},
    [KJOIN_CERT_APISERVER_KUBELET_CLIENT] = {"apiserver-kubelet-client", "apiserver-kubelet-client",
                                             "kube-apiserver-kubelet-client", CA_CLUSTER, CERT_CLIENT, SANS_NONE, true},
    [KJOIN_CERT_FRONT_PROXY_CLIENT] = {"front-proxy-client", "front-proxy-client", "front-proxy-client",
                                       CA_FRONT_PROXY, CERT_CLIENT, SANS_NONE, false},
    [KJOIN_CERT_ETCD_SERVER] = {"etcd-server", "etcd/server", NULL, CA_ETCD, CERT_NODE, SANS_ETCD_SERVER, false},
    [KJOIN_CERT_ETCD_PEER] = {"etcd-peer", "etcd/peer", NULL, CA_ETCD, CERT_NODE, SANS_ETCD_PEER, false},
    [KJOIN_CERT_ETCD_HEALTHCHECK_CLIENT] = {"etcd-healthcheck-client", "etcd/healthcheck-client",
                                            "kube-etcd-healthcheck-client", CA_ETCD, CERT_CLIENT, SANS_NONE, true},
    [KJOIN_CERT_APISERVER_ETCD_CLIENT] = {"apiserver-etcd-client", "apiserver-etcd-client",
                                          "kube-apiserver-etcd-client", CA_ETCD, CERT_CLIENT, SANS_NONE, true},
};

const char *kjoin_node_cert_name(int i) { return leaves[i].name; }
const char *kjoin_node_cert_base(int i) { return leaves[i].base; }

/* The organisation kubeadm of the cluster's release puts in a leaf's subject. */
static const char *organization(int i, const kjoin_cp_context *cx)
{
    const kjoin_release *r = cx->release;
    if (!leaves[i].admins)
        return NULL;
    if (!r->cluster_admins_group)
        return "system:masters";
    if (i == KJOIN_CERT_APISERVER_KUBELET_CLIENT) /* 1.36 (and 1.33.12) authorize it by a binding instead */
        return r->kubelet_client_admins && !(r->kubelet_client_admins_until && cx->cluster->patch >= 0 &&
                                               cx->cluster->patch >= r->kubelet_client_admins_until)
                   ? "kubeadm:cluster-admins"
                   : NULL;
    return NULL;
}

/* ---- the names ------------------------------------------------------------ */

typedef struct names {
    const char *v[SANS_MAX];
    size_t n;
    char vip[64];
    char svc[300];
} names;

static void add(names *s, const char *v)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], v))
            return; /* kubeadm's RemoveDuplicateAltNames */
    if (s->n < SANS_MAX)
        s->v[s->n++] = v;
}

/* The first address of the first CIDR of list: the kubernetes Service's. */
static bool service_vip(const char *list, char *out, size_t cap)
{
    char addr[64];
    unsigned char a[16];
    size_t len = strcspn(list, "/");
    if (len >= sizeof(addr))
        return false;
    memcpy(addr, list, len);
    addr[len] = '\0';
    int af = strchr(addr, ':') ? AF_INET6 : AF_INET, bytes = af == AF_INET ? 4 : 16;
    const char *prefix = list + len + (list[len] == '/');
    char *end = NULL;
    long bits = strtol(prefix, &end, 10);
    if (inet_pton(af, addr, a) != 1 || end == prefix || (*end && *end != ',') || bits < 0 || bits > bytes * 8)
        return false;
    for (int i = 0; i < bytes; i++) /* the network address */
        a[i] &= (unsigned char)(i * 8 >= bits ? 0 : i * 8 + 8 <= bits ? 0xff : 0xff << (8 - (bits - i * 8)));
    for (int i = bytes - 1; i >= 0 && ++a[i] == 0; i--) /* plus one */
        ;
    return inet_ntop(af, a, out, (socklen_t)cap) != NULL;
}

static int by_bytes(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* DNS names first, sorted (kubeadm keeps them in a set), then IP addresses
 * in the order given, as Go's encoder writes them. */
static void dns_then_ip(names *s)
{
    const char *v[SANS_MAX];
    size_t k = 0;
    for (int ip = 0; ip < 2; ip++)
        for (size_t i = 0; i < s->n; i++)
            if (kjoin_is_ip(s->v[i]) == ip)
                v[k++] = s->v[i];
    memcpy(s->v, v, k * sizeof(v[0]));
    size_t dns = 0;
    while (dns < k && !kjoin_is_ip(s->v[dns]))
        dns++;
    qsort(s->v, dns, sizeof(s->v[0]), by_bytes);
}

static kjoin_code names_of(const kjoin_cp_context *sp, int which, names *s, kjoin_err *err)
{
    const kjoin_cluster_configuration *c = sp->cluster;
    s->n = 0;
    const kjoin_san_list *extra = NULL;
    if (which == SANS_APISERVER) {
        if (!service_vip(*c->service_subnet ? c->service_subnet : "10.96.0.0/12", s->vip, sizeof(s->vip)))
            return kjoin_err_set(err, KJOIN_E_OTHER, "the cluster's service subnet has no first address");
        snprintf(s->svc, sizeof(s->svc), "kubernetes.default.svc.%s", *c->dns_domain ? c->dns_domain : "cluster.local");
        add(s, sp->join->name.name);
        add(s, "kubernetes"), add(s, "kubernetes.default"), add(s, "kubernetes.default.svc"), add(s, s->svc);
        add(s, s->vip);
        add(s, sp->advertise_address);
        if (*c->control_plane_host)
            add(s, c->control_plane_host);
        extra = &c->apiserver_sans;
    } else if (which != SANS_NONE) {
        add(s, sp->join->name.name), add(s, "localhost");
        add(s, sp->advertise_address), add(s, "127.0.0.1"), add(s, "::1");
        extra = which == SANS_ETCD_SERVER ? &c->etcd_server_sans : &c->etcd_peer_sans;
    }
    for (size_t i = 0; extra && i < extra->n; i++)
        add(s, extra->name[i]);
    dns_then_ip(s);
    return KJOIN_OK;
}

/* Whether x names every one of s (kubeadm's validateCertificateWithConfig). */
static bool covers(X509 *x, const names *s)
{
    for (size_t i = 0; i < s->n; i++) {
        int ok = kjoin_is_ip(s->v[i]) ? X509_check_ip_asc(x, s->v[i], 0)
                                : X509_check_host(x, s->v[i], 0, X509_CHECK_FLAG_NO_WILDCARDS, NULL);
        if (ok != 1)
            return false;
    }
    return true;
}

/* ---- the pairs ------------------------------------------------------------ */

typedef struct run {
    const kjoin_cp_context *spec;
    char dir_path[1400]; /* where the certificates are read and written: cert_dir, or a dry run's (messages name
                          * cert_dir) */
    kjoin_safedir dir, etcd;
    cp_pair ca[CA_N];
    char *crt_pem[KJOIN_NODE_CERTS_N], *key_pem[KJOIN_NODE_CERTS_N];
    size_t key_len[KJOIN_NODE_CERTS_N];
} run;

static const kjoin_safedir *dir_of(const run *r, const char *base, const char **name)
{
    const char *slash = strchr(base, '/');
    *name = slash ? slash + 1 : base;
    return slash ? &r->etcd : &r->dir;
}

/* base.crt and base.key ("etcd/server": in etcd/), as text. */
static kjoin_code read_pair(const run *r, const char *base, char **crt, size_t *crt_len, char **key, size_t *key_len,
                            bool *missing, kjoin_err *err)
{
    const char *file;
    const kjoin_safedir *d = dir_of(r, base, &file);
    return kjoin_cp__read_pair(d, file, crt, crt_len, key, key_len, missing, err);
}

static kjoin_code load_ca(run *r, int i, kjoin_err *err)
{
    const char *file;
    const kjoin_safedir *d = dir_of(r, ca_base[i], &file);
    return kjoin_cp__load_ca(d, r->spec->cert_dir, ca_base[i], &r->ca[i], err);
}

/* What is there of leaf i: nothing (*keep false, *missing true), a pair
 * kubeadm would keep (*keep), or something else (an error naming why, or
 * *keep false when replacing was asked for). */
static kjoin_code check_existing(const run *r, int i, const names *s, bool *keep, kjoin_err *err)
{
    char *crt, *key, why[160] = "";
    size_t crt_len, key_len;
    bool missing;
    *keep = false;
    kjoin_code rc = read_pair(r, leaves[i].base, &crt, &crt_len, &key, &key_len, &missing, err);
    if (rc || missing)
        return rc;
    STACK_OF(X509) *all = crt ? kjoin_certs__parse_certs(crt, crt_len) : NULL;
    X509 *x = all ? sk_X509_value(all, 0) : NULL;
    EVP_PKEY *k = key ? kjoin_certs__parse_key(key, key_len) : NULL;
    kjoin_cp__judge(x, k, &r->ca[leaves[i].ca], ca_base[leaves[i].ca], r->spec->now, why, sizeof(why));
    if (!*why && !covers(x, s))
        snprintf(why, sizeof(why), "it lacks names this node needs");
    *keep = !*why;
    EVP_PKEY_free(k);
    sk_X509_pop_free(all, X509_free);
    kjoin_free_wiped(crt, crt_len);
    kjoin_free_wiped(key, key_len);
    if (*why && !r->spec->force)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s.crt is already there and %s; it is left as it is (remove "
                             "it, or ask for it to be replaced)", r->spec->cert_dir, leaves[i].base, why);
    return KJOIN_OK;
}

/* Whether leaf i can be made: its CA's key is there. */
static kjoin_code signable(const run *r, int i, kjoin_err *err)
{
    if (r->ca[leaves[i].ca].key)
        return KJOIN_OK;
    return kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s.key is not there to sign %s with (an external CA signs it: put "
                         "%s.crt and %s.key there first)", r->spec->cert_dir, ca_base[leaves[i].ca], leaves[i].name,
                         leaves[i].base, leaves[i].base);
}

static kjoin_code make(run *r, int i, const names *s, EVP_PKEY *key, kjoin_err *err)
{
    const kjoin_cp_context *sp = r->spec;
    const char *org = organization(i, sp);
    cert_request req = {.kind = leaves[i].kind, .cn = leaves[i].cn ? leaves[i].cn : sp->join->name.name,
                        .orgs = org ? &org : NULL, .n_orgs = org ? 1 : 0, .sans = s->v, .n_sans = s->n};
    return kjoin_cp__sign(&req, sp, &r->ca[leaves[i].ca], key, &r->crt_pem[i], &r->key_pem[i], &r->key_len[i], err);
}

static void release(run *r)
{
    for (int i = 0; i < CA_N; i++)
        kjoin_cp__pair_release(&r->ca[i]);
    for (int i = 0; i < KJOIN_NODE_CERTS_N; i++) {
        free(r->crt_pem[i]);
        kjoin_free_wiped(r->key_pem[i], r->key_len[i]);
    }
    kjoin_safedir_close(&r->dir);
    kjoin_safedir_close(&r->etcd);
}

kjoin_code kjoin_node_certs(const kjoin_cp_context *sp, kjoin_node_certs_result *out, kjoin_err *err)
{
    run r = {.spec = sp, .dir = {.fd = -1}, .etcd = {.fd = -1}};
    char etcd[4096];
    memset(out, 0, sizeof(*out));
    bool external = sp->cluster->external_etcd; /* no etcd CA here, and none of its leaves (GetCertsWithoutEtcd) */
    const char *dir = r.dir_path;
    if (kjoin_join_context_write_path(sp->join, sp->cert_dir, r.dir_path, sizeof(r.dir_path), err) ||
        snprintf(etcd, sizeof(etcd), "%s/etcd", dir) >= (int)sizeof(etcd))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the certificates directory's path is too long");
    struct stat st;
    if (lstat(dir, &st) != 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s/ca.crt is missing: the shared certificates come first "
                             "(downloaded with the certificate key, or copied from a control-plane node)", sp->cert_dir);
    kjoin_code rc = kjoin_safedir_open(dir, 0, &r.dir, err);
    if (!rc && !external)
        rc = kjoin_safedir_open(etcd, 0, &r.etcd, err);
    for (int i = 0; !rc && i < CA_N; i++)
        if (!external || i != CA_ETCD)
            rc = load_ca(&r, i, err);
    if (!rc)
        rc = kjoin_cp__check_trusted(&r.ca[CA_CLUSTER], sp->cert_dir, sp->join->ca_pem, sp->join->ca_len, err);
    cp_file files[2 * KJOIN_NODE_CERTS_N] = {{0}};
    char crt_name[KJOIN_NODE_CERTS_N][64], key_name[KJOIN_NODE_CERTS_N][64];
    names s[KJOIN_NODE_CERTS_N];
    EVP_PKEY *keys[KJOIN_NODE_CERTS_N] = {NULL};
    size_t n_new = 0;
    /* Every pair decided first; then the keys made at once; then signed. */
    bool wanted[KJOIN_NODE_CERTS_N];
    for (int i = 0; i < KJOIN_NODE_CERTS_N; i++)
        wanted[i] = !external || leaves[i].ca != CA_ETCD;
    for (int i = 0; !rc && i < KJOIN_NODE_CERTS_N; i++)
        if (wanted[i] && !(rc = names_of(sp, leaves[i].sans, &s[i], err)) &&
            !(rc = check_existing(&r, i, &s[i], &out->kept[i], err)) && !out->kept[i] && !(rc = signable(&r, i, err)))
            n_new++;
    if (!rc)
        rc = kjoin_cp__new_keys(sp->cluster, keys, n_new, err);
    for (int i = 0, k = 0; !rc && i < KJOIN_NODE_CERTS_N; i++) {
        if (!wanted[i] || out->kept[i] || (rc = make(&r, i, &s[i], keys[k++], err)))
            continue;
        snprintf(crt_name[i], sizeof(crt_name[i]), "%s.crt", leaves[i].base);
        snprintf(key_name[i], sizeof(key_name[i]), "%s.key", leaves[i].base);
        files[2 * i] = (cp_file){crt_name[i], 0644, r.crt_pem[i], strlen(r.crt_pem[i])};
        files[2 * i + 1] = (cp_file){key_name[i], 0600, r.key_pem[i], r.key_len[i]};
    }
    kjoin_write_result written[2 * KJOIN_NODE_CERTS_N];
    if (!rc) /* made ones replace what was there only when that was asked for (checked above) */
        rc = kjoin_cp__write_files(kjoin_cp_record_dir(sp), dir, files, 2 * KJOIN_NODE_CERTS_N, true, written, sp, err);
    for (int i = 0; !rc && i < KJOIN_NODE_CERTS_N; i++)
        out->written[i] = wanted[i] && !out->kept[i];
    out->skipped_sans = sp->cluster->apiserver_sans.skipped + sp->cluster->etcd_server_sans.skipped +
                        sp->cluster->etcd_peer_sans.skipped;
    for (size_t k = 0; k < n_new; k++)
        EVP_PKEY_free(keys[k]);
    release(&r);
    return rc;
}
