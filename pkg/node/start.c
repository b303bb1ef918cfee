/* kubelet-start and kubelet-wait-bootstrap: with the identity discovery
 * established, the cluster's kubelet configuration and the node's flags are
 * written (after every cluster check passed), the kubelet (re)started, and
 * the wait runs until the kubelet has its own identity and its Node. */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/inotify.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include <json-c/json.h>
#include <openssl/x509.h>

#include <kjoin/private/approver.h>
#include <kjoin/private/controlplane.h>
#include <kjoin/private/cri.h>
#include <kjoin/private/token.h>
#include <kjoin/private/kubeapi.h>
#include <kjoin/private/node.h>
#include <kjoin/private/release.h>
#include <kjoin/private/node.h>
#include <kjoin/private/patch.h>
#include <kjoin/private/util.h>

#include "internal.h"
#include "../certs/x509.h"
#include "../record/record.h"

#define POLL_MS 500
/* Once the kubelet has its identity (kubelet.conf is there), its health and
 * its Node follow within a second: looked at this often, so the join ends
 * within this long of the Node's registration. */
#define FOLLOW_MS 20

#define logf_(j, level, ...) kjoin_logf((j)->cx->log, (j)->cx->log_ctx, level, __VA_ARGS__)

static void step(kjoin_node_join *j, const char *name)
{
    int64_t now = kjoin_now_ms();
    kjoin_kubelet_start_result *out = &j->result;
    if (name && out->n_steps < KJOIN_NODE_MAX_STEPS) /* NULL: a step starts */
        out->steps[out->n_steps++] = (kjoin_node_step){name, now - j->t0};
    j->t0 = now;
}

static int64_t left_ms(const kjoin_node_join *j)
{
    return j->cx->deadline_ms - kjoin_now_ms();
}

/* A client of the API server with the credentials of a kubeconfig (its text,
 * or the file at path), within the join's deadline. */
static kjoin_code client(const kjoin_node_join *j, const char *text, size_t len, const char *path, kjoin_kubeapi **api,
                         kjoin_err *err)
{
    kjoin_kubeapi_config cfg;
    kjoin_code rc = text ? kjoin_kubeapi_config_parse(text, len, NULL, NULL, &cfg, err)
                         : kjoin_kubeapi_config_load(path, NULL, &cfg, err);
    if (rc)
        return rc;
    kjoin_kubeapi_options o = kjoin_join_context_api_options(j->cx, 0, 0);
    if ((rc = kjoin_kubeapi_new(&cfg, &o, api, err)))
        kjoin_kubeapi_config_release(&cfg);
    return rc;
}

/* The first kubelet to take a dual-stack node-ip without a feature gate
 * (IPv6DualStack: beta, on by default). */
#define KUBELET_DUAL_STACK_SINCE 21

/* kubeletExtraArgs' node-ip, when given there. */
static bool extra_node_ip(const kjoin_node_spec *spec)
{
    for (size_t i = 0; i < spec->n_extra_args; i++)
        if (!strncmp(spec->extra_args[i], "node-ip=", 8))
            return true;
    return false;
}

/* On a dual-stack cluster, the kubelet names both of the node's addresses
 * (as K3s's agent does): those of the default routes' interfaces. */
static void dual_stack_node_ip(kjoin_node_join *j, const kjoin_cluster_configuration *cc)
{
    kjoin_kubelet_start_result *out = &j->result;
    kjoin_node__addresses a;
    if (j->spec->node_ip || extra_node_ip(j->spec))
        return; /* the operator's */
    if (!kjoin_node__dual_stack_cluster(cc->service_subnet, cc->pod_subnet))
        return; /* a single-stack cluster: kubeadm's files */
    if (j->report.kubelet_minor && j->report.kubelet_minor < KUBELET_DUAL_STACK_SINCE) {
        logf_(j, 0, "[kubelet-start] A dual-stack cluster: the kubelet 1.%d takes both addresses only with its "
                    "IPv6DualStack feature gate, so its node-ip is left to it", j->report.kubelet_minor);
        return;
    }
    kjoin_node__default_route_addresses(j->spec->proc_dir, &a);
    if (!kjoin_node__dual_stack_ip(cc->service_subnet, cc->pod_subnet, a.v4, a.v6, out->node_ip, sizeof(out->node_ip))) {
        logf_(j, 0, "[kubelet-start] A dual-stack cluster, but this node has no %s address on its default route's "
                    "interface: its node-ip is left to the kubelet (one family)", *a.v4 ? "IPv6" : "IPv4");
        return;
    }
    out->node_ip_found = true;
    logf_(j, 0, "[kubelet-start] A dual-stack cluster: the kubelet's node-ip is %s (the addresses of %s and %s, the "
                "interfaces of the default routes)", out->node_ip, a.if4, a.if6);
}

/* The host of a server URL into out ("" when none). */
static void host_of(const char *url, char *out, size_t cap)
{
    if (!url || !kjoin_url_host(url, out, cap, NULL))
        *out = '\0';
}

/* With a proxy: the kubelet's and containerd's drop-ins, NO_PROXY made of
 * the cluster's addresses (cc: NULL when the cluster has no kubeadm
 * ClusterConfiguration), the API servers', and the node's. */
static kjoin_code proxy_dropins(kjoin_node_join *j, const kjoin_cluster_configuration *cc, kjoin_err *err)
{
    const kjoin_node_spec *s = j->spec;
    if (!s->proxy)
        return KJOIN_OK;
    char server[300], local[300], endpoint[300], ips[130], toward[64] = "";
    kjoin_node__addresses a;
    const char *url = j->cx->bootstrap_api ? kjoin_kubeapi_server(j->cx->bootstrap_api) : NULL;
    kjoin_err ignored;
    host_of(url, server, sizeof(server));
    /* the node's address toward the API server (a node without a default route has no other) */
    if (url && kjoin_local_address_for(url, toward, sizeof(toward), &ignored))
        *toward = '\0';
    host_of(j->kubelet_server, local, sizeof(local));
    snprintf(endpoint, sizeof(endpoint), "%s", cc ? cc->control_plane_host : "");
    snprintf(ips, sizeof(ips), "%s", j->result.node_ip);
    kjoin_node__default_route_addresses(s->proc_dir, &a);
    char *comma = strchr(ips, ',');
    if (comma)
        *comma++ = '\0';
    const char *hosts[] = {server, local, endpoint, j->cx->name.name, toward, a.v4, a.v6, ips, comma};
    kjoin_node__no_proxy_in in = {.service_subnet = cc ? cc->service_subnet : NULL,
                                  .pod_subnet = cc ? cc->pod_subnet : NULL,
                                  .dns_domain = cc ? cc->dns_domain : NULL,
                                  .hosts = hosts,
                                  .n_hosts = sizeof(hosts) / sizeof(hosts[0]),
                                  .extra = s->no_proxy};
    kjoin_code rc = kjoin_node__no_proxy(&in, j->result.no_proxy, sizeof(j->result.no_proxy), err);
    static const char *const units[2] = {"kubelet", "containerd"};
    for (int i = 0; !rc && i < 2; i++) {
        free(j->proxy_dropin[i]);
        j->proxy_dropin[i] = NULL;
        rc = kjoin_node__proxy_dropin(units[i], s->proxy, j->result.no_proxy, &j->proxy_dropin[i], err);
    }
    char shown[300];
    if (!rc)
        logf_(j, 0, "[kubelet-start] The kubelet and containerd go out through the proxy %s; NO_PROXY=%s",
              kjoin_url_redact(s->proxy, shown, sizeof(shown)), j->result.no_proxy);
    return rc;
}

