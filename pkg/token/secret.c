/* Bootstrap tokens as Secrets, with exactly the keys kubeadm writes. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>
#include <openssl/crypto.h>

#include <kjoin/private/token.h>
#include <kjoin/private/util.h>

#define SECRET_TYPE "bootstrap.kubernetes.io/token"
#define NAME_PREFIX "bootstrap-token-"
#define GROUP_PREFIX "system:bootstrappers:"
#define MAX_ITEMS 4096

kjoin_code kjoin_token_groups_check(const char *groups, kjoin_err *err)
{
    if (strlen(groups) >= KJOIN_TOKEN_GROUPS_MAX)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the extra groups are longer than %d characters",
                             KJOIN_TOKEN_GROUPS_MAX - 1);
    const char *p = groups;
    while (*p) {
        size_t n = strcspn(p, ","), k = sizeof(GROUP_PREFIX) - 1;
        bool ok = n > k && n - k <= 256 && strncmp(p, GROUP_PREFIX, k) == 0;
        for (size_t i = k; ok && i < n; i++)
            ok = (p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') ||
                 (i + 1 < n && (p[i] == ':' || p[i] == '-'));
        if (!ok)
            return kjoin_err_set(err, KJOIN_E_USAGE,
                                 "extra group \"%.*s\" must match system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]",
                                 (int)(n > 80 ? 80 : n), p);
        for (const char *q = groups; q < p; q += strcspn(q, ",") + 1)
            if (strcspn(q, ",") == n && strncmp(q, p, n) == 0)
                return kjoin_err_set(err, KJOIN_E_USAGE, "extra group \"%.*s\" is given twice", (int)n, p);
        p += n;
        if (*p == ',' && !*++p)
            return kjoin_err_set(err, KJOIN_E_USAGE, "the extra groups end with a comma");
    }
    return KJOIN_OK;
}

kjoin_code kjoin_token_usages_parse(const char *usages, kjoin_token_spec *spec, kjoin_err *err)
{
    bool sign = false, auth = false;
    for (const char *p = usages; *p;) {
        size_t n = strcspn(p, ",");
        if (n == 7 && strncmp(p, "signing", 7) == 0)
            sign = true;
        else if (n == 14 && strncmp(p, "authentication", 14) == 0)
            auth = true;
        else
            return kjoin_err_set(err, KJOIN_E_USAGE, "unknown token usage \"%.*s\" (use signing, authentication)",
                                 (int)(n > 40 ? 40 : n), p);
        p += n + (p[n] == ',');
    }
    if (!sign && !auth)
        return kjoin_err_set(err, KJOIN_E_USAGE, "a token needs at least one usage: signing, authentication");
    spec->usage_signing = sign;
    spec->usage_authentication = auth;
    return KJOIN_OK;
}

/* Adds data[key] = base64(value). */
static bool add_data(json_object *data, const char *key, const char *value)
{
    char *b64 = kjoin_b64_encode(value, strlen(value), false);
    json_object *s = b64 ? json_object_new_string(b64) : NULL;
    kjoin_free_wiped_str(b64);
    return s && json_object_object_add(data, key, s) == 0;
}

/* A bound token's labels: for selection, and the node for people when the
 * name fits a label's value (63 characters). */
static bool add_labels(json_object *meta, const char *node)
{
    json_object *labels = json_object_new_object();
    bool ok = labels && json_object_object_add(labels, KJOIN_TOKEN_BOUND_LABEL, json_object_new_string("true")) == 0 &&
              (strlen(node) > 63 || json_object_object_add(labels, KJOIN_TOKEN_NODE_LABEL,
                                                           json_object_new_string(node)) == 0);
    if (ok && json_object_object_add(meta, "labels", labels) == 0)
        return true;
    json_object_put(labels);
    return false;
}

