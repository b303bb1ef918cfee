/* What a control-plane join made, for kjoin reset: the files each step
 * wrote (with their digests), the directories it made, the etcd member it
 * added and the data directory it made. Kept in the kubeconfig directory next to the worker's
 * join record, 0600, written atomically; read back as untrusted. */
#include <kjoin/controlplane.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include <kjoin/safedir.h>

#include "internal.h"

#define RECORD_MAX (256 * 1024)
#define BAD KJOIN_E_USAGE

static bool clean_path(const char *p)
{
    return kjoin_clean_path(p) && kjoin_utf8_printable(p) && strlen(p) < 4096;
}

static const char *str_of(json_object *o, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                             : NULL;
}

kjoin_code kjoin_cp_record_parse(const char *text, size_t len, kjoin_cp_record *out, kjoin_err *err)
{
    json_tokener *tok = json_tokener_new_ex(8);
    json_object *o = tok && len <= RECORD_MAX ? json_tokener_parse_ex(tok, text, (int)len) : NULL, *files = NULL,
                *etcd;
    bool whole = tok && json_tokener_get_error(tok) == json_tokener_success && json_tokener_get_parse_end(tok) == len;
    json_tokener_free(tok);
    kjoin_code rc = KJOIN_OK;
    memset(out, 0, sizeof(*out));
    const char *kind = whole && json_object_is_type(o, json_type_object) ? str_of(o, "kind") : NULL;
    if (!kind || strcmp(kind, "KjoinControlPlaneRecord") || !json_object_object_get_ex(o, "files", &files) ||
        !json_object_is_type(files, json_type_array) || json_object_array_length(files) > KJOIN_CP_RECORD_FILES)
        rc = kjoin_err_set(err, BAD, "the control-plane record is not kjoin's (kind KjoinControlPlaneRecord with at "
                           "most %d files)", KJOIN_CP_RECORD_FILES);
    for (size_t i = 0; !rc && i < json_object_array_length(files); i++) {
        json_object *f = json_object_array_get_idx(files, i);
        const char *path = str_of(f, "path"), *sum = str_of(f, "sha256");
        unsigned char raw[32];
        if (!path || !clean_path(path) || !sum || strlen(sum) != 64 || !kjoin_hex_decode(sum, 32, raw))
            rc = kjoin_err_set(err, BAD, "the control-plane record's file %zu is no clean absolute path with its "
                               "SHA-256", i + 1);
        else {
            snprintf(out->files[i].path, sizeof(out->files[i].path), "%s", path);
            snprintf(out->files[i].sha256, sizeof(out->files[i].sha256), "%s", sum);
            out->n_files = i + 1;
        }
    }
    json_object *dirs = NULL;
    if (!rc && json_object_object_get_ex(o, "dirs", &dirs) &&
        (!json_object_is_type(dirs, json_type_array) || json_object_array_length(dirs) > KJOIN_CP_RECORD_DIRS))
        rc = kjoin_err_set(err, BAD, "the control-plane record's dirs are not a list of at most %d",
                           KJOIN_CP_RECORD_DIRS);
    for (size_t i = 0; !rc && dirs && i < json_object_array_length(dirs); i++) {
        json_object *d = json_object_array_get_idx(dirs, i);
        const char *path = json_object_is_type(d, json_type_string) ? json_object_get_string(d) : NULL;
        if (!path || !clean_path(path)) /* never "/": a clean path names something below it */
            rc = kjoin_err_set(err, BAD, "the control-plane record's directory %zu is no clean absolute path", i + 1);
        else
            snprintf(out->dirs[out->n_dirs++], sizeof(out->dirs[0]), "%s", path);
    }
    if (!rc && json_object_object_get_ex(o, "etcd", &etcd)) {
        const char *peer = str_of(etcd, "peerURL"), *id = str_of(etcd, "memberID"), *certs = str_of(etcd, "certificatesDir"),
                   *data = str_of(etcd, "dataDir");
        json_object *made;
        if (!peer || strncmp(peer, "https://", 8) || strlen(peer) >= sizeof(out->etcd_peer) || strpbrk(peer, ", \n") ||
            !id || strspn(id, "0123456789") != strlen(id) || strlen(id) >= sizeof(out->etcd_id) || !certs ||
            !clean_path(certs) || strlen(certs) >= sizeof(out->cert_dir) || !data || !clean_path(data) ||
            strlen(data) >= sizeof(out->etcd_data_dir))
            rc = kjoin_err_set(err, BAD, "the control-plane record's etcd member is not one kjoin adds");
        else {
            snprintf(out->etcd_peer, sizeof(out->etcd_peer), "%s", peer);
            snprintf(out->etcd_id, sizeof(out->etcd_id), "%s", id);
            snprintf(out->cert_dir, sizeof(out->cert_dir), "%s", certs);
            snprintf(out->etcd_data_dir, sizeof(out->etcd_data_dir), "%s", data);
            out->data_dir_made = json_object_object_get_ex(etcd, "dataDirMade", &made) && json_object_get_boolean(made);
        }
    }
    json_object_put(o);
    if (rc)
        memset(out, 0, sizeof(*out));
    return rc;
}

