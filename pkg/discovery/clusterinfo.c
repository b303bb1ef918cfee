#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include <kjoin/private/discovery.h>
#include <kjoin/private/jws.h>
#include <kjoin/private/util.h>

#include "internal.h"

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

/* ---- parsing as the bytes arrive ------------------------------------------
 * json-c parses the ConfigMap incrementally. The value of data.kubeconfig,
 * nearly all of a large cluster-info, is set aside as it streams past (json-c
 * is shown the marker "\u0000" in its place, a value no kubeconfig may hold)
 * and decoded by json-c in pieces of about PIECE bytes, cut only after an
 * unescaped byte. So one decoded copy is held, or none when a re-fetch is
 * only compared with the kubeconfig expected. Which value is set aside is
 * found by following strings, nesting and keys: json-c still checks every
 * byte, the set-aside ones included. */

#define PIECE 16384
#define MARKER "\\u0000"
#define KEY_MAX 64 /* raw bytes: "kubeconfig" with every letter escaped is 60 */

struct kjoin_discovery__ci {
    json_tokener *tok, *piece_tok;
    json_object *root;
    size_t trailing;          /* bytes after the object, from the first that is not white space */
    kjoin_code failed;        /* why the input is refused (msg says how), or KJOIN_OK */
    char msg[160];
    /* Where the bytes are: inside a string (and an escape of it), how deep. */
    bool in_string, escape;
    unsigned hex_left;        /* hex digits of a \u escape still to come */
    unsigned depth;
    bool started;             /* the outermost value has begun */
    bool closed;              /* the byte just followed closed the outermost object */
    bool key_next[3];         /* at depth 1 and 2, objects only: the next string is a key */
    bool is_object[3];
    char key[KEY_MAX + 2];    /* the key being read at depth 1 or 2 (raw bytes, quoted) */
    size_t key_len;
    bool reading_key;
    bool data_key;            /* the last key at depth 1 was "data" */
    bool in_data;             /* the object at depth 2 is data's */
    bool kubeconfig_key;      /* the last key at depth 2 (in data) was "kubeconfig" */
    /* The kubeconfig set aside: raw (escaped) bytes of the current piece, and
     * the decoded value, kept or compared with expect. */
    bool aside, was_aside;
    char *piece;
    size_t piece_len, piece_cap;
    char *value;
    size_t value_len, value_cap;
    const char *expect;       /* then value_len counts, and differs says whether it was expect so far */
    size_t expect_len;
    bool differs;
    bool nul;                 /* the decoded value holds a NUL byte */
};

static void ci_fail(kjoin_discovery__ci *p, kjoin_code code, const char *msg)
{
    if (p->failed)
        return; /* the first reason stands */
    snprintf(p->msg, sizeof(p->msg), "%s", msg);
    p->failed = code;
}

kjoin_discovery__ci *kjoin_discovery__ci_new(const char *expect, size_t expect_len)
{
    kjoin_discovery__ci *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->tok = json_tokener_new();
    p->piece_tok = json_tokener_new();
    if (!p->tok || !p->piece_tok) {
        kjoin_discovery__ci_free(p);
        return NULL;
    }
    json_tokener_set_flags(p->tok, JSON_TOKENER_STRICT);
    json_tokener_set_flags(p->piece_tok, JSON_TOKENER_STRICT);
    p->expect = expect;
    p->expect_len = expect_len;
    return p;
}

void kjoin_discovery__ci_free(kjoin_discovery__ci *p)
{
    if (!p)
        return;
    if (p->tok)
        json_tokener_free(p->tok);
    if (p->piece_tok)
        json_tokener_free(p->piece_tok);
    json_object_put(p->root);
    free(p->piece);
    free(p->value);
    free(p);
}

static bool grow(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 4096;
    while (c < need)
        c *= 2;
    char *bigger = realloc(*buf, c);
    if (!bigger)
        return false;
    *buf = bigger;
    *cap = c;
    return true;
}

/* Decodes the raw bytes of the piece with json-c (as the string literal
 * they are part of), then keeps or compares them. */
