/* A loaded YAML document as a json-c tree, with the values Kubernetes'
 * readers give it: sigs.k8s.io/yaml turns YAML into JSON through go-yaml
 * v2, whose plain scalars kjoin_yaml__resolve reads as it does, and whose
 * keys become strings. A timestamp stays the string it is written as. */
#include <stdlib.h>
#include <string.h>

#include "yamldoc.h"

static kjoin_code scalar(yaml_node_t *n, kjoin_code code, json_object **out, kjoin_err *err)
{
    /* libyaml's loader tags every untagged scalar !!str: the style decides. */
    const char *s = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;
    kjoin_yaml_value v;
    kjoin_yaml_kind kind = n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && strlen(s) == len
                               ? kjoin_yaml__resolve(s, &v)
                               : KJOIN_YAML_STRING;
    *out = NULL;
    switch (kind) {
    case KJOIN_YAML_NULL: return KJOIN_OK;
    case KJOIN_YAML_BOOL: *out = json_object_new_boolean(v.truth); break;
    case KJOIN_YAML_INT:
        *out = v.negative ? json_object_new_int64((int64_t)(0 - v.magnitude))
               : v.magnitude > INT64_MAX ? json_object_new_uint64(v.magnitude)
                                         : json_object_new_int64((int64_t)v.magnitude);
        break;
    case KJOIN_YAML_FLOAT: *out = json_object_new_double(v.d); break;
    case KJOIN_YAML_INF_NAN: return kjoin_err_set(err, code, "%s at line %zu cannot be JSON", s, KJOIN_YAML_LINE(n));
    case KJOIN_YAML_STRING:
    case KJOIN_YAML_TIMESTAMP:
    case KJOIN_YAML_BASE60: *out = json_object_new_string_len(s, (int)len); break;
    }
    return *out ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
}

/* A key as JSON has it: a string; other scalars as they print. */
static kjoin_code key_of(yaml_node_t *k, kjoin_code code, char **out, kjoin_err *err)
{
    json_object *v = NULL;
    if (!k || k->type != YAML_SCALAR_NODE)
        return kjoin_err_set(err, code, "a key at line %zu is not a scalar", k ? KJOIN_YAML_LINE(k) : 0);
    if (!strcmp((const char *)k->data.scalar.value, "<<") && k->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
        return kjoin_err_set(err, code, "a merge key (<<) at line %zu is not supported", KJOIN_YAML_LINE(k));
    kjoin_code rc = scalar(k, code, &v, err);
    if (rc)
        return rc;
    const char *s = v ? json_object_get_string(v) : "null";
    if (memchr(k->data.scalar.value, '\0', k->data.scalar.length))
        rc = kjoin_err_set(err, code, "a key at line %zu holds a NUL byte", KJOIN_YAML_LINE(k));
    else if (!(*out = strdup(s)))
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    json_object_put(v);
    return rc;
}

kjoin_code kjoin_yaml__to_json(kjoin_yaml *y, yaml_node_t *n, kjoin_code code, json_object **out, kjoin_err *err)
{
    kjoin_code rc = KJOIN_OK;
    *out = NULL;
    if (!n)
        return KJOIN_OK;
    switch (n->type) {
    case YAML_SCALAR_NODE:
        return scalar(n, code, out, err);
    case YAML_SEQUENCE_NODE:
        if (!(*out = json_object_new_array()))
            return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        for (size_t i = 0; !rc && i < kjoin_yaml__len(n); i++) {
            json_object *item;
            if (!(rc = kjoin_yaml__to_json(y, kjoin_yaml__item(y, n, i), code, &item, err)))
                json_object_array_add(*out, item);
        }
        break;
    case YAML_MAPPING_NODE:
        if (!(*out = json_object_new_object()))
            return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; !rc && p < n->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(&y->doc, p->key);
            char *key = NULL;
            json_object *value;
            if ((rc = key_of(k, code, &key, err)))
                break;
            if (json_object_object_get_ex(*out, key, NULL))
                rc = kjoin_err_set(err, code, "duplicate key \"%.100s\" at line %zu", key, KJOIN_YAML_LINE(k));
            else if (!(rc = kjoin_yaml__to_json(y, yaml_document_get_node(&y->doc, p->value), code, &value, err)))
                json_object_object_add(*out, key, value);
            free(key);
        }
        break;
    case YAML_NO_NODE: break;
    }
    if (rc) {
        json_object_put(*out);
        *out = NULL;
    }
    return rc;
}

kjoin_code kjoin_yaml__load_json(const char *buf, size_t len, kjoin_code code, json_object **out, kjoin_err *err)
{
    kjoin_yaml y;
    kjoin_code rc = kjoin_yaml__load(&y, buf, len, code, err);
    if (rc)
        return rc;
    rc = kjoin_yaml__to_json(&y, kjoin_yaml__root(&y), code, out, err);
    kjoin_yaml__release(&y);
    return rc;
}