kjoin_code kjoin_cp_record_read(const char *kubernetes_dir, kjoin_cp_record *out, bool *found, kjoin_err *err)
{
    char path[4200], *text = NULL;
    size_t len = 0;
    bool missing = false;
    *found = false;
    memset(out, 0, sizeof(*out));
    snprintf(path, sizeof(path), "%s/%s", kubernetes_dir, KJOIN_CP_RECORD_NAME);
    kjoin_code rc = kjoin_safedir_read_path(path, true, &text, &len, &missing, err);
    if (rc)
        return missing ? KJOIN_OK : rc;
    *found = true;
    kjoin_err e;
    if ((rc = kjoin_cp_record_parse(text, len, out, &e)))
        kjoin_err_set(err, rc, "%s: %s", path, e.msg);
    free(text);
    return rc;
}

/* Adds path to the record's directories, once. */
static kjoin_code add_dir(kjoin_cp_record *r, const char *path, kjoin_err *err)
{
    for (size_t k = 0; k < r->n_dirs; k++)
        if (!strcmp(r->dirs[k], path))
            return KJOIN_OK;
    if (r->n_dirs == KJOIN_CP_RECORD_DIRS)
        return kjoin_err_set(err, KJOIN_E_OTHER, "the control-plane record holds %d directories at most",
                             KJOIN_CP_RECORD_DIRS);
    snprintf(r->dirs[r->n_dirs++], sizeof(r->dirs[0]), "%s", path);
    return KJOIN_OK;
}

/* dir and each of its ancestors that does not exist yet: what making dir makes. */
static kjoin_code add_missing(kjoin_cp_record *r, const char *dir, kjoin_err *err)
{
    char path[4096];
    struct stat st;
    kjoin_code rc = KJOIN_OK;
    if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path))
        return kjoin_err_set(err, KJOIN_E_USAGE, "a directory's path is too long");
    for (char *slash; !rc && *path && lstat(path, &st) != 0 && errno == ENOENT;) {
        rc = add_dir(r, path, err);
        if (!(slash = strrchr(path, '/')) || slash == path)
            break;
        *slash = '\0';
    }
    return rc;
}

/* Writes r (with the record's own directory among the directories made,
 * when writing it makes that). */
