/* Join reports: a failed join's reason kept in the cluster as a
 * CertificateSigningRequest no one signs, and read back for the admin. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <kjoin/private/bootstrap.h>
#include <kjoin/private/report.h>
#include <kjoin/private/util.h>
#include <kjoin/approver.h>

#define CSRS "/apis/certificates.k8s.io/v1/certificatesigningrequests"
#define NAME_PREFIX "kjoin-report-"
#define LIST_MAX (32 << 20) /* a cluster's CSRs: thousands of a few KiB */
#define ANNOTATION(x) "kjoin.io/" x
#define BOOTSTRAP_USER "system:bootstrap:"

/* text as a report carries it: tokens and 64-hex keys masked, control
 * characters shown as "?", cut to cap. */
static void shown(char *out, size_t cap, const char *text)
{
    char raw[4096];
    snprintf(raw, sizeof(raw), "%s", text ? text : "");
    kjoin_mask_keys(raw);
    kjoin_printable(out, cap, raw, false);
}

static void annotate(json_object *a, const char *key, const char *value, size_t cap)
{
    char *v = malloc(cap);
    if (!v)
        return;
    shown(v, cap, value);
    json_object_object_add(a, key, json_object_new_string(v));
    free(v);
}

json_object *kjoin_join_report_object(const kjoin_join_report *r)
{
    kjoin_err err;
    char *csr = kjoin_bootstrap_throwaway_csr("kjoin-join-report", &err);
    char *request = csr ? kjoin_b64_encode(csr, strlen(csr), false) : NULL;
    free(csr);
    if (!request)
        return NULL;
    char name[sizeof(r->name)], code[16];
    snprintf(name, sizeof(name), NAME_PREFIX "%.64s", r->join_id);
    snprintf(code, sizeof(code), "%d", r->exit_code);
    json_object *o = json_object_new_object(), *meta = json_object_new_object(), *labels = json_object_new_object(),
                *notes = json_object_new_object(), *spec = json_object_new_object(), *usages = json_object_new_array();
    json_object_object_add(o, "apiVersion", json_object_new_string("certificates.k8s.io/v1"));
    json_object_object_add(o, "kind", json_object_new_string("CertificateSigningRequest"));
    json_object_object_add(meta, "name", json_object_new_string(name));
    json_object_object_add(labels, KJOIN_REPORT_LABEL, json_object_new_string("true"));
    json_object_object_add(meta, "labels", labels);
    annotate(notes, ANNOTATION("join-id"), r->join_id, sizeof(r->join_id));
    annotate(notes, ANNOTATION("node"), r->node, sizeof(r->node));
    annotate(notes, ANNOTATION("phase"), r->phase, sizeof(r->phase));
    annotate(notes, ANNOTATION("exit-code"), code, sizeof(code));
    annotate(notes, ANNOTATION("reason"), r->reason, sizeof(r->reason));
    if (*r->kubelet)
        annotate(notes, ANNOTATION("kubelet"), r->kubelet, sizeof(r->kubelet));
    annotate(notes, ANNOTATION("version"), r->version, sizeof(r->version));
    json_object_object_add(meta, "annotations", notes);
    json_object_object_add(o, "metadata", meta);
    json_object_object_add(spec, "request", json_object_new_string(request));
    json_object_object_add(spec, "signerName", json_object_new_string(KJOIN_REPORT_SIGNER));
    json_object_array_add(usages, json_object_new_string("digital signature"));
    json_object_object_add(spec, "usages", usages);
    json_object_object_add(o, "spec", spec);
    free(request);
    return o;
}

kjoin_code kjoin_join_report_file(kjoin_kubeapi *api, const kjoin_join_report *r, kjoin_err *err)
{
    if (!*r->join_id)
        return kjoin_err_set(err, KJOIN_E_USAGE, "a join report needs the join's ID");
    json_object *o = kjoin_join_report_object(r);
    if (!o)
        return kjoin_err_set(err, KJOIN_E_OTHER, "cannot make the join report");
    kjoin_kubeapi_response resp = {0};
    kjoin_code rc = kjoin_kubeapi_request(api, "POST", CSRS, json_object_to_json_string(o), &resp, err);
    json_object_put(o);
    if (!rc && resp.status != 409) /* 409: this run's report is there already */
        rc = kjoin_kubeapi_check(&resp, "create the join report (a certificatesigningrequest)", err);
    kjoin_kubeapi_response_release(&resp);
    return rc;
}

