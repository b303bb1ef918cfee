/* The ClusterConfiguration's fields a control-plane node's own certificates
 * are made from, checked as kubeadm checks them: the cluster's data goes
 * into certificates every client of this node trusts. */
#include <arpa/inet.h>
#include <stddef.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <kjoin/private/cluster.h>
#include <kjoin/private/kubeapi.h>
#include <kjoin/private/util.h>

#include "../yamldoc/yamldoc.h"

#define BAD KJOIN_E_OTHER /* the cluster's data, not the user's */

/* The scalar at path (keys, NULL-terminated) below root; NULL when any key
 * on the way is absent or null. */
static kjoin_code at(kjoin_yaml *y, yaml_node_t *root, const char *const *path, yaml_node_t **out, kjoin_err *err)
{
    yaml_node_t *n = root;
    *out = NULL;
    for (size_t i = 0; path[i]; i++) {
        if (kjoin_yaml__is_null(n))
            return KJOIN_OK;
        kjoin_code rc = kjoin_yaml__get(y, n, path[i], &n, BAD, err);
        if (rc || !n)
            return rc;
    }
    *out = kjoin_yaml__is_null(n) ? NULL : n;
    return KJOIN_OK;
}

static kjoin_code text(kjoin_yaml *y, yaml_node_t *root, const char *const *path, const char *what, char *out,
                       size_t cap, kjoin_err *err)
{
    yaml_node_t *n;
    kjoin_code rc = at(y, root, path, &n, err);
    if (rc || !n)
        return rc;
    const char *v = kjoin_yaml__str(n);
    if (!v || strlen(v) >= cap || !kjoin_utf8_printable(v))
        return kjoin_err_set(err, BAD, "the ClusterConfiguration's %s at line %zu is not a printable string of at "
                             "most %zu bytes", what, KJOIN_YAML_LINE(n), cap - 1);
    memcpy(out, v, strlen(v) + 1);
    return KJOIN_OK;
}

/* RFC 1123 subdomain, as Kubernetes' IsDNS1123Subdomain: lower case
 * letters, digits, '-' and '.', labels starting and ending alphanumeric;
 * wildcard: "*." and such a name. */
bool kjoin_dns1123_subdomain(const char *s, bool wildcard)
{
    if (wildcard && !strncmp(s, "*.", 2))
        s += 2;
    size_t n = strlen(s), label = 0;
    if (!n || n > 253)
        return false;
    for (size_t i = 0; i <= n; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (c == '.' || c == '\0') {
            if (!label || s[i - 1] == '-')
                return false;
            label = 0;
        } else if (alnum || (c == '-' && label)) {
            label++;
        } else {
            return false;
        }
    }
    return true;
}

static kjoin_code sans(kjoin_yaml *y, yaml_node_t *root, const char *const *path, const char *what,
                       kjoin_san_list *out, kjoin_err *err)
{
    yaml_node_t *seq;
    kjoin_code rc = at(y, root, path, &seq, err);
    if (rc || !seq)
        return rc;
    if (seq->type != YAML_SEQUENCE_NODE)
        return kjoin_err_set(err, BAD, "the ClusterConfiguration's %s at line %zu is not a list", what,
                             KJOIN_YAML_LINE(seq));
    for (size_t i = 0; i < kjoin_yaml__len(seq); i++) {
        yaml_node_t *item = kjoin_yaml__item(y, seq, i);
        const char *v = item ? kjoin_yaml__str(item) : NULL;
        if (!v)
            return kjoin_err_set(err, BAD, "the ClusterConfiguration's %s has an item that is not a string", what);
        if (!kjoin_is_ip(v) && !kjoin_dns1123_subdomain(v, true)) {
            out->skipped++; /* kubeadm warns and leaves it out */
            continue;
        }
        if (out->n == KJOIN_SANS_MAX)
            return kjoin_err_set(err, BAD, "the ClusterConfiguration's %s has more than %d names", what,
                                 KJOIN_SANS_MAX);
        memcpy(out->name[out->n++], v, strlen(v) + 1);
    }
    return KJOIN_OK;
}

const char *kjoin_extra_arg(const kjoin_extra_args *a, const char *name)
{
    for (size_t i = 0; i < a->n; i++)
        if (!strcmp(a->v[i].name, name))
            return a->v[i].value;
    return NULL;
}

static kjoin_code add_arg(kjoin_extra_args *a, const char *what, const char *name, const char *value,
                          kjoin_arg_merge merge, kjoin_err *err)
{
    if (!name || !value || !*name || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(name) ||
        strlen(name) >= sizeof(a->v[0].name) || strlen(value) >= sizeof(a->v[0].value) ||
        !kjoin_utf8_printable(value))
        return kjoin_err_set(err, BAD, "the ClusterConfiguration's %s has an argument that is not a flag name of "
                             "[a-z0-9-] with a printable value of at most %zu bytes", what, sizeof(a->v[0].value) - 1);
    if (a->n == KJOIN_EXTRA_ARGS_MAX)
        return kjoin_err_set(err, BAD, "the ClusterConfiguration's %s has more than %d arguments", what,
                             KJOIN_EXTRA_ARGS_MAX);
    memcpy(a->v[a->n].name, name, strlen(name) + 1);
    memcpy(a->v[a->n].value, value, strlen(value) + 1);
    a->v[a->n++].merge = merge;
    return KJOIN_OK;
}

