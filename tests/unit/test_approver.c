/* Node-bound tokens and kjoin approver's decisions, hostile CSRs among them. */
#include <stdio.h>
#include <string.h>

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <kjoin/private/token.h>
#include <kjoin/private/util.h>

#include "../../pkg/approver/internal.h"
#include <kjoin/report.h>

#include "testutil.h"

static void test_node_group_round_trip(void **state)
{
    (void)state;
    char group[300];
    kjoin_err err;
    assert_int_equal(kjoin_token_node_group("w7.example.com", group, sizeof(group), &err), KJOIN_OK);
    assert_string_equal(group, "system:bootstrappers:kjoin:node:w7:example:com");
    assert_int_equal(kjoin_token_groups_check(group, &err), KJOIN_OK); /* the API server's rule */
    kjoin_token_binding b;
    char list[700];
    snprintf(list, sizeof(list), KJOIN_TOKEN_BOUND_GROUP ",%s," KJOIN_TOKEN_SINGLE_USE_GROUP, group);
    kjoin_token_binding_of(list, &b);
    assert_true(kjoin_token_binding_valid(&b));
    assert_string_equal(b.node, "w7.example.com");
    assert_true(b.single_use);
    /* The longest name a group carries, and one more. */
    char name[300];
    memset(name, 'a', 245);
    name[245] = '\0';
    for (int i = 60; i < 245; i += 61)
        name[i] = '.';
    assert_int_equal(kjoin_token_node_group(name, group, sizeof(group), &err), KJOIN_OK);
    assert_int_equal(kjoin_token_groups_check(group, &err), KJOIN_OK);
    kjoin_token_binding_of(group, &b);
    assert_string_equal(b.node, name);
    name[245] = 'a', name[246] = '\0';
    assert_int_equal(kjoin_token_node_group(name, group, sizeof(group), &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "245"));
    const char *bad[] = {"W7", "w7_", "-w7", "w7.", "a..b", ""};
    for (size_t i = 0; i < TU_LEN(bad); i++)
        if (kjoin_token_node_group(bad[i], group, sizeof(group), &err) != KJOIN_E_USAGE)
            fail_msg("\"%s\" made a group", bad[i]);
}

static void test_binding_needs_exactly_one_node(void **state)
{
    (void)state;
    kjoin_token_binding b;
    const char *invalid[] = {
        "system:bootstrappers:kjoin:node:w7",                                      /* no bound group */
        KJOIN_TOKEN_BOUND_GROUP,                                                   /* no node */
        KJOIN_TOKEN_BOUND_GROUP ",system:bootstrappers:kjoin:node:w7,system:bootstrappers:kjoin:node:w8",
        KJOIN_TOKEN_BOUND_GROUP ",system:bootstrappers:kjoin:node:w7,system:bootstrappers:kjoin:node:w7",
        KJOIN_TOKEN_BOUND_GROUP ",system:bootstrappers:kjoin:node:-w7",            /* no node name */
        KJOIN_TOKEN_BOUND_GROUP ",system:bootstrappers:kjoin:node:w7.x",           /* '.' is never encoded */
        KJOIN_TOKEN_BOUND_GROUP ",system:bootstrappers:kjoin:node:",
    };
    for (size_t i = 0; i < TU_LEN(invalid); i++) {
        kjoin_token_binding_of(invalid[i], &b);
        if (kjoin_token_binding_valid(&b))
            fail_msg("\"%s\" binds %s", invalid[i], b.node);
    }
    kjoin_token_binding_of(KJOIN_TOKEN_KUBEADM_GROUP ",system:bootstrappers:other", &b);
    assert_false(b.bound || b.single_use || b.node_groups);
}

static json_object *secret_data(const char *json)
{
    json_object *o = json_tokener_parse(json);
    assert_non_null(o);
    return o;
}

static char *data_field(json_object *secret, const char *key)
{
    json_object *data = json_object_object_get(secret, "data"), *v = json_object_object_get(data, key);
    if (!v)
        return NULL;
    unsigned char *raw = NULL;
    size_t n = 0;
    assert_int_equal(kjoin_b64_decode(json_object_get_string(v), strlen(json_object_get_string(v)), false, &raw, &n,
                                      NULL), KJOIN_OK);
    return (char *)raw;
}

