#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kjoin/private/kubeapi.h>
#include <kjoin/private/token.h>

#include "testutil.h"

/* base64 of "-----BEGIN CERTIFICATE-----\n" etc. is not needed: the parser
 * only decodes; these are placeholder PEM bytes. */
#define CA_B64 "Q0EtUEVN"     /* "CA-PEM" */
#define CERT_B64 "Q0VSVA=="   /* "CERT" */
#define KEY_B64 "S0VZ"        /* "KEY" */

static const char *const head =
    "apiVersion: v1\nkind: Config\n"
    "clusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:6443/\", certificate-authority-data: " CA_B64 "}\n"
    "- name: other\n  cluster: {server: \"https://10.0.0.1:6443\"}\n"
    "contexts:\n- name: x\n  context: {cluster: c, user: u}\n- name: y\n  context: {cluster: other, user: t}\n";

static kjoin_code parse_with(const char *users, const char *tail, const char *dir, const char *ctx,
                             kjoin_kubeapi_config *c, kjoin_err *err)
{
    char doc[4096];
    snprintf(doc, sizeof(doc), "%susers:\n%s%s", head, users, tail ? tail : "current-context: x\n");
    return kjoin_kubeapi_config_parse(doc, strlen(doc), dir, ctx, c, err);
}

static void test_config_client_certificate_data(void **state)
{
    (void)state;
    kjoin_kubeapi_config c;
    kjoin_err err;
    assert_int_equal(parse_with("- name: u\n  user: {client-certificate-data: " CERT_B64 ", client-key-data: " KEY_B64 "}\n",
                                NULL, NULL, NULL, &c, &err),
                     KJOIN_OK);
    assert_string_equal(c.server, "https://127.0.0.1:6443"); /* trailing slash dropped */
    assert_string_equal(c.context, "x");
    assert_memory_equal(c.ca_pem, "CA-PEM", 6);
    assert_memory_equal(c.cert_pem, "CERT", 4);
    assert_memory_equal(c.key_pem, "KEY", 3);
    assert_null(c.token);
    kjoin_kubeapi_config_release(&c);
}

static void test_config_context_override_and_token(void **state)
{
    (void)state;
    kjoin_kubeapi_config c;
    assert_int_equal(parse_with("- name: t\n  user: {token: abcdef.0123456789abcdef}\n", NULL, NULL, "y", &c, NULL),
                     KJOIN_OK);
    assert_string_equal(c.server, "https://10.0.0.1:6443");
    assert_null(c.ca_pem); /* the system roots verify it */
    assert_string_equal(c.token, "abcdef.0123456789abcdef");
    kjoin_kubeapi_config_release(&c);
}

static void test_config_paths_relative_to_the_kubeconfig(void **state)
{
    (void)state;
    char *dir = tu_tmpdir(), path[512];
    const char *files[][2] = {{"ca.crt", "CA-FILE"}, {"u.crt", "CERT-FILE"}, {"u.key", "KEY-FILE"},
                              {"tok", "sekret-token\nsecond line\n"}};
    for (size_t i = 0; i < TU_LEN(files); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, files[i][0]);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(files[i][1], f);
        fclose(f);
    }
    char doc[2048];
    snprintf(doc, sizeof(doc),
             "clusters:\n- name: c\n  cluster: {server: \"https://h:1\", certificate-authority: ca.crt}\n"
             "users:\n- name: u\n  user: {client-certificate: u.crt, client-key: %s/u.key}\n"
             "- name: t\n  user: {tokenFile: tok}\n"
             "contexts:\n- name: x\n  context: {cluster: c, user: u}\n- name: y\n  context: {cluster: c, user: t}\n"
             "current-context: x\n", dir);
    kjoin_kubeapi_config c;
    assert_int_equal(kjoin_kubeapi_config_parse(doc, strlen(doc), dir, NULL, &c, NULL), KJOIN_OK);
    assert_string_equal(c.ca_pem, "CA-FILE");
    assert_string_equal(c.cert_pem, "CERT-FILE");
    assert_string_equal(c.key_pem, "KEY-FILE");
    kjoin_kubeapi_config_release(&c);
    assert_int_equal(kjoin_kubeapi_config_parse(doc, strlen(doc), dir, "y", &c, NULL), KJOIN_OK);
    assert_string_equal(c.token, "sekret-token"); /* the first line only */
    kjoin_kubeapi_config_release(&c);
    /* Without a folder (a kubeconfig from memory), a relative path is refused. */
    kjoin_err err;
    assert_int_equal(kjoin_kubeapi_config_parse(doc, strlen(doc), NULL, NULL, &c, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "relative path"));
    snprintf(path, sizeof(path), "rm -rf '%s'", dir);
    assert_int_equal(system(path), 0);
    free(dir);
}

