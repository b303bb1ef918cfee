#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "yamldoc.h"

static kjoin_code yaml_error(const yaml_parser_t *p, kjoin_code code, kjoin_err *err)
{
    return kjoin_err_set(err, code, "YAML error at line %zu, column %zu: %s", p->problem_mark.line + 1,
                         p->problem_mark.column + 1, p->problem ? p->problem : "unknown problem");
}

/* One pass over the stream's events before anything is composed: libyaml's
 * cost grows with the square of the nesting, so a deep document must be
 * stopped at the depth limit, not after it has been read. */
static kjoin_code check_bounds(const char *buf, size_t len, kjoin_code code, size_t *problem_line,
                               kjoin_err *err)
{
    if (len > KJOIN_YAML_MAX_BYTES)
        return kjoin_err_set(err, code, "the YAML is %zu bytes: at most %d bytes", len, KJOIN_YAML_MAX_BYTES);
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
    kjoin_code rc = KJOIN_OK;
    for (int depth = 0;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            *problem_line = parser.problem_mark.line;
            rc = yaml_error(&parser, code, err);
            break;
        }
        yaml_event_type_t type = ev.type;
        size_t line = ev.start_mark.line + 1;
        yaml_event_delete(&ev);
        if (type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT)
            depth++;
        else if (type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT)
            depth--;
        if (depth > KJOIN_YAML_MAX_DEPTH) {
            rc = kjoin_err_set(err, code, "the YAML nests deeper than %d levels at line %zu", KJOIN_YAML_MAX_DEPTH,
                               line);
            break;
        }
        if (type == YAML_STREAM_END_EVENT)
            break;
    }
    yaml_parser_delete(&parser);
    return rc;
}

kjoin_code kjoin_yaml__stream_open(kjoin_yaml_stream *s, const char *buf, size_t len, kjoin_code code,
                                   kjoin_err *err)
{
    memset(s, 0, sizeof(*s));
    kjoin_code rc = check_bounds(buf, len, code, &s->problem_line, err);
    if (rc)
        return rc;
    if (!yaml_parser_initialize(&s->parser))
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    yaml_parser_set_input_string(&s->parser, (const unsigned char *)buf, len);
    s->code = code;
    s->open = true;
    return KJOIN_OK;
}

/* A node's tree with its aliases expanded: height and node count,
 * memoised per node. */
typedef struct expanded {
    uint8_t height; /* 0: not measured yet */
    bool on_path;   /* being measured: an alias back to it is a cycle */
    size_t size;
} expanded;

/* Measures node i into shape[], false for a cycle or a height over the
 * limit (the text's limit counts collections; a scalar leaf is one more).
 * The recursion stops at the limit, so a chain of aliases cannot exhaust
 * the stack either. */
static bool measure(yaml_document_t *doc, int i, expanded *shape, int depth)
{
    yaml_node_t *n = yaml_document_get_node(doc, i);
    expanded *e = n ? &shape[i - 1] : NULL;
    if (!e || e->on_path || depth > KJOIN_YAML_MAX_DEPTH + 1)
        return false;
    if (e->height)
        return true;
    e->on_path = true;
    int kids[2], nkids = 0, h = 0;
    size_t size = 1;
    yaml_node_item_t *it = NULL, *end = NULL;
    yaml_node_pair_t *p = NULL, *pend = NULL;
    if (n->type == YAML_SEQUENCE_NODE)
        it = n->data.sequence.items.start, end = n->data.sequence.items.top;
    if (n->type == YAML_MAPPING_NODE)
        p = n->data.mapping.pairs.start, pend = n->data.mapping.pairs.top;
    while ((it && it < end) || (p && p < pend)) {
        if (it)
            kids[0] = *it++, nkids = 1;
        else
            kids[0] = p->key, kids[1] = p->value, nkids = 2, p++;
        for (int k = 0; k < nkids; k++) {
            if (!measure(doc, kids[k], shape, depth + 1))
                return false;
            expanded *c = &shape[kids[k] - 1];
            h = c->height > h ? c->height : h;
            size = c->size > SIZE_MAX / 2 - size ? SIZE_MAX / 2 : size + c->size;
        }
    }
    if (h > KJOIN_YAML_MAX_DEPTH)
        return false;
    e->on_path = false;
    e->height = (uint8_t)(h + 1);
    e->size = size;
    return true;
}

/* Aliases make a tree out of a graph: refused when it has a cycle ("&a
 * [*a]"), nests deeper than the text may, or holds a million nodes more than
 * the text does, so every walker over a document is bounded by its size. */
static kjoin_code check_expanded(yaml_document_t *doc, kjoin_code code, kjoin_err *err)
{
    size_t nodes = (size_t)(doc->nodes.top - doc->nodes.start);
    if (!nodes)
        return KJOIN_OK;
    expanded *shape = calloc(nodes, sizeof(*shape));
    if (!shape)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    bool ok = measure(doc, 1, shape, 1), big = ok && shape[0].size > nodes + KJOIN_YAML_MAX_ALIASED;
    free(shape);
    if (!ok)
        return kjoin_err_set(err, code, "the YAML's aliases refer to themselves or nest deeper than %d levels",
                             KJOIN_YAML_MAX_DEPTH);
    if (big)
        return kjoin_err_set(err, code, "the YAML's aliases expand it by more than %d nodes",
                             KJOIN_YAML_MAX_ALIASED);
    return KJOIN_OK;
}

