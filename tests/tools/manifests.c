/* The four static Pods kjoin writes on a control-plane node, rendered by the
 * library's own code without a cluster, for the release suite to compare
 * with what each release's kubeadm writes for the same ClusterConfiguration
 * (kubeadm init phase control-plane all / etcd local). etcd's is a member of
 * its own, as kubeadm init's is; none for an external etcd.
 *
 *   manifests CLUSTER.yaml ADDRESS NODE-NAME OUT-DIR
 *
 * The release is the ClusterConfiguration's kubernetesVersion. Exit 0, or
 * the library's code with its message on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kjoin/private/cluster.h>
#include <kjoin/private/controlplane.h>
#include <kjoin/private/util.h>

extern char **environ;

static int put(const char *dir, const char *name, const char *text)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s.yaml", dir, name);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) == EOF || fclose(f) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: manifests CLUSTER.yaml ADDRESS NODE-NAME OUT-DIR\n");
        return 2;
    }
    char *yaml = NULL;
    size_t len = 0;
    kjoin_err err;
    kjoin_cluster_configuration c;
    kjoin_cp_context cx;
    kjoin_join_context join = {0};
    kjoin_code rc = kjoin_file_read(argv[1], 1 << 20, &yaml, &len, &err);
    if (!rc)
        rc = kjoin_cluster_configuration_parse(yaml, len, &c, &err);
    if (!rc)
        rc = kjoin_cp_context_init(&cx, &c, "/etc/kubernetes", &err);
    free(yaml);
    char *pods[KJOIN_MANIFESTS_N] = {NULL}, *etcd = NULL;
    if (!rc) {
        snprintf(cx.advertise_address, sizeof(cx.advertise_address), "%s", argv[2]);
        snprintf(join.name.name, sizeof(join.name.name), "%s", argv[3]);
        cx.join = &join;
        rc = kjoin_control_plane_manifests_make(&cx, environ, pods, &err);
    }
    if (!rc && !c.external_etcd)
        rc = kjoin_etcd_manifest_make(&cx, NULL, 0, &etcd, &err);
    int failed = 0;
    for (int i = 0; !rc && i < KJOIN_MANIFESTS_N; i++)
        failed |= put(argv[4], kjoin_manifest_component(i), pods[i]);
    if (!rc && etcd)
        failed |= put(argv[4], "etcd", etcd);
    for (int i = 0; i < KJOIN_MANIFESTS_N; i++)
        free(pods[i]);
    free(etcd);
    if (rc)
        fprintf(stderr, "manifests: %s\n", err.msg);
    return rc ? (int)rc : failed;
}
