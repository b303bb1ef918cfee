/* pkg/controlplane: the certificate key, kubeadm's AES-GCM values, and the
 * kubeadm-certs Secret a real kubeadm uploaded (testdata/fuzz/kubeadmcerts,
 * sealed with a key of 0x01 bytes). The real download is in
 * tests/e2e/t_controlplane.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <kjoin/private/controlplane.h>
#include <kjoin/private/controlplane.h>
#include <kjoin/private/kubeapi.h>
#include <kjoin/private/node.h>
#include <kjoin/private/util.h>

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
    assert_int_equal(kjoin_certificate_key_parse(bad[2], &k, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "character 1 is not a hex digit"));
    assert_int_equal(kjoin_certificate_key_parse(bad[3], &k, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "more than one word or line"));
    assert_int_equal(kjoin_certificate_key_parse(bad[1], &k, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "this one has 4 characters"));
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

/* The join's context the control-plane contexts below share (the node's
 * name, the CA discovery verified), one test at a time. */
static kjoin_join_context test_join = {.name = {.name = "cp-2"}};

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
    /* An external etcd's files (here the front proxy's CA and key stand in for the client pair): opened,
     * checked as a pair; a value that does not decrypt, or a key not the certificate's, refused. */
    json_object *good = json_tokener_parse(json), *good_data, *fp_key, *ca_key;
    json_object_object_get_ex(good, "data", &good_data);
    json_object_object_get_ex(good_data, "front-proxy-ca.crt", &v);
    json_object_object_get_ex(good_data, "front-proxy-ca.key", &fp_key);
    json_object_object_get_ex(good_data, "ca.key", &ca_key);
    json_object_object_add(good_data, "external-etcd-ca.crt", json_object_get(v));
    json_object_object_add(good_data, "external-etcd.crt", json_object_get(v));
    json_object_object_add(good_data, "external-etcd.key", json_object_get(fp_key));
    s = json_object_to_json_string(good);
    assert_int_equal(kjoin_kubeadm_certs_open(s, strlen(s), &k, (char *)ca, ca_len, &c, &err), KJOIN_OK);
    assert_true(c.external[KJOIN_EXTERNAL_ETCD_CERT].present && c.external[KJOIN_EXTERNAL_ETCD_CERT].data);
    assert_memory_equal(c.external[KJOIN_EXTERNAL_ETCD_KEY].data, c.files[KJOIN_SHARED_FRONT_PROXY_CA_KEY].data,
                        c.files[KJOIN_SHARED_FRONT_PROXY_CA_KEY].len);
    kjoin_shared_certs_release(&c);
    json_object_object_add(good_data, "external-etcd.key", json_object_get(ca_key));
    s = json_object_to_json_string(good);
    assert_int_equal(kjoin_kubeadm_certs_open(s, strlen(s), &k, (char *)ca, ca_len, &c, &err), KJOIN_E_TRUST);
    assert_non_null(strstr(err.msg, "external-etcd.key in the Secret is not the key of external-etcd.crt"));
    json_object_put(good);
    json_object_object_add(data, "external-etcd.crt", json_object_new_string("eA=="));
    s = json_object_to_json_string(root);
    assert_int_equal(kjoin_kubeadm_certs_open(s, strlen(s), &k, (char *)ca, ca_len, &c, &err), KJOIN_E_TRUST);
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

/* The plain value name of the Secret in json (sealed with k). */
static unsigned char *value_of(const char *json, const kjoin_certificate_key *k, const char *name, size_t *len)
{
    json_object *root = json_tokener_parse(json), *data, *v;
    unsigned char *sealed = NULL, *plain = NULL;
    size_t sealed_len;
    kjoin_err err;
    assert_true(json_object_object_get_ex(root, "data", &data) && json_object_object_get_ex(data, name, &v));
    assert_int_equal(kjoin_b64_decode(json_object_get_string(v), (size_t)json_object_get_string_len(v), false, &sealed,
                                      &sealed_len, &err), KJOIN_OK);
    assert_int_equal(kjoin_kubeadm_certs_decrypt(k, sealed, sealed_len, &plain, len, &err), KJOIN_OK);
    free(sealed);
    json_object_put(root);
    return plain;
}

/* The Secret with value name replaced by plain, sealed with k. */
static char *with_value(const char *json, const kjoin_certificate_key *k, const char *name, const char *plain)
{
    json_object *root = json_tokener_parse(json), *data;
    unsigned char *sealed = malloc(strlen(plain) + 64);
    size_t n = seal(k, plain, sealed);
    char *b64 = kjoin_b64_encode(sealed, n, false);
    assert_non_null(b64);
    assert_true(json_object_object_get_ex(root, "data", &data));
    json_object_object_add(data, name, json_object_new_string(b64));
    char *out = strdup(json_object_to_json_string(root));
    free(b64);
    free(sealed);
    json_object_put(root);
    return out;
}

/* Each value holds exactly what its name says, and what is written is
 * its PEM written anew: kubeadm's own values come out byte for byte; a
 * second CA appended to ca.crt (it would become a client CA of the node's
 * API server), a key appended to ca.crt (it would land 0644), two keys in
 * one value, an encrypted key, a certificate where a key goes are refused;
 * text around a block is not kept. */
static void test_secret_values_are_what_they_say(void **state)
{
    (void)state;
    kjoin_certificate_key k;
    kjoin_shared_certs c;
    kjoin_err err;
    size_t len, ca_len, key_len, fp_len;
    char *json = read_all("testdata/fuzz/kubeadmcerts/secret.json", &len), *bad;
    assert_int_equal(kjoin_certificate_key_parse(hex_key, &k, &err), KJOIN_OK);
    char *ca = (char *)value_of(json, &k, "ca.crt", &ca_len), *key = (char *)value_of(json, &k, "ca.key", &key_len);
    char *fp = (char *)value_of(json, &k, "front-proxy-ca.crt", &fp_len), both[8192];
    assert_int_equal(kjoin_kubeadm_certs_open(json, len, &k, ca, ca_len, &c, &err), KJOIN_OK);
    static const char *const names[] = {"ca.crt", "ca.key", "front-proxy-ca.crt", "front-proxy-ca.key", "sa.pub",
                                        "sa.key", "etcd-ca.crt", "etcd-ca.key"};
    for (size_t i = 0; i < KJOIN_SHARED_N; i++) { /* kubeadm's values, written as they came */
        size_t n;
        unsigned char *plain = value_of(json, &k, names[i], &n);
        assert_int_equal(c.files[i].len, n);
        assert_memory_equal(c.files[i].data, plain, n);
        kjoin_free_wiped(plain, n);
    }
    kjoin_shared_certs_release(&c);
    struct {
        const char *name;
        const char *plain;
        const char *msg;
    } refused[] = {
        {"ca.crt", NULL, "not the cluster CA"},        /* ca.crt, then the front proxy's CA */
        {"ca.crt", "key", "PRIVATE KEY block"},        /* ca.crt, then the CA's key */
        {"ca.key", "twice", "more than one PEM block"}, /* the key twice */
        {"ca.key", "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00000000000000000000000000000000\n\nAAAA\n-----END EC PRIVATE KEY-----\n",
         "PEM headers"},
        {"sa.key", "cert", "CERTIFICATE block"},
        {"sa.pub", "cert", "CERTIFICATE block"},
        {"front-proxy-ca.crt", "nothing at all", "no PEM block"},
    };
    for (size_t i = 0; i < TU_LEN(refused); i++) {
        const char *p = refused[i].plain;
        if (!p)
            snprintf(both, sizeof(both), "%s%s", ca, fp), p = both;
        else if (!strcmp(p, "key"))
            snprintf(both, sizeof(both), "%s%s", ca, key), p = both;
        else if (!strcmp(p, "twice"))
            snprintf(both, sizeof(both), "%s%s", key, key), p = both;
        else if (!strcmp(p, "cert"))
            p = ca;
        bad = with_value(json, &k, refused[i].name, p);
        if (kjoin_kubeadm_certs_open(bad, strlen(bad), &k, ca, ca_len, &c, &err) != KJOIN_E_TRUST ||
            !strstr(err.msg, refused[i].msg))
            fail_msg("case %zu (%s): %s", i, refused[i].name, err.msg);
        assert_null(c.files[0].data);
        free(bad);
    }
    /* Text around the block is not written. */
    snprintf(both, sizeof(both), "a comment\n%s\ntrailing text\n", ca);
    bad = with_value(json, &k, "ca.crt", both);
    assert_int_equal(kjoin_kubeadm_certs_open(bad, strlen(bad), &k, ca, ca_len, &c, &err), KJOIN_OK);
    assert_int_equal(c.files[KJOIN_SHARED_CA_CRT].len, ca_len);
    assert_memory_equal(c.files[KJOIN_SHARED_CA_CRT].data, ca, ca_len);
    kjoin_shared_certs_release(&c);
    free(bad);
    kjoin_free_wiped(key, key_len);
    free(ca);
    free(fp);
    free(json);
}

/* ---- the node's own certificates ------------------------------------------ */

/* A certificates directory holding the shared CAs of the Secret kubeadm
 * uploaded: what download-certs leaves (recorded in a control-plane record
 * in the directory's parent when recorded). */
static char *shared_pki_recorded(bool recorded)
{
    kjoin_certificate_key k;
    kjoin_shared_certs c;
    kjoin_err err;
    size_t len, ca_len, sealed_len;
    unsigned char *ca = NULL, *sealed = NULL;
    char *json = read_all("testdata/fuzz/kubeadmcerts/secret.json", &len), *dir = tu_tmpdir(), pki[4096];
    json_object *root = json_tokener_parse(json), *data, *v;
    assert_int_equal(kjoin_certificate_key_parse(hex_key, &k, &err), KJOIN_OK);
    assert_true(json_object_object_get_ex(root, "data", &data) && json_object_object_get_ex(data, "ca.crt", &v));
    assert_int_equal(kjoin_b64_decode(json_object_get_string(v), (size_t)json_object_get_string_len(v), false, &sealed,
                                      &sealed_len, &err), KJOIN_OK);
    assert_int_equal(kjoin_kubeadm_certs_decrypt(&k, sealed, sealed_len, &ca, &ca_len, &err), KJOIN_OK);
    assert_int_equal(kjoin_kubeadm_certs_open(json, len, &k, (char *)ca, ca_len, &c, &err), KJOIN_OK);
    snprintf(pki, sizeof(pki), "%s/pki", dir);
    assert_int_equal(kjoin_shared_certs_write(&c, pki, recorded ? dir : NULL, false, NULL, &err), KJOIN_OK);
    kjoin_shared_certs_release(&c);
    kjoin_free_wiped(ca, ca_len);
    free(sealed);
    free(json);
    json_object_put(root);
    return dir;
}

static char *shared_pki(void) { return shared_pki_recorded(false); }

/* Replaces dir's cluster CA with a new P-384 one (key and certificate). */
static void ca_p384(const char *dir)
{
    EVP_PKEY *key = EVP_EC_gen("P-384");
    X509 *x = X509_new();
    X509_NAME *name = X509_NAME_new();
    X509V3_CTX ctx;
    assert_non_null(key);
    assert_true(X509_set_version(x, 2) && ASN1_INTEGER_set(X509_get_serialNumber(x), 7) &&
                X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)"kubernetes", -1, -1, 0) &&
                X509_set_subject_name(x, name) && X509_set_issuer_name(x, name) && X509_set_pubkey(x, key) &&
                X509_gmtime_adj(X509_getm_notBefore(x), -60) && X509_gmtime_adj(X509_getm_notAfter(x), 86400));
    X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
    X509_EXTENSION *bc = X509V3_EXT_conf_nid(NULL, &ctx, NID_basic_constraints, "critical,CA:TRUE"),
                   *ku = X509V3_EXT_conf_nid(NULL, &ctx, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature"),
                   *ski = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_key_identifier, "hash");
    assert_true(bc && ku && ski && X509_add_ext(x, bc, -1) && X509_add_ext(x, ku, -1) && X509_add_ext(x, ski, -1));
    assert_true(X509_sign(x, key, EVP_sha384()) > 0);
    char path[4200];
    snprintf(path, sizeof(path), "%s/pki/ca.crt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(PEM_write_X509(f, x));
    fclose(f);
    snprintf(path, sizeof(path), "%s/pki/ca.key", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_true(PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL));
    fclose(f);
    X509_EXTENSION_free(bc), X509_EXTENSION_free(ku), X509_EXTENSION_free(ski);
    X509_NAME_free(name);
    X509_free(x);
    EVP_PKEY_free(key);
}

/* The record is written before the files: it names each file with the
 * digest of what is written and the directories the write made; reset then
 * takes back exactly that (here: the whole tree, the record last). */
static void test_record_before_write(void **state)
{
    (void)state;
    char *dir = shared_pki_recorded(true), path[4200];
    kjoin_cp_record *r = malloc(sizeof(*r));
    bool found;
    kjoin_err err;
    assert_int_equal(kjoin_cp_record_read(dir, r, &found, &err), KJOIN_OK);
    assert_true(found);
    assert_int_equal(r->written.n_files, KJOIN_SHARED_N);
    assert_int_equal(r->written.n_dirs, 2); /* pki and pki/etcd; dir was there */
    snprintf(path, sizeof(path), "%s/pki/etcd", dir);
    assert_true(!strcmp(r->written.dirs[0], path) || !strcmp(r->written.dirs[1], path));
    kjoin_cp_reset_spec rs = {.join = &test_join, .kubernetes_dir = dir};
    kjoin_cp_reset_result *res = calloc(1, sizeof(*res));
    assert_int_equal(kjoin_cp_reset_files(&rs, res, NULL, &err), KJOIN_OK);
    assert_int_equal(res->n_left, 0);
    assert_int_equal(res->n_removed, KJOIN_SHARED_N + 1 + 2);
    snprintf(path, sizeof(path), "%s/pki", dir);
    struct stat st;
    assert_int_equal(stat(path, &st), -1);
    free(res);
    free(r);
    tu_rmtree(dir);
}

static X509 *load_cert(const char *dir, const char *base)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/pki/%s.crt", dir, base);
    FILE *f = fopen(path, "r");
    X509 *x = f ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
    if (f)
        fclose(f);
    return x;
}

static void subject_of(X509 *x, char *out, size_t cap)
{
    BIO *b = BIO_new(BIO_s_mem());
    X509_NAME_print_ex(b, X509_get_subject_name(x), 0, XN_FLAG_RFC2253);
    int n = BIO_read(b, out, (int)cap - 1);
    out[n > 0 ? n : 0] = '\0';
    BIO_free(b);
}

static const char names_yaml[] =
    "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.37.2\n"
    "controlPlaneEndpoint: lb.example.com:6443\nnetworking: {serviceSubnet: 10.100.0.0/16, dnsDomain: example.internal}\n"
    "apiServer: {certSANs: [zz.example.com, 192.0.2.10]}\netcd: {local: {serverCertSANs: [etcd.example.com]}}\n";

/* A control-plane context as a join builds it: the cluster c (release
 * minor, 0: as c says), the kubeconfigs under k8s, the certificates in
 * cert_dir, the node cp-2 at addr, no record. */
static void cx_for(kjoin_cp_context *cx, const kjoin_cluster_configuration *c, int minor, const char *k8s,
                   const char *cert_dir, const char *addr)
{
    kjoin_err err;
    assert_int_equal(kjoin_cp_context_init(cx, c, k8s, &err), KJOIN_OK);
    if (minor) {
        cx->minor = minor;
        cx->release = kjoin_release_of(minor);
    }
    snprintf(cx->cert_dir, sizeof(cx->cert_dir), "%s", cert_dir);
    snprintf(cx->advertise_address, sizeof(cx->advertise_address), "%s", addr ? addr : "");
    test_join.ca_pem = NULL, test_join.ca_len = 0;
    cx->join = &test_join;
}

static kjoin_code certs_for(const char *dir, const char *yaml, const char *addr, int minor, bool force,
                            kjoin_node_certs_result *out, kjoin_err *err)
{
    kjoin_cluster_configuration c;
    char pki[4096];
    assert_int_equal(kjoin_cluster_configuration_parse(yaml, strlen(yaml), &c, err), KJOIN_OK);
    snprintf(pki, sizeof(pki), "%s/pki", dir);
    kjoin_cp_context cx;
    cx_for(&cx, &c, minor, dir, pki, addr);
    cx.force = force;
    return kjoin_node_certs(&cx, out, err);
}