/* Each refused shape, and the word its message must name. */
static void test_config_refusals_name_the_field(void **state)
{
    (void)state;
    const struct {
        const char *users, *tail, *ctx, *needle;
    } cases[] = {
        {"- name: u\n  user: {exec: {command: x}}\n", NULL, NULL, "\"exec\""},
        {"- name: u\n  user: {auth-provider: {name: gcp}}\n", NULL, NULL, "\"auth-provider\""},
        {"- name: u\n  user: {username: a, password: b}\n", NULL, NULL, "\"username\""},
        {"- name: u\n  user: {client-certificate-data: " CERT_B64 "}\n", NULL, NULL, "without its key"},
        {"- name: u\n  user: {client-key-data: " KEY_B64 "}\n", NULL, NULL, "without its certificate"},
        {"- name: u\n  user: {token: a, tokenFile: /x}\n", NULL, NULL, "both token and tokenFile"},
        {"- name: u\n  user: {client-key-data: \"!!\", client-certificate-data: " CERT_B64 "}\n", NULL, NULL,
         "client-key-data"},
        {"- name: u\n  user: {}\n", "current-context: nope\n", NULL, "no context named \"nope\""},
        {"- name: u\n  user: {}\n", "current-context: \"\"\n", NULL, "no current-context"},
        {"- name: u\n  user: {}\n", NULL, "missing", "no context named \"missing\""},
        {"- name: u\n  user: {}\n- name: u\n  user: {}\n", NULL, NULL, "two users are named \"u\""},
        {"- name: w\n  user: {}\n", NULL, NULL, "no user named \"u\""},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        kjoin_kubeapi_config c = {.server = (char *)"keep"};
        kjoin_err err = {0};
        if (parse_with(cases[i].users, cases[i].tail, NULL, cases[i].ctx, &c, &err) != KJOIN_E_USAGE)
            fail_msg("case %zu was accepted", i);
        assert_string_equal(c.server, "keep"); /* out untouched */
        if (!strstr(err.msg, cases[i].needle))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, cases[i].needle);
    }
    const char *clusters[][2] = {
        {"clusters:\n- name: c\n  cluster: {server: \"http://h:1\"}\n", "https://"},
        {"clusters:\n- name: c\n  cluster: {server: \"https://h:1\", insecure-skip-tls-verify: true}\n",
         "insecure-skip-tls-verify"},
        {"clusters:\n- name: c\n  cluster: {server: \"https://h:1\", proxy-url: \"http://p\"}\n", "proxy-url"},
        {"clusters:\n- name: c\n  cluster: {server: \"https://h:1\", certificate-authority-data: X, "
         "certificate-authority: /x}\n", "both certificate-authority-data"},
        {"clusters: 7\n", "not a list"},
        {"- just a list\n", "YAML error"},
    };
    for (size_t i = 0; i < TU_LEN(clusters); i++) {
        char doc[1024];
        snprintf(doc, sizeof(doc), "%scontexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n",
                 clusters[i][0]);
        kjoin_kubeapi_config c;
        kjoin_err err = {0};
        if (kjoin_kubeapi_config_parse(doc, strlen(doc), NULL, NULL, &c, &err) != KJOIN_E_USAGE)
            fail_msg("cluster case %zu was accepted", i);
        if (!strstr(err.msg, clusters[i][1]))
            fail_msg("cluster case %zu: \"%s\" lacks \"%s\"", i, err.msg, clusters[i][1]);
    }
}

