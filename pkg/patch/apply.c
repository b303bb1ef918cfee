/* The three patch types on a json-c tree. Debian's json-c (0.16) has JSON
 * pointers (RFC 6901) but no JSON Patch, and Debian packages no C library
 * for RFC 6902 or 7386: the few rules are here, on json-c's pointers'
 * escaping. A strategic merge patch on the kubelet's configuration, whose
 * fields carry no patch strategy, is a merge patch plus the "$patch"
 * directive (replace, delete); other directives are refused by name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kjoin/private/patch.h>

#define BAD KJOIN_E_USAGE

/* A deep copy: a patch's values are never shared with the document, which
 * later patches change. */
static kjoin_code copy(json_object *v, json_object **out, kjoin_err *err)
{
    *out = NULL;
    if (v && json_object_deep_copy(v, out, NULL) != 0)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    return KJOIN_OK;
}

/* ---- merge (RFC 7386) and strategic ---------------------------------- */

static kjoin_code merge(json_object **target, json_object *patch, bool strategic, bool *gone, kjoin_err *err);

/* The merge key of a Pod's list field, as the Pod's schema gives it to a
 * strategic merge patch (NULL: the list is replaced). */
static const char *merge_key(const char *field)
{
    static const struct {
        const char *field, *key;
    } keys[] = {{"containers", "name"}, {"initContainers", "name"}, {"ephemeralContainers", "name"},
                {"volumes", "name"},    {"env", "name"},            {"volumeMounts", "mountPath"},
                {"ports", "containerPort"}};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!strcmp(field, keys[i].field))
            return keys[i].key;
    return NULL;
}

static kjoin_code merge_items(json_object **target, json_object *patch, const char *key, json_object *patch_keys,
                              kjoin_err *err);

/* Where the item with key value kv is in keys (values of one key), or -1. */
static int key_index(json_object *keys, json_object *kv)
{
    for (size_t i = 0; kv && i < json_object_array_length(keys); i++)
        if (json_object_equal(json_object_array_get_idx(keys, i), kv))
            return (int)i;
    return -1;
}

static json_object *key_of(json_object *item, const char *key)
{
    json_object *kv = NULL;
    return json_object_object_get_ex(item, key, &kv) ? kv : NULL;
}

/* The merged list in apimachinery's order (its mergeSlice then
 * normalizeElementOrder): the patch's items in the patch's order, the
 * others in the target's; an item of the target goes before a patch item
 * the target had after it, and a patch item the target did not have goes
 * where the patch has it, before the target's items not yet placed. */
static json_object *order_as_apimachinery(json_object *merged, json_object *original_keys, json_object *patch_keys,
                                          const char *key)
{
    json_object *out = json_object_new_array();
    size_t n = json_object_array_length(merged), n_patch = json_object_array_length(patch_keys);
    json_object **server = calloc(n + 1, sizeof(*server)), **patched = calloc(n + 1, sizeof(*patched));
    size_t ns = 0, np = 0;
    if (!out || !server || !patched) {
        json_object_put(out);
        free(server);
        free(patched);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        json_object *item = json_object_array_get_idx(merged, i);
        if (key_index(patch_keys, key_of(item, key)) < 0)
            server[ns++] = item;
    }
    for (size_t p = 0; p < n_patch; p++) /* in the patch's order */
        for (size_t i = 0; i < n; i++) {
            json_object *item = json_object_array_get_idx(merged, i);
            if (key_index(patch_keys, key_of(item, key)) == (int)p)
                patched[np++] = item;
        }
    for (size_t i = 0, j = 0; i < ns || j < np;) {
        int li = i < ns ? key_index(original_keys, key_of(server[i], key)) : -1;
        int ri = j < np ? key_index(original_keys, key_of(patched[j], key)) : -1;
        bool server_first = j >= np || (i < ns && li >= 0 && ri >= 0 && li < ri);
        json_object_array_add(out, json_object_get(server_first ? server[i++] : patched[j++]));
    }
    free(server);
    free(patched);
    return out;
}

/* A strategic merge of a keyed list: each patch item merged into the
 * target's item with the same key (added when there is none; removed with
 * "$patch: delete"), then ordered as apimachinery orders it. */
static kjoin_code merge_list(json_object **target, json_object *patch, const char *key, kjoin_err *err)
{
    if (!json_object_is_type(*target, json_type_array)) {
        json_object_put(*target);
        *target = json_object_new_array();
    }
    json_object *original_keys = json_object_new_array(), *patch_keys = json_object_new_array();
    for (size_t k = 0; original_keys && k < json_object_array_length(*target); k++)
        json_object_array_add(original_keys, json_object_get(key_of(json_object_array_get_idx(*target, k), key)));
    kjoin_code rc = original_keys && patch_keys ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    if (!rc)
        rc = merge_items(target, patch, key, patch_keys, err);
    json_object *ordered = rc ? NULL : order_as_apimachinery(*target, original_keys, patch_keys, key);
    if (!rc && !ordered)
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    if (!rc) {
        json_object_put(*target);
        *target = ordered;
    }
    json_object_put(original_keys);
    json_object_put(patch_keys);
    return rc;
}

