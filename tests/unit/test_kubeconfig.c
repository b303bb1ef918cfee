#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <kjoin/private/kubeconfig.h>

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
        {"clusters:\n- cluster: {server: [https://a:1], certificate-authority-data: UEVNCg==}", "not a string"},
        {"clusters:\n- cluster: {server: https://a:1}", "no certificate-authority-data"},
        {"clusters:\n- cluster: {server: https://a:1, certificate-authority-data: '!!!!'}", "base64"},
        {"clusters:\n- cluster: {server: https://a:1, server: https://b:1, certificate-authority-data: UEVNCg==}",
         "duplicate key \"server\""},
        {"clusters:\n- cluster: {server: https://a:1, certificate-authority-data: UEVNCg==}\nclusters: []",
         "duplicate key \"clusters\""},
        {"clusters:\n- cluster: [server]", "expected a mapping"},
        {"clusters:\n- cluster: {server: https://a:1, certificate-authority-data: UEVNCg==}\n  name: [x]",
         "\"name\" at line 4 is not a string"},
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


/* Quoted exactly as client-go's YAML writer (go-yaml v2) quotes: a string
 * its resolver would read as null, a bool, an int, a float, a timestamp or a
 * base-60 float; anything else plain (the expected forms are go-yaml's). */
static void test_emit_quotes_as_client_go(void **state)
{
    (void)state;
    const struct {
        const char *name, *written;
    } cases[] = {
        {"45mq9d", "45mq9d"}, {"0abcde", "0abcde"}, {"1e5abc", "1e5abc"}, {"0x1g", "0x1g"}, {"yEs", "yEs"},
        {"0x10000000000000000", "0x10000000000000000"}, {"1e", "1e"}, {"2026-13-01", "2026-13-01"},
        {"2026-02-30", "2026-02-30"}, {"1:60", "1:60"}, {"-", "'-'"}, {"a: b", "'a: b'"},
        {"123", "\"123\""}, {"0x1F", "\"0x1F\""}, {"0o17", "\"0o17\""}, {"0b101", "\"0b101\""}, {"017", "\"017\""},
        {"08", "\"08\""}, {"1_000", "\"1_000\""}, {"-12", "\"-12\""}, {"+12", "\"+12\""}, {"1.5", "\"1.5\""},
        {"1e5", "\"1e5\""}, {".5", "\".5\""}, {"1e999", "1e999"}, {"yes", "\"yes\""}, {"Yes", "\"Yes\""},
        {"ON", "\"ON\""}, {"~", "\"~\""}, {".inf", "\".inf\""}, {"2026-11-26", "\"2026-11-26\""},
        {"2026-1-2T3:4:5Z", "\"2026-1-2T3:4:5Z\""}, {"2024-02-29", "\"2024-02-29\""}, {"1:20", "\"1:20\""},
        {"18446744073709551615", "\"18446744073709551615\""}, {"123456.7890123456789012", "\"123456.7890123456789012\""},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        kjoin_bootstrap_config cfg = {.cluster_name = cases[i].name, .server = "https://[::1]:6443",
                                      .ca_pem = "PEM\n", .ca_len = 4, .token = "abcdef.0123456789abcdef"};
        char *out = NULL, want[200];
        size_t n = 0;
        assert_int_equal(kjoin_kubeconfig_emit_bootstrap(&cfg, &out, &n, NULL), KJOIN_OK);
        snprintf(want, sizeof(want), "  name: %s\n", cases[i].written);
        if (!strstr(out, want))
            fail_msg("\"%s\": want %s in\n%s", cases[i].name, want, out);
        free(out);
    }
}

static kjoin_code parse_file(const char *y, const char *dir, kjoin_cluster *c, kjoin_err *err)
{
    return kjoin_kubeconfig_parse_discovery(y, strlen(y), dir, c, err);
}

