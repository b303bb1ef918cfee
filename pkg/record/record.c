/* What a join wrote: one format for both records, read back as untrusted. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <kjoin/private/util.h>

#include "record.h"

#define BAD KJOIN_E_USAGE

static bool clean(const char *path)
{
    return path && kjoin_clean_path(path) && kjoin_utf8_printable(path) && strlen(path) < sizeof(((kjoin_written *)0)->dirs[0]);
}

kjoin_code kjoin_written_add_file(kjoin_written *w, const char *path, const char *sha256, kjoin_err *err)
{
    size_t k = 0;
    while (k < w->n_files && strcmp(w->files[k].path, path))
        k++;
    if (k == KJOIN_WRITTEN_FILES)
        return kjoin_err_set(err, BAD, "a join record holds %d files at most", KJOIN_WRITTEN_FILES);
    if (strlen(path) >= sizeof(w->files[k].path) || strlen(sha256) >= sizeof(w->files[k].sha256))
        return kjoin_err_set(err, BAD, "a file's path is too long for the join record");
    snprintf(w->files[k].path, sizeof(w->files[k].path), "%s", path);
    snprintf(w->files[k].sha256, sizeof(w->files[k].sha256), "%s", sha256);
    w->n_files += k == w->n_files;
    return KJOIN_OK;
}

static kjoin_code add_dir(kjoin_written *w, const char *path, kjoin_err *err)
{
    if (kjoin_written_has_dir(w, path))
        return KJOIN_OK;
    if (w->n_dirs == KJOIN_WRITTEN_DIRS)
        return kjoin_err_set(err, BAD, "a join record holds %d directories at most", KJOIN_WRITTEN_DIRS);
    snprintf(w->dirs[w->n_dirs++], sizeof(w->dirs[0]), "%s", path);
    return KJOIN_OK;
}

kjoin_code kjoin_written_add_missing_dirs(kjoin_written *w, const char *dir, kjoin_err *err)
{
    char path[sizeof(w->dirs[0])];
    struct stat st;
    kjoin_code rc = KJOIN_OK;
    if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
        return kjoin_err_set(err, BAD, "a directory's path is too long for the join record");
    for (char *slash; !rc && *path && lstat(path, &st) != 0 && errno == ENOENT;) {
        rc = add_dir(w, path, err);
        if (!(slash = strrchr(path, '/')) || slash == path)
            break;
        *slash = '\0';
    }
    return rc;
}

bool kjoin_written_has_file(const kjoin_written *w, const char *path, const char *sha256)
{
    for (size_t i = 0; i < w->n_files; i++)
        if (!strcmp(w->files[i].path, path) && (!sha256 || !strcmp(w->files[i].sha256, sha256)))
            return true;
    return false;
}

bool kjoin_written_has_data(const kjoin_written *w, const char *path, const void *data, size_t len)
{
    unsigned char sum[32];
    char hex[65];
    return !kjoin_sha256(data, len, sum, NULL) && kjoin_written_has_file(w, path, kjoin_hex(sum, sizeof(sum), hex));
}

bool kjoin_written_has_dir(const kjoin_written *w, const char *path)
{
    for (size_t i = 0; i < w->n_dirs; i++)
        if (!strcmp(w->dirs[i], path))
            return true;
    return false;
}

void kjoin_written_undo_files(const kjoin_written *w, const kjoin_written *before, bool dry_run, kjoin_undo_report report,
                              void *ctx)
{
    for (size_t i = 0; i < w->n_files; i++) {
        char why[600] = "";
        if (before && kjoin_written_has_file(before, w->files[i].path, w->files[i].sha256))
            continue;
        kjoin_undo u = kjoin_safedir_undo_file(w->files[i].path, w->files[i].sha256, dry_run, why, sizeof(why));
        report(ctx, w->files[i].path, u, why);
    }
}

static int deeper_first(const void *a, const void *b)
{
    size_t la = strlen(*(const char *const *)a), lb = strlen(*(const char *const *)b);
    return la < lb ? 1 : la > lb ? -1 : 0;
}

void kjoin_written_undo_parts(const kjoin_written_part *parts, size_t n, bool dry_run, const char *not_empty)
{
    enum { MAX = 4 * KJOIN_WRITTEN_DIRS };
    struct {
        const char *path;
        const kjoin_written_part *part;
    } order[MAX];
    size_t k = 0;
    for (size_t p = 0; p < n; p++)
        for (size_t i = 0; parts[p].written && i < parts[p].written->n_dirs && k < MAX; i++) {
            bool seen = false;
            for (size_t j = 0; j < k && !seen; j++)
                seen = !strcmp(order[j].path, parts[p].written->dirs[i]);
            if (!seen)
                order[k].path = parts[p].written->dirs[i], order[k++].part = &parts[p];
        }
    qsort(order, k, sizeof(order[0]), deeper_first); /* the path is the first member */
    for (size_t i = 0; i < k; i++) {
        char why[600] = "";
        kjoin_undo u = kjoin_safedir_undo_dir(order[i].path, dry_run, not_empty, why, sizeof(why));
        order[i].part->report(order[i].part->ctx, order[i].path, u, why);
    }
}

