/* kubeadm's checks before a control-plane node joins (its InitNodeChecks
 * for a secondary control plane), on pkg/node's preflight kit: the same
 * report, the same ignore rule, the same verdict. */
#include <kjoin/private/controlplane.h>

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kjoin/private/node.h>
#include <kjoin/private/safedir.h>
#include <kjoin/private/util.h>

/* Whether path holds what an interrupted control-plane join of this node
 * wrote there (its record names it with that digest). */
static bool cp_written(const kjoin_cp_record *rec, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    if (!rec || kjoin_safedir_read_path(path, false, &text, &len, NULL, NULL))
        return false;
    bool ours = kjoin_written_has_data(&rec->written, path, text, len);
    kjoin_free_wiped(text, len);
    return ours;
}

kjoin_code kjoin_preflight_control_plane(const kjoin_node_spec *spec, const kjoin_cp_context *cx,
                                         const char *const *images, size_t n_images, kjoin_preflight_report *report,
                                         kjoin_err *err)
{
    const kjoin_cluster_configuration *c = cx->cluster;
    const char *advertise_address = *cx->advertise_address ? cx->advertise_address : NULL;
    size_t from = report->n;
    char path[4200], name[4300];
    /* An interrupted control-plane join of this node: what it wrote, made
     * and started is this join's, and the same join goes on with it. */
    kjoin_cp_record *rec = malloc(sizeof(*rec));
    bool found = false;
    const char *k8s = cx->kubernetes_dir;
    if (rec && (kjoin_cp_record_read(k8s, rec, &found, NULL) || !found)) {
        free(rec);
        rec = NULL;
    }
    static const char *const component[] = {"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"};
    const int *custom = spec->control_plane_ports;
    const struct {
        int port;
        const char *addr, *what;
        int component; /* whose port */
    } ports[] = {{cx->bind_port, NULL, "the API server's", 0},
                 {custom[0] ? custom[0] : 10259, NULL, "the scheduler's", 2},
                 {custom[1] ? custom[1] : 10257, NULL, "the controller manager's", 1},
                 {custom[2] ? custom[2] : 2379, advertise_address, "etcd's client", 3},
                 {custom[3] ? custom[3] : 2380, advertise_address, "etcd's peer", 3}};
    char why[200];
    if (advertise_address && kjoin_advertise_address_check(advertise_address, why, sizeof(why)))
        kjoin_preflight_add(report, spec, true, "AdvertiseAddress", "%s", why);
    if (!*c->control_plane_endpoint)
        kjoin_preflight_add(report, spec, true, "ControlPlaneEndpoint", "the cluster has no controlPlaneEndpoint: a cluster made "
            "without a stable address cannot take another control-plane node (kubeadm's rule)");
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) /* as Go's runtime.NumCPU, which kubeadm counts with */
        cpus = CPU_COUNT(&set);
    if (cpus < 2)
        kjoin_preflight_add(report, spec, true, "NumCPU", "the number of available CPUs %ld is less than the required 2", cpus);
    long mib = kjoin_preflight_mem_mib(spec);
    if (mib >= 0 && mib < 1700)
        kjoin_preflight_add(report, spec, true, "Mem", "the system RAM (%ld MB) is less than the minimum 1700 MB", mib);
    bool ours[4];
    for (size_t i = 0; i < sizeof(component) / sizeof(component[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s.yaml", cx->manifests_dir, component[i]);
        ours[i] = cp_written(rec, path);
    }
    for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++) {
        if (c->external_etcd && ports[i].component == 3)
            continue; /* no local etcd to listen */
        snprintf(name, sizeof(name), "Port-%d", ports[i].port);
        if (kjoin_preflight_port_free(ports[i].addr, ports[i].port))
            continue;
        if (ours[ports[i].component])
            kjoin_preflight_add(report, spec, false, name, "%s port %s%s%d is in use, by the %s this join's interrupted run started "
                "(its manifest is as that run wrote it)", ports[i].what, ports[i].addr ? ports[i].addr : "",
                ports[i].addr ? ":" : "", ports[i].port, component[ports[i].component]);
        else
            kjoin_preflight_add(report, spec, true, name, "%s port %s%s%d cannot be listened on (%s): stop what listens there",
                ports[i].what, ports[i].addr ? ports[i].addr : "", ports[i].addr ? ":" : "", ports[i].port,
                strerror(errno));
    }
    for (size_t i = 0; i < sizeof(component) / sizeof(component[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s.yaml", cx->manifests_dir, component[i]);
        snprintf(name, sizeof(name), "FileAvailable-%s", path);
        for (char *ch = name; *ch; ch++)
            *ch = *ch == '/' ? '-' : *ch;
        if (ours[i])
            kjoin_preflight_add(report, spec, false, name, "%s was written by an interrupted join of this node (its record says so): "
                "the join goes on with it", path);
        else
            kjoin_preflight_file_available(report, spec, path);
    }
    /* An external etcd's files, where the cluster says, unless the Secret brings them (kubeadm's
     * ExternalEtcdClientCertificates). */
    const char *const external[] = {c->external_ca_file, c->external_cert_file, c->external_key_file};
    for (size_t i = 0; c->external_etcd && !cx->downloads_certs && i < 3; i++)
        if (*external[i] && access(external[i], F_OK) != 0)
            kjoin_preflight_add(report, spec, true, "ExternalEtcdClientCertificates", "%s doesn't exist", external[i]);
    const char *data = *c->etcd_data_dir ? c->etcd_data_dir : "/var/lib/etcd";
    DIR *d = c->external_etcd ? NULL : opendir(data); /* no local etcd: no data directory of its */
    bool used = false;
    for (struct dirent *e; d && !used && (e = readdir(d));)
        used = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    snprintf(name, sizeof(name), "DirAvailable-%s", data);
    for (char *ch = name; *ch; ch++)
        *ch = *ch == '/' ? '-' : *ch;
    if (used && rec && rec->data_dir_made && !strcmp(rec->etcd_data_dir, data))
        kjoin_preflight_add(report, spec, false, name, "%s is the data of the etcd member this join's interrupted run added: the "
            "join goes on with it", data);
    else if (used)
        kjoin_preflight_add(report, spec, true, name, "%s is not empty: another etcd's data (kjoin reset or kubeadm reset a node "
            "before it joins again)", data);
    free(rec);
    if (!kjoin_preflight_ignored(spec, "ImagePull")) /* a pull takes time: not when it would be ignored */
        kjoin_preflight_images(report, spec, images, n_images, cx->join->dry_run);
    return kjoin_preflight_verdict(report, from, err);
}

