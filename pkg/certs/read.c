/* The readers: check-expiration and the Secret manifests. They open the
 * store without its lock and see the one generation ..data named. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/crypto.h>

#include <kjoin/util.h>

#include "pki.h"

static int by_name(const void *a, const void *b)
{
    return strcmp(((const kjoin_certs_status *)a)->name, ((const kjoin_certs_status *)b)->name);
}

kjoin_code kjoin_certs_check(const char *dir, int64_t now, kjoin_certs_status *out, size_t cap, size_t *n,
                             kjoin_err *err)
{
    pki p = {.now = now};
    kjoin_code rc = kjoin_certs__load(&p, dir, KJOIN_STORE_READ, err);
    *n = 0;
    for (size_t i = 0; !rc && i < p.n && *n < cap; i++) {
        entry *e = &p.e[i];
        kjoin_certs_status *s = &out[(*n)++];
        snprintf(s->name, sizeof(s->name), "%s", e->name);
        snprintf(s->ca_name, sizeof(s->ca_name), "%s", e->kind == CERT_CA ? "" : "ca");
        s->not_after = kjoin_certs__not_after(kjoin_certs__first(e));
        s->is_ca = e->kind == CERT_CA;
        s->user_provided = e->user_provided;
        s->needs_regeneration = e->needs_regen;
        s->due = kjoin_certs__is_due(&p, e) || e->needs_regen || e->changed_outside;
        s->not_yet_valid = kjoin_certs__not_yet_valid(&p, e);
    }
    if (!rc)
        qsort(out, *n, sizeof(*out), by_name);
    kjoin_certs__release(&p);
    return rc;
}

static json_object *secret(const char *name, const char *ns, const char *type, const entry *e, const entry *ca,
                           bool with_ca_key)
{
    json_object *s = json_object_new_object(), *meta = json_object_new_object(), *ann = json_object_new_object(),
                *data = json_object_new_object();
    char dur[32];
    json_object_object_add(s, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(s, "kind", json_object_new_string("Secret"));
    json_object_object_add(meta, "name", json_object_new_string(name));
    json_object_object_add(meta, "namespace", json_object_new_string(ns));
    json_object_object_add(ann, "managed-by", json_object_new_string("kjoin"));
    json_object_object_add(ann, "creationTime", json_object_new_string(e->created));
    json_object_object_add(ann, "duration", json_object_new_string(kjoin_certs__hours(e->duration, dur, sizeof(dur))));
    json_object_object_add(ann, "needsRegeneration", json_object_new_string(e->needs_regen ? "True" : "False"));
    json_object_object_add(meta, "annotations", ann);
    json_object_object_add(s, "metadata", meta);
    json_object_object_add(s, "type", json_object_new_string(type));
    char *ca_pem = kjoin_certs__pem_certs(ca->certs, NULL);
    char *ca_b64 = ca_pem ? kjoin_b64_encode(ca_pem, strlen(ca_pem), false) : NULL;
    json_object_object_add(data, "ca.crt", json_object_new_string(ca_b64 ? ca_b64 : ""));
    if (e != ca || with_ca_key) {
        char *crt = kjoin_certs__pem_certs(e->certs, NULL), *key = kjoin_certs__pem_key(e->key);
        char *crt64 = crt ? kjoin_b64_encode(crt, strlen(crt), false) : NULL;
        char *key64 = key ? kjoin_b64_encode(key, strlen(key), false) : NULL;
        json_object_object_add(data, e == ca ? "ca.key" : "tls.key", json_object_new_string(key64 ? key64 : ""));
        if (e != ca)
            json_object_object_add(data, "tls.crt", json_object_new_string(crt64 ? crt64 : ""));
        if (key)
            OPENSSL_cleanse(key, strlen(key));
        if (key64)
            OPENSSL_cleanse(key64, strlen(key64));
        free(crt), free(key), free(crt64), free(key64);
    }
    json_object_object_add(s, "data", data);
    free(ca_pem);
    free(ca_b64);
    return s;
}

/* Wipes every string of a JSON tree (json-c frees without wiping), for trees
 * that held private keys. */
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

kjoin_code kjoin_certs_manifests(const char *dir, const char *ns, const char *prefix, char **out, kjoin_err *err)
{
    pki p = {0};
    kjoin_code rc = kjoin_certs__load(&p, dir, KJOIN_STORE_READ, err);
    if (rc)
        return rc;
    json_object *list = json_object_new_object(), *items = json_object_new_array();
    json_object_object_add(list, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(list, "kind", json_object_new_string("List"));
    entry *ca = kjoin_certs__find(&p, "ca");
    char name[200];
    for (size_t i = 0; i < p.n; i++) {
        entry *e = &p.e[i];
        if (e == ca && ca->user_provided)
            continue;
        if (e == ca)
            snprintf(name, sizeof(name), "%s-ca-secret", prefix);
        else if (e->kind == CERT_NODE)
            snprintf(name, sizeof(name), "%s-%s-secret", prefix, strcmp(e->name, "node") == 0 ? "node" : e->name);
        else if (strcmp(e->user, "root") == 0)
            snprintf(name, sizeof(name), "%s-client-secret", prefix);
        else
            snprintf(name, sizeof(name), "%s-client-secret", e->user);
        for (char *c = name; *c; c++)
            *c = *c == '.' || *c == '_' ? '-' : *c;
        json_object_array_add(items, secret(name, ns, e == ca ? "Opaque" : "kubernetes.io/tls", e, ca, e == ca));
    }
    json_object_object_add(list, "items", items);
    const char *s = json_object_to_json_string_ext(list, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    *out = strdup(s);
    OPENSSL_cleanse((char *)s, strlen(s));
    wipe_json_strings(list);
    json_object_put(list);
    kjoin_certs__release(&p);
    return *out ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
}
