/* What kjoin approver and node-bound tokens may do, as RBAC objects the
 * cluster keeps: made idempotently, removed exactly. Every rule is listed
 * with why in docs/token.md. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include <kjoin/private/approver.h>
#include <kjoin/private/kubeconfig.h>
#include <kjoin/private/safedir.h>
#include <kjoin/private/token.h>
#include <kjoin/private/util.h>

#include "internal.h"

#define RBAC "/apis/rbac.authorization.k8s.io/v1"
#define KS "/namespaces/kube-system"
#define SA_NAME "kjoin-approver"
#define SA_SECRET "kjoin-approver-token"
#define BOUND "kjoin:bound-node"
#define APPROVER "kjoin:approver"
#define LABELS "\"labels\":{\"app.kubernetes.io/managed-by\":\"kjoin\"}"

typedef struct object {
    const char *collection, *name, *body;
    bool keep; /* one already there is kept (an account and its token), not replaced (rules: kjoin's) */
} object;

/* A bound token's: what a joining node needs of kubeadm's default group
 * (create and read its CSR; read kubeadm-config and kubelet-config; get
 * Nodes) and whether an approver holds the Lease; never approval. */
static const object bound_objects[] = {
    {RBAC "/clusterrolebindings", "kjoin:bound-node-bootstrapper",
     "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\",\"metadata\":{\"name\":"
     "\"kjoin:bound-node-bootstrapper\"," LABELS "},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":"
     "\"ClusterRole\",\"name\":\"system:node-bootstrapper\"},\"subjects\":[{\"apiGroup\":\"rbac.authorization.k8s.io\","
     "\"kind\":\"Group\",\"name\":\"" KJOIN_TOKEN_BOUND_GROUP "\"}]}", false},
    {RBAC "/clusterroles", BOUND,
     "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":{\"name\":\"" BOUND "\","
     LABELS "},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"nodes\"],\"verbs\":[\"get\"]}]}", false},
    {RBAC "/clusterrolebindings", BOUND,
     "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\",\"metadata\":{\"name\":\"" BOUND
     "\"," LABELS "},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"" BOUND
     "\"},\"subjects\":[{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Group\",\"name\":\"" KJOIN_TOKEN_BOUND_GROUP
     "\"}]}", false},
    {RBAC KS "/roles", BOUND,
     "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"Role\",\"metadata\":{\"name\":\"" BOUND
     "\",\"namespace\":\"kube-system\"," LABELS "},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"configmaps\"],"
     "\"verbs\":[\"get\"],\"resourceNames\":[\"kubeadm-config\",\"kubelet-config\",\"kubelet-config-1.20\","
     "\"kubelet-config-1.21\",\"kubelet-config-1.22\",\"kubelet-config-1.23\"]},{\"apiGroups\":[\"coordination.k8s.io\"],"
     "\"resources\":[\"leases\"],\"verbs\":[\"get\"],\"resourceNames\":[\"" KJOIN_APPROVER_LEASE_NAME "\"]}]}", false},
    {RBAC KS "/rolebindings", BOUND,
     "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata\":{\"name\":\"" BOUND
     "\",\"namespace\":\"kube-system\"," LABELS "},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":"
     "\"Role\",\"name\":\"" BOUND "\"},\"subjects\":[{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"Group\","
     "\"name\":\"" KJOIN_TOKEN_BOUND_GROUP "\"}]}", false},
};

#define SA_SUBJECT "{\"kind\":\"ServiceAccount\",\"name\":\"" SA_NAME "\",\"namespace\":\"kube-system\"}"

/* The approver's: watch CSRs, approve or deny the kubelet signer's only,
 * delete a spent token's Secret, hold its Lease. */
static const object approver_objects[] = {
    {"/api/v1" KS "/serviceaccounts", SA_NAME,
     "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"" SA_NAME
     "\",\"namespace\":\"kube-system\"," LABELS "}}", true},
    {"/api/v1" KS "/secrets", SA_SECRET,
     "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"type\":\"kubernetes.io/service-account-token\",\"metadata\":{"
     "\"name\":\"" SA_SECRET "\",\"namespace\":\"kube-system\",\"annotations\":{\"kubernetes.io/service-account.name\":"
     "\"" SA_NAME "\"}," LABELS "}}", true},
    {RBAC "/clusterroles", APPROVER,
     "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":{\"name\":\"" APPROVER
     "\"," LABELS "},\"rules\":[{\"apiGroups\":[\"certificates.k8s.io\"],\"resources\":[\"certificatesigningrequests\"],"
     "\"verbs\":[\"get\",\"list\",\"watch\"]},{\"apiGroups\":[\"\"],\"resources\":[\"nodes\"],\"verbs\":[\"get\"]},"
     "{\"apiGroups\":[\"certificates.k8s.io\"],\"resources\":["
     "\"certificatesigningrequests/approval\"],\"verbs\":[\"update\"]},{\"apiGroups\":[\"certificates.k8s.io\"],"
     "\"resources\":[\"signers\"],\"resourceNames\":[\"" APPROVER_SIGNER "\"],\"verbs\":[\"approve\"]}]}", false},
    {RBAC "/clusterrolebindings", APPROVER,
     "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\",\"metadata\":{\"name\":\"" APPROVER
     "\"," LABELS "},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"" APPROVER
     "\"},\"subjects\":[" SA_SUBJECT "]}", false},
    {RBAC KS "/roles", APPROVER,
     "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"Role\",\"metadata\":{\"name\":\"" APPROVER
     "\",\"namespace\":\"kube-system\"," LABELS "},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"secrets\"],"
     "\"verbs\":[\"delete\"]},{\"apiGroups\":[\"coordination.k8s.io\"],\"resources\":[\"leases\"],\"verbs\":[\"create\"]},"
     "{\"apiGroups\":[\"coordination.k8s.io\"],\"resources\":[\"leases\"],\"resourceNames\":[\"" KJOIN_APPROVER_LEASE_NAME
     "\"],\"verbs\":[\"get\",\"update\"]}]}", false},
    {RBAC KS "/rolebindings", APPROVER,
     "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata\":{\"name\":\"" APPROVER
     "\",\"namespace\":\"kube-system\"," LABELS "},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":"
     "\"Role\",\"name\":\"" APPROVER "\"},\"subjects\":[" SA_SUBJECT "]}", false},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Creates o; one already there is replaced by o, or kept (o->keep). */
static kjoin_code apply(kjoin_kubeapi *api, const object *o, kjoin_err *err)
{
    kjoin_kubeapi_response r = {0};
    char what[160], path[256];
    snprintf(what, sizeof(what), "create %s %s", strrchr(o->collection, '/') + 1, o->name);
    kjoin_code rc = kjoin_kubeapi_request(api, "POST", o->collection, o->body, &r, err);
    if (!rc && r.status == 409 && !o->keep) {
        kjoin_kubeapi_response_release(&r);
        snprintf(path, sizeof(path), "%s/%s", o->collection, o->name);
        snprintf(what, sizeof(what), "update %s %s", strrchr(o->collection, '/') + 1, o->name);
        rc = kjoin_kubeapi_request(api, "PUT", path, o->body, &r, err);
    }
    if (!rc && r.status != 409)
        rc = kjoin_kubeapi_check(&r, what, err);
    kjoin_kubeapi_response_release(&r);
    return rc;
}

static kjoin_code remove_one(kjoin_kubeapi *api, const object *o, kjoin_log_fn log, void *log_ctx, kjoin_err *err)
{
    kjoin_kubeapi_response r = {0};
    char what[160], path[256];
    snprintf(path, sizeof(path), "%s/%s", o->collection, o->name);
    snprintf(what, sizeof(what), "delete %s %s", strrchr(o->collection, '/') + 1, o->name);
    kjoin_code rc = kjoin_kubeapi_request(api, "DELETE", path, NULL, &r, err);
    if (!rc && r.status != 404 && !(rc = kjoin_kubeapi_check(&r, what, err)))
        kjoin_logf(log, log_ctx, 0, "[approver] deleted %s %s", strrchr(o->collection, '/') + 1, o->name);
    kjoin_kubeapi_response_release(&r);
    return rc;
}

kjoin_code kjoin_approver_bound_rbac(kjoin_kubeapi *api, kjoin_err *err)
{
    kjoin_code rc = KJOIN_OK;
    for (size_t i = 0; !rc && i < N(bound_objects); i++)
        rc = apply(api, &bound_objects[i], err);
    return rc;
}

kjoin_code kjoin_approver_auto_approved(kjoin_kubeapi *api, const char *token_id, const char *groups, bool *yes,
                                        kjoin_err *err)
{
    /* kube-controller-manager's csrapproving asks exactly this of the
     * requester (create certificatesigningrequests/nodeclient). */
    json_object *root = json_object_new_object(), *spec = json_object_new_object(),
                *attrs = json_object_new_object(), *g = json_object_new_array();
    char user[64];
    snprintf(user, sizeof(user), "system:bootstrap:%s", token_id);
    json_object_array_add(g, json_object_new_string("system:bootstrappers"));
    json_object_array_add(g, json_object_new_string("system:authenticated"));
    for (const char *p = groups; *p;) {
        size_t n = strcspn(p, ",");
        json_object_array_add(g, json_object_new_string_len(p, (int)n));
        p += n + (p[n] == ',');
    }
    json_object_object_add(root, "apiVersion", json_object_new_string("authorization.k8s.io/v1"));
    json_object_object_add(root, "kind", json_object_new_string("SubjectAccessReview"));
    json_object_object_add(spec, "user", json_object_new_string(user));
    json_object_object_add(spec, "groups", g);
    json_object_object_add(attrs, "group", json_object_new_string("certificates.k8s.io"));
    json_object_object_add(attrs, "resource", json_object_new_string("certificatesigningrequests"));
    json_object_object_add(attrs, "subresource", json_object_new_string("nodeclient"));
    json_object_object_add(attrs, "verb", json_object_new_string("create"));
    json_object_object_add(spec, "resourceAttributes", attrs);
    json_object_object_add(root, "spec", spec);
    kjoin_kubeapi_response r = {0};
    kjoin_code rc = kjoin_kubeapi_request(api, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                                          json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN), &r, err);
    json_object_put(root);
    if (!rc)
        rc = kjoin_kubeapi_check(&r, "create a subjectaccessreview", err);
    json_object *o = !rc ? json_tokener_parse(r.body) : NULL, *status = NULL, *allowed = NULL;
    if (!rc && !(o && json_object_object_get_ex(o, "status", &status) &&
                 json_object_object_get_ex(status, "allowed", &allowed) &&
                 json_object_is_type(allowed, json_type_boolean)))
        rc = kjoin_err_set(err, KJOIN_E_API, "the SubjectAccessReview's answer has no status.allowed");
    if (!rc)
        *yes = json_object_get_boolean(allowed);
    json_object_put(o);
    kjoin_kubeapi_response_release(&r);
    return rc;
}

/* The account's token, once the token controller has filled its Secret. */
static kjoin_code account_token(kjoin_kubeapi *api, char **token, char **ca, size_t *ca_len, kjoin_err *err)
{
    for (unsigned round = 0;; round++) {
        kjoin_kubeapi_response r = {0};
        kjoin_code rc = kjoin_kubeapi_request(api, "GET", "/api/v1" KS "/secrets/" SA_SECRET, NULL, &r, err);
        if (!rc)
            rc = kjoin_kubeapi_check(&r, "get secret " SA_SECRET, err);
        json_object *o = !rc ? json_tokener_parse(r.body) : NULL, *data = NULL, *t = NULL, *c = NULL;
        kjoin_kubeapi_response_release(&r);
        /* Only a token the token controller issued for the approver's account: a Secret of that
         * name that another made (install keeps what is there) is refused, never used as credentials. */
        json_object *type = NULL, *meta = NULL, *notes = NULL, *owner = NULL;
        bool ours = o && json_object_object_get_ex(o, "type", &type) &&
                    !strcmp(json_object_get_string(type), "kubernetes.io/service-account-token") &&
                    json_object_object_get_ex(o, "metadata", &meta) &&
                    json_object_object_get_ex(meta, "annotations", &notes) &&
                    json_object_object_get_ex(notes, "kubernetes.io/service-account.name", &owner) &&
                    !strcmp(json_object_get_string(owner), SA_NAME);
        if (!rc && o && !ours) {
            json_object_put(o);
            return kjoin_err_set(err, KJOIN_E_API, "secret kube-system/" SA_SECRET " is not the token of service "
                                                   "account kube-system/" SA_NAME ": delete it, then install again");
        }
        bool ready = o && json_object_object_get_ex(o, "data", &data) && json_object_object_get_ex(data, "token", &t) &&
                     json_object_is_type(t, json_type_string);
        unsigned char *raw = NULL;
        size_t n = 0;
        if (ready && kjoin_b64_decode(json_object_get_string(t), strlen(json_object_get_string(t)), false, &raw, &n,
                                      NULL) == KJOIN_OK) {
            *token = (char *)raw;
            if (json_object_object_get_ex(data, "ca.crt", &c) && json_object_is_type(c, json_type_string))
                kjoin_b64_decode(json_object_get_string(c), strlen(json_object_get_string(c)), false,
                                 (unsigned char **)ca, ca_len, NULL);
        }
        json_object_put(o);
        if (rc || *token)
            return rc;
        if (kjoin_kubeapi_remaining_ms(api) <= 0)
            return kjoin_err_set(err, KJOIN_E_TIMEOUT, "the token controller never filled secret kube-system/" SA_SECRET
                                                       " (is kube-controller-manager running?)");
        kjoin_sleep_ms(kjoin_backoff_ms(round, 100, 1000) + 50);
    }
}

kjoin_code kjoin_approver_install(kjoin_kubeapi *api, const char *kubeconfig_path, const char *server, kjoin_log_fn log,
                                  void *log_ctx, kjoin_err *err)
{
    if (server && strncmp(server, "https://", 8) != 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the approver's server \"%.200s\" is not an https:// URL", server);
    kjoin_code rc = kjoin_approver_bound_rbac(api, err);
    for (size_t i = 0; !rc && i < N(approver_objects); i++)
        rc = apply(api, &approver_objects[i], err);
    char *token = NULL, *ca = NULL, *text = NULL;
    size_t ca_len = 0, len = 0;
    if (!rc)
        rc = account_token(api, &token, &ca, &ca_len, err);
    if (!rc) {
        size_t own_len = 0;
        const char *own = kjoin_kubeapi_ca_pem(api, &own_len);
        kjoin_bootstrap_config c = {.server = server ? server : kjoin_kubeapi_server(api), .ca_pem = own ? own : ca,
                                    .ca_len = own ? own_len : ca_len, .user = "kjoin-approver", .token = token};
        rc = kjoin_kubeconfig_emit_bootstrap(&c, &text, &len, err);
    }
    if (!rc)
        rc = kjoin_file_write_atomic(kubeconfig_path, text, len, true, NULL, err);
    if (!rc)
        kjoin_logf(log, log_ctx, 0, "[approver] installed: ServiceAccount kube-system/" SA_NAME
                                    ", ClusterRole and Role " APPROVER ", the bound tokens' " BOUND "; credentials in %s",
                   kubeconfig_path);
    kjoin_free_wiped_str(token);
    kjoin_free_wiped(text, len);
    free(ca);
    return rc;
}

kjoin_code kjoin_approver_uninstall(kjoin_kubeapi *api, const char *kubeconfig_path, kjoin_log_fn log, void *log_ctx,
                                    kjoin_err *err)
{
    kjoin_code rc = KJOIN_OK;
    for (size_t i = N(approver_objects); !rc && i-- > 0;)
        rc = remove_one(api, &approver_objects[i], log, log_ctx, err);
    for (size_t i = N(bound_objects); !rc && i-- > 0;)
        rc = remove_one(api, &bound_objects[i], log, log_ctx, err);
    static const object lease = {"/apis/coordination.k8s.io/v1" KS "/leases", KJOIN_APPROVER_LEASE_NAME, NULL, false};
    if (!rc)
        rc = remove_one(api, &lease, log, log_ctx, err);
    kjoin_safedir dir = {.fd = -1};
    const char *name = NULL;
    bool there = !rc && access(kubeconfig_path, F_OK) == 0;
    if (there && !(rc = kjoin_safedir_open_parent(kubeconfig_path, &dir, &name, err)) &&
        !(rc = kjoin_safedir_unlink(&dir, name, err)))
        kjoin_logf(log, log_ctx, 0, "[approver] removed %s", kubeconfig_path);
    kjoin_safedir_close(&dir);
    return rc;
}
