#include <stdio.h>
#include <string.h>

#include <kjoin/private/pin.h>
#include <kjoin/private/util.h>

#include <openssl/crypto.h>
#include <openssl/x509.h>

#include "testutil.h"

/* The pins openssl computed for the chain fixtures (scripts/make-pin-fixtures.sh). */
static char expected[4][2][96];
static const char *names[] = {"root", "inter", "leaf", "other"};

static const char *pin_of(const char *name, bool root_der)
{
    for (size_t i = 0; i < TU_LEN(names); i++)
        if (strcmp(names[i], name) == 0)
            return expected[i][root_der];
    fail_msg("no fixture %s", name);
    return NULL;
}

static int load_expected(void **state)
{
    (void)state;
    FILE *f = fopen("testdata/pin/chain/expected.txt", "r");
    assert_non_null(f);
    char name[32], kind[8], pin[96];
    while (fscanf(f, "%31s %7s %95s", name, kind, pin) == 3)
        for (size_t i = 0; i < TU_LEN(names); i++)
            if (strcmp(names[i], name) == 0)
                snprintf(expected[i][strcmp(kind, "der") == 0], sizeof(expected[i][0]), "%.90s", pin);
    fclose(f);
    return 0;
}

/* Concatenates fixture files into one bundle and parses it. */
static kjoin_bundle *bundle_of(const char *const *files, size_t n)
{
    char *all = calloc(1, 1);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        char path[128];
        size_t len;
        snprintf(path, sizeof(path), "testdata/pin/chain/%s.pem", files[i]);
        char *pem = tu_read(path, &len);
        all = realloc(all, total + len + 1);
        memcpy(all + total, pem, len + 1);
        total += len;
        free(pem);
    }
    kjoin_bundle *b = NULL;
    kjoin_err err;
    if (kjoin_bundle_parse(all, total, &b, &err) != KJOIN_OK)
        fail_msg("bundle: %s", err.msg);
    free(all);
    return b;
}

static kjoin_pinset *pins_of(const char *spec)
{
    kjoin_pinset *p = kjoin_pinset_new();
    kjoin_err err;
    if (spec && kjoin_pinset_add(p, spec, &err) != KJOIN_OK)
        fail_msg("pins %s: %s", spec, err.msg);
    return p;
}

static void test_pin_syntax(void **state)
{
    (void)state;
    json_object *root = tu_json("testdata/pin/pubkeypin.json");
    json_object *allow = json_object_object_get(root, "upstream_allow");
    for (size_t i = 0; i < json_object_array_length(allow); i++) {
        json_object *v = json_object_array_get_idx(allow, i);
        kjoin_pinset *p = kjoin_pinset_new();
        bool accepted = kjoin_pinset_add(p, tu_str(v, "input"), NULL) == KJOIN_OK;
        assert_int_equal(accepted, json_object_get_boolean(json_object_object_get(v, "accepted")));
        kjoin_pinset_free(p);
    }
    json_object_put(root);

    const char *hex64 = "345959acb2c3b2feb87d281961c893f62a314207ef02599f1cc4a5fb255480b3";
    char buf[256];
    struct {
        const char *fmt;
        bool ok;
    } cases[] = {
        {"sha256:%s", true},           {"SHA256:%s", true},        {"root-sha256:%s", true},
        {"Root-SHA256:%s", true},      {"sha256:%s,root-sha256:%s", true},
        {"sha256:%s0", false},         {"sha256:%.63s", false},    {"md5:%s", false},
        {"sha256=%s", false},          {"%s", false},              {"sha256:%s,", false},
        {",sha256:%s", false},         {"sha256:%.62sgg", false},  {"sha256: %.63s", false},
        {"sha1:%.40s", false},         {"root-sha384:%s", false},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        snprintf(buf, sizeof(buf), cases[i].fmt, hex64, hex64);
        kjoin_pinset *p = kjoin_pinset_new();
        kjoin_err err;
        kjoin_code rc = kjoin_pinset_add(p, buf, &err);
        if ((rc == KJOIN_OK) != cases[i].ok)
            fail_msg("pin \"%s\": got %d", buf, rc);
        if (!cases[i].ok) {
            assert_int_equal(rc, KJOIN_E_USAGE);
            assert_int_equal(kjoin_pinset_count(p), 0); /* all or nothing */
        }
        kjoin_pinset_free(p);
    }
}