/* extraArgs at path: a map (v1beta2, v1beta3) or a list of name and value
 * (v1beta4, v1), with the mergeMethod (append or prepend) of kubeadm.k8s.io/v1
 * when merge (v1beta4 has none: kubeadm drops the field, and so does kjoin). */
static kjoin_code extra_args(kjoin_yaml *y, yaml_node_t *root, const char *const *path, const char *what,
                             bool merge_methods, kjoin_extra_args *out, kjoin_err *err)
{
    yaml_node_t *n;
    kjoin_code rc = at(y, root, path, &n, err);
    if (rc || !n)
        return rc;
    if (n->type == YAML_MAPPING_NODE) {
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; !rc && p < n->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(&y->doc, p->key), *v = yaml_document_get_node(&y->doc, p->value);
            rc = add_arg(out, what, k ? kjoin_yaml__str(k) : NULL, v ? kjoin_yaml__str(v) : NULL, KJOIN_ARG_REPLACE,
                         err);
        }
        return rc;
    }
    if (n->type != YAML_SEQUENCE_NODE)
        return kjoin_err_set(err, BAD, "the ClusterConfiguration's %s at line %zu is neither a map nor a list", what,
                             KJOIN_YAML_LINE(n));
    static const char *const name[] = {"name", NULL}, *const value[] = {"value", NULL},
                             *const merge[] = {"mergeMethod", NULL};
    for (size_t i = 0; !rc && i < kjoin_yaml__len(n); i++) {
        yaml_node_t *item = kjoin_yaml__item(y, n, i), *nn, *vn, *mn;
        if (!item || item->type != YAML_MAPPING_NODE)
            return kjoin_err_set(err, BAD, "the ClusterConfiguration's %s has an item that is not a mapping", what);
        if (!(rc = at(y, item, name, &nn, err)) && !(rc = at(y, item, value, &vn, err)) &&
            !(rc = at(y, item, merge, &mn, err))) {
            const char *m = mn ? kjoin_yaml__str(mn) : "";
            int how = !m ? -1 : !*m ? KJOIN_ARG_REPLACE : !strcmp(m, "append") ? KJOIN_ARG_APPEND
                      : !strcmp(m, "prepend") ? KJOIN_ARG_PREPEND : -1;
            if (how < 0)
                return kjoin_err_set(err, BAD, "the ClusterConfiguration's %s has a mergeMethod that is neither "
                                     "append nor prepend (line %zu)", what, KJOIN_YAML_LINE(mn));
            rc = add_arg(out, what, nn ? kjoin_yaml__str(nn) : NULL, vn ? kjoin_yaml__str(vn) : "",
                         merge_methods ? (kjoin_arg_merge)how : KJOIN_ARG_REPLACE, err);
        }
    }
    return rc;
}

/* An absolute printable path of at most cap - 1 bytes. */
static bool host_path(const char *p, size_t cap)
{
    return p && *p == '/' && strlen(p) < cap && kjoin_utf8_printable(p) && !strpbrk(p, "\"\\");
}

/* The list at path (*out NULL when there is none): at most max items.
 * Errors: KJOIN_E_OTHER (not a list, too long). */
static kjoin_code list_at(kjoin_yaml *y, yaml_node_t *root, const char *const *path, const char *what, size_t max,
                          yaml_node_t **out, kjoin_err *err)
{
    kjoin_code rc = at(y, root, path, out, err);
    if (!rc && *out && ((*out)->type != YAML_SEQUENCE_NODE || kjoin_yaml__len(*out) > max)) {
        rc = kjoin_err_set(err, BAD, "the ClusterConfiguration's %s at line %zu is not a list of at most %zu", what,
                           KJOIN_YAML_LINE(*out), max);
        *out = NULL;
    }
    return rc;
}

/* extraVolumes at path: a list of kubeadm's HostPathMount (name, hostPath,
 * mountPath, readOnly, pathType). */