static void test_secret_of_a_bound_token(void **state)
{
    (void)state;
    kjoin_token_spec s = {.usage_signing = true, .usage_authentication = true, .single_use = true};
    kjoin_err err;
    assert_int_equal(kjoin_token_parse("abcdef.0123456789abcdef", &s.token, &err), KJOIN_OK);
    snprintf(s.bound_node, sizeof(s.bound_node), "w7.example.com");
    snprintf(s.groups, sizeof(s.groups), "system:bootstrappers:site-a");
    char *json = NULL;
    assert_int_equal(kjoin_token_secret_encode(&s, &json, &err), KJOIN_OK);
    json_object *o = secret_data(json);
    char *groups = data_field(o, "auth-extra-groups");
    assert_string_equal(groups, KJOIN_TOKEN_BOUND_GROUP ",system:bootstrappers:kjoin:node:w7:example:com,"
                                KJOIN_TOKEN_SINGLE_USE_GROUP ",system:bootstrappers:site-a");
    json_object *labels = json_object_object_get(json_object_object_get(o, "metadata"), "labels");
    assert_string_equal(json_object_get_string(json_object_object_get(labels, KJOIN_TOKEN_NODE_LABEL)),
                        "w7.example.com");
    assert_string_equal(json_object_get_string(json_object_object_get(labels, KJOIN_TOKEN_BOUND_LABEL)), "true");
    /* read back as token list reads it */
    char list[8192];
    snprintf(list, sizeof(list), "{\"kind\":\"SecretList\",\"items\":[%s]}", json);
    kjoin_token_list l;
    assert_int_equal(kjoin_token_list_decode(list, strlen(list), &l, &err), KJOIN_OK);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.items[0].bound_node, "w7.example.com");
    assert_true(l.items[0].single_use);
    kjoin_token_list_release(&l);
    free(groups);
    json_object_put(o);
    kjoin_free_wiped_str(json);

    /* Refused: kubeadm's auto-approved group beside a binding, kjoin's own
     * groups given by hand, single use without a node. */
    snprintf(s.groups, sizeof(s.groups), "%s", KJOIN_TOKEN_KUBEADM_GROUP);
    assert_int_equal(kjoin_token_secret_encode(&s, &json, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "any node name"));
    snprintf(s.groups, sizeof(s.groups), "system:bootstrappers:kjoin:node:w8");
    s.bound_node[0] = '\0';
    s.single_use = false;
    assert_int_equal(kjoin_token_secret_encode(&s, &json, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "kjoin's own"));
    s.groups[0] = '\0';
    s.single_use = true;
    assert_int_equal(kjoin_token_secret_encode(&s, &json, &err), KJOIN_E_USAGE);
    kjoin_token_clear(&s.token);
}

/* ---- CSRs ------------------------------------------------------------------ */

typedef struct csr_spec {
    const char *cn, *org, *org2, *san_dns;
    bool rsa, p384, tamper, not_pem;
} csr_spec;

static char *csr_pem(const csr_spec *c)
{
    EVP_PKEY *key = c->rsa    ? EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048)
                    : c->p384 ? EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-384")
                              : EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    X509_REQ *req = X509_REQ_new();
    X509_NAME *n = X509_NAME_new();
    if (c->org)
        X509_NAME_add_entry_by_txt(n, "O", MBSTRING_UTF8, (const unsigned char *)c->org, -1, -1, 0);
    if (c->org2)
        X509_NAME_add_entry_by_txt(n, "O", MBSTRING_UTF8, (const unsigned char *)c->org2, -1, -1, 0);
    if (c->cn)
        X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_UTF8, (const unsigned char *)c->cn, -1, -1, 0);
    X509_REQ_set_subject_name(req, n);
    X509_REQ_set_pubkey(req, key);
    if (c->san_dns) {
        STACK_OF(X509_EXTENSION) *exts = sk_X509_EXTENSION_new_null();
        X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, NULL, NID_subject_alt_name, c->san_dns);
        sk_X509_EXTENSION_push(exts, e);
        X509_REQ_add_extensions(req, exts);
        sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
    }
    assert_true(X509_REQ_sign(req, key, EVP_sha256()) > 0);
    if (c->tamper) { /* another subject under the same signature */
        X509_NAME *m = X509_NAME_new();
        X509_NAME_add_entry_by_txt(m, "O", MBSTRING_UTF8, (const unsigned char *)"system:nodes", -1, -1, 0);
        X509_NAME_add_entry_by_txt(m, "CN", MBSTRING_UTF8, (const unsigned char *)"system:node:w7", -1, -1, 0);
        X509_REQ_set_subject_name(req, m);
        X509_NAME_free(m);
    }
    BIO *b = BIO_new(BIO_s_mem());
    PEM_write_bio_X509_REQ(b, req);
    char *data = NULL;
    long len = BIO_get_mem_data(b, &data);
    char *out = kjoin_b64_encode(data, (size_t)len, false);
    BIO_free(b);
    X509_NAME_free(n);
    X509_REQ_free(req);
    EVP_PKEY_free(key);
    return out;
}