static kjoin_code read_cluster_configuration(kjoin_node_join *j, kjoin_kubeapi *api, kjoin_err *err)
{
    kjoin_kubelet_start_result *out = &j->result;
    kjoin_cluster_configuration read;
    bool found = j->cx->cluster != NULL;
    if (j->spec->node_ip)
        snprintf(out->node_ip, sizeof(out->node_ip), "%s", j->spec->node_ip);
    /* read once a join: a control-plane join's was read before its first step */
    kjoin_code rc = found ? KJOIN_OK : kjoin_cluster_configuration_get(api, &read, &found, err);
    const kjoin_cluster_configuration *cc = j->cx->cluster ? j->cx->cluster : &read;
    out->kubeadm_minor = out->server_minor;
    out->instance_config = kjoin_kubeadm_instance_config(out->kubeadm_minor, -1);
    if (rc || !found) {
        if (!rc)
            logf_(j, 1, "[kubelet-start] No kubeadm ClusterConfiguration in the cluster (not made by kubeadm)");
        return rc ? rc : proxy_dropins(j, NULL, err);
    }
    memcpy(out->kubernetes_version, cc->version, sizeof(out->kubernetes_version));
    if (!out->server_minor)
        out->server_minor = cc->minor;
    /* The cluster's kubeadm release decides, as its feature gates do. */
    out->kubeadm_minor = cc->minor ? cc->minor : out->server_minor;
    out->instance_config = kjoin_kubeadm_instance_config(out->kubeadm_minor, cc->node_local_cri_socket);
    /* kubeadm's GetPauseImage: the cluster's imageRepository (defaulted in what kubeadm stored) */
    if (kjoin_release_of(out->kubeadm_minor)->pause_flag)
        kjoin_node__pause_image(out->kubeadm_minor, cc->image_repository, out->pause_image, sizeof(out->pause_image));
    dual_stack_node_ip(j, cc);
    kjoin_node__kube_proxy_image(cc, out->kube_proxy_image, sizeof(out->kube_proxy_image));
    return proxy_dropins(j, cc, err);
}

/* The kubelet's bootstrap kubeconfig as written. */
static const char *kubelet_bootstrap(const kjoin_node_join *j, size_t *len)
{
    *len = j->kubelet_bootstrap ? j->kubelet_bootstrap_len : j->bootstrap_len;
    return j->kubelet_bootstrap ? j->kubelet_bootstrap : j->bootstrap_kubeconfig;
}

/* The server the kubelet's bootstrap kubeconfig names into out ("" when
 * it names none): the join's client's when it is the same kubeconfig. */
static void kubelet_server(const kjoin_node_join *j, char *out, size_t cap)
{
    size_t len;
    const char *text = kubelet_bootstrap(j, &len);
    kjoin_kubeapi_config cfg;
    *out = '\0';
    if (j->kubelet_bootstrap && j->kubelet_server)
        snprintf(out, cap, "%s", j->kubelet_server);
    else if (!j->kubelet_bootstrap && j->cx->bootstrap_api)
        snprintf(out, cap, "%s", kjoin_kubeapi_server(j->cx->bootstrap_api));
    else if (text && !kjoin_kubeapi_config_parse(text, len, NULL, NULL, &cfg, NULL)) {
        snprintf(out, cap, "%s", cfg.server);
        kjoin_kubeapi_config_release(&cfg);
    }
}

/* Whether this node's join record names this node and this cluster: a join
 * that was interrupted, now going on. */
static bool resuming(const kjoin_node_join *j)
{
    kjoin_node__resolved p;
    kjoin_node_state *st = calloc(1, sizeof(*st));
    bool found = false, same = false;
    char server[sizeof(st->server)];
    kjoin_node__resolve(&j->spec->paths, &p);
    if (st && !kjoin_node__read_record(&p, &j->spec->paths, st, &found, NULL, NULL) && found &&
        !strcmp(st->node_name, j->cx->name.name)) {
        kubelet_server(j, server, sizeof(server));
        same = *server && !strcmp(st->server, server);
    }
    free(st);
    return same;
}

/* The cluster's side, read with the bootstrap identity: the release, no
 * Ready Node of this name, the kubelet configuration (into j->config_yaml). */
static kjoin_code read_cluster(kjoin_node_join *j, kjoin_kubeapi *api, kjoin_err *err)
{
    kjoin_kubelet_start_result *out = &j->result;
    const char *name = j->cx->name.name;
    char path[512], what[320];
    json_object *node = NULL, *cm = NULL;
    kjoin_code rc;
    out->server_minor = kjoin_kubeapi_server_minor(api);
    /* A token bound to one node joins no other (kjoin approver would deny it). */
    kjoin_token_binding binding;
    if ((rc = kjoin_approver_check_binding(api, out->server_minor, name, &binding, &j->binding_known, err)))
        return rc;
    j->bound = kjoin_token_binding_valid(&binding);
    snprintf(path, sizeof(path), "/api/v1/nodes/%s", name);
    snprintf(what, sizeof(what), "get node %s", name);
    if ((rc = kjoin_node__get_json(api, path, what, &node, err)))
        return rc;
    bool ready = kjoin_node__ready_of(node);
    json_object_put(node);
    if (ready && resuming(j))
        logf_(j, 0, "[kubelet-start] The Node %s is Ready: this node's, as its join record for this cluster says",
              name);
    else if (ready)
        return kjoin_err_set(err, KJOIN_E_USAGE, "a Node named %s is Ready in the cluster already: delete it "
                             "(kubectl delete node %s, as an admin) or join under another node name", name, name);
    /* The ConfigMap's name is the cluster's kubeadm release's (its kubernetesVersion), as kubeadm names it,
     * which may not be the API server's. */
    if ((rc = read_cluster_configuration(j, api, err)))
        return rc;
    if ((rc = kjoin_node__get_kubelet_config_map(api, out->kubeadm_minor, out->config_map, sizeof(out->config_map), &cm, err)))
        return rc;
    if (!cm)
        return kjoin_err_set(err, KJOIN_E_API, "get configmap kube-system/%s: NotFound: the cluster has no kubelet "
                             "configuration for this release (kubeadm init phase upload-config kubelet makes it)",
                             out->config_map);
    const char *kubelet;
    if ((rc = kjoin_node__kubelet_config_of(cm, out->config_map, &kubelet, &j->kubelet, err)))
        ;
    else if (!(j->config_yaml = strdup(kubelet)))
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    json_object_put(cm);
    return rc;
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* One file kubelet-start writes: where, which kind, what. */
typedef struct node_write {
    const char *path;
    kjoin_node_file_kind kind;
    const char *data;
    size_t len;
    const char *crash_point; /* the step boundary after it is written */
} node_write;

/* The directories that do not exist yet on the way to the n files of w
 * and to the record, each once, added to made: the join makes them.
 * Errors: KJOIN_E_USAGE (more than a record holds). */
static kjoin_code missing_dirs(const node_write *w, size_t n, const char *record, kjoin_written *made, kjoin_err *err)
{
    kjoin_code rc = KJOIN_OK;
    for (size_t i = 0; !rc && i <= n; i++) {
        char dir[4096];
        snprintf(dir, sizeof(dir), "%s", i < n ? w[i].path : record);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
            *slash = '\0';
            kjoin_err e;
            if (kjoin_written_add_missing_dirs(made, dir, &e))
                rc = kjoin_err_set(err, KJOIN_E_USAGE, "the node's files would need more new directories than the "
                                   "join record keeps (%d): create some of them first", KJOIN_WRITTEN_DIRS);
        }
    }
    return rc;
}

