/* Whether kjoin can carry the cluster into the control-plane steps that
 * are about to write, decided before the first of them writes: a refusal
 * that needs only the cluster's ClusterConfiguration, the node's address
 * and the directories already on disk never comes after a CA key landed. */
#include <kjoin/private/controlplane.h>

#include <stdio.h>
#include <string.h>

#include <kjoin/private/node.h>
#include <kjoin/private/safedir.h>

/* The cluster's paths name files of its own, never kjoin's records (a
 * take-back or a reset reads them, and would then read the cluster's file). */
static kjoin_code not_a_record(const kjoin_cp_context *s, const char *field, const char *path, kjoin_err *err)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strcmp(base, KJOIN_CP_LEGACY_RECORD_NAME) && strcmp(base, KJOIN_NODE_STATE_NAME))
        return KJOIN_OK;
    return kjoin_err_set(err, KJOIN_E_USAGE, "the cluster's %s (%s) names a record of kjoin's, which a join keeps in %s: "
                         "give etcd's file another name in the ClusterConfiguration", field, path, s->kubernetes_dir);
}

kjoin_code kjoin_control_plane_check(const kjoin_cp_context *s, unsigned writes, kjoin_err *err)
{
    const kjoin_cluster_configuration *c = s->cluster;
    if (!writes)
        return KJOIN_OK;
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
    /* Each directory a step writes into, as the writer will check it (owner,
     * modes, no symlink), there or not yet made: its refusal comes now. */
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        if (!(dirs[i].writes & writes))
            continue;
        snprintf(path, sizeof(path), "%s%s%s", dirs[i].dir, dirs[i].sub ? "/" : "", dirs[i].sub ? dirs[i].sub : "");
        kjoin_code rc = kjoin_safedir_can_make(path, err);
        if (rc)
            return rc;
    }
    /* An external etcd's files, which download-certs writes where the cluster says. */
    const char *const external[] = {c->external_ca_file, c->external_cert_file, c->external_key_file};
    static const char *const fields[] = {"etcd.external.caFile", "etcd.external.certFile", "etcd.external.keyFile"};
    for (size_t i = 0; c->external_etcd && (writes & KJOIN_CP_WRITES_SHARED) && i < 3; i++) {
        if (!*external[i])
            continue;
        kjoin_code rc = not_a_record(s, fields[i], external[i], err);
        snprintf(path, sizeof(path), "%s", external[i]);
        char *slash = strrchr(path, '/');
        if (slash) /* a clean absolute path (cluster.c): a file in a directory */
            *slash = '\0';
        if (!rc)
            rc = kjoin_safedir_can_make(*path ? path : "/", err);
        if (rc)
            return rc;
    }
    return KJOIN_OK;
}