#define NODE_GROUPS "\"" KJOIN_TOKEN_BOUND_GROUP "\",\"system:bootstrappers:kjoin:node:w7\""

static json_object *csr(const char *user, const char *groups, const char *signer, const char *usages,
                        const char *request_b64, const char *status)
{
    char *text = NULL;
    assert_true(asprintf(&text,
                         "{\"kind\":\"CertificateSigningRequest\",\"metadata\":{\"name\":\"csr-1\"},\"spec\":{"
                         "\"username\":\"%s\",\"groups\":[%s,\"system:authenticated\"],\"signerName\":\"%s\","
                         "\"usages\":[%s],\"request\":\"%s\"},\"status\":%s}",
                         user, groups, signer, usages, request_b64, status ? status : "{}") > 0);
    json_object *o = json_tokener_parse(text);
    free(text);
    assert_non_null(o);
    return o;
}

static bool never_spent(void *ctx, const char *id, const char *name)
{
    (void)ctx, (void)id, (void)name;
    return false;
}
static bool always_spent(void *ctx, const char *id, const char *name)
{
    (void)ctx, (void)id, (void)name;
    return true;
}

#define KUBELET_USAGES "\"digital signature\",\"client auth\""
#define USER "system:bootstrap:abcdef"
#define SIGNER APPROVER_SIGNER

static approver_decision decide_one(const char *user, const char *groups, const char *signer, const char *usages,
                                    const csr_spec *spec, const char *status, approver_spent_fn spent)
{
    char *req = !spec->not_pem ? csr_pem(spec) : strdup("bm90IGEgcmVxdWVzdA==");
    json_object *o = csr(user, groups, signer, usages, req, status);
    approver_decision d;
    kjoin_approver__decide(o, spent, NULL, &d);
    json_object_put(o);
    free(req);
    return d;
}

static void test_the_bound_nodes_own_csr_is_approved(void **state)
{
    (void)state;
    csr_spec good = {.cn = "system:node:w7", .org = "system:nodes"};
    approver_decision d = decide_one(USER, NODE_GROUPS, SIGNER, KUBELET_USAGES, &good, NULL, never_spent);
    assert_int_equal(d.verdict, VERDICT_APPROVE);
    assert_string_equal(d.token_id, "abcdef");
    /* key encipherment too (older kubelets ask for it), in any order */
    d = decide_one(USER, NODE_GROUPS, SIGNER, "\"client auth\",\"key encipherment\",\"digital signature\"", &good,
                   NULL, never_spent);
    assert_int_equal(d.verdict, VERDICT_APPROVE);
    /* the approval's body carries the condition kubectl shows */
    char *req = csr_pem(&good);
    json_object *o = csr(USER, NODE_GROUPS, SIGNER, KUBELET_USAGES, req, NULL);
    kjoin_approver__decide(o, never_spent, NULL, &d);
    char *body = kjoin_approver__approval_body(o, &d);
    assert_non_null(strstr(body, "\"type\":\"Approved\""));
    assert_non_null(strstr(body, "\"reason\":\"KjoinBoundToken\""));
    free(body);
    json_object_put(o);
    free(req);
}

