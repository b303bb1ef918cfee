#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <kjoin/private/token.h>

#include "testutil.h"

/* Upstream IsValidBootstrapToken and kubeadm discovery vectors. */
static void test_upstream_vectors(void **state)
{
    (void)state;
    json_object *root = tu_json("testdata/token/token.json");
    const char *sets[] = {"is_valid_bootstrap_token", "kubeadm_discovery"};
    size_t checked = 0;
    for (size_t s = 0; s < TU_LEN(sets); s++) {
        json_object *list = json_object_object_get(root, sets[s]);
        for (size_t i = 0; i < json_object_array_length(list); i++) {
            json_object *v = json_object_array_get_idx(list, i);
            const char *tok = tu_str(v, "token");
            bool valid = json_object_get_boolean(json_object_object_get(v, "valid"));
            kjoin_token t;
            kjoin_err err;
            kjoin_code rc = kjoin_token_parse(tok, &t, &err);
            if ((rc == KJOIN_OK) != valid)
                fail_msg("token \"%s\": parse gave %d, upstream says valid=%d", tok, rc, valid);
            if (!valid)
                assert_int_equal(rc, KJOIN_E_USAGE);
            checked++;
        }
    }
    json_object *ids = json_object_object_get(root, "is_valid_bootstrap_token_id");
    for (size_t i = 0; i < json_object_array_length(ids); i++) {
        json_object *v = json_object_array_get_idx(ids, i);
        assert_int_equal(kjoin_token_id_valid(tu_str(v, "token_id")),
                         json_object_get_boolean(json_object_object_get(v, "valid")));
        checked++;
    }
    assert_true(checked >= 25);
    json_object_put(root);
}

static void test_parse_splits_id_and_secret(void **state)
{
    (void)state;
    kjoin_token t;
    assert_int_equal(kjoin_token_parse("abcdef.0123456789abcdef", &t, NULL), KJOIN_OK);
    assert_string_equal(t.id, "abcdef");
    assert_string_equal(t.secret, "0123456789abcdef");
    char buf[KJOIN_TOKEN_STR_MAX];
    kjoin_token_format(&t, buf);
    assert_string_equal(buf, "abcdef.0123456789abcdef");
    kjoin_token_masked(&t, buf);
    assert_string_equal(buf, "abcdef.****************");
    kjoin_token_clear(&t);
    assert_int_equal(t.secret[0], 0);
}

static void test_parse_rejects_without_echoing_secret(void **state)
{
    (void)state;
    const char *bad[] = {"abcdef.0123456789ABCDEF", "abcdef.0123456789abcde!", "abcdef.0123456789abcdef0",
                         "abcdef:0123456789abcdef", "ABCDEF.0123456789abcdef", " abcdef.0123456789abcdef",
                         "abcdef.0123456789abcde", "", "abcdef0123456789abcdefg"};
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        kjoin_token t = {.id = "keep"};
        kjoin_err err;
        assert_int_equal(kjoin_token_parse(bad[i], &t, &err), KJOIN_E_USAGE);
        assert_string_equal(t.id, "keep"); /* out untouched on failure */
        const char *dot = strchr(bad[i], '.');
        if (dot && strlen(dot + 1) > 4)
            assert_null(strstr(err.msg, dot + 1));
    }
}

static void test_generate_is_well_formed_and_spread(void **state)
{
    (void)state;
    unsigned seen[36] = {0};
    for (int n = 0; n < 2000; n++) {
        kjoin_token t;
        assert_int_equal(kjoin_token_generate(&t, NULL), KJOIN_OK);
        char s[KJOIN_TOKEN_STR_MAX];
        kjoin_token_format(&t, s);
        kjoin_token back;
        assert_int_equal(kjoin_token_parse(s, &back, NULL), KJOIN_OK);
        for (const char *p = s; *p; p++)
            if (*p != '.')
                seen[*p <= '9' ? *p - '0' : *p - 'a' + 10]++;
    }
    /* 44000 draws over 36 symbols: about 1222 each. A biased or broken
     * generator (say, modulo of a byte, or a missing letter) falls outside. */
    for (int i = 0; i < 36; i++)
        if (seen[i] < 1000 || seen[i] > 1450)
            fail_msg("symbol %d drawn %u times out of 44000", i, seen[i]);
}

