#ifndef KJOIN_YAMLDOC_H
#define KJOIN_YAMLDOC_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>
#include <yaml.h>

#include <kjoin/private/err.h>

/* Private to pkg/: a loaded YAML document and lookups that refuse
 * ambiguity, shared by the kubeconfig and config modules. */
typedef struct kjoin_yaml {
    yaml_document_t doc;
    bool loaded;
} kjoin_yaml;

/* Every YAML kjoin reads goes through these, so every reader stops at once
 * on hostile input: more than KJOIN_YAML_MAX_BYTES, nesting deeper than
 * KJOIN_YAML_MAX_DEPTH (libyaml's cost grows with the square of the depth),
 * aliases that refer to themselves, or aliases that expand the document by
 * more than KJOIN_YAML_MAX_ALIASED nodes ("billion laughs"). A document
 * loaded here can be walked recursively, aliases and all. */
#define KJOIN_YAML_MAX_BYTES (1024 * 1024)
#define KJOIN_YAML_MAX_DEPTH 64
#define KJOIN_YAML_MAX_ALIASED 1000000

/* A stream of documents ("---"). */
typedef struct kjoin_yaml_stream {
    yaml_parser_t parser;
    kjoin_code code;
    size_t problem_line; /* 0-based line of the last syntax error */
    bool open;
} kjoin_yaml_stream;

/* Checks the bounds of the whole stream, then opens it. Errors: code. */
kjoin_code kjoin_yaml__stream_open(kjoin_yaml_stream *s, const char *buf, size_t len, kjoin_code code,
                                   kjoin_err *err);
/* The next document; its root is NULL at the end of the stream. */
kjoin_code kjoin_yaml__stream_next(kjoin_yaml_stream *s, kjoin_yaml *y, kjoin_err *err);
void kjoin_yaml__stream_close(kjoin_yaml_stream *s);

/* Calls fn on the root of each document of buf in turn (an empty document's
 * root is a null scalar) until fn returns an error; the stream's own errors
 * are code, with *problem_line (may be NULL) the 0-based line of a syntax
 * error. The one loop over a stream of documents. */
typedef kjoin_code (*kjoin_yaml_document_fn)(kjoin_yaml *y, yaml_node_t *root, void *ctx, kjoin_err *err);
kjoin_code kjoin_yaml__each_document(const char *buf, size_t len, kjoin_code code, kjoin_yaml_document_fn fn, void *ctx,
                                     size_t *problem_line, kjoin_err *err);

/* Loads the single YAML document in buf (a second one is refused). Errors
 * (with line and column): code as given. */
kjoin_code kjoin_yaml__load(kjoin_yaml *y, const char *buf, size_t len, kjoin_code code,
                            kjoin_err *err);
void kjoin_yaml__release(kjoin_yaml *y);
yaml_node_t *kjoin_yaml__root(kjoin_yaml *y);

/* Looks key up in a mapping. *out is NULL when the key is absent.
 * Errors: code when node is not a mapping or the key appears twice. */
kjoin_code kjoin_yaml__get(kjoin_yaml *y, yaml_node_t *map, const char *key, yaml_node_t **out,
                           kjoin_code code, kjoin_err *err);

/* The scalar at key of map into *out (NULL when absent or null is not
 * asked for: absent); what names the document in messages ("the kubelet
 * configuration"). Errors: code (not a scalar). */
kjoin_code kjoin_yaml__scalar(kjoin_yaml *y, yaml_node_t *map, const char *what, const char *key, const char **out,
                              kjoin_code code, kjoin_err *err);
/* A boolean field of map, as Kubernetes reads it (YAML 1.1's words too):
 * *out 1 or 0, left as it is when the field is absent. Errors: code. */
kjoin_code kjoin_yaml__boolean(kjoin_yaml *y, yaml_node_t *map, const char *what, const char *key, int *out,
                               kjoin_code code, kjoin_err *err);
/* Loads the one document in buf, which must be a mapping whose apiVersion
 * starts with api and whose kind is kind; on success the caller releases
 * *y. Errors: code. */
