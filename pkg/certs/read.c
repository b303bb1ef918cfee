/* The readers: check-expiration and the Secret manifests. They open the
 * store without its lock and see the one generation ..data named. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/crypto.h>

#include <kjoin/private/util.h>

#include "pki.h"

static int by_name(const void *a, const void *b)
{
    return strcmp(((const kjoin_certs_status *)a)->name, ((const kjoin_certs_status *)b)->name);
}

kjoin_code kjoin_certs_check(const kjoin_certs_store *st, int64_t now, kjoin_certs_status *out, size_t cap, size_t *n,
                             kjoin_err *err)
{
    pki p;
    kjoin_code rc = kjoin_certs__begin(&p, st, now, NULL, err);
    if (!rc)
        rc = p.be->load(&p, KJOIN_STORE_READ, err);
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
        s->due = kjoin_certs__is_due(&p, e) || e->needs_regen || e->changed_outside || p.be->behind(&p, i);
        s->not_yet_valid = kjoin_certs__not_yet_valid(&p, e);
    }
    if (!rc)
        qsort(out, *n, sizeof(*out), by_name);
    kjoin_certs__end(&p);
    return rc;
}

kjoin_code kjoin_certs_manifests(const char *dir, const char *ns, const char *prefix, char **out, kjoin_err *err)
{
    kjoin_certs_store st = {.dir = dir};
    pki p;
    *out = NULL;
    kjoin_code rc = kjoin_certs__begin(&p, &st, 0, NULL, err);
    if (!rc)
        rc = p.be->load(&p, KJOIN_STORE_READ, err);
    json_object *list = json_object_new_object(), *items = json_object_new_array();
    json_object_object_add(list, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(list, "kind", json_object_new_string("List"));
    json_object_object_add(list, "items", items);
    for (size_t i = 0; !rc && i < p.n; i++) {
        if (p.e[i].kind == CERT_CA && p.e[i].user_provided)
            continue;
        json_object *secret = kjoin_certs__entry_secret(&p, i, ns, prefix, NULL, err);
        if (!secret)
            rc = err ? err->code : KJOIN_E_OTHER;
        else
            json_object_array_add(items, secret);
    }
    if (!rc) {
        const char *s = json_object_to_json_string_ext(list, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
        *out = strdup(s);
        OPENSSL_cleanse((char *)s, strlen(s));
        if (!*out)
            rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    kjoin_certs__json_free(list);
    kjoin_certs__end(&p);
    return rc;
}
