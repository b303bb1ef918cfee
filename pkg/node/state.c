/* The join's record of what it made, for reset: written before the kubelet
 * starts (so a join that fails later can be undone), read back as untrusted
 * bytes. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <kjoin/private/node.h>
#include <kjoin/private/util.h>

#include "../record/record.h"
#include "internal.h"

#define BAD KJOIN_E_USAGE

/* Whether path is dir or inside it. */
static bool within(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* A file the join may have written: under one of the node's directories,
 * or one of the outputs the record names (the bootstrap kubeconfig and the
 * CA, wherever the join was told to put them). */
static bool our_file(const char *path, const kjoin_node__resolved *r, const char *const *outputs, size_t n)
{
    if (!kjoin_clean_path(path))
        return false;
    if (within(path, r->kubernetes_dir) || within(path, r->kubelet_dir) || !strcmp(path, r->ca_cert_path) ||
        !strcmp(path, r->kubelet_proxy) || !strcmp(path, r->containerd_proxy))
        return true;
    for (size_t i = 0; i < n; i++)
        if (outputs[i] && !strcmp(path, outputs[i]))
            return true;
    return false;
}

/* A directory the join may have made: the node's directories and what is
 * in them, or one on the way to an output the join was told to put
 * elsewhere (the CA, the bootstrap kubeconfig). */
static bool our_dir(const char *path, const kjoin_node__resolved *r, const char *const *outputs, size_t n)
{
    if (!kjoin_clean_path(path))
        return false;
    if (within(path, r->kubernetes_dir) || within(path, r->kubelet_dir))
        return true;
    /* a proxy's drop-in directory itself, not the ones above it (a unit directory is systemd's) */
    const char *dropins[2] = {r->kubelet_proxy, r->containerd_proxy};
    for (size_t i = 0; i < 2; i++) {
        const char *slash = strrchr(dropins[i], '/');
        if (slash && strlen(path) == (size_t)(slash - dropins[i]) && !strncmp(path, dropins[i], strlen(path)))
            return true;
    }
    const char *all[3] = {r->ca_cert_path, n > 0 ? outputs[0] : NULL, n > 1 ? outputs[1] : NULL};
    for (size_t i = 0; i < 3; i++)
        if (all[i] && !within(all[i], r->kubernetes_dir) && !within(all[i], r->kubelet_dir) && within(all[i], path) &&
            strcmp(all[i], path))
            return true;
    return false;
}

static const char *str_of_item(json_object *list, size_t i)
{
    json_object *v = json_object_array_get_idx(list, i);
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static kjoin_code copy(char *dst, size_t cap, const char *src, const char *what, kjoin_err *err)
{
    if (!src || strlen(src) >= cap)
        return kjoin_err_set(err, BAD, "the join record's %s is missing or too long", what);
    memcpy(dst, src, strlen(src) + 1);
    return KJOIN_OK;
}

static json_object *array_of(json_object *o, const char *key, size_t cap)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_array) ||
        json_object_array_length(v) > cap)
        return NULL;
    return v;
}