static kjoin_code extra_volumes(kjoin_yaml *y, yaml_node_t *root, const char *const *path, const char *what,
                                kjoin_extra_volumes *out, kjoin_err *err)
{
    static const char *const types[] = {"", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket",
                                        "CharDevice", "BlockDevice"};
    yaml_node_t *n;
    kjoin_code rc = list_at(y, root, path, what, KJOIN_EXTRA_VOLUMES_MAX, &n, err);
    for (size_t i = 0; !rc && n && i < kjoin_yaml__len(n); i++) {
        yaml_node_t *item = kjoin_yaml__item(y, n, i), *f[5] = {NULL};
        static const char *const keys[5][2] = {{"name", NULL}, {"hostPath", NULL}, {"mountPath", NULL},
                                                {"readOnly", NULL}, {"pathType", NULL}};
        for (int k = 0; !rc && item && item->type == YAML_MAPPING_NODE && k < 5; k++)
            rc = at(y, item, keys[k], &f[k], err);
        if (rc)
            return rc;
        const char *name = f[0] ? kjoin_yaml__str(f[0]) : NULL, *host = f[1] ? kjoin_yaml__str(f[1]) : NULL,
                   *mount = f[2] ? kjoin_yaml__str(f[2]) : NULL, *type = f[4] ? kjoin_yaml__str(f[4]) : "";
        bool ro = false, known_type = false;
        for (size_t t = 0; type && t < sizeof(types) / sizeof(types[0]); t++)
            known_type |= !strcmp(type, types[t]);
        if (!item || item->type != YAML_MAPPING_NODE || !name || strlen(name) > 63 ||
            !kjoin_dns1123_subdomain(name, false) || strchr(name, '.') || !host_path(host, sizeof(out->v[0].host_path)) ||
            !host_path(mount, sizeof(out->v[0].mount_path)) || (f[3] && !kjoin_yaml__bool(f[3], &ro)) || !known_type)
            return kjoin_err_set(err, BAD, "the ClusterConfiguration's %s item %zu is not a volume kubeadm mounts (a "
                                 "DNS-1123 label as its name, absolute printable host and mount paths, readOnly "
                                 "true or false, a HostPathType)", what, i + 1);
        memcpy(out->v[i].name, name, strlen(name) + 1);
        memcpy(out->v[i].host_path, host, strlen(host) + 1);
        memcpy(out->v[i].mount_path, mount, strlen(mount) + 1);
        memcpy(out->v[i].path_type, type, strlen(type) + 1);
        out->v[i].read_only = ro;
        out->n = i + 1;
    }
    return rc;
}

/* extraEnvs at path: a list of name and value (a valueFrom is noted as
 * unsupported). */
static kjoin_code extra_envs(kjoin_yaml *y, yaml_node_t *root, const char *const *path, const char *what,
                             kjoin_extra_envs *out, kjoin_cluster_configuration *c, kjoin_err *err)
{
    yaml_node_t *n;
    kjoin_code rc = list_at(y, root, path, what, KJOIN_EXTRA_ENVS_MAX, &n, err);
    static const char *const name_key[] = {"name", NULL}, *const value_key[] = {"value", NULL},
                             *const from_key[] = {"valueFrom", NULL};
    for (size_t i = 0; !rc && n && i < kjoin_yaml__len(n); i++) {
        yaml_node_t *item = kjoin_yaml__item(y, n, i), *nn = NULL, *vn = NULL, *fn = NULL;
        if (item && item->type == YAML_MAPPING_NODE && !(rc = at(y, item, name_key, &nn, err)) &&
            !(rc = at(y, item, value_key, &vn, err)))
            rc = at(y, item, from_key, &fn, err);
        if (rc)
            return rc;
        const char *name = nn ? kjoin_yaml__str(nn) : NULL, *value = vn ? kjoin_yaml__str(vn) : "";
        if (!item || item->type != YAML_MAPPING_NODE || !name || !*name || strlen(name) >= sizeof(out->v[0].name) ||
            strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") != strlen(name) ||
            (*name >= '0' && *name <= '9') || !value || strlen(value) >= sizeof(out->v[0].value) ||
            !kjoin_utf8_printable(value))
            return kjoin_err_set(err, BAD, "the ClusterConfiguration's %s item %zu is not a variable (a name of "
                                 "letters, digits, '_', '.', '-', a printable value of at most %zu bytes)", what,
                                 i + 1, sizeof(out->v[0].value) - 1);
        if (fn && !*c->unsupported)
            snprintf(c->unsupported, sizeof(c->unsupported), "%s[].valueFrom", what);
        memcpy(out->v[i].name, name, strlen(name) + 1);
        memcpy(out->v[i].value, value, strlen(value) + 1);
        out->n = i + 1;
    }
    return rc;
}

/* etcd.external as kubeadm's ValidateEtcd checks it: endpoints (URLs,
 * https:// whenever a file is given), caFile, certFile and keyFile
 * (absolute, both or neither of the pair, the CA with them). */
