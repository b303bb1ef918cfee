/* What kjoin approver makes of one CertificateSigningRequest: a bound
 * token's CSR for the kubelet's client certificate of exactly its node is
 * approved, every other CSR of a bound token denied with why, and any other
 * requester's never touched (kubeadm's approvals stay the controller
 * manager's). The rules are kube-controller-manager's for a kubelet client
 * CSR (ValidateKubeletClientCSR), plus the binding and the kubelet's key. */
#include <stdio.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <kjoin/private/util.h>
#include <kjoin/report.h>

#include "internal.h"

#define BOOTSTRAP_USER "system:bootstrap:"
#define NODE_CN "system:node:"

/* The condition already on the CSR (Approved, Denied, Failed), or NULL. */
static const char *decided(json_object *csr)
{
    json_object *conds = kjoin_json_at(kjoin_json_at(csr, "status"), "conditions");
    for (size_t i = 0; json_object_is_type(conds, json_type_array) && i < json_object_array_length(conds); i++) {
        const char *t = kjoin_json_str(json_object_array_get_idx(conds, i), "type");
        if (t && (!strcmp(t, "Approved") || !strcmp(t, "Denied") || !strcmp(t, "Failed")))
            return t;
    }
    return NULL;
}

/* The usages are the kubelet's: {digital signature, client auth}, with key
 * encipherment or without, each once. */
static bool kubelet_usages(json_object *usages)
{
    static const char *const allowed[] = {"digital signature", "client auth", "key encipherment"};
    bool seen[3] = {false};
    size_t n = json_object_is_type(usages, json_type_array) ? json_object_array_length(usages) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *u = json_object_array_get_idx(usages, i);
        const char *s = json_object_is_type(u, json_type_string) ? json_object_get_string(u) : "";
        size_t k = 0;
        while (k < 3 && strcmp(s, allowed[k]))
            k++;
        if (k == 3 || seen[k])
            return false;
        seen[k] = true;
    }
    return seen[0] && seen[1];
}

static X509_REQ *parse_request(const char *b64)
{
    unsigned char *pem = NULL;
    size_t len = 0;
    X509_REQ *req = NULL;
    if (b64 && kjoin_b64_decode(b64, strlen(b64), false, &pem, &len, NULL) == KJOIN_OK && len < 64 * 1024) {
        BIO *bio = BIO_new_mem_buf(pem, (int)len);
        req = bio ? PEM_read_bio_X509_REQ(bio, NULL, NULL, NULL) : NULL;
        BIO_free(bio);
    }
    free(pem);
    return req;
}

/* The one value of nid in name into out; false when there is not exactly one. */
static bool one_entry(const X509_NAME *name, int nid, char *out, size_t cap)
{
    int at = X509_NAME_get_index_by_NID(name, nid, -1);
    if (at < 0 || X509_NAME_get_index_by_NID(name, nid, at) >= 0)
        return false;
    const ASN1_STRING *v = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, at));
    int n = ASN1_STRING_length(v);
    if (n < 0 || (size_t)n >= cap || memchr(ASN1_STRING_get0_data(v), '\0', (size_t)n))
        return false;
    memcpy(out, ASN1_STRING_get0_data(v), (size_t)n);
    out[n] = '\0';
    return true;
}

