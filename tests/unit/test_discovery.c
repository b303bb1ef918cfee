#include <stdio.h>
#include <string.h>

#include <kjoin/private/discovery.h>
#include <kjoin/private/jws.h>
#include <kjoin/private/transport.h>

#include "testutil.h"
#include "../../pkg/discovery/internal.h"

static void test_endpoints(void **state)
{
    (void)state;
    struct {
        const char *in, *host, *authority;
        unsigned port;
    } good[] = {
        {"10.0.0.1:6443", "10.0.0.1", "10.0.0.1:6443", 6443},
        {"[::1]:6443", "::1", "[::1]:6443", 6443},
        {"https://api.example.com:443", "api.example.com", "api.example.com:443", 443},
        {"HTTPS://[fe80::1]:6443/", "fe80::1", "[fe80::1]:6443", 6443},
        {"localhost:1", "localhost", "localhost:1", 1},
        {"k8s-api.internal:65535", "k8s-api.internal", "k8s-api.internal:65535", 65535},
    };
    for (size_t i = 0; i < TU_LEN(good); i++) {
        kjoin_endpoint ep;
        kjoin_err err;
        if (kjoin_endpoint_parse(good[i].in, &ep, &err) != KJOIN_OK)
            fail_msg("\"%s\": %s", good[i].in, err.msg);
        assert_string_equal(ep.host, good[i].host);
        assert_string_equal(ep.authority, good[i].authority);
        assert_int_equal(ep.port, good[i].port);
    }
    const char *bad[] = {"", "::1:6443", "host", "host:", "host:0", "host:65536", "host:6443x", "http://h:1",
                         "ftp://h:1", "[::1]6443", "[zz]:1", "[::1]:", "-bad-:1", "a..b:1", ":6443",
                         "host:6443/path", "https://10.0.0.1:6443/api", "h:1?x", "1.2.3.4:-1", "host name:1", "[10.0.0.1]:1", "host:0006443",
                         "https://", "h_st:1"};
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        kjoin_endpoint ep = {.port = 7};
        if (kjoin_endpoint_parse(bad[i], &ep, NULL) != KJOIN_E_USAGE)
            fail_msg("accepted endpoint \"%s\"", bad[i]);
        assert_int_equal(ep.port, 7);
    }
    /* An error echoes the endpoint, an IPv6 address without brackets too, but
     * never what may be a secret pasted in its place. */
    static const struct {
        const char *in;
        bool shown;
    } echo[] = {{"fd00::1:6443", true}, {"2001:db8::10:6443", true}, {"::1:6443", true},
                {"K10" "0123456789012345678901234567890123456789012345678901234567890123::server:pw", false},
                {"user@host:1", false}, {"abcdef.0123456789abcdef", false}};
    for (size_t i = 0; i < TU_LEN(echo); i++) {
        kjoin_endpoint ep;
        kjoin_err err;
        assert_int_equal(kjoin_endpoint_parse(echo[i].in, &ep, &err), KJOIN_E_USAGE);
        if ((strstr(err.msg, echo[i].in) != NULL) != echo[i].shown || (!echo[i].shown && !strstr(err.msg, "not shown")))
            fail_msg("\"%s\": %s", echo[i].in, err.msg);
    }
}

/* The real API server's bodies (compact, and pretty-printed for curl's user
 * agent) parse alike; every signed token verifies; unsigned ones have no key. */