/* Upstream pins, the real control plane's CA, and the non-matching case. */
static void test_upstream_hashes(void **state)
{
    (void)state;
    json_object *root = tu_json("testdata/pin/pubkeypin.json");
    const char *sets[] = {"upstream_hash_vectors", "derived"};
    int checked = 0;
    for (size_t s = 0; s < TU_LEN(sets); s++) {
        json_object *list = json_object_object_get(root, sets[s]);
        for (size_t i = 0; i < json_object_array_length(list); i++) {
            json_object *v = json_object_array_get_idx(list, i);
            const char *pem = tu_str(v, "cert_pem"), *want = tu_str(v, "expected_pin");
            if (!pem || !want)
                continue;
            kjoin_bundle *b = NULL;
            assert_int_equal(kjoin_bundle_parse(pem, strlen(pem), &b, NULL), KJOIN_OK);
            assert_string_equal(kjoin_bundle_cert(b, 0)->spki_pin, want);
            kjoin_bundle_free(b);
            checked++;
        }
    }
    assert_true(checked >= 3);
    json_object *neg = json_object_object_get(root, "upstream_negative");
    for (size_t i = 0; i < json_object_array_length(neg); i++) {
        json_object *v = json_object_array_get_idx(neg, i);
        const char *pem = tu_str(v, "cert_pem");
        json_object *pinned = json_object_object_get(v, "pinned");
        kjoin_pinset *p = kjoin_pinset_new();
        for (size_t j = 0; j < json_object_array_length(pinned); j++)
            kjoin_pinset_add(p, json_object_get_string(json_object_array_get_idx(pinned, j)), NULL);
        kjoin_bundle *b = NULL;
        assert_int_equal(kjoin_bundle_parse(pem, strlen(pem), &b, NULL), KJOIN_OK);
        if (kjoin_pinset_count(p))
            assert_int_equal(kjoin_bundle_apply_pins(b, p, NULL), KJOIN_E_TRUST);
        kjoin_bundle_free(b);
        kjoin_pinset_free(p);
    }
    json_object_put(root);

    size_t len;
    char *ca = tu_read("testdata/real-apiserver/ca.crt", &len);
    json_object *tokens = tu_json("testdata/real-apiserver/tokens.json");
    kjoin_bundle *b = NULL;
    assert_int_equal(kjoin_bundle_parse(ca, len, &b, NULL), KJOIN_OK);
    assert_string_equal(kjoin_bundle_cert(b, 0)->spki_pin, tu_str(tokens, "ca_cert_hash"));
    kjoin_bundle_free(b);
    json_object_put(tokens);
    free(ca);
}

static void test_fixture_pins_and_roles(void **state)
{
    (void)state;
    const char *files[] = {"root", "inter", "leaf", "other"};
    kjoin_bundle *b = bundle_of(files, 4);
    assert_int_equal(kjoin_bundle_count(b), 4);
    kjoin_cert_role roles[] = {KJOIN_CERT_ROOT, KJOIN_CERT_INTERMEDIATE, KJOIN_CERT_LEAF, KJOIN_CERT_ROOT};
    for (size_t i = 0; i < 4; i++) {
        const kjoin_cert_info *c = kjoin_bundle_cert(b, i);
        assert_string_equal(c->spki_pin, pin_of(files[i], false));
        assert_int_equal(c->role, roles[i]);
        assert_string_equal(c->root_pin, roles[i] == KJOIN_CERT_ROOT ? pin_of(files[i], true) : "");
    }
    kjoin_bundle_free(b);
    /* Alone, the intermediate's issuer is missing: it is a root of that bundle. */
    const char *alone[] = {"inter"};
    b = bundle_of(alone, 1);
    assert_int_equal(kjoin_bundle_cert(b, 0)->role, KJOIN_CERT_ROOT);
    assert_string_equal(kjoin_bundle_cert(b, 0)->root_pin, pin_of("inter", true));
    kjoin_bundle_free(b);
}

static void test_rewrapped_root_keeps_its_pin(void **state)
{
    (void)state;
    const char *files[] = {"root-rewrapped"};
    kjoin_bundle *b = bundle_of(files, 1);
    assert_string_equal(kjoin_bundle_cert(b, 0)->root_pin, pin_of("root", true));
    assert_string_equal(kjoin_bundle_cert(b, 0)->spki_pin, pin_of("root", false));
    kjoin_bundle_free(b);
}

