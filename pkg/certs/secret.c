/* One Kubernetes Secret of the certs store: its name, the JSON the API
 * returns (untrusted: parsed and checked field by field), the JSON kjoin
 * writes, and a signature of the parts kjoin owns, which tells whether a
 * write would change anything. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <kjoin/private/util.h>

#include "secret.h"

#define BODY_MAX (1024 * 1024)

static const char *const data_keys[SECRET_N_KEYS] = {"ca.crt", "ca.key", "tls.crt", "tls.key"};

const char *kjoin_certs__secret_key_name(secret_key k) { return data_keys[k]; }

bool kjoin_certs__secret_prefix_valid(const char *prefix)
{
    return kjoin_dns_subdomain_valid(prefix) && strlen(prefix) <= 200 && !strchr(prefix, '.');
}

bool kjoin_certs__secret_name(const char *prefix, const char *entry, char out[SECRET_NAME_MAX])
{
    int n;
    if (strcmp(entry, "client.root") == 0) /* the self-signer's name for root */
        n = snprintf(out, SECRET_NAME_MAX, "%s-client-secret", prefix);
    else if (strcmp(entry, "ca") == 0 || strcmp(entry, "node") == 0)
        n = snprintf(out, SECRET_NAME_MAX, "%s-%s-secret", prefix, entry);
    else if (strncmp(entry, "node.", 5) == 0 || strncmp(entry, "client.", 7) == 0)
        n = snprintf(out, SECRET_NAME_MAX, "%s-%.*s-%s-secret", prefix, (int)strcspn(entry, "."), entry,
                     strchr(entry, '.') + 1);
    else
        return false;
    return n > 0 && n < SECRET_NAME_MAX && kjoin_dns_subdomain_valid(out);
}

kjoin_code kjoin_certs__secrets_names_check(const char *ns, const char *prefix, const char *ca_secret, kjoin_err *err)
{
    char probe[SECRET_NAME_MAX];
    if (!ns || !kjoin_dns_subdomain_valid(ns) || strlen(ns) > 63 || strchr(ns, '.'))
        return kjoin_err_set(err, KJOIN_E_USAGE, "invalid namespace \"%.64s\": a DNS label (lowercase letters, digits, '-')",
                             ns ? ns : "");
    if (!prefix || !kjoin_certs__secret_prefix_valid(prefix) || !kjoin_certs__secret_name(prefix, "ca", probe))
        return kjoin_err_set(err, KJOIN_E_USAGE, "invalid Secret name prefix \"%.64s\": lowercase letters, digits and '-'",
                             prefix ? prefix : "");
    if (ca_secret && !kjoin_dns_subdomain_valid(ca_secret))
        return kjoin_err_set(err, KJOIN_E_USAGE, "invalid CA Secret name \"%.64s\": lowercase letters, digits, '-' and '.'",
                             ca_secret);
    return KJOIN_OK;
}

/* ---- reading ------------------------------------------------------------ */

const char *kjoin_certs__secret_annotation(const certs_secret *s, const char *key)
{
    return kjoin_json_str(kjoin_json_obj(kjoin_json_obj(s->obj, "metadata"), "annotations"), key);
}

static kjoin_code bad(kjoin_err *err, const char *name, const char *what)
{
    return kjoin_err_set(err, KJOIN_E_TRUST, "Secret %s: %s", *name ? name : "(unnamed)", what);
}