static void test_every_other_csr_of_a_bound_token_is_denied(void **state)
{
    (void)state;
    struct {
        const char *what, *signer, *usages, *groups, *why;
        csr_spec spec;
    } cases[] = {
        {"another node's name", SIGNER, KUBELET_USAGES, NODE_GROUPS, "token abcdef is bound to node w7; this CSR asks for w8",
         {.cn = "system:node:w8", .org = "system:nodes"}},
        {"the bound name as a prefix", SIGNER, KUBELET_USAGES, NODE_GROUPS, "this CSR asks for w7x",
         {.cn = "system:node:w7x", .org = "system:nodes"}},
        {"the bound name as a label", SIGNER, KUBELET_USAGES, NODE_GROUPS, "this CSR asks for w7.evil",
         {.cn = "system:node:w7.evil", .org = "system:nodes"}},
        {"extra SANs", SIGNER, KUBELET_USAGES, NODE_GROUPS, "no subject alternative names",
         {.cn = "system:node:w7", .org = "system:nodes", .san_dns = "DNS:kubernetes.default"}},
        {"an RSA key", SIGNER, KUBELET_USAGES, NODE_GROUPS, "ECDSA P-256",
         {.cn = "system:node:w7", .org = "system:nodes", .rsa = true}},
        {"a P-384 key", SIGNER, KUBELET_USAGES, NODE_GROUPS, "ECDSA P-256",
         {.cn = "system:node:w7", .org = "system:nodes", .p384 = true}},
        {"client and server usages", SIGNER, KUBELET_USAGES ",\"server auth\"", NODE_GROUPS, "usages",
         {.cn = "system:node:w7", .org = "system:nodes"}},
        {"a usage twice", SIGNER, KUBELET_USAGES ",\"client auth\"", NODE_GROUPS, "usages",
         {.cn = "system:node:w7", .org = "system:nodes"}},
        {"no client auth", SIGNER, "\"digital signature\"", NODE_GROUPS, "usages",
         {.cn = "system:node:w7", .org = "system:nodes"}},
        {"O=system:masters", SIGNER, KUBELET_USAGES, NODE_GROUPS, "the subject",
         {.cn = "system:node:w7", .org = "system:masters"}},
        {"O=system:masters besides", SIGNER, KUBELET_USAGES, NODE_GROUPS, "the subject",
         {.cn = "system:node:w7", .org = "system:nodes", .org2 = "system:masters"}},
        {"no CN", SIGNER, KUBELET_USAGES, NODE_GROUPS, "the subject", {.org = "system:nodes"}},
        {"a subject that is no node", SIGNER, KUBELET_USAGES, NODE_GROUPS, "the subject",
         {.cn = "admin", .org = "system:nodes"}},
        {"another signer", "kubernetes.io/kube-apiserver-client", KUBELET_USAGES, NODE_GROUPS,
         "not signer kubernetes.io/kube-apiserver-client", {.cn = "system:node:w7", .org = "system:nodes"}},
        {"the serving signer", "kubernetes.io/kubelet-serving", "\"digital signature\",\"server auth\"", NODE_GROUPS,
         "not signer", {.cn = "system:node:w7", .org = "system:nodes"}},
        {"a signature that does not verify", SIGNER, KUBELET_USAGES, NODE_GROUPS, "signature",
         {.cn = "system:node:w8", .org = "system:nodes", .tamper = true}},
        {"no PEM request", SIGNER, KUBELET_USAGES, NODE_GROUPS, "not a PEM", {.not_pem = true}},
        {"two node groups", SIGNER, KUBELET_USAGES, NODE_GROUPS ",\"system:bootstrappers:kjoin:node:w8\"",
         "no binding to one node", {.cn = "system:node:w7", .org = "system:nodes"}},
        {"a node group without the bound group", SIGNER, KUBELET_USAGES, "\"system:bootstrappers:kjoin:node:w7\"",
         "no binding", {.cn = "system:node:w7", .org = "system:nodes"}},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        approver_decision d = decide_one(USER, cases[i].groups, cases[i].signer, cases[i].usages,
                                         &cases[i].spec, NULL, never_spent);
        if (d.verdict != VERDICT_DENY || !strstr(d.reason, cases[i].why))
            fail_msg("%s: verdict %d, \"%s\"", cases[i].what, d.verdict, d.reason);
    }
    /* single use: a second CSR once one was approved */
    csr_spec good = {.cn = "system:node:w7", .org = "system:nodes"};
    approver_decision d = decide_one(USER, NODE_GROUPS ",\"" KJOIN_TOKEN_SINGLE_USE_GROUP "\"", SIGNER, KUBELET_USAGES,
                                     &good, NULL, always_spent);
    assert_int_equal(d.verdict, VERDICT_DENY);
    assert_non_null(strstr(d.reason, "one use"));
    /* ... a multi-use bound token may renew its node's bootstrap */
    d = decide_one(USER, NODE_GROUPS, SIGNER, KUBELET_USAGES, &good, NULL, always_spent);
    assert_int_equal(d.verdict, VERDICT_APPROVE);
    /* a failed join's report (kjoin/report.h), of any token: left alone, never denied */
    csr_spec report = {.cn = "kjoin-join-report"};
    d = decide_one(USER, NODE_GROUPS, KJOIN_REPORT_SIGNER, "\"digital signature\"", &report, NULL, never_spent);
    assert_int_equal(d.verdict, VERDICT_IGNORE);
}

