/* The one writer of the node's files. Each file has one rule for a file
 * that is there already, whichever step writes it (discovery alone or
 * kubelet-start): the token and the trust anchor are never replaced by
 * something else unless asked; what kubelet-start derives from the cluster
 * is replaced, as kubeadm does. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <kjoin/private/node.h>
#include <kjoin/private/safedir.h>
#include <kjoin/private/util.h>

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
    [KJOIN_NODE_FILE_INSTANCE_CONFIG] = {0644, true},
    [KJOIN_NODE_FILE_PROXY_DROPIN] = {0600, true},
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
        [KJOIN_NODE_FILE_RECORD] = p.state, [KJOIN_NODE_FILE_INSTANCE_CONFIG] = p.instance_config,
        [KJOIN_NODE_FILE_PROXY_DROPIN] = p.kubelet_proxy,
    };
    if (snprintf(out, cap, "%s", where[kind]) >= (int)cap)
        out[0] = '\0';
}

/* path's directory, or its nearest ancestor that exists (the join creates
 * the rest, 0700), passes the safe-directory rules without exceptions: no
 * symlink, root's, writable by no one else, not a shared sticky one. */
static kjoin_code check_destination(const char *path, kjoin_err *err)
{
    char dir[4096];
    struct stat st;
    if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir) || path[0] != '/')
        return kjoin_err_set(err, KJOIN_E_USAGE, "%.200s is not an absolute path the node's files can go to", path);
    do {
        char *slash = strrchr(dir, '/');
        slash == dir ? (void)(dir[1] = '\0') : (void)(*slash = '\0');
    } while (lstat(dir, &st) != 0 && errno == ENOENT && strcmp(dir, "/"));
    kjoin_safedir d;
    kjoin_code rc = kjoin_safedir_open(dir, 0, &d, err);
    kjoin_safedir_close(&d);
    return rc;
}

kjoin_code kjoin_node_check_destinations(const kjoin_node_paths *paths, kjoin_err *err)
{
    static const kjoin_node_file_kind kinds[] = {KJOIN_NODE_FILE_RECORD, KJOIN_NODE_FILE_BOOTSTRAP_KUBECONFIG,
                                                 KJOIN_NODE_FILE_CA_CERT, KJOIN_NODE_FILE_KUBELET_CONFIG,
                                                 KJOIN_NODE_FILE_FLAGS_ENV, KJOIN_NODE_FILE_INSTANCE_CONFIG};
    char path[4096];
    kjoin_err in;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        kjoin_node_file_path(paths, kinds[i], path, sizeof(path));
        if (check_destination(path, &in))
            return kjoin_err_set(err, in.code, "%s cannot be written there: %s", path, in.msg);
    }
    return KJOIN_OK;
}
