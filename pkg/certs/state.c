/* The state file: what kjoin recorded about each certificate. It sits in a
 * directory another user may write, so it is parsed as untrusted input:
 * every field checked for type and range, every name one of kjoin's own. */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include <kjoin/private/util.h>

#include "internal.h"

#define HUNDRED_YEARS (100LL * 365 * 24 * 3600)

static const char *const key_names[] = {"ecdsa-p256", "rsa2048", "rsa3072", "rsa4096", "ed25519",
                                        "ecdsa-p384"};

kjoin_code kjoin_key_type_parse(const char *s, kjoin_key_type *out, kjoin_err *err)
{
    for (size_t i = 0; i < sizeof(key_names) / sizeof(key_names[0]); i++)
        if (strcmp(s, key_names[i]) == 0) {
            *out = (kjoin_key_type)i;
            return KJOIN_OK;
        }
    return kjoin_err_set(err, KJOIN_E_USAGE,
                         "unknown key type \"%.40s\" (use ecdsa-p256, ecdsa-p384, rsa2048, rsa3072, rsa4096 "
                         "or ed25519)", s);
}

const char *kjoin_key_type_name(kjoin_key_type t) { return key_names[t]; }

bool kjoin_certs__name_valid(const char *s)
{
    if (!*s || strlen(s) > 48)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || strchr("-_", *s)))
            return false;
    return true;
}

bool kjoin_certs__entry_name(const char *name, cert_kind *kind, char user[64])
{
    user[0] = '\0';
    if (strcmp(name, "ca") == 0 || strcmp(name, "node") == 0) {
        *kind = name[0] == 'c' ? CERT_CA : CERT_NODE;
        return true;
    }
    if (strncmp(name, "node.", 5) == 0 && kjoin_certs__name_valid(name + 5)) {
        *kind = CERT_NODE;
        return true;
    }
    if (strncmp(name, "client.", 7) == 0 && kjoin_certs__name_valid(name + 7)) {
        *kind = CERT_CLIENT;
        snprintf(user, 64, "%s", name + 7);
        return true;
    }
    return false;
}

void kjoin_certs__entry_release(certs_entry *e)
{
    sk_X509_pop_free(e->certs, X509_free);
    EVP_PKEY_free(e->key);
    for (size_t i = 0; i < e->n_names; i++)
        free(e->names[i]);
    memset(e, 0, sizeof(*e));
}

/* ---- reading ------------------------------------------------------------ */

typedef struct reader {
    kjoin_err *err;
    char where[128]; /* the field being read, for messages */
} reader;

static kjoin_code bad(reader *r, const char *field, const char *what)
{
    return kjoin_err_set(r->err, KJOIN_E_USAGE, "malformed state file: %s%s%s %s", r->where,
                         *r->where && *field ? "." : "", field, what);
}

static kjoin_code get(reader *r, json_object *o, const char *field, json_type type, bool required, json_object **out)
{
    *out = NULL;
    if (!json_object_object_get_ex(o, field, out) || !*out)
        return required ? bad(r, field, "is missing") : KJOIN_OK;
    if (!json_object_is_type(*out, type))
        return bad(r, field, type == json_type_string    ? "must be a string"
                             : type == json_type_int     ? "must be a whole number"
                             : type == json_type_boolean ? "must be true or false"
                             : type == json_type_array   ? "must be a list"
                                                         : "must be an object");
    return KJOIN_OK;
}

static kjoin_code text(reader *r, json_object *o, const char *field, bool required, char *out, size_t cap)
{
    json_object *v;
    kjoin_code rc = get(r, o, field, json_type_string, required, &v);
    out[0] = '\0';
    if (rc || !v)
        return rc;
    const char *s = json_object_get_string(v);
    if ((size_t)json_object_get_string_len(v) >= cap || strlen(s) != (size_t)json_object_get_string_len(v))
        return bad(r, field, "is too long or holds a NUL");
    memcpy(out, s, strlen(s) + 1);
    return KJOIN_OK;
}

static kjoin_code seconds(reader *r, json_object *o, const char *field, int64_t *out)
{
    json_object *v;
    kjoin_code rc = get(r, o, field, json_type_int, true, &v);
    if (rc)
        return rc;
    *out = json_object_get_int64(v);
    return *out > 0 && *out <= HUNDRED_YEARS ? KJOIN_OK : bad(r, field, "is out of range (1 s to 100 years)");
}

bool kjoin_certs__fingerprint_valid(const char *s)
{
    return strncmp(s, "sha256:", 7) == 0 && strlen(s) == 7 + 64 && strspn(s + 7, "0123456789abcdef") == 64;
}

static kjoin_code fingerprint(reader *r, json_object *o, const char *field, char out[80])
{
    kjoin_code rc = text(r, o, field, true, out, 80);
    if (!rc && !kjoin_certs__fingerprint_valid(out))
        rc = bad(r, field, "is not a sha256: fingerprint");
    return rc;
}

