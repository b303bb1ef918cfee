#include <string.h>

#include <kjoin/certs.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_derived_minimum),
        cmocka_unit_test(test_each_rule),
        cmocka_unit_test(test_key_types),
    };
    return cmocka_run_group_tests_name("certs", tests, NULL, NULL);
}