void kjoin_written_undo_dirs(const kjoin_written *w, const kjoin_written *before, bool dry_run, const char *not_empty,
                             kjoin_undo_report report, void *ctx)
{
    const char *order[KJOIN_WRITTEN_DIRS];
    size_t n = 0;
    for (size_t i = 0; i < w->n_dirs && n < KJOIN_WRITTEN_DIRS; i++)
        if (!before || !kjoin_written_has_dir(before, w->dirs[i]))
            order[n++] = w->dirs[i];
    qsort(order, n, sizeof(order[0]), deeper_first);
    for (size_t i = 0; i < n; i++) {
        char why[600] = "";
        kjoin_undo u = kjoin_safedir_undo_dir(order[i], dry_run, not_empty, why, sizeof(why));
        report(ctx, order[i], u, why);
    }
}

/* ---- the JSON side ---------------------------------------------------------- */

json_object *kjoin_record_open(const char *text, size_t len, size_t max, const char *kind)
{
    if (len > max || memchr(text, '\0', len))
        return NULL;
    json_tokener *tok = json_tokener_new_ex(16);
    json_object *o = tok ? json_tokener_parse_ex(tok, text, (int)len) : NULL;
    bool whole = tok && json_tokener_get_error(tok) == json_tokener_success && json_tokener_get_parse_end(tok) == len;
    json_tokener_free(tok);
    const char *k = whole && json_object_is_type(o, json_type_object) ? kjoin_record_str(o, "kind") : NULL;
    if (!k || strcmp(k, kind)) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

const char *kjoin_record_str(json_object *record, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(record, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

static json_object *list_of(json_object *record, const char *key, const char *legacy)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(record, key, &v) && legacy)
        json_object_object_get_ex(record, legacy, &v);
    return v;
}

kjoin_code kjoin_record_written_parse(json_object *record, const char *what, kjoin_record_path_ok file_ok,
                                      kjoin_record_path_ok dir_ok, const void *ctx, kjoin_written *out, kjoin_err *err)
{
    json_object *files = list_of(record, "files", NULL), *dirs = list_of(record, "createdDirs", "dirs");
    memset(out, 0, sizeof(*out));
    if (!json_object_is_type(files, json_type_array) || json_object_array_length(files) > KJOIN_WRITTEN_FILES ||
        (dirs && (!json_object_is_type(dirs, json_type_array) || json_object_array_length(dirs) > KJOIN_WRITTEN_DIRS)))
        return kjoin_err_set(err, BAD, "the %s's files and createdDirs are not lists of at most %d and %d", what,
                             KJOIN_WRITTEN_FILES, KJOIN_WRITTEN_DIRS);
    for (size_t i = 0; i < json_object_array_length(files); i++) {
        json_object *f = json_object_array_get_idx(files, i);
        const char *path = kjoin_record_str(f, "path"), *sum = kjoin_record_str(f, "sha256");
        unsigned char raw[32];
        if (!clean(path) || !file_ok(path, ctx) || !sum || strlen(sum) != 64 || !kjoin_hex_decode(sum, 32, raw))
            return kjoin_err_set(err, BAD, "the %s's file %zu is not a path the join writes, with its SHA-256", what,
                                 i + 1);
        out->n_files = i + 1;
        snprintf(out->files[i].path, sizeof(out->files[i].path), "%s", path);
        snprintf(out->files[i].sha256, sizeof(out->files[i].sha256), "%s", sum);
    }
    for (size_t i = 0; dirs && i < json_object_array_length(dirs); i++) {
        json_object *d = json_object_array_get_idx(dirs, i);
        const char *path = json_object_is_type(d, json_type_string) ? json_object_get_string(d) : NULL;
        if (!clean(path) || !dir_ok(path, ctx)) /* never "/": a clean path names something below it */
            return kjoin_err_set(err, BAD, "the %s's directory %zu is not one the join makes", what, i + 1);
        out->n_dirs = i + 1;
        snprintf(out->dirs[i], sizeof(out->dirs[i]), "%s", path);
    }
    return KJOIN_OK;
}

void kjoin_record_written_emit(json_object *record, const kjoin_written *w)
{
    json_object *files = json_object_new_array(), *dirs = json_object_new_array();
    for (size_t i = 0; i < w->n_files; i++) {
        json_object *f = json_object_new_object();
        json_object_object_add(f, "path", json_object_new_string(w->files[i].path));
        json_object_object_add(f, "sha256", json_object_new_string(w->files[i].sha256));
        json_object_array_add(files, f);
    }
    for (size_t i = 0; i < w->n_dirs; i++)
        json_object_array_add(dirs, json_object_new_string(w->dirs[i]));
    json_object_object_add(record, "files", files);
    json_object_object_add(record, "createdDirs", dirs);
}