static kjoin_code read_settings(reader *r, json_object *set, kjoin_certs_settings *s)
{
    char type[32];
    snprintf(r->where, sizeof(r->where), "settings");
    kjoin_code rc;
    if ((rc = seconds(r, set, "caDuration", &s->ca_duration)) ||
        (rc = seconds(r, set, "caExpiryWindow", &s->ca_window)) ||
        (rc = seconds(r, set, "nodeDuration", &s->node_duration)) ||
        (rc = seconds(r, set, "nodeExpiryWindow", &s->node_window)) ||
        (rc = seconds(r, set, "clientDuration", &s->client_duration)) ||
        (rc = seconds(r, set, "clientExpiryWindow", &s->client_window)) ||
        (rc = seconds(r, set, "minimumDuration", &s->minimum)) ||
        (rc = text(r, set, "keyType", true, type, sizeof(type))))
        return rc;
    return kjoin_key_type_parse(type, &s->key_type, NULL) ? bad(r, "keyType", "is not a key type kjoin makes")
                                                          : KJOIN_OK;
}

static kjoin_code read_entry(reader *r, const char *name, json_object *o, certs_entry *e)
{
    char managed[16];
    json_object *flag, *names;
    snprintf(r->where, sizeof(r->where), "certificates.%.60s", name);
    if (!kjoin_certs__entry_name(name, &e->kind, e->user))
        return bad(r, "", "is not a name kjoin gives (ca, node, node.<name>, client.<user>)");
    snprintf(e->name, sizeof(e->name), "%s", name);
    const char *list = e->kind == CERT_NODE ? "sans" : "groups";
    kjoin_code rc;
    if ((rc = get(r, o, "needsRegeneration", json_type_boolean, true, &flag)) ||
        (rc = text(r, o, "managedBy", true, managed, sizeof(managed))) ||
        (rc = text(r, o, "creationTime", true, e->created, sizeof(e->created))) ||
        (rc = seconds(r, o, "durationSeconds", &e->duration)) || (rc = fingerprint(r, o, "fingerprint", e->fingerprint)) ||
        (e->kind != CERT_CA && (rc = fingerprint(r, o, "caFingerprint", e->ca_fingerprint))) ||
        (rc = get(r, o, list, json_type_array, false, &names)))
        return rc;
    if (strcmp(managed, "kjoin") && strcmp(managed, "user"))
        return bad(r, "managedBy", "must be kjoin or user");
    e->user_provided = strcmp(managed, "user") == 0;
    if (e->user_provided && e->kind != CERT_CA)
        return bad(r, "managedBy", "may be user only for the CA");
    e->needs_regen = json_object_get_boolean(flag);
    size_t n = names ? json_object_array_length(names) : 0;
    if (n > KJOIN_CERTS_MAX_NAMES)
        return bad(r, list, "has too many entries");
    for (size_t i = 0; i < n; i++) {
        json_object *v = json_object_array_get_idx(names, i);
        const char *s = v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
        bool ok = s && strlen(s) == (size_t)json_object_get_string_len(v) &&
                  (e->kind == CERT_NODE ? kjoin_certs__san_valid(s) : *s && strlen(s) <= 64);
        if (!ok)
            return bad(r, list, e->kind == CERT_NODE ? "holds an entry that is not a DNS name or an IP address"
                                                     : "holds an entry that is not a group name");
        if (!(e->names[e->n_names] = strdup(s)))
            return kjoin_err_set(r->err, KJOIN_E_OTHER, "out of memory");
        e->n_names++;
    }
    return KJOIN_OK;
}

kjoin_code kjoin_certs__state_parse(const char *data, size_t len, kjoin_certs_settings *settings, certs_entry *entries,
                                    size_t cap, size_t *n, kjoin_err *err)
{
    reader r = {.err = err};
    json_tokener *tok = json_tokener_new();
    json_object *root = tok ? json_tokener_parse_ex(tok, data, (int)len) : NULL, *version, *set, *certs;
    bool whole = tok && json_tokener_get_error(tok) == json_tokener_success && (size_t)tok->char_offset == len;
    json_tokener_free(tok);
    *n = 0;
    kjoin_code rc = root && whole && json_object_is_type(root, json_type_object)
                        ? KJOIN_OK
                        : kjoin_err_set(err, KJOIN_E_USAGE, "malformed state file: not one JSON object");
    if (!rc && !(rc = get(&r, root, "version", json_type_int, true, &version)) && json_object_get_int64(version) != 1)
        rc = bad(&r, "version", "is not 1");
    if (!rc && !(rc = get(&r, root, "settings", json_type_object, true, &set)))
        rc = read_settings(&r, set, settings);
    r.where[0] = '\0';
    if (!rc)
        rc = get(&r, root, "certificates", json_type_object, true, &certs);
    if (!rc) {
        json_object_object_foreach(certs, name, o)
        {
            if (rc)
                break;
            if (*n == cap) {
                rc = kjoin_err_set(err, KJOIN_E_USAGE, "malformed state file: more than %zu certificates", cap);
                break;
            }
            if (!json_object_is_type(o, json_type_object)) {
                snprintf(r.where, sizeof(r.where), "certificates");
                rc = bad(&r, name, "must be an object");
                break;
            }
            memset(&entries[*n], 0, sizeof(entries[0]));
            rc = read_entry(&r, name, o, &entries[(*n)++]);
        }
    }
    bool has_ca = false;
    for (size_t i = 0; !rc && i < *n; i++)
        has_ca |= entries[i].kind == CERT_CA;
    if (!rc && !has_ca)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "malformed state file: certificates.ca is missing");
    if (rc)
        for (size_t i = 0; i < *n; i++)
            kjoin_certs__entry_release(&entries[i]);
    if (rc)
        *n = 0;
    json_object_put(root);
    return rc;
}

