#include <stdio.h>
#include <string.h>

#include <kjoin/private/kubeconfig.h>
#include <kjoin/private/util.h>

#include "internal.h"

#define BAD KJOIN_E_TRUST /* a malformed discovery document is discovery data gone wrong */

void kjoin_cluster_release(kjoin_cluster *c)
{
    if (!c)
        return;
    free(c->name);
    free(c->server);
    free(c->ca_pem);
    memset(c, 0, sizeof(*c));
}

/* Reads the CA that a certificate-authority path names, relative to dir. */
static kjoin_code read_ca_file(const char *path, const char *dir, kjoin_cluster *c, kjoin_err *err)
{
    if (!dir)
        return kjoin_err_set(err, BAD,
                             "certificate-authority \"%s\" is a path, which only a local discovery file may "
                             "use; embed the CA as certificate-authority-data",
                             path);
    char full[4096];
    bool absolute = path[0] == '/';
    int n = snprintf(full, sizeof(full), "%s%s%s", absolute ? "" : dir, absolute ? "" : "/", path);
    if (n < 0 || (size_t)n >= sizeof(full))
        return kjoin_err_set(err, KJOIN_E_USAGE, "certificate-authority path is longer than %zu bytes", sizeof(full) - 1);
    char *pem = NULL;
    size_t len = 0;
    kjoin_err inner;
    if (kjoin_file_read(full, KJOIN_KUBECONFIG_MAX, &pem, &len, &inner))
        return kjoin_err_set(err, KJOIN_E_USAGE, "certificate-authority: %s", inner.msg);
    c->ca_pem = (unsigned char *)pem;
    c->ca_len = len;
    return KJOIN_OK;
}

/* A string value that may be absent or null (*out NULL then). */
static kjoin_code opt_string(kjoin_yaml *y, yaml_node_t *map, const char *key, const char **out,
                             kjoin_err *err)
{
    yaml_node_t *n = NULL;
    kjoin_code rc = kjoin_yaml__get(y, map, key, &n, BAD, err);
    if (rc)
        return rc;
    *out = kjoin_yaml__is_null(n) ? NULL : kjoin_yaml__str(n);
    if (!kjoin_yaml__is_null(n) && !*out)
        return kjoin_err_set(err, BAD, "\"%s\" at line %zu is not a string", key, KJOIN_YAML_LINE(n));
    return KJOIN_OK;
}

/* Reads one entry of "clusters". The CA comes from certificate-authority-data
 * or, when dir is set, from a certificate-authority path; without require_ca
 * it may be absent. */
