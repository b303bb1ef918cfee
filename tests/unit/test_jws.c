#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include <kjoin/private/jws.h>
#include <kjoin/private/util.h>

#include "testutil.h"

static const char content[] = "Hello from the other side. I must have called a thousand times.";
static const char secret[] = "my voice is my passcode";

static kjoin_code verify(const char *jws, const char *body, const char *kid, const char *key)
{
    return kjoin_jws_verify(jws, body, strlen(body), kid, key, strlen(key), NULL);
}

/* Upstream vectors: sign reproduces each valid one byte for byte, and verify
 * agrees with upstream's verdict (except the empty key, which kjoin refuses). */
static void test_upstream_vectors(void **state)
{
    (void)state;
    json_object *root = tu_json("testdata/jws/jws.json");
    json_object *list = json_object_object_get(root, "upstream");
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *v = json_object_array_get_idx(list, i);
        const char *body = tu_str(v, "content"), *kid = tu_str(v, "id"), *key = tu_str(v, "secret"),
                   *sig = tu_str(v, "signature");
        bool valid = json_object_get_boolean(json_object_object_get(v, "valid"));
        if (valid) {
            char *ours = NULL;
            assert_int_equal(kjoin_jws_sign(body, strlen(body), kid, key, strlen(key), &ours, NULL), KJOIN_OK);
            assert_string_equal(ours, sig);
            free(ours);
        }
        kjoin_code want = valid && *key ? KJOIN_OK : KJOIN_E_TRUST;
        if (verify(sig, body, kid, key) != want)
            fail_msg("vector %s: verify disagrees", tu_str(v, "name"));
    }
    json_object_put(root);
}

/* kjoin parses the header as received: a reordered header verifies (kubeadm
 * rejects it); a MAC keyed with "id.secret" does not. */
static void test_derived_vectors(void **state)
{
    (void)state;
    json_object *root = tu_json("testdata/jws/jws.json");
    json_object *list = json_object_object_get(root, "derived");
    int seen = 0;
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *v = json_object_array_get_idx(list, i);
        const char *name = tu_str(v, "name");
        kjoin_code rc = verify(tu_str(v, "signature"), tu_str(v, "content"), tu_str(v, "id"), tu_str(v, "secret"));
        if (strcmp(name, "header-reordered") == 0)
            assert_int_equal(rc, KJOIN_OK), seen++;
        else if (strcmp(name, "key-is-id.secret-is-WRONG") == 0)
            assert_int_equal(rc, KJOIN_E_TRUST), seen++;
        else
            assert_int_equal(rc, json_object_get_boolean(json_object_object_get(v, "valid")) ? KJOIN_OK : KJOIN_E_TRUST);
    }
    assert_int_equal(seen, 2);
    json_object_put(root);
}

/* Every signature the real bootstrap signer wrote verifies, and kjoin's own
 * signatures equal them. */
static void test_real_control_plane(void **state)
{
    (void)state;
    size_t len;
    char *kubeconfig = tu_read("testdata/real-apiserver/cluster-info.kubeconfig-content.txt", &len);
    json_object *root = tu_json("testdata/real-apiserver/tokens.json");
    json_object *tokens = json_object_object_get(root, "tokens");
    int signed_tokens = 0;
    for (size_t i = 0; i < json_object_array_length(tokens); i++) {
        json_object *t = json_object_array_get_idx(tokens, i);
        const char *jws = tu_str(t, "jws_in_cluster_info"), *id = tu_str(t, "id"), *key = tu_str(t, "secret");
        if (!jws)
            continue;
        signed_tokens++;
        assert_int_equal(kjoin_jws_verify(jws, kubeconfig, len, id, key, strlen(key), NULL), KJOIN_OK);
        char *ours = NULL;
        assert_int_equal(kjoin_jws_sign(kubeconfig, len, id, key, strlen(key), &ours, NULL), KJOIN_OK);
        assert_string_equal(ours, jws);
        free(ours);
        /* one byte more of content breaks it */
        assert_int_equal(kjoin_jws_verify(jws, kubeconfig, len - 1, id, key, strlen(key), NULL), KJOIN_E_TRUST);
    }
    assert_int_equal(signed_tokens, 3);
    json_object_put(root);
    free(kubeconfig);
}

/* A detached JWS over content with the given header, MAC'd with secret and
 * the given digest. Newly-allocated. */