static void test_read_file_first_line(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    char path[256];
    snprintf(path, sizeof(path), "%s/token", dir);
    struct {
        const char *content;
        kjoin_code want;
    } cases[] = {
        {"abcdef.0123456789abcdef\n", KJOIN_OK},
        {"  abcdef.0123456789abcdef \r\nsecond line\n", KJOIN_OK},
        {"abcdef.0123456789abcdef", KJOIN_OK},
        {"\n \nabcdef.0123456789abcdef\n", KJOIN_OK}, /* blank lines first: trimmed, as K3s trims */
        {"abcdef.0123456789abcdeX\n", KJOIN_E_USAGE},
        {"", KJOIN_E_USAGE},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        FILE *f = fopen(path, "w");
        fputs(cases[i].content, f);
        fclose(f);
        kjoin_token t;
        kjoin_err err;
        assert_int_equal(kjoin_token_read_file(path, &t, &err), cases[i].want);
        if (cases[i].want == KJOIN_OK)
            assert_string_equal(t.secret, "0123456789abcdef");
        else
            assert_null(strstr(err.msg, "0123456789abcde"));
    }
    kjoin_token t;
    kjoin_err err;
    assert_int_equal(kjoin_token_read_file("/nonexistent/token", &t, &err), KJOIN_E_USAGE);
    unlink(path);
    rmdir(dir);
    free(dir);
}

/* Substitutes <SERVER_CA_HASH> in upstream vectors with a 64-digit hash. */
static void expand(const char *in, char *out, size_t cap)
{
    const char *mark = strstr(in, "<SERVER_CA_HASH>");
    if (!mark) {
        snprintf(out, cap, "%s", in);
        return;
    }
    snprintf(out, cap, "%.*s%s%s", (int)(mark - in), in,
             "3d6e9336943dab8b8946ecda11f9d0148b9262e37f191d9a599101f95fea39b6", mark + strlen("<SERVER_CA_HASH>"));
}

static void check_valid(json_object *v, const char *token_key)
{
    char tok[512];
    expand(tu_str(v, token_key), tok, sizeof(tok));
    kjoin_k3s_token t;
    kjoin_err err;
    if (kjoin_k3s_token_parse(tok, &t, &err))
        fail_msg("\"%s\": %s", tok, err.msg);
    const char *user = tu_str(v, "username"), *pass = tu_str(v, "password"), *bt = tu_str(v, "bootstrap_token");
    if (user)
        assert_string_equal(t.username, user);
    if (pass)
        assert_string_equal(t.password, pass);
    if (bt && *bt) {
        char s[KJOIN_TOKEN_STR_MAX];
        assert_true(t.is_bootstrap);
        kjoin_token_format(&t.bootstrap, s);
        assert_string_equal(s, bt);
    }
    kjoin_k3s_token_clear(&t);
}

/* K3s' own token tests and the derived parse cases; K3s accepts a 64-character
 * hash of any characters, kjoin wants hex, so those cases are refused here. */
static void test_k3s_vectors(void **state)
{
    (void)state;
    json_object *root = tu_json("testdata/k3s/k3s.json");
    json_object *up = json_object_object_get(root, "upstream");
    json_object *valid = json_object_object_get(up, "Test_UnitValidTokens");
    for (size_t i = 0; i < json_object_array_length(valid); i++)
        check_valid(json_object_array_get_idx(valid, i), "token");
    json_object *invalid = json_object_object_get(up, "Test_UnitInvalidTokens");
    for (size_t i = 0; i < json_object_array_length(invalid); i++) {
        const char *tok = tu_str(json_object_array_get_idx(invalid, i), "token");
        kjoin_k3s_token t;
        if (kjoin_k3s_token_parse(tok, &t, NULL) != KJOIN_E_USAGE)
            fail_msg("accepted \"%s\"", tok);
    }
    json_object *userpass = json_object_object_get(up, "Test_UnitUserPass (ParseUsernamePassword)");
    for (size_t i = 0; i < json_object_array_length(userpass); i++) {
        json_object *v = json_object_array_get_idx(userpass, i);
        const char *tok = tu_str(v, "token");
        bool hex_ok = !strstr(tok, "XXXX"); /* K3s skips the hex check; kjoin does not */
        bool ok = json_object_get_boolean(json_object_object_get(v, "ok")) && hex_ok;
        kjoin_k3s_token t;
        assert_int_equal(kjoin_k3s_token_parse(tok, &t, NULL) == KJOIN_OK, ok);
        if (ok)
            check_valid(v, "token");
    }
    json_object *cases = json_object_object_get(json_object_object_get(root, "derived_parse_vectors"), "cases");
    for (size_t i = 0; i < json_object_array_length(cases); i++) {
        json_object *v = json_object_array_get_idx(cases, i);
        if (tu_str(v, "error")) {
            kjoin_k3s_token t;
            kjoin_err err;
            assert_int_equal(kjoin_k3s_token_parse(tu_str(v, "token"), &t, &err), KJOIN_E_USAGE);
        } else {
            check_valid(v, "token");
        }
    }
    json_object_put(root);
}

