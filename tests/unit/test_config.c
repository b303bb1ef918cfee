#include <stdio.h>
#include <string.h>

#include <kjoin/config.h>
#include <kjoin/private/pin.h>

#include "../../pkg/yamldoc/yamldoc.h"
#include "testutil.h"

static kjoin_code parse(const char *yaml, kjoin_join_config *c, kjoin_err *err)
{
    return kjoin_join_config_parse(yaml, strlen(yaml), c, err);
}

static void test_v1beta3_token_discovery(void **state)
{
    (void)state;
    char *yaml = tu_read("testdata/config/v1beta3-token.yaml", NULL);
    kjoin_join_config c;
    kjoin_err err;
    if (parse(yaml, &c, &err))
        fail_msg("%s", err.msg);
    assert_string_equal(c.api_version, "kubeadm.k8s.io/v1beta3");
    const kjoin_join_spec *s = &c.spec.join;
    assert_int_equal(s->n_endpoints, 1);
    assert_string_equal(s->endpoints[0], "10.0.0.10:6443");
    assert_string_equal(s->token, "abcdef.0123456789abcdef");
    assert_int_equal(kjoin_pinset_count(s->pins), 1);
    assert_false(s->unsafe_skip_ca_verification);
    assert_null(s->discovery_file);
    assert_string_equal(s->tls_bootstrap_token, "07401b.f395accd246ae52d");
    assert_int_equal(s->timeout_ms, 150000);
    assert_int_equal(s->flavor, KJOIN_FLAVOR_KUBEADM);
    assert_non_null(strstr(c.notes[c.n_notes - 1], "Skipping KubeletConfiguration"));
    kjoin_join_config_release(&c);
    free(yaml);
}