static kjoin_code read_cluster_entry(kjoin_yaml *y, yaml_node_t *entry, const char *dir, bool require_ca,
                                     kjoin_cluster *out, kjoin_err *err)
{
    yaml_node_t *cluster = NULL;
    const char *name = NULL, *server = NULL, *ca = NULL, *ca_file = NULL, *insecure = NULL;
    kjoin_code rc;
    if ((rc = kjoin_yaml__get(y, entry, "cluster", &cluster, BAD, err)) ||
        (rc = opt_string(y, entry, "name", &name, err)))
        return rc;
    if (!cluster)
        return kjoin_err_set(err, BAD, "kubeconfig cluster entry has no \"cluster\"");
    if ((rc = opt_string(y, cluster, "server", &server, err)) ||
        (rc = opt_string(y, cluster, "certificate-authority-data", &ca, err)) ||
        (rc = opt_string(y, cluster, "certificate-authority", &ca_file, err)) ||
        (rc = opt_string(y, cluster, "insecure-skip-tls-verify", &insecure, err)))
        return rc;
    if (!server || strncmp(server, "https://", 8) != 0 || !server[8])
        return kjoin_err_set(err, BAD, "kubeconfig cluster has no https server");
    char host[256];
    bool userinfo = false;
    if (!kjoin_url_host(server, host, sizeof(host), &userinfo) || userinfo)
        return kjoin_err_set(err, BAD, "kubeconfig cluster's server is no https URL kjoin reaches: a host name or "
                                       "address, no user name or password (userinfo)");
    if (insecure && strcmp(insecure, "true") == 0)
        return kjoin_err_set(err, BAD, "kubeconfig cluster sets insecure-skip-tls-verify, which kjoin refuses");
    if (ca && ca_file)
        return kjoin_err_set(err, BAD, "kubeconfig cluster sets both certificate-authority-data and certificate-authority");
    if (require_ca && (!ca || !*ca))
        return kjoin_err_set(err, BAD, "kubeconfig cluster has no certificate-authority-data");

    kjoin_cluster c = {0};
    kjoin_err inner;
    if (ca && *ca && kjoin_b64_decode(ca, strlen(ca), false, &c.ca_pem, &c.ca_len, &inner))
        return kjoin_err_set(err, BAD, "certificate-authority-data: %s", inner.msg);
    if (ca_file && (rc = read_ca_file(ca_file, dir, &c, err)))
        return rc;
    c.name = strdup(name ? name : "");
    c.server = strdup(server);
    if (!c.name || !c.server) {
        kjoin_cluster_release(&c);
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    *out = c;
    return KJOIN_OK;
}

static kjoin_code clusters_of(kjoin_yaml *y, yaml_node_t **out, kjoin_err *err)
{
    kjoin_code rc = kjoin_yaml__get(y, kjoin_yaml__root(y), "clusters", out, BAD, err);
    if (!rc && (!*out || (*out)->type != YAML_SEQUENCE_NODE))
        rc = kjoin_err_set(err, BAD, "kubeconfig has no list of clusters");
    return rc;
}

yaml_node_t *kjoin_kubeconfig__find_named(kjoin_yaml *y, yaml_node_t *seq, const char *name)
{
    for (size_t i = 0; i < kjoin_yaml__len(seq); i++) {
        yaml_node_t *entry = kjoin_yaml__item(y, seq, i), *n = NULL;
        if (kjoin_yaml__get(y, entry, "name", &n, BAD, NULL))
            continue;
        const char *s = kjoin_yaml__is_null(n) ? "" : kjoin_yaml__str(n);
        if (s && strcmp(s, name ? name : "") == 0)
            return entry;
    }
    return NULL;
}

typedef struct parse_job {
    const char *dir; /* for certificate-authority paths; NULL forbids them */
    kjoin_cluster *out;
} parse_job;

/* cluster-info's kubeconfig: exactly one cluster, with its CA embedded. */
static kjoin_code pick_only_cluster(kjoin_yaml *y, parse_job *job, kjoin_err *err)
{
    yaml_node_t *clusters = NULL;
    kjoin_code rc = clusters_of(y, &clusters, err);
    if (rc)
        return rc;
    size_t n = kjoin_yaml__len(clusters);
    if (n != 1)
        return kjoin_err_set(err, BAD, "kubeconfig must hold exactly one cluster, it holds %zu", n);
    return read_cluster_entry(y, kjoin_yaml__item(y, clusters, 0), NULL, true, job->out, err);
}

/* Client credentials a discovery document must not carry. */
static const char *const credential_fields[] = {
    "token", "tokenFile", "client-certificate", "client-certificate-data", "client-key",
    "client-key-data", "username", "password", "exec", "auth-provider",
};

static kjoin_code reject_credentials(kjoin_yaml *y, kjoin_err *err)
{
    yaml_node_t *users = NULL;
    kjoin_code rc = kjoin_yaml__get(y, kjoin_yaml__root(y), "users", &users, BAD, err);
    for (size_t i = 0; !rc && i < kjoin_yaml__len(users); i++) {
        yaml_node_t *entry = kjoin_yaml__item(y, users, i), *user = NULL, *field = NULL;
        if ((rc = kjoin_yaml__get(y, entry, "user", &user, BAD, err)) || kjoin_yaml__is_null(user))
            continue;
        for (size_t f = 0; !rc && f < sizeof(credential_fields) / sizeof(credential_fields[0]); f++) {
            rc = kjoin_yaml__get(y, user, credential_fields[f], &field, BAD, err);
            if (!rc && field && !kjoin_yaml__is_null(field))
                rc = kjoin_err_set(err, BAD,
                                   "the discovery file carries client credentials (users[%zu].user.%s at line "
                                   "%zu): the bootstrap discovery design forbids them in discovery documents "
                                   "(kubeadm accepts them); remove them and set `tls_bootstrap_token`",
                                   i, credential_fields[f], KJOIN_YAML_LINE(field));
        }
    }
    return rc;
}

/* A --discovery-file document: the unnamed cluster, else the current
 * context's, as kubeadm chooses. */
static kjoin_code pick_discovery_cluster(kjoin_yaml *y, parse_job *job, kjoin_err *err)
{
    yaml_node_t *clusters = NULL, *contexts = NULL;
    const char *current = NULL;
    kjoin_code rc;
    if ((rc = reject_credentials(y, err)) || (rc = clusters_of(y, &clusters, err)) ||
        (rc = kjoin_yaml__get(y, kjoin_yaml__root(y), "contexts", &contexts, BAD, err)) ||
        (rc = opt_string(y, kjoin_yaml__root(y), "current-context", &current, err)))
        return rc;
    if (kjoin_yaml__len(clusters) == 0)
        return kjoin_err_set(err, BAD, "the discovery file defines no cluster");
    yaml_node_t *entry = kjoin_kubeconfig__find_named(y, clusters, "");
    if (!entry && current && *current) {
        yaml_node_t *ctx_entry = kjoin_kubeconfig__find_named(y, contexts, current), *ctx = NULL;
        const char *cluster_name = NULL;
        if (ctx_entry && !kjoin_yaml__get(y, ctx_entry, "context", &ctx, BAD, NULL) && ctx &&
            !opt_string(y, ctx, "cluster", &cluster_name, NULL) && cluster_name)
            entry = kjoin_kubeconfig__find_named(y, clusters, cluster_name);
    }
    if (!entry)
        return kjoin_err_set(err, BAD,
                             "the discovery file has %zu clusters but no unnamed one and no current-context "
                             "that names one: kjoin cannot tell which to use",
                             kjoin_yaml__len(clusters));
    return read_cluster_entry(y, entry, job->dir, false, job->out, err);
}

/* Loads the document and runs pick on it; malformed documents say so. */
static kjoin_code parse_with(const char *yaml, size_t len, kjoin_code (*pick)(kjoin_yaml *, parse_job *, kjoin_err *),
                             parse_job *job, kjoin_err *err)
{
    if (len > KJOIN_KUBECONFIG_MAX)
        return kjoin_err_set(err, BAD, "kubeconfig larger than %d bytes", KJOIN_KUBECONFIG_MAX);
    kjoin_yaml y;
    kjoin_err inner;
    kjoin_code rc = kjoin_yaml__load(&y, yaml, len, BAD, &inner);
    if (rc)
        return kjoin_err_set(err, rc, "not a kubeconfig: it is not YAML (%s)", inner.msg);
    yaml_node_t *root = kjoin_yaml__root(&y);
    if (!root || root->type != YAML_MAPPING_NODE)
        rc = kjoin_err_set(&inner, BAD, "not a kubeconfig: its top level is not a mapping (a kubeconfig holds "
                                        "apiVersion, clusters, contexts and users)");
    else
        rc = pick(&y, job, &inner);
    kjoin_yaml__release(&y);
    if (rc)
        return kjoin_err_set(err, rc, "%s%s", rc == BAD && strncmp(inner.msg, "not a kubeconfig", 16)
                                                  ? "malformed kubeconfig: " : "", inner.msg);
    return KJOIN_OK;
}

kjoin_code kjoin_kubeconfig_parse_cluster(const char *yaml, size_t len, kjoin_cluster *out, kjoin_err *err)
{
    parse_job job = {.out = out};
    return parse_with(yaml, len, pick_only_cluster, &job, err);
}

kjoin_code kjoin_kubeconfig_parse_discovery(const char *yaml, size_t len, const char *dir, kjoin_cluster *out,
                                            kjoin_err *err)
{
    parse_job job = {.dir = dir, .out = out};
    return parse_with(yaml, len, pick_discovery_cluster, &job, err);
}

/* The first credential field anywhere under node, its path in path. Depth is
 * bounded by the YAML reader. */
static yaml_node_t *find_credential(kjoin_yaml *y, yaml_node_t *node, char *path, size_t cap)
{
    size_t used = strlen(path);
    if (node->type == YAML_SEQUENCE_NODE)
        for (size_t i = 0; i < kjoin_yaml__len(node); i++) {
            snprintf(path + used, cap - used, "[%zu]", i);
            yaml_node_t *hit = find_credential(y, kjoin_yaml__item(y, node, i), path, cap);
            if (hit)
                return hit;
        }
    if (node->type == YAML_MAPPING_NODE)
        for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(&y->doc, p->key), *v = yaml_document_get_node(&y->doc, p->value);
            const char *key = kjoin_yaml__str(k);
            snprintf(path + used, cap - used, "%s%s", used ? "." : "", key ? key : "?");
            for (size_t f = 0; key && f < sizeof(credential_fields) / sizeof(credential_fields[0]); f++)
                if (strcmp(key, credential_fields[f]) == 0 && !kjoin_yaml__is_null(v))
                    return k;
            yaml_node_t *hit = find_credential(y, v, path, cap);
            if (hit)
                return hit;
        }
    path[used] = '\0';
    return NULL;
}

