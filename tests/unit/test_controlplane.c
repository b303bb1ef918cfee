/* pkg/controlplane: the certificate key, kubeadm's AES-GCM values, and the
 * kubeadm-certs Secret a real kubeadm uploaded (testdata/fuzz/kubeadmcerts,
 * sealed with a key of 0x01 bytes). The real download is in
 * tests/e2e/t_controlplane.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include <kjoin/controlplane.h>

#include "testutil.h"

static const char hex_key[] = "0101010101010101010101010101010101010101010101010101010101010101";

static void test_key_parse(void **state)
{
    (void)state;
    kjoin_certificate_key k;
    kjoin_err err;
    assert_int_equal(kjoin_certificate_key_parse(hex_key, &k, &err), KJOIN_OK);
    assert_int_equal(k.bytes[0], 1);
    assert_int_equal(kjoin_certificate_key_parse("  0101010101010101010101010101010101010101010101010101010101010101\n",
                                                 &k, &err), KJOIN_OK);
    char upper[65];
    memcpy(upper, "ABCDEF", 6), memcpy(upper + 6, hex_key + 6, 59);
    assert_int_equal(kjoin_certificate_key_parse(upper, &k, &err), KJOIN_OK);
    assert_int_equal(k.bytes[0], 0xab);
    const char *bad[] = {"", "0123", "g101010101010101010101010101010101010101010101010101010101010101",
                         "0101010101010101010101010101010101010101010101010101010101010101 x",
                         "01010101010101010101010101010101010101010101010101010101010101010", NULL};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(kjoin_certificate_key_parse(bad[i], &k, &err), KJOIN_E_USAGE);
        assert_null(strstr(err.msg, "0101")); /* the key is never quoted */
    }
    assert_int_equal(kjoin_certificate_key_parse(NULL, &k, &err), KJOIN_E_USAGE);
}

/* kubeadm's EncryptBytes: nonce || AES-256-GCM ciphertext || tag. */
static size_t seal(const kjoin_certificate_key *k, const char *plain, unsigned char *out)
{
    size_t n = strlen(plain);
    int len = 0, fin = 0;
    memset(out, 7, 12);
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    assert_int_equal(EVP_EncryptInit_ex(c, EVP_aes_256_gcm(), NULL, k->bytes, out), 1);
    assert_int_equal(EVP_EncryptUpdate(c, out + 12, &len, (const unsigned char *)plain, (int)n), 1);
    assert_int_equal(EVP_EncryptFinal_ex(c, out + 12 + len, &fin), 1);
    assert_int_equal(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, out + 12 + len + fin), 1);
    EVP_CIPHER_CTX_free(c);
    return 12 + n + 16;
}

static void test_decrypt(void **state)
{
    (void)state;
    kjoin_certificate_key k, other;
    kjoin_err err;
    unsigned char sealed[256], *plain = NULL;
    size_t len = 0;
    assert_int_equal(kjoin_certificate_key_parse(hex_key, &k, &err), KJOIN_OK);
    memset(other.bytes, 2, sizeof(other.bytes));
    size_t n = seal(&k, "-----BEGIN CERTIFICATE-----", sealed);
    assert_int_equal(kjoin_kubeadm_certs_decrypt(&k, sealed, n, &plain, &len, &err), KJOIN_OK);
    assert_int_equal(len, 27);
    assert_string_equal((char *)plain, "-----BEGIN CERTIFICATE-----");
    kjoin_free_wiped(plain, len);
    assert_int_equal(kjoin_kubeadm_certs_decrypt(&other, sealed, n, &plain, &len, &err), KJOIN_E_TRUST);
    assert_null(plain);
    for (size_t i = 0; i < n; i += 5) { /* any byte changed: nonce, ciphertext or tag */
        sealed[i] ^= 0x80;
        assert_int_equal(kjoin_kubeadm_certs_decrypt(&k, sealed, n, &plain, &len, &err), KJOIN_E_TRUST);
        sealed[i] ^= 0x80;
    }
    assert_int_equal(kjoin_kubeadm_certs_decrypt(&k, sealed, n - 1, &plain, &len, &err), KJOIN_E_TRUST);
    assert_int_equal(kjoin_kubeadm_certs_decrypt(&k, sealed, 27, &plain, &len, &err), KJOIN_E_TRUST);
    n = seal(&k, "", sealed); /* an empty value still has its tag */
    assert_int_equal(kjoin_kubeadm_certs_decrypt(&k, sealed, n, &plain, &len, &err), KJOIN_OK);
    assert_int_equal(len, 0);
    kjoin_free_wiped(plain, len);
}

static char *read_all(const char *path, size_t *len)
{
    char *text = NULL;
    kjoin_err err;
    assert_int_equal(kjoin_file_read(path, 1 << 20, &text, len, &err), KJOIN_OK);
    return text;
}

/* The Secret kubeadm uploaded: with the cluster CA it opens whole; without
 * it, another key, or a value changed, it does not. */