kjoin_code kjoin_certs__settings_parse(const char *data, size_t len, kjoin_certs_settings *settings, kjoin_err *err)
{
    reader r = {.err = err};
    json_tokener *tok = json_tokener_new();
    json_object *root = tok ? json_tokener_parse_ex(tok, data, (int)len) : NULL;
    bool whole = tok && json_tokener_get_error(tok) == json_tokener_success && (size_t)tok->char_offset == len;
    json_tokener_free(tok);
    kjoin_code rc = root && whole && json_object_is_type(root, json_type_object)
                        ? read_settings(&r, root, settings)
                        : kjoin_err_set(err, KJOIN_E_USAGE, "malformed settings: not one JSON object");
    json_object_put(root);
    return rc;
}

/* ---- writing ------------------------------------------------------------ */

static char *hours(int64_t s, char *buf, size_t cap) { return kjoin_duration_format(s * 1000, buf, cap); }

static json_object *settings_object(const kjoin_certs_settings *s)
{
    json_object *set = json_object_new_object();
    const struct {
        const char *k;
        int64_t v;
    } nums[] = {{"caDuration", s->ca_duration},         {"caExpiryWindow", s->ca_window},
                {"nodeDuration", s->node_duration},     {"nodeExpiryWindow", s->node_window},
                {"clientDuration", s->client_duration}, {"clientExpiryWindow", s->client_window},
                {"minimumDuration", s->minimum}};
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
        json_object_object_add(set, nums[i].k, json_object_new_int64(nums[i].v));
    json_object_object_add(set, "keyType", json_object_new_string(kjoin_key_type_name(s->key_type)));
    return set;
}

static char *text_of(json_object *o, int flags)
{
    const char *out = json_object_to_json_string_ext(o, flags | JSON_C_TO_STRING_NOSLASHESCAPE);
    char *copy = out ? strdup(out) : NULL;
    json_object_put(o);
    return copy;
}

char *kjoin_certs__settings_encode(const kjoin_certs_settings *s)
{
    return text_of(settings_object(s), JSON_C_TO_STRING_PLAIN);
}

char *kjoin_certs__state_encode(const kjoin_certs_settings *s, const certs_entry *entries, size_t n)
{
    json_object *root = json_object_new_object(), *certs = json_object_new_object();
    json_object_object_add(root, "version", json_object_new_int(1));
    json_object_object_add(root, "settings", settings_object(s));
    for (size_t i = 0; i < n; i++) {
        const certs_entry *e = &entries[i];
        json_object *o = json_object_new_object(), *names = json_object_new_array();
        char dur[32];
        json_object_object_add(o, "managedBy", json_object_new_string(e->user_provided ? "user" : "kjoin"));
        json_object_object_add(o, "creationTime", json_object_new_string(e->created));
        json_object_object_add(o, "duration", json_object_new_string(hours(e->duration, dur, sizeof(dur))));
        json_object_object_add(o, "durationSeconds", json_object_new_int64(e->duration));
        json_object_object_add(o, "fingerprint", json_object_new_string(e->fingerprint));
        if (e->kind != CERT_CA)
            json_object_object_add(o, "caFingerprint", json_object_new_string(e->ca_fingerprint));
        json_object_object_add(o, "needsRegeneration", json_object_new_boolean(e->needs_regen));
        for (size_t j = 0; j < e->n_names; j++)
            json_object_array_add(names, json_object_new_string(e->names[j]));
        json_object_object_add(o, e->kind == CERT_NODE ? "sans" : "groups", names);
        json_object_object_add(certs, e->name, o);
    }
    json_object_object_add(root, "certificates", certs);
    return text_of(root, JSON_C_TO_STRING_PRETTY);
}
