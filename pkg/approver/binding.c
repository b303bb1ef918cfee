/* The joining side of a node-bound token: who the API server says the
 * token is (SelfSubjectReview), and whether that binding lets this node
 * join under its name. */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include <kjoin/private/approver.h>
#include <kjoin/private/token.h>

#include "internal.h"

/* The versions of SelfSubjectReview served by default, newest first: v1
 * from 1.28, v1beta1 on 1.27 (v1alpha1 of 1.26 needs a feature gate). */
static const char *const reviews[] = {
    "authentication.k8s.io/v1",
    "authentication.k8s.io/v1beta1",
};

kjoin_code kjoin_approver_whoami(kjoin_kubeapi *api, int minor, kjoin_token_binding *out, bool *known, kjoin_err *err)
{
    memset(out, 0, sizeof(*out));
    *known = false;
    /* A release known to serve none is not asked (a request saved per join). */
    size_t first = minor >= 28 || minor == 0 ? 0 : 1, last = minor && minor < 27 ? 0 : 2;
    for (size_t i = first; i < last; i++) {
        char path[128], body[160];
        snprintf(path, sizeof(path), "/apis/%s/selfsubjectreviews", reviews[i]);
        snprintf(body, sizeof(body), "{\"apiVersion\":\"%s\",\"kind\":\"SelfSubjectReview\"}", reviews[i]);
        kjoin_kubeapi_response r = {0};
        kjoin_code rc = kjoin_kubeapi_request(api, "POST", path, body, &r, err);
        if (!rc && r.status == 404) {
            kjoin_kubeapi_response_release(&r);
            continue; /* not served by this release */
        }
        if (!rc && r.status == 403) { /* a cluster that took it from system:basic-user: the approver decides */
            kjoin_kubeapi_response_release(&r);
            return KJOIN_OK;
        }
        if (!rc)
            rc = kjoin_kubeapi_check(&r, "create a selfsubjectreview", err);
        json_object *o = !rc ? json_tokener_parse(r.body) : NULL, *status = NULL, *user = NULL, *groups = NULL;
        kjoin_kubeapi_response_release(&r);
        if (!rc && !(o && json_object_object_get_ex(o, "status", &status) &&
                     json_object_object_get_ex(status, "userInfo", &user) &&
                     json_object_object_get_ex(user, "groups", &groups) &&
                     json_object_is_type(groups, json_type_array)))
            rc = kjoin_err_set(err, KJOIN_E_API, "the SelfSubjectReview's answer has no status.userInfo.groups");
        for (size_t k = 0; !rc && k < json_object_array_length(groups); k++) {
            json_object *g = json_object_array_get_idx(groups, k);
            if (json_object_is_type(g, json_type_string))
                kjoin_token_binding_add(out, json_object_get_string(g), (size_t)json_object_get_string_len(g));
        }
        json_object_put(o);
        *known = rc == KJOIN_OK;
        return rc;
    }
    return KJOIN_OK;
}

kjoin_code kjoin_approver_check_binding(kjoin_kubeapi *api, int minor, const char *node, kjoin_token_binding *binding,
                                        bool *known_out, kjoin_err *err)
{
    bool known = false;
    kjoin_code rc = kjoin_approver_whoami(api, minor, binding, &known, err);
    if (known_out)
        *known_out = known;
    if (rc || !known || !(binding->bound || binding->node_groups))
        return rc;
    if (!kjoin_token_binding_valid(binding))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the token carries kjoin's groups but no binding to one node: "
                                                 "kjoin approver would deny its certificate request");
    if (strcmp(binding->node, node) != 0)
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "the token is bound to node %s: it cannot join as %s (join under the name %s, or use a "
                             "token for %s)",
                             binding->node, node, binding->node, node);
    return KJOIN_OK;
}

kjoin_code kjoin_approver_denied(kjoin_kubeapi *api, const char *token_id, const char *node, char *reason, size_t cap,
                                 bool *denied, kjoin_err *err)
{
    json_object *o = NULL, *items = NULL;
    *denied = false;
    kjoin_code rc = kjoin_approver__get_list(api,
                                             "/apis/certificates.k8s.io/v1/certificatesigningrequests?fieldSelector="
                                             "spec.signerName%3Dkubernetes.io%2Fkube-apiserver-client-kubelet",
                                             "certificatesigningrequests", &o, &items, err);
    for (size_t i = 0; !rc && !*denied && i < json_object_array_length(items); i++)
        *denied = kjoin_approver__denied_for(json_object_array_get_idx(items, i), token_id, node, reason, cap);
    json_object_put(o);
    return rc;
}

kjoin_code kjoin_approver__get_list(kjoin_kubeapi *api, const char *path, const char *what, json_object **list,
                                    json_object **items, kjoin_err *err)
{
    kjoin_kubeapi_response r = {0};
    char verb[128];
    snprintf(verb, sizeof(verb), "list %s", what);
    *list = *items = NULL;
    kjoin_code rc = kjoin_kubeapi_request(api, "GET", path, NULL, &r, err);
    if (!rc)
        rc = kjoin_kubeapi_check(&r, verb, err);
    json_object *o = !rc ? json_tokener_parse(r.body) : NULL;
    kjoin_kubeapi_response_release(&r);
    if (!rc && !(o && json_object_object_get_ex(o, "items", items) && json_object_is_type(*items, json_type_array))) {
        json_object_put(o);
        *items = NULL;
        return kjoin_err_set(err, KJOIN_E_API, "the list of %s is not a list", what);
    }
    *list = o;
    return rc;
}