/* Why req is not the kubelet's client CSR for node ("" when it is). */
static void check_request(X509_REQ *req, const char *token_id, const char *node, char *why, size_t cap)
{
    EVP_PKEY *key = X509_REQ_get0_pubkey(req);
    const X509_NAME *subject = X509_REQ_get_subject_name(req);
    char cn[300] = "", org[300] = "", curve[64] = "";
    if (!key || X509_REQ_verify(req, key) != 1) {
        snprintf(why, cap, "token %s is bound to node %s: the request's signature does not verify", token_id, node);
        return;
    }
    if (!EVP_PKEY_is_a(key, "EC") ||
        !EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, curve, sizeof(curve), NULL) ||
        strcmp(curve, "prime256v1") != 0) {
        snprintf(why, cap, "token %s is bound to node %s: the key is not the kubelet's (ECDSA P-256)", token_id, node);
        return;
    }
    if (X509_NAME_entry_count(subject) != 2 || !one_entry(subject, NID_commonName, cn, sizeof(cn)) ||
        !one_entry(subject, NID_organizationName, org, sizeof(org)) || strcmp(org, "system:nodes") != 0 ||
        strncmp(cn, NODE_CN, sizeof(NODE_CN) - 1) != 0) {
        snprintf(why, cap, "token %s is bound to node %s: the subject is not CN=system:node:%s, O=system:nodes",
                 token_id, node, node);
        return;
    }
    if (strcmp(cn + sizeof(NODE_CN) - 1, node) != 0) {
        char asked[120];
        kjoin_printable(asked, sizeof(asked), cn + sizeof(NODE_CN) - 1, false);
        snprintf(why, cap, "token %s is bound to node %s; this CSR asks for %s", token_id, node, asked);
        return;
    }
    STACK_OF(X509_EXTENSION) *exts = X509_REQ_get_extensions(req);
    bool sans = exts && X509v3_get_ext_by_NID(exts, NID_subject_alt_name, -1) >= 0;
    sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
    if (sans)
        snprintf(why, cap, "token %s is bound to node %s: a kubelet client certificate has no subject alternative names",
                 token_id, node);
}

bool kjoin_approver__approved_for(json_object *csr, const char *token_id)
{
    const char *user = kjoin_json_str(kjoin_json_at(csr, "spec"), "username"), *state = decided(csr);
    return user && state && !strcmp(state, "Approved") && !strncmp(user, BOOTSTRAP_USER, sizeof(BOOTSTRAP_USER) - 1) &&
           !strcmp(user + sizeof(BOOTSTRAP_USER) - 1, token_id);
}

bool kjoin_approver__denied_for(json_object *csr, const char *token_id, const char *node, char *reason, size_t cap)
{
    const char *user = kjoin_json_str(kjoin_json_at(csr, "spec"), "username");
    json_object *conds = kjoin_json_at(kjoin_json_at(csr, "status"), "conditions");
    if (!user || strncmp(user, BOOTSTRAP_USER, sizeof(BOOTSTRAP_USER) - 1) != 0 ||
        strcmp(user + sizeof(BOOTSTRAP_USER) - 1, token_id) != 0)
        return false;
    const char *message = NULL;
    for (size_t i = 0; json_object_is_type(conds, json_type_array) && i < json_object_array_length(conds); i++) {
        json_object *c = json_object_array_get_idx(conds, i);
        const char *t = kjoin_json_str(c, "type"), *r = kjoin_json_str(c, "reason");
        if (t && r && !strcmp(t, "Denied") && !strcmp(r, KJOIN_APPROVER_DENIED_REASON))
            message = kjoin_json_str(c, "message");
    }
    X509_REQ *req = message ? parse_request(kjoin_json_str(kjoin_json_at(csr, "spec"), "request")) : NULL;
    char cn[300] = "";
    bool ours = req && one_entry(X509_REQ_get_subject_name(req), NID_commonName, cn, sizeof(cn)) &&
                !strncmp(cn, NODE_CN, sizeof(NODE_CN) - 1) && !strcmp(cn + sizeof(NODE_CN) - 1, node);
    X509_REQ_free(req);
    if (ours)
        kjoin_printable(reason, cap, message, false);
    return ours;
}

