#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <kjoin/private/certs.h>

#include "../../pkg/certs/internal.h"
#include "../../pkg/certs/secret.h"

#include "testutil.h"

#define H 3600

static kjoin_certs_settings hours(int64_t ca, int64_t caw, int64_t node, int64_t nodew, int64_t client,
                                  int64_t clientw, int64_t min)
{
    return (kjoin_certs_settings){ca * H, caw * H, node * H, nodew * H, client * H, clientw * H, min * H,
                                  KJOIN_KEY_ECDSA_P256};
}

static void test_defaults_and_derived_minimum(void **state)
{
    (void)state;
    kjoin_certs_settings s = kjoin_certs_defaults();
    assert_int_equal(kjoin_certs_validate(&s, false, NULL), KJOIN_OK);
    assert_int_equal(s.minimum, (8760 - 168) * H);
    s = hours(1000, 300, 240, 40, 300, 50, 0);
    assert_int_equal(kjoin_certs_validate(&s, false, NULL), KJOIN_OK);
    assert_int_equal(s.minimum, 200 * H); /* min(300 - 50, 240 - 40) */
}

/* Each of the RFC's rules, failing by one hour and passing at the edge. */
static void test_each_rule(void **state)
{
    (void)state;
    struct {
        kjoin_certs_settings s;
        bool user_ca;
        const char *fails; /* NULL: passes */
    } cases[] = {
        {hours(1000, 99, 240, 40, 240, 40, 100), false, "the CA expiry window (99h0m0s) must not be less than the minimum duration (100h0m0s): short by 1h0m0s"},
        {hours(1000, 100, 240, 40, 240, 40, 100), false, NULL},
        {hours(199, 100, 240, 40, 240, 40, 100), false, "the CA duration minus its expiry window (99h0m0s)"},
        {hours(200, 100, 240, 40, 240, 40, 100), false, NULL},
        {hours(1000, 300, 139, 40, 240, 40, 100), false, "the node duration minus its expiry window (99h0m0s)"},
        {hours(1000, 300, 140, 40, 240, 40, 100), false, NULL},
        {hours(1000, 300, 240, 40, 139, 40, 100), false, "the client duration minus its expiry window (99h0m0s)"},
        {hours(1000, 300, 240, 40, 140, 40, 100), false, NULL},
        /* a CA the user provides skips the CA rules */
        {hours(0, 0, 240, 40, 240, 40, 100), true, NULL},
        {hours(1000, 300, 240, 240, 240, 40, 100), false, "node expiry window must be positive and shorter"},
        {hours(1000, 0, 240, 40, 240, 40, 100), false, "CA expiry window must be positive"},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        kjoin_err err;
        kjoin_code rc = kjoin_certs_validate(&cases[i].s, cases[i].user_ca, &err);
        if (!cases[i].fails) {
            if (rc)
                fail_msg("case %zu: %s", i, err.msg);
        } else if (rc != KJOIN_E_USAGE || !strstr(err.msg, cases[i].fails)) {
            fail_msg("case %zu: rc %d, \"%s\" lacks \"%s\"", i, rc, rc ? err.msg : "", cases[i].fails);
        }
    }
}

static void test_key_types(void **state)
{
    (void)state;
    const char *names[] = {"ecdsa-p256", "rsa2048", "rsa3072", "rsa4096", "ed25519"};
    for (size_t i = 0; i < TU_LEN(names); i++) {
        kjoin_key_type t;
        assert_int_equal(kjoin_key_type_parse(names[i], &t, NULL), KJOIN_OK);
        assert_string_equal(kjoin_key_type_name(t), names[i]);
    }
    kjoin_key_type t;
    assert_int_equal(kjoin_key_type_parse("dsa", &t, NULL), KJOIN_E_USAGE);
    assert_int_equal(kjoin_key_type_parse("RSA2048", &t, NULL), KJOIN_E_USAGE);
}

/* A subject alternative name is one DNS name or one address, never a list. */
static void test_san_values(void **state)
{
    (void)state;
    const char *good[] = {"db.example", "node-1", "10.9.9.9", "fd00::1", "::1", "a.b-c.d"};
    const char *bad[] = {"a.example,IP:10.9.9.9", "DNS:x", "*.evil", "-a", "a-", "a..b", "", "a b", "a/b",
                         "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.example"};
    for (size_t i = 0; i < TU_LEN(good); i++)
        if (!kjoin_certs__san_valid(good[i]))
            fail_msg("refused %s", good[i]);
    for (size_t i = 0; i < TU_LEN(bad); i++)
        if (kjoin_certs__san_valid(bad[i]))
            fail_msg("accepted %s", bad[i]);
}