kjoin_code kjoin_certs__secret_parse(const char *json, size_t len, certs_secret *out, kjoin_err *err)
{
    certs_secret s = {0};
    if (len > BODY_MAX)
        return bad(err, "", "the API's answer is larger than 1 MiB");
    json_tokener *tok = json_tokener_new();
    s.obj = tok ? json_tokener_parse_ex(tok, json, (int)len) : NULL;
    bool whole = tok && json_tokener_get_error(tok) == json_tokener_success && (size_t)tok->char_offset == len;
    json_tokener_free(tok);
    json_object *meta = kjoin_json_obj(s.obj, "metadata"), *data = kjoin_json_obj(s.obj, "data");
    const char *name = kjoin_json_str(meta, "name"), *rv = kjoin_json_str(meta, "resourceVersion"), *type = kjoin_json_str(s.obj, "type");
    const char *kind = kjoin_json_str(s.obj, "kind");
    kjoin_code rc = KJOIN_OK;
    if (!s.obj || !whole || !json_object_is_type(s.obj, json_type_object) || !meta)
        rc = bad(err, "", "the API's answer is not one JSON object with metadata");
    else if (!kind || strcmp(kind, "Secret") != 0)
        rc = bad(err, "", "the API's answer is not a Secret");
    else if (!name || strlen(name) >= sizeof(s.name) || !kjoin_dns_subdomain_valid(name))
        rc = bad(err, "", "metadata.name is missing or not a valid name");
    if (!rc) {
        snprintf(s.name, sizeof(s.name), "%s", name);
        if (!rv || !*rv || strlen(rv) >= sizeof(s.rv))
            rc = bad(err, s.name, "metadata.resourceVersion is missing or too long");
        else if (type && strlen(type) >= sizeof(s.type))
            rc = bad(err, s.name, "type is too long");
    }
    if (!rc) {
        snprintf(s.rv, sizeof(s.rv), "%s", rv);
        snprintf(s.type, sizeof(s.type), "%s", type ? type : "Opaque");
        const char *managed = kjoin_json_str(kjoin_json_obj(meta, "labels"), "app.kubernetes.io/managed-by");
        s.ours = managed && strcmp(managed, "kjoin") == 0;
    }
    for (int k = 0; !rc && k < SECRET_N_KEYS; k++) {
        json_object *v;
        if (!data || !json_object_object_get_ex(data, data_keys[k], &v))
            continue;
        if (!json_object_is_type(v, json_type_string)) {
            rc = bad(err, s.name, "a data value is not a string");
            break;
        }
        kjoin_err inner;
        unsigned char *raw = NULL;
        if (kjoin_b64_decode(json_object_get_string(v), (size_t)json_object_get_string_len(v), false, &raw,
                             &s.len[k], &inner)) {
            char what[64];
            snprintf(what, sizeof(what), "data[%s] is not base64", data_keys[k]);
            rc = bad(err, s.name, what);
            break;
        }
        s.data[k] = (char *)raw;
    }
    if (!rc)
        kjoin_certs__secret_sig(s.obj, s.sig);
    if (rc)
        kjoin_certs__secret_release(&s);
    else
        *out = s;
    return rc;
}

/* Wipes every string of a JSON tree (json-c frees without wiping). */
static void wipe_json_strings(json_object *o)
{
    if (json_object_is_type(o, json_type_string)) {
        OPENSSL_cleanse((char *)json_object_get_string(o), (size_t)json_object_get_string_len(o));
    } else if (json_object_is_type(o, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(o); i++)
            wipe_json_strings(json_object_array_get_idx(o, i));
    } else if (json_object_is_type(o, json_type_object)) {
        json_object_object_foreach(o, k, v) {
            (void)k;
            wipe_json_strings(v);
        }
    }
}

void kjoin_certs__json_free(json_object *o)
{
    if (o)
        wipe_json_strings(o);
    json_object_put(o);
}

void kjoin_certs__secret_release(certs_secret *s)
{
    for (int k = 0; k < SECRET_N_KEYS; k++) {
        kjoin_free_wiped(s->data[k], s->len[k]);
    }
    if (s->obj)
        wipe_json_strings(s->obj);
    json_object_put(s->obj);
    memset(s, 0, sizeof(*s));
}

/* ---- the parts kjoin owns ----------------------------------------------- */

static bool ours(const char *key)
{
    return strncmp(key, "kjoin.io/", 9) == 0 || !strcmp(key, "managed-by") || !strcmp(key, "creationTime") ||
           !strcmp(key, "duration") || !strcmp(key, "needsRegeneration") ||
           !strcmp(key, "app.kubernetes.io/managed-by") || !strcmp(key, "app.kubernetes.io/part-of");
}