static void test_discovery_file_choice(void **state)
{
    (void)state;
    struct {
        const char *doc, *server; /* server NULL: refused */
    } cases[] = {
        /* the unnamed cluster wins over current-context */
        {"clusters:\n- {name: a, cluster: {server: https://a:1}}\n- {name: '', cluster: {server: https://u:1}}\n"
         "contexts: [{name: c, context: {cluster: a}}]\ncurrent-context: c\n", "https://u:1"},
        /* else the current context's cluster */
        {"clusters:\n- {name: a, cluster: {server: https://a:1}}\n- {name: b, cluster: {server: https://b:1}}\n"
         "contexts: [{name: c, context: {cluster: b, user: nobody}}]\ncurrent-context: c\n", "https://b:1"},
        /* a single named cluster with no context: kubeadm refuses it too */
        {"clusters:\n- {name: a, cluster: {server: https://a:1}}\n", NULL},
        /* two named clusters and no current-context */
        {"clusters:\n- {name: a, cluster: {server: https://a:1}}\n- {name: b, cluster: {server: https://b:1}}\n", NULL},
        /* current-context names a missing context */
        {"clusters:\n- {name: a, cluster: {server: https://a:1}}\ncurrent-context: gone\n", NULL},
        {"clusters: []\n", NULL},
        {"clusters:\n- {name: '', cluster: {server: https://a:1, insecure-skip-tls-verify: true}}\n", NULL},
        {"clusters:\n- {name: '', cluster: {server: https://a:1, certificate-authority-data: UEVNCg==, "
         "certificate-authority: ca.crt}}\n", NULL},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        kjoin_cluster c = {0};
        kjoin_err err;
        kjoin_code rc = parse_file(cases[i].doc, "/nonexistent", &c, &err);
        if (cases[i].server) {
            if (rc != KJOIN_OK)
                fail_msg("case %zu: %s", i, err.msg);
            assert_string_equal(c.server, cases[i].server);
            assert_null(c.ca_pem);
        } else if (rc != KJOIN_E_TRUST) {
            fail_msg("case %zu accepted", i);
        }
        kjoin_cluster_release(&c);
    }
}

static void test_discovery_file_credentials_refused(void **state)
{
    (void)state;
    const char *fields[] = {"token: x", "tokenFile: /t", "client-certificate: /c", "client-certificate-data: UEVNCg==",
                            "client-key: /k", "client-key-data: UEVNCg==", "username: u", "password: p",
                            "exec: {command: x}", "auth-provider: {name: oidc}"};
    for (size_t i = 0; i < TU_LEN(fields); i++) {
        char doc[512];
        snprintf(doc, sizeof(doc),
                 "clusters:\n- {name: '', cluster: {server: https://a:1}}\nusers:\n- name: u\n  user:\n    %s\n",
                 fields[i]);
        kjoin_cluster c = {0};
        kjoin_err err;
        assert_int_equal(parse_file(doc, NULL, &c, &err), KJOIN_E_TRUST);
        char field[32];
        snprintf(field, sizeof(field), "user.%.*s:", (int)strcspn(fields[i], ":"), fields[i]);
        field[strlen(field) - 1] = ' ';
        if (!strstr(err.msg, field) || !strstr(err.msg, "`tls_bootstrap_token`"))
            fail_msg("%s: \"%s\"", fields[i], err.msg);
    }
    /* a user without credentials is fine */
    const char *ok = "clusters:\n- {name: '', cluster: {server: https://a:1}}\nusers:\n- {name: u, user: {}}\n";
    kjoin_cluster c = {0};
    assert_int_equal(parse_file(ok, NULL, &c, NULL), KJOIN_OK);
    kjoin_cluster_release(&c);
}

static void test_discovery_file_ca_path(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    char path[256];
    snprintf(path, sizeof(path), "%s/ca.crt", dir);
    FILE *f = fopen(path, "w");
    fputs("PEM\n", f);
    fclose(f);
    const char *doc = "clusters:\n- {name: '', cluster: {server: https://a:1, certificate-authority: ca.crt}}\n";
    kjoin_cluster c = {0};
    assert_int_equal(parse_file(doc, dir, &c, NULL), KJOIN_OK);
    assert_string_equal((char *)c.ca_pem, "PEM\n");
    kjoin_cluster_release(&c);
    kjoin_err err;
    assert_int_equal(parse_file(doc, NULL, &c, &err), KJOIN_E_TRUST); /* stdin or URL */
    assert_non_null(strstr(err.msg, "certificate-authority-data"));
    assert_int_equal(parse_file(doc, "/nonexistent", &c, NULL), KJOIN_E_USAGE);
    /* A path too long to hold is an error, never a shorter path read instead. */
    char long_doc[6000], *p = long_doc;
    p += snprintf(p, sizeof(long_doc), "clusters:\n- {name: '', cluster: {server: https://a:1, certificate-authority: ");
    memset(p, 'a', 5000);
    snprintf(p + 5000, sizeof(long_doc) - (size_t)(p + 5000 - long_doc), "}}\n");
    assert_int_equal(parse_file(long_doc, dir, &c, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "longer than"));
    unlink(path);
    rmdir(dir);
    free(dir);
}

/* Every scalar style YAML allows for certificate-authority-data is
 * rewritten into a file that reads back with exactly the new CA and every
 * other value unchanged (the bytes around it kept). */