static void test_real_cluster_info(void **state)
{
    (void)state;
    size_t compact_len, pretty_len, content_len;
    char *compact = tu_read("testdata/real-apiserver/cluster-info.anon.body", &compact_len);
    char *pretty = tu_read("testdata/real-apiserver/cluster-info.anon.http1.1.curl-ua.body", &pretty_len);
    char *content = tu_read("testdata/real-apiserver/cluster-info.kubeconfig-content.txt", &content_len);
    json_object *root = tu_json("testdata/real-apiserver/tokens.json");
    json_object *tokens = json_object_object_get(root, "tokens");
    for (size_t i = 0; i < json_object_array_length(tokens); i++) {
        json_object *t = json_object_array_get_idx(tokens, i);
        const char *id = tu_str(t, "id"), *secret = tu_str(t, "secret"), *want = tu_str(t, "jws_in_cluster_info");
        kjoin_cluster_info a, b;
        assert_int_equal(kjoin_cluster_info_parse(compact, compact_len, id, &a, NULL), KJOIN_OK);
        assert_int_equal(kjoin_cluster_info_parse(pretty, pretty_len, id, &b, NULL), KJOIN_OK);
        assert_int_equal(a.kubeconfig_len, content_len);
        assert_memory_equal(a.kubeconfig, content, content_len);
        assert_int_equal(b.kubeconfig_len, content_len);
        assert_memory_equal(b.kubeconfig, content, content_len);
        if (want) {
            assert_string_equal(a.jws, want);
            assert_string_equal(b.jws, want);
            assert_int_equal(kjoin_jws_verify(a.jws, a.kubeconfig, a.kubeconfig_len, id, secret, strlen(secret), NULL),
                             KJOIN_OK);
        } else {
            assert_null(a.jws);
            assert_null(b.jws);
        }
        kjoin_cluster_info_release(&a);
        kjoin_cluster_info_release(&b);
    }
    json_object_put(root);
    free(compact);
    free(pretty);
    free(content);
}

/* cluster-info sign reproduces the real ConfigMap's signatures byte for byte. */
static void test_sign_reproduces_control_plane(void **state)
{
    (void)state;
    size_t len, body_len;
    char *content = tu_read("testdata/real-apiserver/cluster-info.kubeconfig-content.txt", &len);
    char *body = tu_read("testdata/real-apiserver/cluster-info.anon.body", &body_len);
    kjoin_token toks[3];
    const char *given[] = {"cig1fj.t385dkb58bnqdjfr", "abcdef.0123456789abcdef", "07401b.f395accd246ae52d"};
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(kjoin_token_parse(given[i], &toks[i], NULL), KJOIN_OK);
    char *json = NULL;
    assert_int_equal(kjoin_cluster_info_sign(content, len, toks, 3, &json, NULL), KJOIN_OK);
    json_object *ours = json_tokener_parse(json), *real = json_tokener_parse(body);
    json_object *od = json_object_object_get(ours, "data"), *rd = json_object_object_get(real, "data");
    assert_int_equal(json_object_object_length(od), json_object_object_length(rd));
    json_object_object_foreach(rd, key, val)
    {
        json_object *mine = NULL;
        assert_true(json_object_object_get_ex(od, key, &mine));
        assert_string_equal(json_object_get_string(mine), json_object_get_string(val));
    }
    assert_string_equal(tu_str(ours, "kind"), "ConfigMap");
    assert_string_equal(tu_str(json_object_object_get(ours, "metadata"), "namespace"), "kube-public");
    /* keys come out sorted by token id, as Go marshals maps */
    assert_true(strstr(json, "jws-kubeconfig-07401b") < strstr(json, "jws-kubeconfig-abcdef"));
    json_object_put(ours);
    json_object_put(real);
    free(json);
    toks[1] = toks[0];
    assert_int_equal(kjoin_cluster_info_sign(content, len, toks, 2, &json, NULL), KJOIN_E_USAGE);
    free(content);
    free(body);
}