/* The trust rule, case by case: which certificates end up ANCHOR, CHAINED, DROPPED. */
static void test_trust_decisions(void **state)
{
    (void)state;
    const kjoin_trust A = KJOIN_TRUST_ANCHOR, C = KJOIN_TRUST_CHAINED, D = KJOIN_TRUST_DROPPED;
    struct {
        const char *files[4];
        size_t n;
        const char *pin_name;
        bool root_der;
        kjoin_trust want[4];
    } cases[] = {
        /* root pinned: what it issued, and below, is trusted */
        {{"root", "inter", "leaf"}, 3, "root", false, {A, C, C}},
        {{"root", "inter", "leaf"}, 3, "root", true, {A, C, C}},
        /* any order: trust reaches the leaf listed before its issuers */
        {{"leaf", "inter", "root"}, 3, "root", false, {C, C, A}},
        {{"inter", "leaf", "root"}, 3, "root", true, {C, C, A}},
        /* a pinned intermediate anchors alone; its issuer is not trusted because of it */
        {{"root", "inter", "leaf"}, 3, "inter", false, {D, A, C}},
        /* trust never flows up from a pinned leaf */
        {{"root", "inter", "leaf"}, 3, "leaf", false, {D, D, A}},
        /* kubeadm's hole: an extra CA beside the pinned one is dropped */
        {{"root", "other"}, 2, "root", false, {A, D}},
        {{"other", "root"}, 2, "root", true, {D, A}},
        /* the leaf without its intermediate does not chain to the root */
        {{"root", "leaf"}, 2, "root", false, {A, D}},
        /* both roots pinned through a comma list (rotation) */
        {{"root", "other"}, 2, NULL, false, {A, A}},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        kjoin_bundle *b = bundle_of(cases[i].files, cases[i].n);
        char spec[1024];
        if (cases[i].pin_name)
            snprintf(spec, sizeof(spec), "%s", pin_of(cases[i].pin_name, cases[i].root_der));
        else
            snprintf(spec, sizeof(spec), "%s,%s", pin_of("root", true), pin_of("other", false));
        kjoin_pinset *p = pins_of(spec);
        assert_int_equal(kjoin_bundle_apply_pins(b, p, NULL), KJOIN_OK);
        for (size_t j = 0; j < cases[i].n; j++)
            if (kjoin_bundle_cert(b, j)->trust != cases[i].want[j])
                fail_msg("case %zu cert %s: trust %d, want %d", i, cases[i].files[j],
                         kjoin_bundle_cert(b, j)->trust, cases[i].want[j]);
        size_t len = 0;
        char *pem = kjoin_bundle_pem(b, KJOIN_TRUSTED_MASK, &len);
        assert_non_null(pem);
        kjoin_bundle *back = NULL;
        size_t trusted = 0;
        for (size_t j = 0; j < cases[i].n; j++)
            trusted += cases[i].want[j] != D;
        assert_int_equal(kjoin_bundle_parse(pem, len, &back, NULL), KJOIN_OK);
        assert_int_equal(kjoin_bundle_count(back), trusted);
        kjoin_bundle_free(back);
        free(pem);
        kjoin_pinset_free(p);
        kjoin_bundle_free(b);
    }
}

static void test_no_match_and_unsafe(void **state)
{
    (void)state;
    const char *files[] = {"root", "other"};
    kjoin_bundle *b = bundle_of(files, 2);
    /* the root-der pin of a non-root does not match */
    kjoin_pinset *p = pins_of(pin_of("leaf", true));
    kjoin_err err;
    assert_int_equal(kjoin_bundle_apply_pins(b, p, &err), KJOIN_E_TRUST);
    assert_non_null(strstr(err.msg, pin_of("other", false)));
    kjoin_pinset_free(p);
    /* a root-der pin given as an SPKI pin does not match either */
    char spec[1024];
    snprintf(spec, sizeof(spec), "sha256:%s", pin_of("root", true) + strlen("root-sha256:"));
    p = pins_of(spec);
    assert_int_equal(kjoin_bundle_apply_pins(b, p, NULL), KJOIN_E_TRUST);
    kjoin_pinset_free(p);
    /* unsafe: no pins, every certificate an anchor */
    assert_int_equal(kjoin_bundle_apply_pins(b, NULL, NULL), KJOIN_OK);
    assert_int_equal(kjoin_bundle_cert(b, 0)->trust, KJOIN_TRUST_ANCHOR);
    assert_int_equal(kjoin_bundle_cert(b, 1)->trust, KJOIN_TRUST_ANCHOR);
    kjoin_bundle_free(b);
}

