/* The node's reads of the API server, shared by kubelet-start, the wait
 * and join --check: JSON answers, a Node's readiness, the kubelet's
 * ConfigMap as each kubeadm release names it. */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include <kjoin/private/kubeapi.h>
#include <kjoin/private/node.h>
#include <kjoin/private/release.h>
#include <kjoin/private/util.h>

#include "internal.h"

/* GET path as JSON into *out; NULL when the API says NotFound (or, when
 * forbidden_absent, Forbidden: not there for this identity). */
kjoin_code kjoin_node__get_json_or_absent(kjoin_kubeapi *api, const char *path, const char *what, bool forbidden_absent,
                                     json_object **out, kjoin_err *err)
{
    kjoin_kubeapi_response resp;
    kjoin_code rc = kjoin_kubeapi_request(api, "GET", path, NULL, &resp, err);
    *out = NULL;
    if (rc)
        return rc;
    if ((resp.status == 404 && strcmp(resp.reason, "NotFound") == 0) ||
        (forbidden_absent && resp.status == 403 && strcmp(resp.reason, "Forbidden") == 0)) {
        kjoin_kubeapi_response_release(&resp);
        return KJOIN_OK;
    }
    if (!(rc = kjoin_kubeapi_check(&resp, what, err)) && !(*out = json_tokener_parse(resp.body)))
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "%s: the answer is not JSON", what);
    kjoin_kubeapi_response_release(&resp);
    return rc;
}

kjoin_code kjoin_node__get_json(kjoin_kubeapi *api, const char *path, const char *what, json_object **out, kjoin_err *err)
{
    return kjoin_node__get_json_or_absent(api, path, what, false, out, err);
}

/* A string member of o, or NULL: the API server's JSON is untrusted, and a
 * null or another type where a string belongs is no string. */
const char *kjoin_node__string_member(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                              : NULL;
}

bool kjoin_node__ready_of(json_object *node)
{
    json_object *status, *conds;
    if (!json_object_object_get_ex(node, "status", &status) || !json_object_object_get_ex(status, "conditions", &conds) ||
        !json_object_is_type(conds, json_type_array))
        return false;
    for (size_t i = 0; i < json_object_array_length(conds); i++) {
        json_object *c = json_object_array_get_idx(conds, i);
        const char *type = kjoin_node__string_member(c, "type"), *value = kjoin_node__string_member(c, "status");
        if (type && value && !strcmp(type, "Ready") && !strcmp(value, "True"))
            return true;
    }
    return false;
}

bool kjoin_node_ready(const char *json, size_t len)
{
    json_tokener *tok = len <= INT32_MAX ? json_tokener_new() : NULL;
    json_object *node = tok ? json_tokener_parse_ex(tok, json, (int)len) : NULL;
    bool ready = kjoin_node__ready_of(node);
    json_object_put(node);
    json_tokener_free(tok);
    return ready;
}

/* The kubelet's ConfigMap in kube-system as the cluster's kubeadm release
 * reads it, into *cm (NULL: not there) and its name into name (both names,
 * "A or B", when 1.23's and 1.24's kubeadm would try both and neither is
 * there): kubelet-config where that release reads it, else, or where
 * kubeadm falls back to it (kubelet-config not there or not readable with
 * this token), kubelet-config-1.MINOR. */
kjoin_code kjoin_node__get_kubelet_config_map(kjoin_kubeapi *api, int minor, char *name, size_t cap, json_object **cm,
                                         kjoin_err *err)
{
    kjoin_kubelet_config_map rule = kjoin_release_of(minor)->kubelet_config_map;
    char path[512], what[320];
    kjoin_code rc = KJOIN_OK;
    *cm = NULL;
    if (rule != KJOIN_KUBELET_CONFIG_VERSIONED) {
        snprintf(name, cap, "kubelet-config");
        snprintf(path, sizeof(path), "/api/v1/namespaces/kube-system/configmaps/%s", name);
        snprintf(what, sizeof(what), "get configmap kube-system/%s", name);
        rc = kjoin_node__get_json_or_absent(api, path, what, rule == KJOIN_KUBELET_CONFIG_EITHER, cm, err);
        if (rc || *cm || rule == KJOIN_KUBELET_CONFIG_UNVERSIONED)
            return rc;
    }
    char legacy[64];
    snprintf(legacy, sizeof(legacy), "kubelet-config-1.%d", kjoin_release_minor(minor));
    snprintf(path, sizeof(path), "/api/v1/namespaces/kube-system/configmaps/%s", legacy);
    snprintf(what, sizeof(what), "get configmap kube-system/%s", legacy);
    if (!(rc = kjoin_node__get_json(api, path, what, cm, err)) && (*cm || rule == KJOIN_KUBELET_CONFIG_VERSIONED))
        snprintf(name, cap, "%s", legacy);
    else if (!rc)
        snprintf(name, cap, "kubelet-config or %s", legacy);
    return rc;
}

kjoin_code kjoin_node__kubelet_config_of(json_object *cm, const char *name, const char **text, kjoin_kubelet_config *parsed,
                                         kjoin_err *err)
{
    kjoin_err why;
    json_object *data = kjoin_json_obj(cm, "data"), *kubelet = NULL;
    /* (a string without a NUL: the configuration is C text from here on) */
    if (!data || !json_object_object_get_ex(data, "kubelet", &kubelet) || !json_object_is_type(kubelet, json_type_string) ||
        strlen(json_object_get_string(kubelet)) != (size_t)json_object_get_string_len(kubelet))
        return kjoin_err_set(err, KJOIN_E_OTHER, "configmap kube-system/%s has no \"kubelet\" key", name);
    *text = json_object_get_string(kubelet);
    kjoin_code rc = kjoin_kubelet_config_parse(*text, strlen(*text), parsed, &why);
    if (rc)
        kjoin_err_set(err, rc, "configmap kube-system/%s: %s", name, why.msg);
    return rc;
}