/* The names in dir (none when it is not there) into list. */
static void list_names(const char *dir, json_object *list)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            json_object_array_add(list, json_object_new_string(e->d_name));
    if (d)
        closedir(d);
}

/* The control plane's part of the one record file, when its steps wrote
 * one (a control-plane join's come before kubelet-start): kept as it is. A
 * file that is not kjoin's record has nothing to keep. */
static void keep_control_plane_part(json_object *file, json_object *o)
{
    json_object *part;
    if (file && json_object_object_get_ex(file, KJOIN_RECORD_CONTROL_PLANE, &part))
        json_object_object_add(o, KJOIN_RECORD_CONTROL_PLANE, json_object_get(part));
}

/* What the kubelet's files are made from beyond the cluster's
 * configuration (kjoin_node_inputs), for kjoin sync; NULL when they do not
 * fit a record (sync then leaves the flags file). */
static json_object *inputs_json(const kjoin_node_join *j)
{
    const kjoin_node_spec *s = j->spec;
    char dir[4096] = "";
    if (s->patches_dir && !realpath(s->patches_dir, dir))
        return NULL;
    bool fits = s->n_taints <= KJOIN_NODE_INPUTS_MAX_ARGS && s->n_extra_args <= KJOIN_NODE_INPUTS_MAX_ARGS;
    for (size_t i = 0; fits && i < s->n_taints; i++)
        fits = strlen(s->taints[i]) < sizeof(((kjoin_node_inputs *)0)->taints[0]);
    for (size_t i = 0; fits && i < s->n_extra_args; i++)
        fits = strlen(s->extra_args[i]) < sizeof(((kjoin_node_inputs *)0)->extra_args[0]);
    if (!fits)
        return NULL;
    json_object *o = json_object_new_object(), *taints = json_object_new_array(), *args = json_object_new_array();
    json_object_object_add(o, "criSocket", json_object_new_string(j->report.cri_socket));
    if (*dir)
        json_object_object_add(o, "patchesDir", json_object_new_string(dir));
    if (*j->result.node_ip)
        json_object_object_add(o, "nodeIP", json_object_new_string(j->result.node_ip));
    json_object_object_add(o, "hostnameOverride", json_object_new_boolean(!j->cx->name.is_host_name));
    for (size_t i = 0; i < s->n_taints; i++)
        json_object_array_add(taints, json_object_new_string(s->taints[i]));
    for (size_t i = 0; i < s->n_extra_args; i++)
        json_object_array_add(args, json_object_new_string(s->extra_args[i]));
    json_object_object_add(o, "taints", taints);
    json_object_object_add(o, "extraArgs", args);
    return o;
}

/* The record reset reads, written before the files: the directories the join
 * creates and what the kubelet directory held before, as they were before the
 * first join (kept from an earlier record), and each file with its digest.
 * Newly-allocated JSON into *out; nothing is written. Errors: KJOIN_E_USAGE
 * (more names in the kubelet directory than a record holds: none is left
 * out, or reset would take it for the kubelet's own). */
static kjoin_code make_record(const kjoin_node_join *j, const kjoin_node__resolved *p, const node_write *w, size_t n,
                              char **out, kjoin_err *err)
{
    kjoin_node_state *old = calloc(1, sizeof(*old)), *back = malloc(sizeof(*back));
    kjoin_written *written = calloc(1, sizeof(*written));
    kjoin_err ignore;
    bool have_old = false;
    if (!old || !back || !written) {
        free(old), free(back), free(written);
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    json_object *file = NULL; /* the record file as it is, both parts, read once */
    if (kjoin_node__read_record(p, &j->spec->paths, old, &have_old, &file, &ignore))
        have_old = false; /* a record not kjoin's is replaced, never trusted */
    json_object *o = json_object_new_object(), *before = json_object_new_array(),
                *pki_before = json_object_new_array(), *mounts_before = json_object_new_array();
    size_t n_mounts = 0;
    json_object_object_add(o, "kind", json_object_new_string("KjoinJoinRecord"));
    json_object_object_add(o, "joinID", json_object_new_string(j->cx->join_id ? j->cx->join_id : ""));
    char server[sizeof(old->server)];
    kubelet_server(j, server, sizeof(server));
    json_object_object_add(o, "server", json_object_new_string(server));
    json_object_object_add(o, "nodeName", json_object_new_string(j->cx->name.name));
    /* What the first join made stays the record's; this run's files replace
     * what it recorded for the same paths. */
    if (have_old)
        *written = old->written;
    kjoin_code rc = KJOIN_OK;
    for (size_t i = 0; !rc && i < n; i++) {
        unsigned char sum[32];
        char hex[65];
        kjoin_sha256(w[i].data, w[i].len, sum, NULL);
        rc = kjoin_written_add_file(written, w[i].path, kjoin_hex(sum, 32, hex), err);
    }
    if (have_old) {
        for (size_t i = 0; i < old->n_kubelet_entries; i++)
            json_object_array_add(before, json_object_new_string(old->kubelet_entries[i]));
        for (size_t i = 0; i < old->n_pki_entries; i++)
            json_object_array_add(pki_before, json_object_new_string(old->pki_entries[i]));
        for (size_t i = 0; i < old->n_mounts; i++)
            json_object_array_add(mounts_before, json_object_new_string(old->mounts[i]));
    } else {
        list_names(p->kubelet_dir, before);
        list_names(p->kubelet_pki, pki_before);
        /* A data disk mounted there before stays; what the kubelet mounts
         * (its directory onto itself, volumes) reset unmounts. */
        char (*mounts)[4096] = calloc(KJOIN_NODE_STATE_MAX_MOUNTS, sizeof(*mounts));
        n_mounts = mounts ? kjoin_node__mounts_under(p->kubelet_dir, mounts, KJOIN_NODE_STATE_MAX_MOUNTS) : 0;
        for (size_t i = 0; mounts && i < n_mounts && i < KJOIN_NODE_STATE_MAX_MOUNTS; i++)
            json_object_array_add(mounts_before, json_object_new_string(mounts[i]));
        free(mounts);
    }
    free(old);
    /* Every directory missing on the way to a file: the join makes them. */
    if (!rc)
        rc = missing_dirs(w, n, p->state, written, err);
    json_object *outputs = json_object_new_object();
    json_object_object_add(outputs, "bootstrapKubeconfig", json_object_new_string(p->bootstrap_kubeconfig));
    json_object_object_add(outputs, "caCert", json_object_new_string(p->ca_cert_path));
    json_object_object_add(o, "outputs", outputs);
    kjoin_record_written_emit(o, written);
    json_object *inputs = inputs_json(j);
    if (inputs)
        json_object_object_add(o, "kubeletInputs", inputs);
    json_object_object_add(o, "kubeletDirBefore", before);
    json_object_object_add(o, "kubeletPkiBefore", pki_before);
    json_object_object_add(o, "kubeletMountsBefore", mounts_before);
    keep_control_plane_part(file, o);
    json_object_put(file);
    free(written);
    size_t names = json_object_array_length(before) > json_object_array_length(pki_before)
                       ? json_object_array_length(before) : json_object_array_length(pki_before);
    const char *json = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    kjoin_err e;
    if (rc)
        ;
    else if (n_mounts > KJOIN_NODE_STATE_MAX_MOUNTS)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%zu mounts are at or below %s, more than the join record keeps (%d): "
                           "unmount what a previous kubelet left first", n_mounts, p->kubelet_dir,
                           KJOIN_NODE_STATE_MAX_MOUNTS);
    else if (names > KJOIN_NODE_STATE_MAX_ENTRIES || strlen(json) > KJOIN_NODE_STATE_MAX)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s (or its pki/) holds %zu names, more than the join record keeps "
                           "(%d, %d bytes): reset could not tell them from the kubelet's own; move some away",
                           p->kubelet_dir, names,
                           KJOIN_NODE_STATE_MAX_ENTRIES, KJOIN_NODE_STATE_MAX);
    else if (kjoin_node_state_parse(json, strlen(json), &j->spec->paths, back, &e)) /* never one reset cannot read */
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "the join record would not read back (%s): nothing written", e.msg);
    else if (!(*out = strdup(json)))
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    free(back);
    json_object_put(o);
    return rc;
}