static int64_t seconds_of(const char *rfc3339)
{
    struct tm tm = {0};
    const char *end = rfc3339 ? strptime(rfc3339, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    return end && *end == 'Z' && !end[1] ? (int64_t)timegm(&tm) : 0;
}

/* One CSR of the list: true and *r filled when it is a report (of node, when
 * given). */
static bool report_of(json_object *csr, const char *node, kjoin_join_report *r)
{
    json_object *meta = kjoin_json_obj(csr, "metadata"), *spec = kjoin_json_obj(csr, "spec");
    json_object *labels = kjoin_json_obj(meta, "labels"), *notes = kjoin_json_obj(meta, "annotations");
    const char *signer = kjoin_json_str(spec, "signerName"), *name = kjoin_json_str(meta, "name");
    if (!signer || strcmp(signer, KJOIN_REPORT_SIGNER) || !kjoin_json_str(labels, KJOIN_REPORT_LABEL) || !name)
        return false;
    const char *who = kjoin_json_str(notes, ANNOTATION("node"));
    if (node && (!who || strcmp(who, node)))
        return false;
    memset(r, 0, sizeof(*r));
    shown(r->name, sizeof(r->name), name);
    shown(r->join_id, sizeof(r->join_id), kjoin_json_str(notes, ANNOTATION("join-id")));
    shown(r->node, sizeof(r->node), who);
    shown(r->phase, sizeof(r->phase), kjoin_json_str(notes, ANNOTATION("phase")));
    shown(r->reason, sizeof(r->reason), kjoin_json_str(notes, ANNOTATION("reason")));
    shown(r->kubelet, sizeof(r->kubelet), kjoin_json_str(notes, ANNOTATION("kubelet")));
    shown(r->version, sizeof(r->version), kjoin_json_str(notes, ANNOTATION("version")));
    /* who filed it, as the API server authenticated it (the rest is the filer's word) */
    const char *user = kjoin_json_str(spec, "username");
    if (user && !strncmp(user, BOOTSTRAP_USER, sizeof(BOOTSTRAP_USER) - 1))
        shown(r->token_id, sizeof(r->token_id), user + sizeof(BOOTSTRAP_USER) - 1);
    const char *code = kjoin_json_str(notes, ANNOTATION("exit-code"));
    char *end = NULL;
    long c = code ? strtol(code, &end, 10) : -1;
    r->exit_code = code && *code && !*end && c >= 0 && c < 256 ? (int)c : -1;
    r->created = seconds_of(kjoin_json_str(meta, "creationTimestamp"));
    return true;
}

/* The name a CSR's request asks for: its subject's CN without the kubelet's
 * "system:node:"; "" when the request is no PEM CSR. */
static void asked_name(const char *request_b64, char *out, size_t cap)
{
    unsigned char *pem = NULL;
    size_t len = 0;
    char cn[300] = "";
    *out = '\0';
    if (!request_b64 || kjoin_b64_decode(request_b64, strlen(request_b64), false, &pem, &len, NULL) || len > 1 << 16) {
        free(pem);
        return;
    }
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    X509_REQ *req = bio ? PEM_read_bio_X509_REQ(bio, NULL, NULL, NULL) : NULL;
    if (req && X509_NAME_get_text_by_NID(X509_REQ_get_subject_name(req), NID_commonName, cn, sizeof(cn)) > 0)
        shown(out, cap, strncmp(cn, "system:node:", 12) ? cn : cn + 12);
    X509_REQ_free(req);
    BIO_free(bio);
    free(pem);
    ERR_clear_error();
}

/* A CSR kjoin approver denied (a node-bound token's CSR for another node,
 * a spent single-use token's): the approver's report, its message the
 * condition's. */
static bool denial_of(json_object *csr, const char *node, kjoin_join_report *r)
{
    json_object *meta = kjoin_json_obj(csr, "metadata"), *spec = kjoin_json_obj(csr, "spec"),
                *conds = kjoin_json_at(kjoin_json_obj(csr, "status"), "conditions");
    const char *message = NULL, *name = kjoin_json_str(meta, "name"), *user = kjoin_json_str(spec, "username");
    if (!name || !json_object_is_type(conds, json_type_array))
        return false;
    for (size_t i = 0; !message && i < json_object_array_length(conds); i++) {
        json_object *c = json_object_array_get_idx(conds, i);
        const char *type = kjoin_json_str(c, "type"), *reason = kjoin_json_str(c, "reason");
        if (type && reason && !strcmp(type, "Denied") && !strcmp(reason, KJOIN_APPROVER_DENIED_REASON))
            message = kjoin_json_str(c, "message") ? kjoin_json_str(c, "message") : "";
    }
    if (!message)
        return false;
    memset(r, 0, sizeof(*r));
    asked_name(kjoin_json_str(spec, "request"), r->node, sizeof(r->node));
    if (node && strcmp(r->node, node))
        return false;
    shown(r->name, sizeof(r->name), name);
    snprintf(r->phase, sizeof(r->phase), "approver");
    r->exit_code = KJOIN_E_TOKEN_REJECTED; /* what a kjoin join over this CSR exits with */
    shown(r->reason, sizeof(r->reason), message);
    if (user && !strncmp(user, BOOTSTRAP_USER, sizeof(BOOTSTRAP_USER) - 1))
        shown(r->token_id, sizeof(r->token_id), user + sizeof(BOOTSTRAP_USER) - 1);
    r->created = seconds_of(kjoin_json_str(meta, "creationTimestamp"));
    return true;
}

static int newest_first(const void *a, const void *b)
{
    const kjoin_join_report *x = a, *y = b;
    return x->created != y->created ? (x->created < y->created ? 1 : -1) : strcmp(x->name, y->name);
}

/* One page of the list (the API's answer, untrusted): its reports appended
 * to out, its resourceVersion kept, and the token of the next page into
 * next ("" on the last; NULL: not asked). */
static kjoin_code decode_page(const char *json, size_t len, const char *node, kjoin_join_reports *out, char *next,
                              size_t next_cap, kjoin_err *err)
{
    json_tokener *tok = len <= LIST_MAX ? json_tokener_new_ex(64) : NULL;
    json_object *root = tok ? json_tokener_parse_ex(tok, json, (int)len) : NULL;
    bool whole = root && (size_t)json_tokener_get_parse_end(tok) == len;
    json_tokener_free(tok);
    json_object *items = kjoin_json_at(root, "items"), *meta = kjoin_json_obj(root, "metadata");
    const char *kind = kjoin_json_str(root, "kind"), *more = kjoin_json_str(meta, "continue");
    kjoin_code rc = KJOIN_OK;
    if (!whole || !kind || strcmp(kind, "CertificateSigningRequestList") || !json_object_is_type(items, json_type_array))
        rc = kjoin_err_set(err, KJOIN_E_API, "the API server's answer is not a list of certificate signing requests");
    else if (next && more && strlen(more) >= next_cap)
        rc = kjoin_err_set(err, KJOIN_E_API, "the API server's next page is named by a token too long to ask for");
    size_t n = rc ? 0 : json_object_array_length(items);
    kjoin_join_report *grown = rc ? NULL : realloc(out->items, (out->n + n + 1) * sizeof(*out->items));
    if (!rc && !grown)
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    if (grown)
        out->items = grown;
    for (size_t i = 0; !rc && i < n; i++) {
        json_object *csr = json_object_array_get_idx(items, i);
        out->n += report_of(csr, node, &out->items[out->n]) || denial_of(csr, node, &out->items[out->n]);
    }
    if (!rc)
        shown(out->resource_version, sizeof(out->resource_version), kjoin_json_str(meta, "resourceVersion"));
    if (!rc && next)
        snprintf(next, next_cap, "%s", more ? more : "");
    json_object_put(root);
    return rc;
}

kjoin_code kjoin_join_reports_decode(const char *json, size_t len, const char *node, kjoin_join_reports *out,
                                     kjoin_err *err)
{
    memset(out, 0, sizeof(*out));
    kjoin_code rc = decode_page(json, len, node, out, NULL, 0, err);
    if (rc)
        kjoin_join_reports_release(out);
    else
        qsort(out->items, out->n, sizeof(*out->items), newest_first);
    return rc;
}

/* A token as a query value: every byte but RFC 3986's unreserved ones
 * percent-encoded (a continue token is base64: '+', '/', '='). */
static void query_value(const char *in, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *c = (const unsigned char *)in; *c && o + 4 < cap; c++) {
        if ((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || strchr("-._~", *c)) {
            out[o++] = (char)*c;
        } else {
            out[o++] = '%', out[o++] = hex[*c >> 4], out[o++] = hex[*c & 15];
        }
    }
    out[o] = '\0';
}

#define PAGE "100" /* CSRs a page: well under the API client's 1 MiB body */
#define PAGES_MAX 10000

kjoin_code kjoin_join_reports_list(kjoin_kubeapi *api, const char *node, kjoin_join_reports *out, kjoin_err *err)
{
    char next[1024] = "", asked[sizeof(next)] = "", path[sizeof(next) * 3 + 128];
    kjoin_code rc = KJOIN_OK;
    memset(out, 0, sizeof(*out));
    /* all of them (the approver's denials carry no label), a page at a time */
    for (size_t page = 0; !rc; page++) {
        char token[sizeof(next) * 3];
        query_value(next, token, sizeof(token));
        snprintf(path, sizeof(path), CSRS "?limit=" PAGE "%s%s", *next ? "&continue=" : "", token);
        kjoin_kubeapi_response resp = {0};
        rc = kjoin_kubeapi_request(api, "GET", path, NULL, &resp, err);
        if (!rc)
            rc = kjoin_kubeapi_check(&resp, "list certificatesigningrequests", err);
        snprintf(asked, sizeof(asked), "%s", next);
        if (!rc)
            rc = decode_page(resp.body, resp.len, node, out, next, sizeof(next), err);
        kjoin_kubeapi_response_release(&resp);
        if (!rc && *next && (!strcmp(next, asked) || page + 1 == PAGES_MAX))
            rc = kjoin_err_set(err, KJOIN_E_API, "the API server's list of certificate signing requests does not end "
                                                 "(a page names itself next, or more than %d pages)", PAGES_MAX);
        if (!rc && !*next)
            break;
    }
    if (rc)
        kjoin_join_reports_release(out);
    else
        qsort(out->items, out->n, sizeof(*out->items), newest_first);
    return rc;
}

void kjoin_join_reports_release(kjoin_join_reports *r)
{
    if (!r)
        return;
    free(r->items);
    memset(r, 0, sizeof(*r));
}