static void test_malformed_cluster_info(void **state)
{
    (void)state;
    struct {
        const char *body, *why;
    } bad[] = {
        {"", "not valid JSON"},
        {"{\"kind\":\"ConfigMap\",\"data\":{\"kubeconfig\":\"x\"}", "not valid JSON"},
        {"[1,2]", "not a ConfigMap"},
        {"{\"kind\":\"Status\",\"code\":403}", "not a ConfigMap"},
        {"{\"data\":{\"kubeconfig\":\"x\"}}", "not a ConfigMap"},
        {"{\"kind\":\"ConfigMap\"}", "has no data"},
        {"{\"kind\":\"ConfigMap\",\"data\":[]}", "has no data"},
        {"{\"kind\":\"ConfigMap\",\"data\":{}}", "no kubeconfig"},
        {"{\"kind\":\"ConfigMap\",\"data\":{\"kubeconfig\":\"\"}}", "no kubeconfig"},
        {"{\"kind\":\"ConfigMap\",\"data\":{\"kubeconfig\":7}}", "not a string"},
        {"{\"kind\":\"ConfigMap\",\"data\":{\"kubeconfig\":\"a\\u0000b\"}}", "NUL"},
        {"{\"kind\":\"ConfigMap\",\"data\":{\"kubeconfig\":\"x\",\"jws-kubeconfig-abcdef\":null}}", "not a string"},
        {"{\"kind\":\"ConfigMap\",\"data\":{\"kubeconfig\":\"x\"}} {}", "not valid JSON"},
        {"{\"kind\":\"ConfigMap\",\"data\":{\"kubeconfig\":\"x\"}}garbage", "not valid JSON"},
        {"{'kind':'ConfigMap'}", "not valid JSON"},
    };
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        kjoin_cluster_info ci = {.jws = (char *)"untouched"};
        kjoin_err err;
        assert_int_equal(kjoin_cluster_info_parse(bad[i].body, strlen(bad[i].body), "abcdef", &ci, &err), KJOIN_E_TRUST);
        if (!strstr(err.msg, bad[i].why))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, bad[i].why);
        assert_string_equal(ci.jws, "untouched");
    }
    /* One document only: a NUL after the object is not the end of the body. */
    static const char nul[] = "{\"kind\":\"ConfigMap\",\"data\":{\"kubeconfig\":\"x\"}}\n\0junk";
    kjoin_cluster_info one;
    assert_int_equal(kjoin_cluster_info_parse(nul, sizeof(nul) - 1, NULL, &one, NULL), KJOIN_E_TRUST);
    assert_int_equal(kjoin_cluster_info_parse(nul, strlen(nul), NULL, &one, NULL), KJOIN_OK); /* white space is fine */
    kjoin_cluster_info_release(&one);
    size_t len;
    char *forbidden = tu_read("testdata/real-apiserver/configmap-missing.kube-public.anon.body", &len);
    kjoin_cluster_info ci;
    assert_int_equal(kjoin_cluster_info_parse(forbidden, len, "abcdef", &ci, NULL), KJOIN_E_TRUST);
    free(forbidden);
}

/* parse_pieces: body fed n bytes at a time (n = 0: whole), compared with
 * expect when that is not NULL. */
static kjoin_code parse_pieces(const char *body, size_t n, const char *expect, kjoin_cluster_info *out, bool *same,
                               kjoin_err *err)
{
    kjoin_discovery__ci *p = kjoin_discovery__ci_new(expect, expect ? strlen(expect) : 0);
    assert_non_null(p);
    size_t len = strlen(body), step = n ? n : len ? len : 1;
    for (size_t off = 0; off < len; off += step)
        kjoin_discovery__ci_feed(p, body + off, len - off < step ? len - off : step);
    kjoin_code rc = kjoin_discovery__ci_finish(p, expect ? NULL : "abcdef", out, same, err);
    kjoin_discovery__ci_free(p);
    return rc;
}

/* The kubeconfig set aside as it streams past: any cut of the body gives
 * the same value, escapes included; the last of repeated keys counts, as in
 * json-c; a compare finds the same kubeconfig in another envelope and a
 * different one in the same envelope. */
