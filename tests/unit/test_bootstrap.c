/* The CSR name kubelet gives (the e2e tests check it against a real kubelet's). */
#include <string.h>

#include <kjoin/private/bootstrap.h>

#include "../../pkg/bootstrap/internal.h"

#include "testutil.h"

static void name_of(const char *spki, const char *cn, const char *const *orgs, size_t n_orgs, char out[96])
{
    static const char *const usages[] = {"digital signature", "key encipherment", "client auth"};
    kjoin_err err;
    if (kjoin_bootstrap_csr_name((const unsigned char *)spki, strlen(spki), cn, orgs, n_orgs, usages, 3, out, &err))
        fail_msg("%s", err.msg);
}

static void test_csr_name_shape_and_separation(void **state)
{
    (void)state;
    char a[96], b[96], c[96];
    const char *bar[] = {"bar"}, *ar[] = {"ar"};
    name_of("key", "foo", bar, 1, a);
    name_of("key", "foob", ar, 1, b); /* 'CN:foo,O:bar' must not hash as 'CN:foob,O:ar' */
    name_of("key", "foo", bar, 1, c);
    assert_int_equal(strlen(a), strlen("node-csr-") + 43); /* 32 bytes, base64url without padding */
    assert_memory_equal(a, "node-csr-", 9);
    assert_null(strpbrk(a + 9, "+/="));
    assert_string_not_equal(a, b);
    assert_string_equal(a, c);
    name_of("other key", "foo", bar, 1, b);
    assert_string_not_equal(a, b);
}

/* status.certificate of a seed, decoded. */
static char *status_pem(const char *seed, size_t *len)
{
    size_t n = 0;
    char *body = tu_read(seed, &n), *pem = NULL;
    bool issued = false;
    assert_int_equal(kjoin_bootstrap__csr_status(body, n, "x", &pem, len, &issued, NULL), KJOIN_OK);
    assert_true(issued);
    free(body);
    return pem;
}

/* Only certificates, each whole, with white space around them: a chain is
 * taken; a key, text, escape bytes or a header after or inside it refuse the
 * whole answer. */
static void test_issued_chain_only_certificates(void **state)
{
    (void)state;
    static const struct {
        const char *seed;
        int rc, certs;
    } cases[] = {
        {"testdata/fuzz/csrstatus/issued.json", KJOIN_OK, 1},
        {"testdata/fuzz/csrstatus/chain.json", KJOIN_OK, 2},
        {"testdata/fuzz/csrstatus/trailing-key.json", KJOIN_E_TRUST, 0},
        {"testdata/fuzz/csrstatus/trailing-escape.json", KJOIN_E_TRUST, 0},
        {"testdata/fuzz/csrstatus/header.json", KJOIN_E_TRUST, 0},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        size_t len = 0;
        char *pem = status_pem(cases[i].seed, &len);
        STACK_OF(X509) *chain = NULL;
        assert_int_equal(kjoin_bootstrap__issued_chain(pem, len, &chain, NULL), cases[i].rc);
        assert_int_equal(chain ? sk_X509_num(chain) : 0, cases[i].certs);
        sk_X509_pop_free(chain, X509_free);
        free(pem);
    }
    assert_int_equal(kjoin_bootstrap__issued_chain("\n \n", 3, &(STACK_OF(X509) *){NULL}, NULL), KJOIN_E_TRUST);
}

/* A denial ends the wait with its reason; kjoin approver's denial of a
 * node-bound token is the token rejected (exit 8), any other a trust
 * failure (4). */
static void test_denied_csr_codes(void **state)
{
    (void)state;
    static const struct {
        const char *reason;
        int rc;
    } cases[] = {{"KjoinTokenBound", KJOIN_E_TOKEN_REJECTED}, {"AdminDenied", KJOIN_E_TRUST}, {"", KJOIN_E_TRUST}};
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        char body[512];
        int n = snprintf(body, sizeof(body),
                         "{\"status\":{\"conditions\":[{\"type\":\"Denied\",\"reason\":\"%s\","
                         "\"message\":\"token abcdef is bound to node w7; this CSR asks for w8\"}]}}",
                         cases[i].reason);
        char *pem = NULL;
        size_t len = 0;
        bool issued = true;
        kjoin_err err;
        assert_int_equal(kjoin_bootstrap__csr_status(body, (size_t)n, "csr-1", &pem, &len, &issued, &err),
                         cases[i].rc);
        assert_false(issued);
        assert_non_null(strstr(err.msg, "this CSR asks for w8"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csr_name_shape_and_separation),
        cmocka_unit_test(test_issued_chain_only_certificates),
        cmocka_unit_test(test_denied_csr_codes),
    };
    return cmocka_run_group_tests_name("bootstrap", tests, NULL, NULL);
}