static void test_node_certs_as_kubeadm(void **state)
{
    (void)state;
    char *dir = shared_pki(), subject[256];
    kjoin_node_certs_result r;
    kjoin_err err;
    assert_int_equal(certs_for(dir, names_yaml, "192.0.2.2", 37, false, &r, &err), KJOIN_OK);
    for (int i = 0; i < KJOIN_NODE_CERTS_N; i++)
        assert_true(r.written[i] && !r.kept[i]);
    X509 *api = load_cert(dir, "apiserver");
    assert_non_null(api);
    const char *dns[] = {"cp-2", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
                         "kubernetes.default.svc.example.internal", "lb.example.com", "zz.example.com"};
    for (size_t i = 0; i < TU_LEN(dns); i++)
        if (X509_check_host(api, dns[i], 0, X509_CHECK_FLAG_NO_WILDCARDS, NULL) != 1)
            fail_msg("apiserver lacks %s", dns[i]);
    const char *ips[] = {"10.100.0.1", "192.0.2.2", "192.0.2.10"};
    for (size_t i = 0; i < TU_LEN(ips); i++)
        assert_int_equal(X509_check_ip_asc(api, ips[i], 0), 1);
    assert_int_not_equal(X509_check_ip_asc(api, "127.0.0.1", 0), 1); /* etcd's, not the API server's */
    /* Names in kubeadm's order: the DNS names sorted, then the addresses. */
    GENERAL_NAMES *gens = X509_get_ext_d2i(api, NID_subject_alt_name, NULL, NULL);
    assert_int_equal(sk_GENERAL_NAME_num(gens), 10);
    GENERAL_NAME *first = sk_GENERAL_NAME_value(gens, 0), *last_dns = sk_GENERAL_NAME_value(gens, 6);
    assert_int_equal(first->type, GEN_DNS);
    assert_string_equal((const char *)ASN1_STRING_get0_data(first->d.dNSName), "cp-2");
    assert_string_equal((const char *)ASN1_STRING_get0_data(last_dns->d.dNSName), "zz.example.com");
    GENERAL_NAMES_free(gens);
    assert_int_equal(X509_get_extended_key_usage(api), XKU_SSL_SERVER);
    subject_of(api, subject, sizeof(subject));
    assert_string_equal(subject, "CN=kube-apiserver");
    X509_free(api);
    X509 *etcd = load_cert(dir, "etcd/server");
    subject_of(etcd, subject, sizeof(subject));
    assert_string_equal(subject, "CN=cp-2");
    assert_int_equal(X509_check_host(etcd, "etcd.example.com", 0, 0, NULL), 1);
    assert_int_equal(X509_check_ip_asc(etcd, "::1", 0), 1);
    assert_int_equal(X509_get_extended_key_usage(etcd), XKU_SSL_SERVER | XKU_SSL_CLIENT);
    X509_free(etcd);
    /* Run again: everything kept. */
    assert_int_equal(certs_for(dir, names_yaml, "192.0.2.2", 37, false, &r, &err), KJOIN_OK);
    for (int i = 0; i < KJOIN_NODE_CERTS_N; i++)
        assert_true(r.kept[i] && !r.written[i]);
    /* Another address: the pairs are not what this node needs; refused,
     * then replaced when asked. */
    assert_int_equal(certs_for(dir, names_yaml, "192.0.2.3", 37, false, &r, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "apiserver.crt is already there and it lacks names"));
    assert_int_equal(certs_for(dir, names_yaml, "192.0.2.3", 37, true, &r, &err), KJOIN_OK);
    assert_true(r.written[KJOIN_CERT_APISERVER] && r.kept[KJOIN_CERT_APISERVER_KUBELET_CLIENT]);
    tu_rmtree(dir);
}

/* The subjects of the release's kubeadm, the key type and lifetime the
 * cluster asks for. */
static void test_node_certs_by_release(void **state)
{
    (void)state;
    static const struct {
        int minor;
        const char *kubelet_client, *etcd_client;
    } cases[] = {{20, "CN=kube-apiserver-kubelet-client,O=system:masters", "CN=kube-apiserver-etcd-client,O=system:masters"},
                 {34, "CN=kube-apiserver-kubelet-client,O=kubeadm:cluster-admins", "CN=kube-apiserver-etcd-client"},
                 {37, "CN=kube-apiserver-kubelet-client", "CN=kube-apiserver-etcd-client"}};
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        char *dir = shared_pki(), subject[256];
        kjoin_node_certs_result r;
        kjoin_err err;
        assert_int_equal(certs_for(dir, names_yaml, "192.0.2.2", cases[i].minor, false, &r, &err), KJOIN_OK);
        X509 *x = load_cert(dir, "apiserver-kubelet-client"), *y = load_cert(dir, "apiserver-etcd-client");
        subject_of(x, subject, sizeof(subject));
        assert_string_equal(subject, cases[i].kubelet_client);
        subject_of(y, subject, sizeof(subject));
        assert_string_equal(subject, cases[i].etcd_client);
        /* kubeadm before 1.21 wrote no basic constraints on a leaf. */
        assert_int_equal(X509_get_ext_by_NID(x, NID_basic_constraints, -1) >= 0, cases[i].minor >= 21);
        X509_free(x);
        X509_free(y);
        tu_rmtree(dir);
    }
    /* The kubelet client's group by patch, as each patch's kubeadm (1.33.12 dropped it: a cherry-pick). */
    static const struct {
        const char *version;
        bool admins;
    } patches[] = {{"v1.33.11", true}, {"v1.33.12", false}, {"v1.33.13", false}, {"v1.34.5", true},
                   {"v1.35.4", true},  {"v1.36.0", false},  {"v1.33", true}};
    for (size_t i = 0; i < TU_LEN(patches); i++) {
        char *dir = shared_pki(), yaml[1024], subject[256], *at;
        kjoin_node_certs_result r;
        kjoin_err err;
        snprintf(yaml, sizeof(yaml), "%s", names_yaml);
        at = strstr(yaml, "v1.37.2");
        snprintf(yaml, sizeof(yaml), "%.*s%s%s", (int)(at - yaml), names_yaml, patches[i].version,
                 names_yaml + (at - yaml) + strlen("v1.37.2"));
        assert_int_equal(certs_for(dir, yaml, "192.0.2.2", 0, false, &r, &err), KJOIN_OK);
        X509 *x = load_cert(dir, "apiserver-kubelet-client");
        subject_of(x, subject, sizeof(subject));
        if ((strstr(subject, "O=kubeadm:cluster-admins") != NULL) != patches[i].admins)
            fail_msg("%s: %s", patches[i].version, subject);
        X509_free(x);
        tu_rmtree(dir);
    }
    char *dir = shared_pki(), yaml[1024];
    kjoin_node_certs_result r;
    kjoin_err err;
    snprintf(yaml, sizeof(yaml), "%sencryptionAlgorithm: ECDSA-P384\ncertificateValidityPeriod: 48h\n", names_yaml);
    int64_t now = (int64_t)time(NULL);
    assert_int_equal(certs_for(dir, yaml, "fd00::2", 37, false, &r, &err), KJOIN_OK);
    X509 *x = load_cert(dir, "apiserver");
    assert_int_equal(EVP_PKEY_get_bits(X509_get0_pubkey(x)), 384);
    assert_true(EVP_PKEY_is_a(X509_get0_pubkey(x), "EC"));
    assert_int_equal(X509_check_ip_asc(x, "fd00::2", 0), 1);
    int days, secs;
    ASN1_TIME *at = ASN1_TIME_new();
    ASN1_TIME_set(at, (time_t)now);
    assert_int_equal(ASN1_TIME_diff(&days, &secs, at, X509_get0_notAfter(x)), 1);
    assert_true(days * 86400 + secs >= 48 * 3600 - 5 && days * 86400 + secs <= 48 * 3600 + 5);
    ASN1_TIME_free(at);
    /* As kubeadm (Go's x509) makes every leaf whatever the key type: keyEncipherment too... */
    assert_true(X509_get_key_usage(x) & KU_KEY_ENCIPHERMENT);
    assert_true(X509_get_key_usage(x) & KU_DIGITAL_SIGNATURE);
    X509_free(x);
    tu_rmtree(dir);
    /* ...and signed with the hash the CA's key implies: a P-384 CA signs with SHA-384. */
    dir = shared_pki();
    ca_p384(dir);
    assert_int_equal(certs_for(dir, yaml, "192.0.2.2", 37, false, &r, &err), KJOIN_OK);
    static const char *const leaves[] = {"apiserver", "apiserver-kubelet-client", "etcd/server", "etcd/peer"};
    for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
        x = load_cert(dir, leaves[i]);
        if (strncmp(leaves[i], "etcd/", 5) == 0) { /* etcd's CA is the Secret's own: the hash its key implies */
            X509_free(x);
            continue;
        }
        assert_int_equal(X509_get_signature_nid(x), NID_ecdsa_with_SHA384);
        assert_true(X509_get_key_usage(x) & KU_KEY_ENCIPHERMENT);
        X509_free(x);
    }
    tu_rmtree(dir);
}

/* Refusals: nothing of the node's own is written. */
static void test_node_certs_refused(void **state)
{
    (void)state;
    char *dir = shared_pki(), path[4096], other[4096];
    kjoin_node_certs_result r;
    kjoin_err err;
    /* An external etcd: no etcd CA here, none of its leaves made (kubeadm's GetCertsWithoutEtcd). */
    const char *ext = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n"
                      "etcd: {external: {endpoints: [\"https://192.0.2.9:2379\"]}}\n";
    assert_int_equal(certs_for(dir, ext, "192.0.2.2", 37, false, &r, &err), KJOIN_OK);
    assert_true(r.written[KJOIN_CERT_APISERVER] && r.written[KJOIN_CERT_FRONT_PROXY_CLIENT]);
    assert_false(r.written[KJOIN_CERT_ETCD_SERVER] || r.written[KJOIN_CERT_ETCD_PEER] ||
                 r.written[KJOIN_CERT_ETCD_HEALTHCHECK_CLIENT] || r.written[KJOIN_CERT_APISERVER_ETCD_CLIENT]);
    snprintf(path, sizeof(path), "%s/pki/etcd/server.crt", dir);
    assert_int_equal(access(path, F_OK), -1);
    snprintf(path, sizeof(path), "%s/pki/apiserver-etcd-client.key", dir);
    assert_int_equal(access(path, F_OK), -1);
    for (const char *const *f = (const char *const[]){"apiserver", "apiserver-kubelet-client", "front-proxy-client",
                                                      NULL}; *f; f++) { /* a clean slate for the refusals below */
        snprintf(path, sizeof(path), "%s/pki/%s.crt", dir, *f);
        unlink(path);
        snprintf(path, sizeof(path), "%s/pki/%s.key", dir, *f);
        unlink(path);
    }
    char *before;
    /* A certificates directory whose ca.crt is not the CA discovery
     * verified (here: the front proxy's): refused before anything is made,
     * for the pairs and the kubeconfigs; the real one passes the check. */
    {
        kjoin_cluster_configuration c;
        kjoin_control_plane_kubeconfigs_result kr;
        char pki[4000], crt[4096];
        size_t other_len, ca_len;
        snprintf(pki, sizeof(pki), "%s/pki", dir);
        snprintf(crt, sizeof(crt), "%s/front-proxy-ca.crt", pki);
        char *other_ca = read_all(crt, &other_len);
        snprintf(crt, sizeof(crt), "%s/ca.crt", pki);
        char *ca = read_all(crt, &ca_len);
        assert_int_equal(kjoin_cluster_configuration_parse(names_yaml, strlen(names_yaml), &c, &err), KJOIN_OK);
        kjoin_cp_context ns;
        cx_for(&ns, &c, 0, dir, pki, "192.0.2.2");
        test_join.ca_pem = other_ca, test_join.ca_len = other_len;
        before = tu_tree_state(dir);
        assert_int_equal(kjoin_node_certs(&ns, &r, &err), KJOIN_E_TRUST);
        assert_non_null(strstr(err.msg, "ca.crt is not the cluster CA discovery verified"));
        assert_int_equal(kjoin_control_plane_kubeconfigs(&ns, &kr, &err), KJOIN_E_TRUST);
        tu_tree_unchanged(dir, before);
        /* ca.crt among a bundle of two (a CA rotation): trusted. */
        char *both = malloc(other_len + ca_len + 1);
        memcpy(both, other_ca, other_len);
        memcpy(both + other_len, ca, ca_len + 1);
        char *k8s = tu_tmpdir();
        kjoin_cp_context ks;
        cx_for(&ks, &c, 0, k8s, pki, "192.0.2.2");
        test_join.ca_pem = both, test_join.ca_len = other_len + ca_len;
        assert_int_equal(kjoin_control_plane_kubeconfigs(&ks, &kr, &err), KJOIN_OK);
        assert_true(kr.written[KJOIN_KUBECONFIG_ADMIN]);
        tu_rmtree(k8s);
        free(both);
        free(other_ca);
        free(ca);
    }
    /* No certificates directory at all. */
    char *empty = tu_tmpdir();
    before = tu_tree_state(empty);
    assert_int_equal(certs_for(empty, names_yaml, "192.0.2.2", 37, false, &r, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "ca.crt is missing"));
    tu_tree_unchanged(empty, before);
    tu_rmtree(empty);
    /* A leaf that is a symlink kjoin did not make: refused, not followed. */
    snprintf(path, sizeof(path), "%s/pki/apiserver.crt", dir);
    snprintf(other, sizeof(other), "%s/pki/ca.crt", dir);
    assert_int_equal(symlink(other, path), 0);
    before = tu_tree_state(dir);
    assert_int_not_equal(certs_for(dir, names_yaml, "192.0.2.2", 37, true, &r, &err), KJOIN_OK);
    tu_tree_unchanged(dir, before);
    assert_int_equal(unlink(path), 0);
    /* A key others may read: refused as ssh refuses one. */
    snprintf(path, sizeof(path), "%s/pki/apiserver.key", dir);
    tu_write(dir, "pki/apiserver.key", "x");
    assert_int_equal(chmod(path, 0644), 0);
    before = tu_tree_state(dir);
    assert_int_equal(certs_for(dir, names_yaml, "192.0.2.2", 37, true, &r, &err), KJOIN_E_USAGE);
    tu_tree_unchanged(dir, before);
    assert_int_equal(unlink(path), 0);
    /* Only one of a pair, without force. */
    tu_write(dir, "pki/apiserver.crt", "not a certificate");
    before = tu_tree_state(dir);
    assert_int_equal(certs_for(dir, names_yaml, "192.0.2.2", 37, false, &r, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "only one of the pair"));
    tu_tree_unchanged(dir, before);
    snprintf(path, sizeof(path), "%s/pki/apiserver.crt", dir);
    assert_int_equal(unlink(path), 0);
    /* The CA's key gone: nothing to sign with. */
    snprintf(path, sizeof(path), "%s/pki/front-proxy-ca.key", dir);
    assert_int_equal(unlink(path), 0);
    before = tu_tree_state(dir);
    assert_int_equal(certs_for(dir, names_yaml, "192.0.2.2", 37, false, &r, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "front-proxy-ca.key is not there to sign front-proxy-client"));
    tu_tree_unchanged(dir, before);
    /* After every refusal: no pair of the node's own. */
    for (int i = 0; i < KJOIN_NODE_CERTS_N; i++) {
        snprintf(path, sizeof(path), "%s/pki/%s.crt", dir, kjoin_node_cert_base(i));
        assert_int_not_equal(access(path, F_OK), 0);
        snprintf(path, sizeof(path), "%s/pki/%s.key", dir, kjoin_node_cert_base(i));
        assert_int_not_equal(access(path, F_OK), 0);
    }
    tu_rmtree(dir);
}

/* A file the operator had there, replaced because the join was told to
 * (force): kept as it was, and put back by the take-back, its content and
 * mode; the run's own record names the new one. */
static void count_put_back(void *ctx, const char *path, const char *why)
{
    (void)path;
    assert_null(why);
    (*(int *)ctx)++;
}

static void test_replaced_files_put_back(void **state)
{
    (void)state;
    char *dir = shared_pki(), path[4200];
    kjoin_cluster_configuration c;
    kjoin_node_certs_result r;
    kjoin_err err;
    tu_write(dir, "pki/apiserver.crt", "the operator's certificate\n");
    tu_write(dir, "pki/apiserver.key", "the operator's key\n");
    snprintf(path, sizeof(path), "%s/pki/apiserver.key", dir);
    assert_int_equal(chmod(path, 0600), 0);
    snprintf(path, sizeof(path), "%s/pki/apiserver.crt", dir);
    assert_int_equal(chmod(path, 0640), 0);
    char *before = tu_tree_state(dir);
    assert_int_equal(kjoin_cluster_configuration_parse(names_yaml, strlen(names_yaml), &c, &err), KJOIN_OK);
    kjoin_cp_context cx;
    char pki[4096];
    snprintf(pki, sizeof(pki), "%s/pki", dir);
    cx_for(&cx, &c, 37, dir, pki, "192.0.2.2");
    cx.force = true, cx.record = true;
    cx.replaced = kjoin_cp_replaced_new();
    assert_non_null(cx.replaced);
    assert_int_equal(kjoin_node_certs(&cx, &r, &err), KJOIN_OK);
    char *now = tu_read(path, NULL);
    assert_null(strstr(now, "the operator's")); /* replaced */
    free(now);
    /* The take-back: the run's files go (the record knows them), then what was replaced comes back. */
    kjoin_cp_reset_result *back = calloc(1, sizeof(*back));
    kjoin_cp_record *empty = calloc(1, sizeof(*empty));
    assert_int_equal(kjoin_cp_take_back(dir, empty, back, &err), KJOIN_OK);
    int put = 0;
    assert_int_equal(kjoin_cp_replaced_restore(cx.replaced, count_put_back, &put), 0);
    assert_int_equal(put, 2);
    tu_tree_unchanged(dir, before);
    assert_int_equal(kjoin_cp_replaced_restore(cx.replaced, count_put_back, &put), 0); /* once */
    assert_int_equal(put, 2);
    kjoin_cp_replaced_free(cx.replaced);
    free(back);
    free(empty);
    tu_rmtree(dir);
}

