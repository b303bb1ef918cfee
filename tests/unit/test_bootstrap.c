/* The CSR name kubelet gives (the e2e tests check it against a real kubelet's). */
#include <string.h>

#include <kjoin/bootstrap.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csr_name_shape_and_separation),
    };
    return cmocka_run_group_tests_name("bootstrap", tests, NULL, NULL);
}