static void test_other_requesters_are_never_touched(void **state)
{
    (void)state;
    csr_spec w8 = {.cn = "system:node:w8", .org = "system:nodes"};
    /* kubeadm's token: the controller manager's to approve */
    approver_decision d = decide_one(USER, "\"" KJOIN_TOKEN_KUBEADM_GROUP "\"", SIGNER, KUBELET_USAGES, &w8, NULL,
                                     never_spent);
    assert_int_equal(d.verdict, VERDICT_IGNORE);
    /* a node renewing, an admin, a user claiming a bootstrap token's groups */
    d = decide_one("system:node:w8", "\"system:nodes\"", SIGNER, KUBELET_USAGES, &w8, NULL, never_spent);
    assert_int_equal(d.verdict, VERDICT_IGNORE);
    d = decide_one("kubernetes-admin", NODE_GROUPS, SIGNER, KUBELET_USAGES, &w8, NULL, never_spent);
    assert_int_equal(d.verdict, VERDICT_IGNORE);
    d = decide_one("system:bootstrap:ABCDEF", NODE_GROUPS, SIGNER, KUBELET_USAGES, &w8, NULL, never_spent);
    assert_int_equal(d.verdict, VERDICT_IGNORE);
    /* decided already: approved, denied, failed */
    const char *decided[] = {"{\"conditions\":[{\"type\":\"Approved\",\"status\":\"True\"}]}",
                             "{\"conditions\":[{\"type\":\"Denied\",\"status\":\"True\"}]}",
                             "{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\"}]}"};
    for (size_t i = 0; i < TU_LEN(decided); i++) {
        d = decide_one(USER, NODE_GROUPS, SIGNER, KUBELET_USAGES, &w8, decided[i], never_spent);
        assert_int_equal(d.verdict, VERDICT_IGNORE);
        assert_int_equal(d.approved, i == 0);
    }
    /* no spec, a spec of other types */
    const char *junk[] = {"{}", "{\"metadata\":{\"name\":\"x\"},\"spec\":[]}",
                          "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"username\":7,\"groups\":\"g\"}}",
                          "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"username\":\"" USER "\",\"groups\":{}}}"};
    for (size_t i = 0; i < TU_LEN(junk); i++) {
        json_object *o = json_tokener_parse(junk[i]);
        kjoin_approver__decide(o, never_spent, NULL, &d);
        assert_int_equal(d.verdict, VERDICT_IGNORE);
        json_object_put(o);
    }
}