#define FP "sha256:0000000000000000000000000000000000000000000000000000000000000000"
#define SETTINGS "\"settings\":{\"caDuration\":360000,\"caExpiryWindow\":36000,\"nodeDuration\":36000," \
                 "\"nodeExpiryWindow\":3600,\"clientDuration\":36000,\"clientExpiryWindow\":3600," \
                 "\"minimumDuration\":3600,\"keyType\":\"ed25519\"}"
#define CA "\"ca\":{\"managedBy\":\"kjoin\",\"creationTime\":\"t\",\"durationSeconds\":360000," \
           "\"fingerprint\":\"" FP "\",\"needsRegeneration\":false}"
#define STATE(certs) "{\"version\":1," SETTINGS ",\"certificates\":{" CA certs "}}"
#define NODE(extra) ",\"node\":{\"managedBy\":\"kjoin\",\"creationTime\":\"t\",\"durationSeconds\":36000," \
                    "\"fingerprint\":\"" FP "\",\"caFingerprint\":\"" FP "\",\"needsRegeneration\":true" extra "}"

static kjoin_code parse_state(const char *text, kjoin_certs_settings *s, certs_entry *e, size_t *n, kjoin_err *err)
{
    return kjoin_certs__state_parse(text, strlen(text), s, e, KJOIN_CERTS_MAX_ENTRIES, n, err);
}

