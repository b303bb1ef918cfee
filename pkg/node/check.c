/* kjoin join --check: whether the join would succeed, asked of the cluster
 * with the bootstrap identity, nothing written or started. */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/x509.h>

#include <kjoin/private/approver.h>
#include <kjoin/private/kubeapi.h>
#include <kjoin/private/node.h>
#include <kjoin/private/token.h>

#include "internal.h"
#include "../certs/x509.h"

static void problem(kjoin_join_check *c, kjoin_code rc, kjoin_code *first, const char *what)
{
    size_t used = strlen(c->problems);
    if (!*first)
        *first = rc;
    snprintf(c->problems + used, sizeof(c->problems) - used, "%s%s", used ? "; " : "", what);
}

kjoin_code kjoin_join_check_cluster(kjoin_kubeapi *api, const char *node_name, const char *ca_pem, size_t ca_len,
                                    kjoin_join_check *out, kjoin_err *err)
{
    kjoin_code first = KJOIN_OK, rc;
    kjoin_kubeapi_response resp;
    kjoin_err e;
    char path[512], what[600];
    memset(out, 0, sizeof(*out));
    /* The token: the API server authenticates it (401: it does not). */
    int minor = 0; /* the release, from the same answer */
    if (!(rc = kjoin_kubeapi_request(api, "GET", "/version", NULL, &resp, &e))) {
        out->token_valid = resp.status != 401;
        minor = resp.status == 200 ? kjoin_kubeapi_version_minor(resp.body, resp.len) : 0;
        kjoin_kubeapi_response_release(&resp);
    }
    if (!out->token_valid)
        problem(out, rc ? rc : KJOIN_E_TOKEN_REJECTED, &first,
                rc ? e.msg : "the API server rejects the token (HTTP 401): expired, deleted or never created");
    /* The node's name: no Ready Node of it. */
    json_object *node = NULL;
    snprintf(path, sizeof(path), "/api/v1/nodes/%s", node_name);
    snprintf(what, sizeof(what), "get node %s", node_name);
    if ((rc = kjoin_node__get_json(api, path, what, &node, &e)))
        problem(out, rc, &first, e.msg);
    else if (!(out->node_name_free = !kjoin_node__ready_of(node))) {
        snprintf(what, sizeof(what), "a Node named %.254s is Ready in the cluster already", node_name);
        problem(out, KJOIN_E_USAGE, &first, what);
    }
    json_object_put(node);
    /* The kubelet's configuration kubelet-start writes, named by the cluster's kubeadm release (read as
     * kubelet-start reads it). */
    kjoin_cluster_configuration cc;
    bool cc_found = false;
    if ((rc = kjoin_cluster_configuration_get(api, &cc, &cc_found, &e)))
        problem(out, rc, &first, e.msg);
    else if (cc_found && cc.minor)
        minor = cc.minor;
    json_object *cm = NULL;
    char map[96];
    if ((rc = kjoin_node__get_kubelet_config_map(api, minor, map, sizeof(map), &cm, &e)))
        problem(out, rc, &first, e.msg);
    else if (!(out->kubelet_config = cm != NULL)) {
        snprintf(what, sizeof(what), "the cluster has no configmap kube-system/%s", map);
        problem(out, KJOIN_E_API, &first, what);
    }
    json_object_put(cm);
    /* The kubelet's CSR approved by the cluster itself: the token may create node client CSRs. */
    static const char review[] = "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SelfSubjectAccessReview\","
                                 "\"spec\":{\"resourceAttributes\":{\"group\":\"certificates.k8s.io\",\"resource\":"
                                 "\"certificatesigningrequests\",\"subresource\":\"nodeclient\",\"verb\":\"create\"}}}";
    /* (resp is filled only when the request was made: released only then) */
    if (!(rc = kjoin_kubeapi_request(api, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review,
                                     &resp, &e))) {
        if (!(rc = kjoin_kubeapi_check(&resp, "create a selfsubjectaccessreview", &e))) {
            json_object *o = json_tokener_parse(resp.body), *status, *allowed;
            out->csr_auto_approved = o && json_object_object_get_ex(o, "status", &status) &&
                                     json_object_object_get_ex(status, "allowed", &allowed) &&
                                     json_object_get_boolean(allowed);
            json_object_put(o);
        }
        kjoin_kubeapi_response_release(&resp);
    }
    /* A node-bound token: its binding names this node, and an approver holds the Lease. */
    kjoin_token_binding binding;
    kjoin_code bound_rc = kjoin_approver_check_binding(api, minor, node_name, &binding, NULL, &e);
    if (bound_rc)
        problem(out, bound_rc, &first, e.msg);
    if (!rc && !out->csr_auto_approved) {
        bool held = false;
        kjoin_err le;
        kjoin_code lease_rc = kjoin_approver_holder(api, out->approver, sizeof(out->approver), &held, &le);
        if (!lease_rc && held)
            out->csr_approver = true;
        else if (binding.bound)
            problem(out, KJOIN_E_API, &first, lease_rc ? "no kjoin approver has run on the cluster (no Lease "
                                                         "kube-system/" KJOIN_APPROVER_LEASE_NAME "): the kubelet's CSR would wait forever"
                                                       : "no kjoin approver holds Lease kube-system/" KJOIN_APPROVER_LEASE_NAME
                                                         " now: the kubelet's CSR would wait until one does");
        else
            out->approver[0] = '\0';
    }
    if (rc)
        problem(out, rc, &first, e.msg);
    else if (!out->csr_auto_approved && !out->csr_approver && !binding.bound)
        problem(out, KJOIN_E_API, &first, "the cluster does not approve this token's node client CSRs by itself "
                "(no kubeadm:node-autoapprove-bootstrap): the kubelet's CSR would wait for kubectl certificate approve");
    /* The clock: within the cluster CA's validity, or no certificate verifies. */
    STACK_OF(X509) *cas = ca_pem ? kjoin_certs__parse_certs(ca_pem, ca_len) : NULL;
    X509 *ca = cas && sk_X509_num(cas) > 0 ? sk_X509_value(cas, 0) : NULL;
    out->clock_ok = ca && X509_cmp_current_time(X509_get0_notBefore(ca)) < 0 &&
                    X509_cmp_current_time(X509_get0_notAfter(ca)) > 0;
    sk_X509_pop_free(cas, X509_free);
    if (!out->clock_ok)
        problem(out, KJOIN_E_TRUST, &first, "this machine's clock is outside the cluster CA's validity (set the clock: "
                "timedatectl, chrony)");
    if (first)
        return kjoin_err_set(err, first, "the join would not succeed: %s", out->problems);
    return KJOIN_OK;
}
