/* The one writer of the node's files. Each file has one rule for a file
 * that is there already, whichever step writes it (discovery alone or
 * kubelet-start): the token and the trust anchor are never replaced by
 * something else unless asked; what kubelet-start derives from the cluster
 * is replaced, as kubeadm does. */
#include <stdio.h>

#include <kjoin/node.h>

#include "internal.h"

static const struct {
    unsigned mode;
    bool replace; /* true: a file with other content is replaced without force */
} rules[] = {
    [KJOIN_NODE_FILE_BOOTSTRAP_KUBECONFIG] = {0600, false},
    [KJOIN_NODE_FILE_CA_CERT] = {0644, false},
    [KJOIN_NODE_FILE_KUBELET_CONFIG] = {0644, true},
    [KJOIN_NODE_FILE_FLAGS_ENV] = {0644, true},
    [KJOIN_NODE_FILE_RECORD] = {0600, true},
};

unsigned kjoin_node_file_mode(kjoin_node_file_kind kind)
{
    return rules[kind].mode;
}

kjoin_code kjoin_node_file_write(kjoin_node_file_kind kind, const char *path, const void *data, size_t len, bool force,
                                 kjoin_write_result *result, kjoin_err *err)
{
    return kjoin_file_write_mode(path, data, len, rules[kind].mode, force || rules[kind].replace, result, err);
}

void kjoin_node_file_path(const kjoin_node_paths *paths, kjoin_node_file_kind kind, char *out, size_t cap)
{
    kjoin_node__resolved p;
    kjoin_node__resolve(paths, &p);
    const char *where[] = {
        [KJOIN_NODE_FILE_BOOTSTRAP_KUBECONFIG] = p.bootstrap_kubeconfig, [KJOIN_NODE_FILE_CA_CERT] = p.ca_cert_path,
        [KJOIN_NODE_FILE_KUBELET_CONFIG] = p.config_yaml, [KJOIN_NODE_FILE_FLAGS_ENV] = p.flags_env,
        [KJOIN_NODE_FILE_RECORD] = p.state,
    };
    if (snprintf(out, cap, "%s", where[kind]) >= (int)cap)
        out[0] = '\0';
}