static void test_malformed_bundles(void **state)
{
    (void)state;
    size_t len;
    char *root = tu_read("testdata/pin/chain/root.pem", &len);
    char *broken = strdup(root);
    broken[40] = '#';
    char truncated[200];
    snprintf(truncated, sizeof(truncated), "%.150s", root);
    const char *bad[] = {"", "not a certificate", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
                         broken, truncated,
                         "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n"};
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        kjoin_bundle *b = NULL;
        kjoin_err err;
        if (kjoin_bundle_parse(bad[i], strlen(bad[i]), &b, &err) != KJOIN_E_TRUST)
            fail_msg("accepted malformed bundle %zu", i);
        assert_null(b);
    }
    /* 101 certificates exceed the cap */
    char *many = malloc(len * 101 + 1);
    for (int i = 0; i < 101; i++)
        memcpy(many + (size_t)i * len, root, len);
    kjoin_bundle *b = NULL;
    assert_int_equal(kjoin_bundle_parse(many, len * 101, &b, NULL), KJOIN_E_TRUST);
    assert_int_equal(kjoin_bundle_parse(many, len * 100, &b, NULL), KJOIN_OK);
    kjoin_bundle_free(b);
    /* The cap is known before any certificate is parsed: 101 blocks of
     * garbage are "too many", not "certificate 1 is malformed". */
    const char block[] = "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n";
    char *junk = malloc(sizeof(block) * 101);
    for (int i = 0; i < 101; i++)
        memcpy(junk + (size_t)i * (sizeof(block) - 1), block, sizeof(block) - 1);
    kjoin_err err;
    assert_int_equal(kjoin_bundle_parse(junk, (sizeof(block) - 1) * 101, &b, &err), KJOIN_E_TRUST);
    assert_non_null(strstr(err.msg, "more than 100"));
    assert_int_equal(kjoin_bundle_parse(junk, (sizeof(block) - 1) * 100, &b, &err), KJOIN_E_TRUST);
    assert_non_null(strstr(err.msg, "malformed"));
    free(junk);
    free(many);
    free(broken);
    free(root);
}

/* Every K3s hash in the derived vectors is accepted, deterministically, and
 * in the mode the vector says K3s used: the bytes, or a root's DER. */
static void test_k3s_hash_vectors(void **state)
{
    (void)state;
    json_object *root = tu_json("testdata/k3s/k3s.json");
    json_object *vectors = json_object_object_get(json_object_object_get(root, "derived_hash_vectors"), "vectors");
    int checked = 0;
    for (size_t i = 0; i < json_object_array_length(vectors); i++) {
        json_object *v = json_object_array_get_idx(vectors, i);
        const char *pem = tu_str(v, "bundle_pem"), *want = tu_str(v, "expected_k3s_hash"),
                   *input = tu_str(v, "hash_input");
        if (!pem || !want)
            continue;
        unsigned char hash[32];
        for (size_t j = 0; j < 32; j++)
            sscanf(want + 2 * j, "%2hhx", &hash[j]);
        kjoin_bundle *b = NULL;
        assert_int_equal(kjoin_bundle_parse(pem, strlen(pem), &b, NULL), KJOIN_OK);
        kjoin_k3s_match m = kjoin_bundle_match_k3s_hash(b, pem, strlen(pem), hash, NULL);
        kjoin_k3s_match expect = input && strcmp(input, "root DER") == 0 ? KJOIN_K3S_ROOT_DER : KJOIN_K3S_BUNDLE_BYTES;
        if (m != expect)
            fail_msg("%s: match %d, want %d", tu_str(v, "name"), m, expect);
        /* One bit off matches nothing. */
        hash[31] ^= 1;
        assert_int_equal(kjoin_bundle_match_k3s_hash(b, pem, strlen(pem), hash, NULL), KJOIN_K3S_NO_MATCH);
        kjoin_bundle_free(b);
        checked++;
    }
    assert_true(checked >= 6);
    json_object_put(root);
}

/* DER of the first certificate of a PEM text, hashed. */
static void der_hash(const char *pem, unsigned char out[32])
{
    kjoin_bundle *b = NULL;
    assert_int_equal(kjoin_bundle_parse(pem, strlen(pem), &b, NULL), KJOIN_OK);
    unsigned char *der = NULL;
    int n = i2d_X509(kjoin_bundle_x509(b, 0), &der);
    assert_true(n > 0);
    assert_int_equal(kjoin_sha256(der, (size_t)n, out, NULL), KJOIN_OK);
    OPENSSL_free(der);
    kjoin_bundle_free(b);
}

/* K3s' own rule, hashCA in k3s-io/k3s pkg/clientaccess/token.go (commit
 * 0566d45): the expected answers are what that function computes. One
 * certificate: the bytes; several: the DER of the root of the first
 * certificate's chain when it verifies (roots are the later certificates
 * without an authority key id or with one equal to their subject key id),
 * else the bytes. K3s' negatives are held as firmly as its positives. */