static void add_file(kjoin_kubelet_start_result *out, const char *path, unsigned mode)
{
    if (out->n_files < KJOIN_NODE_MAX_FILES) {
        kjoin_node_file *f = &out->files[out->n_files++];
        snprintf(f->path, sizeof(f->path), "%s", path);
        f->mode = mode;
    }
}

/* The runtime and the kubelet, from preflight's report, or found now
 * (quietly) when preflight did not run. */
static kjoin_code runtime_and_kubelet(kjoin_node_join *j, kjoin_err *err)
{
    kjoin_preflight_report *r = &j->report, found;
    if (r->kubelet[0] && r->cri_socket[0])
        return KJOIN_OK;
    kjoin_node_spec quiet = *j->spec;
    quiet.ignore_preflight = "all";
    kjoin_preflight_node(&quiet, NULL, NULL, &found, NULL); /* its findings are not preflight's: it did not run */
    const char *why = "not found";
    for (size_t i = 0; i < found.n; i++)
        if (!strcmp(found.items[i].name, "KubeletVersion"))
            why = found.items[i].message;
    if (!found.kubelet[0])
        return kjoin_err_set(err, KJOIN_E_USAGE, "no kubelet binary: %s", why);
    if (!found.cri_socket[0])
        return kjoin_err_set(err, KJOIN_E_USAGE, "no container runtime socket found; name one");
    memcpy(r->kubelet, found.kubelet, sizeof(r->kubelet));
    memcpy(r->kubelet_version, found.kubelet_version, sizeof(r->kubelet_version));
    memcpy(r->cri_socket, found.cri_socket, sizeof(r->cri_socket));
    r->kubelet_minor = found.kubelet_minor;
    return KJOIN_OK;
}

/* The kubelet's files as the cluster's kubeadm release writes them: where
 * the runtime goes, the patches applied to config.yaml (whose healthz and
 * swap settings the checks and the wait then follow). */
static kjoin_code render(kjoin_node_join *j, kjoin_err *err)
{
    kjoin_kubelet_start_result *r = &j->result;
    const char *cri = j->report.cri_socket;
    char *config = NULL;
    kjoin_err in;
    kjoin_code rc = KJOIN_OK;
    if (r->instance_config && (rc = kjoin_kubelet_instance_config(cri, &j->instance_yaml, err)))
        return rc;
    if ((rc = kjoin_kubelet_flags_env(j->spec, &j->cx->name, r->instance_config ? NULL : cri, r->kubeadm_minor,
                                      j->report.kubelet_minor, *r->pause_image ? r->pause_image : NULL,
                                      *r->node_ip ? r->node_ip : NULL, &j->flags_env, &in)))
        return kjoin_err_set(err, rc, "%s", in.msg);
    r->n_patches = j->cx->patches ? j->cx->patches->n : 0;
    if (!r->instance_config && !r->n_patches)
        return KJOIN_OK; /* config.yaml is the ConfigMap's, which read_cluster parsed */
    if ((rc = kjoin_kubelet_config_render(j->config_yaml, strlen(j->config_yaml), j->cx->patches,
                                          r->instance_config ? cri : NULL, &config, err)))
        return rc;
    free(j->config_yaml);
    j->config_yaml = config;
    if ((rc = kjoin_kubelet_config_parse(config, strlen(config), &j->kubelet, &in)))
        return kjoin_err_set(err, r->n_patches ? KJOIN_E_USAGE : rc, "the kubelet configuration%s: %s",
                             r->n_patches ? " once patched" : "", in.msg);
    for (size_t i = 0; i < r->n_patches; i++)
        logf_(j, 0, "[patches] Applied patch of type \"%s\" from %s to target \"kubeletconfiguration\"",
              (const char *const[]){"strategic", "merge", "json"}[j->cx->patches->items[i].type], j->cx->patches->items[i].file);
    return KJOIN_OK;
}

static bool append(char *out, size_t cap, const char *text)
{
    size_t used = strlen(out), len = strlen(text);
    if (used + len + 1 > cap)
        return false;
    memcpy(out + used, text, len + 1);
    return true;
}

/* The kubelet's start command, its output appended to the log file when
 * one is named. */
static kjoin_code start_command(kjoin_node_join *j, kjoin_err *err)
{
    char *out = j->result.start_command;
    size_t cap = sizeof(j->result.start_command);
    kjoin_code rc = kjoin_node__log_check(j->spec->kubelet_log, err);
    if (!rc)
        rc = kjoin_kubelet_start_command(j->report.kubelet, &j->spec->paths, out, cap, err);
    if (!rc && j->spec->kubelet_log &&
        !(append(out, cap, " >>") && kjoin_shell_word(out, cap, j->spec->kubelet_log) && append(out, cap, " 2>&1")))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "the kubelet's paths are too long for its command line");
    return rc;
}

/* The images the node needs before a Pod runs, which the runtime lacks
 * (said: the kubelet has them pulled, which a node without a way to a
 * registry cannot), and an archive to import checked, before any write. */
static void images_missing(kjoin_node_join *j)
{
    kjoin_kubelet_start_result *r = &j->result;
    const char *images[] = {r->sandbox_image, r->kube_proxy_image};
    kjoin_err e;
    if (kjoin_node__images_missing(j->report.cri_socket, images, 2, r->images_missing, sizeof(r->images_missing), &e))
        logf_(j, 1, "[kubelet-start] The runtime was not asked for its images: %s", e.msg);
}

static kjoin_code images_needed(kjoin_node_join *j, kjoin_err *err)
{
    kjoin_kubelet_start_result *r = &j->result;
    char ctr[4096];
    kjoin_err e;
    kjoin_code rc = j->spec->images ? kjoin_node__images_check(j->spec->images, ctr, sizeof(ctr), err) : KJOIN_OK;
    if (rc)
        return rc;
    if (kjoin_cri_sandbox_image(kjoin_node__runtime_socket(j->report.cri_socket), 5000,
                                r->sandbox_image, sizeof(r->sandbox_image), &e))
        logf_(j, 1, "[kubelet-start] The runtime's sandbox image is not known: %s", e.msg);
    images_missing(j);
    if (*r->images_missing && !j->spec->images)
        logf_(j, KJOIN_LOG_WARNING, "[kubelet-start] WARNING Images: not on this node: %s (the kubelet has them "
                                    "pulled; a node without a way to a registry imports them: an image archive)",
              r->images_missing);
    return KJOIN_OK;
}

