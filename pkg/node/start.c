/* kubelet-start and kubelet-wait-bootstrap: with the identity discovery
 * established, the cluster's kubelet configuration and the node's flags are
 * written (after every cluster check passed), the kubelet (re)started, and
 * the wait runs until the kubelet has its own identity and its Node. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include <json-c/json.h>

#include <kjoin/kubeapi.h>
#include <kjoin/node.h>

#include "internal.h"

#define POLL_MS 500

typedef struct run {
    const kjoin_kubelet_start_spec *spec;
    kjoin_kubelet_start_result *out;
    kjoin_node__resolved p;
    kjoin_kubelet_config kubelet;
    kjoin_preflight_report scratch; /* the runtime and kubelet, when preflight did not run */
    kjoin_preflight_report *report;
    int64_t t0;
} run;

#define logf_(r, level, ...) kjoin_logf((r)->spec->log, (r)->spec->log_ctx, level, __VA_ARGS__)

static void step(run *r, const char *name)
{
    int64_t now = kjoin_now_ms();
    if (r->out->n_steps < KJOIN_NODE_MAX_STEPS)
        r->out->steps[r->out->n_steps++] = (kjoin_node_step){name, now - r->t0};
    r->t0 = now;
}

static int64_t left_ms(const run *r)
{
    return r->spec->deadline_ms - kjoin_now_ms();
}

/* A client of the API server with the credentials of a kubeconfig (its text,
 * or the file at path), within the join's deadline. */
static kjoin_code client(const run *r, const char *text, size_t len, const char *path, kjoin_kubeapi **api,
                         kjoin_err *err)
{
    kjoin_kubeapi_config cfg;
    kjoin_code rc = text ? kjoin_kubeapi_config_parse(text, len, NULL, NULL, &cfg, err)
                         : kjoin_kubeapi_config_load(path, NULL, &cfg, err);
    if (rc)
        return rc;
    kjoin_kubeapi_options o = {.timeout_ms = left_ms(r) > 0 ? left_ms(r) : 1, .audit_id = r->spec->audit_id,
                               .log = r->spec->log, .log_ctx = r->spec->log_ctx};
    if ((rc = kjoin_kubeapi_new(&cfg, &o, api, err)))
        kjoin_kubeapi_config_release(&cfg);
    return rc;
}

/* GET path as JSON into *out; a NotFound is success with *out NULL. */
static kjoin_code get_json(kjoin_kubeapi *api, const char *path, const char *what, json_object **out, kjoin_err *err)
{
    kjoin_kubeapi_response resp;
    kjoin_code rc = kjoin_kubeapi_request(api, "GET", path, NULL, &resp, err);
    *out = NULL;
    if (rc)
        return rc;
    if (resp.status == 404 && strcmp(resp.reason, "NotFound") == 0) {
        kjoin_kubeapi_response_release(&resp);
        return KJOIN_OK;
    }
    if (!(rc = kjoin_kubeapi_check(&resp, what, err)) && !(*out = json_tokener_parse(resp.body)))
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "%s: the answer is not JSON", what);
    kjoin_kubeapi_response_release(&resp);
    return rc;
}

static bool node_ready(json_object *node)
{
    json_object *status, *conds;
    if (!json_object_object_get_ex(node, "status", &status) || !json_object_object_get_ex(status, "conditions", &conds) ||
        !json_object_is_type(conds, json_type_array))
        return false;
    for (size_t i = 0; i < json_object_array_length(conds); i++) {
        json_object *c = json_object_array_get_idx(conds, i), *t, *s;
        if (json_object_object_get_ex(c, "type", &t) && json_object_object_get_ex(c, "status", &s) &&
            !strcmp(json_object_get_string(t), "Ready") && !strcmp(json_object_get_string(s), "True"))
            return true;
    }
    return false;
}

/* kubeadm's ClusterConfiguration (kube-system/kubeadm-config), which
 * kubeadm join reads too: checked when the cluster has one, its release
 * recorded, and the skew rule's control-plane version when GET /version
 * told none. A cluster kubeadm did not make has none: that is fine. */
