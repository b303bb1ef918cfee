/* What a join wrote, as its records keep it for kjoin reset: each file with
 * the SHA-256 of what was written there, and each directory the join made.
 * One format for the node's record and the control plane's ("files" and
 * "createdDirs" in each), one way to add to it, to ask it and to undo it. */
#ifndef KJOIN_RECORD_H
#define KJOIN_RECORD_H

#include <stdbool.h>
#include <stddef.h>

#include <kjoin/err.h>
#include <kjoin/private/safedir.h>

/* A join's one record file, in the kubeconfig directory: its name and cap
 * (pkg/record/record.h, its JSON side). */
#define KJOIN_RECORD_FILE_NAME "kjoin-join.json"
#define KJOIN_RECORD_FILE_MAX (512 * 1024)

#define KJOIN_WRITTEN_FILES 48 /* a control-plane join writes about 40, a worker's five */
#define KJOIN_WRITTEN_DIRS 16

typedef struct kjoin_written_file {
    char path[4096];
    char sha256[65]; /* hex */
} kjoin_written_file;

typedef struct kjoin_written {
    size_t n_files;
    kjoin_written_file files[KJOIN_WRITTEN_FILES];
    size_t n_dirs;
    char dirs[KJOIN_WRITTEN_DIRS][4096];
} kjoin_written;

/* path (a clean absolute path) as written with sha256 (hex), replacing what
 * was recorded for it. Errors: KJOIN_E_USAGE (more files than a record holds). */
kjoin_code kjoin_written_add_file(kjoin_written *w, const char *path, const char *sha256, kjoin_err *err);
/* dir and each of its ancestors that does not exist yet (what making dir
 * makes), each once. Errors: KJOIN_E_USAGE (more than a record holds, a path
 * too long). */
kjoin_code kjoin_written_add_missing_dirs(kjoin_written *w, const char *dir, kjoin_err *err);
/* Whether path is recorded with sha256 (NULL: with any digest). */
bool kjoin_written_has_file(const kjoin_written *w, const char *path, const char *sha256);
/* Whether path is recorded as written with exactly data. */
bool kjoin_written_has_data(const kjoin_written *w, const char *path, const void *data, size_t len);
bool kjoin_written_has_dir(const kjoin_written *w, const char *path);

/* Told of each path an undo removed (or, with dry_run, would remove) or left
 * (why says why); ctx is the caller's. */
typedef void (*kjoin_undo_report)(void *ctx, const char *path, kjoin_undo what, const char *why);
/* Removes each file of w that still holds what was written, but those that
 * before (NULL: none) records with the same digest. */
void kjoin_written_undo_files(const kjoin_written *w, const kjoin_written *before, bool dry_run, kjoin_undo_report report,
                              void *ctx);
/* Removes each directory of w that before (NULL: none) does not record,
 * deepest first, when it is empty; one that is not is left with not_empty. */
void kjoin_written_undo_dirs(const kjoin_written *w, const kjoin_written *before, bool dry_run, const char *not_empty,
                             kjoin_undo_report report, void *ctx);
/* A record's part: its directories, and who hears what undoing each did. */
typedef struct kjoin_written_part {
    const kjoin_written *written;
    kjoin_undo_report report;
    void *ctx;
} kjoin_written_part;
/* The directories of every part at once, deepest first whichever part made
 * them (one part's directory may hold another's), each when it is empty,
 * reported to the first part that records it. */
void kjoin_written_undo_parts(const kjoin_written_part *parts, size_t n, bool dry_run, const char *not_empty);

#endif
