#include <stdio.h>
#include <string.h>

#include <kjoin/kubeconfig.h>

#include "testutil.h"

static const char ca_b64[] = "UEVNCg=="; /* "PEM\n" */

/* A kubeconfig whose clusters section is given. */
static char *doc(const char *clusters)
{
    static char buf[4096];
    snprintf(buf, sizeof(buf), "apiVersion: v1\n%s\nkind: Config\nusers: null\n", clusters);
    return buf;
}

static void test_real_cluster_info_kubeconfig(void **state)
{
    (void)state;
    size_t len, ca_len;
    char *yaml = tu_read("testdata/real-apiserver/cluster-info.kubeconfig-content.txt", &len);
    char *ca = tu_read("testdata/real-apiserver/ca.crt", &ca_len);
    kjoin_cluster c;
    assert_int_equal(kjoin_kubeconfig_parse_cluster(yaml, len, &c, NULL), KJOIN_OK);
    assert_string_equal(c.name, "");
    assert_string_equal(c.server, "https://127.0.0.1:6443");
    assert_int_equal(c.ca_len, ca_len);
    assert_memory_equal(c.ca_pem, ca, ca_len);
    kjoin_cluster_release(&c);
    free(yaml);
    free(ca);
}

static void test_accepted_forms(void **state)
{
    (void)state;
    const char *good[] = {
        "clusters:\n- cluster:\n    certificate-authority-data: UEVNCg==\n    server: https://a:1\n  name: x",
        "clusters:\n- name: ~\n  cluster: {server: 'https://a:1', certificate-authority-data: \"UEVN\\nCg==\"}",
        "clusters: [{cluster: {server: https://a:1, certificate-authority-data: UEVNCg==}}]",
    };
    for (size_t i = 0; i < TU_LEN(good); i++) {
        kjoin_cluster c;
        kjoin_err err;
        if (kjoin_kubeconfig_parse_cluster(doc(good[i]), strlen(doc(good[i])), &c, &err) != KJOIN_OK)
            fail_msg("case %zu: %s", i, err.msg);
        assert_string_equal(c.server, "https://a:1");
        assert_string_equal((char *)c.ca_pem, "PEM\n");
        kjoin_cluster_release(&c);
    }
    const char *json = "{\"apiVersion\":\"v1\",\"clusters\":[{\"name\":\"\",\"cluster\":{\"server\":\"https://a:1\","
                       "\"certificate-authority-data\":\"UEVNCg==\"}}]}";
    kjoin_cluster c;
    assert_int_equal(kjoin_kubeconfig_parse_cluster(json, strlen(json), &c, NULL), KJOIN_OK);
    kjoin_cluster_release(&c);
}

static void test_rejected_forms(void **state)
{
    (void)state;
    struct {
        const char *clusters, *why;
    } bad[] = {
        {"clusters: []", "exactly one cluster"},
        {"clusters: null", "no list of clusters"},
        {"clusters:\n- cluster: {server: https://a:1, certificate-authority-data: UEVNCg==}\n"
         "- cluster: {server: https://b:1, certificate-authority-data: UEVNCg==}\n  name: b",
         "exactly one cluster, it holds 2"},
        {"clusters:\n- name: x", "no \"cluster\""},
        {"clusters:\n- cluster: {certificate-authority-data: UEVNCg==}", "no https server"},
        {"clusters:\n- cluster: {server: http://a:1, certificate-authority-data: UEVNCg==}", "no https server"},
        {"clusters:\n- cluster: {server: [https://a:1], certificate-authority-data: UEVNCg==}", "no https server"},
        {"clusters:\n- cluster: {server: https://a:1}", "no certificate-authority-data"},
        {"clusters:\n- cluster: {server: https://a:1, certificate-authority-data: '!!!!'}", "base64"},
        {"clusters:\n- cluster: {server: https://a:1, server: https://b:1, certificate-authority-data: UEVNCg==}",
         "duplicate key \"server\""},
        {"clusters:\n- cluster: {server: https://a:1, certificate-authority-data: UEVNCg==}\nclusters: []",
         "duplicate key \"clusters\""},
        {"clusters:\n- cluster: [server]", "expected a mapping"},
        {"clusters:\n- cluster: {server: https://a:1, certificate-authority-data: UEVNCg==}\n  name: [x]",
         "name is not a string"},
        {"clusters: {\n", "YAML error at line"},
    };
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        kjoin_cluster c = {.name = (char *)"untouched"};
        kjoin_err err;
        const char *y = doc(bad[i].clusters);
        assert_int_equal(kjoin_kubeconfig_parse_cluster(y, strlen(y), &c, &err), KJOIN_E_TRUST);
        if (!strstr(err.msg, bad[i].why))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, bad[i].why);
        assert_string_equal(c.name, "untouched");
    }
    const char *not_map[] = {"", "just a string", "- a\n- b", "%%%"};
    for (size_t i = 0; i < TU_LEN(not_map); i++)
        assert_int_equal(kjoin_kubeconfig_parse_cluster(not_map[i], strlen(not_map[i]), &(kjoin_cluster){0}, NULL),
                         KJOIN_E_TRUST);
    (void)ca_b64;
}

static void test_emit_matches_kubeadm_layout(void **state)
{
    (void)state;
    size_t len;
    char *golden = tu_read("testdata/kubeconfig/bootstrap.golden.yaml", &len);
    kjoin_bootstrap_config cfg = {.server = "https://10.0.0.1:6443", .ca_pem = "PEM\n", .ca_len = 4,
                                  .token = "abcdef.0123456789abcdef"};
    char *out = NULL;
    size_t out_len = 0;
    assert_int_equal(kjoin_kubeconfig_emit_bootstrap(&cfg, &out, &out_len, NULL), KJOIN_OK);
    assert_int_equal(out_len, len);
    assert_string_equal(out, golden);
    free(out);
    free(golden);
}

/* What is emitted parses back; names a YAML reader would retype get quotes. */
static void test_emit_round_trip(void **state)
{
    (void)state;
    const char *names[] = {"prod", "true", "NO", "1.5", "null", "~", "a.b-c_d"};
    for (size_t i = 0; i < TU_LEN(names); i++) {
        kjoin_bootstrap_config cfg = {.cluster_name = names[i], .server = "https://[::1]:6443",
                                      .ca_pem = "PEM\n", .ca_len = 4, .token = "abcdef.0123456789abcdef"};
        char *out = NULL;
        size_t n = 0;
        assert_int_equal(kjoin_kubeconfig_emit_bootstrap(&cfg, &out, &n, NULL), KJOIN_OK);
        kjoin_cluster c;
        kjoin_err err;
        if (kjoin_kubeconfig_parse_cluster(out, n, &c, &err) != KJOIN_OK)
            fail_msg("%s: %s\n%s", names[i], err.msg, out);
        assert_string_equal(c.name, names[i]);
        assert_string_equal(c.server, "https://[::1]:6443");
        kjoin_cluster_release(&c);
        free(out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_cluster_info_kubeconfig),
        cmocka_unit_test(test_accepted_forms),
        cmocka_unit_test(test_rejected_forms),
        cmocka_unit_test(test_emit_matches_kubeadm_layout),
        cmocka_unit_test(test_emit_round_trip),
    };
    return cmocka_run_group_tests_name("kubeconfig", tests, NULL, NULL);
}
