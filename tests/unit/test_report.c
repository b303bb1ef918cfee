/* Join reports: the CSR a failed join files (a real request no one can
 * use, the texts masked and capped), and the reports read back from a list
 * the API server returns (untrusted). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/pem.h>
#include <openssl/x509.h>

#include <kjoin/private/report.h>
#include <kjoin/private/util.h>

#include "testutil.h"

static const char *note(json_object *csr, const char *key)
{
    json_object *meta = json_object_object_get(csr, "metadata");
    return tu_str(json_object_object_get(meta, "annotations"), key);
}

static void test_report_object(void **state)
{
    (void)state;
    kjoin_join_report r = {.join_id = "0f8e7c52-6f1e-4a59-9d2c-1f1d2c3b4a59", .node = "n1", .phase = "kubelet-wait-bootstrap",
                           .exit_code = 3, .kubelet = "the kubelet's last error: E1207 bad", .version = "0.1.0",
                           .token_id = "abcdef"};
    /* a token, a certificate key, a control character and an escape in the reason: none goes to the cluster */
    snprintf(r.reason, sizeof(r.reason), "token abcdef.0123456789abcdef key %064d \x1b[31mred\x07 end", 7);
    json_object *o = kjoin_join_report_object(&r);
    assert_non_null(o);
    json_object *meta = json_object_object_get(o, "metadata"), *spec = json_object_object_get(o, "spec");
    assert_string_equal(tu_str(o, "kind"), "CertificateSigningRequest");
    assert_string_equal(tu_str(meta, "name"), "kjoin-report-0f8e7c52-6f1e-4a59-9d2c-1f1d2c3b4a59");
    assert_string_equal(tu_str(json_object_object_get(meta, "labels"), KJOIN_REPORT_LABEL), "true");
    assert_string_equal(tu_str(spec, "signerName"), KJOIN_REPORT_SIGNER);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(json_object_object_get(spec, "usages"), 0)),
                        "digital signature");
    assert_string_equal(note(o, "kjoin.io/node"), "n1");
    assert_string_equal(note(o, "kjoin.io/exit-code"), "3");
    assert_string_equal(note(o, "kjoin.io/phase"), "kubelet-wait-bootstrap");
    assert_null(note(o, "kjoin.io/token-id")); /* the API server says who filed it: spec.username */
    const char *reason = note(o, "kjoin.io/reason");
    assert_null(strstr(reason, "0123456789abcdef"));
    assert_non_null(strstr(reason, "abcdef.****************"));
    assert_null(strstr(reason, "0000000000000007"));
    assert_null(strchr(reason, '\x1b'));
    assert_null(strchr(reason, '\x07'));
    assert_non_null(strstr(reason, "end"));
    /* the request: a real CSR (the API server checks its signature), its key gone */
    size_t len = 0;
    unsigned char *pem = NULL;
    const char *request = tu_str(spec, "request");
    assert_int_equal(kjoin_b64_decode(request, strlen(request), false, &pem, &len, NULL), KJOIN_OK);
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    X509_REQ *req = PEM_read_bio_X509_REQ(bio, NULL, NULL, NULL);
    assert_non_null(req);
    EVP_PKEY *key = X509_REQ_get_pubkey(req);
    assert_int_equal(X509_REQ_verify(req, key), 1);
    EVP_PKEY_free(key);
    X509_REQ_free(req);
    BIO_free(bio);
    free(pem);
    json_object_put(o);
    /* a reason longer than a report keeps: cut, never over the API's limits */
    memset(r.reason, 'x', sizeof(r.reason) - 1);
    r.reason[sizeof(r.reason) - 1] = '\0';
    assert_non_null(o = kjoin_join_report_object(&r));
    assert_true(strlen(note(o, "kjoin.io/reason")) < sizeof(r.reason));
    assert_null(note(o, "kjoin.io/nothing"));
    json_object_put(o);
    /* no join ID, no report */
    kjoin_err err;
    r.join_id[0] = '\0';
    assert_int_equal(kjoin_join_report_file(NULL, &r, &err), KJOIN_E_USAGE);
}

static void decode(const char *file, const char *node, kjoin_code want, kjoin_join_reports *out)
{
    char path[200];
    size_t len = 0;
    kjoin_err err;
    snprintf(path, sizeof(path), "testdata/fuzz/reports/%s", file);
    char *text = tu_read(path, &len);
    assert_int_equal(kjoin_join_reports_decode(text, len, node, out, &err), want);
    free(text);
}

static void test_reports_decode(void **state)
{
    (void)state;
    kjoin_join_reports r;
    decode("two.json", NULL, KJOIN_OK, &r);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.items[0].node, "n2"); /* newest first */
    assert_string_equal(r.items[0].phase, "etcd-join");
    assert_int_equal(r.items[0].exit_code, 7);
    assert_string_equal(r.items[1].kubelet, "the kubelet's last error: E1207 x");
    assert_int_equal(r.items[1].created, 1796619600); /* 2026-12-07T05:00:00Z */
    assert_string_equal(r.resource_version, "42");
    kjoin_join_reports_release(&r);
    decode("two.json", "n1", KJOIN_OK, &r);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.items[0].name, "kjoin-report-1111");
    assert_string_equal(r.items[0].token_id, "abcdef");
    kjoin_join_reports_release(&r);
    decode("others.json", NULL, KJOIN_OK, &r); /* the kubelet's CSR; a report without the label */
    assert_int_equal(r.n, 0);
    kjoin_join_reports_release(&r);
    /* a hostile list: every text printable and cut, bad numbers and times unknown, the malformed skipped */
    decode("hostile.json", NULL, KJOIN_OK, &r);
    assert_int_equal(r.n, 2);
    for (size_t i = 0; i < r.n; i++) {
        assert_int_equal(r.items[i].exit_code, -1);
        assert_int_equal(r.items[i].created, 0);
        for (const char *c = r.items[i].node; *c; c++)
            assert_true((unsigned char)*c >= 0x20);
        for (const char *c = r.items[i].reason; *c; c++)
            assert_true((unsigned char)*c >= 0x20 && *c != 0x7f);
    }
    kjoin_join_reports_release(&r);
    /* kjoin approver's denials are reports too: the name the CSR asked for, the condition's message */
    decode("denied.json", NULL, KJOIN_OK, &r);
    assert_int_equal(r.n, 2); /* not the approved one, nor one an admin denied */
    assert_string_equal(r.items[0].name, "node-csr-denied");
    assert_string_equal(r.items[0].node, "w8");
    assert_string_equal(r.items[0].phase, "approver");
    assert_int_equal(r.items[0].exit_code, 8);
    assert_string_equal(r.items[0].reason, "token abcdef is bound to node w7; this CSR asks for w8");
    assert_string_equal(r.items[0].token_id, "abcdef");
    assert_string_equal(r.items[1].node, ""); /* a request that is no CSR: no name */
    kjoin_join_reports_release(&r);
    decode("denied.json", "w8", KJOIN_OK, &r);
    assert_int_equal(r.n, 1);
    kjoin_join_reports_release(&r);
    decode("not-a-list.json", NULL, KJOIN_E_API, &r);
    decode("truncated.json", NULL, KJOIN_E_API, &r);
    kjoin_err err;
    assert_int_equal(kjoin_join_reports_decode("", 0, NULL, &r, &err), KJOIN_E_API);
    assert_int_equal(kjoin_join_reports_decode("{\"kind\":\"CertificateSigningRequestList\",\"items\":{}}", 52, NULL, &r,
                                               &err), KJOIN_E_API);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_object),
        cmocka_unit_test(test_reports_decode),
    };
    return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