static void flush_piece(kjoin_discovery__ci *p)
{
    if (!p->piece_len || p->failed)
        return;
    p->piece[0] = '"';
    p->piece[p->piece_len] = '"';
    json_tokener_reset(p->piece_tok);
    json_object *o = json_tokener_parse_ex(p->piece_tok, p->piece, (int)p->piece_len + 1);
    p->piece_len = 0;
    if (!o || !json_object_is_type(o, json_type_string)) {
        enum json_tokener_error e = json_tokener_get_error(p->piece_tok);
        char m[120];
        snprintf(m, sizeof(m), "cluster-info is not valid JSON: %s",
                 e == json_tokener_success ? "bad string" : json_tokener_error_desc(e));
        json_object_put(o);
        ci_fail(p, KJOIN_E_TRUST, m);
        return;
    }
    const char *s = json_object_get_string(o);
    size_t n = (size_t)json_object_get_string_len(o);
    p->nul = p->nul || memchr(s, '\0', n);
    if (p->expect) {
        p->differs = p->differs || n > p->expect_len - p->value_len || memcmp(p->expect + p->value_len, s, n) != 0;
        p->value_len += n; /* past expect_len only once differs is set */
    } else if (!grow(&p->value, &p->value_cap, p->value_len + n + 1)) {
        ci_fail(p, KJOIN_E_OTHER, "out of memory");
    } else {
        memcpy(p->value + p->value_len, s, n);
        p->value_len += n;
        p->value[p->value_len] = '\0';
    }
    json_object_put(o);
}

/* One raw byte of the set-aside string (not its closing quote). */
static void aside_byte(kjoin_discovery__ci *p, char c)
{
    if (!grow(&p->piece, &p->piece_cap, p->piece_len + 2)) {
        ci_fail(p, KJOIN_E_OTHER, "out of memory");
        return;
    }
    if (!p->piece_len)
        p->piece_len = 1; /* room for the opening quote */
    p->piece[p->piece_len++] = c;
    if (p->hex_left && !isxdigit((unsigned char)c)) {
        flush_piece(p); /* json-c names the broken escape */
        ci_fail(p, KJOIN_E_TRUST, "cluster-info is not valid JSON: invalid string sequence");
        return;
    }
    if (p->hex_left) {
        p->hex_left--;
        return;
    }
    if (p->escape) {
        p->escape = false;
        p->hex_left = c == 'u' ? 4 : 0;
        return;
    }
    if (c == '\\') {
        p->escape = true;
        return;
    }
    /* Cut only after an unescaped byte: never inside an escape, nor between
     * the two escapes of a surrogate pair, which are adjacent. */
    if (p->piece_len >= PIECE)
        flush_piece(p);
}

/* Whether the key just read is want. A key spelled with escapes is decoded
 * by json-c: "d\u0061ta" is data to json-c, so it must be to us too, or a
 * value set aside could be taken for the one json-c kept. */
static bool key_is(kjoin_discovery__ci *p, const char *want)
{
    if (p->key_len > KEY_MAX)
        return false;
    if (!memchr(p->key + 1, '\\', p->key_len))
        return p->key_len == strlen(want) && memcmp(p->key + 1, want, p->key_len) == 0;
    p->key[0] = p->key[p->key_len + 1] = '"';
    json_tokener_reset(p->piece_tok); /* free: nothing is set aside while a key is read */
    json_object *o = json_tokener_parse_ex(p->piece_tok, p->key, (int)p->key_len + 2);
    bool is = o && json_object_is_type(o, json_type_string) &&
              (size_t)json_object_get_string_len(o) == strlen(want) && strcmp(json_object_get_string(o), want) == 0;
    json_object_put(o);
    return is;
}

static void key_done(kjoin_discovery__ci *p)
{
    if (p->depth == 1)
        p->data_key = key_is(p, "data");
    else if (p->depth == 2 && p->in_data)
        p->kubeconfig_key = key_is(p, "kubeconfig");
    p->reading_key = false;
}