kjoin_code kjoin_yaml__stream_next(kjoin_yaml_stream *s, kjoin_yaml *y, kjoin_err *err)
{
    memset(y, 0, sizeof(*y));
    if (!yaml_parser_load(&s->parser, &y->doc)) {
        s->problem_line = s->parser.problem_mark.line;
        return yaml_error(&s->parser, s->code, err);
    }
    y->loaded = true;
    kjoin_code rc = check_expanded(&y->doc, s->code, err);
    if (rc)
        kjoin_yaml__release(y);
    return rc;
}

void kjoin_yaml__stream_close(kjoin_yaml_stream *s)
{
    if (s->open)
        yaml_parser_delete(&s->parser);
    s->open = false;
}

kjoin_code kjoin_yaml__each_document(const char *buf, size_t len, kjoin_code code, kjoin_yaml_document_fn fn, void *ctx,
                                     size_t *problem_line, kjoin_err *err)
{
    kjoin_yaml_stream s;
    kjoin_code rc = kjoin_yaml__stream_open(&s, buf, len, code, err);
    while (!rc) {
        kjoin_yaml y;
        if ((rc = kjoin_yaml__stream_next(&s, &y, err)))
            break;
        yaml_node_t *root = kjoin_yaml__root(&y);
        if (root)
            rc = fn(&y, root, ctx, err);
        kjoin_yaml__release(&y);
        if (!root)
            break;
    }
    if (problem_line)
        *problem_line = s.problem_line;
    kjoin_yaml__stream_close(&s);
    return rc;
}

kjoin_code kjoin_yaml__load(kjoin_yaml *y, const char *buf, size_t len, kjoin_code code, kjoin_err *err)
{
    kjoin_yaml_stream s;
    kjoin_yaml rest = {0};
    memset(y, 0, sizeof(*y));
    kjoin_code rc = kjoin_yaml__stream_open(&s, buf, len, code, err);
    if (!rc)
        rc = kjoin_yaml__stream_next(&s, y, err);
    if (!rc && !kjoin_yaml__root(y))
        rc = kjoin_err_set(err, code, "empty YAML document");
    if (!rc)
        rc = kjoin_yaml__stream_next(&s, &rest, err);
    /* One document: a trailing "---" with nothing after it is allowed. */
    yaml_node_t *extra = rc ? NULL : kjoin_yaml__root(&rest);
    if (extra && !kjoin_yaml__is_null(extra))
        rc = kjoin_err_set(err, code, "a second YAML document at line %zu: one document expected",
                           KJOIN_YAML_LINE(extra));
    kjoin_yaml__release(&rest);
    kjoin_yaml__stream_close(&s);
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

yaml_node_t *kjoin_yaml__root(kjoin_yaml *y) { return y->loaded ? yaml_document_get_root_node(&y->doc) : NULL; }

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

bool kjoin_yaml__bool(yaml_node_t *node, bool *out)
{
    kjoin_yaml_value v;
    const char *s = kjoin_yaml__str(node);
    if (!s || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || kjoin_yaml__resolve(s, &v) != KJOIN_YAML_BOOL)
        return false;
    *out = v.truth;
    return true;
}

kjoin_code kjoin_yaml__scalar(kjoin_yaml *y, yaml_node_t *root, const char *what, const char *key, const char **out,
                              kjoin_code code, kjoin_err *err)
{
    yaml_node_t *n = NULL;
    kjoin_code rc = kjoin_yaml__get(y, root, key, &n, code, err);
    *out = NULL;
    if (rc || !n)
        return rc;
    if (!(*out = kjoin_yaml__str(n)))
        return kjoin_err_set(err, code, "%s's %s at line %zu is not a scalar", what, key, KJOIN_YAML_LINE(n));
    return KJOIN_OK;
}

kjoin_code kjoin_yaml__boolean(kjoin_yaml *y, yaml_node_t *map, const char *what, const char *key, int *out,
                               kjoin_code code, kjoin_err *err)
{
    yaml_node_t *n = NULL;
    bool b;
    kjoin_code rc = kjoin_yaml__get(y, map, key, &n, code, err);
    if (rc || !n)
        return rc;
    if (!kjoin_yaml__bool(n, &b))
        return kjoin_err_set(err, code, "%s's %s at line %zu is not true or false", what, key, KJOIN_YAML_LINE(n));
    *out = b;
    return KJOIN_OK;
}

kjoin_code kjoin_yaml__load_kind(kjoin_yaml *y, const char *yaml, size_t len, const char *what, const char *api,
                                 const char *kind, yaml_node_t **root, kjoin_code code, kjoin_err *err)
{
    kjoin_err in;
    const char *a, *k;
    kjoin_code rc = kjoin_yaml__load(y, yaml, len, code, &in);
    if (rc)
        return kjoin_err_set(err, code, "%s is not YAML: %s", what, in.msg);
    *root = kjoin_yaml__root(y);
    if (!*root || (*root)->type != YAML_MAPPING_NODE)
        rc = kjoin_err_set(err, code, "%s is not a mapping", what);
    if (!rc && !(rc = kjoin_yaml__scalar(y, *root, what, "apiVersion", &a, code, err)) &&
        !(rc = kjoin_yaml__scalar(y, *root, what, "kind", &k, code, err)) &&
        (!a || !k || strncmp(a, api, strlen(api)) || strcmp(k, kind)))
        rc = kjoin_err_set(err, code, "%s is not a %s %s", what, api, kind);
    if (rc)
        kjoin_yaml__release(y);
    return rc;
}