static void test_k3s_strictness_and_detection(void **state)
{
    (void)state;
    char hex[65], upper[65];
    memset(hex, 'a', 64), hex[64] = 0;
    memset(upper, 'A', 64), upper[64] = 0;
    char tok[200];
    kjoin_k3s_token t;
    kjoin_err err;
    /* K3s compares the hash as written with the lower-case hash it computes:
     * upper case can never match, so it is refused at once, saying why. */
    snprintf(tok, sizeof(tok), "K10%s::node:pw", upper);
    assert_int_equal(kjoin_k3s_token_parse(tok, &t, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "upper-case"));
    snprintf(tok, sizeof(tok), "K10%s::node:pw", hex);
    assert_int_equal(kjoin_k3s_token_parse(tok, &t, NULL), KJOIN_OK);
    assert_true(t.has_hash);
    assert_int_equal(t.hash[0], 0xaa);
    /* A password of 300 bytes, as K3s takes it. */
    char long_tok[400];
    snprintf(long_tok, sizeof(long_tok), "K10%s::node:%0300d", hex, 7);
    assert_int_equal(kjoin_k3s_token_parse(long_tok, &t, NULL), KJOIN_OK);
    assert_int_equal(strlen(t.password), 300);
    snprintf(tok, sizeof(tok), "K10%.63sg::node:sekrit", hex);
    assert_int_equal(kjoin_k3s_token_parse(tok, &t, &err), KJOIN_E_USAGE);
    assert_null(strstr(err.msg, "sekrit"));
    snprintf(tok, sizeof(tok), "K10::node:sekrit");
    assert_int_equal(kjoin_k3s_token_parse(tok, &t, NULL), KJOIN_OK);
    assert_false(t.has_hash);
    assert_int_equal(kjoin_k3s_token_parse("K10::nocolon-sekrit", &t, &err), KJOIN_E_USAGE);
    assert_null(strstr(err.msg, "sekrit"));

    struct {
        const char *token;
        bool k3s;
    } detect[] = {{"abcdef.0123456789abcdef", false}, {"abcdef.0123456789ABCDEF", false}, {"K10::node:pw", true},
                  {"just-a-password", false}, {"K10abcdef.0123456789abc", true},
                  {"abcdef.0123456789abcdef ", false}, {"\xef\xbb\xbf" "abcdef.0123456789abcdef", false},
                  {"k10::node:pw", false}};
    for (size_t i = 0; i < TU_LEN(detect); i++)
        if (kjoin_token_is_k3s(detect[i].token) != detect[i].k3s)
            fail_msg("flavour of \"%s\"", detect[i].token);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upstream_vectors),
        cmocka_unit_test(test_parse_splits_id_and_secret),
        cmocka_unit_test(test_parse_rejects_without_echoing_secret),
        cmocka_unit_test(test_generate_is_well_formed_and_spread),
        cmocka_unit_test(test_read_file_first_line),
        cmocka_unit_test(test_k3s_vectors),
        cmocka_unit_test(test_k3s_strictness_and_detection),
    };
    return cmocka_run_group_tests_name("token", tests, NULL, NULL);
}
