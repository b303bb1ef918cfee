#include <string.h>

#include "yamldoc.h"

kjoin_code kjoin_yaml__load(kjoin_yaml *y, const char *buf, size_t len, kjoin_code code,
                            kjoin_err *err)
{
    yaml_parser_t parser;
    memset(y, 0, sizeof(*y));
    if (!yaml_parser_initialize(&parser))
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
    kjoin_code rc = KJOIN_OK;
    if (!yaml_parser_load(&parser, &y->doc)) {
        rc = kjoin_err_set(err, code, "YAML error at line %zu, column %zu: %s",
                           parser.problem_mark.line + 1, parser.problem_mark.column + 1,
                           parser.problem ? parser.problem : "unknown problem");
    } else {
        y->loaded = true;
        if (!yaml_document_get_root_node(&y->doc))
            rc = kjoin_err_set(err, code, "empty YAML document");
    }
    yaml_parser_delete(&parser);
    if (rc)
        kjoin_yaml__release(y);
    return rc;
}

void kjoin_yaml__release(kjoin_yaml *y)
{
    if (y->loaded)
        yaml_document_delete(&y->doc);
    y->loaded = false;
}

yaml_node_t *kjoin_yaml__root(kjoin_yaml *y) { return yaml_document_get_root_node(&y->doc); }

kjoin_code kjoin_yaml__get(kjoin_yaml *y, yaml_node_t *map, const char *key, yaml_node_t **out,
                           kjoin_code code, kjoin_err *err)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return kjoin_err_set(err, code, "expected a mapping around \"%s\" at line %zu", key,
                             map ? map->start_mark.line + 1 : 0);
    yaml_node_t *found = NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&y->doc, p->key);
        const char *s = kjoin_yaml__str(k);
        if (!s || strcmp(s, key) != 0)
            continue;
        if (found)
            return kjoin_err_set(err, code, "duplicate key \"%s\" at line %zu", key,
                                 k->start_mark.line + 1);
        found = yaml_document_get_node(&y->doc, p->value);
    }
    *out = found;
    return KJOIN_OK;
}

const char *kjoin_yaml__str(yaml_node_t *node)
{
    if (!node || node->type != YAML_SCALAR_NODE)
        return NULL;
    const char *s = (const char *)node->data.scalar.value;
    return strlen(s) == node->data.scalar.length ? s : NULL;
}

bool kjoin_yaml__is_null(yaml_node_t *node)
{
    if (!node)
        return true;
    if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    const char *s = (const char *)node->data.scalar.value;
    return !*s || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
           strcmp(s, "NULL") == 0;
}

size_t kjoin_yaml__len(yaml_node_t *seq)
{
    if (!seq || seq->type != YAML_SEQUENCE_NODE)
        return 0;
    return (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

yaml_node_t *kjoin_yaml__item(kjoin_yaml *y, yaml_node_t *seq, size_t i)
{
    return yaml_document_get_node(&y->doc, seq->data.sequence.items.start[i]);
}