static void test_cluster_info_in_pieces(void **state)
{
    (void)state;
    /* 40 KiB of escapes: pieces are cut between whole characters only. */
    size_t reps = 40 * 1024 / 24;
    char *body = malloc(reps * 24 + 200), *want = malloc(reps * 16 + 1);
    assert_non_null(body);
    assert_non_null(want);
    char *b = body + sprintf(body, "{\"kind\":\"ConfigMap\",\"data\":{\"jws-kubeconfig-abcdef\":\"h..s\",\"kubeconfig\":\"");
    char *w = want;
    for (size_t i = 0; i < reps; i++) {
        b += sprintf(b, "a\\n\\\"\\u00e9\\ud83d\\ude00");
        w += sprintf(w, "a\n\"\xc3\xa9\xf0\x9f\x98\x80");
    }
    strcpy(b, "\"}}\n");
    size_t steps[] = {0, 1, 2, 5, 7, 4096, 16383};
    for (size_t i = 0; i < TU_LEN(steps); i++) {
        kjoin_cluster_info ci;
        assert_int_equal(parse_pieces(body, steps[i], NULL, &ci, NULL, NULL), KJOIN_OK);
        assert_int_equal(ci.kubeconfig_len, strlen(want));
        assert_memory_equal(ci.kubeconfig, want, strlen(want));
        assert_string_equal(ci.jws, "h..s");
        kjoin_cluster_info_release(&ci);
        bool same = false;
        assert_int_equal(parse_pieces(body, steps[i], want, &ci, &same, NULL), KJOIN_OK);
        assert_true(same);
        assert_null(ci.kubeconfig);
        kjoin_cluster_info_release(&ci);
    }
    want[strlen(want) - 1] ^= 1; /* one byte at the end differs */
    bool same = true;
    kjoin_cluster_info ci;
    assert_int_equal(parse_pieces(body, 3, want, &ci, &same, NULL), KJOIN_OK);
    assert_false(same);
    kjoin_cluster_info_release(&ci);
    free(body);
    free(want);

    struct {
        const char *body, *kubeconfig;
    } cases[] = {
        {"{\"kind\":\"ConfigMap\",\"data\":{\"kubeconfig\":\"first\",\"kubeconfig\":\"second\"}}", "second"},
        {"{\"kind\":\"ConfigMap\",\"data\":{\"kubeconfig\":\"first\",\"kube\\u0063onfig\":\"second\"}}", "second"},
        {"{\"kind\":\"ConfigMap\",\"data\":{\"kube\\u0063onfig\":\"first\",\"kubeconfig\":\"second\"}}", "second"},
        {"{\"kind\":\"ConfigMap\",\"metadata\":{\"kubeconfig\":\"no\"},\"data\":{\"kubeconfig\":\"yes\"}}", "yes"},
        {"{\"kind\":\"ConfigMap\",\"x\":{\"data\":{\"kubeconfig\":\"no\"}},\"data\":{\"kubeconfig\":\"yes\"}}", "yes"},
        {"{\"data\":{\"k\\\"ubeconfig\":\"no\",\"kubeconfig\":\"yes\"},\"kind\":\"ConfigMap\"}", "yes"},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++)
        for (size_t step = 0; step < 4; step++) {
            assert_int_equal(parse_pieces(cases[i].body, step, NULL, &ci, NULL, NULL), KJOIN_OK);
            assert_string_equal(ci.kubeconfig, cases[i].kubeconfig);
            kjoin_cluster_info_release(&ci);
        }
    /* The same kubeconfig in another envelope is the same; a NUL in it, a
     * value cut short, or bytes after the object are refused. */
    assert_int_equal(parse_pieces("{\"data\":{\"kubeconfig\":\"yes\"},\"metadata\":{\"resourceVersion\":\"9\"},"
                                  "\"kind\":\"ConfigMap\"}", 2, "yes", &ci, &same, NULL), KJOIN_OK);
    assert_true(same);
    kjoin_cluster_info_release(&ci);
    struct {
        const char *body, *why;
    } bad[] = {
        {"{\"kind\":\"ConfigMap\",\"data\":{\"kubeconfig\":\"a\\u0000b\"}}", "NUL byte"},
        {"{\"kind\":\"ConfigMap\",\"data\":{\"kubeconfig\":\"abc", "unexpected end of input"},
        {"{\"kind\":\"ConfigMap\",\"data\":{\"kubeconfig\":\"a\\qb\"}}", "not valid JSON"},
        {"{\"kind\":\"ConfigMap\",\"data\":{\"kubeconfig\":\"a\\u12\"}}", "not valid JSON"},
        {"{\"kind\":\"ConfigMap\",\"data\":{\"kubeconfig\":\"x\"}} {\"data\":{\"kubeconfig\":\"y\"}}", "27 bytes after its object"},
        {"\"x\"{\"kind\":\"ConfigMap\"}", "not a JSON object"},
        {" \n[{\"kind\":\"ConfigMap\"}]", "not a JSON object"},
        /* The kept kubeconfig is a NUL, spelled with escapes in its key or
         * its data's key: never mistaken for a value set aside before it. */
        {"{\"kind\":\"ConfigMap\",\"data\":{\"kubeconfig\":\"a\",\"kube\\u0063onfig\":\"\\u0000\"}}", "NUL byte"},
        {"{\"kind\":\"ConfigMap\",\"data\":{\"kubeconfig\":\"a\"},\"d\\u0061ta\":{\"kubeconfig\":\"\\u0000\"}}",
         "NUL byte"},
    };
    for (size_t i = 0; i < TU_LEN(bad); i++)
        for (size_t step = 0; step < 3; step++) {
            kjoin_err err;
            assert_int_equal(parse_pieces(bad[i].body, step, NULL, &ci, NULL, &err), KJOIN_E_TRUST);
            if (!strstr(err.msg, bad[i].why))
                fail_msg("case %zu, step %zu: \"%s\" lacks \"%s\"", i, step, err.msg, bad[i].why);
        }
}