static void test_v1beta4_file_discovery(void **state)
{
    (void)state;
    char *yaml = tu_read("testdata/config/v1beta4-file.yaml", NULL);
    kjoin_join_config c;
    kjoin_err err;
    if (parse(yaml, &c, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(c.spec.join.n_endpoints, 0);
    assert_null(c.spec.join.token);
    assert_string_equal(c.spec.join.discovery_file, "https://config.example.com/cluster.kubeconfig");
    assert_string_equal(c.spec.join.tls_bootstrap_token, "abcdef.0123456789abcdef");
    assert_int_equal(c.spec.join.timeout_ms, 90000);
    assert_non_null(strstr(c.notes[0], "Skipping InitConfiguration"));
    kjoin_join_config_release(&c);
    free(yaml);
}

#define JC(api, body) "apiVersion: " api "\nkind: JoinConfiguration\n" body
#define V3(body) JC("kubeadm.k8s.io/v1beta3", body)
#define V4(body) JC("kubeadm.k8s.io/v1beta4", body)
#define BT "discovery:\n  bootstrapToken:\n    token: abcdef.0123456789abcdef\n    apiServerEndpoint: '[::1]:6443'\n"

static void test_accepted_variants(void **state)
{
    (void)state;
    const char *good[] = {
        V4(BT "    unsafeSkipCAVerification: true\n"),
        V4(BT "    caCertHashes: [sha256:e338877e96541dc59ad196d73a611a29f43178eea406fcdbfa507198c3c01bc1]\n"),
        V3(BT "  timeout: 5m0s\n"),
        V4("discovery:\n  file:\n    kubeConfigPath: /etc/kubernetes/discovery.conf\n  tlsBootstrapToken: abcdef.0123456789abcdef\n"),
        "---\n" V4(BT) "---\n",
        V4(BT "dryRun: yes\n"), /* YAML 1.1's booleans, as kubeadm reads them */
    };
    for (size_t i = 0; i < TU_LEN(good); i++) {
        kjoin_join_config c;
        kjoin_err err;
        if (parse(good[i], &c, &err))
            fail_msg("case %zu: %s", i, err.msg);
        kjoin_join_config_release(&c);
    }
}

/* controlPlane: a control-plane join's address, port and key. */
static void test_control_plane(void **state)
{
    (void)state;
    kjoin_join_config c;
    kjoin_err err;
    const char *yaml = V4(BT "controlPlane:\n  localAPIEndpoint: {advertiseAddress: 10.0.0.12, bindPort: 6444}\n"
                             "  certificateKey: \"0101010101010101010101010101010101010101010101010101010101010101\"\n");
    assert_int_equal(kjoin_join_config_parse(yaml, strlen(yaml), &c, &err), KJOIN_OK);
    assert_true(c.spec.control_plane);
    assert_string_equal(c.spec.advertise_address, "10.0.0.12");
    assert_int_equal(c.spec.bind_port, 6444);
    assert_ptr_equal(c.spec.certificate_key, &c.certificate_key); /* points at its new place */
    assert_int_equal(c.certificate_key.bytes[31], 1);
    kjoin_join_config_release(&c);
    for (size_t i = 0; i < sizeof(c.certificate_key.bytes); i++)
        assert_int_equal(c.certificate_key.bytes[i], 0); /* wiped */
    const char *bare = V4(BT "controlPlane: {}\n");
    assert_int_equal(kjoin_join_config_parse(bare, strlen(bare), &c, &err), KJOIN_OK);
    assert_true(c.spec.control_plane);
    assert_null(c.spec.certificate_key);
    kjoin_join_config_release(&c);
    /* The key is never quoted in a message. */
    const char *bad = V4(BT "controlPlane:\n  certificateKey: 01010101010101010101010101010101010101010101010101010101010101zz\n");
    assert_int_equal(kjoin_join_config_parse(bad, strlen(bad), &c, &err), KJOIN_E_USAGE);
    assert_null(strstr(err.msg, "0101"));
}

static void test_rejections_name_field_and_place(void **state)
{
    (void)state;
    struct {
        const char *yaml, *why;
    } bad[] = {
        {JC("kubeadm.k8s.io/v1beta2", BT), "supported: kubeadm.k8s.io/v1beta3, kubeadm.k8s.io/v1beta4"},
        {V4(BT "  timeout: 5m\n"), "unknown field discovery.timeout at line 7, column 3"},
        {V4(BT "    caCertHash: []\n"), "unknown field discovery.bootstrapToken.caCertHash at line 7, column 5"},
        {V4("discovery:\n  file:\n    path: /x\n"), "unknown field discovery.file.path"},
        {V4("discovery:\n  bootstrapToken:\n    token: abcdef.0123456789abcdef\n    apiServerEndpoint: [::1]:6443\n"),
         "quote IPv6"},
        {V4("discovery:\n  bootstrapToken:\n    token: abcdef.0123456789ABCDEF\n    apiServerEndpoint: a:1\n"),
         "discovery.bootstrapToken.token at line 5, column 12"},
        {V4("discovery:\n  bootstrapToken:\n    token: abcdef.0123456789abcdef\n    apiServerEndpoint: a\n"),
         "apiServerEndpoint at line 6"},
        {V4(BT "    caCertHashes: [md5:00]\n"), "caCertHashes at line 7"},
        {V4(BT "    unsafeSkipCAVerification: maybe\n"), "true or false"},
        {V4(BT "  file:\n    kubeConfigPath: /x\n"), "not both"},
        {V4("discovery: {}\n"), "must be set"},
        {V4("nodeRegistration: {}\n"), "no discovery section"},
        {V4("discovery:\n  file:\n    kubeConfigPath: http://x/y\n  tlsBootstrapToken: abcdef.0123456789abcdef\n"),
         "must be https://"},
        {V3(BT "  timeout: forever\n"), "discovery.timeout at line 7"},
        {V4(BT "timeouts:\n  discovery: -1s\n"), "timeouts.discovery at line 8"},
        {V4(BT) "---\n" V4(BT), "a second JoinConfiguration"},
        {"apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\n", "no JoinConfiguration"},
        {V4(BT "  bootstrapToken: {}\n"), "duplicate key"},
        {"kind: [\n", "YAML error at line"},
        {V4(BT "  tlsBootstrapToken: nope\n"), "discovery.tlsBootstrapToken at line 7"},
        {V4(BT "controlPlane:\n  certificateKey: x\n"), "controlPlane.certificateKey at line 8, column 19: the certificate key must be 64 hex digits"},
        {V4(BT "controlPlane:\n  localAPIEndpoint: {bindPort: 70000}\n"), "controlPlane.localAPIEndpoint.bindPort at line 8 is not a port"},
        {V4(BT "controlPlane:\n  localAPIEndpoint: {advertiseAdress: x}\n"), "unknown field controlPlane.localAPIEndpoint.advertiseAdress"},
        {V4(BT "controlPlane:\n  certificatKey: x\n"), "unknown field controlPlane.certificatKey"},
        {V4(BT "discoveryy: {}\n"), "unknown field JoinConfiguration.discoveryy at line 7"},
        {V3(BT "timeouts: {discovery: 1m}\n"), "unknown field JoinConfiguration.timeouts"},
        {V4(BT "timeouts: {tlsBootstrp: 1m}\n"), "unknown field timeouts.tlsBootstrp"},
        {V4(BT "nodeRegistration: {nmae: x}\n"), "unknown field nodeRegistration.nmae"},
        {V4(BT "dryRun: sure\n"), "dryRun at line 7 must be true or false"},
        {V4(BT "dryRun: \"true\"\n"), "dryRun at line 7 must be true or false"}, /* a string to kubeadm too */
        {V4(BT "caCertPath: ''\n"), "caCertPath at line 7 is empty"},
        {V4(BT "timeouts:\n  discovery: 0s\n"), "timeouts.discovery at line 8, column 14: invalid duration \"0s\": must be positive"},
        {V4(BT "timeouts:\n  tlsBootstrap: soon\n"), "timeouts.tlsBootstrap at line 8"},
        {V4(BT "timeouts:\n  etcdAPICall: -2m\n"), "timeouts.etcdAPICall at line 8"},
        {V4(BT "timeouts:\n  kubeletHealthCheck: [1m]\n"), "timeouts.kubeletHealthCheck"},
        {V4(BT "nodeRegistration: {imagePullPolicy: Sometimes}\n"),
         "nodeRegistration.imagePullPolicy at line 7 is \"Sometimes\": Always, IfNotPresent or Never"},
        {V4(BT "x: " "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["),
         "nests deeper than 64 levels"},
        {V4(BT) "---\napiVersion: v1\n---\n]", "YAML error at line 10"},
    };
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        kjoin_join_config c = {.api_version = "untouched"};
        kjoin_err err;
        if (parse(bad[i].yaml, &c, &err) != KJOIN_E_USAGE)
            fail_msg("case %zu accepted", i);
        if (!strstr(err.msg, bad[i].why))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, bad[i].why);
        assert_string_equal(c.api_version, "untouched");
        assert_null(strstr(err.msg, "0123456789"));
    }
}