static kjoin_code write_record(const char *kubernetes_dir, kjoin_cp_record *r, kjoin_err *err)
{
    kjoin_code made = add_missing(r, kubernetes_dir, err);
    if (made)
        return made;
    json_object *o = json_object_new_object(), *files = json_object_new_array();
    json_object_object_add(o, "kind", json_object_new_string("KjoinControlPlaneRecord"));
    for (size_t i = 0; i < r->n_files; i++) {
        json_object *f = json_object_new_object();
        json_object_object_add(f, "path", json_object_new_string(r->files[i].path));
        json_object_object_add(f, "sha256", json_object_new_string(r->files[i].sha256));
        json_object_array_add(files, f);
    }
    json_object_object_add(o, "files", files);
    if (r->n_dirs) {
        json_object *dirs = json_object_new_array();
        for (size_t i = 0; i < r->n_dirs; i++)
            json_object_array_add(dirs, json_object_new_string(r->dirs[i]));
        json_object_object_add(o, "dirs", dirs);
    }
    if (*r->etcd_peer) {
        json_object *e = json_object_new_object();
        json_object_object_add(e, "peerURL", json_object_new_string(r->etcd_peer));
        json_object_object_add(e, "memberID", json_object_new_string(r->etcd_id));
        json_object_object_add(e, "certificatesDir", json_object_new_string(r->cert_dir));
        json_object_object_add(e, "dataDir", json_object_new_string(r->etcd_data_dir));
        json_object_object_add(e, "dataDirMade", json_object_new_boolean(r->data_dir_made));
        json_object_object_add(o, "etcd", e);
    }
    const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    /* Never a record that reset cannot read back. */
    kjoin_cp_record *back = malloc(sizeof(*back));
    kjoin_err e;
    kjoin_code rc = !back ? kjoin_err_set(err, KJOIN_E_OTHER, "out of memory")
                   : kjoin_cp_record_parse(text, strlen(text), back, &e)
                       ? kjoin_err_set(err, KJOIN_E_USAGE, "the control-plane record would not read back (%s): not "
                                       "written", e.msg)
                       : KJOIN_OK;
    free(back);
    kjoin_safedir d = {.fd = -1};
    if (!rc)
        rc = kjoin_safedir_open(kubernetes_dir, KJOIN_SAFEDIR_CREATE, &d, err);
    if (!rc)
        rc = kjoin_safedir_write(&d, KJOIN_CP_RECORD_NAME, text, strlen(text), 0600, true, NULL, err);
    kjoin_safedir_close(&d);
    json_object_put(o);
    return rc;
}

/* The record as it is (or an empty one), for a change. */
static kjoin_code load(const char *kubernetes_dir, kjoin_cp_record **r, kjoin_err *err)
{
    bool found;
    if (!(*r = malloc(sizeof(**r))))
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_code rc = kjoin_cp_record_read(kubernetes_dir, *r, &found, err);
    if (rc) {
        free(*r);
        *r = NULL;
    }
    return rc;
}

kjoin_code kjoin_cp_record_pending(const char *kubernetes_dir, const char *const *paths, const char *const *sha256,
                                   size_t n, const char *const *dirs, size_t n_dirs, kjoin_err *err)
{
    kjoin_cp_record *r;
    kjoin_code rc = load(kubernetes_dir, &r, err);
    if (rc)
        return rc;
    for (size_t i = 0; !rc && i < n; i++) {
        size_t k = 0;
        while (k < r->n_files && strcmp(r->files[k].path, paths[i]))
            k++;
        if (k == KJOIN_CP_RECORD_FILES) {
            rc = kjoin_err_set(err, KJOIN_E_OTHER, "the control-plane record holds %d files at most",
                               KJOIN_CP_RECORD_FILES);
            break;
        }
        snprintf(r->files[k].path, sizeof(r->files[k].path), "%s", paths[i]);
        snprintf(r->files[k].sha256, sizeof(r->files[k].sha256), "%s", sha256[i]);
        r->n_files += k == r->n_files;
    }
    for (size_t i = 0; !rc && i < n_dirs; i++)
        rc = add_missing(r, dirs[i], err);
    if (!rc)
        rc = write_record(kubernetes_dir, r, err);
    free(r);
    return rc;
}