static char *forge(const char *header, const char *digest)
{
    char *h = kjoin_b64_encode(header, strlen(header), true);
    char *p = kjoin_b64_encode(content, strlen(content), true);
    char input[1024];
    snprintf(input, sizeof(input), "%s.%s", h, p);
    unsigned char mac[64];
    size_t mac_len = 0;
    assert_non_null(EVP_Q_mac(NULL, "HMAC", NULL, digest, NULL, secret, strlen(secret),
                              (unsigned char *)input, strlen(input), mac, sizeof(mac), &mac_len));
    char *s = kjoin_b64_encode(mac, mac_len, true);
    size_t n = strlen(h) + strlen(s) + 3;
    char *out = malloc(n);
    snprintf(out, n, "%s..%s", h, s);
    free(h), free(p), free(s);
    return out;
}

static void test_rejections(void **state)
{
    (void)state;
    struct {
        const char *header, *digest, *why;
    } bad[] = {
        {"{\"alg\":\"none\",\"kid\":\"joshua\"}", "SHA256", "not allowed"},
        {"{\"alg\":\"HS512\",\"kid\":\"joshua\"}", "SHA512", "not allowed"},
        {"{\"alg\":\"hs256\",\"kid\":\"joshua\"}", "SHA256", "not allowed"},
        {"{\"alg\":\"HS256\\u0000\",\"kid\":\"joshua\"}", "SHA256", "not allowed"},
        {"{\"alg\":\"HS256\",\"kid\":\"bobbie\"}", "SHA256", "is not the token id"},
        {"{\"alg\":\"HS256\",\"kid\":7}", "SHA256", "is not the token id"},
        {"{\"kid\":\"joshua\"}", "SHA256", "no \"alg\""},
        {"{\"alg\":[\"HS256\"]}", "SHA256", "no \"alg\""},
        {"{\"alg\":\"HS256\",\"crit\":[\"exp\"],\"exp\":1}", "SHA256", "critical"},
        {"{\"alg\":\"HS256\",\"b64\":false}", "SHA256", "unencoded"},
        {"[\"HS256\"]", "SHA256", "not a JSON object"},
        {"{\"alg\":\"HS256\"} x", "SHA256", "not a JSON object"},
        {"{'alg':'HS256'}", "SHA256", "not a JSON object"},
    };
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        char *jws = forge(bad[i].header, bad[i].digest);
        kjoin_err err;
        assert_int_equal(kjoin_jws_verify(jws, content, strlen(content), "joshua", secret, strlen(secret), &err),
                         KJOIN_E_TRUST);
        if (!strstr(err.msg, bad[i].why))
            fail_msg("header %s: message \"%s\" lacks \"%s\"", bad[i].header, err.msg, bad[i].why);
        free(jws);
    }
    /* The same forger with a good header passes, so the cases above fail for their own reason. */
    char *good = forge("{\"alg\":\"HS256\"}", "SHA256");
    assert_int_equal(verify(good, content, "joshua", secret), KJOIN_OK);
    free(good);

    const char *valid = "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8";
    const char *malformed[] = {
        "",
        "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9.SGVsbG8.VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8",
        "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_",
        "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_9",
        "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd+YTrmWuRkcL/8QTNDHYxQIEBsAYYiIj1/8",
        "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8=",
        "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9...VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8",
        "..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8",
        "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9",
    };
    for (size_t i = 0; i < TU_LEN(malformed); i++)
        if (verify(malformed[i], content, "joshua", secret) != KJOIN_E_TRUST)
            fail_msg("accepted malformed JWS %zu", i);
    assert_int_equal(verify(valid, content, "joshua", secret), KJOIN_OK);
    assert_int_equal(verify(valid, content, "joshua", "my voice is my passcodf"), KJOIN_E_TRUST);
    assert_int_equal(verify(valid, "Hello from the other side.", "joshua", secret), KJOIN_E_TRUST);
    assert_int_equal(verify(valid, content, "joshua", ""), KJOIN_E_TRUST);
    char *out = NULL;
    assert_int_equal(kjoin_jws_sign(content, strlen(content), "Bad\"id", secret, 3, &out, NULL), KJOIN_E_USAGE);
    assert_null(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upstream_vectors),
        cmocka_unit_test(test_derived_vectors),
        cmocka_unit_test(test_real_control_plane),
        cmocka_unit_test(test_rejections),
    };
    return cmocka_run_group_tests_name("jws", tests, NULL, NULL);
}