kjoin_code kjoin_yaml__load_kind(kjoin_yaml *y, const char *buf, size_t len, const char *what, const char *api,
                                 const char *kind, yaml_node_t **root, kjoin_code code, kjoin_err *err);

/* The string of a scalar node (NULL when node is not a scalar or holds a NUL
 * byte); borrowed from the document. */
const char *kjoin_yaml__str(yaml_node_t *node);

/* Whether a scalar is YAML's null ("", "~", "null"). */
bool kjoin_yaml__is_null(yaml_node_t *node);

/* Number of items of a sequence node (0 for anything else). */
size_t kjoin_yaml__len(yaml_node_t *seq);
/* Item i of a sequence node. */
yaml_node_t *kjoin_yaml__item(kjoin_yaml *y, yaml_node_t *seq, size_t i);
/* 1-based line and column of a node, for messages. */
#define KJOIN_YAML_LINE(n) ((n)->start_mark.line + 1)
#define KJOIN_YAML_COL(n) ((n)->start_mark.column + 1)

/* Output buffer for libyaml's emitter (yaml_emitter_set_output with
 * kjoin_yaml__sink_write). It may hold a token: every copy left behind by
 * growth is wiped. */
typedef struct kjoin_yaml_sink {
    char *buf;
    size_t len, cap;
    bool failed;
} kjoin_yaml_sink;
int kjoin_yaml__sink_write(void *data, unsigned char *bytes, size_t n);

/* What go-yaml v2 reads a plain scalar as (pkg/yamldoc/resolve.c). */
typedef enum kjoin_yaml_kind {
    KJOIN_YAML_STRING,
    KJOIN_YAML_NULL,      /* "", ~, null */
    KJOIN_YAML_BOOL,      /* YAML 1.1's: true, yes, on, y, ... */
    KJOIN_YAML_INT,       /* Go's ParseInt or ParseUint with base 0, "_" dropped */
    KJOIN_YAML_FLOAT,     /* a finite decimal float */
    KJOIN_YAML_INF_NAN,   /* .inf, -.inf, .nan: no JSON for them */
    KJOIN_YAML_TIMESTAMP, /* read as a string here; its encoder quotes it */
    KJOIN_YAML_BASE60     /* a string to the resolver; its encoder quotes it */
} kjoin_yaml_kind;
typedef struct kjoin_yaml_value {
    bool truth;           /* BOOL */
    bool negative;        /* INT: the sign and */
    uint64_t magnitude;   /* the magnitude (a negative one is at most 2^63) */
    double d;             /* FLOAT */
} kjoin_yaml_value;
/* The kind of the plain scalar v, and its value into *value (may be NULL).
 * client-go's encoder quotes a string exactly when this is not STRING. */
kjoin_yaml_kind kjoin_yaml__resolve(const char *v, kjoin_yaml_value *value);
/* A scalar go-yaml v2 reads as a bool: plain, and one of YAML 1.1's words. */
bool kjoin_yaml__bool(yaml_node_t *node, bool *out);

/* A node as JSON, with the values sigs.k8s.io/yaml (go-yaml v2, YAML 1.1)
 * gives it: plain scalars resolved to null, booleans (yes/no/on/off too),
 * integers (0x, 0o, 0b, leading 0) and floats; every key a string; merge
 * keys and .inf/.nan refused. *out is NULL for a null node. Errors: code. */
kjoin_code kjoin_yaml__to_json(kjoin_yaml *y, yaml_node_t *n, kjoin_code code, json_object **out, kjoin_err *err);
/* The one document in buf, as JSON (kjoin_yaml__load, then the above). */
kjoin_code kjoin_yaml__load_json(const char *buf, size_t len, kjoin_code code, json_object **out, kjoin_err *err);

/* The JSON trees as a stream of YAML documents ("---" each); strings YAML
 * would read as something else are quoted. Newly-allocated; NULL when out
 * of memory. */
char *kjoin_yaml__from_json(json_object *const *docs, size_t n);

#endif