/* Checks the engine makes before any network access. */
static void test_engine_input_checks(void **state)
{
    (void)state;
    kjoin_token tok;
    kjoin_token_parse("abcdef.0123456789abcdef", &tok, NULL);
    kjoin_endpoint ep;
    kjoin_endpoint_parse("127.0.0.1:1", &ep, NULL);
    kjoin_pinset *none = kjoin_pinset_new();
    kjoin_token_discovery o = {.common = {.tls_bootstrap_token = &tok, .pins = none, .timeout_ms = 300},
                               .endpoints = &ep, .n_endpoints = 1, .discovery_token = &tok};
    kjoin_join_result r = {0};
    kjoin_err err;
    assert_int_equal(kjoin_discover_token(&o, &r, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "unsafe"));
    o.unsafe_skip_ca_verification = true;
    o.n_endpoints = 0;
    assert_int_equal(kjoin_discover_token(&o, &r, &err), KJOIN_E_USAGE);
    o.n_endpoints = KJOIN_MAX_ENDPOINTS + 1;
    assert_int_equal(kjoin_discover_token(&o, &r, &err), KJOIN_E_USAGE);
    /* nothing listens on port 1: retried until the deadline, then a timeout */
    o.n_endpoints = 1;
    assert_int_equal(kjoin_discover_token(&o, &r, &err), KJOIN_E_TIMEOUT);
    assert_non_null(strstr(err.msg, "timed out after 300ms"));
    assert_null(r.kubeconfig);
    kjoin_pinset_free(none);
}

/* Pinned TLS without a host name to check is refused before any connection. */
static void test_pinned_needs_a_host(void **state)
{
    (void)state;
    size_t len;
    char *ca = tu_read("testdata/real-apiserver/ca.crt", &len);
    kjoin_http_request req = {.url = "https://[/api", .tls = KJOIN_TLS_PINNED, .anchors_pem = ca, .anchors_len = len,
                              .timeout_ms = 1000};
    kjoin_http_response resp;
    kjoin_err err;
    assert_int_equal(kjoin_http_get(&req, &resp, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "no host name"));
    /* userinfo in any server URL (an etcd Pod's annotation says where etcd
     * is): refused before a connection, in any TLS mode, the host shown the
     * one a request would reach. */
    const kjoin_tls_mode modes[] = {KJOIN_TLS_PINNED, KJOIN_TLS_SYSTEM};
    for (size_t i = 0; i < 2; i++) {
        req.url = "https://127.0.0.1:1@10.99.0.3:2379/health";
        req.tls = modes[i];
        assert_int_equal(kjoin_http_get(&req, &resp, &err), KJOIN_E_TRUST);
        assert_non_null(strstr(err.msg, "userinfo"));
        assert_non_null(strstr(err.msg, "https://10.99.0.3:2379"));
    }
    /* ...unless the operator gave it (a discovery file's URL): then it goes on to the network. */
    req.url = "https://u:p@127.0.0.1:1/x";
    req.userinfo_allowed = true;
    req.timeout_ms = 300;
    assert_int_not_equal(kjoin_http_get(&req, &resp, &err), KJOIN_E_TRUST);
    assert_null(strstr(err.msg, "userinfo"));
    free(ca);
}

/* Credentials go only to a verified server and never along redirects; the
 * request is refused before any connection (port 1 would fail otherwise). */
