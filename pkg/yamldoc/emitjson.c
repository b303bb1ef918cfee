/* The emitters' output buffer, and JSON trees written as YAML documents by libyaml's emitter: manifests are
 * built as json-c objects and printed in the form charts and kubectl read. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#include <kjoin/private/util.h>

#include "yamldoc.h"

int kjoin_yaml__sink_write(void *data, unsigned char *bytes, size_t n)
{
    kjoin_yaml_sink *s = data;
    if (s->len + n + 1 > s->cap) {
        size_t cap = (s->len + n + 1) * 2;
        char *bigger = malloc(cap);
        if (!bigger) {
            s->failed = true;
            return 0;
        }
        if (s->len)
            memcpy(bigger, s->buf, s->len);
        kjoin_free_wiped(s->buf, s->len);
        s->buf = bigger;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, bytes, n);
    s->len += n;
    s->buf[s->len] = '\0';
    return 1;
}

/* A string a YAML reader would take for something else gets quotes. */
static bool plain_ok(const char *v)
{
    static const char *const special[] = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"};
    if (!*v || !(isalpha((unsigned char)v[0]) || v[0] == '/'))
        return false;
    for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
        if (strcasecmp(v, special[i]) == 0)
            return false;
    return strcspn(v, ":#{}[],&*!|>'\"%@`") == strlen(v);
}

static bool scalar(yaml_emitter_t *e, const char *v, bool is_string)
{
    yaml_event_t ev;
    yaml_scalar_style_t style = !is_string || plain_ok(v) ? YAML_PLAIN_SCALAR_STYLE : YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    return yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)v, (int)strlen(v), 1, 1, style) &&
           yaml_emitter_emit(e, &ev);
}

static bool node(yaml_emitter_t *e, json_object *o)
{
    yaml_event_t ev;
    if (json_object_is_type(o, json_type_object)) {
        if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
            !yaml_emitter_emit(e, &ev))
            return false;
        json_object_object_foreach(o, k, v) {
            if (!scalar(e, k, true) || !node(e, v))
                return false;
        }
        return yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev);
    }
    if (json_object_is_type(o, json_type_array)) {
        if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) ||
            !yaml_emitter_emit(e, &ev))
            return false;
        for (size_t i = 0; i < json_object_array_length(o); i++)
            if (!node(e, json_object_array_get_idx(o, i)))
                return false;
        return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev);
    }
    if (!o)
        return scalar(e, "null", false);
    return scalar(e, json_object_get_string(o), json_object_is_type(o, json_type_string));
}

char *kjoin_yaml__from_json(json_object *const *docs, size_t n)
{
    yaml_emitter_t e;
    yaml_event_t ev;
    kjoin_yaml_sink t = {0};
    if (!yaml_emitter_initialize(&e))
        return NULL;
    yaml_emitter_set_output(&e, kjoin_yaml__sink_write, &t);
    yaml_emitter_set_width(&e, -1);
    bool ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && yaml_emitter_emit(&e, &ev);
    for (size_t i = 0; ok && i < n; i++)
        ok = yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 0) && yaml_emitter_emit(&e, &ev) &&
             node(&e, docs[i]) && yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&e, &ev);
    ok = ok && yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&e, &ev) && yaml_emitter_flush(&e);
    yaml_emitter_delete(&e);
    if (!ok || t.failed) {
        kjoin_free_wiped(t.buf, t.len);
        return NULL;
    }
    return t.buf;
}