static int by_key(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* Hashes the string members of o (only kjoin's when only_ours) in key order. */
static void hash_map(EVP_MD_CTX *md, const char *tag, json_object *o, bool only_ours)
{
    const char *keys[64];
    size_t n = 0;
    EVP_DigestUpdate(md, tag, strlen(tag) + 1);
    if (!o)
        return;
    json_object_object_foreach(o, k, v) {
        if (n < 64 && json_object_is_type(v, json_type_string) && (!only_ours || ours(k)))
            keys[n++] = k;
    }
    qsort(keys, n, sizeof(keys[0]), by_key);
    for (size_t i = 0; i < n; i++) {
        json_object *val = json_object_object_get(o, keys[i]);
        EVP_DigestUpdate(md, keys[i], strlen(keys[i]) + 1);
        EVP_DigestUpdate(md, json_object_get_string(val), (size_t)json_object_get_string_len(val) + 1);
    }
}

void kjoin_certs__secret_sig(json_object *secret, unsigned char out[32])
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    json_object *meta = kjoin_json_obj(secret, "metadata");
    const char *type = kjoin_json_str(secret, "type");
    memset(out, 0, 32);
    if (!md || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(md);
        return;
    }
    EVP_DigestUpdate(md, type ? type : "Opaque", strlen(type ? type : "Opaque") + 1);
    hash_map(md, "data", kjoin_json_obj(secret, "data"), false);
    hash_map(md, "annotations", kjoin_json_obj(meta, "annotations"), true);
    hash_map(md, "labels", kjoin_json_obj(meta, "labels"), true);
    EVP_DigestFinal_ex(md, out, NULL);
    EVP_MD_CTX_free(md);
}

void kjoin_certs__data_fingerprint(const certs_secret *s, char out[80])
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned char h[32] = {0};
    char hex[65];
    if (md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1) {
        for (int k = 0; k < SECRET_N_KEYS; k++) {
            EVP_DigestUpdate(md, data_keys[k], strlen(data_keys[k]) + 1);
            uint64_t len = s->data[k] ? s->len[k] : UINT64_MAX; /* absent differs from empty */
            EVP_DigestUpdate(md, &len, sizeof(len));
            if (s->data[k])
                EVP_DigestUpdate(md, s->data[k], s->len[k]);
        }
        EVP_DigestFinal_ex(md, h, NULL);
    }
    EVP_MD_CTX_free(md);
    snprintf(out, 80, "sha256:%s", kjoin_hex(h, 32, hex));
}

/* ---- writing ------------------------------------------------------------ */

static void put_str(json_object *o, const char *key, const char *value)
{
    json_object_object_add(o, key, json_object_new_string(value));
}

static json_object *child(json_object *o, const char *key)
{
    json_object *c = kjoin_json_obj(o, key);
    if (!c) {
        c = json_object_new_object();
        json_object_object_add(o, key, c);
    }
    return c;
}

json_object *kjoin_certs__secret_new(const certs_secret *old, const char *ns, const char *name, const char *prefix,
                                     const char *type)
{
    json_object *s = json_object_new_object(), *meta = json_object_new_object();
    put_str(s, "apiVersion", "v1");
    put_str(s, "kind", "Secret");
    put_str(meta, "name", name);
    put_str(meta, "namespace", ns);
    json_object *old_meta = old ? kjoin_json_obj(old->obj, "metadata") : NULL;
    if (old)
        put_str(meta, "resourceVersion", old->rv);
    /* Labels and annotations others put on the Secret stay; kjoin's are rewritten. */
    const char *maps[] = {"labels", "annotations"};
    for (int m = 0; m < 2; m++) {
        json_object *mine = json_object_new_object(), *theirs = kjoin_json_obj(old_meta, maps[m]);
        if (theirs) {
            json_object_object_foreach(theirs, k, v) {
                if (!ours(k) && json_object_is_type(v, json_type_string))
                    json_object_object_add(mine, k, json_object_new_string(json_object_get_string(v)));
            }
        }
        json_object_object_add(meta, maps[m], mine);
    }
    json_object *labels = kjoin_json_obj(meta, "labels");
    put_str(labels, "app.kubernetes.io/managed-by", "kjoin");
    put_str(labels, "app.kubernetes.io/part-of", prefix);
    json_object_object_add(s, "metadata", meta);
    put_str(s, "type", type);
    json_object_object_add(s, "data", json_object_new_object());
    return s;
}

void kjoin_certs__secret_annotate(json_object *secret, const char *key, const char *value)
{
    put_str(child(child(secret, "metadata"), "annotations"), key, value);
}

bool kjoin_certs__secret_put_data(json_object *secret, secret_key k, const char *bytes, size_t len)
{
    char *b64 = kjoin_b64_encode(bytes, len, false);
    if (!b64)
        return false;
    put_str(child(secret, "data"), data_keys[k], b64);
    kjoin_free_wiped_str(b64);
    return true;
}