/* What the joining node reads of a denial: only its own token's, for its own name. */
static void test_a_denial_is_found_for_its_token_and_node_only(void **state)
{
    (void)state;
    csr_spec w8 = {.cn = "system:node:w8", .org = "system:nodes"};
    char *req = csr_pem(&w8), reason[200];
    const char *denied = "{\"conditions\":[{\"type\":\"Denied\",\"status\":\"True\",\"reason\":"
                         "\"KjoinTokenBound\",\"message\":\"token abcdef is bound to node w7; this CSR asks for w8\"}]}";
    json_object *o = csr(USER, NODE_GROUPS, SIGNER, KUBELET_USAGES, req, denied);
    assert_true(kjoin_approver__denied_for(o, "abcdef", "w8", reason, sizeof(reason)));
    assert_string_equal(reason, "token abcdef is bound to node w7; this CSR asks for w8");
    assert_false(kjoin_approver__denied_for(o, "abcdeg", "w8", reason, sizeof(reason))); /* another token */
    assert_false(kjoin_approver__denied_for(o, "abcdef", "w7", reason, sizeof(reason))); /* another node */
    json_object_put(o);
    /* denied by someone else, or pending: not the approver's denial */
    const char *other = "{\"conditions\":[{\"type\":\"Denied\",\"status\":\"True\",\"reason\":\"AdminDenied\"}]}";
    o = csr(USER, NODE_GROUPS, SIGNER, KUBELET_USAGES, req, other);
    assert_false(kjoin_approver__denied_for(o, "abcdef", "w8", reason, sizeof(reason)));
    json_object_put(o);
    o = csr(USER, NODE_GROUPS, SIGNER, KUBELET_USAGES, req, NULL);
    assert_false(kjoin_approver__denied_for(o, "abcdef", "w8", reason, sizeof(reason)));
    json_object_put(o);
    free(req);
}

static void test_lease_round_trip_and_hostile_leases(void **state)
{
    (void)state;
    lease_record r = {.duration_s = 15, .transitions = 3};
    snprintf(r.holder, sizeof(r.holder), "cp-1_0d2f");
    kjoin_approver__micro_time(1700000000123, r.renew_time);
    assert_string_equal(r.renew_time, "2023-11-14T22:13:20.123000Z");
    snprintf(r.acquire_time, sizeof(r.acquire_time), "%s", r.renew_time);
    snprintf(r.resource_version, sizeof(r.resource_version), "42");
    char *body = kjoin_approver__lease_body("kube-system", "kjoin-approver", &r);
    lease_record back;
    assert_true(kjoin_approver__lease_parse(body, strlen(body), &back));
    assert_string_equal(back.holder, r.holder);
    assert_int_equal(back.duration_s, 15);
    assert_int_equal(back.transitions, 3);
    assert_string_equal(back.resource_version, "42");
    assert_string_equal(back.renew_time, r.renew_time);
    free(body);
    const char *hostile[] = {
        "{}", "[]", "{\"kind\":\"Lease\"}", "{\"kind\":\"Secret\",\"metadata\":{}}",
        "{\"kind\":\"Lease\",\"metadata\":{},\"spec\":{\"holderIdentity\":7}}",
        "{\"kind\":\"Lease\",\"metadata\":{},\"spec\":{\"leaseDurationSeconds\":\"15\"}}",
        "{\"kind\":\"Lease\",\"metadata\":{},\"spec\":{\"leaseDurationSeconds\":-1}}",
        "{\"kind\":\"Lease\",\"metadata\":{\"resourceVersion\":[]}}",
    };
    for (size_t i = 0; i < TU_LEN(hostile); i++)
        if (kjoin_approver__lease_parse(hostile[i], strlen(hostile[i]), &back))
            fail_msg("took \"%s\" for a Lease", hostile[i]);
    /* a Lease no one holds yet */
    const char *empty = "{\"kind\":\"Lease\",\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{}}";
    assert_true(kjoin_approver__lease_parse(empty, strlen(empty), &back));
    assert_string_equal(back.holder, "");
}

