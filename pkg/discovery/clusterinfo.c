#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include <kjoin/discovery.h>
#include <kjoin/jws.h>
#include <kjoin/util.h>

#define JWS_KEY_PREFIX "jws-kubeconfig-"

void kjoin_cluster_info_release(kjoin_cluster_info *ci)
{
    if (!ci)
        return;
    free(ci->kubeconfig);
    free(ci->jws);
    memset(ci, 0, sizeof(*ci));
}

/* A string member of obj: NULL with *present false when absent. */
static kjoin_code get_string(json_object *obj, const char *key, bool *present, char **out,
                             size_t *out_len, kjoin_err *err)
{
    json_object *v = NULL;
    *present = json_object_object_get_ex(obj, key, &v);
    *out = NULL;
    if (!*present)
        return KJOIN_OK;
    if (!json_object_is_type(v, json_type_string))
        return kjoin_err_set(err, KJOIN_E_TRUST, "cluster-info data.%s is not a string", key);
    size_t len = (size_t)json_object_get_string_len(v);
    const char *s = json_object_get_string(v);
    if (memchr(s, '\0', len))
        return kjoin_err_set(err, KJOIN_E_TRUST, "cluster-info data.%s holds a NUL byte", key);
    if (!(*out = strndup(s, len)))
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    if (out_len)
        *out_len = len;
    return KJOIN_OK;
}

kjoin_code kjoin_cluster_info_parse(const char *json, size_t len, const char *token_id,
                                    kjoin_cluster_info *out, kjoin_err *err)
{
    if (len > INT32_MAX)
        return kjoin_err_set(err, KJOIN_E_TRUST, "cluster-info too large");
    json_tokener *tk = json_tokener_new();
    if (!tk)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    json_tokener_set_flags(tk, JSON_TOKENER_STRICT);
    json_object *root = json_tokener_parse_ex(tk, json, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tk);
    /* Exactly one document: json-c stops after the first object, so what
     * follows it (a NUL, garbage, a second object) is checked here. */
    size_t end = root ? json_tokener_get_parse_end(tk) : len;
    json_tokener_free(tk);
    while (end < len && strchr(" \t\r\n", json[end]) && json[end])
        end++;
    if (root && end != len) {
        json_object_put(root);
        return kjoin_err_set(err, KJOIN_E_TRUST, "cluster-info has %zu bytes after its JSON object", len - end);
    }

    kjoin_code rc = KJOIN_OK;
    kjoin_cluster_info ci = {0};
    json_object *kind = NULL, *data = NULL;
    bool present = false;
    if (!root)
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "cluster-info is not valid JSON: %s",
                           jerr == json_tokener_continue ? "unexpected end of input"
                                                         : json_tokener_error_desc(jerr));
    else if (!json_object_is_type(root, json_type_object) ||
             !json_object_object_get_ex(root, "kind", &kind) ||
             !json_object_is_type(kind, json_type_string) ||
             strcmp(json_object_get_string(kind), "ConfigMap") != 0)
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "cluster-info is not a ConfigMap");
    else if (!json_object_object_get_ex(root, "data", &data) ||
             !json_object_is_type(data, json_type_object))
        rc = kjoin_err_set(err, KJOIN_E_TRUST, "cluster-info ConfigMap has no data");
    else if ((rc = get_string(data, "kubeconfig", &present, &ci.kubeconfig, &ci.kubeconfig_len, err)))
        ;
    else if (!present || ci.kubeconfig_len == 0)
        rc = kjoin_err_set(err, KJOIN_E_TRUST,
                           "cluster-info has no kubeconfig: this API server is not set up for token discovery");
    else if (token_id) {
        char key[sizeof(JWS_KEY_PREFIX) + 16];
        snprintf(key, sizeof(key), JWS_KEY_PREFIX "%s", token_id);
        rc = get_string(data, key, &present, &ci.jws, NULL, err);
    }
    json_object_put(root);
    if (rc) {
        kjoin_cluster_info_release(&ci);
        return rc;
    }
    *out = ci;
    return KJOIN_OK;
}

static int by_id(const void *a, const void *b)
{
    return strcmp(((const kjoin_token *)a)->id, ((const kjoin_token *)b)->id);
}

kjoin_code kjoin_cluster_info_sign(const char *kubeconfig, size_t len, const kjoin_token *tokens,
                                   size_t n_tokens, char **out, kjoin_err *err)
{
    /* Go marshals map keys sorted, so the signatures come out ordered by id. */
    kjoin_token *sorted = calloc(n_tokens ? n_tokens : 1, sizeof(*sorted));
    if (!sorted)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    if (n_tokens)
        memcpy(sorted, tokens, n_tokens * sizeof(*sorted));
    qsort(sorted, n_tokens, sizeof(*sorted), by_id);

    kjoin_code rc = KJOIN_OK;
    json_object *root = json_object_new_object(), *meta = json_object_new_object(),
                *data = json_object_new_object();
    if (!root || !meta || !data) {
        json_object_put(meta);
        json_object_put(data);
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        goto out;
    }
    json_object_object_add(root, "kind", json_object_new_string("ConfigMap"));
    json_object_object_add(root, "apiVersion", json_object_new_string("v1"));
    json_object_object_add(meta, "name", json_object_new_string("cluster-info"));
    json_object_object_add(meta, "namespace", json_object_new_string("kube-public"));
    json_object_object_add(root, "metadata", meta);
    json_object_object_add(root, "data", data);
    for (size_t i = 0; i < n_tokens && !rc; i++) {
        if (i && strcmp(sorted[i].id, sorted[i - 1].id) == 0) {
            rc = kjoin_err_set(err, KJOIN_E_USAGE, "token id %s given twice", sorted[i].id);
            break;
        }
        char *sig = NULL;
        rc = kjoin_jws_sign(kubeconfig, len, sorted[i].id, sorted[i].secret, KJOIN_TOKEN_SECRET_LEN,
                            &sig, err);
        if (rc)
            break;
        char key[sizeof(JWS_KEY_PREFIX) + 16];
        snprintf(key, sizeof(key), JWS_KEY_PREFIX "%s", sorted[i].id);
        json_object_object_add(data, key, json_object_new_string(sig));
        free(sig);
    }
    if (!rc) {
        json_object_object_add(data, "kubeconfig", json_object_new_string_len(kubeconfig, (int)len));
        const char *s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE);
        size_t n = strlen(s);
        char *copy = malloc(n + 2);
        if (!copy) {
            rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        } else {
            memcpy(copy, s, n);
            memcpy(copy + n, "\n", 2);
            *out = copy;
        }
    }
out:
    json_object_put(root);
    for (size_t i = 0; i < n_tokens; i++)
        kjoin_token_clear(&sorted[i]);
    free(sorted);
    return rc;
}