/* ---- the node's kubeconfigs ------------------------------------------------ */

static kjoin_code confs_for(const char *dir, const char *yaml, const char *addr, int minor, bool force,
                            kjoin_control_plane_kubeconfigs_result *out, kjoin_err *err)
{
    kjoin_cluster_configuration c;
    char pki[4096];
    assert_int_equal(kjoin_cluster_configuration_parse(yaml, strlen(yaml), &c, err), KJOIN_OK);
    snprintf(pki, sizeof(pki), "%s/pki", dir);
    kjoin_cp_context cx;
    cx_for(&cx, &c, minor, dir, pki, addr);
    cx.force = force;
    return kjoin_control_plane_kubeconfigs(&cx, out, err);
}

/* The kubeconfig's server and its client certificate's subject. */
static void conf_of(const char *dir, const char *file, char *server, size_t cap, char *subject, size_t scap)
{
    char path[4096];
    size_t len;
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    char *text = read_all(path, &len);
    kjoin_kubeapi_config cfg;
    kjoin_err err;
    assert_int_equal(kjoin_kubeapi_config_parse(text, len, NULL, NULL, &cfg, &err), KJOIN_OK);
    snprintf(server, cap, "%s", cfg.server);
    BIO *b = BIO_new_mem_buf(cfg.cert_pem, (int)cfg.cert_len);
    X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
    assert_non_null(x);
    subject_of(x, subject, scap);
    X509_free(x);
    BIO_free(b);
    kjoin_kubeapi_config_release(&cfg);
    kjoin_free_wiped(text, len);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
}