/* An array of file names (no '/', not "." or "..") into names. */
static kjoin_code names_of(json_object *list, const char *what, char (*names)[256], size_t *n, kjoin_err *err)
{
    kjoin_code rc = KJOIN_OK;
    for (size_t i = 0; !rc && i < (size_t)json_object_array_length(list); i++) {
        json_object *e = json_object_array_get_idx(list, i);
        const char *name = json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL;
        if (!name || !*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
            rc = kjoin_err_set(err, BAD, "the join record's %s entry %zu is not a name", what, i + 1);
        else
            rc = copy(names[i], 256, name, "entry", err);
        *n = i + 1;
    }
    return rc;
}

/* The paths the record may name, for the one format's parser. */
typedef struct record_scope {
    kjoin_node__resolved r;
    const char *outputs[2];
} record_scope;

static bool file_ok(const char *path, const void *ctx)
{
    const record_scope *s = ctx;
    return our_file(path, &s->r, s->outputs, 2);
}

static bool dir_ok(const char *path, const void *ctx)
{
    const record_scope *s = ctx;
    return our_dir(path, &s->r, s->outputs, 2);
}

/* The string v into out: anything but a printable string that fits is
 * refused (key names it). */
static kjoin_code string_into(json_object *v, const char *key, char *out, size_t cap, kjoin_err *err)
{
    const char *t = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
    if (!t || strlen(t) >= cap || (size_t)json_object_get_string_len(v) != strlen(t) || !kjoin_utf8_printable(t))
        return kjoin_err_set(err, BAD, "the join record's kubeletInputs.%s is not a string of at most %zu "
                                       "printable characters", key, cap - 1);
    memcpy(out, t, strlen(t) + 1);
    return KJOIN_OK;
}

/* o's key into out; absent is "" unless required. */
static kjoin_code text_of(json_object *o, const char *key, char *out, size_t cap, bool required, kjoin_err *err)
{
    json_object *v = NULL;
    *out = '\0';
    if (!json_object_object_get_ex(o, key, &v) && !required)
        return KJOIN_OK;
    return string_into(v, key, out, cap, err);
}

/* A list of strings of o's into out (each cap bytes). */
static kjoin_code texts_of(json_object *o, const char *key, char *out, size_t cap, size_t *n, kjoin_err *err)
{
    json_object *list = array_of(o, key, KJOIN_NODE_INPUTS_MAX_ARGS);
    kjoin_code rc = list ? KJOIN_OK : kjoin_err_set(err, BAD, "the join record's kubeletInputs.%s is not a list of at "
                                                              "most %d", key, KJOIN_NODE_INPUTS_MAX_ARGS);
    *n = 0;
    for (size_t i = 0; !rc && i < (size_t)json_object_array_length(list); i++) {
        rc = string_into(json_object_array_get_idx(list, i), key, out + i * cap, cap, err);
        *n = i + 1;
    }
    return rc;
}

/* The record's kubeletInputs (absent in records before they were kept). */
static kjoin_code inputs_of(json_object *o, kjoin_node_inputs *in, kjoin_err *err)
{
    json_object *v, *b;
    if (!json_object_object_get_ex(o, "kubeletInputs", &v))
        return KJOIN_OK;
    if (!json_object_is_type(v, json_type_object) || !json_object_object_get_ex(v, "hostnameOverride", &b) ||
        !json_object_is_type(b, json_type_boolean))
        return kjoin_err_set(err, BAD, "the join record's kubeletInputs is not an object with hostnameOverride");
    in->hostname_override = json_object_get_boolean(b);
    kjoin_code rc = text_of(v, "criSocket", in->cri_socket, sizeof(in->cri_socket), true, err);
    if (!rc)
        rc = text_of(v, "patchesDir", in->patches_dir, sizeof(in->patches_dir), false, err);
    if (!rc && *in->patches_dir && !kjoin_clean_path(in->patches_dir))
        rc = kjoin_err_set(err, BAD, "the join record's kubeletInputs.patchesDir is not a clean absolute path");
    if (!rc)
        rc = text_of(v, "nodeIP", in->node_ip, sizeof(in->node_ip), false, err);
    if (!rc)
        rc = texts_of(v, "taints", in->taints[0], sizeof(in->taints[0]), &in->n_taints, err);
    if (!rc)
        rc = texts_of(v, "extraArgs", in->extra_args[0], sizeof(in->extra_args[0]), &in->n_extra_args, err);
    in->has = !rc;
    return rc;
}

/* The node's part of the record file o (NULL: none that parsed). */
static kjoin_code state_of(json_object *o, const kjoin_node_paths *paths, kjoin_node_state *out, kjoin_err *err)
{
    record_scope scope = {.outputs = {NULL, NULL}};
    kjoin_node__resolve(paths, &scope.r);
    kjoin_code rc = KJOIN_OK;
    /* The outputs: absent in records before they were kept. */
    json_object *named = NULL;
    bool outputs_ok = !o || !json_object_object_get_ex(o, "outputs", &named) || json_object_is_type(named, json_type_object);
    if (outputs_ok && named) {
        scope.outputs[0] = kjoin_record_str(named, "bootstrapKubeconfig"), scope.outputs[1] = kjoin_record_str(named, "caCert");
        outputs_ok = (!scope.outputs[0] || kjoin_clean_path(scope.outputs[0])) &&
                     (!scope.outputs[1] || kjoin_clean_path(scope.outputs[1]));
    }
    json_object *before = o ? array_of(o, "kubeletDirBefore", KJOIN_NODE_STATE_MAX_ENTRIES) : NULL;
    json_object *mounts_before = NULL;
    bool mounts_ok = !o || !json_object_object_get_ex(o, "kubeletMountsBefore", &mounts_before) ||
                     (mounts_before = array_of(o, "kubeletMountsBefore", KJOIN_NODE_STATE_MAX_MOUNTS)) != NULL;
    json_object *pki_before = NULL;
    bool pki_ok = !o || !json_object_object_get_ex(o, "kubeletPkiBefore", &pki_before) ||
                  (pki_before = array_of(o, "kubeletPkiBefore", KJOIN_NODE_STATE_MAX_ENTRIES)) != NULL;
    json_object *dirs = NULL;
    memset(out, 0, sizeof(*out));
    if (!o || !json_object_object_get_ex(o, "createdDirs", &dirs) || !before || !pki_ok || !outputs_ok || !mounts_ok)
        rc = kjoin_err_set(err, BAD, "the join record is not a kjoin join record (kind KjoinJoinRecord with files, "
                                     "createdDirs, kubeletDirBefore and kubeletPkiBefore)");
    if (!rc && !(rc = copy(out->join_id, sizeof(out->join_id), kjoin_record_str(o, "joinID"), "joinID", err)) &&
        !(rc = copy(out->server, sizeof(out->server), kjoin_record_str(o, "server"), "server", err)))
        rc = copy(out->node_name, sizeof(out->node_name), kjoin_record_str(o, "nodeName"), "nodeName", err);
    if (!rc)
        rc = kjoin_record_written_parse(o, "join record", file_ok, dir_ok, &scope, &out->written, err);
    if (!rc)
        rc = names_of(before, "kubelet directory", out->kubelet_entries, &out->n_kubelet_entries, err);
    if (!rc && pki_before)
        rc = names_of(pki_before, "kubelet pki directory", out->pki_entries, &out->n_pki_entries, err);
    if (!rc)
        rc = inputs_of(o, &out->inputs, err);
    out->has_mounts = mounts_before != NULL;
    for (size_t i = 0; !rc && mounts_before && i < (size_t)json_object_array_length(mounts_before); i++) {
        const char *m = str_of_item(mounts_before, i);
        if (!m || !kjoin_clean_path(m) || !within(m, scope.r.kubelet_dir))
            rc = kjoin_err_set(err, BAD, "the join record's mount %zu is not a path in the kubelet directory", i + 1);
        else
            rc = copy(out->mounts[i], sizeof(out->mounts[i]), m, "mount", err);
        out->n_mounts = i + 1;
    }
    if (rc)
        memset(out, 0, sizeof(*out));
    return rc;
}

kjoin_code kjoin_node_state_parse(const char *text, size_t len, const kjoin_node_paths *paths, kjoin_node_state *out,
                                  kjoin_err *err)
{
    json_object *o = kjoin_record_open(text, len, KJOIN_NODE_STATE_MAX, "KjoinJoinRecord");
    kjoin_code rc = state_of(o, paths, out, err);
    json_object_put(o);
    return rc;
}

kjoin_code kjoin_node__read_record(const kjoin_node__resolved *p, const kjoin_node_paths *paths, kjoin_node_state *st,
                                   bool *found, json_object **file, kjoin_err *err)
{
    kjoin_safedir d;
    char *text = NULL;
    size_t len = 0;
    bool missing = false;
    kjoin_err e;
    *found = false;
    if (file)
        *file = NULL;
    if (kjoin_safedir_open(p->kubernetes_dir, 0, &d, &e))
        return access(p->kubernetes_dir, F_OK) != 0 ? KJOIN_OK : kjoin_err_set(err, e.code, "%s", e.msg);
    kjoin_code rc = kjoin_safedir_read(&d, KJOIN_NODE_STATE_NAME, KJOIN_NODE_STATE_MAX, true, &text, &len, &missing, err);
    kjoin_safedir_close(&d);
    if (rc)
        return missing ? KJOIN_OK : rc;
    /* The one record of a join whose control-plane steps ran, kubelet-start not yet: no node part. */
    json_object *o = kjoin_record_open(text, len, KJOIN_NODE_STATE_MAX, "KjoinJoinRecord");
    free(text);
    *found = !o || kjoin_record_file_has_node(o);
    if (*found && (rc = state_of(o, paths, st, &e)))
        kjoin_err_set(err, rc, "%s: %s", p->state, e.msg);
    if (file)
        *file = o; /* the whole file, its other part too, parsed once */
    else
        json_object_put(o);
    return rc;
}