static void test_replace_ca_every_style(void **state)
{
    (void)state;
    static const char *const docs[] = {
        "clusters:\n- name: ''\n  cluster:\n    certificate-authority-data: T0xE\n    server: https://a:1\n",
        "clusters:\n- name: ''\n  cluster:\n    certificate-authority-data: 'T0xE'\n    server: https://a:1\n",
        "clusters:\n- name: ''\n  cluster:\n    certificate-authority-data: \"T0xE\"\n    server: https://a:1\n",
        "clusters:\n- name: ''\n  cluster:\n    certificate-authority-data: >-\n      T0xE\n    server: https://a:1\n",
        "clusters:\n- name: ''\n  cluster:\n    certificate-authority-data: |\n        T0xE\n\n    # a comment\n    server: https://a:1\n",
        "clusters:\n- name: ''\n  cluster:\n    certificate-authority-data: >+ # why\n      T0\n      xE\n\n\n    server: https://a:1\n",
        "clusters:\n- name: ''\n  cluster:\n    server: https://a:1\n    certificate-authority-data: |-\n      T0xE", /* at the end, no break */
        "clusters:\n- name: ''\n  cluster:\n    server: https://a:1\n    certificate-authority-data: T0\n      xE\n",
        "clusters:\n- name: ''\n  cluster:\n    certificate-authority-data: \"T0\\\n      xE\" # quoted, two lines\n    server: https://a:1\n",
        "{\"clusters\": [{\"name\": \"\", \"cluster\": {\"certificate-authority-data\": \"T0xE\", \"server\": \"https://a:1\"}}]}",
        "clusters:\n- {name: '', cluster: {certificate-authority-data: T0xE, server: 'https://a:1'}}\n",
        "current-context: x\ncontexts:\n- {name: x, context: {cluster: two}}\nclusters:\n- name: one\n  cluster: {certificate-authority-data: T1RIRVI=}\n- name: two\n  cluster:\n    certificate-authority-data: >\n     T0xE\n    server: https://a:1\n",
    };
    const char pem[] = "-----BEGIN CERTIFICATE-----\nNEW\n-----END CERTIFICATE-----\n";
    for (size_t i = 0; i < TU_LEN(docs); i++) {
        char *out = NULL;
        size_t len = 0;
        kjoin_err err;
        int rc = kjoin_kubeconfig_replace_ca(docs[i], strlen(docs[i]), pem, strlen(pem), &out, &len, &err);
        if (rc)
            fail_msg("doc %zu: %s", i, err.msg);
        /* The result reads back as a kubeconfig whose current cluster has the new CA. */
        kjoin_cluster c = {0};
        if (kjoin_kubeconfig_parse_discovery(out, len, "/", &c, &err))
            fail_msg("doc %zu: %s\n%s", i, err.msg, out);
        assert_int_equal(c.ca_len, strlen(pem));
        assert_memory_equal(c.ca_pem, pem, strlen(pem));
        assert_string_equal(c.server, "https://a:1");
        kjoin_cluster_release(&c);
        /* Nothing but the value changed: the text before it is the same. */
        const char *at = strstr(docs[i], "certificate-authority-data");
        assert_memory_equal(out, docs[i], (size_t)(at - docs[i]));
        free(out);
    }
}

/* No value to rewrite, or a document that is not YAML: an error, nothing returned. */
static void test_replace_ca_refusals(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "clusters:\n- name: c\n  cluster: {certificate-authority: /etc/ca.crt, server: https://a:1}\n",
        "clusters:\n- {name: a, cluster: {certificate-authority-data: QQ==}}\n- {name: b, cluster: {certificate-authority-data: QQ==}}\n",
        "clusters: [",
        "clusters:\n- name: c\n  cluster: {certificate-authority-data: [1, 2]}\n",
    };
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        char *out = NULL;
        size_t len = 0;
        assert_int_equal(kjoin_kubeconfig_replace_ca(bad[i], strlen(bad[i]), "x", 1, &out, &len, NULL), KJOIN_E_USAGE);
        assert_null(out);
    }
}

/* A control-plane node's bootstrap kubeconfig: the current cluster's server
 * replaced (an IPv6 URL's brackets too), the token and CA kept; a value
 * that is no https URL, or would end the scalar early, is refused. */
