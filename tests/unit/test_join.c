/* The join policy: kubeadm's token precedence, K3s only when asked, and the
 * checks between inputs, all decided before any network access. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kjoin/private/join.h>
#include <kjoin/private/util.h>
#include <kjoin/phases.h>
#include <kjoin/private/controlplane.h>

#include "testutil.h"

#define TOK "abcdef.0123456789abcdef"
#define DISC "bbbbbb.0123456789abcdef"
#define TLS "cccccc.0123456789abcdef"
#define K10 "K10" "e338877e96541dc59ad196d73a611a29f43178eea406fcdbfa507198c3c01bc1" "::node:s3cr3tpassword"

static const char *const one_endpoint[] = {"127.0.0.1:6443"};

/* A token-discovery specification with one endpoint and the unsafe mode,
 * so that only the tokens vary. */
static kjoin_join_spec base(void)
{
    return (kjoin_join_spec){.version = KJOIN_JOIN_SPEC_VERSION, .endpoints = one_endpoint, .n_endpoints = 1,
                             .unsafe_skip_ca_verification = true};
}

static void resolves(const kjoin_join_spec *s, kjoin_join_plan *p)
{
    kjoin_err err;
    if (kjoin_join_resolve(s, p, &err))
        fail_msg("%s", err.msg);
}

/* Fails unless the spec is refused with KJOIN_E_USAGE and a message holding
 * why, naming fields (never flags) and never a secret. */
static void refused(const kjoin_join_spec *s, const char *why)
{
    kjoin_join_plan p = {.n_endpoints = 99};
    kjoin_err err;
    if (kjoin_join_resolve(s, &p, &err) != KJOIN_E_USAGE)
        fail_msg("accepted; want \"%s\"", why);
    if (!strstr(err.msg, why))
        fail_msg("\"%s\" lacks \"%s\"", err.msg, why);
    assert_null(strstr(err.msg, "--"));
    assert_null(strstr(err.msg, "0123456789"));
    assert_null(strstr(err.msg, "s3cr3t"));
    assert_int_equal(p.n_endpoints, 99); /* untouched */
}

static void test_shared_token_serves_both(void **state)
{
    (void)state;
    kjoin_join_spec s = base();
    s.token = TOK;
    kjoin_join_plan p;
    resolves(&s, &p);
    assert_int_equal(p.kind, KJOIN_DISCOVERY_TOKEN);
    assert_null(p.k3s_reason);
    assert_string_equal(p.discovery_token.id, "abcdef");
    assert_string_equal(p.tls_bootstrap_token.id, "abcdef");
    assert_int_equal(p.timeout_ms, KJOIN_JOIN_DEFAULT_TIMEOUT_MS);
    assert_string_equal(p.endpoints[0].authority, "127.0.0.1:6443");
    kjoin_join_plan_clear(&p);
}

static void test_specific_tokens_win(void **state)
{
    (void)state;
    kjoin_join_spec s = base();
    kjoin_join_plan p;
    s.token = TOK, s.discovery_token = DISC;
    resolves(&s, &p);
    assert_string_equal(p.discovery_token.id, "bbbbbb");
    assert_string_equal(p.tls_bootstrap_token.id, "abcdef");
    s.discovery_token = NULL, s.tls_bootstrap_token = TLS;
    resolves(&s, &p);
    assert_string_equal(p.discovery_token.id, "abcdef");
    assert_string_equal(p.tls_bootstrap_token.id, "cccccc");
    s.token = NULL, s.discovery_token = DISC, s.tls_bootstrap_token = NULL;
    resolves(&s, &p); /* the TLS-bootstrap token defaults to the discovery token */
    assert_string_equal(p.tls_bootstrap_token.id, "bbbbbb");
    kjoin_join_plan_clear(&p);
}

static void test_environment_token_only_without_token_fields(void **state)
{
    (void)state;
    kjoin_join_spec s = base();
    kjoin_join_plan p;
    s.env_token = TOK;
    resolves(&s, &p);
    assert_string_equal(p.discovery_token.id, "abcdef");
    s.discovery_token = DISC;
    resolves(&s, &p);
    assert_string_equal(p.discovery_token.id, "bbbbbb");
    assert_string_equal(p.tls_bootstrap_token.id, "bbbbbb"); /* KJOIN_TOKEN was not used */
    s.discovery_token = NULL, s.token = "xxxxxx.0123456789abcdef";
    resolves(&s, &p);
    assert_string_equal(p.discovery_token.id, "xxxxxx");
    kjoin_join_plan_clear(&p);
}