void kjoin_approver__decide(json_object *csr, approver_spent_fn spent, void *ctx, approver_decision *out)
{
    memset(out, 0, sizeof(*out));
    json_object *meta = kjoin_json_at(csr, "metadata"), *spec = kjoin_json_at(csr, "spec");
    const char *name = kjoin_json_str(meta, "name"), *user = kjoin_json_str(spec, "username");
    json_object *groups = kjoin_json_at(spec, "groups");
    const char *signer = kjoin_json_str(spec, "signerName");
    if (!name || !user || strncmp(user, BOOTSTRAP_USER, sizeof(BOOTSTRAP_USER) - 1) != 0 ||
        !kjoin_token_id_valid(user + sizeof(BOOTSTRAP_USER) - 1) || !json_object_is_type(groups, json_type_array))
        return; /* not a bootstrap token's: never ours */
    if (signer && !strcmp(signer, KJOIN_REPORT_SIGNER))
        return; /* a failed join's report: the cluster's to read, no one's to sign */
    snprintf(out->name, sizeof(out->name), "%s", name);
    snprintf(out->token_id, sizeof(out->token_id), "%s", user + sizeof(BOOTSTRAP_USER) - 1);
    bool kjoins = false;
    for (size_t i = 0; i < json_object_array_length(groups); i++) {
        json_object *g = json_object_array_get_idx(groups, i);
        if (!json_object_is_type(g, json_type_string))
            continue;
        const char *s = json_object_get_string(g);
        kjoins |= strncmp(s, KJOIN_TOKEN_RESERVED_PREFIX, sizeof(KJOIN_TOKEN_RESERVED_PREFIX) - 1) == 0;
        kjoin_token_binding_add(&out->binding, s, strlen(s));
    }
    const char *state = decided(csr);
    out->approved = state && !strcmp(state, "Approved");
    if (!kjoins || state)
        return; /* another token's (kubeadm's approvals unchanged), or decided already */
    const char *node = out->binding.node, *id = out->token_id;
    char *why = out->reason;
    size_t cap = sizeof(out->reason);
    out->verdict = VERDICT_DENY;
    if (!kjoin_token_binding_valid(&out->binding)) {
        snprintf(why, cap, "token %s carries kjoin's groups but no binding to one node", id);
        return;
    }
    if (!signer || strcmp(signer, APPROVER_SIGNER) != 0) {
        char asked[120];
        kjoin_printable(asked, sizeof(asked), signer ? signer : "none", false);
        snprintf(why, cap, "token %s is bound to node %s: it may ask only for the kubelet's client certificate "
                           "(signer " APPROVER_SIGNER "), not signer %s",
                 id, node, asked);
        return;
    }
    if (!kubelet_usages(kjoin_json_at(spec, "usages"))) {
        snprintf(why, cap, "token %s is bound to node %s: the usages are not a kubelet client certificate's "
                           "(digital signature, client auth; key encipherment allowed)",
                 id, node);
        return;
    }
    X509_REQ *req = parse_request(kjoin_json_str(spec, "request"));
    if (!req) {
        snprintf(why, cap, "token %s is bound to node %s: the request is not a PEM certificate request", id, node);
        return;
    }
    check_request(req, id, node, why, cap);
    X509_REQ_free(req);
    if (*why)
        return;
    if (out->binding.single_use && spent && spent(ctx, id, name)) {
        snprintf(why, cap, "token %s was for one use and has already made node %s", id, node);
        return;
    }
    out->verdict = VERDICT_APPROVE;
    snprintf(why, cap, "token %s is bound to node %s; this CSR is that node's kubelet client certificate", id, node);
}

char *kjoin_approver__approval_body(json_object *csr, const approver_decision *d)
{
    json_object *copy = NULL;
    if (json_object_deep_copy(csr, &copy, NULL) != 0)
        return NULL;
    json_object *status = kjoin_json_at(copy, "status"), *conds = NULL;
    if (!json_object_is_type(status, json_type_object)) {
        status = json_object_new_object();
        json_object_object_add(copy, "status", status);
    }
    conds = kjoin_json_at(status, "conditions");
    if (!json_object_is_type(conds, json_type_array)) {
        conds = json_object_new_array();
        json_object_object_add(status, "conditions", conds);
    }
    bool approve = d->verdict == VERDICT_APPROVE;
    json_object *c = json_object_new_object();
    json_object_object_add(c, "type", json_object_new_string(approve ? "Approved" : "Denied"));
    json_object_object_add(c, "status", json_object_new_string("True"));
    json_object_object_add(c, "reason", json_object_new_string(approve ? KJOIN_APPROVER_APPROVED_REASON
                                                                   : KJOIN_APPROVER_DENIED_REASON));
    json_object_object_add(c, "message", json_object_new_string(d->reason));
    json_object_array_add(conds, c);
    const char *text = json_object_to_json_string_ext(copy, JSON_C_TO_STRING_PLAIN);
    char *body = text ? strdup(text) : NULL;
    json_object_put(copy);
    return body;
}