static kjoin_code external_etcd(kjoin_yaml *y, yaml_node_t *ext, kjoin_cluster_configuration *c, kjoin_err *err)
{
    static const char *const endpoints[] = {"endpoints", NULL}, *const ca[] = {"caFile", NULL},
                             *const cert[] = {"certFile", NULL}, *const key[] = {"keyFile", NULL};
    char given[3][512] = {"", "", ""};
    char *const clean[3] = {c->external_ca_file, c->external_cert_file, c->external_key_file};
    const char *const *const files[3] = {ca, cert, key};
    static const char *const names[3] = {"caFile", "certFile", "keyFile"};
    kjoin_code rc = KJOIN_OK;
    for (int i = 0; !rc && i < 3; i++)
        if (!(rc = text(y, ext, files[i], names[i], given[i], sizeof(given[i]), err)) && *given[i] &&
            (!kjoin_path_clean(given[i], clean[i], sizeof(c->external_ca_file)) || !kjoin_utf8_printable(given[i])))
            rc = kjoin_err_set(err, BAD, "the ClusterConfiguration's etcd.external.%s is not an absolute, printable "
                               "path without \"..\"", names[i]);
    if (!rc && (!*c->external_cert_file != !*c->external_key_file || (*c->external_cert_file && !*c->external_ca_file)))
        rc = kjoin_err_set(err, BAD, "the ClusterConfiguration's etcd.external has one of certFile and keyFile "
                           "without the other, or them without caFile");
    yaml_node_t *list;
    if (!rc && !(rc = at(y, ext, endpoints, &list, err)) &&
        (!list || list->type != YAML_SEQUENCE_NODE || !kjoin_yaml__len(list)))
        rc = kjoin_err_set(err, BAD, "the ClusterConfiguration's etcd.external.endpoints is not a list of at least "
                           "one URL");
    bool https = *c->external_ca_file || *c->external_cert_file;
    size_t used = 0;
    for (size_t i = 0; !rc && i < kjoin_yaml__len(list); i++) {
        yaml_node_t *item = kjoin_yaml__item(y, list, i);
        const char *u = item ? kjoin_yaml__str(item) : NULL;
        bool ok = u && (!strncmp(u, "https://", 8) || (!https && !strncmp(u, "http://", 7))) &&
                  strlen(u) > 8 && !strpbrk(u, ", \t\"'\\") && kjoin_utf8_printable(u) &&
                  used + strlen(u) + 2 < sizeof(c->external_endpoints);
        if (!ok)
            return kjoin_err_set(err, BAD, "the ClusterConfiguration's etcd.external.endpoints item %zu is not a URL "
                                 "(https:// when the files are given)", i + 1);
        used += (size_t)snprintf(c->external_endpoints + used, sizeof(c->external_endpoints) - used, "%s%s",
                                 i ? "," : "", u);
    }
    return rc;
}

/* One CIDR: an address and a prefix length its family allows. */
static bool cidr(const char *s, size_t len)
{
    char addr[64];
    const char *slash = memchr(s, '/', len);
    if (!slash || (size_t)(slash - s) >= sizeof(addr) || slash + 1 == s + len)
        return false;
    memcpy(addr, s, (size_t)(slash - s));
    addr[slash - s] = '\0';
    unsigned char a[16];
    int max = inet_pton(AF_INET, addr, a) == 1 ? 32 : inet_pton(AF_INET6, addr, a) == 1 ? 128 : -1;
    int bits = 0;
    for (const char *p = slash + 1; p < s + len; p++) {
        if (*p < '0' || *p > '9' || (bits = bits * 10 + (*p - '0')) > 128)
            return false;
    }
    return max > 0 && bits <= max;
}

/* A Go duration of whole hours, minutes and seconds ("8760h0m0s"), in
 * seconds; -1 for anything else or not positive. */
/* A list of CIDRs, comma-separated, none of them empty. */
static kjoin_code cidrs(kjoin_yaml *y, yaml_node_t *root, const char *const *path, const char *what, char *out,
                        size_t cap, kjoin_err *err)
{
    kjoin_code rc = text(y, root, path, what, out, cap, err);
    for (const char *p = out; !rc && *out; p++) {
        size_t len = strcspn(p, ",");
        if (!cidr(p, len))
            return kjoin_err_set(err, BAD, "the ClusterConfiguration's %s is not a list of CIDRs", what);
        if (!p[len])
            break;
        p += len;
    }
    return rc;
}

/* Seconds of a Go duration of whole h, m and s ("4m0s"); -1 for anything
 * else, and for more than Go's largest Duration (2^63 - 1 ns, about 292
 * years), which Go itself refuses: the sum is bounded before it is made, so
 * nothing derived from it (a probe's failureThreshold) can overflow. */
static int64_t go_duration(const char *s)
{
    const int64_t max_s = INT64_MAX / 1000000000;
    int64_t total = 0;
    if (!*s)
        return -1;
    while (*s) {
        int64_t v = 0;
        const char *start = s;
        for (; *s >= '0' && *s <= '9'; s++)
            if ((v = v * 10 + (*s - '0')) > max_s)
                return -1;
        int64_t unit = *s == 'h' ? 3600 : *s == 'm' && s[1] != 's' ? 60 : *s == 's' ? 1 : 0;
        if (s == start || !unit || v > (max_s - total) / unit)
            return -1;
        total += v * unit, s++;
    }
    return total > 0 ? total : -1;
}