static void test_state_round_trip(void **state)
{
    (void)state;
    kjoin_certs_settings s;
    certs_entry e[KJOIN_CERTS_MAX_ENTRIES];
    size_t n;
    kjoin_err err;
    if (parse_state(STATE(NODE(",\"sans\":[\"db.example\",\"10.0.0.1\"]")), &s, e, &n, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(n, 2);
    assert_int_equal(s.key_type, KJOIN_KEY_ED25519);
    assert_int_equal(s.node_window, 3600);
    assert_int_equal(e[1].kind, CERT_NODE);
    assert_true(e[1].needs_regen);
    assert_int_equal(e[1].n_names, 2);
    char *text = kjoin_certs__state_encode(&s, e, n);
    certs_entry again[KJOIN_CERTS_MAX_ENTRIES];
    size_t n2;
    if (parse_state(text, &s, again, &n2, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(n2, 2);
    assert_string_equal(again[1].names[1], "10.0.0.1");
    for (size_t i = 0; i < n; i++)
        kjoin_certs__entry_release(&e[i]), kjoin_certs__entry_release(&again[i]);
    free(text);
}

static void test_state_rejections_name_the_field(void **state)
{
    (void)state;
    struct {
        const char *text, *why;
    } bad[] = {
        {STATE(NODE(",\"sans\":[null]")), "certificates.node.sans holds an entry"},
        {STATE(NODE(",\"sans\":\"x\"")), "certificates.node.sans must be a list"},
        {STATE(NODE(",\"sans\":[\"a,DNS:*.evil\"]")), "certificates.node.sans holds an entry"},
        {STATE(",\"x\":{}"), "certificates.x is not a name kjoin gives"},
        {STATE(",\"../outside\":{}"), "is not a name kjoin gives"},
        {STATE(",\"node.a/b\":{}"), "is not a name kjoin gives"},
        {STATE(",\"node\":7"), "certificates.node must be an object"},
        {STATE(NODE(",\"managedBy\":\"user\"")), "duplicate"},
        {"{\"version\":1," SETTINGS ",\"certificates\":{}}", "certificates.ca is missing"},
        {"{\"version\":2," SETTINGS ",\"certificates\":{" CA "}}", "version is not 1"},
        {"{\"version\":1,\"settings\":{},\"certificates\":{" CA "}}", "settings.caDuration is missing"},
        {"[1]", "not one JSON object"},
        {STATE("") "x", "not one JSON object"},
    };
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        kjoin_certs_settings s;
        certs_entry e[KJOIN_CERTS_MAX_ENTRIES];
        size_t n = 99;
        kjoin_err err;
        if (parse_state(bad[i].text, &s, e, &n, &err) != KJOIN_E_USAGE)
            fail_msg("case %zu accepted", i);
        if (strstr(bad[i].why, "duplicate"))
            continue; /* json-c keeps the last of a duplicate key: checked by the managedBy rule below */
        if (!strstr(err.msg, bad[i].why))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, bad[i].why);
        assert_int_equal(n, 0);
    }
    const char *keytype = "{\"version\":1,\"settings\":{\"caDuration\":1,\"caExpiryWindow\":1,\"nodeDuration\":1,"
                          "\"nodeExpiryWindow\":1,\"clientDuration\":1,\"clientExpiryWindow\":1,\"minimumDuration\":1,"
                          "\"keyType\":\"dsa\"},\"certificates\":{" CA "}}";
    kjoin_certs_settings s;
    certs_entry e[KJOIN_CERTS_MAX_ENTRIES];
    size_t n;
    kjoin_err err;
    assert_int_equal(parse_state(keytype, &s, e, &n, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "settings.keyType is not a key type"));
}

/* The manager on the injected clock: init, a quiet run, a due node, a new node. */
static void test_manager_init_issue_rotate(void **state)
{
    (void)state;
    char *dir = tu_tmpdir(), path[512];
    snprintf(path, sizeof(path), "%s/pki", dir);
    kjoin_certs_store store = {.dir = path}, *pki = &store;
    const int64_t t0 = 1767225600; /* 2026-01-01 */
    kjoin_certs_init_opts o = {.settings = hours(1000, 300, 240, 40, 240, 40, 100)};
    kjoin_certs_report r;
    kjoin_err err;
    if (kjoin_certs_init(pki, &o, t0, &r, &err))
        fail_msg("%s", err.msg);
    assert_true(r.changed);
    assert_int_equal(kjoin_certs_init(pki, &o, t0, &r, &err), KJOIN_E_USAGE); /* already a PKI */
    if (kjoin_certs_rotate(pki, t0 + 100 * H, KJOIN_CERTS_ALL, false, &r, &err))
        fail_msg("%s", err.msg);
    assert_false(r.changed);
    if (kjoin_certs_rotate(pki, t0 + 200 * H, KJOIN_CERTS_ALL, false, &r, &err)) /* node and client inside 40h of 240h */
        fail_msg("%s", err.msg);
    assert_true(r.changed && r.restart_nodes && r.reload_clients);
    const char *sans[] = {"db-2.example"};
    if (kjoin_certs_issue_node(pki, "db-2", sans, 1, t0 + 201 * H, &r, &err))
        fail_msg("%s", err.msg);
    const char *bad_sans[] = {"a,IP:1.2.3.4"};
    assert_int_equal(kjoin_certs_issue_node(pki, "db-3", bad_sans, 1, t0, &r, &err), KJOIN_E_USAGE);
    assert_int_equal(kjoin_certs_issue_node(pki, "../x", sans, 1, t0, &r, &err), KJOIN_E_USAGE);
    kjoin_certs_status st[8];
    size_t n = 0;
    if (kjoin_certs_check(pki, t0 + 201 * H, st, 8, &n, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(n, 4); /* ca, client.root, node, node.db-2 */
    for (size_t i = 0; i < n; i++)
        assert_false(st[i].due);
    if (kjoin_certs_check(pki, t0 - H, st, 8, &n, &err)) /* a clock behind the certificates */
        fail_msg("%s", err.msg);
    for (size_t i = 0; i < n; i++)
        assert_true(st[i].not_yet_valid && st[i].due);
    free(dir);
}

/* ---- the Secrets store's encoding ---- */

static void test_secret_names(void **state)
{
    (void)state;
    char n[SECRET_NAME_MAX];
    assert_true(kjoin_certs__secret_name("crdb", "ca", n));
    assert_string_equal(n, "crdb-ca-secret");
    assert_true(kjoin_certs__secret_name("crdb", "node", n));
    assert_string_equal(n, "crdb-node-secret");
    assert_true(kjoin_certs__secret_name("crdb", "client.root", n));
    assert_string_equal(n, "crdb-client-secret");
    assert_true(kjoin_certs__secret_name("crdb", "client.alice", n));
    assert_string_equal(n, "crdb-client-alice-secret");
    assert_true(kjoin_certs__secret_name("crdb", "node.db-2", n));
    assert_string_equal(n, "crdb-node-db-2-secret");
    /* Not a Secret name: capitals, '_', an unknown entry. */
    assert_false(kjoin_certs__secret_name("crdb", "client.Alice", n));
    assert_false(kjoin_certs__secret_name("crdb", "client.a_b", n));
    assert_false(kjoin_certs__secret_name("crdb", "state", n));
    assert_true(kjoin_certs__secret_prefix_valid("cockroachdb"));
    assert_false(kjoin_certs__secret_prefix_valid("Crdb"));
    assert_false(kjoin_certs__secret_prefix_valid("a.b"));
    assert_false(kjoin_certs__secret_prefix_valid("-a"));
    assert_false(kjoin_certs__secret_prefix_valid(""));
}

static const char good_secret[] =
    "{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"crdb-node-secret\",\"resourceVersion\":\"42\","
    "\"labels\":{\"app.kubernetes.io/managed-by\":\"kjoin\",\"team\":\"db\"},"
    "\"annotations\":{\"managed-by\":\"kjoin\",\"note\":\"theirs\"}},"
    "\"type\":\"kubernetes.io/tls\",\"data\":{\"tls.crt\":\"aGVsbG8=\",\"other\":\"eA==\"}}";

static void test_secret_parse(void **state)
{
    (void)state;
    certs_secret s;
    kjoin_err err;
    if (kjoin_certs__secret_parse(good_secret, strlen(good_secret), &s, &err))
        fail_msg("%s", err.msg);
    assert_string_equal(s.name, "crdb-node-secret");
    assert_string_equal(s.rv, "42");
    assert_string_equal(s.type, "kubernetes.io/tls");
    assert_true(s.ours);
    assert_non_null(s.data[SECRET_TLS_CRT]);
    assert_memory_equal(s.data[SECRET_TLS_CRT], "hello", 5);
    assert_null(s.data[SECRET_CA_CRT]);
    assert_string_equal(kjoin_certs__secret_annotation(&s, "note"), "theirs");
    assert_null(kjoin_certs__secret_annotation(&s, "missing"));
    kjoin_certs__secret_release(&s);
}

static void test_secret_parse_rejections(void **state)
{
    (void)state;
    const struct {
        const char *json, *msg;
    } bad[] = {
        {"{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}", "not a Secret"},
        {"{\"kind\":\"Secret\",\"metadata\":{\"name\":\"a\"}}", "resourceVersion is missing"},
        {"{\"kind\":\"Secret\",\"metadata\":{\"name\":\"A/b\",\"resourceVersion\":\"1\"}}", "metadata.name"},
        {"{\"kind\":\"Secret\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"},\"data\":{\"ca.crt\":\"!!\"}}",
         "data[ca.crt] is not base64"},
        {"{\"kind\":\"Secret\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"},\"data\":{\"tls.key\":7}}",
         "not a string"},
        {"{\"kind\":\"Secret\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}} {}", "not one JSON object"},
        {"[]", "not one JSON object"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        certs_secret s;
        kjoin_err err = {0};
        assert_int_equal(kjoin_certs__secret_parse(bad[i].json, strlen(bad[i].json), &s, &err), KJOIN_E_TRUST);
        if (!strstr(err.msg, bad[i].msg))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, bad[i].msg);
    }
}

/* A write keeps what others put on the Secret, replaces kjoin's own, and
 * its signature equals that of the same Secret read back: no write when
 * nothing changed, a write when anything kjoin owns did. */
static void test_secret_write_and_signature(void **state)
{
    (void)state;
    certs_secret old;
    kjoin_err err;
    if (kjoin_certs__secret_parse(good_secret, strlen(good_secret), &old, &err))
        fail_msg("%s", err.msg);
    json_object *obj = kjoin_certs__secret_new(&old, "db", "crdb-node-secret", "crdb", "kubernetes.io/tls");
    assert_true(kjoin_certs__secret_put_data(obj, SECRET_TLS_CRT, "new", 3));
    kjoin_certs__secret_annotate(obj, "needsRegeneration", "False");
    json_object *meta = json_object_object_get(obj, "metadata");
    assert_string_equal(json_object_get_string(json_object_object_get(meta, "resourceVersion")), "42");
    json_object *labels = json_object_object_get(meta, "labels"), *ann = json_object_object_get(meta, "annotations");
    assert_string_equal(json_object_get_string(json_object_object_get(labels, "team")), "db");
    assert_string_equal(json_object_get_string(json_object_object_get(labels, "app.kubernetes.io/part-of")), "crdb");
    assert_string_equal(json_object_get_string(json_object_object_get(ann, "note")), "theirs");
    assert_null(json_object_object_get(ann, "managed-by")); /* kjoin's own are rewritten, not carried */
    unsigned char built[32];
    kjoin_certs__secret_sig(obj, built);
    assert_memory_not_equal(built, old.sig, 32);
    /* Read back as the API would return it: same signature. */
    json_object_object_add(obj, "kind", json_object_new_string("Secret"));
    const char *text = json_object_to_json_string(obj);
    certs_secret back;
    if (kjoin_certs__secret_parse(text, strlen(text), &back, &err))
        fail_msg("%s", err.msg);
    assert_memory_equal(built, back.sig, 32);
    /* The data fingerprint follows the data, and tells absent from empty. */
    char a[80], b[80];
    kjoin_certs__data_fingerprint(&back, a);
    kjoin_certs__data_fingerprint(&old, b);
    assert_string_not_equal(a, b);
    char *saved = back.data[SECRET_CA_CRT];
    back.data[SECRET_CA_CRT] = (char *)"";
    kjoin_certs__data_fingerprint(&back, b);
    assert_string_not_equal(a, b);
    back.data[SECRET_CA_CRT] = saved;
    kjoin_certs__secret_release(&back);
    kjoin_certs__secret_release(&old);
    kjoin_certs__json_free(obj);
}

/* Cron repeats only at intervals that divide its fields: the ladder picks
 * the longest not longer than the period, never a month step. */
static void test_schedule_ladder(void **state)
{
    (void)state;
    const struct {
        int64_t period;
        const char *cron;
        int64_t interval;
    } cases[] = {
        {(87600 - 17520) * H, "0 3 1 * *", 744 * H}, /* the self-signer's 0 0 1 (every 11th month) case */
        {8592 * H, "0 3 1 * *", 744 * H},
        {744 * H, "0 3 1 * *", 744 * H},
        {743 * H, "0 3 * * 0", 168 * H},
        {30 * H, "0 3 * * *", 24 * H},     /* the self-signer made 0 6 (every day) of 30h */
        {23 * H, "0 */12 * * *", 12 * H},
        {5 * H, "0 */4 * * *", 4 * H},
        {H, "0 */1 * * *", H},
        {59 * 60, "*/30 * * * *", 30 * 60},
        {60, "*/1 * * * *", 60},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char cron[KJOIN_CERTS_CRON_MAX];
        int64_t interval = 0;
        kjoin_err err;
        if (kjoin_certs_schedule(cases[i].period, 0, 3, cron, &interval, &err))
            fail_msg("case %zu: %s", i, err.msg);
        assert_string_equal(cron, cases[i].cron);
        assert_int_equal(interval, cases[i].interval);
        assert_true(interval <= cases[i].period);
    }
    char cron[KJOIN_CERTS_CRON_MAX];
    int64_t interval;
    kjoin_err err;
    assert_int_equal(kjoin_certs_schedule(59, 0, 3, cron, &interval, &err), KJOIN_E_USAGE);
}

/* The Job's manifests refuse what would not work, before printing anything. */
static void test_job_manifests_refusals(void **state)
{
    (void)state;
    char *yaml = NULL;
    kjoin_err err;
    kjoin_certs_job_opts o = {.ns = "db", .prefix = "crdb", .image = "k:1", .settings = kjoin_certs_defaults()};
    if (kjoin_certs_job_manifests(&o, &yaml, &err))
        fail_msg("%s", err.msg);
    assert_non_null(strstr(yaml, "helm.sh/hook-weight: \"4\""));
    assert_non_null(strstr(yaml, "--minimum-duration\"\n        - \"744h0m0s\""));
    assert_null(strstr(yaml, "*/11"));
    free(yaml);
    kjoin_certs_job_opts bad = o;
    bad.image = "";
    assert_int_equal(kjoin_certs_job_manifests(&bad, &yaml, &err), KJOIN_E_USAGE);
    bad = o, bad.ns = "Bad";
    assert_int_equal(kjoin_certs_job_manifests(&bad, &yaml, &err), KJOIN_E_USAGE);
    bad = o, bad.cronjob_api = "batch/v2";
    assert_int_equal(kjoin_certs_job_manifests(&bad, &yaml, &err), KJOIN_E_USAGE);
    bad = o, bad.settings.ca_window = 10 * H; /* shorter than the minimum */
    assert_int_equal(kjoin_certs_job_manifests(&bad, &yaml, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "the CA expiry window"));
}


/* ---- ca-set ---- */

/* A self-signed root valid from t0 for years, written to dir/name.crt and .key (0600). */
static void write_root(const char *dir, const char *name, int64_t t0, int64_t years, bool no_sub_ca)
{
    kjoin_err err;
    EVP_PKEY *key = kjoin_certs__new_key(KJOIN_KEY_ECDSA_P256, &err);
    cert_request req = {.kind = CERT_CA, .cn = name, .not_before = t0 - H, .not_after = t0 + years * 8760 * H,
                        .no_sub_ca = no_sub_ca};
    X509 *x = kjoin_certs__issue(&req, key, NULL, NULL, &err);
    assert_non_null(x);
    char path[512], *crt = kjoin_certs__pem_certs(NULL, x), *pem = kjoin_certs__pem_key(key);
    snprintf(path, sizeof(path), "%s/%s.crt", dir, name);
    FILE *f = fopen(path, "w");
    fputs(crt, f);
    fclose(f);
    snprintf(path, sizeof(path), "%s/%s.key", dir, name);
    f = fopen(path, "w");
    fputs(pem, f);
    fclose(f);
    chmod(path, 0600);
    free(crt);
    free(pem);
    X509_free(x);
    EVP_PKEY_free(key);
}

static void test_ca_set(void **state)
{
    (void)state;
    const int64_t t0 = 1767225600; /* 2026-01-01 */
    char *dir = tu_tmpdir(), out[512], crt[512], key[512], other_crt[512], other_key[512], short_crt[512],
         short_key[512], leaf_crt[512], leaf_key[512];
    write_root(dir, "org", t0, 20, false);
    write_root(dir, "other", t0, 20, false);
    write_root(dir, "short", t0, 2, false);
    write_root(dir, "leafonly", t0, 20, true);
    snprintf(out, sizeof(out), "%s/tls", dir);
    snprintf(crt, sizeof(crt), "%s/org.crt", dir);
    snprintf(key, sizeof(key), "%s/org.key", dir);
    snprintf(other_crt, sizeof(other_crt), "%s/other.crt", dir);
    snprintf(other_key, sizeof(other_key), "%s/other.key", dir);
    snprintf(short_crt, sizeof(short_crt), "%s/short.crt", dir);
    snprintf(short_key, sizeof(short_key), "%s/short.key", dir);
    snprintf(leaf_crt, sizeof(leaf_crt), "%s/leafonly.crt", dir);
    snprintf(leaf_key, sizeof(leaf_key), "%s/leafonly.key", dir);
    kjoin_ca_layout layout;
    kjoin_err err;
    assert_int_equal(kjoin_ca_layout_parse("k3s", &layout, &err), KJOIN_OK);
    assert_int_equal(layout, KJOIN_CA_LAYOUT_K3S);
    assert_int_equal(kjoin_ca_layout_parse("kubeadm", &layout, &err), KJOIN_OK);
    assert_int_equal(layout, KJOIN_CA_LAYOUT_KUBEADM);
    assert_int_equal(kjoin_ca_layout_parse("K3S", &layout, &err), KJOIN_E_USAGE);
    assert_int_equal(kjoin_ca_layout_parse("", &layout, &err), KJOIN_E_USAGE);

    kjoin_ca_set_result r, first;
    kjoin_ca_set_opts o = {.dir = out, .layout = KJOIN_CA_LAYOUT_K3S, .root_cert = crt, .root_key = key,
                           .intermediate = true};
    if (kjoin_certs_ca_set(&o, t0, &first, &err))
        fail_msg("%s", err.msg);
    assert_true(first.written && !first.rotated && first.n == 5 && first.cas[0].bundle == 3);
    assert_string_equal(first.root, "CN=org");
    assert_true(strncmp(first.root_pin, "root-sha256:", 12) == 0 && strncmp(first.spki_pin, "sha256:", 7) == 0);
    /* Ten years, as K3s' own CAs. */
    assert_int_equal(first.cas[0].not_after, t0 + 87600 * H);
    if (kjoin_certs_ca_set(&o, t0, &r, &err)) /* again: nothing to do */
        fail_msg("%s", err.msg);
    assert_false(r.written);
    o.rotate = true;
    if (kjoin_certs_ca_set(&o, t0 + H, &r, &err))
        fail_msg("%s", err.msg);
    assert_true(r.written && r.rotated && r.cas[0].bundle == 5);
    assert_string_equal(r.root_pin, first.root_pin);
    assert_string_equal(r.spki_pin, first.spki_pin);
    assert_string_not_equal(r.intermediate, first.intermediate);

    /* Refusals, each before anything is written. */
    kjoin_ca_set_opts bad = o;
    bad.root_cert = other_crt, bad.root_key = other_key;
    assert_int_equal(kjoin_certs_ca_set(&bad, t0, &r, &err), KJOIN_E_USAGE); /* another root */
    bad = o, bad.root_key = other_key;
    assert_int_equal(kjoin_certs_ca_set(&bad, t0, &r, &err), KJOIN_E_USAGE); /* not the root's key */
    bad = o, bad.dir = NULL;
    assert_int_equal(kjoin_certs_ca_set(&bad, t0, &r, &err), KJOIN_E_USAGE);
    bad = o, bad.ca_duration = -1;
    assert_int_equal(kjoin_certs_ca_set(&bad, t0, &r, &err), KJOIN_E_USAGE);
    bad = o, bad.intermediate = false, bad.intermediate_duration = H;
    assert_int_equal(kjoin_certs_ca_set(&bad, t0, &r, &err), KJOIN_E_USAGE);
    bad = o, bad.layout = (kjoin_ca_layout)7;
    assert_int_equal(kjoin_certs_ca_set(&bad, t0, &r, &err), KJOIN_E_USAGE);
    snprintf(out, sizeof(out), "%s/fresh", dir);
    bad = o, bad.rotate = false, bad.dir = out;
    assert_int_equal(kjoin_certs_ca_set(&bad, t0 + 30 * 8760 * H, &r, &err), KJOIN_E_USAGE); /* the root expired */
    bad.root_cert = short_crt, bad.root_key = short_key, bad.ca_duration = 3 * 8760 * H;
    assert_int_equal(kjoin_certs_ca_set(&bad, t0, &r, &err), KJOIN_E_USAGE); /* outlives its issuer */
    assert_non_null(strstr(err.msg, "would outlive its issuer"));
    bad.root_cert = leaf_crt, bad.root_key = leaf_key, bad.ca_duration = 0;
    assert_int_equal(kjoin_certs_ca_set(&bad, t0, &r, &err), KJOIN_E_USAGE); /* pathlen:0 cannot take an intermediate */
    assert_int_equal(kjoin_certs_ca_set(&(kjoin_ca_set_opts){.dir = out, .layout = KJOIN_CA_LAYOUT_KUBEADM,
                                                              .root_cert = crt, .root_key = key, .rotate = true},
                                        t0, &r, &err), KJOIN_E_USAGE); /* nothing to rotate */
    struct stat st;
    assert_int_equal(stat(out, &st) == 0 ? (int)st.st_nlink : 2, 2); /* left empty */
    /* The default lifetime ends with a shorter root; no intermediate. */
    bad.root_cert = short_crt, bad.root_key = short_key, bad.intermediate = false;
    if (kjoin_certs_ca_set(&bad, t0, &r, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(r.cas[0].not_after, t0 + 2 * 8760 * H);
    assert_int_equal(r.cas[0].bundle, 2);
    assert_string_equal(r.intermediate, "");
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_derived_minimum),
        cmocka_unit_test(test_each_rule),
        cmocka_unit_test(test_key_types),
        cmocka_unit_test(test_san_values),
        cmocka_unit_test(test_state_round_trip),
        cmocka_unit_test(test_state_rejections_name_the_field),
        cmocka_unit_test(test_manager_init_issue_rotate),
        cmocka_unit_test(test_secret_names),
        cmocka_unit_test(test_secret_parse),
        cmocka_unit_test(test_secret_parse_rejections),
        cmocka_unit_test(test_secret_write_and_signature),
        cmocka_unit_test(test_schedule_ladder),
        cmocka_unit_test(test_job_manifests_refusals),
        cmocka_unit_test(test_ca_set),
    };
    return cmocka_run_group_tests_name("certs", tests, NULL, NULL);
}