/* The archive into containerd's k8s.io namespace, before the kubelet starts. */
static kjoin_code images_import(kjoin_node_join *j, kjoin_err *err)
{
    kjoin_kubelet_start_result *r = &j->result;
    char ctr[4096];
    kjoin_code rc = kjoin_node__images_check(j->spec->images, ctr, sizeof(ctr), err);
    if (!rc)
        rc = kjoin_node__images_import(ctr, j->report.cri_socket, j->spec->images, left_ms(j), r->images_imported_names,
                                       sizeof(r->images_imported_names), &r->images_imported, err);
    if (rc)
        return rc;
    logf_(j, 0, "[kubelet-start] Imported %zu images from %s into containerd's k8s.io namespace: %s",
          r->images_imported, j->spec->images, r->images_imported_names);
    images_missing(j);
    if (*r->images_missing)
        logf_(j, KJOIN_LOG_WARNING, "[kubelet-start] WARNING Images: still not on this node after the import: %s",
              r->images_missing);
    return KJOIN_OK;
}

kjoin_code kjoin_kubelet_check(kjoin_node_join *j, bool preflight, kjoin_err *err)
{
    kjoin_kubeapi *api = NULL;
    kjoin_code rc;
    step(j, NULL);
    kjoin_node__crash_point("discovered");
    if (!j->bootstrap_kubeconfig)
        return kjoin_err_set(err, KJOIN_E_USAGE, "kubelet-start needs the bootstrap kubeconfig discovery makes");
    if ((rc = runtime_and_kubelet(j, err)))
        return rc;
    if (!(api = j->cx->bootstrap_api))
        rc = client(j, j->bootstrap_kubeconfig, j->bootstrap_len, NULL, &api, err);
    if (!rc)
        rc = read_cluster(j, api, err);
    if (api != j->cx->bootstrap_api)
        kjoin_kubeapi_free(api);
    if (!rc)
        rc = render(j, err);
    if (!rc && preflight)
        rc = kjoin_preflight_cluster(j->spec, j->result.server_minor, j->kubelet.fail_swap_on, &j->report, err);
    /* Made now, so that a path too long for it fails before any write. */
    if (!rc)
        rc = start_command(j, err);
    if (!rc)
        rc = images_needed(j, err);
    step(j, "cluster-checks");
    if (rc)
        return rc;
    j->checked = true;
    if (j->result.kubeadm_minor != j->result.server_minor)
        logf_(j, 0, "[kubelet-start] The API server is v1.%d, kubeadm's ClusterConfiguration says v1.%d: its "
              "kubeadm release decides what is written", j->result.server_minor, j->result.kubeadm_minor);
    logf_(j, 0, "[kubelet-start] Cluster v1.%d, kubelet configuration from configmap kube-system/%s, runtime %s",
          j->result.kubeadm_minor, j->result.config_map, j->report.cri_socket);
    kjoin_node__crash_point("checked");
    return KJOIN_OK;
}

/* A write failed (a full or read-only disk): what this run created goes
 * again, files and then directories, so the node is as it was before it;
 * files it replaced keep their new content (a re-run or reset knows them
 * from the record). The error says so. */
/* Whether an undo left something. */
static void note_left(void *whole, const char *path, kjoin_undo what, const char *why)
{
    (void)path, (void)why;
    if (what == KJOIN_UNDO_LEFT)
        *(bool *)whole = false;
}

static void take_back(const kjoin_node_join *j, const char *const *created, size_t n, const kjoin_written *made,
                      kjoin_err *err)
{
    bool whole = true;
    for (size_t i = n; i-- > 0;) {
        kjoin_safedir d;
        const char *name;
        kjoin_err e;
        if (kjoin_safedir_open_parent(created[i], &d, &name, &e) || kjoin_safedir_unlink(&d, name, &e))
            whole = false;
        kjoin_safedir_close(&d);
    }
    /* those made before the failure, when empty */
    kjoin_written_undo_dirs(made, NULL, false, "not empty", note_left, &whole);
    if (err) {
        char msg[KJOIN_ERR_MSG_MAX];
        snprintf(msg, sizeof(msg), "%s", err->msg);
        kjoin_err_set(err, err->code, "%s; %s", msg,
                      whole ? "nothing of this run is left: run the join again once the disk takes it"
                            : "some of this run's files could not be taken back: kjoin reset removes them");
    }
    logf_(j, 1, "[kubelet-start] Took back %zu files and %zu directories of this run", n, made->n_dirs);
}

/* The files kubelet-start writes, in kubeadm's order, with what goes in
 * them; the record goes first and is not among them. */
#define NODE_FILES 7
static size_t node_files(const kjoin_node_join *j, const kjoin_node__resolved *p, node_write w[NODE_FILES])
{
    size_t boot_len;
    const char *boot = kubelet_bootstrap(j, &boot_len);
    const node_write all[NODE_FILES] = {
        {p->bootstrap_kubeconfig, KJOIN_NODE_FILE_BOOTSTRAP_KUBECONFIG, boot, boot_len, "bootstrap-kubeconfig"},
        {p->instance_config, KJOIN_NODE_FILE_INSTANCE_CONFIG, j->instance_yaml,
         j->instance_yaml ? strlen(j->instance_yaml) : 0, "instance-config"},
        {p->config_yaml, KJOIN_NODE_FILE_KUBELET_CONFIG, j->config_yaml, strlen(j->config_yaml), "kubelet-config"},
        {p->flags_env, KJOIN_NODE_FILE_FLAGS_ENV, j->flags_env, strlen(j->flags_env), "flags-env"},
        {p->ca_cert_path, KJOIN_NODE_FILE_CA_CERT, j->cx->ca_pem, j->cx->ca_len, "ca-cert"},
        {p->kubelet_proxy, KJOIN_NODE_FILE_PROXY_DROPIN, j->proxy_dropin[0],
         j->proxy_dropin[0] ? strlen(j->proxy_dropin[0]) : 0, "kubelet-proxy"},
        {p->containerd_proxy, KJOIN_NODE_FILE_PROXY_DROPIN, j->proxy_dropin[1],
         j->proxy_dropin[1] ? strlen(j->proxy_dropin[1]) : 0, "containerd-proxy"},
    };
    size_t n = 0;
    for (size_t i = 0; i < NODE_FILES; i++) /* those this join writes */
        if (all[i].data && (all[i].len || all[i].kind != KJOIN_NODE_FILE_CA_CERT))
            w[n++] = all[i];
    return n;
}

/* A proxy's drop-ins changed: systemd reads them again, and containerd,
 * which pulls the images, restarts on its own (its containers go on); the
 * kubelet's is read when kubelet-start starts it. */
static kjoin_code proxy_units_reload(kjoin_node_join *j, bool containerd_changed, kjoin_err *err)
{
    kjoin_err in;
    if (kjoin_node__systemctl_unit("daemon-reload", NULL, 60000, &in))
        return kjoin_err_set(err, KJOIN_E_OTHER, "systemd did not read the proxy's drop-ins: %s", in.msg);
    if (!containerd_changed)
        return KJOIN_OK;
    if (kjoin_node__systemctl_unit("try-restart", "containerd", 60000, &in))
        return kjoin_err_set(err, KJOIN_E_OTHER, "containerd did not restart with its proxy drop-in: %s", in.msg);
    j->result.containerd_restarted = true;
    logf_(j, 0, "[kubelet-start] Restarted containerd for its proxy drop-in (systemctl try-restart containerd)");
    return KJOIN_OK;
}

