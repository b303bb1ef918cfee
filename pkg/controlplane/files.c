/* Files under the certificates directory, written all or nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kjoin/private/controlplane.h>
#include <kjoin/private/safedir.h>
#include <kjoin/private/util.h>

#include "internal.h"

#define FILES_MAX 16
#define REPLACED_MAX 64

struct kjoin_cp_replaced {
    size_t n;
    struct {
        char path[4200];
        mode_t mode;
        char *data;
        size_t len;
    } v[REPLACED_MAX];
};

kjoin_cp_replaced *kjoin_cp_replaced_new(void) { return calloc(1, sizeof(kjoin_cp_replaced)); }

void kjoin_cp_replaced_free(kjoin_cp_replaced *r)
{
    for (size_t i = 0; r && i < r->n; i++)
        kjoin_free_wiped(r->v[i].data, r->v[i].len);
    free(r);
}

bool kjoin_cp__replaced_keep(kjoin_cp_replaced *r, const char *path, char **text, size_t len)
{
    struct stat st;
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->v[i].path, path))
            return true; /* replaced twice in one run: what was there first is what goes back */
    if (r->n == REPLACED_MAX || strlen(path) >= sizeof(r->v[0].path) || lstat(path, &st) != 0)
        return false;
    snprintf(r->v[r->n].path, sizeof(r->v[0].path), "%s", path);
    r->v[r->n].mode = st.st_mode & 07777;
    r->v[r->n].data = *text, r->v[r->n].len = len;
    *text = NULL;
    r->n++;
    return true;
}

size_t kjoin_cp_replaced_restore(kjoin_cp_replaced *r, void (*said)(void *ctx, const char *path, const char *why),
                                 void *ctx)
{
    size_t failed = 0;
    while (r && r->n) {
        r->n--;
        kjoin_err e;
        bool ok = !kjoin_file_write_mode(r->v[r->n].path, r->v[r->n].data, r->v[r->n].len, r->v[r->n].mode, true, NULL,
                                        &e);
        failed += !ok;
        if (said)
            said(ctx, r->v[r->n].path, ok ? NULL : e.msg);
        kjoin_free_wiped(r->v[r->n].data, r->v[r->n].len);
        r->v[r->n].data = NULL;
    }
    return failed;
}

/* Removes the directories a failed write made, deepest first, from path up
 * to top (each only if empty: rmdir). */
static void remove_made(char *path, const char *top)
{
    size_t top_len = strlen(top);
    while (strlen(path) >= top_len && rmdir(path) == 0) {
        char *slash = strrchr(path, '/');
        if (strlen(path) == top_len || !slash || slash == path)
            break;
        *slash = '\0';
    }
}

/* The files about to be created or replaced (not those that already hold
 * the same bytes) and the directory they go into, into the record first.
 * A file there with other content that is not to be replaced is refused
 * now, as the write would refuse it: nothing is recorded or written. */
static kjoin_code record_first(const char *record_dir, const char *cert_dir, const char *deepest, const cp_file *files,
                               size_t n, bool force, kjoin_cp_replaced *replaced, kjoin_err *err)
{
    char paths[FILES_MAX][4200], sums[FILES_MAX][65];
    const char *path_of[FILES_MAX], *sum_of[FILES_MAX];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!files[i].data)
            continue;
        char *text = NULL;
        size_t len = 0;
        unsigned char sum[32];
        snprintf(paths[k], sizeof(paths[k]), "%s/%s", cert_dir, files[i].name);
        bool there = !kjoin_safedir_read_path(paths[k], false, &text, &len, NULL, NULL),
             same = there && len == files[i].len && !memcmp(text, files[i].data, len);
        /* kept as it was, for a take-back to put back; never replaced and lost */
        bool lost = there && !same && force && replaced && !kjoin_cp__replaced_keep(replaced, paths[k], &text, len);
        kjoin_free_wiped(text, len);
        if (lost)
            return kjoin_err_set(err, KJOIN_E_OUTPUT, "%s cannot be kept to put back should the join fail: it is not "
                                 "replaced", paths[k]);
        if (same)
            continue;
        if (there && !force)
            return kjoin_err_set(err, KJOIN_E_OUTPUT, "%s already exists with different content; set `force` to "
                                 "replace it", paths[k]);
        kjoin_sha256(files[i].data, files[i].len, sum, NULL);
        kjoin_hex(sum, 32, sums[k]);
        path_of[k] = paths[k], sum_of[k] = sums[k];
        k++;
    }
    return kjoin_cp_record_pending(record_dir, path_of, sum_of, k, &deepest, 1, err);
}