static void test_token_file(void **state)
{
    (void)state;
    char *dir = tu_tmpdir(), path[512];
    snprintf(path, sizeof(path), "%s/token", dir);
    FILE *f = fopen(path, "w");
    fputs(TOK "\n", f);
    fclose(f);
    kjoin_join_spec s = base();
    kjoin_join_plan p;
    s.token_file = path;
    resolves(&s, &p);
    assert_string_equal(p.tls_bootstrap_token.id, "abcdef");
    s.token = TOK;
    refused(&s, "`token` and `token_file` are both set");
    s.token = NULL;
    f = fopen(path, "w");
    fputs("abcdef.0123456789abcde\n", f); /* one character short */
    fclose(f);
    refused(&s, "`token_file`: ");
    remove(path);
    kjoin_join_plan_clear(&p);
    free(dir);
}

/* A malformed token is an error, never a K3s password. */
static void test_malformed_token_is_not_k3s(void **state)
{
    (void)state;
    const char *bad[] = {"abcdef.0123456789abcdeff", "abcdef.0123456789abcde", TOK " ", "\xef\xbb\xbf" TOK,
                         "ABCDEF.0123456789abcdef", "abcdef:0123456789abcdef", "s3cr3tpassword"};
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        kjoin_join_spec s = base();
        s.token = bad[i];
        refused(&s, "[a-z0-9]{6}.[a-z0-9]{16}");
    }
}

static void test_k3s_only_when_chosen(void **state)
{
    (void)state;
    kjoin_join_spec s = base();
    kjoin_join_plan p;
    s.token = K10;
    resolves(&s, &p);
    assert_int_equal(p.kind, KJOIN_DISCOVERY_K3S);
    assert_string_equal(p.k3s_reason, "a K10 token");
    assert_true(p.k3s_token.has_hash);
    s.token = "s3cr3tpassword", s.flavor = KJOIN_FLAVOR_K3S;
    resolves(&s, &p);
    assert_string_equal(p.k3s_reason, "the flavor is k3s");
    assert_string_equal(p.k3s_token.password, "s3cr3tpassword");
    /* K3s agents' variables: K3S_URL gives the endpoint, K3S_TOKEN the token. */
    s = (kjoin_join_spec){.version = KJOIN_JOIN_SPEC_VERSION, .env_k3s_url = "https://10.0.0.1:6443",
                          .env_k3s_token = "s3cr3tpassword",
                          .unsafe_skip_ca_verification = true};
    resolves(&s, &p);
    assert_string_equal(p.k3s_reason, "K3S_URL is set");
    assert_string_equal(p.endpoints[0].authority, "10.0.0.1:6443");
    assert_int_equal(p.n_endpoints, 1);
    s.env_k3s_url = NULL, s.endpoints = one_endpoint, s.n_endpoints = 1;
    resolves(&s, &p);
    assert_string_equal(p.k3s_reason, "K3S_TOKEN is set");
    /* The kubeadm flavor ignores both. */
    s.flavor = KJOIN_FLAVOR_KUBEADM, s.token = TOK;
    resolves(&s, &p);
    assert_int_equal(p.kind, KJOIN_DISCOVERY_TOKEN);
    s.token = NULL, s.endpoints = NULL, s.n_endpoints = 0, s.env_k3s_url = "https://10.0.0.1:6443";
    refused(&s, "neither `endpoints` nor `discovery_file` is set");
    /* K3s takes one token. */
    s = base();
    s.token = K10, s.discovery_token = DISC;
    refused(&s, "K3s discovery takes one token");
    s = base();
    s.token = K10, s.discovery_file = "/etc/discovery.conf", s.endpoints = NULL, s.n_endpoints = 0;
    s.unsafe_skip_ca_verification = false;
    refused(&s, "`discovery_file` is for kubeadm clusters, but K3s was chosen (a K10 token)");
    kjoin_join_plan_clear(&p);
}