kjoin_code kjoin_kubelet_write(kjoin_node_join *j, kjoin_err *err)
{
    kjoin_node__resolved p;
    kjoin_err in;
    kjoin_code rc;
    bool dry = j->cx->dry_run; /* each file under the dry run's root, as the node holds them copied there first */
    if (!j->checked)
        return kjoin_err_set(err, KJOIN_E_USAGE, "kubelet-start writes only after its cluster checks passed");
    if ((rc = kjoin_node_check_destinations(&j->spec->paths, err)))
        return rc;
    kjoin_node__resolve(&j->spec->paths, &p);
    node_write w[NODE_FILES];
    size_t n = node_files(j, &p, w);
    char at[NODE_FILES + 1][4200]; /* where each goes: the node's path, or under the root; the record last */
    for (size_t i = 0; !rc && i <= n; i++) {
        const char *path = i < n ? w[i].path : p.state;
        rc = kjoin_join_context_write_path(j->cx, path, at[i], sizeof(at[i]), err);
        if (!rc)
            rc = kjoin_dry_run_copy_file(j->cx, path, err);
    }
    char *record = NULL;
    if (rc || (rc = make_record(j, &p, w, n, &record, err)))
        return rc;
    /* What this run makes, to be taken back if a later write fails. */
    kjoin_written *made = calloc(1, sizeof(*made));
    if (!made || (rc = missing_dirs(w, n, p.state, made, err))) {
        free(record), free(made);
        return rc ? rc : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    const char *created[NODE_FILES + 1];
    size_t n_created = 0;
    j->result.systemd = !dry && kjoin_node__systemd(j->spec->systemd_dir);
    /* kubeadm's order: the kubelet does not read half a configuration. */
    if (j->result.systemd && kjoin_node__systemctl("stop", 30000, &in))
        logf_(j, KJOIN_LOG_WARNING, "[kubelet-start] %s", in.msg);
    kjoin_write_result how;
    rc = kjoin_node_file_write(KJOIN_NODE_FILE_RECORD, at[n], record, strlen(record), true, &how, err);
    free(record);
    if (!rc && how == KJOIN_WRITE_CREATED)
        created[n_created++] = at[n];
    if (!rc && how != KJOIN_WRITE_UNCHANGED)
        rc = kjoin_join_context_wrote(j->cx, at[n], kjoin_node_file_mode(KJOIN_NODE_FILE_RECORD), err);
    if (!rc)
        kjoin_node__crash_point("record");
    bool units_changed = false, containerd_changed = false;
    for (size_t i = 0; !rc && i < n; i++) {
        unsigned mode = kjoin_node_file_mode(w[i].kind);
        if ((rc = kjoin_node_file_write(w[i].kind, at[i], w[i].data, w[i].len, j->spec->force, &how, err)))
            break;
        units_changed |= w[i].kind == KJOIN_NODE_FILE_PROXY_DROPIN && how != KJOIN_WRITE_UNCHANGED;
        containerd_changed |= !strcmp(w[i].path, p.containerd_proxy) && how != KJOIN_WRITE_UNCHANGED;
        if (how == KJOIN_WRITE_CREATED)
            created[n_created++] = at[i];
        if (dry) { /* not the node's: shown, not said */
            if (how != KJOIN_WRITE_UNCHANGED)
                rc = kjoin_join_context_wrote(j->cx, at[i], mode, err);
            continue;
        }
        add_file(&j->result, w[i].path, mode);
        logf_(j, 0, "[kubelet-start] %s %s (%04o)", how == KJOIN_WRITE_UNCHANGED ? "Unchanged:" : "Wrote", w[i].path,
              mode);
        kjoin_node__crash_point(w[i].crash_point);
    }
    if (rc && !dry && (n_created || made->n_dirs)) /* a dry run's root goes whole */
        take_back(j, created, n_created, made, err);
    free(made);
    if (!rc && j->result.systemd && units_changed)
        rc = proxy_units_reload(j, containerd_changed, err);
    step(j, dry ? "dry-run" : "write");
    return rc;
}

/* kubeadm's drop-in (10-kubeadm.conf) runs the kubelet this way; as one
 * shell line to paste: each path one quoted word, the flags file's value
 * split into words but never globbed (set -f). */
kjoin_code kjoin_kubelet_start_command(const char *kubelet, const kjoin_node_paths *paths, char *out, size_t cap,
                                       kjoin_err *err)
{
    kjoin_node__resolved p;
    char script[6144] = "set -f; . ", flag[4200];
    kjoin_node__resolve(paths, &p);
    bool ok = kjoin_shell_word(script, sizeof(script), p.flags_env) && append(script, sizeof(script), "; exec ") &&
              kjoin_shell_word(script, sizeof(script), kubelet);
    const char *const flags[][2] = {{"--bootstrap-kubeconfig=", p.bootstrap_kubeconfig},
                                    {"--kubeconfig=", p.kubelet_kubeconfig},
                                    {"--config=", p.config_yaml}};
    for (size_t i = 0; ok && i < sizeof(flags) / sizeof(flags[0]); i++)
        ok = snprintf(flag, sizeof(flag), "%s%s", flags[i][0], flags[i][1]) < (int)sizeof(flag) &&
             append(script, sizeof(script), " ") && kjoin_shell_word(script, sizeof(script), flag);
    ok = ok && append(script, sizeof(script), " $KUBELET_KUBEADM_ARGS");
    if (cap)
        out[0] = '\0';
    if (!ok || !append(out, cap, "sh -c ") || !kjoin_shell_word(out, cap, script))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the kubelet's paths are too long for its command line");
    return KJOIN_OK;
}

kjoin_code kjoin_kubelet_launch(kjoin_node_join *j, kjoin_err *err)
{
    kjoin_err in;
    kjoin_code rc = j->spec->images ? images_import(j, err) : KJOIN_OK;
    if (rc)
        return rc;
    if (j->result.systemd) {
        logf_(j, 0, "[kubelet-start] Starting the kubelet (systemctl restart kubelet)");
        if (kjoin_node__systemctl("restart", 60000, &in))
            rc = kjoin_err_set(err, KJOIN_E_OTHER, "the kubelet did not start: %s (is kubelet.service installed?)",
                               in.msg);
        j->result.start_command[0] = '\0';
        if (j->spec->kubelet_log)
            logf_(j, 0, "[kubelet-start] Not read: %s (systemd runs the kubelet; its journal is read)",
                  j->spec->kubelet_log);
    } else {
        logf_(j, 0, "[kubelet-start] systemd does not run this machine: start the kubelet with: %s",
              j->result.start_command);
    }
    step(j, "start");
    if (!rc)
        kjoin_node__crash_point("started");
    return rc;
}

/* kubelet.conf usable, and the Node there, seen with the node's own
 * credentials. */
static bool registered(const kjoin_node_join *j, const kjoin_node__resolved *p, char *why, size_t cap)
{
    kjoin_kubeapi *api = NULL;
    kjoin_err e;
    json_object *node = NULL;
    char path[320];
    if (!exists(p->kubelet_kubeconfig)) {
        (void)!snprintf(why, cap, "the kubelet has not written %.300s yet (its TLS bootstrap: is its CSR approved?)",
                        p->kubelet_kubeconfig);
        return false;
    }
    if (client(j, NULL, 0, p->kubelet_kubeconfig, &api, &e)) {
        (void)!snprintf(why, cap, "%.300s is not usable yet: %.300s", p->kubelet_kubeconfig, e.msg);
        return false;
    }
    snprintf(path, sizeof(path), "/api/v1/nodes/%s", j->cx->name.name);
    kjoin_code rc = kjoin_node__get_json(api, path, "get node", &node, &e);
    kjoin_kubeapi_free(api);
    bool ok = !rc && node;
    json_object_put(node);
    if (!ok)
        (void)!snprintf(why, cap, "the Node %s is not registered yet%s%.300s", j->cx->name.name, rc ? ": " : "",
                        rc ? e.msg : "");
    return ok;
}

/* Whether kjoin approver denied the kubelet's CSR for this node made with
 * this join's token (KJOIN_E_TOKEN_REJECTED, with its reason). One client
 * for the wait, made at the first question (the bootstrap kubeconfig parsed
 * once); each question bounded by DENIAL_ASK_MS (the
 * wait must go on following the kubelet while the API server is away);
 * unanswered questions are no denial. */
#define DENIAL_ASK_MS 1000
typedef struct denial_asker {
    bool tried;
    kjoin_kubeapi *api; /* NULL: no token to ask about */
    char id[KJOIN_TOKEN_ID_LEN + 1];
} denial_asker;

static void denial_asker_start(const kjoin_node_join *j, denial_asker *d)
{
    kjoin_kubeapi_config cfg;
    kjoin_err e;
    d->tried = true;
    if (!j->bootstrap_kubeconfig ||
        kjoin_kubeapi_config_parse(j->bootstrap_kubeconfig, j->bootstrap_len, NULL, NULL, &cfg, &e))
        return;
    if (cfg.token && strlen(cfg.token) > KJOIN_TOKEN_ID_LEN && cfg.token[KJOIN_TOKEN_ID_LEN] == '.')
        snprintf(d->id, sizeof(d->id), "%.6s", cfg.token);
    kjoin_kubeapi_options o = kjoin_join_context_api_options(j->cx, 0, DENIAL_ASK_MS);
    if (!*d->id || kjoin_kubeapi_new(&cfg, &o, &d->api, &e))
        kjoin_kubeapi_config_release(&cfg);
}

static kjoin_code bound_denial(const kjoin_node_join *j, denial_asker *d, kjoin_err *err)
{
    if (!d->tried)
        denial_asker_start(j, d);
    char reason[600] = "";
    bool denied = false;
    kjoin_err e;
    if (d->api && !kjoin_approver_denied(d->api, d->id, j->cx->name.name, reason, sizeof(reason), &denied, &e) && denied)
        return kjoin_err_set(err, KJOIN_E_TOKEN_REJECTED, "kjoin approver denied the kubelet's certificate request: %s "
                                                           "(kubectl get csr on the control plane)",
                             reason);
    return KJOIN_OK;
}

/* Under systemd, a kubelet that exited for good (the unit failed) or keeps
 * exiting (systemd restarted it CRASH_LOOP times, never healthy) ends the
 * wait at once: the deadline would change nothing. *base is the restart
 * count first seen. */
#define CRASH_LOOP 3
static bool kubelet_gone(long *base, char *why, size_t cap)
{
    kjoin_node__unit u;
    if (!kjoin_node__kubelet_unit(&u))
        return false;
    if (*base < 0)
        *base = u.restarts;
    if (strcmp(u.active, "failed") && u.restarts - *base < CRASH_LOOP)
        return false;
    if (!strcmp(u.active, "failed"))
        snprintf(why, cap, "the kubelet exited for good (kubelet.service failed)");
    else
        snprintf(why, cap, "the kubelet keeps exiting: systemd restarted it %ld times and it never answered",
                 u.restarts - *base);
    return true;
}

/* Whether the join record holds path with data's digest: what proves a
 * file is the one kubelet-start wrote when the wait runs alone. */
static bool recorded(const kjoin_node_join *j, const kjoin_node__resolved *p, const char *path, const char *data,
                     size_t len)
{
    kjoin_node_state *st = calloc(1, sizeof(*st));
    bool found = false;
    bool match = st && !kjoin_node__read_record(p, &j->spec->paths, st, &found, NULL, NULL) && found &&
                 kjoin_written_has_data(&st->written, path, data, len);
    free(st);
    return match;
}

/* The token has done its job: it does not stay on disk (kubeadm removes
 * the file too). Only a file still holding what kubelet-start wrote (in
 * memory, or, for the wait alone, as the join record's digest says);
 * through its checked directory, never through a symlink. */
static void remove_bootstrap_kubeconfig(kjoin_node_join *j, const kjoin_node__resolved *p)
{
    char *text = NULL;
    size_t len = 0, boot_len;
    const char *boot = kubelet_bootstrap(j, &boot_len);
    bool missing = false;
    const char *name;
    kjoin_safedir d;
    kjoin_err e;
    if (kjoin_safedir_open_parent(p->bootstrap_kubeconfig, &d, &name, &e))
        return;
    if (!kjoin_safedir_read(&d, name, 1 << 20, true, &text, &len, &missing, &e) &&
        (j->bootstrap_kubeconfig ? len == boot_len && !memcmp(text, boot, len)
                                 : recorded(j, p, p->bootstrap_kubeconfig, text, len)) &&
        !kjoin_safedir_unlink(&d, name, &e)) {
        j->result.bootstrap_removed = true;
        logf_(j, 0, "[kubelet-wait-bootstrap] Removed %s: the bootstrap token is no longer on this node",
              p->bootstrap_kubeconfig);
    }
    kjoin_free_wiped(text, len);
    kjoin_safedir_close(&d);
}

/* A release whose kubeadm keeps the node's runtime on the Node, not in
 * instance-config.yaml, has kubeadm upgrade node read it from there: the
 * annotation kubeadm join makes, made as the node (its kubelet.conf), after
 * the token is off the disk, so a refusal here leaves no secret behind. */
static kjoin_code annotate_cri_socket(kjoin_node_join *j, const kjoin_node__resolved *p, kjoin_err *err)
{
    if (!j->checked || j->result.instance_config || !j->report.cri_socket[0])
        return KJOIN_OK;
    kjoin_kubeapi *api = NULL;
    kjoin_kubeapi_response resp;
    char path[320];
    kjoin_code rc = client(j, NULL, 0, p->kubelet_kubeconfig, &api, err);
    json_object *body = json_object_new_object(), *meta = json_object_new_object(), *ann = json_object_new_object();
    json_object_object_add(ann, "kubeadm.alpha.kubernetes.io/cri-socket", json_object_new_string(j->report.cri_socket));
    json_object_object_add(meta, "annotations", ann);
    json_object_object_add(body, "metadata", meta);
    snprintf(path, sizeof(path), "/api/v1/nodes/%s", j->cx->name.name);
    if (!rc && !(rc = kjoin_kubeapi_request(api, "PATCH", path,
                                            json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN |
                                                                                     JSON_C_TO_STRING_NOSLASHESCAPE),
                                            &resp, err))) {
        rc = kjoin_kubeapi_check(&resp, "annotate the Node with its cri-socket", err);
        kjoin_kubeapi_response_release(&resp);
    }
    json_object_put(body);
    kjoin_kubeapi_free(api);
    if (!rc) {
        j->result.cri_socket_annotated = true;
        logf_(j, 0, "[kubelet-wait-bootstrap] Annotated Node %s with kubeadm.alpha.kubernetes.io/cri-socket=%s",
              j->cx->name.name, j->report.cri_socket);
    }
    return rc;
}

