/* Reading the API server's JSON, which is untrusted: a member of the
 * expected type, or NULL. */
#include <stdint.h>
#include <string.h>

#include <json-c/json.h>

#include <kjoin/private/util.h>

json_object *kjoin_json_at(json_object *o, const char *key)
{
    json_object *v = NULL;
    return o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

json_object *kjoin_json_obj(json_object *o, const char *key)
{
    json_object *v = kjoin_json_at(o, key);
    return v && json_object_is_type(v, json_type_object) ? v : NULL;
}

const char *kjoin_json_str(json_object *o, const char *key)
{
    json_object *v = kjoin_json_at(o, key);
    if (!v || !json_object_is_type(v, json_type_string))
        return NULL;
    const char *s = json_object_get_string(v);
    return strlen(s) == (size_t)json_object_get_string_len(v) ? s : NULL; /* no embedded NUL */
}

json_object *kjoin_json_whole(const char *text, size_t len)
{
    json_tokener *tok = json_tokener_new();
    json_object *j = tok && len <= INT32_MAX ? json_tokener_parse_ex(tok, text, (int)len) : NULL;
    if (tok && (json_tokener_get_error(tok) != json_tokener_success || json_tokener_get_parse_end(tok) != len)) {
        json_object_put(j);
        j = NULL;
    }
    json_tokener_free(tok);
    return j;
}
