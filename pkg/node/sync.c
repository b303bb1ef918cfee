/* kjoin sync: a joined node's kubelet files made again as kubelet-start
 * would write them now, compared by meaning, written when asked, and the
 * outcome put on the node's own Node for the fleet to see. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <json-c/json.h>
#include <json-c/printbuf.h>
#include <stdarg.h>

#include <kjoin/kubeapi.h>
#include <kjoin/private/cluster.h>
#include <kjoin/private/kubeapi.h>
#include <kjoin/private/node.h>
#include <kjoin/private/patch.h>
#include <kjoin/private/release.h>
#include <kjoin/private/safedir.h>
#include <kjoin/private/util.h>

#include "../record/record.h"
#include "../yamldoc/yamldoc.h"
#include "internal.h"

#define logf_(s, level, ...) kjoin_logf((s)->log, (s)->log_ctx, level, __VA_ARGS__)
#define HEALTH_POLL_MS 500

const char *kjoin_sync_state_name(kjoin_sync_state s)
{
    return s == KJOIN_SYNC_DRIFTED ? "drifted" : s == KJOIN_SYNC_RESTART_NEEDED ? "restart-needed" : "in-sync";
}

/* One file sync keeps: where, its kind (its mode), what it should hold,
 * and both sides by meaning. */
typedef struct sync_target {
    kjoin_node_file_kind kind;
    const char *path;
    char *want;                 /* what kubelet-start would write now */
    json_object *want_json, *have_json;
    bool have_ok;               /* the node's parsed */
} sync_target;

/* ---- the flags file by meaning ---- */

/* KUBELET_KUBEADM_ARGS="--a=b --c" as {"--a": "b", "--c": ""}; NULL when
 * text is not one such line. Untrusted. */
json_object *kjoin_node__flags_json(const char *text, size_t len)
{
    const char *prefix = "KUBELET_KUBEADM_ARGS=\"";
    size_t n = strlen(prefix);
    if (len < n + 1 || strncmp(text, prefix, n) || memchr(text, '\0', len))
        return NULL;
    const char *end = memchr(text + n, '"', len - n);
    if (!end || (size_t)(end - text) + 1 < len - (text[len - 1] == '\n' ? 1 : 0))
        return NULL;
    json_object *o = json_object_new_object();
    for (const char *p = text + n; p < end;) {
        while (p < end && *p == ' ')
            p++;
        const char *word = p;
        while (p < end && *p != ' ')
            p++;
        if (p == word)
            break;
        const char *eq = memchr(word, '=', (size_t)(p - word));
        size_t name_len = eq ? (size_t)(eq - word) : (size_t)(p - word);
        char *name = strndup(word, name_len);
        if (!name)
            break;
        json_object_object_add(o, name, eq ? json_object_new_string_len(eq + 1, (int)(p - eq - 1))
                                            : json_object_new_string(""));
        free(name);
    }
    return o;
}

/* ---- comparing by meaning ---- */

static int by_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* o's keys, sorted (newly-allocated; *n how many). */
static const char **sorted_keys(json_object *o, size_t *n)
{
    *n = 0;
    const char **keys = malloc(sizeof(*keys) * ((size_t)json_object_object_length(o) + 1));
    if (!keys)
        return NULL;
    json_object_object_foreach(o, k, v) {
        (void)v;
        keys[(*n)++] = k;
    }
    qsort(keys, *n, sizeof(*keys), by_key);
    return keys;
}

/* o as JSON with every object's keys sorted, appended to buf: the same
 * configuration always the same bytes, whoever formatted its YAML. */
static void canonical(json_object *o, struct printbuf *buf)
{
    size_t n;
    if (json_object_is_type(o, json_type_object)) {
        const char **keys = sorted_keys(o, &n);
        printbuf_memappend(buf, "{", 1);
        for (size_t i = 0; keys && i < n; i++) {
            json_object *k = json_object_new_string(keys[i]);
            const char *ks = json_object_to_json_string_ext(k, JSON_C_TO_STRING_PLAIN);
            printbuf_memappend(buf, i ? "," : "", i ? 1 : 0);
            printbuf_memappend(buf, ks, strlen(ks));
            printbuf_memappend(buf, ":", 1);
            json_object_put(k);
            canonical(json_object_object_get(o, keys[i]), buf);
        }
        free(keys);
        printbuf_memappend(buf, "}", 1);
    } else if (json_object_is_type(o, json_type_array)) {
        printbuf_memappend(buf, "[", 1);
        for (size_t i = 0; i < json_object_array_length(o); i++) {
            printbuf_memappend(buf, i ? "," : "", i ? 1 : 0);
            canonical(json_object_array_get_idx(o, i), buf);
        }
        printbuf_memappend(buf, "]", 1);
    } else {
        const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        printbuf_memappend(buf, s, strlen(s));
    }
}

