/* kubeadm's mark-control-plane: the Node's control-plane labels and taints,
 * with the node's admin.conf. */
#include <kjoin/private/controlplane.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <kjoin/private/kubeapi.h>
#include <kjoin/private/safedir.h>

#include "internal.h"

#define logf_(s, level, ...) kjoin_logf((s)->join->log, (s)->join->log_ctx, level, __VA_ARGS__)
#define CONFLICTS_MAX 5

/* A taint "key[=value]:Effect" as the API's object. */
static json_object *taint_json(const char *text)
{
    char key[320] = "", value[320] = "";
    const char *colon = strrchr(text, ':'), *eq = strchr(text, '=');
    if (!colon || colon == text || (eq && eq > colon))
        return NULL;
    size_t klen = (size_t)((eq ? eq : colon) - text);
    if (klen >= sizeof(key) || (eq && (size_t)(colon - eq - 1) >= sizeof(value)))
        return NULL;
    memcpy(key, text, klen);
    if (eq)
        memcpy(value, eq + 1, (size_t)(colon - eq - 1));
    json_object *t = json_object_new_object();
    json_object_object_add(t, "key", json_object_new_string(key));
    if (*value)
        json_object_object_add(t, "value", json_object_new_string(value));
    json_object_object_add(t, "effect", json_object_new_string(colon + 1));
    return t;
}

static const char *field(json_object *o, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                             : "";
}

/* kubeadm's taintExists: key, value and effect equal (timeAdded too, which
 * neither side sets here). */
static bool same_taint(json_object *a, json_object *b)
{
    return !strcmp(field(a, "key"), field(b, "key")) && !strcmp(field(a, "value"), field(b, "value")) &&
           !strcmp(field(a, "effect"), field(b, "effect"));
}

/* The patch for node (as read): the labels, and the wanted taints followed
 * by those the Node has that are not among them, at its resourceVersion. */
static kjoin_code patch_for(const kjoin_cp_context *cx, const kjoin_mark_control_plane_spec *s, json_object *node,
                            char **out, kjoin_err *err)
{
    *out = NULL;
    if (!json_object_is_type(node, json_type_object))
        return kjoin_err_set(err, KJOIN_E_API, "the Node %s is not a JSON object", cx->join->name.name);
    const kjoin_release *row = cx->release;
    json_object *meta, *spec, *had = NULL, *rv;
    if (!json_object_object_get_ex(node, "metadata", &meta) || !json_object_object_get_ex(meta, "resourceVersion", &rv) ||
        !json_object_is_type(rv, json_type_string))
        return kjoin_err_set(err, KJOIN_E_API, "the Node %s has no resourceVersion", cx->join->name.name);
    if (json_object_object_get_ex(node, "spec", &spec) && json_object_is_type(spec, json_type_object))
        json_object_object_get_ex(spec, "taints", &had);
    json_object *patch = json_object_new_object(), *pmeta = json_object_new_object(), *labels = json_object_new_object(),
                *pspec = json_object_new_object(), *taints = json_object_new_array();
    json_object_object_add(pmeta, "resourceVersion", json_object_get(rv));
    const struct {
        const char *name;
        bool set;
    } role_labels[] = {{"node-role.kubernetes.io/master", row->master_label},
                       {"node-role.kubernetes.io/control-plane", true},
                       {"node.kubernetes.io/exclude-from-external-load-balancers", row->exclude_lb_label}};
    for (size_t i = 0; i < sizeof(role_labels) / sizeof(role_labels[0]); i++)
        if (role_labels[i].set)
            json_object_object_add(labels, role_labels[i].name, json_object_new_string(""));
    json_object_object_add(pmeta, "labels", labels);
    json_object_object_add(patch, "metadata", pmeta);
    /* the release's default taints, in kubeadm's order (1.24 has both) */
    const char *defaults[2];
    size_t n_defaults = 0;
    if (row->master_taint)
        defaults[n_defaults++] = "node-role.kubernetes.io/master:NoSchedule";
    if (row->control_plane_taint)
        defaults[n_defaults++] = "node-role.kubernetes.io/control-plane:NoSchedule";
    kjoin_code rc = KJOIN_OK;
    size_t n = s->taints_set ? s->n_taints : n_defaults;
    for (size_t i = 0; !rc && i < n; i++) {
        json_object *t = taint_json(s->taints_set ? s->taints[i] : defaults[i]);
        if (!t)
            rc = kjoin_err_set(err, KJOIN_E_USAGE, "the taint \"%.80s\" is not key[=value]:Effect", s->taints[i]);
        else
            json_object_array_add(taints, t);
    }
    size_t wanted = json_object_array_length(taints);
    for (size_t i = 0; !rc && json_object_is_type(had, json_type_array) && i < json_object_array_length(had); i++) {
        json_object *t = json_object_array_get_idx(had, i);
        bool dup = !json_object_is_type(t, json_type_object); /* not a taint: the API server refuses it, so drop it */
        for (size_t k = 0; k < wanted; k++)
            dup |= same_taint(t, json_object_array_get_idx(taints, k));
        if (!dup)
            json_object_array_add(taints, json_object_get(t));
    }
    json_object_object_add(pspec, "taints", taints);
    json_object_object_add(patch, "spec", pspec);
    if (!rc && !(*out = strdup(json_object_to_json_string_ext(patch, JSON_C_TO_STRING_PLAIN |
                                                                         JSON_C_TO_STRING_NOSLASHESCAPE))))
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    json_object_put(patch);
    return rc;
}