static void test_inputs_checked_against_each_other(void **state)
{
    (void)state;
    kjoin_join_spec s = base();
    kjoin_pinset *pins = kjoin_pinset_new();
    assert_int_equal(kjoin_pinset_add(pins, "sha256:e338877e96541dc59ad196d73a611a29f43178eea406fcdbfa507198c3c01bc1",
                                      NULL), KJOIN_OK);
    s.token = TOK, s.pins = pins;
    refused(&s, "`unsafe_skip_ca_verification` contradicts `pins`");
    s = base();
    refused(&s, "no bootstrap token");
    s.tls_bootstrap_token = TLS;
    refused(&s, "no bootstrap token");
    s = (kjoin_join_spec){.version = KJOIN_JOIN_SPEC_VERSION, .discovery_file = "/d.conf", .endpoints = one_endpoint,
                          .n_endpoints = 1, .token = TOK};
    refused(&s, "`endpoints` (token discovery) and `discovery_file` are both set");
    s = (kjoin_join_spec){.version = KJOIN_JOIN_SPEC_VERSION, .discovery_file = "/d.conf", .discovery_token = DISC};
    refused(&s, "are for token discovery, not `discovery_file`");
    s = (kjoin_join_spec){.version = KJOIN_JOIN_SPEC_VERSION, .discovery_file = "/d.conf"};
    refused(&s, "file discovery needs the token");
    s = (kjoin_join_spec){.version = KJOIN_JOIN_SPEC_VERSION};
    refused(&s, "nothing to discover the cluster from");
    const char *many[17];
    for (size_t i = 0; i < 17; i++)
        many[i] = "127.0.0.1:6443";
    s = base();
    s.token = TOK, s.endpoints = many, s.n_endpoints = 17;
    refused(&s, "17 `endpoints` given: at most 16 endpoints");
    s.n_endpoints = 1, s.endpoints = (const char *const[]){"127.0.0.1:6443/api"};
    refused(&s, "a path is not allowed");
    s = base();
    s.token = TOK;
    kjoin_join_plan p;
    resolves(&s, &p);
    s.cluster_name = "a b";
    refused(&s, "`cluster_name`");
    s.cluster_name = NULL, s.kubeconfig_out = "";
    refused(&s, "`kubeconfig_out` is empty");
    kjoin_join_plan_clear(&p);
    kjoin_pinset_free(pins);
}

static void test_phases(void **state)
{
    (void)state;
    unsigned m = 0, steps = 0;
    kjoin_err err;
    assert_int_equal(kjoin_phases_parse("preflight,kubelet-start", &m, &err), KJOIN_OK);
    assert_int_equal(m, KJOIN_PHASE_PREFLIGHT | KJOIN_PHASE_KUBELET_START);
    m = 0;
    assert_int_equal(kjoin_phases_parse("control-plane-prepare/all,control-plane-join,kubelet-wait-bootstrap", &m, &err),
                     KJOIN_OK);
    assert_int_equal(m, KJOIN_PHASE_KUBELET_WAIT_BOOTSTRAP | KJOIN_PHASE_CONTROL_PLANE_PREPARE |
                            KJOIN_PHASE_CONTROL_PLANE_JOIN);
    assert_int_equal(steps, 0);
    /* A sub-phase of control-plane-prepare is that step, not the phase; the
     * older name of etcd-join and check-etcd are kubeadm's. */
    kjoin_phases_spec spec;
    kjoin_phases_spec_init(&spec);
    assert_int_equal(kjoin_skip_phases(&spec, "control-plane-prepare/download-certs,control-plane-prepare/control-plane,"
                                       "control-plane-join/etcd,check-etcd", &err),
                     KJOIN_OK);
    assert_int_equal(spec.skip, KJOIN_PHASE_ETCD_JOIN | KJOIN_PHASE_CHECK_ETCD);
    assert_int_equal(spec.skip_prepare, KJOIN_PREPARE_DOWNLOAD_CERTS | KJOIN_PREPARE_CONTROL_PLANE);
    /* kjoin_phases_parse fills a mask of phases: a step is not one. */
    m = 0;
    assert_int_equal(kjoin_phases_parse("control-plane-prepare/certs", &m, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "is a step of control-plane-prepare"));
    const char *bad[] = {"kubelet", "preflight,kubelet-strat", "Preflight", "kubelet-start-x", "preflight/all/x,x",
                         "control-plane-prepare/etcd", "control-plane-join/update-status", "kubelet-start/all"};
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        m = 0;
        if (kjoin_skip_phases(&spec, bad[i], &err) != KJOIN_E_USAGE)
            fail_msg("\"%s\" accepted", bad[i]);
        assert_non_null(strstr(err.msg, "unknown phase"));
    }
    m = steps = 0;
    assert_int_equal(kjoin_phases_parse("", &m, &err), KJOIN_OK);
    assert_int_equal(m | steps, 0);
    unsigned bit, one;
    assert_int_equal(kjoin_phase_lookup("wait-control-plane", 18, &bit, &one, &err), KJOIN_OK);
    assert_int_equal(bit, KJOIN_PHASE_WAIT_CONTROL_PLANE);
    assert_string_equal(kjoin_phase_name(KJOIN_PHASE_ETCD_JOIN), "etcd-join");
    assert_string_equal(kjoin_phase_name(KJOIN_PHASE_KUBELET_START), "kubelet-start");
}