static bool same(json_object *a, json_object *b)
{
    struct printbuf *x = printbuf_new(), *y = printbuf_new();
    bool eq = false;
    if (x && y) {
        canonical(a, x), canonical(b, y);
        eq = x->bpos == y->bpos && !memcmp(x->buf, y->buf, (size_t)x->bpos);
    }
    printbuf_free(x), printbuf_free(y);
    return eq;
}

/* v as short JSON for a change line. */
static void shown(json_object *v, char *out, size_t cap)
{
    struct printbuf *b = printbuf_new();
    if (b)
        canonical(v, b);
    snprintf(out, cap, "%.*s%s", !b ? 0 : b->bpos > 120 ? 117 : b->bpos, b ? b->buf : "", b && b->bpos > 120 ? "..." : "");
    printbuf_free(b);
}

static void change(kjoin_sync_file *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void change(kjoin_sync_file *f, const char *fmt, ...)
{
    if (f->n_changes >= KJOIN_SYNC_MAX_CHANGES) {
        f->more_changes = true;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->changes[f->n_changes], sizeof(f->changes[0]), fmt, ap);
    va_end(ap);
    char raw[sizeof(f->changes[0])];
    memcpy(raw, f->changes[f->n_changes], sizeof(raw));
    kjoin_printable(f->changes[f->n_changes++], sizeof(raw), raw, false);
}

/* What differs between have and want, field by field (objects walked by
 * key; anything else compared whole), each under its dotted path. */
void kjoin_node__sync_diff(json_object *have, json_object *want, const char *path, kjoin_sync_file *f)
{
    char a[128], b[128], sub[300];
    if (json_object_is_type(have, json_type_object) && json_object_is_type(want, json_type_object)) {
        size_t n;
        const char **keys = sorted_keys(want, &n);
        for (size_t i = 0; keys && i < n; i++) {
            snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", keys[i]);
            json_object *h;
            if (!json_object_object_get_ex(have, keys[i], &h)) {
                shown(json_object_object_get(want, keys[i]), b, sizeof(b));
                change(f, "+ %s: %s", sub, b);
            } else
                kjoin_node__sync_diff(h, json_object_object_get(want, keys[i]), sub, f);
        }
        free(keys);
        keys = sorted_keys(have, &n);
        for (size_t i = 0; keys && i < n; i++)
            if (!json_object_object_get_ex(want, keys[i], NULL)) {
                snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", keys[i]);
                shown(json_object_object_get(have, keys[i]), a, sizeof(a));
                change(f, "- %s: %s", sub, a);
            }
        free(keys);
        return;
    }
    if (same(have, want))
        return;
    shown(have, a, sizeof(a)), shown(want, b, sizeof(b));
    change(f, "%s: %s -> %s", *path ? path : "(the whole file)", a, b);
}

/* ---- the node's side ---- */

/* The node's file at t->path by meaning into t->have_json (a missing or
 * unreadable file: none). */
static void read_have(sync_target *t, kjoin_sync_file *f)
{
    char *text = NULL;
    size_t len = 0;
    bool missing = false;
    kjoin_err e;
    if (kjoin_safedir_read_path(t->path, false, &text, &len, &missing, &e)) {
        f->missing = missing;
        if (!missing)
            change(f, "(unreadable: %.250s)", e.msg);
        return;
    }
    if (t->kind == KJOIN_NODE_FILE_FLAGS_ENV)
        t->have_json = kjoin_node__flags_json(text, len);
    else if (kjoin_yaml__load_json(text, len, KJOIN_E_USAGE, &t->have_json, &e))
        t->have_json = NULL;
    t->have_ok = t->have_json != NULL;
    if (!t->have_ok)
        change(f, "(not a configuration kubelet-start writes: it is replaced whole)");
    free(text);
}

/* When the kubelet (systemd's kubelet.service) started, in ms of the wall
 * clock; -1 unknown or not running. */
static int64_t kubelet_started(const kjoin_sync_spec *s)
{
    kjoin_node__unit u;
    if (!kjoin_node__systemd(s->systemd_dir) || !kjoin_node__kubelet_unit(&u) || u.main_pid <= 0)
        return -1;
    return kjoin_node__process_start_ms(s->proc_dir, u.main_pid);
}

static int64_t mtime_ms(const char *path)
{
    struct stat st;
    return lstat(path, &st) ? -1 : (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
}

/* ---- what kubelet-start would write now ---- */

typedef struct sync_run {
    const kjoin_sync_spec *spec;
    kjoin_node__resolved p;
    kjoin_node_state *st;
    json_object *file;                 /* the record file as read (both parts), written back with sync's changes */
    kjoin_kubeapi *api;
    int64_t deadline;
    kjoin_sync_result *out;
    size_t n;
    sync_target t[KJOIN_SYNC_MAX_FILES];
} sync_run;

static kjoin_code client(sync_run *r, kjoin_err *err)
{
    kjoin_kubeapi_config cfg;
    kjoin_err why;
    kjoin_code rc = kjoin_kubeapi_config_load(r->p.kubelet_kubeconfig, NULL, &cfg, &why);
    if (rc)
        return kjoin_err_set(err, rc, "the node's credentials: %s", why.msg);
    kjoin_kubeapi_options o = KJOIN_KUBEAPI_OPTIONS_INIT;
    o.timeout_ms = r->deadline - kjoin_now_ms();
    o.audit_id = r->spec->audit_id;
    o.log = r->spec->log, o.log_ctx = r->spec->log_ctx;
    if ((rc = kjoin_kubeapi_new(&cfg, &o, &r->api, err)))
        kjoin_kubeapi_config_release(&cfg);
    return rc;
}

static void add_target(sync_run *r, kjoin_node_file_kind kind, const char *path, char *want)
{
    sync_target *t = &r->t[r->n];
    kjoin_sync_file *f = &r->out->files[r->n++];
    r->out->n_files = r->n;
    *t = (sync_target){.kind = kind, .path = path, .want = want};
    snprintf(f->path, sizeof(f->path), "%s", path);
    kjoin_err e;
    if (kind == KJOIN_NODE_FILE_FLAGS_ENV)
        t->want_json = kjoin_node__flags_json(want, strlen(want));
    else if (kjoin_yaml__load_json(want, strlen(want), KJOIN_E_OTHER, &t->want_json, &e))
        t->want_json = NULL;
}

/* The kubelet's minor version, as kubelet-start asks its binary (0:
 * unknown, as there). */
static int kubelet_minor(const kjoin_sync_spec *s)
{
    char path[4096], version[64];
    int minor = 0;
    return kjoin_node__kubelet_version(s->kubelet, path, sizeof(path), version, sizeof(version), &minor, NULL) ? 0
                                                                                                               : minor;
}

static kjoin_code read_patches(const char *dir, kjoin_patchset **out, kjoin_err *err)
{
    kjoin_err why;
    kjoin_code rc = (*out = calloc(1, sizeof(**out))) ? kjoin_patches_read(dir, *out, &why)
                                                       : kjoin_err_set(&why, KJOIN_E_OTHER, "out of memory");
    return rc ? kjoin_err_set(err, rc, "the join's patches: %s", why.msg) : KJOIN_OK;
}

/* The flags file as the join would write it now: its recorded flags, the
 * runtime (cri: NULL when the release keeps it in instance-config.yaml)
 * and the release's pause image (NULL: none). */
static kjoin_code flags_of_record(const sync_run *r, const char *cri, const char *pause, char **out, kjoin_err *err)
{
    const kjoin_node_inputs *in = &r->st->inputs;
    const char *taints[KJOIN_NODE_INPUTS_MAX_ARGS], *args[KJOIN_NODE_INPUTS_MAX_ARGS];
    for (size_t i = 0; i < in->n_taints; i++)
        taints[i] = in->taints[i];
    for (size_t i = 0; i < in->n_extra_args; i++)
        args[i] = in->extra_args[i];
    kjoin_node_spec spec = {.taints = taints, .n_taints = in->n_taints, .extra_args = args,
                            .n_extra_args = in->n_extra_args};
    kjoin_node_name name = {.is_host_name = !in->hostname_override};
    snprintf(name.name, sizeof(name.name), "%s", r->st->node_name);
    return kjoin_kubelet_flags_env(&spec, &name, cri, r->out->kubeadm_minor, kubelet_minor(r->spec), pause,
                                   *in->node_ip ? in->node_ip : NULL, out, err);
}

static kjoin_code desired(sync_run *r, kjoin_err *err)
{
    kjoin_sync_result *out = r->out;
    const kjoin_node_inputs *in = &r->st->inputs;
    kjoin_cluster_configuration *cc = calloc(1, sizeof(*cc));
    kjoin_patchset *patches = NULL;
    json_object *cm = NULL;
    bool found = false;
    char cri[320], pause[400] = "";
    char *config = NULL, *instance = NULL, *flags = NULL;
    kjoin_code rc = cc ? kjoin_cluster_configuration_get(r->api, cc, &found, err)
                       : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    if (!rc && !found)
        rc = kjoin_err_set(err, KJOIN_E_API, "the cluster has no kubeadm ClusterConfiguration (kube-system/kubeadm-config): "
                                             "no kubelet configuration to keep this node to");
    if (!rc) {
        out->kubeadm_minor = cc->minor ? cc->minor : kjoin_kubeapi_server_minor(r->api);
        rc = kjoin_node__get_kubelet_config_map(r->api, out->kubeadm_minor, out->config_map, sizeof(out->config_map),
                                                &cm, err);
    }
    const char *kubelet = NULL;
    kjoin_kubelet_config checked;
    if (!rc && !cm)
        rc = kjoin_err_set(err, KJOIN_E_API, "get configmap kube-system/%s: NotFound", out->config_map);
    else if (!rc) /* as the join checks it */
        rc = kjoin_node__kubelet_config_of(cm, out->config_map, &kubelet, &checked, err);
    snprintf(cri, sizeof(cri), "%s", in->has ? in->cri_socket : "");
    if (!*cri)
        kjoin_reset_runtime(&r->spec->paths, cri, sizeof(cri));
    bool with_instance = !rc && kjoin_kubeadm_instance_config(out->kubeadm_minor, cc->node_local_cri_socket);
    if (!rc && *in->patches_dir)
        rc = read_patches(in->patches_dir, &patches, err);
    if (!rc && with_instance && !*cri)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "the join record names no container runtime, nor do the kubelet's files");
    if (!rc)
        rc = kjoin_kubelet_config_render(kubelet, strlen(kubelet), patches, with_instance ? cri : NULL, &config, err);
    if (!rc && with_instance)
        rc = kjoin_kubelet_instance_config(cri, &instance, err);
    if (!rc && in->has) {
        if (kjoin_release_of(out->kubeadm_minor)->pause_flag)
            kjoin_node__pause_image(out->kubeadm_minor, cc->image_repository, pause, sizeof(pause));
        rc = flags_of_record(r, with_instance ? NULL : cri, *pause ? pause : NULL, &flags, err);
    }
    out->flags_kept = !in->has;
    json_object_put(cm);
    if (patches)
        kjoin_patchset_release(patches);
    free(patches), free(cc);
    if (rc) {
        free(config), free(instance), free(flags);
        return rc;
    }
    add_target(r, KJOIN_NODE_FILE_KUBELET_CONFIG, r->p.config_yaml, config);
    if (instance)
        add_target(r, KJOIN_NODE_FILE_INSTANCE_CONFIG, r->p.instance_config, instance);
    if (flags)
        add_target(r, KJOIN_NODE_FILE_FLAGS_ENV, r->p.flags_env, flags);
    for (size_t i = 0; i < r->n; i++)
        if (!r->t[i].want_json)
            return kjoin_err_set(err, KJOIN_E_OTHER, "%s as kubelet-start would write it does not read back",
                                 r->t[i].path);
    return KJOIN_OK;
}

/* ---- the outcome ---- */

/* The node's config.yaml by meaning, as it is after the run, into
 * out->hash: the same on every node that runs the same configuration (the
 * flags file, which names the node, is not in it; the runtime is, as
 * containerRuntimeEndpoint where the release writes it). */
static void hash_node(sync_run *r)
{
    struct printbuf *b = printbuf_new();
    for (size_t i = 0; b && i < r->n; i++)
        if (r->t[i].kind == KJOIN_NODE_FILE_KUBELET_CONFIG)
            canonical(r->t[i].have_json, b);
    unsigned char sum[32];
    if (b && !kjoin_sha256(b->buf, (size_t)b->bpos, sum, NULL))
        kjoin_hex(sum, 32, r->out->hash);
    printbuf_free(b);
}

static const char *now_rfc3339(char at[32])
{
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || !strftime(at, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(at, 32, "unknown");
    return at;
}

/* The record says what sync wrote, before it is written: reset still
 * removes it (the join's files with their new digests), and when. */
static kjoin_code record(sync_run *r, kjoin_err *err)
{
    json_object *file = r->file;
    kjoin_code rc = file ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_USAGE, "the join record did not parse");
    kjoin_written *w = rc ? NULL : malloc(sizeof(*w));
    if (!rc && !w)
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    if (!rc)
        *w = r->st->written;
    for (size_t i = 0; !rc && i < r->n; i++) {
        unsigned char sum[32];
        char hex[65];
        if (r->out->files[i].differs) {
            kjoin_sha256(r->t[i].want, strlen(r->t[i].want), sum, NULL);
            rc = kjoin_written_add_file(w, r->t[i].path, kjoin_hex(sum, 32, hex), err);
        }
    }
    if (!rc) {
        char at[32];
        json_object *sync = json_object_new_object();
        json_object_object_add(sync, "at", json_object_new_string(now_rfc3339(at)));
        json_object_object_add(sync, "configMap", json_object_new_string(r->out->config_map));
        kjoin_record_written_emit(file, w);
        json_object_object_add(file, "kubeletSync", sync);
        bool removed;
        rc = kjoin_record_file_store(r->p.kubernetes_dir, file, &removed, err);
    }
    free(w);
    return rc;
}

static kjoin_code write_files(sync_run *r, kjoin_err *err)
{
    kjoin_code rc = record(r, err);
    for (size_t i = 0; !rc && i < r->n; i++) {
        kjoin_sync_file *f = &r->out->files[i];
        kjoin_write_result how;
        if (!f->differs)
            continue;
        if ((rc = kjoin_node_file_write(r->t[i].kind, r->t[i].path, r->t[i].want, strlen(r->t[i].want), true, &how,
                                        err)))
            break;
        f->written = r->out->written = true;
        logf_(r->spec, 0, "[sync] Wrote %s", r->t[i].path);
        json_object_put(r->t[i].have_json);
        r->t[i].have_json = json_object_get(r->t[i].want_json);
    }
    return rc;
}

static kjoin_code restart(sync_run *r, kjoin_err *err)
{
    kjoin_kubelet_config kc = KJOIN_KUBELET_CONFIG_DEFAULTS;
    char why[512] = "";
    kjoin_code rc = kjoin_node__systemctl("restart", r->deadline - kjoin_now_ms(), err);
    if (rc)
        return rc;
    kjoin_node__kubelet_config(&r->p, &kc);
    while (!kjoin_node__healthz(&kc, why, sizeof(why))) {
        if (kjoin_now_ms() + HEALTH_POLL_MS > r->deadline)
            return kjoin_err_set(err, KJOIN_E_TIMEOUT, "the kubelet did not answer after its restart: %s", why);
        kjoin_sleep_ms(HEALTH_POLL_MS);
    }
    r->out->restarted = true;
    logf_(r->spec, 0, "[sync] Restarted the kubelet; it is healthy");
    return KJOIN_OK;
}

/* The Node's labels: kjoin.io/kubelet-config (the state) and
 * kjoin.io/kubelet-config-hash (16 hex digits: nodes that show the same
 * run the same configuration); annotations: when it was checked, what
 * differs. */
static kjoin_code label(sync_run *r, kjoin_err *err)
{
    char hash[17], at[32], path[320], drift[1000] = "";
    snprintf(hash, sizeof(hash), "%.16s", r->out->hash);
    for (size_t i = 0; i < r->n; i++) {
        const kjoin_sync_file *f = &r->out->files[i];
        if (f->differs && !f->written) {
            size_t used = strlen(drift);
            const char *name = strrchr(f->path, '/');
            snprintf(drift + used, sizeof(drift) - used, "%s%s", used ? ", " : "", name ? name + 1 : f->path);
        }
    }
    json_object *body = json_object_new_object(), *meta = json_object_new_object(), *labels = json_object_new_object(),
                *ann = json_object_new_object();
    json_object_object_add(labels, "kjoin.io/kubelet-config", json_object_new_string(kjoin_sync_state_name(r->out->state)));
    json_object_object_add(labels, "kjoin.io/kubelet-config-hash", json_object_new_string(hash));
    json_object_object_add(ann, "kjoin.io/kubelet-config-checked", json_object_new_string(now_rfc3339(at)));
    json_object_object_add(ann, "kjoin.io/kubelet-config-drift", *drift ? json_object_new_string(drift) : NULL);
    json_object_object_add(meta, "labels", labels);
    json_object_object_add(meta, "annotations", ann);
    json_object_object_add(body, "metadata", meta);
    snprintf(path, sizeof(path), "/api/v1/nodes/%s", r->st->node_name);
    kjoin_kubeapi_response resp;
    kjoin_code rc = kjoin_kubeapi_request(r->api, "PATCH", path,
                                          json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN |
                                                                                   JSON_C_TO_STRING_NOSLASHESCAPE),
                                          &resp, err); /* (a merge patch) */
    if (!rc) {
        rc = kjoin_kubeapi_check(&resp, "label the Node with its kubelet configuration's state", err);
        kjoin_kubeapi_response_release(&resp);
    }
    json_object_put(body);
    r->out->labeled = !rc;
    if (!rc)
        logf_(r->spec, 1, "[sync] Labeled Node %s kjoin.io/kubelet-config=%s, kjoin.io/kubelet-config-hash=%s",
              r->st->node_name, kjoin_sync_state_name(r->out->state), hash);
    return rc;
}

