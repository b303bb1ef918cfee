/* Whether kjoin can carry the cluster into the control-plane steps that
 * are about to write, decided before the first of them writes: a refusal
 * that needs only the cluster's ClusterConfiguration, the node's address
 * and the directories already on disk never comes after a CA key landed. */
#include <kjoin/controlplane.h>

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include <kjoin/node.h>
#include <kjoin/safedir.h>

/* A directory a step writes into, when it is there: checked as the writer
 * will check it (owner, modes, no symlink), so that its refusal comes now. */
static kjoin_code dir_usable(const char *path, kjoin_err *err)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_OUTPUT, "%s: cannot be read", path);
    kjoin_safedir d;
    kjoin_code rc = kjoin_safedir_open(path, 0, &d, err);
    kjoin_safedir_close(&d);
    return rc;
}

kjoin_code kjoin_control_plane_check(const kjoin_cp_context *s, unsigned writes, kjoin_err *err)
{
    const kjoin_cluster_configuration *c = s->cluster;
    if (!writes)
        return KJOIN_OK;
    if ((writes & (KJOIN_CP_WRITES_CERTS | KJOIN_CP_WRITES_KUBECONFIGS | KJOIN_CP_WRITES_MANIFESTS |
                      KJOIN_CP_WRITES_ETCD)) &&
        !kjoin_is_ip(s->advertise_address))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the API server's advertise address \"%.64s\" is not an IP address",
                             s->advertise_address);
    if (writes & (KJOIN_CP_WRITES_MANIFESTS | KJOIN_CP_WRITES_ETCD)) {
        char images[KJOIN_CP_IMAGES_N][400];
        kjoin_code rc = kjoin_control_plane_images(c, s->minor, images, err); /* the manifests' own checks */
        if (rc)
            return rc;
    }
    char path[4200];
    const struct {
        unsigned writes;
        const char *dir, *sub;
    } dirs[] = {
        {~0u, s->kubernetes_dir, NULL},
        {KJOIN_CP_WRITES_MANIFESTS | KJOIN_CP_WRITES_ETCD, s->kubernetes_dir, "manifests"},
        {KJOIN_CP_WRITES_SHARED | KJOIN_CP_WRITES_CERTS, s->cert_dir, NULL},
        {KJOIN_CP_WRITES_SHARED | KJOIN_CP_WRITES_CERTS, s->cert_dir, "etcd"},
    };
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        if (!(dirs[i].writes & writes))
            continue;
        snprintf(path, sizeof(path), "%s%s%s", dirs[i].dir, dirs[i].sub ? "/" : "", dirs[i].sub ? dirs[i].sub : "");
        kjoin_code rc = dir_usable(path, err);
        if (rc)
            return rc;
    }
    return KJOIN_OK;
}