static void test_config_load_order(void **state)
{
    (void)state;
    kjoin_kubeapi_config c;
    kjoin_err err;
    setenv("KUBECONFIG", "/nonexistent/first:/nonexistent/second", 1);
    assert_int_equal(kjoin_kubeapi_config_load(NULL, NULL, &c, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "/nonexistent/first"));
    unsetenv("KUBECONFIG");
    assert_int_equal(kjoin_kubeapi_config_load("/nonexistent/given", NULL, &c, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "/nonexistent/given"));
}

static void test_in_cluster_config(void **state)
{
    (void)state;
    char *dir = tu_tmpdir(), path[512];
    kjoin_kubeapi_config c;
    kjoin_err err;
    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_int_equal(kjoin_kubeapi_config_in_cluster(dir, &c, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "not in a pod"));
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    assert_int_equal(kjoin_kubeapi_config_in_cluster(dir, &c, &err), KJOIN_E_USAGE); /* no files yet */
    const char *files[][2] = {{"ca.crt", "SA-CA"}, {"token", "sa-token\n"}};
    for (size_t i = 0; i < TU_LEN(files); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, files[i][0]);
        FILE *f = fopen(path, "w");
        fputs(files[i][1], f);
        fclose(f);
    }
    assert_int_equal(kjoin_kubeapi_config_in_cluster(dir, &c, &err), KJOIN_OK);
    assert_string_equal(c.server, "https://[fd00::1]:443");
    assert_string_equal(c.token, "sa-token");
    assert_string_equal(c.ca_pem, "SA-CA");
    kjoin_kubeapi_config_release(&c);
    setenv("KUBERNETES_SERVICE_PORT", "44x3", 1);
    assert_int_equal(kjoin_kubeapi_config_in_cluster(dir, &c, &err), KJOIN_E_USAGE);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    snprintf(path, sizeof(path), "rm -rf '%s'", dir);
    assert_int_equal(system(path), 0);
    free(dir);
}

/* client-go's order: a path, $KUBECONFIG, then the pod, only when asked for
 * and no context is named. A malformed pod environment shows which won. */
static void test_config_find_order(void **state)
{
    (void)state;
    kjoin_kubeapi_config c;
    kjoin_err err;
    unsetenv("KUBECONFIG");
    setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "44x3", 1);
    assert_int_equal(kjoin_kubeapi_config_find(NULL, NULL, true, &c, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "KUBERNETES_SERVICE_PORT"));
    assert_int_equal(kjoin_kubeapi_config_find("/nonexistent/given", NULL, true, &c, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "/nonexistent/given"));
    setenv("KUBECONFIG", "/nonexistent/env", 1);
    assert_int_equal(kjoin_kubeapi_config_find(NULL, NULL, true, &c, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "/nonexistent/env"));
    assert_int_equal(kjoin_kubeapi_config_find(NULL, "ctx", true, &c, &err), KJOIN_E_USAGE);
    assert_null(strstr(err.msg, "KUBERNETES_SERVICE"));
    assert_int_equal(kjoin_kubeapi_config_find(NULL, NULL, false, &c, &err), KJOIN_E_USAGE);
    assert_null(strstr(err.msg, "KUBERNETES_SERVICE"));
    unsetenv("KUBECONFIG");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
}

