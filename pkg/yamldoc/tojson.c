/* A loaded YAML document as a json-c tree, with the values Kubernetes'
 * readers give it: sigs.k8s.io/yaml turns YAML into JSON through go-yaml
 * v2, whose plain scalars follow YAML 1.1 (yes/no/on/off are booleans,
 * 0x1f and 0o17 integers), and whose keys become strings. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "yamldoc.h"

static bool one_of(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (!strcmp(s, *words))
            return true;
    return false;
}

/* go-yaml v2's integer forms: [-+]digits, 0x.., 0o.. or a leading 0 (octal), 0b..; "_" allowed between. */
static bool as_int(const char *s, int64_t *out)
{
    char clean[80];
    size_t n = 0;
    for (const char *c = s; *c; c++)
        if (*c != '_') {
            if (n + 1 >= sizeof(clean))
                return false;
            clean[n++] = *c;
        }
    clean[n] = '\0';
    const char *digits = clean + (clean[0] == '-' || clean[0] == '+');
    int base = 10;
    if (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
        base = 16, digits += 2;
    else if (digits[0] == '0' && (digits[1] == 'b' || digits[1] == 'B'))
        base = 2, digits += 2;
    else if (digits[0] == '0' && (digits[1] == 'o' || digits[1] == 'O'))
        base = 8, digits += 2;
    else if (digits[0] == '0' && digits[1])
        base = 8, digits += 1;
    if (!*digits || strspn(digits, "0123456789abcdefABCDEF") != strlen(digits))
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(digits, &end, base);
    if (*end || errno || v > (clean[0] == '-' ? (unsigned long long)INT64_MAX + 1 : (unsigned long long)INT64_MAX))
        return false;
    *out = clean[0] == '-' ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

/* go-yaml v2's float form: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool as_float(const char *s, double *out)
{
    const char *c = s + (*s == '-' || *s == '+');
    size_t whole = strspn(c, "0123456789"), frac = 0;
    c += whole;
    if (*c == '.')
        frac = strspn(++c, "0123456789"), c += frac;
    if (!whole && !frac)
        return false;
    if (*c == 'e' || *c == 'E') {
        c += 1 + (c[1] == '-' || c[1] == '+');
        size_t exp = strspn(c, "0123456789");
        if (!exp)
            return false;
        c += exp;
    }
    if (*c)
        return false;
    *out = strtod(s, NULL);
    return isfinite(*out);
}

static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
static const char *const trues[] = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", NULL};
static const char *const falses[] = {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", NULL};

static kjoin_code scalar(yaml_node_t *n, kjoin_code code, json_object **out, kjoin_err *err)
{
    /* libyaml's loader tags every untagged scalar !!str: the style decides. */
    const char *s = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;
    int64_t i;
    double d;
    *out = NULL;
    if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && strlen(s) == len) {
        if (one_of(s, nulls))
            return KJOIN_OK;
        if (one_of(s, trues) || one_of(s, falses)) {
            *out = json_object_new_boolean(one_of(s, trues));
            goto made;
        }
        if (as_int(s, &i)) {
            *out = json_object_new_int64(i);
            goto made;
        }
        if (as_float(s, &d)) {
            *out = json_object_new_double(d);
            goto made;
        }
        if (one_of(s, (const char *const[]){".inf", ".Inf", ".INF", "+.inf", "-.inf", ".nan", ".NaN", ".NAN", NULL}))
            return kjoin_err_set(err, code, "%s at line %zu cannot be JSON", s, KJOIN_YAML_LINE(n));
    }
    *out = json_object_new_string_len(s, (int)len);
made:
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