kjoin_code kjoin_cp__write_files(const char *record_dir, const char *cert_dir, const cp_file *files, size_t n,
                                 bool force, kjoin_write_result *written, const kjoin_cp_context *cx, kjoin_err *err)
{
    kjoin_cp_files *report = cx ? cx->written : NULL;
    char made[4096]; /* the first directory this call makes, if any */
    kjoin_safedir dirs[2] = {{.fd = -1}, {.fd = -1}}; /* cert_dir, its etcd/ */
    char etcd[4096];
    bool created[FILES_MAX] = {false}, wants_etcd = false;
    kjoin_write_result how[FILES_MAX];
    if (n > FILES_MAX)
        return kjoin_err_set(err, KJOIN_E_OTHER, "too many files at once");
    if (snprintf(etcd, sizeof(etcd), "%s/etcd", cert_dir) >= (int)sizeof(etcd))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the certificates directory's path is too long");
    for (size_t i = 0; i < n; i++)
        wants_etcd |= files[i].data && strchr(files[i].name, '/');
    kjoin_safedir_first_missing(wants_etcd ? etcd : cert_dir, made, sizeof(made));
    kjoin_code rc = record_dir ? record_first(record_dir, cert_dir, wants_etcd ? etcd : cert_dir, files, n, force,
                                              cx ? cx->replaced : NULL, err)
                               : KJOIN_OK;
    if (!rc)
        rc = kjoin_safedir_open(cert_dir, KJOIN_SAFEDIR_CREATE, &dirs[0], err);
    if (!rc && wants_etcd)
        rc = kjoin_safedir_open(etcd, KJOIN_SAFEDIR_CREATE, &dirs[1], err);
    for (size_t i = 0; !rc && i < n; i++) {
        if (!files[i].data)
            continue;
        const char *slash = strchr(files[i].name, '/');
        rc = kjoin_safedir_write(slash ? &dirs[1] : &dirs[0], slash ? slash + 1 : files[i].name, files[i].data,
                                 files[i].len, files[i].mode, force, &how[i], err);
        created[i] = !rc && how[i] == KJOIN_WRITE_CREATED;
        if (written && !rc)
            written[i] = how[i];
    }
    if (rc) /* all or nothing: what this call made goes again */
        for (size_t k = 0; k < n; k++)
            if (created[k]) {
                const char *slash = strchr(files[k].name, '/');
                kjoin_err ignored;
                (void)kjoin_safedir_unlink(slash ? &dirs[1] : &dirs[0], slash ? slash + 1 : files[k].name, &ignored);
            }
    kjoin_safedir_close(&dirs[0]);
    kjoin_safedir_close(&dirs[1]);
    for (size_t i = 0; !rc && i < n; i++) {
        char path[sizeof(report->v[0].path)];
        if (!files[i].data || how[i] == KJOIN_WRITE_UNCHANGED)
            continue;
        snprintf(path, sizeof(path), "%s/%s", cert_dir, files[i].name);
        if (report && report->n < KJOIN_CP_FILES_MAX) {
            memcpy(report->v[report->n].path, path, sizeof(path));
            report->v[report->n++].mode = files[i].mode;
        }
        if (cx)
            rc = kjoin_join_context_wrote(cx->join, path, files[i].mode, err);
    }
    if (rc && made[0]) {
        char deepest[4096];
        snprintf(deepest, sizeof(deepest), "%s", wants_etcd ? etcd : cert_dir);
        remove_made(deepest, made);
    }
    return rc;
}