static kjoin_code read_cluster_configuration(run *r, kjoin_kubeapi *api, kjoin_err *err)
{
    json_object *cm = NULL, *data, *text;
    int minor = 0;
    kjoin_err in;
    kjoin_code rc = get_json(api, "/api/v1/namespaces/kube-system/configmaps/kubeadm-config",
                             "get configmap kube-system/kubeadm-config", &cm, err);
    if (rc || !cm) {
        if (!rc)
            logf_(r, 1, "[kubelet-start] No kubeadm ClusterConfiguration in the cluster (not made by kubeadm)");
        return rc;
    }
    if (!json_object_object_get_ex(cm, "data", &data) || !json_object_object_get_ex(data, "ClusterConfiguration", &text) ||
        !json_object_is_type(text, json_type_string))
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "configmap kube-system/kubeadm-config has no \"ClusterConfiguration\" key");
    else if ((rc = kjoin_cluster_configuration_parse(json_object_get_string(text),
                                                     (size_t)json_object_get_string_len(text), r->out->kubernetes_version,
                                                     sizeof(r->out->kubernetes_version), &minor, &in)))
        kjoin_err_set(err, rc, "configmap kube-system/kubeadm-config: %s", in.msg);
    else if (!r->out->server_minor)
        r->out->server_minor = minor;
    json_object_put(cm);
    return rc;
}

/* The cluster's side, read with the bootstrap identity: the release, no
 * Ready Node of this name, the kubelet configuration. *config_text is the
 * ConfigMap's "kubelet" value. */
static kjoin_code read_cluster(run *r, kjoin_kubeapi *api, char **config_text, kjoin_err *err)
{
    char path[512], what[320];
    json_object *node = NULL, *cm = NULL, *data, *kubelet;
    kjoin_err in;
    kjoin_code rc;
    r->out->server_minor = kjoin_kubeapi_server_minor(api);
    snprintf(path, sizeof(path), "/api/v1/nodes/%s", r->out->node_name);
    snprintf(what, sizeof(what), "get node %s", r->out->node_name);
    if ((rc = get_json(api, path, what, &node, err)))
        return rc;
    bool ready = node && node_ready(node);
    json_object_put(node);
    if (ready)
        return kjoin_err_set(err, KJOIN_E_USAGE, "a Node named %s is Ready in the cluster already: delete it "
                             "(kubectl delete node %s, as an admin) or join under another node name",
                             r->out->node_name, r->out->node_name);
    /* kubeadm dropped the ConfigMap's version suffix in 1.24. */
    int m = r->out->server_minor;
    if (m && m < 24)
        snprintf(r->out->config_map, sizeof(r->out->config_map), "kubelet-config-1.%d", m);
    else
        snprintf(r->out->config_map, sizeof(r->out->config_map), "kubelet-config");
    snprintf(path, sizeof(path), "/api/v1/namespaces/kube-system/configmaps/%s", r->out->config_map);
    snprintf(what, sizeof(what), "get configmap kube-system/%s", r->out->config_map);
    if ((rc = get_json(api, path, what, &cm, err)))
        return rc;
    if (!cm)
        return kjoin_err_set(err, KJOIN_E_API, "%s: NotFound: the cluster has no kubelet configuration for this "
                             "release (kubeadm init phase upload-config kubelet makes it)", what);
    if (!json_object_object_get_ex(cm, "data", &data) || !json_object_object_get_ex(data, "kubelet", &kubelet) ||
        !json_object_is_type(kubelet, json_type_string))
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "configmap kube-system/%s has no \"kubelet\" key", r->out->config_map);
    else if ((rc = kjoin_kubelet_config_parse(json_object_get_string(kubelet),
                                              (size_t)json_object_get_string_len(kubelet), &r->kubelet, &in)))
        kjoin_err_set(err, rc, "configmap kube-system/%s: %s", r->out->config_map, in.msg);
    else if (!(*config_text = strdup(json_object_get_string(kubelet))))
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    json_object_put(cm);
    return rc ? rc : read_cluster_configuration(r, api, err);
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static void parent_of(const char *path, char *out, size_t cap)
{
    snprintf(out, cap, "%s", path);
    char *slash = strrchr(out, '/');
    if (slash && slash != out)
        *slash = '\0';
}

/* The record reset reads, written before the files: the directories the join
 * creates and what the kubelet directory held before, as they were before the
 * first join (kept from an earlier record), and each file with its digest. */