static void test_replace_server(void **state)
{
    (void)state;
    const char *doc = "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: UEVNCg==\n"
                      "    server: https://cp.example:6443\n  name: kubernetes\ncontexts:\n- context: {cluster: kubernetes, "
                      "user: tls-bootstrap-token-user}\n  name: c\ncurrent-context: c\nkind: Config\nusers:\n- name: "
                      "tls-bootstrap-token-user\n  user: {token: abcdef.0123456789abcdef}\n";
    const char *servers[] = {"https://10.0.0.2:6443", "https://[fd00::2]:6443"};
    for (size_t i = 0; i < TU_LEN(servers); i++) {
        char *out = NULL;
        size_t len = 0;
        kjoin_err err;
        if (kjoin_kubeconfig_replace_server(doc, strlen(doc), servers[i], &out, &len, &err))
            fail_msg("%s: %s", servers[i], err.msg);
        kjoin_cluster c = {0};
        assert_int_equal(kjoin_kubeconfig_parse_cluster(out, len, &c, &err), KJOIN_OK);
        assert_string_equal(c.server, servers[i]);
        assert_int_equal(c.ca_len, 4);
        kjoin_cluster_release(&c);
        assert_non_null(strstr(out, "token: abcdef.0123456789abcdef"));
        assert_memory_equal(out, doc, (size_t)(strstr(doc, "https://cp") - doc));
        free(out);
    }
    const char *bad[] = {"http://10.0.0.2:6443", "https://a:1 #", "https://a:1\nx: y", "", "https://a:1\t"};
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        char *out = NULL;
        size_t len = 0;
        assert_int_equal(kjoin_kubeconfig_replace_server(doc, strlen(doc), bad[i], &out, &len, NULL), KJOIN_E_USAGE);
        assert_null(out);
    }
    const char *no_server = "clusters:\n- name: c\n  cluster: {certificate-authority-data: QQ==}\n";
    char *out = NULL;
    size_t len = 0;
    assert_int_equal(kjoin_kubeconfig_replace_server(no_server, strlen(no_server), "https://a:1", &out, &len, NULL),
                     KJOIN_E_USAGE);
    assert_null(out);
}

/* Aliases that loop, chain deeper than the text nests, or multiply the
 * document are refused by the reader every module shares (the loop once
 * overflowed the stack of the rewrite's comparison); a plain alias is read. */
static void test_hostile_aliases_refused(void **state)
{
    (void)state;
    static char chain[4096], laughs[4096];
    size_t n = (size_t)snprintf(chain, sizeof(chain), "a0: &a0 x\n");
    for (int i = 1; i <= 70; i++)
        n += (size_t)snprintf(chain + n, sizeof(chain) - n, "a%d: &a%d [*a%d]\n", i, i, i - 1);
    n = (size_t)snprintf(laughs, sizeof(laughs), "l0: &l0 [x, x]\n");
    for (int i = 1; i <= 30; i++)
        n += (size_t)snprintf(laughs + n, sizeof(laughs) - n, "l%d: &l%d [*l%d, *l%d]\n", i, i, i - 1, i - 1);
    struct {
        const char *yaml, *why;
    } bad[] = {
        {"clusters:\n- name: two\n  cluster:\n    certificate-authority-data: |\n    contexts    T0s: &a [*a]\n",
         "refer to themselves"},
        {"clusters: &a [*a]\n", "refer to themselves"},
        {"users:\n- &u {name: u, user: [*u]}\n", "refer to themselves"},
        {chain, "nest deeper than 64"},
        {laughs, "expand it by more than 1000000 nodes"},
    };
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        char *out = NULL;
        size_t len = 0;
        kjoin_err err;
        assert_int_equal(kjoin_kubeconfig_replace_ca(bad[i].yaml, strlen(bad[i].yaml), "x", 1, &out, &len, &err),
                         KJOIN_E_USAGE);
        if (!strstr(err.msg, bad[i].why))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, bad[i].why);
        assert_null(out);
        assert_int_equal(kjoin_kubeconfig_check_public(bad[i].yaml, strlen(bad[i].yaml), &err), KJOIN_E_USAGE);
        if (!strstr(err.msg, bad[i].why))
            fail_msg("case %zu public: \"%s\" lacks \"%s\"", i, err.msg, bad[i].why);
    }
    const char *aliased = "ca: &ca UEVNCg==\nclusters:\n- cluster: {server: https://a:1, certificate-authority-data: *ca}\n"
                          "  name: c\n";
    kjoin_cluster c;
    assert_int_equal(kjoin_kubeconfig_parse_cluster(aliased, strlen(aliased), &c, NULL), KJOIN_OK);
    kjoin_cluster_release(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_cluster_info_kubeconfig),
        cmocka_unit_test(test_hostile_aliases_refused),
        cmocka_unit_test(test_accepted_forms),
        cmocka_unit_test(test_rejected_forms),
        cmocka_unit_test(test_emit_matches_kubeadm_layout),
        cmocka_unit_test(test_emit_round_trip),
        cmocka_unit_test(test_emit_quotes_as_client_go),
        cmocka_unit_test(test_discovery_file_choice),
        cmocka_unit_test(test_discovery_file_credentials_refused),
        cmocka_unit_test(test_discovery_file_ca_path),
        cmocka_unit_test(test_replace_ca_every_style),
        cmocka_unit_test(test_replace_ca_refusals),
        cmocka_unit_test(test_replace_server),
    };
    return cmocka_run_group_tests_name("kubeconfig", tests, NULL, NULL);
}