/* One table: every name in it looks up to its own bit and step, each phase
 * bit is listed once in run order before any other name of it, and the
 * lookup's message names exactly the listed names. */
static void test_one_phase_table(void **state)
{
    (void)state;
    size_t n;
    const kjoin_phase_info *t = kjoin_phase_table(&n);
    assert_true(n >= 8);
    unsigned seen = 0, bit, one;
    kjoin_err err, bad;
    assert_int_equal(kjoin_phase_lookup("no-such-phase", 13, &bit, &one, &bad), KJOIN_E_USAGE);
    const char *list = strstr(bad.msg, "kubeadm's join has ");
    assert_non_null(list);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(kjoin_phase_lookup(t[i].name, strlen(t[i].name), &bit, &one, &err), KJOIN_OK);
        assert_int_equal(bit, t[i].bit);
        assert_int_equal(one, t[i].steps);
        const char *slash = strchr(t[i].name, '/');
        if (!slash) { /* a phase: listed once, with help, in the message */
            assert_false(seen & t[i].bit);
            assert_non_null(t[i].help);
            assert_non_null(strstr(list, t[i].name));
            assert_string_equal(kjoin_phase_name(t[i].bit), t[i].name);
            seen |= t[i].bit;
        } else if (t[i].help) { /* a listed sub-phase: after its phase, its step in the message */
            assert_true(seen & t[i].bit);
            assert_non_null(strstr(list, slash));
        } else { /* another name (control-plane-join/etcd): accepted, not listed */
            assert_null(strstr(list, t[i].name));
        }
    }
    assert_int_equal(seen, KJOIN_PHASE_ALL | KJOIN_PHASES_CONTROL_PLANE);
    /* run order: kubeadm's */
    assert_string_equal(t[0].name, "preflight");
    assert_string_equal(kjoin_phase_name(KJOIN_PHASE_WAIT_CONTROL_PLANE), "wait-control-plane");
}


/* A worker spec whose discovery would fail at once, reading a token file
 * that is not there: what fails before it proves its order. */
static void worker_base(kjoin_phases_spec *w)
{
    kjoin_phases_spec_init(w);
    w->join.endpoints = one_endpoint, w->join.n_endpoints = 1, w->join.unsafe_skip_ca_verification = true;
    w->join.token_file = "/nonexistent/kjoin-token";
    w->skip = KJOIN_PHASE_PREFLIGHT | KJOIN_PHASE_KUBELET_START; /* discovery alone */
}

static void test_worker_node_name_before_anything(void **state)
{
    (void)state;
    char long_name[256];
    memset(long_name, 'a', 254);
    long_name[254] = '\0';
    const char *bad[] = {"Node_1", "a-.b", "a..b", long_name, "-a", "a.", "", "a b", "node\xc3\xa9"};
    const unsigned skips[] = {KJOIN_PHASE_PREFLIGHT | KJOIN_PHASE_KUBELET_START, 0};
    for (size_t i = 0; i < TU_LEN(bad); i++)
        for (size_t k = 0; k < TU_LEN(skips) + 1; k++) {
            kjoin_phases_spec w;
            kjoin_phases_outcome o;
            kjoin_err err;
            worker_base(&w);
            w.node.name = bad[i];
            w.skip = k < TU_LEN(skips) ? skips[k] : 0;
            w.only = k < TU_LEN(skips) ? 0 : KJOIN_PHASE_KUBELET_WAIT_BOOTSTRAP;
            if (kjoin_join_phases(&w, &o, &err) != KJOIN_E_USAGE || !strstr(err.msg, "`node_name`"))
                fail_msg("name \"%.20s\", case %zu: %s", bad[i], k, err.msg);
            assert_false(o.discovered);
            kjoin_phases_outcome_release(&o);
        }
    /* A valid name in upper case is lower-cased, as kubeadm does, and the
     * join goes on (to the token file, which is missing). */
    kjoin_phases_spec w;
    kjoin_phases_outcome o;
    kjoin_err err;
    worker_base(&w);
    w.node.name = " Worker-1.Example ";
    assert_int_equal(kjoin_join_phases(&w, &o, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "`token_file`"));
    assert_string_equal(o.node_name.name, "worker-1.example");
    kjoin_phases_outcome_release(&o);
    /* kubeadm's rule: a hostname-override among the kubelet's arguments is
     * the node's name, since the kubelet registers under it. */
    const char *const args[] = {"v=2", "hostname-override=First", "hostname-override=Second-1"};
    worker_base(&w);
    w.node.name = "given";
    w.node.extra_args = args, w.node.n_extra_args = 3;
    assert_int_equal(kjoin_join_phases(&w, &o, &err), KJOIN_E_USAGE);
    assert_string_equal(o.node_name.name, "second-1");
    kjoin_phases_outcome_release(&o);
    const char *const bad_override[] = {"hostname-override=Bad_Name"};
    w.node.extra_args = bad_override, w.node.n_extra_args = 1;
    assert_int_equal(kjoin_join_phases(&w, &o, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "is not a valid node name"));
    kjoin_phases_outcome_release(&o);
}