static void test_kubeconfigs_as_kubeadm(void **state)
{
    (void)state;
    char *dir = shared_pki(), server[512], subject[256];
    kjoin_control_plane_kubeconfigs_result r;
    kjoin_err err;
    assert_int_equal(confs_for(dir, names_yaml, "fd00::2", 37, false, &r, &err), KJOIN_OK);
    conf_of(dir, "admin.conf", server, sizeof(server), subject, sizeof(subject));
    assert_string_equal(server, "https://lb.example.com:6443");
    assert_string_equal(subject, "CN=kubernetes-admin,O=kubeadm:cluster-admins");
    conf_of(dir, "controller-manager.conf", server, sizeof(server), subject, sizeof(subject));
    assert_string_equal(server, "https://[fd00::2]:6443");
    assert_string_equal(subject, "CN=system:kube-controller-manager");
    conf_of(dir, "scheduler.conf", server, sizeof(server), subject, sizeof(subject));
    assert_string_equal(subject, "CN=system:kube-scheduler");
    /* Again: kept. Another address: the local two are not this node's. */
    assert_int_equal(confs_for(dir, names_yaml, "fd00::2", 37, false, &r, &err), KJOIN_OK);
    assert_true(r.kept[0] && r.kept[1] && r.kept[2] && !r.written[0]);
    assert_int_equal(confs_for(dir, names_yaml, "192.0.2.3", 37, false, &r, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "controller-manager.conf is already there and its server is https://[fd00::2]"));
    assert_int_equal(confs_for(dir, names_yaml, "192.0.2.3", 37, true, &r, &err), KJOIN_OK);
    assert_true(r.kept[KJOIN_KUBECONFIG_ADMIN] && r.written[KJOIN_KUBECONFIG_SCHEDULER]);
    /* Before 1.29 the admin is system:masters; no controlPlaneEndpoint: the node's own. */
    char *old = shared_pki();
    const char *plain = "apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\nclusterName: prod\n";
    assert_int_equal(confs_for(old, plain, "192.0.2.2", 20, false, &r, &err), KJOIN_OK);
    conf_of(old, "admin.conf", server, sizeof(server), subject, sizeof(subject));
    assert_string_equal(server, "https://192.0.2.2:6443");
    assert_string_equal(subject, "CN=kubernetes-admin,O=system:masters");
    char path[4096];
    size_t len;
    snprintf(path, sizeof(path), "%s/admin.conf", old);
    char *text = read_all(path, &len);
    assert_non_null(strstr(text, "current-context: kubernetes-admin@prod"));
    kjoin_free_wiped(text, len);
    /* A kubeconfig directory not there yet: made by the write (0700), the
     * files in it. */
    {
        kjoin_cluster_configuration c;
        char pki[4096], k8s[4096];
        assert_int_equal(kjoin_cluster_configuration_parse(names_yaml, strlen(names_yaml), &c, &err), KJOIN_OK);
        snprintf(pki, sizeof(pki), "%s/pki", dir);
        snprintf(k8s, sizeof(k8s), "%s/not/yet", dir);
        kjoin_cp_context ks;
        cx_for(&ks, &c, 0, k8s, pki, "192.0.2.2");
        assert_int_equal(kjoin_control_plane_kubeconfigs(&ks, &r, &err), KJOIN_OK);
        assert_true(r.written[0] && r.written[1] && r.written[2]);
        struct stat st;
        assert_int_equal(stat(k8s, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0700);
    }
    /* A kubeconfig of another CA: refused. */
    tu_rmtree(old);
    old = shared_pki();
    snprintf(path, sizeof(path), "%s/admin.conf", dir);
    text = read_all(path, &len);
    tu_write(old, "admin.conf", text);
    snprintf(path, sizeof(path), "%s/admin.conf", old);
    assert_int_equal(chmod(path, 0600), 0);
    kjoin_free_wiped(text, len);
    assert_int_equal(confs_for(old, names_yaml, "fd00::2", 37, false, &r, &err), KJOIN_OK); /* same CA: kept */
    assert_true(r.kept[KJOIN_KUBECONFIG_ADMIN]);
    tu_write(old, "scheduler.conf", "not: a kubeconfig\n");
    snprintf(path, sizeof(path), "%s/scheduler.conf", old);
    assert_int_equal(chmod(path, 0600), 0);
    assert_int_equal(confs_for(old, names_yaml, "fd00::2", 37, false, &r, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "scheduler.conf is already there and it is not a kubeconfig"));
    assert_int_equal(confs_for(old, names_yaml, "not-an-ip", 37, false, &r, &err), KJOIN_E_USAGE);
    tu_rmtree(old);
    tu_rmtree(dir);
}

/* ---- mark-control-plane ------------------------------------------------------ */

static void test_mark_patch(void **state)
{
    (void)state;
    const char *node = "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\",\"resourceVersion\":\"42\",\"labels\":{\"a\":\"b\"}},"
                       "\"spec\":{\"taints\":[{\"key\":\"x\",\"value\":\"y\",\"effect\":\"NoExecute\"},"
                       "{\"key\":\"node-role.kubernetes.io/control-plane\",\"effect\":\"NoSchedule\"}]}}";
    kjoin_mark_control_plane_spec s = {0};
    kjoin_cp_context cx = {.join = &(kjoin_join_context){.name = {.name = "n"}}, .minor = 37,
                           .release = kjoin_release_of(37)};
    char *patch = NULL;
    kjoin_err err;
#define LABELS(...) "{\"metadata\":{\"resourceVersion\":\"42\",\"labels\":{" __VA_ARGS__ "}},\"spec\":{\"taints\":["
#define MASTER "\"node-role.kubernetes.io/master\":\"\","
#define CP "\"node-role.kubernetes.io/control-plane\":\"\""
#define LB ",\"node.kubernetes.io/exclude-from-external-load-balancers\":\"\""
#define TAINT(key) "{\"key\":\"node-role.kubernetes.io/" key "\",\"effect\":\"NoSchedule\"}"
#define OPERATORS "{\"key\":\"x\",\"value\":\"y\",\"effect\":\"NoExecute\"}"
    /* The labels and the default taints of each release, the operator's taint kept, the one the Node has
     * not twice, at the version read: 1.20 master and control-plane, the master taint; 1.23 the load
     * balancers' label too (from 1.21); 1.24 no master label, both taints in kubeadm's order; 1.37 the
     * control-plane taint. */
    static const struct {
        int minor;
        const char *patch;
    } marks[] = {
        {20, LABELS(MASTER CP) TAINT("master") "," OPERATORS "," TAINT("control-plane") "]}}"},
        {23, LABELS(MASTER CP LB) TAINT("master") "," OPERATORS "," TAINT("control-plane") "]}}"},
        {24, LABELS(CP LB) TAINT("master") "," TAINT("control-plane") "," OPERATORS "]}}"},
        {37, LABELS(CP LB) TAINT("control-plane") "," OPERATORS "]}}"},
    };
#undef LABELS
#undef MASTER
#undef CP
#undef LB
#undef TAINT
#undef OPERATORS
    for (size_t i = 0; i < TU_LEN(marks); i++) {
        cx.minor = marks[i].minor, cx.release = kjoin_release_of(marks[i].minor);
        assert_int_equal(kjoin_mark_control_plane_patch(&cx, &s, node, strlen(node), &patch, &err), KJOIN_OK);
        if (strcmp(patch, marks[i].patch))
            fail_msg("1.%d's marks: %s", marks[i].minor, patch);
        free(patch);
    }
    cx.minor = 20, cx.release = kjoin_release_of(20);
    const char *given[] = {"dedicated=db:NoSchedule"};
    s = (kjoin_mark_control_plane_spec){.taints = given, .n_taints = 1, .taints_set = true};
    assert_int_equal(kjoin_mark_control_plane_patch(&cx, &s, node, strlen(node), &patch, &err), KJOIN_OK);
    assert_non_null(strstr(patch, "\"taints\":[{\"key\":\"dedicated\",\"value\":\"db\",\"effect\":\"NoSchedule\"},"));
    free(patch);
    s.n_taints = 0;
    assert_int_equal(kjoin_mark_control_plane_patch(&cx, &s, node, strlen(node), &patch, &err), KJOIN_OK);
    assert_null(strstr(patch, "\"effect\":\"NoSchedule\"},{\"key\":\"x\"")); /* no default taint added */
    free(patch);
    /* Refused: a malformed taint, answers that are no Node. */
    const char *bad_taint[] = {"no-effect"};
    s.taints = bad_taint, s.n_taints = 1;
    assert_int_equal(kjoin_mark_control_plane_patch(&cx, &s, node, strlen(node), &patch, &err), KJOIN_E_USAGE);
    assert_null(patch);
    s.n_taints = 0;
    const char *not_nodes[] = {"", "[]", "{}", "{\"metadata\":{\"resourceVersion\":7}}", "{\"metadata\":[]}", "{} {}"};
    for (size_t i = 0; i < TU_LEN(not_nodes); i++)
        if (kjoin_mark_control_plane_patch(&cx, &s, not_nodes[i], strlen(not_nodes[i]), &patch, &err) != KJOIN_E_API)
            fail_msg("\"%s\" accepted", not_nodes[i]);
    /* No admin kubeconfig: refused before anything is asked. */
    snprintf(cx.admin_kubeconfig, sizeof(cx.admin_kubeconfig), "/nonexistent/admin.conf");
    assert_int_not_equal(kjoin_mark_control_plane(&cx, &s, &err), KJOIN_OK);
    assert_non_null(strstr(err.msg, "admin.conf"));
}


/* ---- the static Pod manifests --------------------------------------------- */

static const char manifests_yaml[] =
    "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.37.2+x\n"
    "imageRepository: registry.example:5000/k8s\nclusterName: prod\n"
    "networking: {serviceSubnet: 10.100.0.0/16, podSubnet: 10.244.0.0/16, dnsDomain: example.internal}\n"
    "apiServer: {extraArgs: [{name: audit-log-maxage, value: \"7\"}, {name: authorization-mode, value: RBAC}]}\n"
    "scheduler: {extraArgs: [{name: bind-address, value: 0.0.0.0}]}\n";

static kjoin_code manifests_for(const char *yaml, const char *addr, int minor, char *const *env, char *out[3],
                                kjoin_err *err)
{
    kjoin_cluster_configuration c;
    kjoin_code rc = kjoin_cluster_configuration_parse(yaml, strlen(yaml), &c, err);
    if (rc)
        return rc;
    kjoin_cp_context cx;
    cx_for(&cx, &c, minor, "/etc/kubernetes", "/etc/kubernetes/pki", addr);
    return kjoin_control_plane_manifests_make(&cx, env, out, err);
}

/* The images kubeadm's ImagePull checks: the release's tag ('+' as '_'),
 * etcd's own repository and tag when the cluster sets them, the release's
 * pause; a release kjoin has no manifests of, refused. */
static void test_control_plane_images(void **state)
{
    (void)state;
    kjoin_cluster_configuration c;
    kjoin_err err;
    char images[KJOIN_CP_IMAGES_N][400];
    const char *yaml = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.37.2+x\n"
                       "imageRepository: registry.example/k8s\netcd: {local: {imageRepository: e.example, imageTag: 9.9}}\n";
    assert_int_equal(kjoin_cluster_configuration_parse(yaml, strlen(yaml), &c, &err), KJOIN_OK);
    assert_int_equal(kjoin_control_plane_images(&c, 37, images, &err), KJOIN_OK);
    assert_string_equal(images[0], "registry.example/k8s/kube-apiserver:v1.37.2_x");
    assert_string_equal(images[2], "registry.example/k8s/kube-scheduler:v1.37.2_x");
    assert_string_equal(images[3], "e.example/etcd:9.9");
    assert_string_equal(images[4], "registry.example/k8s/pause:3.10.2");
    const char *old = "apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\nkubernetesVersion: v1.20.2\n"
                      "imageRepository: k8s.gcr.io\n";
    assert_int_equal(kjoin_cluster_configuration_parse(old, strlen(old), &c, &err), KJOIN_OK);
    assert_int_equal(kjoin_control_plane_images(&c, 20, images, &err), KJOIN_OK);
    assert_string_equal(images[3], "k8s.gcr.io/etcd:3.4.13-0");
    assert_string_equal(images[4], "k8s.gcr.io/pause:3.2");
    assert_int_equal(kjoin_control_plane_images(&c, 21, images, &err), KJOIN_E_USAGE);
}

static void free3(char *out[3])
{
    for (int i = 0; i < 3; i++)
        free(out[i]);
}

/* text has each of the NULL-terminated needles, in that order. */
static void in_order(const char *text, const char *const *needles)
{
    for (const char *p = text; *needles; needles++) {
        const char *at = strstr(p, *needles);
        if (!at) {
            fprintf(stderr, "%s\n", text);
            fail_msg("\"%s\" missing, or out of order (the text above)", *needles);
        }
        p = at + strlen(*needles);
    }
}

static void test_manifests_as_kubeadm(void **state)
{
    (void)state;
    char *out[3];
    kjoin_err err;
    char *env[] = {"no_proxy=10.0.0.0/8", "PATH=/bin", "HTTPS_PROXY=http://proxy:3128", "EMPTY_PROXY=", "proxy=x", NULL};
    assert_int_equal(manifests_for(manifests_yaml, "192.0.2.2", 37, env, out, &err), KJOIN_OK);
    /* 1.37: the defaults sorted, those named by extraArgs dropped, then the extraArgs in their order. */
    in_order(out[0], (const char *const[]){"kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint: \"192.0.2.2:6443\"",
                                           "- kube-apiserver", "--advertise-address=192.0.2.2", "--allow-privileged=true",
                                           "--etcd-servers=https://127.0.0.1:2379", "--secure-port=6443",
                                           "--service-account-issuer=https://kubernetes.default.svc.example.internal",
                                           "--service-cluster-ip-range=10.100.0.0/16", "--audit-log-maxage=7",
                                           "--authorization-mode=RBAC", "name: HTTPS_PROXY", "name: no_proxy",
                                           "registry.example:5000/k8s/kube-apiserver:v1.37.2_x", "port: probe-port",
                                           "containerPort: 6443", "cpu: \"250m\"", "failureThreshold: 24", "priority: 2000001000",
                                           "type: RuntimeDefault", NULL});
    assert_null(strstr(out[0], "EMPTY_PROXY"));
    assert_null(strstr(out[0], "--insecure-port"));
    assert_int_equal(strstr(out[0], "--authorization-mode=Node,RBAC") != NULL, 0);
    in_order(out[1], (const char *const[]){"--allocate-node-cidrs=true", "--cluster-cidr=10.244.0.0/16",
                                           "--cluster-name=prod", "--cluster-signing-cert-file=", "host: \"127.0.0.1\"",
                                           "path: /healthz", "containerPort: 10257", NULL});
    /* A wildcard bind address probes the default host: no host at all. */
    assert_null(strstr(out[2], "host:"));
    in_order(out[2], (const char *const[]){"--bind-address=0.0.0.0", "path: /livez", "path: /readyz", NULL});
    free3(out);
    /* IPv6: etcd on ::1, the annotation bracketed. */
    assert_int_equal(manifests_for(manifests_yaml, "fd00::2", 37, env, out, &err), KJOIN_OK);
    in_order(out[0], (const char *const[]){"[fd00::2]:6443", "--etcd-servers=https://[::1]:2379", NULL});
    free3(out);
}

static void test_manifests_of_1_20(void **state)
{
    (void)state;
    char *out[3];
    kjoin_err err;
    const char *old = "apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\nkubernetesVersion: v1.20.2\n"
                      "imageRepository: k8s.example\napiServer:\n  timeoutForControlPlane: 2m0s\n"
                      "  extraArgs: {authorization-mode: 'Node,Bogus,RBAC', zz-flag: 'a b'}\n"
                      "etcd: {local: {extraArgs: {advertise-client-urls: 'https://10.0.0.9:2379'}}}\n";
    char *env[] = {"https_proxy=http://b", "HTTP_PROXY=http://a", NULL};
    assert_int_equal(manifests_for(old, "192.0.2.2", 20, env, out, &err), KJOIN_OK);
    /* One map, sorted; the unknown mode dropped; the extra etcd URL as the API server's. */
    in_order(out[0], (const char *const[]){"--authorization-mode=Node,RBAC", "--etcd-servers=https://10.0.0.9:2379",
                                           "--insecure-port=0", "--zz-flag=a b", "name: https_proxy", "name: HTTP_PROXY",
                                           "port: 6443", "failureThreshold: 12", NULL});
    assert_null(strstr(out[0], "probe-port"));
    assert_null(strstr(out[0], "RuntimeDefault"));
    in_order(out[1], (const char *const[]){"--port=0", "flexvolume-dir", NULL});
    in_order(out[2], (const char *const[]){"--port=0", "path: /healthz", "port: 10259", NULL});
    assert_null(strstr(out[2], "readinessProbe"));
    free3(out);
    /* Go's largest duration is the largest taken (its probe's threshold an
     * int); anything longer, however it adds up, is refused, never wrapped. */
    static const struct {
        const char *timeout;
        const char *want; /* NULL: refused */
    } timeouts[] = {
        {"2562047h47m16s", "failureThreshold: 922337204"},
        {"2562047h47m17s", NULL},
        {"2562048h", NULL},
        {"9223372036854775807s", NULL},
        {"1099511627776h1099511627776h1099511627776h1099511627776h", NULL},
        {"2562047h2562047h", NULL},
    };
    for (size_t i = 0; i < sizeof(timeouts) / sizeof(timeouts[0]); i++) {
        char yaml[600];
        snprintf(yaml, sizeof(yaml), "apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\n"
                 "kubernetesVersion: v1.20.2\nimageRepository: k8s.example\napiServer:\n  timeoutForControlPlane: %s\n",
                 timeouts[i].timeout);
        kjoin_code got = manifests_for(yaml, "192.0.2.2", 20, env, out, &err);
        if (!timeouts[i].want) {
            assert_int_not_equal(got, KJOIN_OK);
            assert_non_null(strstr(err.msg, "timeoutForControlPlane"));
            continue;
        }
        assert_int_equal(got, KJOIN_OK);
        assert_non_null(strstr(out[0], timeouts[i].want));
        free3(out);
    }
}

static void test_manifests_refused(void **state)
{
    (void)state;
    char *out[3];
    kjoin_err err;
    char *env[] = {NULL};
    /* A release whose manifests kjoin does not know. */
    assert_int_equal(manifests_for(manifests_yaml, "192.0.2.2", 21, env, out, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "not of 1.21"));
    assert_null(out[0]);
    /* What the manifests cannot carry yet, by name. */
    /* extraVolumes, extraEnvs and mergeMethod, as kubeadm writes them (the
     * release suite compares them with kubeadm's own; here the rules): a
     * volume of kubeadm's name replaces kubeadm's, an extra variable replaces
     * a proxy variable of its name, mergeMethod only in kubeadm.k8s.io/v1. */
    const char *extras = "apiVersion: kubeadm.k8s.io/v1\nkind: ClusterConfiguration\nkubernetesVersion: v1.37.2\n"
                         "imageRepository: r\napiServer: {extraArgs: [{name: enable-admission-plugins, value: ',X', "
                         "mergeMethod: append}, {name: tls-min-version, value: VersionTLS13, mergeMethod: prepend}, "
                         "{name: v, value: '2'}], extraEnvs: [{name: https_proxy, value: 'http://b'}, {name: A, value: '1'}], "
                         "extraVolumes: [{name: ca-certs, hostPath: /etc/mine, mountPath: /etc/ssl/certs, readOnly: true}, "
                         "{name: audit, hostPath: /var/log/a, mountPath: /a, pathType: DirectoryOrCreate}]}\n";
    char *proxied[] = {"https_proxy=http://a", "HTTP_PROXY=http://c", NULL};
    assert_int_equal(manifests_for(extras, "192.0.2.2", 37, proxied, out, &err), KJOIN_OK);
    in_order(out[0], (const char *const[]){"--enable-admission-plugins=NodeRestriction,X", "--tls-cert-file=",
                                           "--v=2", "name: A", "name: HTTP_PROXY", "name: https_proxy",
                                           "value: \"http://b\"", "- mountPath: /a", "mountPath: /etc/ssl/certs",
                                           "hostPath:", "path: /var/log/a", "type: DirectoryOrCreate", "path: /etc/mine",
                                           NULL});
    assert_null(strstr(out[0], "tls-min-version")); /* a merge without a default of that name: dropped, as kubeadm's */
    assert_null(strstr(out[0], "/etc/ssl/certs\n      type")); /* kubeadm's ca-certs replaced */
    free3(out);
    const char *beta4 = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.37.2\n"
                        "imageRepository: r\napiServer: {extraArgs: [{name: enable-admission-plugins, value: ',X', "
                        "mergeMethod: append}]}\n";
    assert_int_equal(manifests_for(beta4, "192.0.2.2", 37, env, out, &err), KJOIN_OK);
    assert_non_null(strstr(out[0], "--enable-admission-plugins=,X")); /* v1beta4 has no mergeMethod: dropped */
    free3(out);
    static const char *const bad_extras[] = {
        "apiServer: {extraVolumes: [{name: Bad_Name, hostPath: /x, mountPath: /x}]}",
        "apiServer: {extraVolumes: [{name: x, hostPath: x, mountPath: /x}]}",
        "apiServer: {extraVolumes: [{name: x, hostPath: /x, mountPath: /x, pathType: Pipe}]}",
        "apiServer: {extraVolumes: [{name: x, hostPath: /x, mountPath: /x, readOnly: maybe}]}",
        "apiServer: {extraVolumes: {name: x}}",
        "apiServer: {extraEnvs: [{name: '1X', value: y}]}",
        "apiServer: {extraEnvs: [{name: 'X Y', value: y}]}",
        "apiServer: {extraEnvs: [{value: y}]}",
        "etcd: {local: {extraEnvs: [{name: X, value: \"a\\u0007\"}]}}",
        "apiServer: {extraArgs: [{name: x, value: y, mergeMethod: replace}]}",
    };
    for (size_t i = 0; i < TU_LEN(bad_extras); i++) {
        char doc[600];
        kjoin_cluster_configuration bc;
        snprintf(doc, sizeof(doc), "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n%s\n", bad_extras[i]);
        if (kjoin_cluster_configuration_parse(doc, strlen(doc), &bc, &err) == KJOIN_OK)
            fail_msg("accepted: %s", bad_extras[i]);
    }
    const char *rootless = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.37.2\n"
                           "imageRepository: r\nfeatureGates: {RootlessControlPlane: true}\n";
    assert_int_equal(manifests_for(rootless, "192.0.2.2", 37, env, out, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "RootlessControlPlane"));
    const char *dual = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.22.17\n"
                       "imageRepository: r\nfeatureGates: {IPv6DualStack: false}\n";
    assert_int_equal(manifests_for(dual, "192.0.2.2", 22, env, out, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "featureGates.IPv6DualStack"));
    /* No image repository (the node's address is the context's, checked where the join begins). */
    assert_int_equal(manifests_for(names_yaml, "192.0.2.2", 37, env, out, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "imageRepository"));
    /* Flags the cluster's data cannot smuggle: a name outside [a-z0-9-], a value with a newline. */
    kjoin_cluster_configuration c;
    const char *bad[] = {
        "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\napiServer: {extraArgs: [{name: \"x=y --z\", value: v}]}\n",
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\napiServer: {extraArgs: {x: \"a\\nb\"}}\n",
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\napiServer: {extraArgs: 7}\n",
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nimageRepository: \"a b\"\n",
        /* an option for the runtime's client, not an image repository */
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nimageRepository: --pod-config=/etc/shadow\n",
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nimageRepository: -r/k8s\n",
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nimageRepository: r//k8s\n",
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nimageRepository: r.example:x/k8s\n",
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nimageRepository: r.example/K8s\n",
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\netcd: {local: {imageRepository: --x}}\n",
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nnetworking: {podSubnet: 10.0.0.0/33}\n"};
    for (size_t i = 0; i < TU_LEN(bad); i++)
        if (kjoin_cluster_configuration_parse(bad[i], strlen(bad[i]), &c, &err) != KJOIN_E_OTHER)
            fail_msg("accepted: %s", bad[i]);
}

static void test_manifests_written(void **state)
{
    (void)state;
    char *dir = tu_tmpdir(), mdir[4096], path[4200];
    kjoin_cluster_configuration c;
    kjoin_control_plane_manifests_result r;
    kjoin_err err;
    char *env[] = {NULL};
    assert_int_equal(kjoin_cluster_configuration_parse(manifests_yaml, strlen(manifests_yaml), &c, &err), KJOIN_OK);
    snprintf(mdir, sizeof(mdir), "%s/manifests", dir);
    kjoin_cp_context s;
    cx_for(&s, &c, 0, dir, dir, "192.0.2.2");
    (void)env;
    assert_int_equal(kjoin_control_plane_manifests(&s, &r, &err), KJOIN_OK);
    assert_true(r.written[0] && r.written[1] && r.written[2]);
    struct stat st;
    snprintf(path, sizeof(path), "%s/kube-scheduler.yaml", mdir);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(stat(mdir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    /* Again: the same Pods, kept. */
    assert_int_equal(kjoin_control_plane_manifests(&s, &r, &err), KJOIN_OK);
    assert_true(r.kept[0] && r.kept[1] && r.kept[2] && !r.written[0]);
    /* Another Pod there: refused by name, nothing written; replaced when asked. */
    tu_write(dir, "manifests/kube-scheduler.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: other}\n");
    assert_int_equal(chmod(path, 0600), 0);
    snprintf(path, sizeof(path), "%s/kube-apiserver.yaml", mdir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(kjoin_control_plane_manifests(&s, &r, &err), KJOIN_E_OUTPUT);
    assert_non_null(strstr(err.msg, "kube-scheduler.yaml is already there and is another Pod"));
    assert_int_not_equal(access(path, F_OK), 0);
    s.force = true;
    assert_int_equal(kjoin_control_plane_manifests(&s, &r, &err), KJOIN_OK);
    assert_true(r.written[0] && r.kept[1] && r.written[2]);
    tu_rmtree(dir);
}

/* ---- the dry run ------------------------------------------------------------ */

static const kjoin_planned_file *planned_at(const kjoin_planned_files *plan, const char *dir, const char *name)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    for (size_t i = 0; i < plan->n; i++)
        if (!strcmp(plan->files[i].path, path))
            return &plan->files[i];
    return NULL;
}

/* A dry run for the steps of cx (its copies of the node's files made). */
static void dry_begin(const kjoin_cp_context *cx, const char *tmp)
{
    kjoin_err err;
    assert_int_equal(kjoin_dry_run_begin(tmp, &test_join.dry_run, &err), KJOIN_OK);
    assert_int_equal(kjoin_cp_dry_run_copy(cx, &err), KJOIN_OK);
}
static void dry_end(void)
{
    kjoin_dry_run_end(test_join.dry_run, NULL, NULL);
    test_join.dry_run = NULL;
}

/* The steps write under the dry run's own directory: the node's holds
 * nothing new, the files shown at the node's paths (the Pods naming them),
 * keys masked, the shared certificates copied in and not shown again; the
 * directory gone at the end. */
static void test_dry_run(void **state)
{
    (void)state;
    char *dir = shared_pki(), *tmp = tu_tmpdir(), pki[4096], path[4200];
    kjoin_cluster_configuration c;
    kjoin_cp_context cx;
    kjoin_dry_run *d = NULL;
    kjoin_planned_files plan = {0};
    kjoin_node_certs_result nr;
    kjoin_control_plane_kubeconfigs_result kr;
    kjoin_control_plane_manifests_result mr;
    kjoin_err err;
    assert_int_equal(kjoin_cluster_configuration_parse(manifests_yaml, strlen(manifests_yaml), &c, &err), KJOIN_OK);
    snprintf(pki, sizeof(pki), "%s/pki", dir);
    cx_for(&cx, &c, 37, dir, pki, "192.0.2.2");
    assert_int_equal(kjoin_dry_run_begin(tmp, &d, &err), KJOIN_OK);
    test_join.dry_run = d;
    assert_int_equal(kjoin_cp_dry_run_copy(&cx, &err), KJOIN_OK);
    assert_int_equal(strncmp(d->root, tmp, strlen(tmp)), 0);
    char admin_at[4200];
    kjoin_join_context_read_path(cx.join, cx.admin_kubeconfig, admin_at, sizeof(admin_at));
    assert_string_equal(admin_at, cx.admin_kubeconfig); /* none made yet: the node's */
    assert_int_equal(kjoin_join_context_write_path(cx.join, "/etc/x", path, sizeof(path), &err), KJOIN_OK);
    assert_non_null(strstr(path, "/etc/x"));
    assert_int_equal(kjoin_join_context_write_path(cx.join, "/etc/x", path, 8, &err), KJOIN_E_USAGE);
    assert_int_equal(kjoin_node_certs(&cx, &nr, &err), KJOIN_OK);
    assert_int_equal(kjoin_control_plane_kubeconfigs(&cx, &kr, &err), KJOIN_OK);
    kjoin_join_context_read_path(cx.join, cx.admin_kubeconfig, admin_at, sizeof(admin_at));
    assert_int_equal(strncmp(admin_at, d->root, strlen(d->root)), 0); /* the dry run's own */
    if (kjoin_control_plane_manifests(&cx, &mr, &err))
        fail_msg("%s", err.msg);
    /* the node's directories: nothing new */
    snprintf(path, sizeof(path), "%s/apiserver.crt", pki);
    assert_int_not_equal(access(path, F_OK), 0);
    snprintf(path, sizeof(path), "%s/admin.conf", dir);
    assert_int_not_equal(access(path, F_OK), 0);
    snprintf(path, sizeof(path), "%s/manifests", dir);
    assert_int_not_equal(access(path, F_OK), 0);
    assert_int_equal(kjoin_dry_run_show(d, &plan, &err), KJOIN_OK);
    assert_int_equal(plan.n, 2 * KJOIN_NODE_CERTS_N + KJOIN_KUBECONFIGS_N + KJOIN_MANIFESTS_N);
    const kjoin_planned_file *crt = planned_at(&plan, pki, "apiserver.crt"), *key = planned_at(&plan, pki, "apiserver.key"),
                             *admin = planned_at(&plan, dir, "admin.conf"),
                             *api = planned_at(&plan, dir, "manifests/kube-apiserver.yaml");
    assert_true(crt && key && admin && api);
    assert_null(planned_at(&plan, pki, "ca.crt")); /* copied in, not the run's */
    assert_int_equal(crt->mode, 0644);
    assert_int_equal(key->mode, 0600);
    assert_non_null(strstr(crt->content, "-----BEGIN CERTIFICATE-----\nMII"));
    assert_non_null(strstr(key->content, "PRIVATE KEY-----\n(a private key: not shown)\n-----END"));
    assert_null(strstr(key->content, "MII"));
    assert_non_null(strstr(admin->content, "client-key-data: (a private key: not shown)\n"));
    assert_non_null(strstr(admin->content, "client-certificate-data: LS0t"));
    snprintf(path, sizeof(path), "--tls-cert-file=%s/apiserver.crt", pki);
    assert_non_null(strstr(api->content, path)); /* the node's path, not the dry run's */
    assert_null(strstr(api->content, d->root));
    /* a file that is not the dry run's is refused; one written again is shown once */
    kjoin_planned_release(&plan);
    snprintf(path, sizeof(path), "%.1000s/apiserver.crt", pki);
    assert_int_equal(kjoin_join_context_wrote(cx.join, path, 0644, &err), KJOIN_E_OTHER);
    size_t shown = d->n;
    snprintf(admin_at, sizeof(admin_at), "%s%.1000s", d->root, path);
    assert_int_equal(kjoin_join_context_wrote(cx.join, admin_at, 0644, &err), KJOIN_OK);
    assert_int_equal(d->n, shown);
    char dry[sizeof(d->root)];
    memcpy(dry, d->root, sizeof(dry));
    /* Its certificates live an hour at most (the cluster's say a year). */
    char in_dry[8500];
    snprintf(in_dry, sizeof(in_dry), "%s%s/apiserver.crt", dry, pki);
    FILE *f = fopen(in_dry, "r");
    assert_non_null(f);
    X509 *short_lived = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    assert_non_null(short_lived);
    int days = 0, secs = 0;
    assert_int_equal(ASN1_TIME_diff(&days, &secs, NULL, X509_get0_notAfter(short_lived)), 1);
    assert_true(days == 0 && secs <= 3600 + 5);
    X509_free(short_lived);
    kjoin_dry_run_end(d, NULL, NULL);
    test_join.dry_run = NULL;
    assert_int_not_equal(access(dry, F_OK), 0);
    /* A dry run ended by SIGINT, SIGTERM or SIGHUP leaves no copy of the CA
     * keys: its directory goes with the signal, which still ends the process. */
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < 3; i++) {
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            kjoin_cp_context child;
            signal(SIGINT, SIG_DFL), signal(SIGTERM, SIG_DFL), signal(SIGHUP, SIG_DFL); /* (see test_util) */
            kjoin_scratch_remove_on_signals();
            cx_for(&child, &c, 37, dir, pki, "192.0.2.2");
            if (kjoin_dry_run_begin(tmp, &test_join.dry_run, &err) || kjoin_cp_dry_run_copy(&child, &err) ||
                kjoin_node_certs(&child, &nr, &err))
                _exit(3);
            (void)!write(fds[1], test_join.dry_run->root, strlen(test_join.dry_run->root) + 1);
            raise(sigs[i]);
            _exit(0);
        }
        close(fds[1]);
        char left[sizeof(dry)] = "";
        assert_true(read(fds[0], left, sizeof(left)) > 0);
        close(fds[0]);
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == sigs[i]);
        assert_int_equal(strncmp(left, tmp, strlen(tmp)), 0);
        assert_int_not_equal(access(left, F_OK), 0);
    }
    /* What the node holds is judged as the join judges it: its own pair
     * (from a real run) kept and not shown; a pair that is not this node's
     * refused, naming the node's path; nothing of the node changed. */
    cx_for(&cx, &c, 37, dir, pki, "192.0.2.2");
    assert_int_equal(kjoin_node_certs(&cx, &nr, &err), KJOIN_OK); /* for real */
    cx_for(&cx, &c, 37, dir, pki, "192.0.2.2");
    dry_begin(&cx, tmp);
    assert_int_equal(kjoin_node_certs(&cx, &nr, &err), KJOIN_OK);
    assert_true(nr.kept[KJOIN_CERT_APISERVER] && !nr.written[KJOIN_CERT_APISERVER]);
    assert_int_equal(kjoin_dry_run_show(test_join.dry_run, &plan, &err), KJOIN_OK);
    assert_int_equal(plan.n, 0);
    dry_end();
    snprintf(path, sizeof(path), "%s/apiserver.crt", pki);
    size_t before_len, after_len;
    char *before = read_all(path, &before_len);
    cx_for(&cx, &c, 37, dir, pki, "192.0.2.3"); /* another address: the pair lacks it */
    dry_begin(&cx, tmp);
    assert_int_equal(kjoin_node_certs(&cx, &nr, &err), KJOIN_E_USAGE);
    snprintf(path, sizeof(path), "%s/apiserver.crt is already there and it lacks names", pki);
    assert_non_null(strstr(err.msg, path));
    dry_end();
    snprintf(path, sizeof(path), "%s/apiserver.crt", pki);
    char *after = read_all(path, &after_len);
    assert_true(before_len == after_len && !memcmp(before, after, before_len));
    free(before);
    free(after);
    /* No CA key on the node and none downloaded: the certs step refuses, naming the node's path. */
    snprintf(path, sizeof(path), "%s/ca.key", pki);
    assert_int_equal(unlink(path), 0);
    snprintf(path, sizeof(path), "%s/apiserver.crt", pki);
    assert_int_equal(unlink(path), 0);
    snprintf(path, sizeof(path), "%s/apiserver.key", pki);
    assert_int_equal(unlink(path), 0);
    cx_for(&cx, &c, 37, dir, pki, "192.0.2.2");
    dry_begin(&cx, tmp);
    assert_int_equal(kjoin_node_certs(&cx, &nr, &err), KJOIN_E_USAGE);
    snprintf(path, sizeof(path), "%s/ca.key is not there to sign", pki);
    assert_non_null(strstr(err.msg, path));
    dry_end();
    assert_int_equal(rmdir(tmp), 0); /* every dry run's directory gone: empty */
    /* A directory that cannot be made; a temporary directory's path too long. */
    d = (kjoin_dry_run *)1;
    assert_int_equal(kjoin_dry_run_begin("/nonexistent/kjoin", &d, &err), KJOIN_E_OUTPUT);
    assert_null(d);
    char long_dir[300];
    memset(long_dir, 'a', sizeof(long_dir) - 1), long_dir[0] = '/', long_dir[sizeof(long_dir) - 1] = '\0';
    assert_int_equal(kjoin_dry_run_begin(long_dir, &d, &err), KJOIN_E_USAGE);
    free(tmp);
    tu_rmtree(dir);
}

/* ---- etcd-join ------------------------------------------------------------- */

/* A failed run takes back what it wrote since it began, and nothing an
 * earlier run of the same join wrote: the record as it was, the
 * directories it made gone when empty, a file changed since left and named. */
static void test_take_back(void **state)
{
    (void)state;
    kjoin_err err;
    kjoin_cp_record *before = NULL, *r = malloc(sizeof(*r));
    kjoin_cp_reset_result *back = calloc(1, sizeof(*back));
    bool found;
    struct stat st;
    char path[4200];
    /* No record when the run began: everything goes, the record too. */
    char *dir = tu_tmpdir();
    assert_int_equal(kjoin_cp_record_begin(dir, &before, &err), KJOIN_OK);
    assert_int_equal(before->written.n_files, 0);
    tu_rmtree(dir);
    dir = shared_pki_recorded(true);
    assert_int_equal(kjoin_cp_take_back(dir, before, back, &err), KJOIN_OK);
    assert_true(back->had_record);
    assert_int_equal(back->n_left, 0);
    assert_int_equal(back->n_removed, KJOIN_SHARED_N + 2);
    assert_int_equal(kjoin_cp_record_read(dir, r, &found, &err), KJOIN_OK);
    assert_false(found);
    snprintf(path, sizeof(path), "%s/pki", dir);
    assert_int_equal(stat(path, &st), -1);
    free(before);
    /* Nothing written since the run began: nothing to take back. */
    tu_rmtree(dir);
    dir = shared_pki_recorded(true);
    assert_int_equal(kjoin_cp_record_begin(dir, &before, &err), KJOIN_OK);
    assert_int_equal(before->written.n_files, KJOIN_SHARED_N);
    assert_int_equal(kjoin_cp_take_back(dir, before, back, &err), KJOIN_OK);
    assert_false(back->had_record);
    assert_int_equal(kjoin_cp_record_read(dir, r, &found, &err), KJOIN_OK);
    assert_true(found);
    assert_int_equal(r->written.n_files, KJOIN_SHARED_N);
    /* An earlier run's files stay; this run's go, but one changed since. */
    kjoin_certificate_key k;
    kjoin_shared_certs c;
    size_t len, ca_len;
    char *json = read_all("testdata/fuzz/kubeadmcerts/secret.json", &len), pki2[4200];
    snprintf(path, sizeof(path), "%s/pki/ca.crt", dir);
    char *ca = read_all(path, &ca_len);
    assert_int_equal(kjoin_certificate_key_parse(hex_key, &k, &err), KJOIN_OK);
    assert_int_equal(kjoin_kubeadm_certs_open(json, len, &k, ca, ca_len, &c, &err), KJOIN_OK);
    snprintf(pki2, sizeof(pki2), "%s/other/pki", dir);
    assert_int_equal(kjoin_shared_certs_write(&c, pki2, dir, false, NULL, &err), KJOIN_OK);
    kjoin_shared_certs_release(&c);
    snprintf(path, sizeof(path), "%s/other/pki/sa.pub", dir);
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs("# changed\n", f);
    fclose(f);
    assert_int_equal(kjoin_cp_take_back(dir, before, back, &err), KJOIN_OK);
    assert_true(back->had_record);
    assert_int_equal(back->n_removed, KJOIN_SHARED_N - 1 + 1); /* the files but sa.pub, and pki/etcd */
    assert_int_equal(back->n_left, 3); /* sa.pub, and the two directories that hold it */
    assert_non_null(strstr(back->left[0], "sa.pub: changed since"));
    assert_int_equal(kjoin_cp_record_read(dir, r, &found, &err), KJOIN_OK);
    assert_true(found);
    assert_int_equal(r->written.n_files, KJOIN_SHARED_N);
    snprintf(path, sizeof(path), "%s/pki/ca.key", dir);
    assert_int_equal(stat(path, &st), 0);
    free(json);
    free(ca);
    free(before);
    free(back);
    free(r);
    tu_rmtree(dir);
}

/* What the steps about to write cannot carry is refused before any of
 * them writes: a release or field the manifests do not
 * know (only where manifests are written), an address that is none, a
 * directory the writer would refuse. */
static void test_check_before_writing(void **state)
{
    (void)state;
    kjoin_cluster_configuration c;
    kjoin_err err;
    char *dir = tu_tmpdir(), path[1000];
    const char *external = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.37.2\n"
                           "imageRepository: r\netcd: {external: {endpoints: [\"https://192.0.2.9:2379\"]}}\n";
    kjoin_cp_context s;
    unsigned writes = KJOIN_CP_WRITES_CERTS;
    assert_int_equal(kjoin_cluster_configuration_parse(external, strlen(external), &c, &err), KJOIN_OK);
    cx_for(&s, &c, 37, dir, "/nonexistent/pki", "192.0.2.2");
    assert_int_equal(kjoin_control_plane_check(&s, writes, &err), KJOIN_OK); /* an external etcd is carried */
    writes = KJOIN_CP_WRITES_SHARED | KJOIN_CP_WRITES_MANIFESTS;
    assert_int_equal(kjoin_control_plane_check(&s, writes, &err), KJOIN_OK);
    writes = 0; /* nothing written: nothing to refuse */
    assert_int_equal(kjoin_control_plane_check(&s, writes, &err), KJOIN_OK);
    /* The manifests' release and fields: only for the steps that write them. */
    assert_int_equal(kjoin_cluster_configuration_parse(manifests_yaml, strlen(manifests_yaml), &c, &err), KJOIN_OK);
    s.minor = 21, s.release = kjoin_release_of(21);
    writes = KJOIN_CP_WRITES_SHARED | KJOIN_CP_WRITES_CERTS | KJOIN_CP_WRITES_KUBECONFIGS;
    assert_int_equal(kjoin_control_plane_check(&s, writes, &err), KJOIN_OK);
    writes |= KJOIN_CP_WRITES_MANIFESTS;
    assert_int_equal(kjoin_control_plane_check(&s, writes, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "not of 1.21"));
    writes = KJOIN_CP_WRITES_ETCD;
    assert_int_equal(kjoin_control_plane_check(&s, writes, &err), KJOIN_E_USAGE);
    s.minor = 37, s.release = kjoin_release_of(37);
    assert_int_equal(kjoin_control_plane_check(&s, writes, &err), KJOIN_OK);
    const char *vols = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.37.2\n"
                       "imageRepository: r\napiServer: {extraEnvs: [{name: X, valueFrom: {fieldRef: {fieldPath: a}}}]}\n";
    assert_int_equal(kjoin_cluster_configuration_parse(vols, strlen(vols), &c, &err), KJOIN_OK);
    writes = KJOIN_CP_WRITES_SHARED | KJOIN_CP_WRITES_MANIFESTS;
    assert_int_equal(kjoin_control_plane_check(&s, writes, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "apiServer.extraEnvs[].valueFrom"));
    assert_int_equal(kjoin_cluster_configuration_parse(manifests_yaml, strlen(manifests_yaml), &c, &err), KJOIN_OK);
    /* A manifests directory others may write to: refused now, as the writer would. */
    snprintf(path, sizeof(path), "%s/manifests", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(chmod(path, 0770), 0);
    writes = KJOIN_CP_WRITES_SHARED | KJOIN_CP_WRITES_MANIFESTS;
    assert_int_not_equal(kjoin_control_plane_check(&s, writes, &err), KJOIN_OK);
    assert_non_null(strstr(err.msg, "manifests"));
    writes = KJOIN_CP_WRITES_SHARED; /* not written into by these steps */
    assert_int_equal(kjoin_control_plane_check(&s, writes, &err), KJOIN_OK);
    assert_int_equal(chmod(path, 0700), 0);
    /* A certificates directory that is a symlink. */
    snprintf(path, sizeof(path), "%s/pki", dir);
    assert_int_equal(symlink("/tmp", path), 0);
    snprintf(s.cert_dir, sizeof(s.cert_dir), "%s", path);
    assert_int_not_equal(kjoin_control_plane_check(&s, writes, &err), KJOIN_OK);
    writes = KJOIN_CP_WRITES_KUBECONFIGS;
    assert_int_equal(kjoin_control_plane_check(&s, writes, &err), KJOIN_OK);
    /* A directory not made yet, under one another user owns: refused now,
     * and nothing is made (the writer, too, would refuse before making it). */
    char user_dir[400], pki[500];
    snprintf(user_dir, sizeof(user_dir), "%s/home-of-someone", dir);
    assert_int_equal(mkdir(user_dir, 0755), 0);
    assert_int_equal(chown(user_dir, 65534, 65534), 0);
    snprintf(pki, sizeof(pki), "%s/pki", user_dir);
    snprintf(s.cert_dir, sizeof(s.cert_dir), "%s", pki);
    writes = KJOIN_CP_WRITES_SHARED;
    char *before = tu_tree_state(dir);
    assert_int_equal(kjoin_control_plane_check(&s, writes, &err), KJOIN_E_USAGE);
    tu_tree_unchanged(dir, before);
    assert_non_null(strstr(err.msg, "owned by uid 65534"));
    struct stat st;
    assert_int_not_equal(lstat(pki, &st), 0);
    kjoin_safedir d;
    assert_int_equal(kjoin_safedir_open(pki, KJOIN_SAFEDIR_CREATE, &d, &err), KJOIN_E_USAGE);
    assert_int_not_equal(lstat(pki, &st), 0);
    snprintf(s.cert_dir, sizeof(s.cert_dir), "%s/pki-ok", dir);
    assert_int_equal(kjoin_control_plane_check(&s, writes, &err), KJOIN_OK);
    /* An external etcd's files: never one of kjoin's records, and their
     * directories checked as the cluster's CA keys' are, before any is written. */
    static const char *const bad[] = {"/etc/kubernetes/kjoin-control-plane.json", "/etc/kubernetes/kjoin-join.json",
                                      "/srv/kjoin-join.json"};
    for (size_t i = 0; i < 3; i++) {
        char yaml[800];
        for (int field = 0; field < 3; field++) {
            snprintf(yaml, sizeof(yaml), "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n"
                     "kubernetesVersion: v1.37.2\nimageRepository: r\netcd: {external: {endpoints: "
                     "[\"https://192.0.2.9:2379\"], caFile: %s, certFile: %s, keyFile: %s}}\n",
                     field == 0 ? bad[i] : "/etc/etcd/ca.crt", field == 1 ? bad[i] : "/etc/etcd/c.crt",
                     field == 2 ? bad[i] : "/etc/etcd/c.key");
            assert_int_equal(kjoin_cluster_configuration_parse(yaml, strlen(yaml), &c, &err), KJOIN_OK);
            assert_int_equal(kjoin_control_plane_check(&s, KJOIN_CP_WRITES_SHARED, &err), KJOIN_E_USAGE);
            assert_non_null(strstr(err.msg, "names a record of kjoin's"));
            assert_int_equal(kjoin_control_plane_check(&s, KJOIN_CP_WRITES_CERTS, &err), KJOIN_OK); /* nothing of it written */
        }
    }
    char yaml[1400];
    snprintf(yaml, sizeof(yaml), "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n"
             "kubernetesVersion: v1.37.2\nimageRepository: r\netcd: {external: {endpoints: [\"https://192.0.2.9:2379\"], "
             "caFile: %s/etcd/ca.crt, certFile: /etc/etcd/c.crt, keyFile: /etc/etcd/c.key}}\n", user_dir);
    assert_int_equal(kjoin_cluster_configuration_parse(yaml, strlen(yaml), &c, &err), KJOIN_OK);
    assert_int_equal(kjoin_control_plane_check(&s, KJOIN_CP_WRITES_SHARED, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "owned by uid 65534"));
    snprintf(path, sizeof(path), "%s/etcd", user_dir);
    assert_int_not_equal(lstat(path, &st), 0);
    tu_rmtree(dir);
}

/* This machine's first IPv4 address that is not loopback ("" when none). */
static void own_address(char *out, size_t cap)
{
    struct ifaddrs *all = NULL;
    out[0] = '\0';
    if (getifaddrs(&all) != 0)
        return;
    for (struct ifaddrs *i = all; i && !out[0]; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
            getnameinfo(i->ifa_addr, sizeof(struct sockaddr_in), out, (socklen_t)cap, NULL, 0, NI_NUMERICHOST) == 0 &&
            kjoin_is_loopback(out))
            out[0] = '\0';
    freeifaddrs(all);
}

/* The advertise address is never loopback or this machine's route to
 * itself (a per-node load balancer, a VIP it holds): refused by name, and
 * the preflight's check flags a given one that is loopback or on no
 * interface. */
static void test_advertise_address(void **state)
{
    (void)state;
    char out[64], why[200], own[64], url[128];
    kjoin_err err;
    assert_int_equal(kjoin_local_address_for("https://127.0.0.1:6443", out, sizeof(out), &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "through this machine itself (loopback"));
    assert_int_equal(kjoin_local_address_for("https://127.0.0.53:6443/", out, sizeof(out), &err), KJOIN_E_USAGE);
    assert_int_equal(kjoin_local_address_for("https://[::1]:6443", out, sizeof(out), &err), KJOIN_E_USAGE);
    assert_int_equal(kjoin_local_address_for("https://localhost:6443", out, sizeof(out), &err), KJOIN_E_USAGE);
    assert_int_equal(kjoin_local_address_for("http://10.0.0.1:6443", out, sizeof(out), &err), KJOIN_E_USAGE);
    own_address(own, sizeof(own));
    if (own[0]) { /* a VIP this machine holds */
        snprintf(url, sizeof(url), "https://%s:6443", own);
        assert_int_equal(kjoin_local_address_for(url, out, sizeof(out), &err), KJOIN_E_USAGE);
        assert_non_null(strstr(err.msg, "its own address"));
        assert_int_equal(kjoin_advertise_address_check(own, why, sizeof(why)), KJOIN_OK);
    }
    const char *refused[] = {"127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1", "192.0.2.177", "host.example", ""};
    for (size_t i = 0; i < TU_LEN(refused); i++)
        if (kjoin_advertise_address_check(refused[i], why, sizeof(why)) != KJOIN_E_USAGE)
            fail_msg("accepted as an advertise address: %s", refused[i]);
    assert_int_equal(kjoin_advertise_address_check("127.0.0.1", why, sizeof(why)), KJOIN_E_USAGE);
    assert_non_null(strstr(why, "loopback"));
    assert_int_equal(kjoin_advertise_address_check("192.0.2.177", why, sizeof(why)), KJOIN_E_USAGE);
    assert_non_null(strstr(why, "none of this machine's interfaces"));
    assert_false(kjoin_is_loopback("128.0.0.1"));
    assert_false(kjoin_is_loopback("::2"));
    assert_false(kjoin_is_loopback("not an address"));
}

/* Paths as the user spelled them (valid to kubeadm): cleaned where they
 * are parsed, so that the record written from them reads back; a record
 * that would not read back is never written. */
static void test_paths_as_spelled(void **state)
{
    (void)state;
    kjoin_cluster_configuration c;
    kjoin_err err;
    char out[64];
    const char *yaml = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n"
                       "certificatesDir: //etc/kubernetes/./pki/\netcd: {local: {dataDir: /var/lib//etcd/}}\n";
    assert_int_equal(kjoin_cluster_configuration_parse(yaml, strlen(yaml), &c, &err), KJOIN_OK);
    assert_string_equal(c.certificates_dir, "/etc/kubernetes/pki");
    assert_string_equal(c.etcd_data_dir, "/var/lib/etcd");
    assert_true(kjoin_clean_path(c.certificates_dir) && kjoin_clean_path(c.etcd_data_dir));
    const char *refused[] = {"certificatesDir: /etc/../pki\n", "certificatesDir: pki\n", "certificatesDir: /\n",
                             "certificatesDir: //./\n", "etcd: {local: {dataDir: /var/lib/etcd/..}}\n",
                             "etcd: {local: {dataDir: etcd}}\n", "etcd: {local: {dataDir: /}}\n"};
    for (size_t i = 0; i < TU_LEN(refused); i++) {
        char doc[256];
        snprintf(doc, sizeof(doc), "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n%s", refused[i]);
        if (kjoin_cluster_configuration_parse(doc, strlen(doc), &c, &err) == KJOIN_OK)
            fail_msg("accepted: %s", refused[i]);
    }
    assert_true(kjoin_path_clean("/a/b/", out, sizeof(out)));
    assert_string_equal(out, "/a/b");
    assert_true(kjoin_path_clean("/a/./b//c", out, sizeof(out)));
    assert_string_equal(out, "/a/b/c");
    assert_false(kjoin_path_clean("/a/../b", out, sizeof(out)));
    assert_false(kjoin_path_clean("a/b", out, sizeof(out)));
    assert_false(kjoin_path_clean("/", out, sizeof(out)));
    assert_false(kjoin_path_clean("/0123456789/0123456789/0123456789/0123456789/0123456789/0123456789", out, 32));
    /* The record: never one that would not read back. */
    char *dir = tu_tmpdir(), path[4200];
    const char *unclean[] = {"/etc/kubernetes//pki/ca.crt"}, *sum[] = {
        "0000000000000000000000000000000000000000000000000000000000000000"};
    assert_int_equal(kjoin_cp_record_pending(dir, unclean, sum, 1, NULL, 0, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "would not read back"));
    snprintf(path, sizeof(path), "%s/%s", dir, KJOIN_NODE_STATE_NAME);
    struct stat st;
    assert_int_equal(stat(path, &st), -1);
    tu_rmtree(dir);
}

static void test_etcd_members_parse(void **state)
{
    (void)state;
    kjoin_etcd_member m[4];
    bool learner[4];
    size_t n;
    kjoin_err err;
    size_t len;
    char *seed = read_all("testdata/fuzz/etcd/members.json", &len);
    assert_int_equal(kjoin_etcd_members_parse(seed + 1, len - 1, m, learner, 4, &n, &err), KJOIN_OK);
    assert_int_equal(n, 2);
    assert_string_equal(m[0].name, "cp-1");
    assert_string_equal(m[1].peer_url, "https://127.0.0.12:2380");
    assert_true(!learner[0] && learner[1]);
    assert_string_equal(m[1].name, ""); /* a learner not started has no name */
    free(seed);
    const char *bad[] = {
        "", "[]", "{}", "{\"members\":{}}", "{\"members\":[{}]}",
        "{\"members\":[{\"ID\":\"x1\",\"name\":\"a\",\"peerURLs\":[\"https://a:2380\"]}]}",
        "{\"members\":[{\"ID\":\"1\",\"name\":\"a\",\"peerURLs\":[\"http://a:2380\"]}]}",
        "{\"members\":[{\"ID\":\"1\",\"name\":\"a,b=https://evil:2380\",\"peerURLs\":[\"https://a:2380\"]}]}",
        "{\"members\":[{\"ID\":\"1\",\"name\":\"a\",\"peerURLs\":[\"https://a:2380,https://evil:2380\"]}]}",
        "{\"members\":[{\"ID\":\"1\",\"name\":\"a\",\"peerURLs\":[]}]}",
        "{\"members\":[]} {}"};
    for (size_t i = 0; i < TU_LEN(bad); i++)
        if (kjoin_etcd_members_parse(bad[i], strlen(bad[i]), m, learner, 4, &n, &err) != KJOIN_E_API)
            fail_msg("accepted: %s", bad[i]);
}

/* What etcd says of a member (its status), what the kubelet says of its
 * Pod, and etcd's fsync figures: each read as untrusted. */
static void test_etcd_status_parse(void **state)
{
    (void)state;
    kjoin_etcd_status st;
    kjoin_err err;
    size_t len;
    char *seed = read_all("testdata/fuzz/etcd/status.json", &len);
    assert_int_equal(kjoin_etcd_status_parse(seed + 1, len - 1, &st, &err), KJOIN_OK);
    assert_string_equal(st.member_id, "1897306993867916368");
    assert_string_equal(st.leader_id, "1897306993867916368");
    assert_true(st.raft_index == 4 && st.applied_index == 3 && !st.learner);
    free(seed);
    const char *learner = "{\"header\":{\"member_id\":\"7\"},\"raftIndex\":\"90\",\"raftAppliedIndex\":\"12\","
                          "\"isLearner\":true}";
    assert_int_equal(kjoin_etcd_status_parse(learner, strlen(learner), &st, &err), KJOIN_OK);
    assert_true(st.learner && st.applied_index == 12 && st.raft_index == 90 && !*st.leader_id); /* no leader known */
    const char *old = "{\"header\":{\"member_id\":\"7\"},\"raftIndex\":90,\"leader\":\"8\"}"; /* etcd 3.3: no applied */
    assert_int_equal(kjoin_etcd_status_parse(old, strlen(old), &st, &err), KJOIN_OK);
    assert_true(st.applied_index == 90 && !strcmp(st.leader_id, "8"));
    const char *bad[] = {"", "[]", "{}", "{\"header\":{}}", "{\"header\":{\"member_id\":\"0\"},\"raftIndex\":\"1\"}",
                         "{\"header\":{\"member_id\":\"-7\"},\"raftIndex\":\"1\"}",
                         "{\"header\":{\"member_id\":\"7\"},\"raftIndex\":\"1e3\"}",
                         "{\"header\":{\"member_id\":\"7\"},\"raftIndex\":\"99999999999999999999999\"}",
                         "{\"header\":{\"member_id\":\"7\"},\"raftIndex\":\"18446744073709551616\"}",
                         "{\"header\":{\"member_id\":\"7\"},\"raftIndex\":\"1\"} {}",
                         "{\"header\":\"7\",\"raftIndex\":\"1\"}"};
    for (size_t i = 0; i < TU_LEN(bad); i++)
        if (kjoin_etcd_status_parse(bad[i], strlen(bad[i]), &st, &err) != KJOIN_E_API)
            fail_msg("accepted: %s", bad[i]);
    /* A leader's ID that is no number is no leader: the status still reads. */
    const char *odd = "{\"header\":{\"member_id\":\"7\"},\"raftIndex\":\"1\",\"leader\":\"x\"}";
    assert_int_equal(kjoin_etcd_status_parse(odd, strlen(odd), &st, &err), KJOIN_OK);
    assert_string_equal(st.leader_id, "");
}

static void test_pod_not_running(void **state)
{
    (void)state;
    char why[200];
    size_t len;
    char *seed = read_all("testdata/fuzz/etcd/pod-pull.json", &len);
    assert_true(kjoin_pod_not_running(seed + 1, len - 1, "etcd", why, sizeof(why)));
    assert_non_null(strstr(why, "ImagePullBackOff: Back-off pulling image \"kjoin.test/etcd:3.6.5-0\""));
    free(seed);
    const char *crash = "{\"status\":{\"containerStatuses\":[{\"name\":\"other\",\"state\":{\"running\":{}}},"
                        "{\"name\":\"etcd\",\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\"}},"
                        "\"lastState\":{\"terminated\":{\"reason\":\"Error\",\"exitCode\":1,\"message\":\"bad\\u001b[31m"
                        " flag abcdef.0123456789abcdef\"}}}]}}";
    assert_true(kjoin_pod_not_running(crash, strlen(crash), "etcd", why, sizeof(why)));
    /* the container's own, its last end; a control character and a token's secret never reach the log */
    assert_string_equal(why, "CrashLoopBackOff (it last ended: Error, exit code 1: bad?[31m flag abcdef.****************)");
    const char *running = "{\"status\":{\"containerStatuses\":[{\"name\":\"etcd\",\"state\":{\"running\":{}}}]}}";
    assert_false(kjoin_pod_not_running(running, strlen(running), "etcd", why, sizeof(why)));
    assert_string_equal(why, "");
    const char *pending = "{\"status\":{\"phase\":\"Pending\"}}";
    assert_true(kjoin_pod_not_running(pending, strlen(pending), "etcd", why, sizeof(why)));
    assert_string_equal(why, "the Pod is Pending and its container etcd has no status yet");
    const char *ended = "{\"status\":{\"containerStatuses\":[{\"name\":\"etcd\",\"state\":{\"terminated\":"
                        "{\"exitCode\":2}}}]}}";
    assert_true(kjoin_pod_not_running(ended, strlen(ended), "etcd", why, sizeof(why)));
    assert_string_equal(why, "terminated, exit code 2");
    /* Not a Pod: nothing said. A long message is cut to the cap. */
    const char *bad[] = {"", "[]", "{\"status\":[]} {}", "{\"status\":{\"containerStatuses\":{}}} x"};
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        bool said = kjoin_pod_not_running(bad[i], strlen(bad[i]), "etcd", why, sizeof(why));
        if (said && i != 3)
            fail_msg("read: %s", bad[i]);
    }
    char big[4000];
    snprintf(big, sizeof(big), "{\"status\":{\"containerStatuses\":[{\"name\":\"etcd\",\"state\":{\"waiting\":"
             "{\"reason\":\"ErrImagePull\",\"message\":\"%03000d\"}}}]}}", 0);
    assert_true(kjoin_pod_not_running(big, strlen(big), "etcd", why, sizeof(why)));
    assert_int_equal(strlen(why), sizeof(why) - 1);
}

static void test_etcd_fsync_mean(void **state)
{
    (void)state;
    size_t len;
    char *seed = read_all("testdata/fuzz/etcd/metrics.txt", &len);
    double ms = kjoin_etcd_fsync_mean_ms(seed + 1, len - 1);
    assert_true(ms > 39.9 && ms < 40.1); /* 0.24 s over 6 */
    free(seed);
    const char *none[] = {"", "etcd_disk_wal_fsync_duration_seconds_sum 1\n",
                          "etcd_disk_wal_fsync_duration_seconds_sum 1\netcd_disk_wal_fsync_duration_seconds_count 0\n",
                          "etcd_disk_wal_fsync_duration_seconds_sum -1\netcd_disk_wal_fsync_duration_seconds_count 2\n",
                          "etcd_disk_wal_fsync_duration_seconds_sum x\netcd_disk_wal_fsync_duration_seconds_count 2\n",
                          "etcd_disk_wal_fsync_duration_seconds_sum NaN\netcd_disk_wal_fsync_duration_seconds_count 2",
                          "etcd_disk_wal_fsync_duration_seconds_sum{a=\"b\"} 1\netcd_disk_wal_fsync_duration_seconds_count 2"};
    for (size_t i = 0; i < TU_LEN(none); i++)
        if (kjoin_etcd_fsync_mean_ms(none[i], strlen(none[i])) != -1)
            fail_msg("read: %s", none[i]);
    /* the last line without its newline, a figure in exponent form */
    const char *last = "etcd_disk_wal_fsync_duration_seconds_count 4\netcd_disk_wal_fsync_duration_seconds_sum 2e-2";
    double five = kjoin_etcd_fsync_mean_ms(last, strlen(last));
    assert_true(five > 4.999 && five < 5.001);
}

/* The line said of a started member, and when it counts as a stall. */
static void test_etcd_progress_line(void **state)
{
    (void)state;
    kjoin_etcd_status mine = {.applied_index = 45}, leader = {.raft_index = 90};
    char line[200];
    uint64_t last = 30;
    assert_false(kjoin_etcd_progress_line(&mine, &leader, NULL, 15, line, sizeof(line))); /* the first line */
    assert_string_equal(line, "The new member has applied 45 of the leader's 90 entries (50%, 15 s)");
    assert_false(kjoin_etcd_progress_line(&mine, &leader, &last, 30, line, sizeof(line))); /* moved since */
    last = 45;
    assert_true(kjoin_etcd_progress_line(&mine, &leader, &last, 45, line, sizeof(line))); /* stood still, behind */
    mine.applied_index = 90;
    last = 90;
    assert_false(kjoin_etcd_progress_line(&mine, &leader, &last, 60, line, sizeof(line))); /* caught up: no stall */
    assert_string_equal(line, "The new member has applied 90 of the leader's 90 entries (100%, 60 s)");
    /* a status from another moment: ahead of the leader's log is 100%, an empty log no division by zero */
    mine.applied_index = 95;
    assert_false(kjoin_etcd_progress_line(&mine, &leader, &last, 75, line, sizeof(line)));
    assert_non_null(strstr(line, "(100%,"));
    leader.raft_index = 0;
    mine.applied_index = 0;
    last = 0;
    assert_false(kjoin_etcd_progress_line(&mine, &leader, &last, 90, line, sizeof(line)));
    assert_non_null(strstr(line, "applied 0 of the leader's 0 entries (0%, 90 s)"));
    /* the largest indices etcd can write */
    mine.applied_index = UINT64_MAX - 1;
    leader.raft_index = UINT64_MAX;
    assert_false(kjoin_etcd_progress_line(&mine, &leader, NULL, 1, line, sizeof(line)));
    assert_non_null(strstr(line, "(99%,"));
}

/* A member that never started, removed again: the record forgets it and
 * takes back its etcd.yaml, but an etcd.yaml changed since stays. */
static void test_record_forget_etcd(void **state)
{
    (void)state;
    kjoin_err err;
    char *dir = tu_tmpdir(), path[4200];
    bool removed, found;
    kjoin_cp_record *r = malloc(sizeof(*r));
    tu_write(dir, "etcd.yaml", "x");
    tu_write(dir, "admin.conf", "x");
    snprintf(path, sizeof(path), "%s/etcd.yaml", dir);
    char admin[4200];
    snprintf(admin, sizeof(admin), "%s/admin.conf", dir);
    const char *sum = "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881";
    const char *paths[] = {admin, path}, *sums[] = {sum, sum};
    assert_int_equal(kjoin_cp_record_pending(dir, paths, sums, 2, NULL, 0, &err), KJOIN_OK);
    char data[4200];
    snprintf(data, sizeof(data), "%s/etcd-data", dir);
    assert_int_equal(mkdir(data, 0700), 0);
    assert_int_equal(kjoin_cp_record_etcd(dir, "https://10.0.0.2:2380", "42", "/etc/kubernetes/pki", data, true, &err),
                     KJOIN_OK);
    assert_int_equal(kjoin_cp_record_forget_etcd(dir, path, &removed, &err), KJOIN_OK);
    assert_true(removed && access(path, F_OK) != 0 && access(admin, F_OK) == 0);
    assert_int_equal(access(data, F_OK), -1); /* the empty data directory the join made */
    assert_int_equal(kjoin_cp_record_read(dir, r, &found, &err), KJOIN_OK);
    /* the rest of the join's record as it was */
    assert_true(found && r->written.n_files == 1 && !strcmp(r->written.files[0].path, admin) && !*r->etcd_peer &&
                !*r->etcd_id);
    /* Changed since it was written: left, and said. */
    tu_write(dir, "etcd.yaml", "y");
    const char *mine[] = {path};
    assert_int_equal(kjoin_cp_record_pending(dir, mine, sums, 1, NULL, 0, &err), KJOIN_OK);
    assert_int_equal(kjoin_cp_record_forget_etcd(dir, path, &removed, &err), KJOIN_E_OUTPUT);
    assert_false(removed);
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(kjoin_cp_record_read(dir, r, &found, &err), KJOIN_OK);
    assert_int_equal(r->written.n_files, 2);
    tu_rmtree(dir);
    free(r);
}

static void test_etcd_endpoints_parse(void **state)
{
    (void)state;
    char urls[4][300];
    size_t n;
    const char *two = "{\"items\":[{\"metadata\":{\"annotations\":{\"kubeadm.kubernetes.io/etcd.advertise-client-urls\":"
                      "\"https://10.0.0.1:2379\"}}},{\"metadata\":{\"annotations\":{}}},{\"metadata\":{\"annotations\":"
                      "{\"kubeadm.kubernetes.io/etcd.advertise-client-urls\":\"http://10.0.0.3:2379\"}}}]}";
    assert_int_equal(kjoin_etcd_endpoints_parse(two, strlen(two), urls, 4, &n), 3);
    assert_int_equal(n, 1); /* the unannotated Pod and the plain-HTTP URL are no endpoints */
    assert_string_equal(urls[0], "https://10.0.0.1:2379");
    assert_int_equal(kjoin_etcd_endpoints_parse("{\"items\":7}", 11, urls, 4, &n), 0);
    assert_int_equal(kjoin_etcd_endpoints_parse("not json", 8, urls, 4, &n), 0);
    assert_int_equal(n, 0);
}

static kjoin_code etcd_for(const char *yaml, const char *addr, int minor, const kjoin_etcd_member *ms, size_t n,
                           char **out, kjoin_err *err)
{
    kjoin_cluster_configuration c;
    kjoin_code rc = kjoin_cluster_configuration_parse(yaml, strlen(yaml), &c, err);
    if (rc)
        return rc;
    kjoin_cp_context cx;
    cx_for(&cx, &c, minor, "/etc/kubernetes", "/etc/kubernetes/pki", addr);
    return kjoin_etcd_manifest_make(&cx, ms, n, out, err);
}

static void test_etcd_manifest(void **state)
{
    (void)state;
    char *out;
    kjoin_err err;
    const kjoin_etcd_member ms[] = {{"cp-1", "https://10.0.0.1:2380", "1"}, {"cp-2", "https://10.0.0.2:2380", "2"}};
    const char *yaml = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.37.2\n"
                       "imageRepository: r.example\netcd: {local: {dataDir: /data/etcd, extraArgs: "
                       "[{name: quota-backend-bytes, value: \"8589934592\"}]}}\n";
    assert_int_equal(etcd_for(yaml, "10.0.0.2", 37, ms, 2, &out, &err), KJOIN_OK);
    in_order(out, (const char *const[]){"kubeadm.kubernetes.io/etcd.advertise-client-urls: \"https://10.0.0.2:2379\"",
                                        "- etcd", "--advertise-client-urls=https://10.0.0.2:2379", "--data-dir=/data/etcd",
                                        "--feature-gates=InitialCorruptCheck=true",
                                        "--initial-cluster=cp-1=https://10.0.0.1:2380,cp-2=https://10.0.0.2:2380",
                                        "--initial-cluster-state=existing",
                                        "--listen-client-urls=https://127.0.0.1:2379,https://10.0.0.2:2379",
                                        "--listen-metrics-urls=http://127.0.0.1:2381", "--name=cp-2",
                                        "--watch-progress-notify-interval=5s", "--quota-backend-bytes=8589934592",
                                        "r.example/etcd:3.7.0-0", "path: /livez", "scheme: HTTP", "containerPort: 2381",
                                        "path: /readyz", "memory: \"100Mi\"", "path: /readyz", "mountPath: /data/etcd",
                                        "mountPath: /etc/kubernetes/pki/etcd", NULL});
    assert_null(strstr(out, "readOnly"));
    free(out);
    /* From 1.34, etcd's own version decides the two flags' spelling, as
     * kubeadm's version.ParseSemantic and AtLeast("3.6.0") read the tag. */
    static const struct {
        const char *tag;
        bool plain;
    } tags[] = {{"3.5.24-0", false}, {"3.6.0-0", false}, {"3.6.0", true},  {"v3.6.1", true},
                {"3.6.5-0", true},   {"4.0.0", true},    {"3.10.0", true}, {"latest", false}};
    for (size_t i = 0; i < TU_LEN(tags); i++) {
        char tagged[400];
        snprintf(tagged, sizeof(tagged), "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n"
                 "kubernetesVersion: v1.34.4\nimageRepository: r\netcd: {local: {imageTag: \"%s\"}}\n", tags[i].tag);
        assert_int_equal(etcd_for(tagged, "10.0.0.2", 34, NULL, 0, &out, &err), KJOIN_OK);
        if ((strstr(out, "--feature-gates=InitialCorruptCheck=true") != NULL) != tags[i].plain ||
            (strstr(out, "--experimental-watch-progress-notify-interval=5s") != NULL) == tags[i].plain)
            fail_msg("etcd %s: the flags are not kubeadm 1.34's", tags[i].tag);
        free(out);
    }
    /* Before 1.34 the experimental spelling whatever the tag; before 1.25 no
     * watch-progress flag, before 1.22 no corruption check; the probes of each. */
    static const struct {
        int minor;
        const char *want, *not;
    } eras[] = {{33, "--experimental-initial-corrupt-check=true", "--feature-gates"},
                {25, "/health?exclude=NOSPACE&serializable=true", "/livez"},
                {25, "/health?serializable=false", "readinessProbe"},
                {24, "--experimental-initial-corrupt-check=true", "watch-progress"},
                {24, "path: /health\n", "serializable"},
                {20, "ephemeral-storage", "corrupt-check"},
                {31, "path: /livez", "/health"}};
    for (size_t i = 0; i < TU_LEN(eras); i++) {
        char v[300];
        snprintf(v, sizeof(v), "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n"
                 "kubernetesVersion: v1.%d.0\nimageRepository: r\n", eras[i].minor);
        assert_int_equal(etcd_for(v, "10.0.0.2", eras[i].minor, NULL, 0, &out, &err), KJOIN_OK);
        if (!strstr(out, eras[i].want) || strstr(out, eras[i].not))
            fail_msg("1.%d's etcd.yaml: want %s, not %s", eras[i].minor, eras[i].want, eras[i].not);
        free(out);
    }
    /* A member without a name (a concurrent join's, a learner not started
     * yet): named by its ID in hex, as kubeadm names it, never "=https://". */
    const kjoin_etcd_member unnamed[] = {{"cp-1", "https://10.0.0.1:2380", "1"},
                                         {"", "https://10.0.0.3:2380", "12345678901234567890"},
                                         {"cp-2", "https://10.0.0.2:2380", "7"}};
    assert_int_equal(etcd_for(yaml, "10.0.0.2", 37, unnamed, 3, &out, &err), KJOIN_OK);
    assert_non_null(strstr(out, "--initial-cluster=cp-1=https://10.0.0.1:2380,ab54a98ceb1f0ad2=https://10.0.0.3:2380,"
                                "cp-2=https://10.0.0.2:2380"));
    assert_null(strstr(out, ",=https://"));
    free(out);
    /* 1.20: no learner-era flags, /health, ephemeral storage; a member of its own; IPv6. */
    const char *old = "apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\nkubernetesVersion: v1.20.2\n"
                      "imageRepository: k8s.example\netcd: {local: {imageTag: 3.4.99-0}}\n";
    assert_int_equal(etcd_for(old, "fd00::2", 20, NULL, 0, &out, &err), KJOIN_OK);
    in_order(out, (const char *const[]){"--initial-cluster=cp-2=https://[fd00::2]:2380",
                                        "--listen-client-urls=https://[::1]:2379,https://[fd00::2]:2379",
                                        "--listen-metrics-urls=http://[::1]:2381", "k8s.example/etcd:3.4.99-0",
                                        "ephemeral-storage", "path: /health", "port: 2381", NULL});
    assert_null(strstr(out, "initial-cluster-state"));
    assert_null(strstr(out, "feature-gates"));
    assert_null(strstr(out, "readinessProbe"));
    free(out);
    /* What etcd's manifest cannot carry yet. */
    const char *metrics = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.37.2\n"
                          "imageRepository: r\netcd: {local: {extraArgs: [{name: listen-metrics-urls, value: http://x}]}}\n";
    assert_int_equal(etcd_for(metrics, "10.0.0.2", 37, ms, 2, &out, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "listen-metrics-urls"));
}


static void test_cp_record_parse(void **state)
{
    (void)state;
    kjoin_cp_record *r = malloc(sizeof(*r));
    kjoin_err err;
    size_t len;
    char *seed = read_all("testdata/fuzz/etcd/record.json", &len);
    assert_int_equal(kjoin_cp_record_parse(seed + 1, len - 1, r, &err), KJOIN_OK);
    assert_int_equal(r->written.n_files, 1);
    assert_string_equal(r->etcd_id, "8632168133645087387");
    assert_true(r->data_dir_made);
    free(seed);
    seed = read_all("testdata/fuzz/etcd/record-dirs.json", &len);
    assert_int_equal(kjoin_cp_record_parse(seed + 1, len - 1, r, &err), KJOIN_OK);
    assert_int_equal(r->written.n_dirs, 4);
    assert_string_equal(r->written.dirs[2], "/etc/kubernetes/pki/etcd");
    free(seed);
    /* The one format's name for them, as the node's record has it. */
    const char *one = "{\"kind\":\"KjoinControlPlaneRecord\",\"files\":[],\"createdDirs\":[\"/etc/kubernetes/pki\"]}";
    assert_int_equal(kjoin_cp_record_parse(one, strlen(one), r, &err), KJOIN_OK);
    assert_int_equal(r->written.n_dirs, 1);
    const char *sum = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    char bad[14][600];
    snprintf(bad[0], 600, "{\"kind\":\"KjoinJoinRecord\",\"files\":[]}");
    snprintf(bad[1], 600, "{\"kind\":\"KjoinControlPlaneRecord\",\"files\":[{\"path\":\"etc/x\",\"sha256\":\"%s\"}]}", sum);
    snprintf(bad[2], 600, "{\"kind\":\"KjoinControlPlaneRecord\",\"files\":[{\"path\":\"/etc/../x\",\"sha256\":\"%s\"}]}", sum);
    snprintf(bad[3], 600, "{\"kind\":\"KjoinControlPlaneRecord\",\"files\":[{\"path\":\"/etc/x\",\"sha256\":\"zz\"}]}");
    snprintf(bad[4], 600, "{\"kind\":\"KjoinControlPlaneRecord\",\"files\":[],\"etcd\":{\"peerURL\":\"http://a:2380\","
                          "\"memberID\":\"1\",\"certificatesDir\":\"/p\",\"dataDir\":\"/d\"}}");
    snprintf(bad[5], 600, "{\"kind\":\"KjoinControlPlaneRecord\",\"files\":[],\"etcd\":{\"peerURL\":\"https://a:2380\","
                          "\"memberID\":\"1\",\"certificatesDir\":\"/p\",\"dataDir\":\"/\"}}");
    snprintf(bad[6], 600, "{\"kind\":\"KjoinControlPlaneRecord\",\"files\":[],\"etcd\":{\"peerURL\":\"https://a:2380\","
                          "\"memberID\":\"0x1\",\"certificatesDir\":\"/p\",\"dataDir\":\"/d\"}}");
    snprintf(bad[7], 600, "{\"kind\":\"KjoinControlPlaneRecord\",\"files\":[]} x");
    /* A path that names its directory, or none, is no file the join wrote. */
    snprintf(bad[8], 600, "{\"kind\":\"KjoinControlPlaneRecord\",\"files\":[{\"path\":\"/etc/.\",\"sha256\":\"%s\"}]}", sum);
    snprintf(bad[9], 600, "{\"kind\":\"KjoinControlPlaneRecord\",\"files\":[{\"path\":\"/etc/x/\",\"sha256\":\"%s\"}]}", sum);
    /* Directories: clean absolute paths, never the root, a list of at most sixteen. */
    snprintf(bad[10], 600, "{\"kind\":\"KjoinControlPlaneRecord\",\"files\":[],\"dirs\":[\"/\"]}");
    snprintf(bad[11], 600, "{\"kind\":\"KjoinControlPlaneRecord\",\"files\":[],\"dirs\":[\"etc/kubernetes\"]}");
    snprintf(bad[12], 600, "{\"kind\":\"KjoinControlPlaneRecord\",\"files\":[],\"dirs\":\"/etc/kubernetes\"}");
    snprintf(bad[13], 600, "{\"kind\":\"KjoinControlPlaneRecord\",\"files\":[],\"createdDirs\":[\"/a\",\"/b\",\"/c\","
                           "\"/d\",\"/e\",\"/f\",\"/g\",\"/h\",\"/i\",\"/j\",\"/k\",\"/l\",\"/m\",\"/n\",\"/o\",\"/p\",\"/q\"]}");
    for (size_t i = 0; i < 14; i++)
        if (kjoin_cp_record_parse(bad[i], strlen(bad[i]), r, &err) != KJOIN_E_USAGE)
            fail_msg("accepted: %s", bad[i]);
    /* Written and read back: a file's digest, the member. */
    char *dir = tu_tmpdir(), path[4200];
    tu_write(dir, "admin.conf", "x");
    snprintf(path, sizeof(path), "%s/admin.conf", dir);
    const char *paths[] = {path}, *sums[] = {"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"};
    assert_int_equal(kjoin_cp_record_pending(dir, paths, sums, 1, NULL, 0, &err), KJOIN_OK);
    assert_int_equal(kjoin_cp_record_etcd(dir, "https://10.0.0.2:2380", "42", "/etc/kubernetes/pki", "/var/lib/etcd",
                                          true, &err), KJOIN_OK);
    bool found;
    assert_int_equal(kjoin_cp_record_read(dir, r, &found, &err), KJOIN_OK);
    assert_true(found && r->written.n_files == 1 && !strcmp(r->etcd_id, "42") && r->data_dir_made);
    assert_string_equal(r->written.files[0].sha256, "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881");
    snprintf(path, sizeof(path), "%s/%s", dir, KJOIN_NODE_STATE_NAME); /* the join's one record */
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    snprintf(path, sizeof(path), "%s/%s", dir, KJOIN_CP_LEGACY_RECORD_NAME);
    assert_int_equal(stat(path, &st), -1);
    /* The directories a step is about to make (those missing, and their
     * missing parents): recorded once each; reset removes them deepest
     * first when empty, and names one that holds another's file. */
    char made[3][4200];
    snprintf(made[0], sizeof(made[0]), "%s/pki", dir);
    snprintf(made[1], sizeof(made[1]), "%s/pki/etcd", dir);
    snprintf(made[2], sizeof(made[2]), "%s/manifests", dir);
    const char *dirs[] = {made[1], made[2], made[1]};
    assert_int_equal(kjoin_cp_record_pending(dir, NULL, NULL, 0, dirs, 3, &err), KJOIN_OK);
    assert_int_equal(kjoin_cp_record_read(dir, r, &found, &err), KJOIN_OK);
    assert_int_equal(r->written.n_dirs, 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(mkdir(made[i], 0700), 0);
    tu_write(made[2], "theirs.yaml", "x");
    kjoin_cp_reset_spec rs = {.join = &test_join, .kubernetes_dir = dir};
    kjoin_cp_reset_result *res = calloc(1, sizeof(*res));
    assert_int_equal(kjoin_cp_reset_files(&rs, res, NULL, &err), KJOIN_OK);
    assert_int_equal(stat(made[0], &st), -1);
    assert_int_equal(stat(made[2], &st), 0);
    assert_int_equal(res->n_left, 1);
    assert_non_null(strstr(res->left[0], "manifests: not empty: it holds files the join did not make"));
    free(res);
    tu_rmtree(dir);
    free(r);
}


static void test_control_plane_endpoints(void **state)
{
    (void)state;
    char *out[3], urls[3][320];
    size_t len[3];
    kjoin_err err;
    char *env[] = {NULL};
    /* From the manifests kjoin makes: the cluster's extra bind address and port win. */
    const char *yaml = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.37.2\n"
                       "imageRepository: r\ncontrollerManager: {extraArgs: [{name: secure-port, value: \"11257\"}]}\n"
                       "scheduler: {extraArgs: [{name: bind-address, value: \"::1\"}]}\n";
    assert_int_equal(manifests_for(yaml, "192.0.2.2", 37, env, out, &err), KJOIN_OK);
    for (int i = 0; i < 3; i++)
        len[i] = strlen(out[i]);
    assert_int_equal(kjoin_control_plane_endpoints((const char *const *)out, len, "192.0.2.9", urls, &err), KJOIN_OK);
    assert_string_equal(urls[0], "https://192.0.2.2:6443/livez");
    assert_string_equal(urls[1], "https://127.0.0.1:11257/healthz");
    assert_string_equal(urls[2], "https://[::1]:10259/livez");
    free3(out);
    /* 1.20's scheduler: /healthz, as its probe. */
    const char *old = "apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\nkubernetesVersion: v1.20.2\n"
                      "imageRepository: r\n";
    assert_int_equal(manifests_for(old, "192.0.2.2", 20, env, out, &err), KJOIN_OK);
    for (int i = 0; i < 3; i++)
        len[i] = strlen(out[i]);
    assert_int_equal(kjoin_control_plane_endpoints((const char *const *)out, len, "192.0.2.9", urls, &err), KJOIN_OK);
    assert_string_equal(urls[2], "https://127.0.0.1:10259/healthz");
    /* Not the component's Pod; a port that is none. */
    const char *bad[3] = {out[1], out[1], out[2]};
    size_t blen[3] = {len[1], len[1], len[2]};
    assert_int_equal(kjoin_control_plane_endpoints(bad, blen, "192.0.2.9", urls, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "no container's command starts with kube-apiserver"));
    const char *port = "spec: {containers: [{command: [kube-apiserver, \"--secure-port=64x\"]}]}";
    const char *ports[3] = {port, out[1], out[2]};
    size_t plen[3] = {strlen(port), len[1], len[2]};
    assert_int_equal(kjoin_control_plane_endpoints(ports, plen, "192.0.2.9", urls, &err), KJOIN_E_USAGE);
    free3(out);
}

/* upload-certs' paths come from this node's kubeadm configuration file: its
 * ClusterConfiguration among other documents, kubeadm's defaults without
 * one; a second one, or a malformed file, refused. */
static void test_cluster_configuration_from_file(void **state)
{
    (void)state;
    kjoin_cluster_configuration c;
    kjoin_err err;
    const char *both = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\nnodeRegistration: {name: cp-1}\n"
                       "---\napiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\ncertificatesDir: /srv/pki\n"
                       "etcd:\n  external:\n    endpoints: [\"https://192.0.2.9:2379\"]\n    caFile: /srv/etcd/ca.crt\n"
                       "    certFile: /srv/etcd/c.crt\n    keyFile: /srv/etcd/c.key\n---\n";
    assert_int_equal(kjoin_cluster_configuration_from_file(both, strlen(both), &c, &err), KJOIN_OK);
    assert_string_equal(c.certificates_dir, "/srv/pki");
    assert_true(c.external_etcd);
    assert_string_equal(c.external_key_file, "/srv/etcd/c.key");
    const char *init_only = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\n";
    assert_int_equal(kjoin_cluster_configuration_from_file(init_only, strlen(init_only), &c, &err), KJOIN_OK);
    assert_string_equal(c.certificates_dir, "");
    assert_false(c.external_etcd);
    assert_int_equal(kjoin_cluster_configuration_from_file("", 0, &c, &err), KJOIN_OK);
    static const char *const refused[] = {
        "kind: ClusterConfiguration\napiVersion: kubeadm.k8s.io/v1beta4\n---\nkind: ClusterConfiguration\n"
        "apiVersion: kubeadm.k8s.io/v1beta4\n",
        "kind: ClusterConfiguration\napiVersion: kubeadm.k8s.io/v1beta4\ncertificatesDir: ../pki\n",
        "kind: ClusterConfiguration\napiVersion: v1\n",
        "kind: [ClusterConfiguration\n",
        "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\netcd: {external: {caFile: /a, certFile: /b}}\n",
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
        if (kjoin_cluster_configuration_from_file(refused[i], strlen(refused[i]), &c, &err) == KJOIN_OK)
            fail_msg("accepted: %s", refused[i]);
}

/* upload-certs' side: a new key prints as kubeadm's and parses back; what
 * is sealed opens with that key alone, each time under a new nonce. */
static void test_encrypt_for_download(void **state)
{
    (void)state;
    kjoin_certificate_key k, again, other;
    kjoin_err err;
    char hex[65];
    assert_int_equal(kjoin_certificate_key_generate(&k, &err), KJOIN_OK);
    assert_int_equal(kjoin_certificate_key_generate(&other, &err), KJOIN_OK);
    assert_memory_not_equal(k.bytes, other.bytes, sizeof(k.bytes));
    kjoin_certificate_key_format(&k, hex);
    assert_int_equal(strlen(hex), 64);
    assert_int_equal(strspn(hex, "0123456789abcdef"), 64);
    assert_int_equal(kjoin_certificate_key_parse(hex, &again, &err), KJOIN_OK);
    assert_memory_equal(again.bytes, k.bytes, sizeof(k.bytes));
    const char *text = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n";
    unsigned char *a = NULL, *b = NULL, *plain = NULL;
    size_t na = 0, nb = 0, len = 0;
    assert_int_equal(kjoin_kubeadm_certs_encrypt(&k, (const unsigned char *)text, strlen(text), &a, &na, &err), KJOIN_OK);
    assert_int_equal(kjoin_kubeadm_certs_encrypt(&k, (const unsigned char *)text, strlen(text), &b, &nb, &err), KJOIN_OK);
    assert_int_equal(na, 12 + strlen(text) + 16);
    assert_memory_not_equal(a, b, 12); /* a nonce of its own each time */
    assert_int_equal(kjoin_kubeadm_certs_decrypt(&k, a, na, &plain, &len, &err), KJOIN_OK);
    assert_int_equal(len, strlen(text));
    assert_memory_equal(plain, text, len);
    kjoin_free_wiped(plain, len);
    assert_int_equal(kjoin_kubeadm_certs_decrypt(&other, a, na, &plain, &len, &err), KJOIN_E_TRUST);
    a[na - 1] ^= 1;
    assert_int_equal(kjoin_kubeadm_certs_decrypt(&k, a, na, &plain, &len, &err), KJOIN_E_TRUST);
    free(a), free(b);
    /* an empty file seals to its tag alone; more than 1 MiB is refused */
    assert_int_equal(kjoin_kubeadm_certs_encrypt(&k, (const unsigned char *)"", 0, &a, &na, &err), KJOIN_OK);
    assert_int_equal(na, 28);
    free(a);
    static unsigned char big[(1 << 20) + 1];
    assert_int_equal(kjoin_kubeadm_certs_encrypt(&k, big, sizeof(big), &a, &na, &err), KJOIN_E_USAGE);
    assert_null(a);
    kjoin_certificate_key_clear(&k);
}

/* A stage's own bound (kubeadm's timeouts.*) ends it when it ends first. */
static void test_stage_left(void **state)
{
    (void)state;
    kjoin_join_context join = {.deadline_ms = kjoin_now_ms() + 60000};
    kjoin_cp_context cx = {.join = &join};
    bool bounded = true;
    int64_t left = kjoin_cp_stage_left(&cx, 0, &bounded);
    assert_false(bounded);
    assert_true(left > 59000 && left <= 60000);
    assert_int_equal(kjoin_cp_stage_left(&cx, 5000, &bounded), 5000);
    assert_true(bounded);
    left = kjoin_cp_stage_left(&cx, 120000, &bounded); /* the join's deadline first */
    assert_false(bounded);
    assert_true(left <= 60000);
    assert_int_equal(kjoin_cp_stage_left(&cx, 1, NULL), 1);
}

/* The join's record file as a join writes it: the node's alone may read it. */
static void put_record(const char *dir, const char *text)
{
    char path[4200];
    tu_write(dir, KJOIN_NODE_STATE_NAME, text);
    snprintf(path, sizeof(path), "%s/%s", dir, KJOIN_NODE_STATE_NAME);
    assert_int_equal(chmod(path, 0600), 0);
}

/* One record file a join: the control plane's part beside the node's in
 * kjoin-join.json, each kept when the other is written or undone; the file
 * goes with the last part. A record of an earlier kjoin (its control-plane
 * part in a file of its own) is read, taken in by the next write, and reset. */
static void test_one_record_file(void **state)
{
    (void)state;
    kjoin_err err;
    char *dir = tu_tmpdir(), path[4200], legacy[4200];
    kjoin_cp_record *r = malloc(sizeof(*r));
    bool found;
    struct stat st;
    size_t text_len;
    snprintf(path, sizeof(path), "%s/%s", dir, KJOIN_NODE_STATE_NAME);
    snprintf(legacy, sizeof(legacy), "%s/%s", dir, KJOIN_CP_LEGACY_RECORD_NAME);
    /* An earlier kjoin's record, read as it is. */
    char old[900];
    snprintf(old, sizeof(old), "{\"kind\":\"KjoinControlPlaneRecord\",\"files\":[{\"path\":\"%s/admin.conf\",\"sha256\":"
             "\"%064d\"}],\"createdDirs\":[],\"etcd\":{\"peerURL\":\"https://10.0.0.2:2380\",\"memberID\":\"7\","
             "\"certificatesDir\":\"/etc/kubernetes/pki\",\"dataDir\":\"/var/lib/etcd\",\"dataDirMade\":false}}",
             dir, 0);
    tu_write(dir, KJOIN_CP_LEGACY_RECORD_NAME, old);
    assert_int_equal(chmod(legacy, 0600), 0);
    assert_int_equal(kjoin_cp_record_read(dir, r, &found, &err), KJOIN_OK);
    assert_true(found && r->written.n_files == 1 && !strcmp(r->etcd_id, "7"));
    /* The node's part there too (kubelet-start's): the next control-plane write keeps it, takes the old
     * record in and removes its file. */
    put_record(dir, "{\"kind\":\"KjoinJoinRecord\",\"nodeName\":\"cp-2\",\"joinID\":\"j\"}");
    char file2[4200];
    snprintf(file2, sizeof(file2), "%s/scheduler.conf", dir);
    const char *paths[] = {file2}, *sums[] = {"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"};
    assert_int_equal(kjoin_cp_record_pending(dir, paths, sums, 1, NULL, 0, &err), KJOIN_OK);
    assert_int_equal(stat(legacy, &st), -1);
    char *text = read_all(path, &text_len);
    assert_non_null(strstr(text, "\"nodeName\":\"cp-2\""));
    assert_non_null(strstr(text, "\"controlPlane\""));
    free(text);
    assert_int_equal(kjoin_cp_record_read(dir, r, &found, &err), KJOIN_OK);
    assert_true(found && r->written.n_files == 2 && !strcmp(r->etcd_id, "7"));
    /* The control plane's part undone: the node's stays, the file with it. */
    kjoin_cp_reset_spec rs = {.join = &test_join, .kubernetes_dir = dir};
    kjoin_cp_reset_result *res = calloc(1, sizeof(*res));
    assert_int_equal(kjoin_cp_reset_files(&rs, res, NULL, &err), KJOIN_OK);
    assert_int_equal(kjoin_cp_record_read(dir, r, &found, &err), KJOIN_OK);
    assert_false(found);
    text = read_all(path, &text_len);
    assert_non_null(strstr(text, "\"nodeName\":\"cp-2\""));
    assert_null(strstr(text, "controlPlane"));
    free(text);
    /* The control plane's part alone: its undo takes the file. */
    put_record(dir, "{\"kind\":\"KjoinJoinRecord\"}");
    assert_int_equal(kjoin_cp_record_pending(dir, paths, sums, 1, NULL, 0, &err), KJOIN_OK);
    memset(res, 0, sizeof(*res));
    assert_int_equal(kjoin_cp_reset_files(&rs, res, NULL, &err), KJOIN_OK);
    assert_int_equal(stat(path, &st), -1);
    bool named = false;
    for (size_t i = 0; i < res->n_removed; i++)
        named |= !strcmp(res->removed[i], path);
    assert_true(named);
    /* A record file that is not kjoin's: the control plane's part is not written into it, nor read from it. */
    put_record(dir, "{\"kind\":\"Something\"}");
    assert_int_equal(kjoin_cp_record_pending(dir, paths, sums, 1, NULL, 0, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "is not a kjoin join record"));
    assert_int_equal(kjoin_cp_record_read(dir, r, &found, &err), KJOIN_E_USAGE);
    text = read_all(path, &text_len);
    assert_string_equal(text, "{\"kind\":\"Something\"}");
    free(text);
    free(res);
    free(r);
    tu_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_key_parse), cmocka_unit_test(test_decrypt),
                                       cmocka_unit_test(test_encrypt_for_download),
                                       cmocka_unit_test(test_stage_left),
                                       cmocka_unit_test(test_open_kubeadms_secret),
                                       cmocka_unit_test(test_secret_values_are_what_they_say),
                                       cmocka_unit_test(test_node_certs_as_kubeadm),
                                       cmocka_unit_test(test_node_certs_by_release),
                                       cmocka_unit_test(test_node_certs_refused),
                                       cmocka_unit_test(test_kubeconfigs_as_kubeadm),
                                       cmocka_unit_test(test_mark_patch),
                                       cmocka_unit_test(test_manifests_as_kubeadm),
                                       cmocka_unit_test(test_manifests_of_1_20),
                                       cmocka_unit_test(test_manifests_refused),
                                       cmocka_unit_test(test_manifests_written),
                                       cmocka_unit_test(test_dry_run),
                                       cmocka_unit_test(test_etcd_members_parse),
                                       cmocka_unit_test(test_etcd_endpoints_parse),
        cmocka_unit_test(test_etcd_status_parse), cmocka_unit_test(test_pod_not_running),
        cmocka_unit_test(test_etcd_fsync_mean), cmocka_unit_test(test_record_forget_etcd),
        cmocka_unit_test(test_etcd_progress_line),
                                       cmocka_unit_test(test_etcd_manifest),
                                       cmocka_unit_test(test_cp_record_parse),
        cmocka_unit_test(test_one_record_file),
                                       cmocka_unit_test(test_record_before_write),
                                       cmocka_unit_test(test_take_back),
                                       cmocka_unit_test(test_check_before_writing),
        cmocka_unit_test(test_cluster_configuration_from_file),
        cmocka_unit_test(test_replaced_files_put_back),
                                       cmocka_unit_test(test_advertise_address),
                                       cmocka_unit_test(test_paths_as_spelled),
                                       cmocka_unit_test(test_control_plane_images),
                                       cmocka_unit_test(test_control_plane_endpoints)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