kjoin_code kjoin_cp_record_etcd(const char *kubernetes_dir, const char *peer, const char *id, const char *cert_dir,
                                const char *data_dir, bool data_dir_made, kjoin_err *err)
{
    kjoin_cp_record *r;
    kjoin_code rc = load(kubernetes_dir, &r, err);
    if (rc)
        return rc;
    bool was_made = r->data_dir_made && !strcmp(r->etcd_data_dir, data_dir); /* made by an earlier run */
    snprintf(r->etcd_peer, sizeof(r->etcd_peer), "%s", peer);
    snprintf(r->etcd_id, sizeof(r->etcd_id), "%s", id);
    snprintf(r->cert_dir, sizeof(r->cert_dir), "%s", cert_dir);
    snprintf(r->etcd_data_dir, sizeof(r->etcd_data_dir), "%s", data_dir);
    r->data_dir_made = data_dir_made || was_made;
    rc = write_record(kubernetes_dir, r, err);
    free(r);
    return rc;
}

static void note(char (*list)[1100], size_t *n, const char *path)
{
    if (*n < KJOIN_CP_RECORD_FILES + KJOIN_CP_RECORD_DIRS + 2)
        snprintf(list[(*n)++], 1100, "%.1000s", path);
}

static void note_left(kjoin_cp_reset_result *out, const char *path, const char *why)
{
    if (out->n_left < KJOIN_CP_RECORD_FILES + KJOIN_CP_RECORD_DIRS + 2)
        snprintf(out->left[out->n_left++], sizeof(out->left[0]), "%.600s: %.500s", path, why);
}

static int longer_first(const void *a, const void *b)
{
    return (int)strlen((const char *)b) - (int)strlen((const char *)a);
}

/* Removes path when it still holds what was written (sha256). */
static void remove_written(kjoin_cp_reset_result *out, const char *path, const char *sha256, bool dry_run)
{
    char why[600];
    kjoin_undo u = kjoin_safedir_undo_file(path, sha256, dry_run, why, sizeof(why));
    if (u == KJOIN_UNDO_REMOVED)
        note(out->removed, &out->n_removed, path);
    else if (u == KJOIN_UNDO_LEFT)
        note_left(out, path, why);
}

/* Removes the directory at path when it is empty; one that is not is left,
 * said as not_empty. Whether it was there. */
static bool remove_dir(kjoin_cp_reset_result *out, const char *path, const char *not_empty, bool dry_run)
{
    char why[600];
    kjoin_undo u = kjoin_safedir_undo_dir(path, dry_run, not_empty, why, sizeof(why));
    if (u == KJOIN_UNDO_REMOVED)
        note(out->removed, &out->n_removed, path);
    else if (u == KJOIN_UNDO_LEFT)
        note_left(out, path, why);
    return u != KJOIN_UNDO_GONE;
}

kjoin_code kjoin_cp_reset_files(const kjoin_cp_reset_spec *s, kjoin_cp_reset_result *out, kjoin_err *err)
{
    kjoin_cp_record *rec = malloc(sizeof(*rec));
    bool found = false;
    if (!rec)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_code rc = kjoin_cp_record_read(s->kubernetes_dir, rec, &found, err);
    out->had_record |= found;
    for (size_t i = 0; !rc && found && i < rec->n_files; i++)
        remove_written(out, rec->files[i].path, rec->files[i].sha256, s->dry_run);
    if (!rc && found && rec->data_dir_made && s->dry_run) {
        note(out->removed, &out->n_removed, rec->etcd_data_dir);
    } else if (!rc && found && rec->data_dir_made) { /* etcd's data: what the member etcd-join added wrote */
        kjoin_safedir d;
        const char *name;
        kjoin_err e;
        char why[400] = "";
        struct stat st;
        if (kjoin_safedir_open_parent(rec->etcd_data_dir, &d, &name, &e))
            note_left(out, rec->etcd_data_dir, e.msg);
        else if (fstat(d.fd, &st) != 0 || !kjoin_safedir_remove_tree(d.fd, name, st.st_dev, why, sizeof(why)))
            note_left(out, rec->etcd_data_dir, *why ? why : "cannot stat its parent");
        else
            note(out->removed, &out->n_removed, rec->etcd_data_dir);
        kjoin_safedir_close(&d);
    }
    if (!rc && found) {
        char path[4200];
        kjoin_safedir d;
        snprintf(path, sizeof(path), "%s/%s", s->kubernetes_dir, KJOIN_CP_RECORD_NAME);
        if (!(rc = kjoin_safedir_open(s->kubernetes_dir, 0, &d, err)) &&
            (s->dry_run || !(rc = kjoin_safedir_unlink(&d, KJOIN_CP_RECORD_NAME, err))))
            note(out->removed, &out->n_removed, path);
        kjoin_safedir_close(&d);
    }
    /* The directories the join made, deepest first, when nothing else is in them. */
    qsort(rec->dirs, rec->n_dirs, sizeof(rec->dirs[0]), longer_first);
    for (size_t i = 0; !rc && found && i < rec->n_dirs; i++)
        remove_dir(out, rec->dirs[i], "not empty: it holds files the join did not make", s->dry_run);
    free(rec);
    return rc;
}