static void release(sync_run *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->t[i].want);
        json_object_put(r->t[i].want_json);
        json_object_put(r->t[i].have_json);
    }
    kjoin_kubeapi_free(r->api);
    json_object_put(r->file);
    free(r->st);
}

kjoin_code kjoin_sync(const kjoin_sync_spec *spec, kjoin_sync_result *out, kjoin_err *err)
{
    sync_run r = {.spec = spec, .out = out};
    bool found = false;
    memset(out, 0, sizeof(*out));
    kjoin_code rc = kjoin_version_check(spec ? &spec->version : NULL, KJOIN_SYNC_SPEC_VERSION, "kjoin_sync_spec",
                                        "KJOIN_SYNC_SPEC_INIT", err);
    if (rc)
        return rc;
    r.deadline = kjoin_now_ms() + (spec->timeout_ms > 0 ? spec->timeout_ms : 60000);
    kjoin_node__resolve(&spec->paths, &r.p);
    rc = (r.st = calloc(1, sizeof(*r.st))) ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    if (!rc)
        rc = kjoin_node__read_record(&r.p, &spec->paths, r.st, &found, &r.file, err); /* read once */
    if (!rc && !found)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s: no join record: this node was not joined by kjoin", r.p.state);
    if (!rc && spec->restart && !spec->check && !kjoin_node__systemd(spec->systemd_dir))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "restarting the kubelet needs systemd, which does not run here: "
                                               "restart it as it was started");
    if (!rc) {
        snprintf(out->node_name, sizeof(out->node_name), "%s", r.st->node_name);
        rc = client(&r, err);
    }
    if (!rc)
        rc = desired(&r, err);
    if (rc) {
        release(&r);
        return rc;
    }
    int64_t newest = -1;
    for (size_t i = 0; i < r.n; i++) {
        kjoin_sync_file *f = &out->files[i];
        read_have(&r.t[i], f);
        if (r.t[i].have_ok)
            kjoin_node__sync_diff(r.t[i].have_json, r.t[i].want_json, "", f);
        f->differs = f->n_changes > 0 || f->missing;
        out->drift |= f->differs;
        int64_t m = mtime_ms(r.t[i].path);
        newest = m > newest ? m : newest;
    }
    logf_(spec, 0, "[sync] Node %s: the kubelet configuration of kube-system/%s (kubeadm 1.%d)%s: %s",
          out->node_name, out->config_map, out->kubeadm_minor,
          out->flags_kept ? ", the flags file left (the join record predates its flags)" : "",
          out->drift ? "this node differs" : "this node has it");
    if (!spec->check && out->drift)
        rc = write_files(&r, err);
    /* The kubelet reads its files at its start: one that started before
     * they were written (a second's slack: the boot time's precision) runs
     * what they held before. */
    int64_t started = kubelet_started(spec);
    bool stale = out->written || (started >= 0 && newest > started + 1000);
    if (!rc && stale && spec->restart && !spec->check)
        rc = restart(&r, err);
    stale &= !out->restarted;
    out->state = spec->check && out->drift ? KJOIN_SYNC_DRIFTED : stale ? KJOIN_SYNC_RESTART_NEEDED : KJOIN_SYNC_IN_SYNC;
    if (!rc && stale)
        logf_(spec, 0, "[sync] The kubelet started before its files were written: it takes them when it restarts");
    hash_node(&r);
    kjoin_err label_err;
    kjoin_code lrc = label(&r, &label_err);
    if (!rc && lrc)
        rc = kjoin_err_set(err, lrc, "%s", label_err.msg);
    release(&r);
    return rc;
}