/* Every field is honoured, noted as not applying, or refused (above). */
static void test_fields_honoured_or_noted(void **state)
{
    (void)state;
    const char *yaml = V4(BT "dryRun: true\ncaCertPath: /etc/kubernetes/pki/ca.crt\n"
                             "nodeRegistration:\n  name: worker-1\n  criSocket: unix:///x\n"
                             "  taints: [{key: k, value: v, effect: NoSchedule}, {key: only, effect: NoExecute}]\n"
                             "  kubeletExtraArgs: [{name: a, value: b}]\n  ignorePreflightErrors: [Swap, CRI]\n"
                             "  imagePullPolicy: Never\n  imagePullSerial: false\n"
                             "skipPhases: [preflight]\npatches: {directory: /p}\n"
                             "timeouts:\n  discovery: 2m\n  tlsBootstrap: 1m\n  kubernetesAPICall: 1m\n"
                             "  kubeletHealthCheck: 30s\n  controlPlaneComponentHealthCheck: 3m\n  etcdAPICall: 90s\n"
                             "  upgradeManifests: 5m\n");
    kjoin_join_config c;
    kjoin_err err;
    if (parse(yaml, &c, &err))
        fail_msg("%s", err.msg);
    assert_true(c.spec.dry_run);
    assert_string_equal(c.spec.node.paths.ca_cert_path, "/etc/kubernetes/pki/ca.crt");
    assert_string_equal(c.spec.node.name, "worker-1");
    assert_int_equal(c.spec.join.timeout_ms, 120000);
    assert_string_equal(c.cri_socket, "unix:///x");
    assert_string_equal(c.ignore_preflight, "Swap,CRI");
    assert_string_equal(c.skip_phases, "preflight");
    /* The one worker specification carries the node's registration whole. */
    assert_int_equal(c.spec.skip, KJOIN_PHASE_PREFLIGHT);
    assert_string_equal(c.spec.node.cri_socket, "unix:///x");
    assert_string_equal(c.spec.node.ignore_preflight, "Swap,CRI");
    assert_int_equal(c.spec.node.n_taints, 2);
    assert_string_equal(c.spec.node.taints[1], "only:NoExecute");
    assert_int_equal(c.spec.node.n_extra_args, 1);
    assert_string_equal(c.spec.node.extra_args[0], "a=b");
    assert_int_equal(c.n_taints, 2);
    assert_string_equal(c.taints[0], "k=v:NoSchedule");
    assert_string_equal(c.taints[1], "only:NoExecute");
    assert_int_equal(c.n_extra_args, 1);
    assert_string_equal(c.extra_args[0], "a=b");
    assert_string_equal(c.spec.node.patches_dir, "/p");
    assert_int_equal(c.spec.node.pull_policy, KJOIN_PULL_NEVER);
    assert_true(c.spec.node.pull_parallel);
    /* kubeadm's timeouts, each its stage's bound; discovery the join's one deadline (above) */
    assert_int_equal(c.spec.timeouts.tls_bootstrap_ms, 60000);
    assert_int_equal(c.spec.timeouts.api_call_ms, 60000);
    assert_int_equal(c.spec.timeouts.kubelet_health_ms, 30000);
    assert_int_equal(c.spec.timeouts.control_plane_ms, 180000);
    assert_int_equal(c.spec.timeouts.etcd_ms, 90000);
    const char *noted[] = {"timeouts.upgradeManifests"};
    assert_int_equal(c.n_notes, TU_LEN(noted));
    for (size_t i = 0; i < TU_LEN(noted); i++)
        if (strncmp(c.notes[i], noted[i], strlen(noted[i])) || !strstr(c.notes[i], "does not apply"))
            fail_msg("note %zu: %s", i, c.notes[i]);
    kjoin_join_config_release(&c);
}

