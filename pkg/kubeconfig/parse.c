#include <string.h>

#include <kjoin/kubeconfig.h>
#include <kjoin/util.h>

#include "internal.h"

void kjoin_cluster_release(kjoin_cluster *c)
{
    if (!c)
        return;
    free(c->name);
    free(c->server);
    free(c->ca_pem);
    memset(c, 0, sizeof(*c));
}

/* Reads the one entry of "clusters" into out. */
static kjoin_code read_cluster(kjoin_yaml *y, kjoin_cluster *out, kjoin_err *err)
{
    const kjoin_code bad = KJOIN_E_TRUST;
    yaml_node_t *clusters = NULL, *entry, *name, *cluster = NULL, *server = NULL, *ca = NULL;
    kjoin_code rc = kjoin_yaml__get(y, kjoin_yaml__root(y), "clusters", &clusters, bad, err);
    if (rc)
        return rc;
    if (!clusters || clusters->type != YAML_SEQUENCE_NODE)
        return kjoin_err_set(err, bad, "kubeconfig has no list of clusters");
    size_t n = (size_t)(clusters->data.sequence.items.top - clusters->data.sequence.items.start);
    if (n != 1)
        return kjoin_err_set(err, bad, "kubeconfig must hold exactly one cluster, it holds %zu", n);
    entry = yaml_document_get_node(&y->doc, clusters->data.sequence.items.start[0]);
    if ((rc = kjoin_yaml__get(y, entry, "name", &name, bad, err)) ||
        (rc = kjoin_yaml__get(y, entry, "cluster", &cluster, bad, err)))
        return rc;
    if (!cluster)
        return kjoin_err_set(err, bad, "kubeconfig cluster entry has no \"cluster\"");
    if ((rc = kjoin_yaml__get(y, cluster, "server", &server, bad, err)) ||
        (rc = kjoin_yaml__get(y, cluster, "certificate-authority-data", &ca, bad, err)))
        return rc;
    const char *name_s = kjoin_yaml__is_null(name) ? "" : kjoin_yaml__str(name);
    const char *server_s = kjoin_yaml__str(server);
    const char *ca_s = kjoin_yaml__str(ca);
    if (!name_s)
        return kjoin_err_set(err, bad, "kubeconfig cluster name is not a string");
    if (!server_s || strncmp(server_s, "https://", 8) != 0 || !server_s[8])
        return kjoin_err_set(err, bad, "kubeconfig cluster has no https server");
    if (!ca_s || !*ca_s)
        return kjoin_err_set(err, bad, "kubeconfig cluster has no certificate-authority-data");

    kjoin_cluster c = {0};
    kjoin_err inner;
    if (kjoin_b64_decode(ca_s, strlen(ca_s), false, &c.ca_pem, &c.ca_len, &inner))
        return kjoin_err_set(err, bad, "certificate-authority-data: %s", inner.msg);
    c.name = strdup(name_s);
    c.server = strdup(server_s);
    if (!c.name || !c.server) {
        kjoin_cluster_release(&c);
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    *out = c;
    return KJOIN_OK;
}

kjoin_code kjoin_kubeconfig_parse_cluster(const char *yaml, size_t len, kjoin_cluster *out,
                                          kjoin_err *err)
{
    if (len > KJOIN_KUBECONFIG_MAX)
        return kjoin_err_set(err, KJOIN_E_TRUST, "kubeconfig larger than %d bytes", KJOIN_KUBECONFIG_MAX);
    kjoin_yaml y;
    kjoin_err inner;
    kjoin_code rc = kjoin_yaml__load(&y, yaml, len, KJOIN_E_TRUST, &inner);
    if (!rc)
        rc = read_cluster(&y, out, &inner);
    kjoin_yaml__release(&y);
    if (rc)
        return kjoin_err_set(err, rc, "malformed kubeconfig: %s", inner.msg);
    return KJOIN_OK;
}