/* Follows one byte outside the set-aside value; true when it starts it. */
static bool follow(kjoin_discovery__ci *p, char c)
{
    if (p->in_string) {
        if (p->escape)
            p->escape = false;
        else if (c == '\\')
            p->escape = true;
        else if (c == '"') {
            p->in_string = false;
            if (p->reading_key)
                key_done(p);
            return false;
        }
        if (p->reading_key && p->key_len <= KEY_MAX)
            p->key[1 + p->key_len++] = c;
        return false;
    }
    unsigned d = p->depth;
    /* Only an object can be a ConfigMap. Anything else is refused at its
     * first byte, so json-c never parses past a value whose end only it
     * would know (the answer is then the same however the bytes are cut). */
    if (!p->started && (!c || !strchr(" \t\r\n", c))) {
        p->started = true;
        if (c != '{') {
            ci_fail(p, KJOIN_E_TRUST, "cluster-info is not a ConfigMap: the body is not a JSON object");
            return false;
        }
    }
    switch (c) {
    case '"':
        if (d == 2 && p->in_data && !p->key_next[2] && p->kubeconfig_key) {
            p->kubeconfig_key = false;
            return true;
        }
        p->in_string = true;
        p->reading_key = (d == 1 || d == 2) && p->is_object[d] && p->key_next[d];
        p->key_len = 0;
        break;
    case '{':
    case '[':
        if (d == 1)
            p->in_data = c == '{' && p->data_key && !p->key_next[1];
        p->depth++;
        if (p->depth <= 2) {
            p->is_object[p->depth] = c == '{';
            p->key_next[p->depth] = c == '{';
        }
        break;
    case '}':
    case ']':
        if (p->depth)
            p->depth--;
        p->closed = d == 1;
        break;
    case ':':
        if (d <= 2)
            p->key_next[d] = false;
        break;
    case ',':
        if (d <= 2)
            p->key_next[d] = p->is_object[d];
        break;
    default:
        break;
    }
    return false;
}

/* Hands len bytes to json-c until it has the whole object; then counts
 * what follows it (json-c is never shown it, so the same bytes get the same
 * answer however the network cut them). */
static void to_json_c(kjoin_discovery__ci *p, const char *b, size_t len)
{
    if (p->failed || !len)
        return;
    if (p->root) {
        for (size_t i = 0; i < len; i++)
            if (p->trailing || !b[i] || !strchr(" \t\r\n", b[i]))
                p->trailing++;
        return;
    }
    p->root = json_tokener_parse_ex(p->tok, b, (int)len);
    enum json_tokener_error e = json_tokener_get_error(p->tok);
    if (!p->root && e != json_tokener_continue) {
        char m[120];
        snprintf(m, sizeof(m), "cluster-info is not valid JSON: %s", json_tokener_error_desc(e));
        ci_fail(p, KJOIN_E_TRUST, m);
        return;
    }
    if (p->root) {
        size_t end = json_tokener_get_parse_end(p->tok);
        to_json_c(p, b + end, len - end);
    }
}

void kjoin_discovery__ci_feed(kjoin_discovery__ci *p, const char *data, size_t len)
{
    size_t start = 0; /* of the bytes not yet handed to json-c */
    for (size_t i = 0; i < len && !p->failed; i++) {
        char c = data[i];
        if (!p->aside) {
            if (p->root)
                continue; /* trailing: counted when handed on below */
            bool starts = follow(p, c);
            if (!starts && !p->closed)
                continue;
            /* The object ends, or the value starts: json-c gets all up to
             * here (the value's opening quote included), then the marker. */
            to_json_c(p, data + start, i + 1 - start);
            start = i + 1;
            p->closed = false;
            if (!starts || p->root)
                continue;
            to_json_c(p, MARKER, sizeof(MARKER) - 1);
            p->aside = p->was_aside = true;
            p->escape = false;
            p->hex_left = 0;
            p->piece_len = 0;
            p->value_len = 0; /* a repeated key: the last one counts, as in json-c */
            p->differs = false;
            p->nul = false;
            continue;
        }
        if (c == '"' && !p->escape && !p->hex_left) {
            flush_piece(p);
            p->aside = false;
            start = i; /* the closing quote goes to json-c */
            continue;
        }
        /* Plain bytes are taken a run at a time (memchr: up to the next
         * backslash, then the quote within that), all but the last. */
        if (!p->escape && !p->hex_left && c != '\\' && p->piece_len + 2 < PIECE) {
            size_t window = len - i < PIECE - p->piece_len - 2 ? len - i : PIECE - p->piece_len - 2;
            const char *b = memchr(data + i, '\\', window);
            size_t run = b ? (size_t)(b - (data + i)) : window;
            const char *q = memchr(data + i, '"', run);
            run = q ? (size_t)(q - (data + i)) : run;
            if (run > 1 && grow(&p->piece, &p->piece_cap, p->piece_len + run + 2)) {
                if (!p->piece_len)
                    p->piece_len = 1;
                memcpy(p->piece + p->piece_len, data + i, run - 1);
                p->piece_len += run - 1;
                i += run - 1;
                c = data[i];
            }
        }
        aside_byte(p, c);
        start = i + 1;
    }
    if (!p->aside && !p->failed && start < len)
        to_json_c(p, data + start, len - start);
}