static void test_worker_phases_asked(void **state)
{
    (void)state;
    kjoin_phases_spec w;
    kjoin_phases_outcome o;
    kjoin_err err;
    worker_base(&w);
    w.node.name = "n";
    w.only = KJOIN_PHASE_PREFLIGHT | KJOIN_PHASE_KUBELET_START;
    assert_int_equal(kjoin_join_phases(&w, &o, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "`only`"));
    w.only = 8;
    assert_int_equal(kjoin_join_phases(&w, &o, &err), KJOIN_E_USAGE);
    w.only = 0, w.tls_bootstrap = true, w.dry_run = true;
    assert_int_equal(kjoin_join_phases(&w, &o, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "`tls_bootstrap`"));
    /* The embedded specifications' fields the join decides itself: refused, never silently ignored. */
    worker_base(&w);
    w.join.kubeconfig_out = "/elsewhere.conf";
    assert_int_equal(kjoin_join_phases(&w, &o, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "`node.paths`"));
    worker_base(&w);
    w.join.force = true;
    assert_int_equal(kjoin_join_phases(&w, &o, &err), KJOIN_E_USAGE);
    worker_base(&w);
    w.bootstrap.kubeconfig_out = "/elsewhere.conf";
    assert_int_equal(kjoin_join_phases(&w, &o, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "`bootstrap` holds only"));
    worker_base(&w);
    w.bootstrap.node_name = "other";
    assert_int_equal(kjoin_join_phases(&w, &o, &err), KJOIN_E_USAGE);
    /* The node's address and port, checked once at the boundary (the steps trust the context). */
    static const char *const not_ips[] = {"not-an-ip", "10.0.0.2.1", "", "10.0.0.2:6443", "[fd00::2]"};
    for (size_t i = 0; i < sizeof(not_ips) / sizeof(not_ips[0]); i++) {
        worker_base(&w);
        w.control_plane = true, w.advertise_address = not_ips[i];
        assert_int_equal(kjoin_join_phases(&w, &o, &err), KJOIN_E_USAGE);
        assert_non_null(strstr(err.msg, "is not an IP address"));
    }
    for (int port = -1; port <= 65536; port += 65537) {
        worker_base(&w);
        w.control_plane = true, w.bind_port = port;
        assert_int_equal(kjoin_join_phases(&w, &o, &err), KJOIN_E_USAGE);
        assert_non_null(strstr(err.msg, "is not a port"));
    }
    /* The wait alone needs no discovery and none of its inputs (the token
     * file is missing): it waits, here for a kubelet that never answers. */
    char *d = tu_tmpdir();
    worker_base(&w);
    w.node.name = "n";
    w.only = KJOIN_PHASE_KUBELET_WAIT_BOOTSTRAP;
    w.join.timeout_ms = 300;
    w.node.paths.kubernetes_dir = d, w.node.paths.kubelet_dir = d;
    w.node.systemd_dir = "/nonexistent";
    assert_int_equal(kjoin_join_phases(&w, &o, &err), KJOIN_E_TIMEOUT);
    assert_false(o.discovered);
    kjoin_phases_outcome_release(&o);
    rmdir(d);
    free(d);
    /* The defaults the initialiser sets. */
    kjoin_phases_spec_init(&w);
    assert_int_equal(w.join.timeout_ms, KJOIN_JOIN_DEFAULT_TIMEOUT_MS);
    assert_string_equal(w.node.paths.kubernetes_dir, KJOIN_NODE_KUBERNETES_DIR);
    assert_string_equal(w.node.paths.kubelet_dir, KJOIN_NODE_KUBELET_DIR);
    assert_int_equal(w.skip | w.only, 0);
}

/* kjoin reset of a node: a control-plane record kjoin cannot read leaves
 * the control plane's part, never the worker's undo (which goes on, and is
 * said); with no record of either, nothing to do and nothing changed. */