static void test_credentials_need_verified_tls(void **state)
{
    (void)state;
    size_t len;
    char *ca = tu_read("testdata/real-apiserver/ca.crt", &len);
    const struct {
        kjoin_tls_mode tls;
        bool redirects;
        const char *token, *cert, *key;
    } cases[] = {
        {KJOIN_TLS_INSECURE, false, "abcdef.0123456789abcdef", NULL, NULL},
        {KJOIN_TLS_INSECURE, false, NULL, "CERT", "KEY"},
        {KJOIN_TLS_PINNED, true, "abcdef.0123456789abcdef", NULL, NULL},
        {KJOIN_TLS_SYSTEM, true, NULL, "CERT", "KEY"},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        kjoin_http_request req = {.method = "POST", .url = "https://127.0.0.1:1/x", .tls = cases[i].tls,
                                  .anchors_pem = ca, .anchors_len = len, .timeout_ms = 1000,
                                  .follow_redirects = cases[i].redirects, .bearer_token = cases[i].token,
                                  .client_cert_pem = cases[i].cert, .client_cert_len = 4,
                                  .client_key_pem = cases[i].key, .client_key_len = 3};
        kjoin_http_response resp;
        kjoin_err err = {0};
        if (kjoin_http_send(&req, &resp, &err) != KJOIN_E_USAGE)
            fail_msg("case %zu: credentials were not refused (%s)", i, err.msg);
        assert_non_null(strstr(err.msg, "only sent to a verified server"));
    }
    /* Discovery's GET helper refuses other methods. */
    kjoin_http_request post = {.method = "POST", .url = "https://127.0.0.1:1/x", .timeout_ms = 1000};
    kjoin_http_response resp;
    assert_int_equal(kjoin_http_get(&post, &resp, NULL), KJOIN_E_OTHER);
    free(ca);
}

/* A fleet that found the control plane not ready first waits kubeadm's
 * period plus a random phase across the whole poll period, then polls once
 * per period from one attempt's start to the next: never in lock-step,
 * never sooner or more often than kubeadm's 5 s poll, never more than 5 s
 * after the data appears once polling. */
static void test_not_ready_poll_schedule(void **state)
{
    (void)state;
    kjoin_run r = {.not_ready = true};
    int64_t lo = INT64_MAX, hi = 0;
    for (int i = 0; i < 400; i++) {
        unsigned round = 0;
        bool polling = false;
        int64_t first = kjoin_discovery__next_wait(&r, 10, &round, &polling) + 10;
        assert_true(first >= 5000 && first < 5000 + KJOIN_POLL_MS);
        lo = first < lo ? first : lo;
        hi = first > hi ? first : hi;
        assert_true(polling);
        assert_int_equal(kjoin_discovery__next_wait(&r, 10, &round, &polling), KJOIN_POLL_MS - 10);
        assert_int_equal(kjoin_discovery__next_wait(&r, KJOIN_POLL_MS + 1, &round, &polling), 0);
    }
    /* 400 draws of a uniform phase: the spread covers the period. */
    assert_true(lo < 5000 + KJOIN_POLL_MS / 5);
    assert_true(hi > 5000 + KJOIN_POLL_MS * 4 / 5);
    assert_true(KJOIN_POLL_MS < 5000);
    /* A slow attempt does not push the first retry later. */
    unsigned round = 0;
    bool polling = false;
    assert_true(kjoin_discovery__next_wait(&r, 6000, &round, &polling) < 5000 + KJOIN_POLL_MS - 6000);
}

static void test_backoff_schedule(void **state)
{
    (void)state;
    kjoin_run r = {.not_ready = false};
    unsigned round = 0;
    bool polling = true; /* a failure of another kind ends the poll */
    int64_t caps[] = {500, 1000, 2000, 4000, 5000, 5000};
    for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
        int64_t ms = kjoin_discovery__next_wait(&r, 10, &round, &polling);
        assert_true(ms >= 0 && ms < caps[i]);
        assert_false(polling);
    }
    /* A server that asks for more time with Retry-After gets at least that. */
    r.retry_after_ms = 3000;
    round = 0;
    for (size_t i = 0; i < 8; i++)
        assert_true(kjoin_discovery__next_wait(&r, 10, &round, &polling) >= 3000);
    r.retry_after_ms = -1; /* nothing asked: the schedule's own */
    round = 0;
    assert_true(kjoin_discovery__next_wait(&r, 10, &round, &polling) < 500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_endpoints),
        cmocka_unit_test(test_not_ready_poll_schedule),
        cmocka_unit_test(test_backoff_schedule),
        cmocka_unit_test(test_real_cluster_info),
        cmocka_unit_test(test_sign_reproduces_control_plane),
        cmocka_unit_test(test_malformed_cluster_info),
        cmocka_unit_test(test_cluster_info_in_pieces),
        cmocka_unit_test(test_engine_input_checks),
        cmocka_unit_test(test_pinned_needs_a_host),
        cmocka_unit_test(test_credentials_need_verified_tls),
    };
    return cmocka_run_group_tests_name("discovery", tests, NULL, NULL);
}