#define PROGRESS_MS 15000 /* a line at least this often while the kubelet is awaited */

/* What the wait watches for the kubelet's identity: kubelet.conf's
 * directory, by inotify (fd -1 where there is none: then only the timer). */
typedef struct identity_watch {
    int fd;
} identity_watch;

static void identity_watch_start(identity_watch *w, const char *kubeconfig)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", kubeconfig);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else
        slash[slash == dir] = '\0'; /* "/kubelet.conf": "/" */
    w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (w->fd >= 0 && inotify_add_watch(w->fd, dir, IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
        close(w->fd); /* (the directory not there yet: the timer alone) */
        w->fd = -1;
    }
}

/* Sleeps ms, or less when the kubelet writes into kubelet.conf's directory. */
static void identity_watch_wait(identity_watch *w, int64_t ms)
{
    if (w->fd < 0) {
        kjoin_sleep_ms(ms);
        return;
    }
    struct pollfd pfd = {.fd = w->fd, .events = POLLIN};
    if (poll(&pfd, 1, ms > INT32_MAX ? INT32_MAX : (int)ms) > 0) {
        char events[4096];
        while (read(w->fd, events, sizeof(events)) > 0) /* drained: the next wait waits again */
            ;
    }
}

static void identity_watch_stop(identity_watch *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
}