static void test_node_reset_bad_control_plane_record(void **state)
{
    (void)state;
    char *d = tu_tmpdir(), kube[300], kubelet[300], path[400], rec[2048], cmd[1200];
    snprintf(kube, sizeof(kube), "%s/etc", d);
    snprintf(kubelet, sizeof(kubelet), "%s/kubelet", d);
    snprintf(cmd, sizeof(cmd), "mkdir -p %s %s && chmod -R go-w %s", kube, kubelet, d);
    assert_int_equal(system(cmd), 0);
    kjoin_reset_spec spec = {.version = KJOIN_RESET_SPEC_VERSION,
                             .node = {.paths = {.kubernetes_dir = kube, .kubelet_dir = kubelet},
                                           .systemd_dir = "/nonexistent"}};
    kjoin_reset_result r;
    kjoin_err err;
    assert_int_equal(kjoin_reset(&spec, &r, &err), KJOIN_OK); /* nothing joined */
    assert_false(r.node.had_state);
    assert_false(r.control_plane->had_record);
    kjoin_reset_result_release(&r);
    /* config.yaml: a healthz port of 0 (none: the kubelet is not asked) */
    tu_write(kubelet, "config.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nhealthzPort: 0\n");
    snprintf(cmd, sizeof(cmd), "sha256sum %s/config.yaml | cut -c1-64 >%s/sum", kubelet, d);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof(path), "%s/sum", d);
    char *sum = tu_read(path, NULL);
    sum[64] = '\0';
    snprintf(rec, sizeof(rec), "{\"kind\":\"KjoinJoinRecord\",\"joinID\":\"j\",\"server\":\"https://x\",\"nodeName\":\"n1\","
             "\"files\":[{\"path\":\"%s/config.yaml\",\"sha256\":\"%s\"}],\"createdDirs\":[],\"kubeletDirBefore\":[]}", kubelet, sum);
    free(sum);
    tu_write(kube, KJOIN_NODE_STATE_NAME, rec);
    tu_write(kube, KJOIN_CP_LEGACY_RECORD_NAME, "{\"kind\":\"Something\"}");
    snprintf(cmd, sizeof(cmd), "chmod 600 %s/*.json", kube);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(kjoin_reset(&spec, &r, &err), KJOIN_E_USAGE);
    if (!strstr(err.msg, "the worker's join was undone"))
        fail_msg("%s", err.msg);
    assert_non_null(strstr(r.control_plane_refused, "not kjoin's"));
    assert_true(r.changed && r.node.had_state);
    snprintf(path, sizeof(path), "%s/config.yaml", kubelet);
    assert_int_equal(access(path, F_OK), -1); /* the worker's file: removed */
    snprintf(path, sizeof(path), "%s/%s", kube, KJOIN_CP_LEGACY_RECORD_NAME);
    assert_int_equal(access(path, F_OK), 0); /* the control plane's: left as it is */
    kjoin_reset_result_release(&r);
    tu_rmtree(d);
}

static void hex_of(const char *text, char out[65])
{
    unsigned char sum[32];
    kjoin_sha256(text, strlen(text), sum, NULL);
    kjoin_hex(sum, 32, out);
}

/* A directory the worker's join made that the control plane's files kept
 * from being emptied (pki/) is removed once both joins' files are gone, not
 * left and named as holding others' files. */
/* one_file: the control plane's part in the join's one record file, as kjoin
 * writes it now; else in a file of its own, as an earlier kjoin wrote it. */