/* Leader election as client-go's: who writes the Lease, and what. */
static void test_lease_taken_renewed_and_waited_for(void **state)
{
    (void)state;
    lease_record want, seen = {.duration_s = 15, .transitions = 4};
    const char *stamp = "2026-12-06T15:00:00.000000Z";
    /* none yet: made, held by this one */
    assert_true(kjoin_approver__lease_next(NULL, 0, 1000, "b", 15, stamp, &want));
    assert_string_equal(want.holder, "b");
    assert_int_equal(want.transitions, 0);
    assert_string_equal(want.resource_version, "");
    /* a's, renewed 14.9 s ago as b saw it: b waits */
    snprintf(seen.holder, sizeof(seen.holder), "a");
    snprintf(seen.acquire_time, sizeof(seen.acquire_time), "2026-12-06T14:00:00.000000Z");
    snprintf(seen.resource_version, sizeof(seen.resource_version), "41");
    assert_false(kjoin_approver__lease_next(&seen, 100000, 114900, "b", 15, stamp, &want));
    /* ... silent for its whole duration: b takes it, a new tenure */
    assert_true(kjoin_approver__lease_next(&seen, 100000, 115000, "b", 15, stamp, &want));
    assert_string_equal(want.holder, "b");
    assert_int_equal(want.transitions, 5);
    assert_string_equal(want.acquire_time, stamp);
    assert_string_equal(want.resource_version, "41"); /* the update names what was read */
    /* its own: renewed, the tenure kept, at once */
    assert_true(kjoin_approver__lease_next(&seen, 100000, 100001, "a", 15, stamp, &want));
    assert_int_equal(want.transitions, 4);
    assert_string_equal(want.acquire_time, "2026-12-06T14:00:00.000000Z");
    assert_string_equal(want.renew_time, stamp);
    /* given up (no holder): taken at once */
    seen.holder[0] = '\0';
    seen.duration_s = 1;
    assert_true(kjoin_approver__lease_next(&seen, 100000, 100001, "b", 15, stamp, &want));
    assert_int_equal(want.transitions, 5);
    /* a duration of 0 counts as a second, never as "always expired" or "never" */
    snprintf(seen.holder, sizeof(seen.holder), "a");
    seen.duration_s = 0;
    assert_false(kjoin_approver__lease_next(&seen, 100000, 100999, "b", 15, stamp, &want));
    assert_true(kjoin_approver__lease_next(&seen, 100000, 101000, "b", 15, stamp, &want));
}

/* Whether a Lease is held now, read against the API server's clock: a
 * reader whose own clock is off reads it right when given the server's. */
static void test_lease_current_by_the_servers_clock(void **state)
{
    (void)state;
    lease_record r = {.duration_s = 15};
    snprintf(r.holder, sizeof(r.holder), "cp-1_0d2f");
    snprintf(r.renew_time, sizeof(r.renew_time), "2026-12-06T15:00:00.500000Z");
    const int64_t renewed = 1796569200; /* 2026-12-06T15:00:00Z */
    assert_true(kjoin_approver__lease_current(&r, renewed + 10));
    assert_true(kjoin_approver__lease_current(&r, renewed + 16)); /* its duration, the fraction dropped */
    assert_false(kjoin_approver__lease_current(&r, renewed + 17));
    assert_true(kjoin_approver__lease_current(&r, renewed - 3600)); /* renewed "later" than now: current */
    /* the same Lease read by a machine two hours ahead: not held by its own clock */
    assert_false(kjoin_approver__lease_current(&r, renewed + 10 + 7200));
    /* no holder, no renewal, a renewal that is no time */
    r.holder[0] = '\0';
    assert_false(kjoin_approver__lease_current(&r, renewed));
    snprintf(r.holder, sizeof(r.holder), "a");
    r.renew_time[0] = '\0';
    assert_false(kjoin_approver__lease_current(&r, renewed));
    snprintf(r.renew_time, sizeof(r.renew_time), "yesterday");
    assert_false(kjoin_approver__lease_current(&r, renewed));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_group_round_trip),
        cmocka_unit_test(test_binding_needs_exactly_one_node),
        cmocka_unit_test(test_secret_of_a_bound_token),
        cmocka_unit_test(test_the_bound_nodes_own_csr_is_approved),
        cmocka_unit_test(test_every_other_csr_of_a_bound_token_is_denied),
        cmocka_unit_test(test_other_requesters_are_never_touched),
        cmocka_unit_test(test_a_denial_is_found_for_its_token_and_node_only),
        cmocka_unit_test(test_lease_round_trip_and_hostile_leases),
        cmocka_unit_test(test_lease_current_by_the_servers_clock),
        cmocka_unit_test(test_lease_taken_renewed_and_waited_for),
    };
    return cmocka_run_group_tests_name("approver", tests, NULL, NULL);
}