kjoin_code kjoin_mark_control_plane_patch(const kjoin_cp_context *cx, const kjoin_mark_control_plane_spec *s,
                                          const char *node_json, size_t len, char **out, kjoin_err *err)
{
    json_tokener *tok = json_tokener_new();
    json_object *node = tok ? json_tokener_parse_ex(tok, node_json, (int)len) : NULL;
    bool whole = tok && json_tokener_get_error(tok) == json_tokener_success &&
                 json_tokener_get_parse_end(tok) == len;
    json_tokener_free(tok);
    kjoin_code rc = whole ? patch_for(cx, s, node, out, err)
                          : kjoin_err_set(err, KJOIN_E_API, "the Node %s is not JSON", cx->join->name.name);
    json_object_put(node);
    return rc;
}

kjoin_code kjoin_cp__admin_read(const char *path, char **text, size_t *len, kjoin_err *err)
{
    bool missing;
    /* admin.conf holds the cluster's admin key: read only through a
     * directory checked as ssh checks one, never through a symlink */
    kjoin_code rc = kjoin_safedir_read_path(path, true, text, len, &missing, err);
    if (rc && missing)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s is missing: the control-plane-prepare phase writes it", path);
    return rc;
}

kjoin_code kjoin_cp__admin_client(const char *text, size_t len, const char *server, const kjoin_kubeapi_options *o,
                                  kjoin_kubeapi **out, kjoin_err *err)
{
    kjoin_kubeapi_config cfg;
    kjoin_code rc = kjoin_kubeapi_config_parse(text, len, NULL, NULL, &cfg, err);
    if (!rc && server) { /* the same credentials and CA, another of the cluster's API servers */
        free(cfg.server);
        if (!(cfg.server = strdup(server))) {
            kjoin_kubeapi_config_release(&cfg);
            rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        }
    }
    if (rc)
        return rc;
    rc = kjoin_kubeapi_new(&cfg, o, out, err);
    if (rc)
        kjoin_kubeapi_config_release(&cfg);
    return rc;
}

kjoin_code kjoin_cp_admin_client(const kjoin_cp_context *cx, kjoin_kubeapi **out, kjoin_err *err)
{
    return kjoin_cp__admin_client_bounded(cx, 0, out, err);
}

kjoin_code kjoin_cp__admin_client_bounded(const kjoin_cp_context *cx, int64_t bound_ms, kjoin_kubeapi **out,
                                          kjoin_err *err)
{
    char *text = NULL;
    size_t len = 0;
    kjoin_kubeapi_options o = kjoin_join_context_api_options(cx->join, 0, 0);
    if (bound_ms > 0)
        o.timeout_ms = bound_ms; /* its own, past the join's deadline */
    char admin[1400];
    kjoin_join_context_read_path(cx->join, cx->admin_kubeconfig, admin, sizeof(admin)); /* a dry run's own, once it made one */
    kjoin_code rc = kjoin_cp__admin_read(admin, &text, &len, err);
    if (!rc)
        rc = kjoin_cp__admin_client(text, len, NULL, &o, out, err);
    kjoin_free_wiped(text, len);
    return rc;
}

kjoin_code kjoin_cp__admin(const kjoin_cp_context *cx, kjoin_kubeapi **api, kjoin_kubeapi **owned, kjoin_err *err)
{
    *owned = NULL;
    if ((*api = cx->admin_api))
        return KJOIN_OK;
    kjoin_code rc = kjoin_cp_admin_client(cx, owned, err);
    *api = *owned;
    return rc;
}

kjoin_code kjoin_mark_control_plane(const kjoin_cp_context *cx, const kjoin_mark_control_plane_spec *s, kjoin_err *err)
{
    kjoin_kubeapi *api = NULL, *owned = NULL;
    char path[320];
    if (cx->join->dry_run) { /* the Node is the cluster's: a dry run changes nothing there */
        logf_(cx, 0, "[dryrun] Would mark node %s as a control-plane", cx->join->name.name);
        return KJOIN_OK;
    }
    kjoin_code rc = kjoin_cp__admin(cx, &api, &owned, err);
    if (rc)
        return rc;
    snprintf(path, sizeof(path), "/api/v1/nodes/%s", cx->join->name.name);
    logf_(cx, 0, "[mark-control-plane] Marking the node %s as control-plane", cx->join->name.name);
    for (int attempt = 0;; attempt++) {
        kjoin_kubeapi_response resp;
        char *patch = NULL;
        if ((rc = kjoin_kubeapi_request(api, "GET", path, NULL, &resp, err)))
            break;
        if (!(rc = kjoin_kubeapi_check(&resp, "get the Node", err)))
            rc = kjoin_mark_control_plane_patch(cx, s, resp.body ? resp.body : "", resp.body ? resp.len : 0, &patch, err);
        kjoin_kubeapi_response_release(&resp);
        if (!rc && !(rc = kjoin_kubeapi_request(api, "PATCH", path, patch, &resp, err))) {
            bool conflict = resp.status == 409 && attempt + 1 < CONFLICTS_MAX;
            rc = conflict ? KJOIN_OK : kjoin_kubeapi_check(&resp, "label and taint the Node", err);
            kjoin_kubeapi_response_release(&resp);
            free(patch);
            if (conflict) /* someone wrote the Node between the read and the patch: read it again */
                continue;
            break;
        }
        free(patch);
        break;
    }
    kjoin_kubeapi_free(owned);
    return rc;
}