static kjoin_code manifest_fields(kjoin_yaml *y, yaml_node_t *root, kjoin_cluster_configuration *c, kjoin_err *err);

static kjoin_code control_plane_fields(kjoin_yaml *y, yaml_node_t *root, kjoin_cluster_configuration *c,
                                            kjoin_err *err)
{
    static const char *const subnet[] = {"networking", "serviceSubnet", NULL}, *const name[] = {"clusterName", NULL},
                             *const domain[] = {"networking", "dnsDomain", NULL},
                             *const endpoint[] = {"controlPlaneEndpoint", NULL},
                             *const api_sans[] = {"apiServer", "certSANs", NULL},
                             *const server_sans[] = {"etcd", "local", "serverCertSANs", NULL},
                             *const peer_sans[] = {"etcd", "local", "peerCertSANs", NULL},
                             *const external[] = {"etcd", "external", NULL},
                             *const data_dir[] = {"etcd", "local", "dataDir", NULL},
                             *const algorithm[] = {"encryptionAlgorithm", NULL},
                             *const validity[] = {"certificateValidityPeriod", NULL},
                             *const pods[] = {"networking", "podSubnet", NULL};
    static const char *const algorithms[] = {"RSA-2048", "RSA-3072", "RSA-4096", "ECDSA-P256", "ECDSA-P384"};
    char period[32] = "";
    yaml_node_t *n;
    kjoin_code rc = text(y, root, name, "clusterName", c->cluster_name, sizeof(c->cluster_name), err);
    if (!rc && strpbrk(c->cluster_name, "\"\\"))
        rc = kjoin_err_set(err, BAD, "the ClusterConfiguration's clusterName has quotes or backslashes");
    if (!rc)
        rc = cidrs(y, root, subnet, "networking.serviceSubnet", c->service_subnet, sizeof(c->service_subnet), err);
    if (!rc)
        rc = cidrs(y, root, pods, "networking.podSubnet", c->pod_subnet, sizeof(c->pod_subnet), err);
    if (!rc && !(rc = text(y, root, domain, "networking.dnsDomain", c->dns_domain, sizeof(c->dns_domain), err)) &&
        *c->dns_domain && !kjoin_dns1123_subdomain(c->dns_domain, false))
        rc = kjoin_err_set(err, BAD, "the ClusterConfiguration's networking.dnsDomain is not a DNS name");
    if (!rc && !(rc = text(y, root, endpoint, "controlPlaneEndpoint", c->control_plane_endpoint,
                           sizeof(c->control_plane_endpoint), err)) && *c->control_plane_endpoint) {
        /* Split once here ("host", "host:port", "[v6]:port", a bare v6
         * address): the certificates and kubeconfigs take the parts. */
        char *host = c->control_plane_host;
        const char *e = c->control_plane_endpoint;
        size_t len = e[0] == '[' ? strcspn(e, "]") + 1 : strchr(e, ':') == strrchr(e, ':') ? strcspn(e, ":") : strlen(e);
        snprintf(host, sizeof(c->control_plane_host), "%.*s", (int)(e[0] == '[' ? len - 2 : len), e + (e[0] == '['));
        const char *port = e + len;
        long number = *port ? strtol(port + 1, NULL, 10) : 0;
        bool port_ok = !*port || (*port == ':' && port[1] && strspn(port + 1, "0123456789") == strlen(port + 1) &&
                                  strlen(port + 1) <= 5 && number <= 65535);
        if (!port_ok || (!kjoin_is_ip(host) && !kjoin_dns1123_subdomain(host, false)))
            rc = kjoin_err_set(err, BAD, "the ClusterConfiguration's controlPlaneEndpoint is not host or host:port");
        c->control_plane_port = (int)number;
    }
    if (!rc)
        rc = sans(y, root, api_sans, "apiServer.certSANs", &c->apiserver_sans, err);
    if (!rc)
        rc = sans(y, root, server_sans, "etcd.local.serverCertSANs", &c->etcd_server_sans, err);
    if (!rc)
        rc = sans(y, root, peer_sans, "etcd.local.peerCertSANs", &c->etcd_peer_sans, err);
    if (!rc && !(rc = at(y, root, external, &n, err)) && (c->external_etcd = n != NULL))
        rc = external_etcd(y, n, c, err);
    char given[sizeof(c->etcd_data_dir)] = "";
    if (!rc && !(rc = text(y, root, data_dir, "etcd.local.dataDir", given, sizeof(given), err)) && *given &&
        !kjoin_path_clean(given, c->etcd_data_dir, sizeof(c->etcd_data_dir)))
        rc = kjoin_err_set(err, BAD, "the ClusterConfiguration's etcd.local.dataDir is not an absolute path without \"..\"");
    if (!rc && !(rc = text(y, root, algorithm, "encryptionAlgorithm", c->encryption_algorithm,
                           sizeof(c->encryption_algorithm), err)) && *c->encryption_algorithm) {
        bool known = false;
        for (size_t i = 0; i < sizeof(algorithms) / sizeof(algorithms[0]); i++)
            known |= !strcmp(c->encryption_algorithm, algorithms[i]);
        if (!known)
            rc = kjoin_err_set(err, BAD, "the ClusterConfiguration's encryptionAlgorithm is none of kubeadm's "
                               "(RSA-2048, RSA-3072, RSA-4096, ECDSA-P256, ECDSA-P384)");
    }
    if (!rc && !(rc = text(y, root, validity, "certificateValidityPeriod", period, sizeof(period), err)) && *period &&
        (c->certificate_validity_s = go_duration(period)) < 0)
        rc = kjoin_err_set(err, BAD, "the ClusterConfiguration's certificateValidityPeriod is not a positive duration "
                           "of hours, minutes and seconds");
    return rc ? rc : manifest_fields(y, root, c, err);
}

static bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

/* One path component of an image reference (the distribution grammar):
 * lower-case letters and digits, separated by '.', '_' or '-'. */
static bool path_component(const char *s, size_t n)
{
    if (!n || !lower_alnum(s[0]) || !lower_alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!lower_alnum(s[i]) && !strchr("._-", s[i]))
            return false;
    return true;
}

/* An image repository as the distribution reference grammar has one: an
 * optional registry host (with '.' or ':', or localhost; then a port of
 * digits), then path components; never an option for a runtime's client
 * ("--pod-config=..."). "" (not set) passes. */
static bool image_repository(const char *r)
{
    const char *slash = strchr(r, '/');
    size_t first = slash ? (size_t)(slash - r) : strlen(r);
    if (!*r)
        return true;
    if (slash && (memchr(r, '.', first) || memchr(r, ':', first) || (first == 9 && !strncmp(r, "localhost", 9)))) {
        size_t host = strcspn(r, ":/");
        if (!host || !isalnum((unsigned char)r[0]) || strspn(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                                 "0123456789.-") != host)
            return false;
        if (r[host] == ':' && (host + 1 == first || strspn(r + host + 1, "0123456789") != first - host - 1))
            return false;
        r = slash + 1;
    }
    for (const char *p = r;; p += strcspn(p, "/") + 1) {
        if (!path_component(p, strcspn(p, "/")))
            return false;
        if (!strchr(p, '/'))
            return true;
    }
}