/* ---- taking back what one run wrote ---------------------------------------- */

kjoin_code kjoin_cp_record_begin(const char *kubernetes_dir, kjoin_cp_record **before, kjoin_err *err)
{
    bool found = false;
    kjoin_cp_record *r = calloc(1, sizeof(*r));
    if (!r)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_code rc = kjoin_cp_record_read(kubernetes_dir, r, &found, err);
    if (rc) {
        free(r);
        return rc;
    }
    *before = r; /* an empty one when there is none */
    return KJOIN_OK;
}

static bool had_file(const kjoin_cp_record *r, const char *path, const char *sha256)
{
    for (size_t i = 0; i < r->n_files; i++)
        if (!strcmp(r->files[i].path, path) && !strcmp(r->files[i].sha256, sha256))
            return true;
    return false;
}

static bool had_dir(const kjoin_cp_record *r, const char *path)
{
    for (size_t i = 0; i < r->n_dirs; i++)
        if (!strcmp(r->dirs[i], path))
            return true;
    return false;
}

static bool empty_record(const kjoin_cp_record *r) { return !r->n_files && !r->n_dirs && !*r->etcd_peer; }

kjoin_code kjoin_cp_take_back(const char *kubernetes_dir, const kjoin_cp_record *before, kjoin_cp_reset_result *out,
                              kjoin_err *err)
{
    kjoin_cp_record *now = malloc(sizeof(*now));
    bool found = false;
    memset(out, 0, sizeof(*out));
    if (!now)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_code rc = kjoin_cp_record_read(kubernetes_dir, now, &found, err);
    if (rc || !found) {
        free(now);
        return rc;
    }
    size_t n_new = 0;
    for (size_t i = 0; i < now->n_files; i++)
        if (!had_file(before, now->files[i].path, now->files[i].sha256)) {
            size_t removed = out->n_removed;
            remove_written(out, now->files[i].path, now->files[i].sha256, false);
            n_new += out->n_removed > removed;
        }
    /* The record as it was when the run began (none: gone), then the
     * directories the run made, deepest first, when nothing else is in them. */
    kjoin_safedir d;
    if (!(rc = kjoin_safedir_open(kubernetes_dir, 0, &d, err))) {
        kjoin_safedir_close(&d);
        if (empty_record(before)) {
            if (!(rc = kjoin_safedir_open(kubernetes_dir, 0, &d, err)))
                rc = kjoin_safedir_unlink(&d, KJOIN_CP_RECORD_NAME, err);
            kjoin_safedir_close(&d);
        } else {
            kjoin_cp_record *copy = malloc(sizeof(*copy));
            if (!copy)
                rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
            else {
                memcpy(copy, before, sizeof(*copy));
                rc = write_record(kubernetes_dir, copy, err);
            }
            free(copy);
        }
    }
    qsort(now->dirs, now->n_dirs, sizeof(now->dirs[0]), longer_first);
    for (size_t i = 0; !rc && i < now->n_dirs; i++)
        if (!had_dir(before, now->dirs[i]))
            n_new += remove_dir(out, now->dirs[i], "not empty: it holds files this run did not make", false);
    out->had_record = n_new > 0 || out->n_left > 0; /* this run had written something */
    free(now);
    return rc;
}