/* Each patch item merged into the target's item of its key; the keys of
 * the items that stay, into patch_keys in the patch's order. */
static kjoin_code merge_items(json_object **target, json_object *patch, const char *key, json_object *patch_keys,
                              kjoin_err *err)
{
    for (size_t i = 0; i < json_object_array_length(patch); i++) {
        json_object *item = json_object_array_get_idx(patch, i), *kv = NULL;
        if (!json_object_is_type(item, json_type_object) || !json_object_object_get_ex(item, key, &kv))
            return kjoin_err_set(err, BAD, "an item of a list merged by %s has no %s", key, key);
        size_t at = json_object_array_length(*target);
        for (size_t k = 0; k < json_object_array_length(*target); k++) {
            json_object *have = json_object_array_get_idx(*target, k), *hv = NULL;
            if (json_object_object_get_ex(have, key, &hv) && json_object_equal(hv, kv))
                at = k;
        }
        json_object *child = at < json_object_array_length(*target) ? json_object_get(json_object_array_get_idx(*target, at))
                                                                    : NULL;
        bool gone = false;
        kjoin_code rc = merge(&child, item, true, &gone, err);
        if (rc) {
            json_object_put(child);
            return rc;
        }
        if (gone) {
            json_object_put(child);
            if (at < json_object_array_length(*target))
                json_object_array_del_idx(*target, at, 1);
        } else if (at < json_object_array_length(*target)) {
            json_object_array_put_idx(*target, at, child);
        } else {
            json_object_array_add(*target, child);
        }
        if (!gone && key_index(patch_keys, kv) < 0)
            json_object_array_add(patch_keys, json_object_get(kv));
    }
    return KJOIN_OK;
}

/* Merges patch into *target (owned; replaced as needed). *gone: a strategic
 * "$patch: delete" asks that the target itself go. */
static kjoin_code merge(json_object **target, json_object *patch, bool strategic, bool *gone, kjoin_err *err)
{
    *gone = false;
    if (!json_object_is_type(patch, json_type_object)) {
        json_object_put(*target);
        return copy(patch, target, err);
    }
    json_object *directive = NULL;
    if (strategic && json_object_object_get_ex(patch, "$patch", &directive)) {
        const char *d = json_object_is_type(directive, json_type_string) ? json_object_get_string(directive) : "";
        if (!strcmp(d, "delete")) {
            *gone = true;
            return KJOIN_OK;
        }
        if (strcmp(d, "replace"))
            return kjoin_err_set(err, BAD, "the strategic directive \"$patch: %.40s\" is not one of replace, delete",
                                 d);
        json_object_put(*target);
        *target = json_object_new_object();
    }
    if (!json_object_is_type(*target, json_type_object)) {
        json_object_put(*target);
        *target = json_object_new_object();
    }
    if (!*target)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    json_object_object_foreach(patch, key, value) {
        if (strategic && key[0] == '$') {
            if (!strcmp(key, "$patch"))
                continue;
            return kjoin_err_set(err, BAD, "the strategic directive %.60s is not supported here (only $patch)", key);
        }
        if (!value) {
            json_object_object_del(*target, key);
            continue;
        }
        json_object *child = NULL;
        bool child_gone = false;
        json_object_object_get_ex(*target, key, &child);
        json_object_get(child);
        const char *list_key = strategic && json_object_is_type(value, json_type_array) ? merge_key(key) : NULL;
        kjoin_code rc = list_key ? merge_list(&child, value, list_key, err)
                                 : merge(&child, value, strategic, &child_gone, err);
        if (rc || child_gone) {
            json_object_put(child);
            if (rc)
                return rc;
            json_object_object_del(*target, key);
            continue;
        }
        json_object_object_add(*target, key, child);
    }
    return KJOIN_OK;
}

/* ---- JSON Patch (RFC 6902) -------------------------------------------- */

#define MAX_TOKENS 128

typedef struct pointer {
    char *buf;
    char *tok[MAX_TOKENS];
    size_t n;
} pointer;

