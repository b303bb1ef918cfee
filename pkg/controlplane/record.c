/* What a control-plane join made, for kjoin reset: the files each step
 * wrote (with their digests), the directories it made, the etcd member it
 * added and the data directory it made. Kept in the join's one record file
 * (its member "controlPlane"; the node's part beside it), 0600, written
 * atomically; read back as untrusted. A record of an earlier kjoin, in a
 * file of its own, is still read, and taken in by the next write. */
#include <kjoin/private/controlplane.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>

#include <kjoin/private/safedir.h>

#include "../record/record.h"
#include "internal.h"

#define RECORD_MAX (256 * 1024)
#define BAD KJOIN_E_USAGE

static bool clean_path(const char *p)
{
    return kjoin_clean_path(p) && kjoin_utf8_printable(p) && strlen(p) < 4096;
}

/* A control-plane join writes where the cluster's configuration says
 * (certificatesDir, etcd's data directory): any clean absolute path. */
static bool any_path(const char *path, const void *ctx)
{
    (void)path, (void)ctx;
    return true;
}

kjoin_code kjoin_cp_record_parse(const char *text, size_t len, kjoin_cp_record *out, kjoin_err *err)
{
    json_object *o = kjoin_record_open(text, len, RECORD_MAX, "KjoinControlPlaneRecord"), *etcd;
    kjoin_code rc = KJOIN_OK;
    memset(out, 0, sizeof(*out));
    if (!o)
        rc = kjoin_err_set(err, BAD, "the control-plane record is not kjoin's (kind KjoinControlPlaneRecord, one JSON "
                           "object of at most %d bytes)", RECORD_MAX);
    if (!rc)
        rc = kjoin_record_written_parse(o, "control-plane record", any_path, any_path, NULL, &out->written, err);
    if (!rc && json_object_object_get_ex(o, "etcd", &etcd)) {
        const char *peer = kjoin_record_str(etcd, "peerURL"), *id = kjoin_record_str(etcd, "memberID"),
                   *certs = kjoin_record_str(etcd, "certificatesDir"), *data = kjoin_record_str(etcd, "dataDir");
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

/* The record as kjoin before the one record file kept it. */
static kjoin_code read_legacy(const char *kubernetes_dir, kjoin_cp_record *out, bool *found, kjoin_err *err)
{
    char path[4200], *text = NULL;
    size_t len = 0;
    bool missing = false;
    snprintf(path, sizeof(path), "%s/%s", kubernetes_dir, KJOIN_CP_LEGACY_RECORD_NAME);
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

/* The control plane's part of the one record file (*found false when it has none). */
static kjoin_code part_of(json_object *file, const char *where, kjoin_cp_record *out, bool *found, kjoin_err *err)
{
    json_object *part;
    if (!json_object_object_get_ex(file, KJOIN_RECORD_CONTROL_PLANE, &part))
        return KJOIN_OK;
    const char *text = json_object_to_json_string_ext(part, JSON_C_TO_STRING_PLAIN);
    kjoin_err e;
    kjoin_code rc = kjoin_cp_record_parse(text, strlen(text), out, &e);
    *found = true;
    return rc ? kjoin_err_set(err, rc, "%s: %s", where, e.msg) : KJOIN_OK;
}

kjoin_code kjoin_cp_record_parse_file(const char *text, size_t len, kjoin_cp_record *out, bool *found, kjoin_err *err)
{
    json_object *file = kjoin_record_open(text, len, KJOIN_RECORD_FILE_MAX, "KjoinJoinRecord");
    *found = false;
    memset(out, 0, sizeof(*out));
    kjoin_code rc = file ? part_of(file, "the join record", out, found, err)
                         : kjoin_err_set(err, BAD, "the join record is not kjoin's (kind KjoinJoinRecord, one JSON "
                                         "object of at most %d bytes)", KJOIN_RECORD_FILE_MAX);
    json_object_put(file);
    return rc;
}

kjoin_code kjoin_cp_record_read(const char *kubernetes_dir, kjoin_cp_record *out, bool *found, kjoin_err *err)
{
    json_object *file = NULL;
    char where[4200];
    *found = false;
    memset(out, 0, sizeof(*out));
    snprintf(where, sizeof(where), "%s/%s", kubernetes_dir, KJOIN_RECORD_FILE_NAME);
    kjoin_code rc = kjoin_record_file_load(kubernetes_dir, &file, err);
    if (!rc && file)
        rc = part_of(file, where, out, found, err);
    json_object_put(file);
    return rc || *found ? rc : read_legacy(kubernetes_dir, out, found, err);
}

/* The one record file with the control plane's part set to part (NULL:
 * without one), and an earlier kjoin's record of its own gone (what it held
 * is in part, read through kjoin_cp_record_read). *gone: the record file
 * went (it held nothing else); a dry run changes nothing and says what
 * would go. */
static kjoin_code put_part(const char *kubernetes_dir, json_object *part, bool dry_run, kjoin_cp_reset_result *out,
                           kjoin_err *err);
static void note(char (*list)[1100], size_t *n, const char *path);

/* Writes r (with the record's own directory among the directories made,
 * when writing it makes that). */
static kjoin_code write_record(const char *kubernetes_dir, kjoin_cp_record *r, kjoin_err *err)
{
    kjoin_code made = kjoin_written_add_missing_dirs(&r->written, kubernetes_dir, err);
    if (made)
        return made;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "kind", json_object_new_string("KjoinControlPlaneRecord"));
    kjoin_record_written_emit(o, &r->written);
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
    if (!rc)
        rc = put_part(kubernetes_dir, o, false, NULL, err);
    json_object_put(o);
    return rc;
}

static kjoin_code put_part(const char *kubernetes_dir, json_object *part, bool dry_run, kjoin_cp_reset_result *out,
                           kjoin_err *err)
{
    json_object *file = NULL;
    bool gone = false;
    kjoin_code rc = kjoin_record_file_load(kubernetes_dir, &file, err);
    if (!rc && !file && part)
        file = kjoin_record_file_new();
    if (!rc && file && (part || json_object_object_get_ex(file, KJOIN_RECORD_CONTROL_PLANE, NULL))) {
        if (part)
            json_object_object_add(file, KJOIN_RECORD_CONTROL_PLANE, json_object_get(part));
        else
            json_object_object_del(file, KJOIN_RECORD_CONTROL_PLANE);
        if (dry_run) /* a reset's: the node's part goes first */
            gone = true;
        else
            rc = kjoin_record_file_store(kubernetes_dir, file, &gone, err);
    }
    json_object_put(file);
    char path[4200];
    if (!rc && gone && out) {
        snprintf(path, sizeof(path), "%s/%s", kubernetes_dir, KJOIN_RECORD_FILE_NAME);
        note(out->removed, &out->n_removed, path);
    }
    /* the record of an earlier kjoin, its content now in the one record file (or undone) */
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", kubernetes_dir, KJOIN_CP_LEGACY_RECORD_NAME);
    if (!rc && lstat(path, &st) == 0) {
        kjoin_safedir d;
        if (!dry_run && !(rc = kjoin_safedir_open(kubernetes_dir, 0, &d, err))) {
            rc = kjoin_safedir_unlink(&d, KJOIN_CP_LEGACY_RECORD_NAME, err);
            kjoin_safedir_close(&d);
        }
        if (!rc && out)
            note(out->removed, &out->n_removed, path);
    }
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
    for (size_t i = 0; !rc && i < n; i++)
        rc = kjoin_written_add_file(&r->written, paths[i], sha256[i], err);
    for (size_t i = 0; !rc && i < n_dirs; i++)
        rc = kjoin_written_add_missing_dirs(&r->written, dirs[i], err);
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

kjoin_code kjoin_cp_record_forget_etcd(const char *kubernetes_dir, const char *manifest, bool *removed, kjoin_err *err)
{
    kjoin_cp_record *r;
    *removed = false;
    kjoin_code rc = load(kubernetes_dir, &r, err);
    if (rc)
        return rc;
    kjoin_written *w = &r->written;
    for (size_t i = 0; i < w->n_files; i++) {
        if (strcmp(w->files[i].path, manifest))
            continue;
        char why[600];
        kjoin_undo u = kjoin_safedir_undo_file(manifest, w->files[i].sha256, false, why, sizeof(why));
        if (u == KJOIN_UNDO_LEFT) { /* changed since: it stays, and so does its line */
            free(r);
            return kjoin_err_set(err, KJOIN_E_OUTPUT, "%s", why);
        }
        *removed = u == KJOIN_UNDO_REMOVED;
        memmove(&w->files[i], &w->files[i + 1], (w->n_files - i - 1) * sizeof(w->files[0]));
        w->n_files--;
        break;
    }
    /* the data directory the join made, empty: etcd never ran there */
    char why[600];
    if (*r->etcd_peer && r->data_dir_made)
        kjoin_safedir_undo_dir(r->etcd_data_dir, false, "not empty", why, sizeof(why));
    *r->etcd_peer = *r->etcd_id = '\0';
    rc = write_record(kubernetes_dir, r, err);
    free(r);
    return rc;
}

static void note(char (*list)[1100], size_t *n, const char *path)
{
    if (*n < KJOIN_CP_RESET_PATHS_MAX)
        snprintf(list[(*n)++], 1100, "%.1000s", path);
}

static void note_left(kjoin_cp_reset_result *out, const char *path, const char *why)
{
    if (out->n_left < KJOIN_WRITTEN_FILES + KJOIN_WRITTEN_DIRS + 2)
        snprintf(out->left[out->n_left++], sizeof(out->left[0]), "%.600s: %.500s", path, why);
}

/* What undoing one of the record's files or directories did; counted in n_undone when removed. */
typedef struct undo_report {
    kjoin_cp_reset_result *out;
    size_t n_undone;
} undo_report;

static void undone(void *ctx, const char *path, kjoin_undo u, const char *why)
{
    undo_report *r = ctx;
    if (u == KJOIN_UNDO_REMOVED)
        note(r->out->removed, &r->out->n_removed, path), r->n_undone++;
    else if (u == KJOIN_UNDO_LEFT)
        note_left(r->out, path, why);
}

void kjoin_cp_reset_report(void *out, const char *path, kjoin_undo what, const char *why)
{
    undo_report report = {.out = out};
    undone(&report, path, what, why);
}

kjoin_code kjoin_cp_reset_files(const kjoin_cp_reset_spec *s, kjoin_cp_reset_result *out, kjoin_written *dirs,
                                kjoin_err *err)
{
    kjoin_cp_record *rec = malloc(sizeof(*rec));
    bool found = false;
    if (!rec)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_code rc = kjoin_cp_record_read(s->kubernetes_dir, rec, &found, err);
    undo_report report = {.out = out};
    out->had_record |= found;
    if (!rc && found)
        kjoin_written_undo_files(&rec->written, NULL, s->dry_run, undone, &report);
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
    if (!rc && found) /* the record's control-plane part, last of its files */
        rc = put_part(s->kubernetes_dir, NULL, s->dry_run, out, err);
    /* The directories the join made, deepest first, when nothing else is in them (or the caller's to undo). */
    if (!rc && found && dirs)
        *dirs = rec->written;
    else if (!rc && found)
        kjoin_written_undo_dirs(&rec->written, NULL, s->dry_run, KJOIN_RESET_NOT_EMPTY, undone, &report);
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

static bool empty_record(const kjoin_cp_record *r) { return !r->written.n_files && !r->written.n_dirs && !*r->etcd_peer; }

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
    undo_report report = {.out = out};
    kjoin_written_undo_files(&now->written, &before->written, false, undone, &report);
    /* The record as it was when the run began (none: gone), then the
     * directories the run made, deepest first, when nothing else is in them. */
    if (empty_record(before)) {
        rc = put_part(kubernetes_dir, NULL, false, NULL, err);
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
    if (!rc)
        kjoin_written_undo_dirs(&now->written, &before->written, false,
                                "not empty: it holds files this run did not make", undone, &report);
    out->had_record = report.n_undone > 0 || out->n_left > 0; /* this run had written something */
    free(now);
    return rc;
}