/* The plain scalars as go-yaml v2 reads them (resolve.go), one rule for
 * both the values kjoin reads and the strings its kubeconfigs quote. */
static void test_yaml_scalars_as_go_yaml_reads_them(void **state)
{
    (void)state;
    static const struct {
        const char *yaml, *json;
    } cases[] = {
        {"a: 1_000", "{\"a\":1000}"},
        {"a: 0x1F", "{\"a\":31}"},
        {"a: 0o17", "{\"a\":15}"},
        {"a: 017", "{\"a\":15}"},
        {"a: 0b101", "{\"a\":5}"},
        {"a: -9223372036854775808", "{\"a\":-9223372036854775808}"},
        {"a: 18446744073709551615", "{\"a\":18446744073709551615}"},
        {"a: 1_0.5", "{\"a\":10.5}"},
        {"a: .5e1", "{\"a\":5.0}"},
        {"a: [yes, Off, y, N, ~, null, '']", "{\"a\":[true,false,true,false,null,null,\"\"]}"},
        {"a: 2001-12-14", "{\"a\":\"2001-12-14\"}"},
        {"a: 1:20", "{\"a\":\"1:20\"}"},
        {"a: \"123\"", "{\"a\":\"123\"}"},
        {"a: 0x", "{\"a\":\"0x\"}"},
        {"a: 18446744073709551616", "{\"a\":1.8446744073709552e+19}"},
        {"1: x", "{\"1\":\"x\"}"},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        json_object *got = NULL, *want = json_tokener_parse(cases[i].json);
        kjoin_err err;
        if (kjoin_yaml__load_json(cases[i].yaml, strlen(cases[i].yaml), KJOIN_E_USAGE, &got, &err))
            fail_msg("case %zu: %s", i, err.msg);
        if (!json_object_equal(got, want))
            fail_msg("case %zu: %s, not %s", i, json_object_to_json_string(got), cases[i].json);
        json_object_put(got);
        json_object_put(want);
    }
    const char *bad[] = {"a: .inf", "a: -.Inf", "a: .nan", "<<: {a: 1}", "[a]: 1"};
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        json_object *got = NULL;
        assert_int_equal(kjoin_yaml__load_json(bad[i], strlen(bad[i]), KJOIN_E_USAGE, &got, NULL), KJOIN_E_USAGE);
        assert_null(got);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v1beta3_token_discovery),
        cmocka_unit_test(test_v1beta4_file_discovery),
        cmocka_unit_test(test_accepted_variants),
        cmocka_unit_test(test_rejections_name_field_and_place),
        cmocka_unit_test(test_control_plane),
        cmocka_unit_test(test_fields_honoured_or_noted),
        cmocka_unit_test(test_yaml_scalars_as_go_yaml_reads_them),
    };
    return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