static kjoin_code write_record(run *r, const char *const *paths, const char *const *data, const size_t *lens,
                               size_t n, kjoin_err *err)
{
    kjoin_node_state *old = calloc(1, sizeof(*old));
    kjoin_err ignore;
    bool have_old = false;
    if (!old)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    if (kjoin_node__read_record(&r->p, &r->spec->paths, old, &have_old, &ignore))
        have_old = false; /* a record not kjoin's is replaced, never trusted */
    json_object *o = json_object_new_object(), *files = json_object_new_array(), *dirs = json_object_new_array(),
                *before = json_object_new_array();
    json_object_object_add(o, "kind", json_object_new_string("KjoinJoinRecord"));
    json_object_object_add(o, "joinID", json_object_new_string(r->spec->join_id ? r->spec->join_id : ""));
    kjoin_kubeapi_config cfg;
    json_object_object_add(o, "server", json_object_new_string(""));
    if (!kjoin_kubeapi_config_parse(r->spec->bootstrap_kubeconfig, r->spec->bootstrap_len, NULL, NULL, &cfg, &ignore)) {
        json_object_object_add(o, "server", json_object_new_string(cfg.server));
        kjoin_kubeapi_config_release(&cfg);
    }
    json_object_object_add(o, "nodeName", json_object_new_string(r->out->node_name));
    for (size_t i = 0; i < n; i++) {
        unsigned char sum[32];
        char hex[65];
        json_object *f = json_object_new_object();
        kjoin_sha256(data[i], lens[i], sum, NULL);
        json_object_object_add(f, "path", json_object_new_string(paths[i]));
        json_object_object_add(f, "sha256", json_object_new_string(kjoin_hex(sum, 32, hex)));
        json_object_array_add(files, f);
    }
    for (size_t i = 0; have_old && i < old->n_files; i++) {
        bool replaced = false;
        for (size_t j = 0; j < n && !replaced; j++)
            replaced = !strcmp(old->files[i].path, paths[j]);
        json_object *f = json_object_new_object();
        json_object_object_add(f, "path", json_object_new_string(old->files[i].path));
        json_object_object_add(f, "sha256", json_object_new_string(old->files[i].sha256));
        if (replaced)
            json_object_put(f);
        else
            json_object_array_add(files, f);
    }
    if (have_old) {
        for (size_t i = 0; i < old->n_dirs; i++)
            json_object_array_add(dirs, json_object_new_string(old->dirs[i]));
        for (size_t i = 0; i < old->n_kubelet_entries; i++)
            json_object_array_add(before, json_object_new_string(old->kubelet_entries[i]));
    } else {
        char ca_dir[4096];
        parent_of(r->p.ca_cert_path, ca_dir, sizeof(ca_dir));
        const char *candidates[] = {r->p.kubernetes_dir, ca_dir, r->p.kubelet_dir};
        for (size_t i = 0; i < 3; i++) {
            bool dup = false;
            for (size_t j = 0; j < i; j++)
                dup |= !strcmp(candidates[i], candidates[j]);
            if (!dup && !exists(candidates[i]))
                json_object_array_add(dirs, json_object_new_string(candidates[i]));
        }
        DIR *d = opendir(r->p.kubelet_dir);
        struct dirent *e;
        while (d && (e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
                json_object_array_length(before) < KJOIN_NODE_STATE_MAX_ENTRIES)
                json_object_array_add(before, json_object_new_string(e->d_name));
        if (d)
            closedir(d);
    }
    free(old);
    json_object_object_add(o, "files", files);
    json_object_object_add(o, "createdDirs", dirs);
    json_object_object_add(o, "kubeletDirBefore", before);
    const char *json = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    kjoin_code rc = kjoin_file_write_mode(r->p.state, json, strlen(json), 0600, true, NULL, err);
    json_object_put(o);
    return rc;
}

static void add_file(run *r, const char *path, unsigned mode)
{
    if (r->out->n_files < KJOIN_NODE_MAX_FILES) {
        kjoin_node_file *f = &r->out->files[r->out->n_files++];
        snprintf(f->path, sizeof(f->path), "%s", path);
        f->mode = mode;
    }
}

static kjoin_code start_phase(run *r, kjoin_err *err)
{
    const kjoin_kubelet_start_spec *s = r->spec;
    kjoin_kubeapi *api = NULL;
    char *config = NULL, *flags = NULL;
    kjoin_err in;
    if (!s->bootstrap_kubeconfig)
        return kjoin_err_set(err, KJOIN_E_USAGE, "kubelet-start needs the bootstrap kubeconfig discovery makes");
    if (!r->report->kubelet[0] || !r->report->cri_socket[0]) {
        kjoin_preflight_spec quiet = *s->preflight;
        quiet.ignore = "all";
        kjoin_preflight_node(&quiet, &r->scratch, NULL);
        r->report = &r->scratch;
    }
    if (!r->report->kubelet[0])
        return kjoin_err_set(err, KJOIN_E_USAGE, "no kubelet binary: %s",
                             r->report->n ? r->report->items[0].message : "not found");
    if (!r->report->cri_socket[0])
        return kjoin_err_set(err, KJOIN_E_USAGE, "no container runtime socket found; name one");
    kjoin_code rc = client(r, s->bootstrap_kubeconfig, s->bootstrap_len, NULL, &api, err);
    if (!rc)
        rc = read_cluster(r, api, &config, err);
    kjoin_kubeapi_free(api);
    if (!rc && (s->phases & KJOIN_PHASE_PREFLIGHT))
        rc = kjoin_preflight_cluster(s->preflight, r->out->server_minor, r->kubelet.fail_swap_on, r->report, err);
    kjoin_kubelet_flags f = {.cri_socket = r->report->cri_socket, .kubelet_minor = r->report->kubelet_minor,
                             .node_name = r->out->node_name, .taints = s->taints, .n_taints = s->n_taints,
                             .extra_args = s->extra_args, .n_extra_args = s->n_extra_args};
    if (!rc && (rc = kjoin_kubelet_flags_env(&f, &flags, &in)))
        kjoin_err_set(err, rc, "%s", in.msg);
    step(r, "cluster-checks");
    if (!rc)
        logf_(r, 0, "[kubelet-start] Cluster v1.%d, kubelet configuration from configmap kube-system/%s, runtime %s",
              r->out->server_minor, r->out->config_map, r->report->cri_socket);
    r->out->systemd = kjoin_node__systemd(s->systemd_dir);
    /* kubeadm's order: the kubelet does not read half a configuration. */
    if (!rc && r->out->systemd && kjoin_node__systemctl("stop", 30000, &in))
        logf_(r, KJOIN_LOG_WARNING, "[kubelet-start] %s", in.msg);
    bool write_ca = !exists(r->p.ca_cert_path);
    const char *paths[] = {r->p.bootstrap_kubeconfig, r->p.config_yaml, r->p.flags_env, r->p.ca_cert_path};
    const char *data[] = {s->bootstrap_kubeconfig, config, flags, s->ca_pem};
    size_t lens[] = {s->bootstrap_len, config ? strlen(config) : 0, flags ? strlen(flags) : 0, s->ca_len};
    const unsigned modes[] = {0600, 0644, 0644, 0644};
    size_t n = write_ca && s->ca_pem ? 4 : 3;
    if (!rc)
        rc = write_record(r, paths, data, lens, n, err);
    for (size_t i = 0; !rc && i < n; i++) {
        if (!(rc = kjoin_file_write_mode(paths[i], data[i], lens[i], modes[i], true, NULL, err))) {
            add_file(r, paths[i], modes[i]);
            logf_(r, 0, "[kubelet-start] Wrote %s (%04o)", paths[i], modes[i]);
        }
    }
    free(config);
    free(flags);
    step(r, "write");
    if (!rc && s->before_start)
        rc = s->before_start(s->before_start_ctx, err);
    if (rc)
        return rc;
    if (r->out->systemd) {
        logf_(r, 0, "[kubelet-start] Starting the kubelet (systemctl restart kubelet)");
        if (kjoin_node__systemctl("restart", 60000, &in))
            rc = kjoin_err_set(err, KJOIN_E_OTHER, "the kubelet did not start: %s (is kubelet.service installed?)",
                               in.msg);
    } else {
        /* kubeadm's drop-in (10-kubeadm.conf) runs the kubelet this way. */
        if (snprintf(r->out->start_command, sizeof(r->out->start_command),
                     "%s --bootstrap-kubeconfig=%s --kubeconfig=%s --config=%s $(. %s; echo $KUBELET_KUBEADM_ARGS)",
                     r->report->kubelet, r->p.bootstrap_kubeconfig, r->p.kubelet_kubeconfig, r->p.config_yaml,
                     r->p.flags_env) >= (int)sizeof(r->out->start_command))
            return kjoin_err_set(err, KJOIN_E_USAGE, "the kubelet's paths are too long");
        logf_(r, 0, "[kubelet-start] systemd does not run this machine: start the kubelet with: %s",
              r->out->start_command);
    }
    step(r, "start");
    return rc;
}

/* kubelet.conf usable, and the Node there, seen with the node's own
 * credentials. */
static bool registered(run *r, char *why, size_t cap)
{
    kjoin_kubeapi *api = NULL;
    kjoin_err e;
    json_object *node = NULL;
    char path[320];
    if (!exists(r->p.kubelet_kubeconfig)) {
        (void)!snprintf(why, cap, "the kubelet has not written %.300s yet (its TLS bootstrap: is its CSR approved?)",
                 r->p.kubelet_kubeconfig);
        return false;
    }
    if (client(r, NULL, 0, r->p.kubelet_kubeconfig, &api, &e)) {
        (void)!snprintf(why, cap, "%.300s is not usable yet: %.300s", r->p.kubelet_kubeconfig, e.msg);
        return false;
    }
    snprintf(path, sizeof(path), "/api/v1/nodes/%s", r->out->node_name);
    kjoin_code rc = get_json(api, path, "get node", &node, &e);
    kjoin_kubeapi_free(api);
    bool ok = !rc && node;
    json_object_put(node);
    if (!ok)
        (void)!snprintf(why, cap, "the Node %s is not registered yet%s%.300s", r->out->node_name, rc ? ": " : "",
                        rc ? e.msg : "");
    return ok;
}

/* The kubelet's own last words, where systemd keeps them. */
static void journal_tail(const run *r, char *out, size_t cap)
{
    char prog[4096], *text = NULL;
    out[0] = '\0';
    if (!r->out->systemd || kjoin_node__find_program("journalctl", prog, sizeof(prog), NULL))
        return;
    const char *argv[] = {prog, "-u", "kubelet", "-n", "1", "-o", "cat", "--no-pager", NULL};
    if (!kjoin_node__run(argv, 10000, &text, NULL) && text[strspn(text, " \t\r\n")])
        snprintf(out, cap, "; the kubelet's last log line: %s", text);
    free(text);
    kjoin_printable(out, cap, out, false);
}

static kjoin_code wait_phase(run *r, kjoin_err *err)
{
    char why[1024] = "";
    bool healthy = false;
    logf_(r, 0, "[kubelet-wait-bootstrap] Waiting for the kubelet: healthz, its TLS bootstrap, its Node");
    for (;;) {
        if (!healthy && (healthy = kjoin_node__healthz(&r->kubelet, why, sizeof(why))))
            step(r, "kubelet-healthz");
        if (healthy && registered(r, why, sizeof(why)))
            break;
        if (left_ms(r) <= 0) {
            char journal[400];
            journal_tail(r, journal, sizeof(journal));
            return kjoin_err_set(err, KJOIN_E_TIMEOUT, "the kubelet did not bootstrap by the deadline: %s%s", why,
                                 journal);
        }
        kjoin_sleep_ms(left_ms(r) < POLL_MS ? left_ms(r) : POLL_MS);
    }
    r->out->node_registered = true;
    step(r, "node-registered");
    logf_(r, 0, "[kubelet-wait-bootstrap] The kubelet has its client certificate; Node %s is registered",
          r->out->node_name);
    /* The token has done its job: it does not stay on disk (kubeadm removes
     * the file too). After kubelet-start, only a file still holding what it
     * wrote; through its checked directory, never through a symlink. */
    char *text = NULL;
    size_t len = 0;
    bool missing = false;
    const char *name;
    kjoin_safedir d;
    kjoin_err e;
    if (kjoin_node__open_parent(r->p.bootstrap_kubeconfig, &d, &name, &e))
        return KJOIN_OK;
    if (!kjoin_safedir_read(&d, name, 1 << 20, true, &text, &len, &missing, &e) &&
        (!r->spec->bootstrap_kubeconfig ||
         (len == r->spec->bootstrap_len && !memcmp(text, r->spec->bootstrap_kubeconfig, len))) &&
        !kjoin_safedir_unlink(&d, name, &e)) {
        r->out->bootstrap_removed = true;
        logf_(r, 0, "[kubelet-wait-bootstrap] Removed %s: the bootstrap token is no longer on this node",
              r->p.bootstrap_kubeconfig);
    }
    kjoin_free_wiped(text, len);
    kjoin_safedir_close(&d);
    return KJOIN_OK;
}

kjoin_code kjoin_kubelet_start(const kjoin_kubelet_start_spec *spec, kjoin_kubelet_start_result *out, kjoin_err *err)
{
    run r = {.spec = spec, .out = out, .report = spec->report, .t0 = kjoin_now_ms()};
    memset(out, 0, sizeof(*out));
    kjoin_node__resolve(&spec->paths, &r.p);
    r.kubelet = (kjoin_kubelet_config)KJOIN_KUBELET_CONFIG_DEFAULTS;
    if (spec->node_name)
        snprintf(out->node_name, sizeof(out->node_name), "%s", spec->node_name);
    else if (gethostname(out->node_name, sizeof(out->node_name) - 1) == 0)
        for (char *c = out->node_name; *c; c++)
            *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    kjoin_code rc = KJOIN_OK;
    if (spec->phases & KJOIN_PHASE_KUBELET_START)
        rc = start_phase(&r, err);
    else {
        kjoin_node__kubelet_config(&r.p, &r.kubelet);
    }
    if (!rc && (spec->phases & KJOIN_PHASE_KUBELET_WAIT_BOOTSTRAP))
        rc = wait_phase(&r, err);
    return rc;
}