static kjoin_code manifest_fields(kjoin_yaml *y, yaml_node_t *root, kjoin_cluster_configuration *c, kjoin_err *err)
{
    static const char *const repo[] = {"imageRepository", NULL}, *const ci_repo[] = {"ciImageRepository", NULL},
                             *const timeout[] = {"apiServer", "timeoutForControlPlane", NULL},
                             *const rootless[] = {"featureGates", "RootlessControlPlane", NULL},
                             *const dual_stack[] = {"featureGates", "IPv6DualStack", NULL};
    static const struct {
        const char *component;
        size_t args, volumes, envs;
    } components[] = {
        {"apiServer", offsetof(kjoin_cluster_configuration, apiserver_args),
         offsetof(kjoin_cluster_configuration, apiserver_volumes), offsetof(kjoin_cluster_configuration, apiserver_envs)},
        {"controllerManager", offsetof(kjoin_cluster_configuration, controller_manager_args),
         offsetof(kjoin_cluster_configuration, controller_manager_volumes),
         offsetof(kjoin_cluster_configuration, controller_manager_envs)},
        {"scheduler", offsetof(kjoin_cluster_configuration, scheduler_args),
         offsetof(kjoin_cluster_configuration, scheduler_volumes), offsetof(kjoin_cluster_configuration, scheduler_envs)},
    };
    char ci[256] = "", period[32] = "", what[80];
    const char *api = NULL;
    kjoin_code rc = kjoin_yaml__scalar(y, root, "the ClusterConfiguration", "apiVersion", &api, BAD, err);
    bool merge_methods = api && !strcmp(api, "kubeadm.k8s.io/v1");
    if (!rc)
        rc = text(y, root, repo, "imageRepository", c->image_repository, sizeof(c->image_repository), err);
    if (!rc && !(rc = text(y, root, ci_repo, "ciImageRepository", ci, sizeof(ci), err)) && *ci)
        memcpy(c->image_repository, ci, sizeof(ci));
    if (!rc && !image_repository(c->image_repository))
        rc = kjoin_err_set(err, BAD, "the ClusterConfiguration's imageRepository is not an image repository "
                           "([host[:port]/]path, lower-case)");
    if (!rc && !(rc = text(y, root, timeout, "apiServer.timeoutForControlPlane", period, sizeof(period), err)) &&
        *period && (c->control_plane_timeout_s = go_duration(period)) < 0)
        rc = kjoin_err_set(err, BAD, "the ClusterConfiguration's apiServer.timeoutForControlPlane is not a positive "
                           "duration");
    for (size_t i = 0; !rc && i < sizeof(components) / sizeof(components[0]); i++) {
        const char *const args[] = {components[i].component, "extraArgs", NULL},
                          *const vols[] = {components[i].component, "extraVolumes", NULL},
                          *const envs[] = {components[i].component, "extraEnvs", NULL};
        snprintf(what, sizeof(what), "%s.extraArgs", components[i].component);
        rc = extra_args(y, root, args, what, merge_methods,
                        (kjoin_extra_args *)((char *)c + components[i].args), err);
        snprintf(what, sizeof(what), "%s.extraVolumes", components[i].component);
        if (!rc)
            rc = extra_volumes(y, root, vols, what, (kjoin_extra_volumes *)((char *)c + components[i].volumes), err);
        snprintf(what, sizeof(what), "%s.extraEnvs", components[i].component);
        if (!rc)
            rc = extra_envs(y, root, envs, what, (kjoin_extra_envs *)((char *)c + components[i].envs), c, err);
    }
    static const char *const etcd_args[] = {"etcd", "local", "extraArgs", NULL},
                             *const etcd_envs[] = {"etcd", "local", "extraEnvs", NULL},
                             *const etcd_repo[] = {"etcd", "local", "imageRepository", NULL},
                             *const etcd_tag[] = {"etcd", "local", "imageTag", NULL};
    if (!rc)
        rc = extra_args(y, root, etcd_args, "etcd.local.extraArgs", merge_methods, &c->etcd_args, err);
    if (!rc)
        rc = extra_envs(y, root, etcd_envs, "etcd.local.extraEnvs", &c->etcd_envs, c, err);
    if (!rc && kjoin_extra_arg(&c->etcd_args, "listen-metrics-urls") && !*c->unsupported)
        snprintf(c->unsupported, sizeof(c->unsupported), "etcd.local.extraArgs' listen-metrics-urls");
    if (!rc)
        rc = text(y, root, etcd_repo, "etcd.local.imageRepository", c->etcd_image_repository,
                  sizeof(c->etcd_image_repository), err);
    if (!rc)
        rc = text(y, root, etcd_tag, "etcd.local.imageTag", c->etcd_image_tag, sizeof(c->etcd_image_tag), err);
    if (!rc && (!image_repository(c->etcd_image_repository) || strpbrk(c->etcd_image_tag, " \"'\\/:@")))
        rc = kjoin_err_set(err, BAD, "the ClusterConfiguration's etcd.local image repository or tag is not one");
    yaml_node_t *n;
    bool on = false;
    if (!rc && !(rc = at(y, root, rootless, &n, err)) && n && kjoin_yaml__bool(n, &on) && on && !*c->unsupported)
        snprintf(c->unsupported, sizeof(c->unsupported), "featureGates.RootlessControlPlane");
    /* kubeadm to 1.22 passes it on to the components as a flag of their own */
    if (!rc && !(rc = at(y, root, dual_stack, &n, err)) && n && !*c->unsupported)
        snprintf(c->unsupported, sizeof(c->unsupported), "featureGates.IPv6DualStack");
    return rc;
}

/* featureGates.<gate>: 1 or 0, -1 when not set. */
static kjoin_code feature_gate(kjoin_yaml *y, yaml_node_t *root, const char *gate, int *out, kjoin_err *err)
{
    yaml_node_t *gates = NULL;
    *out = -1;
    kjoin_code rc = kjoin_yaml__get(y, root, "featureGates", &gates, BAD, err);
    if (rc || !gates || kjoin_yaml__is_null(gates))
        return rc;
    return kjoin_yaml__boolean(y, gates, "the ClusterConfiguration's featureGates", gate, out, BAD, err);
}