kjoin_code kjoin_kubeconfig_check_public(const char *yaml, size_t len, kjoin_err *err)
{
    kjoin_yaml y;
    kjoin_err inner;
    yaml_node_t *users = NULL;
    char path[256] = "";
    kjoin_code rc = kjoin_yaml__load(&y, yaml, len, KJOIN_E_USAGE, &inner);
    if (rc)
        return kjoin_err_set(err, rc, "malformed kubeconfig: %s", inner.msg);
    rc = kjoin_yaml__get(&y, kjoin_yaml__root(&y), "users", &users, KJOIN_E_USAGE, err);
    yaml_node_t *hit = rc ? NULL : find_credential(&y, kjoin_yaml__root(&y), path, sizeof(path));
    if (!rc && hit)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "the kubeconfig carries a credential (%s at line %zu): cluster-info "
                                               "is public and must hold one cluster and no users",
                           path, KJOIN_YAML_LINE(hit));
    else if (!rc && !kjoin_yaml__is_null(users) && (users->type != YAML_SEQUENCE_NODE || kjoin_yaml__len(users)))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "the kubeconfig has user entries (users at line %zu): cluster-info "
                                               "is public and must hold one cluster and no users",
                           KJOIN_YAML_LINE(users));
    kjoin_yaml__release(&y);
    return rc;
}