/* The kubelet's last words, for a join report: "the kubelet's last error: ...". */
static void keep_words(kjoin_node_join *j, const kjoin_node__words *w)
{
    snprintf(j->kubelet_said, sizeof(j->kubelet_said), "%s", w->said + (w->said[0] == ';' ? 2 : 0));
}

kjoin_code kjoin_kubelet_wait(kjoin_node_join *j, kjoin_err *err)
{
    kjoin_node__resolved p;
    char why[1024] = "";
    bool healthy = false;
    kjoin_node__resolve(&j->spec->paths, &p);
    step(j, NULL);
    if (!j->checked) { /* the wait alone: the kubelet's configuration is the node's */
        kjoin_code rc = kjoin_node__log_check(j->spec->kubelet_log, err);
        if (rc)
            return rc;
        j->kubelet = (kjoin_kubelet_config)KJOIN_KUBELET_CONFIG_DEFAULTS;
        kjoin_node__kubelet_config(&p, &j->kubelet);
        j->result.systemd = kjoin_node__systemd(j->spec->systemd_dir);
    }
    logf_(j, 0, "[kubelet-wait-bootstrap] Waiting for the kubelet: healthz, its TLS bootstrap, its Node "
                "(%lld s left)", (long long)(left_ms(j) / 1000));
    long base = -1;
    int64_t began = kjoin_now_ms(), said = began, asked = 0;
    /* kubeadm's own bounds of the two halves, within the deadline: */
    int64_t health_by = j->cx->timeouts.kubelet_health_ms > 0 ? began + j->cx->timeouts.kubelet_health_ms : 0, bootstrap_by = 0;
    kjoin_node__log lg;
    kjoin_node__log_start(&lg, j->result.systemd ? NULL : j->spec->kubelet_log, kjoin_now_ms());
    /* Followed as it happens: the kubelet's identity by inotify, then its
     * health and its Node every FOLLOW_MS (they come within a second). */
    identity_watch watch;
    identity_watch_start(&watch, p.kubelet_kubeconfig);
    denial_asker denial = {0};
    kjoin_code rc = KJOIN_OK;
    for (;;) {
        if (!healthy && (healthy = kjoin_node__healthz(&j->kubelet, why, sizeof(why)))) {
            step(j, "kubelet-healthz");
            kjoin_node__crash_point("healthy");
            logf_(j, 0, "[kubelet-wait-bootstrap] The kubelet is healthy after %lld s; waiting for its client "
                        "certificate and its Node", (long long)((kjoin_now_ms() - began) / 1000));
            if (j->cx->timeouts.tls_bootstrap_ms > 0)
                bootstrap_by = kjoin_now_ms() + j->cx->timeouts.tls_bootstrap_ms;
        }
        if (healthy && registered(j, &p, why, sizeof(why)))
            break;
        char gone[200];
        kjoin_node__words words = {0};
        /* (whether it is gone: asked of systemd or its log at the slow pace, however fast the rest is followed) */
        bool ask = kjoin_now_ms() - asked >= POLL_MS;
        if (ask)
            asked = kjoin_now_ms();
        /* A node-bound token's CSR denied (kjoin approver's): the join ends now, with why (before the
         * kubelet's exit over it is read as a kubelet gone). */
        if (!healthy && ask && (j->bound || !j->binding_known) && (rc = bound_denial(j, &denial, err)))
            break;
        if (!healthy && ask && (j->result.systemd ? kubelet_gone(&base, gone, sizeof(gone))
                                                  : kjoin_node__log_gone(&lg, kjoin_now_ms(), gone, sizeof(gone), &words))) {
            if (j->result.systemd)
                kjoin_node__journal_words(&words);
            rc = kjoin_err_set(err, KJOIN_E_TIMEOUT, "%s (the way out: fix it, then the same join again, or kjoin "
                               "reset)%s", gone, words.said);
            keep_words(j, &words);
            break;
        }
        char limit[32];
        if (!healthy && health_by && kjoin_now_ms() >= health_by) {
            kjoin_duration_format(j->cx->timeouts.kubelet_health_ms, limit, sizeof(limit));
            rc = kjoin_err_set(err, KJOIN_E_TIMEOUT, "the kubelet was not healthy within timeouts.kubeletHealthCheck "
                               "(%s; the way out: the same join again, or kjoin reset): %s", limit, why);
            break;
        }
        if (healthy && bootstrap_by && kjoin_now_ms() >= bootstrap_by) {
            kjoin_duration_format(j->cx->timeouts.tls_bootstrap_ms, limit, sizeof(limit));
            rc = kjoin_err_set(err, KJOIN_E_TIMEOUT, "the kubelet's TLS bootstrap did not end within "
                               "timeouts.tlsBootstrap (%s; the way out: the same join again, which goes on from here, "
                               "or kjoin reset): %s", limit, why);
            break;
        }
        if (left_ms(j) <= 0) {
            if (j->result.systemd)
                kjoin_node__journal_words(&words);
            else
                kjoin_node__log_words(&lg, &words);
            rc = kjoin_err_set(err, KJOIN_E_TIMEOUT, "the kubelet did not bootstrap by the deadline (the way out: the "
                               "same join again, which goes on from here, or kjoin reset): %s%s", why, words.said);
            keep_words(j, &words);
            break;
        }
        /* A wait an operator can follow: what is awaited, and the time left. */
        if (kjoin_now_ms() - said >= PROGRESS_MS) {
            said = kjoin_now_ms();
            logf_(j, 0, "[kubelet-wait-bootstrap] Still waiting (%lld s, %lld s left): %s%s",
                  (long long)((said - began) / 1000), (long long)(left_ms(j) / 1000), why,
                  strstr(why, "CSR approved") ? " (kubectl get csr on the control plane; kubectl certificate approve "
                                                "NAME approves one by hand)" : "");
        }
        int64_t pause = exists(p.kubelet_kubeconfig) ? FOLLOW_MS : POLL_MS;
        identity_watch_wait(&watch, left_ms(j) < pause ? left_ms(j) : pause);
    }
    identity_watch_stop(&watch);
    kjoin_kubeapi_free(denial.api);
    if (rc)
        return rc;
    j->result.node_registered = true;
    step(j, "node-registered");
    kjoin_node__crash_point("registered");
    logf_(j, 0, "[kubelet-wait-bootstrap] The kubelet has its client certificate; Node %s is registered", j->cx->name.name);
    remove_bootstrap_kubeconfig(j, &p);
    return annotate_cri_socket(j, &p, err);
}

void kjoin_node_join_release(kjoin_node_join *j)
{
    if (!j)
        return;
    free(j->config_yaml);
    free(j->flags_env);
    free(j->instance_yaml);
    for (int i = 0; i < 2; i++) {
        kjoin_free_wiped(j->proxy_dropin[i], j->proxy_dropin[i] ? strlen(j->proxy_dropin[i]) : 0);
        j->proxy_dropin[i] = NULL;
    }
    j->config_yaml = j->flags_env = j->instance_yaml = NULL;
    j->checked = false;
}