/* The real apiserver's Status answers, and what is not a Status. */
static void test_status_decode(void **state)
{
    (void)state;
    char reason[KJOIN_KUBEAPI_REASON_MAX], message[KJOIN_KUBEAPI_MESSAGE_MAX];
    size_t len;
    char *body = tu_read("testdata/kubeapi/status-403.json", &len);
    kjoin_kubeapi_status_decode(403, body, len, reason, message);
    assert_string_equal(reason, "Forbidden");
    assert_non_null(strstr(message, "configmaps \"does-not-exist\" is forbidden"));
    free(body);
    body = tu_read("testdata/kubeapi/status-401.json", &len);
    kjoin_kubeapi_status_decode(401, body, len, reason, message);
    assert_string_equal(reason, "Unauthorized");
    free(body);
    const struct {
        long st;
        const char *body, *reason, *message;
    } cases[] = {
        {404, "<html>not json</html>", "NotFound", "HTTP 404"},
        {409, "{\"kind\":\"Other\",\"reason\":\"X\"}", "Conflict", "HTTP 409"},
        {422, "{\"kind\":\"Status\",\"reason\":7,\"message\":[1]}", "Invalid", "HTTP 422"},
        {403, "{\"kind\":\"Status\",\"reason\":\"Forbidden\",\"message\":\"a\\u001b[31mb\\nc\"}", "Forbidden", "a?[31mb?c"},
        {500, "", "InternalError", "HTTP 500"},
        {200, "{\"kind\":\"Status\",\"reason\":\"X\"}", "", ""},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        kjoin_kubeapi_status_decode(cases[i].st, cases[i].body, strlen(cases[i].body), reason, message);
        assert_string_equal(reason, cases[i].reason);
        assert_string_equal(message, cases[i].message);
    }
}

static void test_check_names_what_and_why(void **state)
{
    (void)state;
    kjoin_kubeapi_response ok = {.status = 201}, bad = {.status = 409, .reason = "AlreadyExists", .message = "exists"};
    kjoin_err err;
    assert_int_equal(kjoin_kubeapi_check(&ok, "create x", &err), KJOIN_OK);
    assert_int_equal(kjoin_kubeapi_check(&bad, "create secret kube-system/x", &err), KJOIN_E_API);
    assert_string_equal(err.msg, "create secret kube-system/x: AlreadyExists (HTTP 409): exists");
}

static void test_client_needs_server_and_timeout(void **state)
{
    (void)state;
    kjoin_kubeapi_config c = {0};
    kjoin_kubeapi *api = NULL;
    kjoin_kubeapi_options o = {.version = KJOIN_KUBEAPI_OPTIONS_VERSION, .timeout_ms = 1000};
    assert_int_equal(kjoin_kubeapi_new(&c, &o, &api, NULL), KJOIN_E_USAGE);
    c.server = strdup("https://h:1");
    o.timeout_ms = 0;
    assert_int_equal(kjoin_kubeapi_new(&c, &o, &api, NULL), KJOIN_E_USAGE);
    o.timeout_ms = 1000;
    assert_int_equal(kjoin_kubeapi_new(&c, &o, &api, NULL), KJOIN_OK);
    assert_null(c.server); /* moved in */
    assert_string_equal(kjoin_kubeapi_server(api), "https://h:1");
    assert_int_equal(kjoin_kubeapi_server_time(api), 0); /* no answer yet: the server's clock unknown */
    assert_null(kjoin_kubeapi_ca_pem(api, NULL));
    assert_true(kjoin_kubeapi_remaining_ms(api) > 0);
    kjoin_kubeapi_free(api);
    kjoin_kubeapi_free(NULL);
}

/* ---- bootstrap-token Secrets ----------------------------------------------- */

static void test_token_list_of_the_real_apiserver(void **state)
{
    (void)state;
    size_t len;
    char *body = tu_read("testdata/kubeapi/bootstrap-token-secrets.json", &len);
    kjoin_token_list l;
    assert_int_equal(kjoin_token_list_decode(body, len, &l, NULL), KJOIN_OK);
    free(body);
    assert_int_equal(l.n, 5);
    assert_int_equal(l.n_warnings, 0);
    const kjoin_token_spec *a = NULL, *n = NULL;
    for (size_t i = 0; i < l.n; i++) {
        if (strcmp(l.items[i].token.id, "abcdef") == 0)
            a = &l.items[i];
        if (strcmp(l.items[i].token.id, "9xk2mq") == 0)
            n = &l.items[i];
    }
    assert_non_null(a);
    assert_string_equal(a->token.secret, "0123456789abcdef");
    assert_int_equal(a->expires, 1795413518LL); /* 2026-11-23T05:58:38Z */
    assert_true(a->usage_signing && a->usage_authentication);
    assert_string_equal(a->groups, "system:bootstrappers:kubeadm:default-node-token");
    assert_non_null(n);
    assert_int_equal(n->expires, 0);
    assert_false(n->usage_signing);
    assert_true(n->usage_authentication);
    kjoin_token_list_release(&l);
}