kjoin_code kjoin_token_secret_encode(const kjoin_token_spec *spec, char **out, kjoin_err *err)
{
    kjoin_err inner;
    if (!kjoin_token_id_valid(spec->token.id))
        return kjoin_err_set(err, KJOIN_E_USAGE, "invalid token id");
    /* (No usage is allowed: kubeadm's upload-certs makes such a token, to own a Secret.) */
    if (*spec->groups && kjoin_token_groups_check(spec->groups, &inner))
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s", inner.msg);
    for (const char *p = spec->groups; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        size_t n = strcspn(p, ",");
        if (n >= sizeof(KJOIN_TOKEN_RESERVED_PREFIX) - 1 &&
            strncmp(p, KJOIN_TOKEN_RESERVED_PREFIX, sizeof(KJOIN_TOKEN_RESERVED_PREFIX) - 1) == 0)
            return kjoin_err_set(err, KJOIN_E_USAGE, "group \"%.*s\" is kjoin's own: a node binding makes it", (int)n,
                                 p);
        if (*spec->bound_node && n == strlen(KJOIN_TOKEN_KUBEADM_GROUP) && !strncmp(p, KJOIN_TOKEN_KUBEADM_GROUP, n))
            return kjoin_err_set(err, KJOIN_E_USAGE,
                                 "a token bound to a node cannot carry " KJOIN_TOKEN_KUBEADM_GROUP
                                 ": the cluster approves any node name for that group");
    }
    /* A bound token's groups: the binding's first, then the caller's. */
    char groups[KJOIN_TOKEN_GROUPS_MAX + 400];
    snprintf(groups, sizeof(groups), "%s", spec->groups);
    if (*spec->bound_node) {
        char node_group[300];
        kjoin_code rc = kjoin_token_node_group(spec->bound_node, node_group, sizeof(node_group), err);
        if (rc)
            return rc;
        int n = snprintf(groups, sizeof(groups), KJOIN_TOKEN_BOUND_GROUP ",%s%s%s%s", node_group,
                         spec->single_use ? "," KJOIN_TOKEN_SINGLE_USE_GROUP : "", *spec->groups ? "," : "",
                         spec->groups);
        if (n < 0 || (size_t)n >= KJOIN_TOKEN_GROUPS_MAX)
            return kjoin_err_set(err, KJOIN_E_USAGE, "the extra groups and the binding are longer than %d characters",
                                 KJOIN_TOKEN_GROUPS_MAX - 1);
    } else if (spec->single_use) {
        return kjoin_err_set(err, KJOIN_E_USAGE, "only a token bound to a node can be single-use");
    }
    char name[sizeof(NAME_PREFIX) + KJOIN_TOKEN_ID_LEN], expires[32] = "";
    snprintf(name, sizeof(name), NAME_PREFIX "%s", spec->token.id);
    if (spec->expires) {
        time_t t = (time_t)spec->expires;
        struct tm tm;
        if (!gmtime_r(&t, &tm) || !strftime(expires, sizeof(expires), "%Y-%m-%dT%H:%M:%SZ", &tm))
            return kjoin_err_set(err, KJOIN_E_USAGE, "the expiry time is out of range");
    }
    json_object *root = json_object_new_object(), *meta = json_object_new_object(), *data = json_object_new_object();
    bool ok = root && meta && data && json_object_object_add(root, "apiVersion", json_object_new_string("v1")) == 0 &&
              json_object_object_add(root, "kind", json_object_new_string("Secret")) == 0 &&
              json_object_object_add(meta, "name", json_object_new_string(name)) == 0 &&
              json_object_object_add(meta, "namespace", json_object_new_string("kube-system")) == 0 &&
              (!*spec->bound_node || add_labels(meta, spec->bound_node)) &&
              json_object_object_add(root, "metadata", meta) == 0 && (meta = NULL, true) &&
              json_object_object_add(root, "type", json_object_new_string(SECRET_TYPE)) == 0 &&
              add_data(data, "token-id", spec->token.id) && add_data(data, "token-secret", spec->token.secret) &&
              (!*spec->description || add_data(data, "description", spec->description)) &&
              (!*expires || add_data(data, "expiration", expires)) &&
              (!spec->usage_signing || add_data(data, "usage-bootstrap-signing", "true")) &&
              (!spec->usage_authentication || add_data(data, "usage-bootstrap-authentication", "true")) &&
              (!*groups || add_data(data, "auth-extra-groups", groups)) &&
              json_object_object_add(root, "data", data) == 0 && (data = NULL, true);
    size_t len = 0;
    const char *text = ok ? json_object_to_json_string_length(root, JSON_C_TO_STRING_PLAIN, &len) : NULL;
    char *copy = text ? strdup(text) : NULL;
    if (text)
        OPENSSL_cleanse((char *)text, len); /* json-c's buffer held the base64 secret */
    json_object_put(meta);
    json_object_put(data);
    json_object_put(root);
    if (!copy)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    *out = copy;
    return KJOIN_OK;
}

void kjoin_token_list_release(kjoin_token_list *l)
{
    if (!l)
        return;
    kjoin_free_wiped(l->items, l->n * sizeof(*l->items));
    free(l->warnings);
    memset(l, 0, sizeof(*l));
}

static const char *str_of(json_object *o, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

/* data[key] decoded into buf (cap bytes); "" when absent. false when it is
 * not a string, not base64, too long or holds a NUL. */
static bool data_value(json_object *data, const char *key, char *buf, size_t cap)
{
    buf[0] = '\0';
    json_object *v = NULL;
    if (!json_object_object_get_ex(data, key, &v))
        return true;
    if (!json_object_is_type(v, json_type_string))
        return false;
    unsigned char *raw = NULL;
    size_t n = 0;
    const char *s = json_object_get_string(v);
    if (kjoin_b64_decode(s, strlen(s), false, &raw, &n, NULL))
        return false;
    bool ok = n < cap && memchr(raw, '\0', n) == NULL;
    if (ok)
        memcpy(buf, raw, n), buf[n] = '\0';
    kjoin_free_wiped(raw, n);
    return ok;
}

/* RFC 3339 in UTC ("Z") or with a numeric offset, as Go writes it. */
static bool parse_rfc3339(const char *s, long long *out)
{
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    const char *end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!end)
        return false;
    if (*end == '.')
        end += 1 + strspn(end + 1, "0123456789");
    long off = 0;
    if (*end == 'Z' && !end[1]) {
        off = 0;
    } else if ((*end == '+' || *end == '-') && strlen(end) == 6 && end[3] == ':') {
        int h = 0, m = 0;
        if (sscanf(end + 1, "%2d:%2d", &h, &m) != 2)
            return false;
        off = (*end == '-' ? -1 : 1) * (h * 3600L + m * 60L);
    } else {
        return false;
    }
    *out = (long long)timegm(&tm) - off;
    return true;
}