static void test_k3s_hash_ca_rule(void **state)
{
    (void)state;
    size_t n = 0;
    char *root = tu_read("testdata/k3s/hashca/root.pem", &n), *ca = tu_read("testdata/k3s/hashca/server-ca.pem", &n),
         *other = tu_read("testdata/k3s/hashca/other.pem", &n);
    unsigned char h_root[32], h_ca[32], h_other[32];
    der_hash(root, h_root);
    der_hash(ca, h_ca);
    der_hash(other, h_other);
    /* X509 CERTIFICATE: a block type Go's ParseCertsPEM skips. */
    char old_label[2048];
    snprintf(old_label, sizeof(old_label), "%s", other);
    char *b1 = strstr(old_label, "BEGIN CERTIFICATE"), *e1 = strstr(old_label, "END CERTIFICATE");
    memmove(b1 + 11, b1 + 6, strlen(b1 + 6) + 1), memcpy(b1 + 6, "X509 ", 5);
    e1 = strstr(old_label, "END CERTIFICATE");
    memmove(e1 + 9, e1 + 4, strlen(e1 + 4) + 1), memcpy(e1 + 4, "X509 ", 5);
    enum { BYTES = -1 };
    static const struct {
        const char *name;
        int parts[3]; /* 0 root, 1 server-ca, 2 other, 3 other as X509 CERTIFICATE; -1 none */
        int hashed;   /* what K3s hashes: BYTES, or the index (0, 1, 2) of the root whose DER */
    } cases[] = {
        {"one certificate: its bytes", {0, -1, -1}, BYTES},
        {"server-ca then root: the root's DER", {1, 0, -1}, 0},
        {"root then server-ca: no chain for the root, the bytes", {0, 1, -1}, BYTES},
        {"two unrelated roots: the bytes", {0, 2, -1}, BYTES},
        {"server-ca, an unrelated root, its root: the root's DER", {1, 2, 0}, 0},
        {"a skipped X509 CERTIFICATE block, then server-ca and root: the root's DER", {3, 1, 0}, 0},
    };
    const char *texts[] = {root, ca, other, old_label};
    const unsigned char *ders[] = {h_root, h_ca, h_other};
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        char body[8192] = "";
        for (int j = 0; j < 3 && cases[i].parts[j] >= 0; j++)
            strcat(body, texts[cases[i].parts[j]]);
        kjoin_bundle *b = NULL;
        assert_int_equal(kjoin_bundle_parse(body, strlen(body), &b, NULL), KJOIN_OK);
        unsigned char bytes[32];
        assert_int_equal(kjoin_sha256(body, strlen(body), bytes, NULL), KJOIN_OK);
        bool by_bytes = cases[i].hashed == BYTES;
        /* K3s' value matches, and how. */
        kjoin_k3s_match m = kjoin_bundle_match_k3s_hash(b, body, strlen(body), by_bytes ? bytes : ders[cases[i].hashed],
                                                        NULL);
        if (m != (by_bytes ? KJOIN_K3S_BUNDLE_BYTES : KJOIN_K3S_ROOT_DER))
            fail_msg("%s: K3s' own hash gave %d", cases[i].name, m);
        /* Every other candidate K3s refuses, kjoin refuses. */
        const unsigned char *others[] = {bytes, h_root, h_ca, h_other};
        for (size_t k = 0; k < TU_LEN(others); k++) {
            bool is_k3s = by_bytes ? others[k] == bytes : others[k] == ders[cases[i].hashed];
            if (!is_k3s && kjoin_bundle_match_k3s_hash(b, body, strlen(body), others[k], NULL) != KJOIN_K3S_NO_MATCH)
                fail_msg("%s: candidate %zu accepted, K3s refuses it", cases[i].name, k);
        }
        kjoin_bundle_free(b);
    }
    free(root);
    free(ca);
    free(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pin_syntax),
        cmocka_unit_test(test_upstream_hashes),
        cmocka_unit_test(test_fixture_pins_and_roles),
        cmocka_unit_test(test_rewrapped_root_keeps_its_pin),
        cmocka_unit_test(test_trust_decisions),
        cmocka_unit_test(test_no_match_and_unsafe),
        cmocka_unit_test(test_malformed_bundles),
        cmocka_unit_test(test_k3s_hash_vectors),
        cmocka_unit_test(test_k3s_hash_ca_rule),
    };
    return cmocka_run_group_tests_name("pin", tests, load_expected, NULL);
}