static void test_token_secret_round_trip(void **state)
{
    (void)state;
    kjoin_token_spec s = {.token = {"q1w2e3", "0123456789abcdef"},
                          .expires = 1800000000,
                          .usage_authentication = true,
                          .groups = "system:bootstrappers:a,system:bootstrappers:b-c:d",
                          .description = "made \"here\""};
    char *secret = NULL;
    assert_int_equal(kjoin_token_secret_encode(&s, &secret, NULL), KJOIN_OK);
    assert_non_null(strstr(secret, "\"type\":\"bootstrap.kubernetes.io\\/token\"") ? secret
                    : strstr(secret, "\"type\":\"bootstrap.kubernetes.io/token\""));
    assert_non_null(strstr(secret, "\"name\":\"bootstrap-token-q1w2e3\""));
    assert_null(strstr(secret, "usage-bootstrap-signing")); /* absent, as kubeadm leaves it */
    char list[4096];
    snprintf(list, sizeof(list), "{\"kind\":\"SecretList\",\"items\":[%s]}", secret);
    free(secret);
    kjoin_token_list l;
    assert_int_equal(kjoin_token_list_decode(list, strlen(list), &l, NULL), KJOIN_OK);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.items[0].token.secret, s.token.secret);
    assert_int_equal(l.items[0].expires, s.expires);
    assert_false(l.items[0].usage_signing);
    assert_true(l.items[0].usage_authentication);
    assert_string_equal(l.items[0].groups, s.groups);
    assert_string_equal(l.items[0].description, s.description);
    kjoin_token_list_release(&l);
}

/* Secrets of the token type that are not valid tokens are skipped with a
 * warning naming them; other types are ignored; non-lists are refused. */
static void test_token_list_skips_invalid(void **state)
{
    (void)state;
    const char *list =
        "{\"kind\":\"SecretList\",\"items\":["
        "{\"type\":\"bootstrap.kubernetes.io/token\",\"metadata\":{\"name\":\"bootstrap-token-aaaaaa\"},"
        "\"data\":{\"token-id\":\"YmJiYmJi\",\"token-secret\":\"MDEyMzQ1Njc4OWFiY2RlZg==\"}},"
        "{\"type\":\"bootstrap.kubernetes.io/token\",\"metadata\":{\"name\":\"not-a-token-name\"},\"data\":{}},"
        "{\"type\":\"bootstrap.kubernetes.io/token\",\"metadata\":{\"name\":\"bootstrap-token-cccccc\"},"
        "\"data\":{\"token-id\":\"Y2NjY2Nj\",\"token-secret\":\"MDEyMzQ1Njc4OWFiY2RlZg==\",\"expiration\":\"bm9wZQ==\"}},"
        "{\"type\":\"bootstrap.kubernetes.io/token\",\"metadata\":{\"name\":\"bootstrap-token-dddddd\"},"
        "\"data\":{\"token-id\":\"ZGRkZGRk\",\"token-secret\":7}},"
        "{\"type\":\"Opaque\",\"metadata\":{\"name\":\"bootstrap-token-eeeeee\"}}]}";
    kjoin_token_list l;
    assert_int_equal(kjoin_token_list_decode(list, strlen(list), &l, NULL), KJOIN_OK);
    assert_int_equal(l.n, 0);
    assert_int_equal(l.n_warnings, 4);
    assert_non_null(strstr(l.warnings[0], "bootstrap-token-aaaaaa"));
    assert_null(strstr(l.warnings[0], "0123456789abcdef"));
    assert_non_null(strstr(l.warnings[1], "not-a-token-name"));
    assert_non_null(strstr(l.warnings[2], "malformed expiration"));
    kjoin_token_list_release(&l);
    const char *bad[] = {"{\"kind\":\"ConfigMapList\",\"items\":[]}", "{\"kind\":\"SecretList\"}",
                         "{\"kind\":\"SecretList\",\"items\":[]} trailing", "[]", ""};
    for (size_t i = 0; i < TU_LEN(bad); i++)
        assert_int_equal(kjoin_token_list_decode(bad[i], strlen(bad[i]), &l, NULL), KJOIN_E_TRUST);
}