static void test_open_kubeadms_secret(void **state)
{
    (void)state;
    kjoin_certificate_key k, other;
    kjoin_shared_certs c;
    kjoin_err err;
    size_t len, ca_len;
    char *json = read_all("testdata/fuzz/kubeadmcerts/secret.json", &len);
    unsigned char *ca = NULL, *sealed = NULL;
    size_t sealed_len;
    assert_int_equal(kjoin_certificate_key_parse(hex_key, &k, &err), KJOIN_OK);
    json_object *root = json_tokener_parse(json), *data, *v;
    assert_true(json_object_object_get_ex(root, "data", &data) && json_object_object_get_ex(data, "ca.crt", &v));
    assert_int_equal(kjoin_b64_decode(json_object_get_string(v), (size_t)json_object_get_string_len(v), false, &sealed,
                                      &sealed_len, &err), KJOIN_OK);
    assert_int_equal(kjoin_kubeadm_certs_decrypt(&k, sealed, sealed_len, &ca, &ca_len, &err), KJOIN_OK);
    free(sealed);
    assert_int_equal(kjoin_kubeadm_certs_open(json, len, &k, (char *)ca, ca_len, &c, &err), KJOIN_OK);
    for (size_t i = 0; i < KJOIN_SHARED_N; i++)
        assert_non_null(c.files[i].data);
    assert_string_equal(c.files[KJOIN_SHARED_ETCD_CA_KEY].name, "etcd/ca.key");
    assert_int_equal(c.files[KJOIN_SHARED_ETCD_CA_KEY].mode, 0600);
    assert_int_equal(c.files[KJOIN_SHARED_SA_PUB].mode, 0644);
    kjoin_shared_certs_release(&c);
    /* Not the CA discovery verified. */
    assert_int_equal(kjoin_kubeadm_certs_open(json, len, &k, NULL, 0, &c, &err), KJOIN_E_TRUST);
    assert_non_null(strstr(err.msg, "not the cluster CA"));
    memset(other.bytes, 2, sizeof(other.bytes));
    assert_int_equal(kjoin_kubeadm_certs_open(json, len, &other, (char *)ca, ca_len, &c, &err), KJOIN_E_TRUST);
    assert_non_null(strstr(err.msg, "does not open"));
    /* A pair split: sa.pub without sa.key, and a CA without its key. */
    json_object_object_del(data, "sa.key");
    const char *s = json_object_to_json_string(root);
    assert_int_equal(kjoin_kubeadm_certs_open(s, strlen(s), &k, (char *)ca, ca_len, &c, &err), KJOIN_E_TRUST);
    assert_non_null(strstr(err.msg, "sa.pub and sa.key"));
    json_object_object_add(data, "ca.key", json_object_new_string(""));
    s = json_object_to_json_string(root);
    assert_int_equal(kjoin_kubeadm_certs_open(s, strlen(s), &k, (char *)ca, ca_len, &c, &err), KJOIN_E_API);
    /* Swapped keys: the front proxy's CA key given as the cluster CA's. */
    json_object_put(root);
    root = json_tokener_parse(json);
    json_object_object_get_ex(root, "data", &data);
    json_object_object_get_ex(data, "front-proxy-ca.key", &v);
    json_object_object_add(data, "ca.key", json_object_get(v));
    s = json_object_to_json_string(root);
    assert_int_equal(kjoin_kubeadm_certs_open(s, strlen(s), &k, (char *)ca, ca_len, &c, &err), KJOIN_E_TRUST);
    assert_non_null(strstr(err.msg, "ca.key in the Secret is not the key of ca.crt"));
    /* An external etcd's files, and answers that are no Secret. */
    json_object_object_add(data, "external-etcd.crt", json_object_new_string("eA=="));
    s = json_object_to_json_string(root);
    assert_int_equal(kjoin_kubeadm_certs_open(s, strlen(s), &k, (char *)ca, ca_len, &c, &err), KJOIN_E_USAGE);
    const char *not_secret[] = {"", "{}", "[]", "{\"kind\":\"ConfigMap\",\"data\":{}}", "{\"kind\":\"Secret\",\"data\":[]}",
                                "{\"kind\":\"Secret\",\"data\":{\"ca.crt\":1,\"ca.key\":null}}",
                                "{\"kind\":\"Secret\",\"data\":{\"ca.crt\":\"!!\",\"ca.key\":\"!!\"}}"};
    for (size_t i = 0; i < sizeof(not_secret) / sizeof(not_secret[0]); i++)
        assert_int_equal(kjoin_kubeadm_certs_open(not_secret[i], strlen(not_secret[i]), &k, (char *)ca, ca_len, &c,
                                                  &err), KJOIN_E_API);
    json_object_put(root);
    kjoin_free_wiped(ca, ca_len);
    free(json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_key_parse), cmocka_unit_test(test_decrypt),
                                       cmocka_unit_test(test_open_kubeadms_secret)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