kjoin_code kjoin_discovery__ci_finish(kjoin_discovery__ci *p, const char *token_id, kjoin_cluster_info *out,
                                      bool *same, kjoin_err *err)
{
    if (p->failed)
        return kjoin_err_set(err, p->failed, "%s", p->msg);
    if (!p->root)
        return kjoin_err_set(err, KJOIN_E_TRUST, "cluster-info is not valid JSON: unexpected end of input");
    if (p->trailing)
        return kjoin_err_set(err, KJOIN_E_TRUST, "cluster-info is not valid JSON: %zu bytes after its object",
                             p->trailing);
    json_object *root = p->root, *kind = NULL, *data = NULL, *kc = NULL;
    if (!json_object_is_type(root, json_type_object) || !json_object_object_get_ex(root, "kind", &kind) ||
        !json_object_is_type(kind, json_type_string) || strcmp(json_object_get_string(kind), "ConfigMap") != 0)
        return kjoin_err_set(err, KJOIN_E_TRUST, "cluster-info is not a ConfigMap");
    if (!json_object_object_get_ex(root, "data", &data) || !json_object_is_type(data, json_type_object))
        return kjoin_err_set(err, KJOIN_E_TRUST, "cluster-info ConfigMap has no data");
    kjoin_cluster_info ci = {0};
    bool present = json_object_object_get_ex(data, "kubeconfig", &kc);
    /* The marker: the value set aside is the one json-c kept (the last). */
    bool aside = p->was_aside && present && json_object_is_type(kc, json_type_string) &&
                 json_object_get_string_len(kc) == 1 && json_object_get_string(kc)[0] == '\0';
    kjoin_code rc = KJOIN_OK;
    if (aside && p->nul)
        return kjoin_err_set(err, KJOIN_E_TRUST, "cluster-info data.kubeconfig holds a NUL byte");
    if (aside && p->expect) {
        ci.kubeconfig_len = p->value_len;
        *same = !p->differs && p->value_len == p->expect_len;
    } else if (aside) {
        ci.kubeconfig = KJOIN_TAKE(p->value);
        ci.kubeconfig_len = p->value_len;
        if (!ci.kubeconfig && !(ci.kubeconfig = calloc(1, 1)))
            return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    } else if ((rc = get_string(data, "kubeconfig", &present, &ci.kubeconfig, &ci.kubeconfig_len, err))) {
        return rc;
    } else if (p->expect) {
        *same = ci.kubeconfig && ci.kubeconfig_len == p->expect_len &&
                memcmp(ci.kubeconfig, p->expect, p->expect_len) == 0;
        kjoin_free_wiped(KJOIN_TAKE(ci.kubeconfig), ci.kubeconfig_len);
    }
    if (!present || ci.kubeconfig_len == 0)
        rc = kjoin_err_set(err, KJOIN_E_TRUST,
                           "cluster-info has no kubeconfig: this API server is not set up for token discovery");
    else if (token_id) {
        char key[sizeof(JWS_KEY_PREFIX) + 16];
        snprintf(key, sizeof(key), JWS_KEY_PREFIX "%s", token_id);
        rc = get_string(data, key, &present, &ci.jws, NULL, err);
    }
    if (rc) {
        kjoin_cluster_info_release(&ci);
        return rc;
    }
    *out = ci;
    return KJOIN_OK;
}

kjoin_code kjoin_cluster_info_parse(const char *json, size_t len, const char *token_id,
                                    kjoin_cluster_info *out, kjoin_err *err)
{
    if (len > INT32_MAX)
        return kjoin_err_set(err, KJOIN_E_TRUST, "cluster-info too large");
    kjoin_discovery__ci *p = kjoin_discovery__ci_new(NULL, 0);
    if (!p)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_discovery__ci_feed(p, json, len);
    kjoin_code rc = kjoin_discovery__ci_finish(p, token_id, out, NULL, err);
    kjoin_discovery__ci_free(p);
    return rc;
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