static void test_groups_and_usages_rules(void **state)
{
    (void)state;
    const char *good[] = {"system:bootstrappers:kubeadm:default-node-token", "system:bootstrappers:a,system:bootstrappers:b",
                          "system:bootstrappers:x9"};
    const char *bad[] = {"system:masters", "system:bootstrappers:", "system:bootstrappers:a-", "system:bootstrappers:A",
                         "system:bootstrappers:a,", "system:bootstrappers:a,system:bootstrappers:a",
                         "system:bootstrappers:a,,system:bootstrappers:b"};
    for (size_t i = 0; i < TU_LEN(good); i++)
        assert_int_equal(kjoin_token_groups_check(good[i], NULL), KJOIN_OK);
    for (size_t i = 0; i < TU_LEN(bad); i++)
        if (kjoin_token_groups_check(bad[i], NULL) != KJOIN_E_USAGE)
            fail_msg("groups \"%s\" accepted", bad[i]);
    kjoin_token_spec s = {0};
    assert_int_equal(kjoin_token_usages_parse("signing", &s, NULL), KJOIN_OK);
    assert_true(s.usage_signing && !s.usage_authentication);
    assert_int_equal(kjoin_token_usages_parse("authentication,signing", &s, NULL), KJOIN_OK);
    assert_true(s.usage_signing && s.usage_authentication);
    const char *bad_usages[] = {"", "sign", "signing,admin", ","};
    for (size_t i = 0; i < TU_LEN(bad_usages); i++)
        assert_int_equal(kjoin_token_usages_parse(bad_usages[i], &s, NULL), KJOIN_E_USAGE);
    kjoin_token_spec bad_id = {.token = {"ABC", "x"}, .usage_signing = true};
    char *out = NULL;
    assert_int_equal(kjoin_token_secret_encode(&bad_id, &out, NULL), KJOIN_E_USAGE);
    assert_null(out);
}


static void test_version_minor(void **state)
{
    (void)state;
    const struct {
        const char *body;
        int minor;
    } cases[] = {
        {"{\"major\": \"1\", \"minor\": \"37\"}", 37}, {"{\"minor\": \"37+\"}", 37}, {"{\"minor\": \"20\"}", 20},
        {"{\"minor\": null}", 0}, {"{\"minor\": 37}", 0}, {"{\"minor\": \"x\"}", 0}, {"{\"minor\": \"-3\"}", 0},
        {"{\"minor\": \"99999999999999999999\"}", 0}, {"[]", 0}, {"null", 0}, {"", 0}, {"{\"minor\": \"37\"", 0},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++)
        if (kjoin_kubeapi_version_minor(cases[i].body, strlen(cases[i].body)) != cases[i].minor)
            fail_msg("case %zu: %s", i, cases[i].body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_minor),
        cmocka_unit_test(test_config_client_certificate_data),
        cmocka_unit_test(test_config_context_override_and_token),
        cmocka_unit_test(test_config_paths_relative_to_the_kubeconfig),
        cmocka_unit_test(test_config_refusals_name_the_field),
        cmocka_unit_test(test_config_load_order),
        cmocka_unit_test(test_in_cluster_config),
        cmocka_unit_test(test_config_find_order),
        cmocka_unit_test(test_status_decode),
        cmocka_unit_test(test_check_names_what_and_why),
        cmocka_unit_test(test_client_needs_server_and_timeout),
        cmocka_unit_test(test_token_list_of_the_real_apiserver),
        cmocka_unit_test(test_token_secret_round_trip),
        cmocka_unit_test(test_token_list_skips_invalid),
        cmocka_unit_test(test_groups_and_usages_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