static void reset_both_parts(bool one_file)
{
    char *d = tu_tmpdir(), kube[300], kubelet[300], pki[320], path[400], rec[4096], ca[65], crt[65];
    snprintf(kube, sizeof(kube), "%s/etc", d);
    snprintf(kubelet, sizeof(kubelet), "%s/kubelet", d);
    snprintf(pki, sizeof(pki), "%s/pki", kube);
    assert_int_equal(mkdir(kube, 0700), 0);
    assert_int_equal(mkdir(kubelet, 0700), 0);
    assert_int_equal(mkdir(pki, 0700), 0);
    tu_write(pki, "ca.crt", "the CA");
    tu_write(pki, "apiserver.crt", "the API server's");
    hex_of("the CA", ca);
    hex_of("the API server's", crt);
    char part[1000];
    snprintf(part, sizeof(part), "{\"kind\":\"KjoinControlPlaneRecord\",\"files\":[{\"path\":\"%s/apiserver.crt\","
             "\"sha256\":\"%s\"}]}", pki, crt);
    snprintf(rec, sizeof(rec), "{\"kind\":\"KjoinJoinRecord\",\"joinID\":\"j\",\"server\":\"https://x\",\"nodeName\":\"n1\","
             "\"files\":[{\"path\":\"%s/ca.crt\",\"sha256\":\"%s\"}],\"createdDirs\":[\"%s\"],\"kubeletDirBefore\":[]%s%s}",
             pki, ca, pki, one_file ? ",\"controlPlane\":" : "", one_file ? part : "");
    tu_write(kube, KJOIN_NODE_STATE_NAME, rec);
    if (!one_file)
        tu_write(kube, KJOIN_CP_LEGACY_RECORD_NAME, part);
    snprintf(path, sizeof(path), "chmod -R go-rwx %s", d);
    assert_int_equal(system(path), 0);
    kjoin_reset_spec spec = {.version = KJOIN_RESET_SPEC_VERSION,
                             .node = {.paths = {.kubernetes_dir = kube, .kubelet_dir = kubelet},
                                           .systemd_dir = "/nonexistent"}};
    kjoin_reset_result r;
    kjoin_err err;
    struct stat st;
    /* A dry run lists what goes and changes nothing; skipping cleanup-node removes nothing either. */
    spec.dry_run = true;
    if (kjoin_reset(&spec, &r, &err))
        fail_msg("%s", err.msg);
    /* the files of both parts and the records: one record file, listed once, or the two of an earlier kjoin */
    assert_true(r.dry_run && !r.changed && r.node.n_removed >= 1 && r.control_plane->n_removed >= 2);
    assert_true(r.node.n_removed + r.control_plane->n_removed == (one_file ? 3u : 4u));
    snprintf(path, sizeof(path), "%s/%s", kube, KJOIN_NODE_STATE_NAME);
    size_t listed = 0;
    for (size_t i = 0; i < r.node.n_removed; i++)
        listed += !strcmp(r.node.removed[i], path);
    for (size_t i = 0; i < r.control_plane->n_removed; i++)
        listed += !strcmp(r.control_plane->removed[i], path);
    assert_int_equal(listed, 1);
    snprintf(path, sizeof(path), "%s/ca.crt", pki);
    assert_int_equal(stat(path, &st), 0);
    snprintf(path, sizeof(path), "%s/%s", kube, one_file ? KJOIN_NODE_STATE_NAME : KJOIN_CP_LEGACY_RECORD_NAME);
    assert_int_equal(stat(path, &st), 0);
    kjoin_reset_result_release(&r);
    spec.dry_run = false;
    spec.skip = KJOIN_RESET_CLEANUP_NODE;
    if (kjoin_reset(&spec, &r, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(r.node.n_removed + r.control_plane->n_removed, 0);
    assert_int_equal(stat(path, &st), 0);
    kjoin_reset_result_release(&r);
    spec.skip = 0;
    if (kjoin_reset(&spec, &r, &err))
        fail_msg("%s", err.msg);
    assert_true(r.node.had_state && r.control_plane->had_record);
    for (size_t i = 0; i < r.node.n_kept; i++)
        fail_msg("left: %s", r.node.kept[i]);
    assert_int_equal(r.control_plane->n_left, 0);
    assert_int_equal(stat(pki, &st), -1); /* emptied by the control plane's part, removed after it */
    assert_int_equal(stat(path, &st), -1);
    snprintf(path, sizeof(path), "%s/%s", kube, KJOIN_NODE_STATE_NAME);
    assert_int_equal(stat(path, &st), -1); /* the record goes with its last part */
    kjoin_reset_result_release(&r);
    tu_rmtree(d);
}

static void test_node_reset_empties_shared_directories(void **state)
{
    (void)state;
    reset_both_parts(true);
}

/* A node an earlier kjoin joined (its control-plane record a file of its own): reset as it was. */
static void test_node_reset_of_an_earlier_record(void **state)
{
    (void)state;
    reset_both_parts(false);
}

/* kubeadm reset's phase names, and the one that is not. */
static void test_reset_phases(void **state)
{
    (void)state;
    unsigned mask = 0;
    kjoin_err err;
    assert_int_equal(kjoin_reset_phases_parse("preflight,cleanup-node", &mask, &err), KJOIN_OK);
    assert_int_equal(mask, KJOIN_RESET_PREFLIGHT | KJOIN_RESET_CLEANUP_NODE);
    assert_int_equal(kjoin_reset_phases_parse("remove-etcd-member", &mask, &err), KJOIN_OK);
    assert_int_equal(mask, KJOIN_RESET_ALL);
    assert_int_equal(kjoin_reset_phases_parse("cleanup-nodes", &mask, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "(did you mean \"cleanup-node\"?)"));
    assert_int_equal(kjoin_reset_phases_parse("update-cluster-status", &mask, &err), KJOIN_E_USAGE);
    kjoin_reset_spec spec = {.version = KJOIN_RESET_SPEC_VERSION, .skip = 8};
    kjoin_reset_result r;
    assert_int_equal(kjoin_reset(&spec, &r, &err), KJOIN_E_USAGE);
    kjoin_reset_result_release(&r);
}

/* A per-node load balancer is a worker's, and an https server's URL: both
 * refused before anything is read (no endpoint answers here). */
static void test_kubelet_server_refused(void **state)
{
    (void)state;
    kjoin_err err;
    kjoin_phases_spec w;
    kjoin_phases_outcome o;
    kjoin_phases_spec_init(&w);
    w.join.endpoints = (const char *const[]){"127.0.0.1:1"};
    w.join.n_endpoints = 1;
    w.join.token = TOK;
    w.node.name = "n1";
    w.kubelet_server = "https://127.0.0.1:6443";
    w.control_plane = true;
    assert_int_equal(kjoin_join_phases(&w, &o, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "`kubelet_server` is a worker's"));
    kjoin_phases_outcome_release(&o);
    w.control_plane = false;
    w.kubelet_server = "http://127.0.0.1:6443";
    assert_int_equal(kjoin_join_phases(&w, &o, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "`kubelet_server` \"http://127.0.0.1:6443\" is no https:// URL"));
    assert_false(o.discovered);
    kjoin_phases_outcome_release(&o);
}

/* Every public specification the join takes is versioned: one of another
 * version (a program built against other headers), or none, is refused
 * before anything is read, its initialiser named. */
static void test_versions_refused(void **state)
{
    (void)state;
    kjoin_err err;
    kjoin_phases_spec w;
    kjoin_phases_outcome o;
    kjoin_phases_spec_init(&w);
    assert_int_equal(w.version, KJOIN_PHASES_SPEC_VERSION);
    assert_int_equal(w.join.version, KJOIN_JOIN_SPEC_VERSION);
    assert_int_equal(w.bootstrap.version, KJOIN_BOOTSTRAP_SPEC_VERSION);
    w.version = KJOIN_PHASES_SPEC_VERSION + 1;
    assert_int_equal(kjoin_join_phases(&w, &o, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "begin it with kjoin_phases_spec_init"));
    kjoin_phases_outcome_release(&o);
    assert_int_equal(kjoin_join_phases(NULL, &o, &err), KJOIN_E_USAGE);
    kjoin_phases_outcome_release(&o);
    kjoin_join_spec j = {.endpoints = (const char *const[]){"127.0.0.1:1"}, .n_endpoints = 1, .token = TOK};
    kjoin_join_outcome jo;
    assert_int_equal(kjoin_join(&j, &jo, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "KJOIN_JOIN_SPEC_INIT"));
    kjoin_reset_spec rs = {.dry_run = true};
    kjoin_reset_result rr;
    assert_int_equal(kjoin_reset(&rs, &rr, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "KJOIN_RESET_SPEC_INIT"));
    kjoin_reset_result_release(&rr);
    kjoin_bootstrap_spec bs = {.bootstrap_kubeconfig = "/nonexistent"};
    kjoin_bootstrap_result br;
    assert_int_equal(kjoin_tls_bootstrap(&bs, &br, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "KJOIN_BOOTSTRAP_SPEC_INIT"));
    kjoin_kubeapi_config cfg = {0};
    kjoin_kubeapi_options ko = {.timeout_ms = 1000};
    kjoin_kubeapi *api = NULL;
    assert_int_equal(kjoin_kubeapi_new(&cfg, &ko, &api, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "KJOIN_KUBEAPI_OPTIONS_INIT"));
    assert_null(api);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_token_serves_both),
        cmocka_unit_test(test_specific_tokens_win),
        cmocka_unit_test(test_environment_token_only_without_token_fields),
        cmocka_unit_test(test_token_file),
        cmocka_unit_test(test_malformed_token_is_not_k3s),
        cmocka_unit_test(test_k3s_only_when_chosen),
        cmocka_unit_test(test_inputs_checked_against_each_other),
        cmocka_unit_test(test_phases),
        cmocka_unit_test(test_one_phase_table),
        cmocka_unit_test(test_worker_node_name_before_anything),
        cmocka_unit_test(test_worker_phases_asked),
        cmocka_unit_test(test_node_reset_bad_control_plane_record),
        cmocka_unit_test(test_node_reset_empties_shared_directories),
        cmocka_unit_test(test_node_reset_of_an_earlier_record),
        cmocka_unit_test(test_reset_phases),
        cmocka_unit_test(test_versions_refused), cmocka_unit_test(test_kubelet_server_refused),
    };
    return cmocka_run_group_tests_name("join", tests, NULL, NULL);
}