/* An RFC 6901 pointer's tokens, unescaped ("~1" is "/", "~0" is "~"). */
static kjoin_code pointer_parse(const char *text, pointer *p, kjoin_err *err)
{
    memset(p, 0, sizeof(*p));
    if (*text && *text != '/')
        return kjoin_err_set(err, BAD, "the path \"%.80s\" does not start with /", text);
    if (!*text)
        return KJOIN_OK;
    if (!(p->buf = strdup(text + 1)))
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    for (char *t = p->buf;; ) {
        if (p->n == MAX_TOKENS)
            return kjoin_err_set(err, BAD, "the path \"%.80s\" is deeper than %d", text, MAX_TOKENS);
        p->tok[p->n++] = t;
        char *slash = strchr(t, '/');
        if (slash)
            *slash = '\0';
        char *w = t;
        for (char *r = t; *r; r++) {
            if (*r == '~' && (r[1] == '0' || r[1] == '1'))
                *w++ = r[1] == '0' ? '~' : '/', r++;
            else if (*r == '~')
                return kjoin_err_set(err, BAD, "the path \"%.80s\" has a \"~\" that is not ~0 or ~1", text);
            else
                *w++ = *r;
        }
        *w = '\0';
        if (!slash)
            break;
        t = slash + 1;
    }
    return KJOIN_OK;
}

/* An array index: "0" or digits without a leading zero, below limit. */
static bool index_of(const char *tok, size_t limit, size_t *out)
{
    if (!*tok || strspn(tok, "0123456789") != strlen(tok) || (tok[0] == '0' && tok[1]) || strlen(tok) > 9)
        return false;
    *out = (size_t)strtoul(tok, NULL, 10);
    return *out < limit;
}

/* The value the first n tokens name, borrowed; NULL when there is none. */
static json_object *resolve(json_object *doc, const pointer *p, size_t n, bool *found)
{
    json_object *at = doc;
    *found = true;
    for (size_t i = 0; i < n; i++) {
        size_t k;
        if (json_object_is_type(at, json_type_object) && json_object_object_get_ex(at, p->tok[i], &at))
            continue;
        if (json_object_is_type(at, json_type_array) && index_of(p->tok[i], json_object_array_length(at), &k)) {
            at = json_object_array_get_idx(at, k);
            continue;
        }
        *found = false;
        return NULL;
    }
    return at;
}

/* Puts value (owned) at p: in an object by key, in a list at an index (the
 * rest move up) or at its end ("-"), or as the whole document. */
static kjoin_code add(json_object **doc, const pointer *p, json_object *value, kjoin_err *err)
{
    bool found;
    size_t k;
    if (!p->n) {
        json_object_put(*doc);
        *doc = value;
        return KJOIN_OK;
    }
    json_object *parent = resolve(*doc, p, p->n - 1, &found);
    const char *last = p->tok[p->n - 1];
    if (found && json_object_is_type(parent, json_type_object)) {
        json_object_object_add(parent, last, value);
        return KJOIN_OK;
    }
    if (found && json_object_is_type(parent, json_type_array)) {
        size_t len = json_object_array_length(parent);
        if (!strcmp(last, "-")) {
            json_object_array_add(parent, value);
            return KJOIN_OK;
        }
        if (index_of(last, len + 1, &k)) {
            json_object_array_add(parent, NULL);
            for (size_t j = len; j > k; j--)
                json_object_array_put_idx(parent, j, json_object_get(json_object_array_get_idx(parent, j - 1)));
            json_object_array_put_idx(parent, k, value);
            return KJOIN_OK;
        }
    }
    json_object_put(value);
    return kjoin_err_set(err, BAD, "%s", found ? "the index is past the end of the list" : "the parent is missing");
}

/* Takes the value at p out of the document, into *taken (owned) if asked. */
static kjoin_code take(json_object **doc, const pointer *p, json_object **taken, kjoin_err *err)
{
    bool found;
    size_t k;
    if (!p->n)
        return kjoin_err_set(err, BAD, "the whole document cannot be removed");
    json_object *parent = resolve(*doc, p, p->n - 1, &found), *v = NULL;
    const char *last = p->tok[p->n - 1];
    if (found && json_object_is_type(parent, json_type_object) && json_object_object_get_ex(parent, last, &v)) {
        if (taken)
            *taken = json_object_get(v);
        json_object_object_del(parent, last);
        return KJOIN_OK;
    }
    if (found && json_object_is_type(parent, json_type_array) &&
        index_of(last, json_object_array_length(parent), &k)) {
        if (taken)
            *taken = json_object_get(json_object_array_get_idx(parent, k));
        json_object_array_del_idx(parent, k, 1);
        return KJOIN_OK;
    }
    return kjoin_err_set(err, BAD, "nothing is there");
}