kjoin_code kjoin_cluster_configuration_parse(const char *yaml, size_t len, kjoin_cluster_configuration *out,
                                             kjoin_err *err)
{
    kjoin_yaml y;
    yaml_node_t *root;
    const char *v;
    unsigned major = 0, mnr = 0, patch = 0;
    kjoin_cluster_configuration c = {.node_local_cri_socket = -1, .etcd_learner_mode = -1, .kubelet_local_mode = -1,
                                     .patch = -1};
    kjoin_code rc = kjoin_yaml__load_kind(&y, yaml, len, "the ClusterConfiguration", "kubeadm.k8s.io/",
                                          "ClusterConfiguration", &root, BAD, err);
    if (rc)
        return rc;
    if (!(rc = kjoin_yaml__scalar(&y, root, "the ClusterConfiguration", "kubernetesVersion", &v, BAD, err)) && v) {
        if (sscanf(v, "v%u.%u", &major, &mnr) != 2 || major != 1 || mnr > 999 || strlen(v) >= sizeof(c.version) ||
            strspn(v, "v0123456789.-+abcdefghijklmnopqrstuvwxyz") != strlen(v))
            rc = kjoin_err_set(err, BAD, "the ClusterConfiguration's kubernetesVersion is not \"v1.N...\"");
        else {
            memcpy(c.version, v, strlen(v) + 1);
            c.minor = (int)mnr;
            c.patch = sscanf(v, "v%*u.%*u.%u", &patch) == 1 && patch < 10000 ? (int)patch : -1;
        }
    }
    if (!rc)
        rc = feature_gate(&y, root, "NodeLocalCRISocket", &c.node_local_cri_socket, err);
    if (!rc)
        rc = feature_gate(&y, root, "EtcdLearnerMode", &c.etcd_learner_mode, err);
    if (!rc)
        rc = feature_gate(&y, root, "ControlPlaneKubeletLocalMode", &c.kubelet_local_mode, err);
    if (!rc && !(rc = kjoin_yaml__scalar(&y, root, "the ClusterConfiguration", "certificatesDir", &v, BAD, err)) && v &&
        (!kjoin_path_clean(v, c.certificates_dir, sizeof(c.certificates_dir)) || !kjoin_utf8_printable(v)))
        rc = kjoin_err_set(err, BAD, "the ClusterConfiguration's certificatesDir is not an absolute, printable "
                           "path without \"..\"");
    if (!rc)
        rc = control_plane_fields(&y, root, &c, err);
    kjoin_yaml__release(&y);
    if (!rc)
        *out = c;
    return rc;
}

/* Where a kubeadm configuration file's ClusterConfiguration is. */
typedef struct cluster_document {
    size_t start, end;
    bool found;
} cluster_document;

static kjoin_code find_cluster_document(kjoin_yaml *y, yaml_node_t *root, void *ctx, kjoin_err *err)
{
    cluster_document *d = ctx;
    const char *kind = NULL;
    if (root->type != YAML_MAPPING_NODE)
        return KJOIN_OK;
    kjoin_code rc = kjoin_yaml__scalar(y, root, "a document of the configuration", "kind", &kind, BAD, err);
    if (rc || !kind || strcmp(kind, "ClusterConfiguration"))
        return rc;
    if (d->found)
        return kjoin_err_set(err, BAD, "a second ClusterConfiguration at line %zu", KJOIN_YAML_LINE(root));
    d->found = true, d->start = root->start_mark.index, d->end = root->end_mark.index;
    return KJOIN_OK;
}

kjoin_code kjoin_cluster_configuration_from_file(const char *yaml, size_t len, kjoin_cluster_configuration *out,
                                                 kjoin_err *err)
{
    static const char defaults[] = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n";
    cluster_document d = {0};
    kjoin_code rc = kjoin_yaml__each_document(yaml, len, BAD, find_cluster_document, &d, NULL, err);
    if (rc)
        return rc;
    return d.found ? kjoin_cluster_configuration_parse(yaml + d.start, d.end - d.start, out, err)
                   : kjoin_cluster_configuration_parse(defaults, sizeof(defaults) - 1, out, err);
}

/* kubeadm's ClusterConfiguration (kube-system/kubeadm-config), which
 * kubeadm join reads too: checked when the cluster has one, its release
 * recorded, and the skew rule's control-plane version when GET /version
 * told none. A cluster kubeadm did not make has none: that is fine. */
kjoin_code kjoin_cluster_configuration_get(kjoin_kubeapi *api, kjoin_cluster_configuration *out, bool *found,
                                           kjoin_err *err)
{
    json_object *cm = NULL, *data, *text;
    kjoin_err in;
    kjoin_kubeapi_response resp;
    kjoin_code rc = kjoin_kubeapi_request(api, "GET", "/api/v1/namespaces/kube-system/configmaps/kubeadm-config", NULL,
                                          &resp, err);
    *found = false;
    if (rc)
        return rc;
    if (resp.status != 404 && !(rc = kjoin_kubeapi_check(&resp, "get configmap kube-system/kubeadm-config", err)) &&
        !(cm = resp.body ? json_tokener_parse(resp.body) : NULL))
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "configmap kube-system/kubeadm-config is not JSON");
    kjoin_kubeapi_response_release(&resp);
    *found = !rc && cm;
    if (!*found)
        return rc;
    if (!json_object_object_get_ex(cm, "data", &data) || !json_object_object_get_ex(data, "ClusterConfiguration", &text) ||
        !json_object_is_type(text, json_type_string))
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "configmap kube-system/kubeadm-config has no \"ClusterConfiguration\" key");
    else if ((rc = kjoin_cluster_configuration_parse(json_object_get_string(text),
                                                     (size_t)json_object_get_string_len(text), out, &in)))
        kjoin_err_set(err, rc, "configmap kube-system/kubeadm-config: %s", in.msg);
    json_object_put(cm);
    return rc;
}