/* One Secret: true and *spec filled when it is a valid bootstrap token;
 * false with why otherwise. */
static bool decode_one(json_object *item, kjoin_token_spec *spec, char *why, size_t cap)
{
    json_object *meta = NULL, *data = NULL;
    const char *name = json_object_object_get_ex(item, "metadata", &meta) ? str_of(meta, "name") : NULL;
    char id[16], secret[32], v[64], expiration[64];
    memset(spec, 0, sizeof(*spec));
    if (!name || strncmp(name, NAME_PREFIX, sizeof(NAME_PREFIX) - 1) != 0) {
        snprintf(why, cap, "Secret \"%.60s\" of type " SECRET_TYPE " is not named " NAME_PREFIX "<id>; skipped",
                 name ? name : "");
        return false;
    }
    if (!json_object_object_get_ex(item, "data", &data) || !json_object_is_type(data, json_type_object) ||
        !data_value(data, "token-id", id, sizeof(id)) || !data_value(data, "token-secret", secret, sizeof(secret))) {
        snprintf(why, cap, "Secret %.60s has no readable token-id and token-secret; skipped", name);
        return false;
    }
    const char *name_id = name + sizeof(NAME_PREFIX) - 1;
    char text[64];
    snprintf(text, sizeof(text), "%s.%s", id, secret);
    bool valid = strcmp(name_id, id) == 0 && kjoin_token_parse(text, &spec->token, NULL) == KJOIN_OK;
    OPENSSL_cleanse(text, sizeof(text));
    OPENSSL_cleanse(secret, sizeof(secret));
    if (!valid) {
        snprintf(why, cap, "Secret %.60s: its token-id does not match its name, or the token is malformed; skipped",
                 name);
        return false;
    }
    if (!data_value(data, "expiration", expiration, sizeof(expiration)) ||
        (*expiration && !parse_rfc3339(expiration, &spec->expires)) ||
        !data_value(data, "description", spec->description, sizeof(spec->description)) ||
        !data_value(data, "auth-extra-groups", spec->groups, sizeof(spec->groups))) {
        kjoin_token_clear(&spec->token);
        snprintf(why, cap, "Secret %.60s has a malformed expiration, description or auth-extra-groups; skipped", name);
        return false;
    }
    kjoin_token_binding b;
    kjoin_token_binding_of(spec->groups, &b);
    if (kjoin_token_binding_valid(&b)) {
        snprintf(spec->bound_node, sizeof(spec->bound_node), "%s", b.node);
        spec->single_use = b.single_use;
    }
    spec->usage_signing = data_value(data, "usage-bootstrap-signing", v, sizeof(v)) && strcmp(v, "true") == 0;
    spec->usage_authentication =
        data_value(data, "usage-bootstrap-authentication", v, sizeof(v)) && strcmp(v, "true") == 0;
    return true;
}

kjoin_code kjoin_token_list_decode(const char *json, size_t len, kjoin_token_list *out, kjoin_err *err)
{
    json_tokener *tok = json_tokener_new_ex(32);
    if (!tok)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    json_object *root = len <= KJOIN_TOKEN_LIST_MAX ? json_tokener_parse_ex(tok, json, (int)len) : NULL;
    bool whole = root && (size_t)json_tokener_get_parse_end(tok) == len;
    json_tokener_free(tok);
    json_object *items = NULL;
    const char *kind = root ? str_of(root, "kind") : NULL;
    if (!whole || !kind || strcmp(kind, "SecretList") != 0 || !json_object_object_get_ex(root, "items", &items) ||
        !json_object_is_type(items, json_type_array) || json_object_array_length(items) > MAX_ITEMS) {
        json_object_put(root);
        return kjoin_err_set(err, KJOIN_E_TRUST, "the API's answer is not a SecretList of at most %d items",
                             MAX_ITEMS);
    }
    size_t n = json_object_array_length(items);
    kjoin_token_list l = {.items = calloc(n ? n : 1, sizeof(*l.items)),
                          .warnings = calloc(n ? n : 1, sizeof(*l.warnings))};
    if (!l.items || !l.warnings) {
        kjoin_token_list_release(&l);
        json_object_put(root);
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        json_object *item = json_object_array_get_idx(items, i);
        const char *type = json_object_is_type(item, json_type_object) ? str_of(item, "type") : NULL;
        if (!type || strcmp(type, SECRET_TYPE) != 0)
            continue;
        if (decode_one(item, &l.items[l.n], l.warnings[l.n_warnings], KJOIN_TOKEN_WARNING_MAX))
            l.n++;
        else
            l.n_warnings++;
    }
    json_object_put(root);
    *out = l;
    return KJOIN_OK;
}