static const char *string_member(json_object *op, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(op, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

static kjoin_code operation(json_object **doc, json_object *op, kjoin_err *err)
{
    const char *name = string_member(op, "op"), *path = string_member(op, "path"), *from = string_member(op, "from");
    json_object *value = NULL, *moved = NULL;
    bool has_value = json_object_object_get_ex(op, "value", &value), found;
    pointer p = {0}, f = {0};
    kjoin_code rc = KJOIN_OK;
    if (!json_object_is_type(op, json_type_object) || !name || !path)
        return kjoin_err_set(err, BAD, "an operation is a mapping with a string \"op\" and \"path\"");
    bool needs_value = !strcmp(name, "add") || !strcmp(name, "replace") || !strcmp(name, "test");
    bool needs_from = !strcmp(name, "move") || !strcmp(name, "copy");
    if (!needs_value && !needs_from && strcmp(name, "remove"))
        return kjoin_err_set(err, BAD, "the operation \"%.40s\" is not add, remove, replace, move, copy or test", name);
    if ((needs_value && !has_value) || (needs_from && !from))
        return kjoin_err_set(err, BAD, "%s needs \"%s\"", name, needs_value ? "value" : "from");
    if ((rc = pointer_parse(path, &p, err)) || (needs_from && (rc = pointer_parse(from, &f, err))))
        goto done;
    if (!strcmp(name, "test")) {
        json_object *at = resolve(*doc, &p, p.n, &found);
        if (!found || !json_object_equal(at, value))
            rc = kjoin_err_set(err, BAD, "%s", found ? "the value differs" : "nothing is there");
    } else if (!strcmp(name, "remove")) {
        rc = take(doc, &p, NULL, err);
    } else if (!strcmp(name, "replace")) { /* of the whole document too */
        if ((!p.n || !(rc = take(doc, &p, NULL, err))) && !(rc = copy(value, &moved, err)))
            rc = add(doc, &p, moved, err);
    } else if (!strcmp(name, "add")) {
        if (!(rc = copy(value, &moved, err)))
            rc = add(doc, &p, moved, err);
    } else if (!strcmp(name, "copy")) {
        json_object *at = resolve(*doc, &f, f.n, &found);
        if (!found)
            rc = kjoin_err_set(err, BAD, "nothing is at %s", from);
        else if (!(rc = copy(at, &moved, err)))
            rc = add(doc, &p, moved, err);
    } else { /* move: not into itself */
        size_t flen = strlen(from);
        if (!strncmp(path, from, flen) && path[flen] == '/')
            rc = kjoin_err_set(err, BAD, "%s cannot move into itself", from);
        else if (!(rc = take(doc, &f, &moved, err)))
            rc = add(doc, &p, moved, err);
    }
    if (rc) { /* every reason above says what, this where */
        char msg[KJOIN_ERR_MSG_MAX];
        snprintf(msg, sizeof(msg), "%s", err->msg);
        kjoin_err_set(err, rc, "%s %.200s: %s", name, path, msg);
    }
done:
    free(p.buf);
    free(f.buf);
    return rc;
}

/* ---- the set ------------------------------------------------------------ */

bool kjoin_patches_control_plane(const kjoin_patchset *set)
{
    for (size_t i = 0; set && i < set->n; i++)
        if (strcmp(set->items[i].target, "kubeletconfiguration"))
            return true;
    return false;
}

kjoin_code kjoin_patches_apply(const kjoin_patchset *set, const char *target, json_object **doc, size_t *applied,
                               kjoin_err *err)
{
    static const char *const names[] = {"strategic", "merge", "json"};
    if (applied)
        *applied = 0;
    for (size_t i = 0; set && i < set->n; i++) {
        const kjoin_patch *p = &set->items[i];
        kjoin_err in = {0};
        if (strcmp(p->target, target))
            continue;
        if (applied)
            (*applied)++;
        kjoin_code rc = KJOIN_OK;
        bool gone = false;
        if (p->type == KJOIN_PATCH_JSON)
            for (size_t k = 0; !rc && k < json_object_array_length(p->patch); k++)
                rc = operation(doc, json_object_array_get_idx(p->patch, k), &in);
        else if (!(rc = merge(doc, p->patch, p->type == KJOIN_PATCH_STRATEGIC, &gone, &in)) && gone)
            rc = kjoin_err_set(&in, BAD, "\"$patch: delete\" would delete the whole configuration");
        if (!rc && !json_object_is_type(*doc, json_type_object))
            rc = kjoin_err_set(&in, BAD, "the configuration is no longer a mapping");
        if (rc)
            return kjoin_err_set(err, rc, "the %s patch in %s does not apply to %s: %s", names[p->type], p->file,
                                 strcmp(target, "kubeletconfiguration") ? target : "the kubelet's configuration",
                                 in.msg);
    }
    return KJOIN_OK;
}
