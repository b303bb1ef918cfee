/* A directory kjoin manages, trusted only as ssh trusts its files: opened
 * once (never through a symlink), its owner and mode and those of every
 * directory above it checked, and every file read or written relative to
 * that descriptor. */
#ifndef KJOIN_SAFEDIR_H
#define KJOIN_SAFEDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <kjoin/err.h>
#include <kjoin/util.h>

typedef struct kjoin_safedir {
    int fd;
    char path[4096]; /* for messages */
} kjoin_safedir;

/* ssh's rule (StrictModes) for what it trusts: owned by this user or root,
 * and writable by no one else; a secret also readable by no one else. what
 * names it in the message ("the key", "the directory"). Errors:
 * KJOIN_E_USAGE naming the path, owner, mode and the fix. */
kjoin_code kjoin_safedir_check(const char *what, const char *path, const struct stat *st, bool secret,
                               kjoin_err *err);

/* How a directory may be opened. */
enum {
    KJOIN_SAFEDIR_CREATE = 1, /* make it and missing parents (0700) first */
    /* Accept a sticky directory others may write in (/tmp), for writing one
     * file by name: no one can swap our names there, and a file of theirs is
     * never read as ours. Never for a directory whose contents kjoin trusts
     * as a whole (a certs store, a PKI directory). */
    KJOIN_SAFEDIR_SHARED_OK = 2
};

/* Opens path. Every directory above it must be this user's or root's and
 * writable by no one else unless sticky; the directory itself passes
 * kjoin_safedir_check (sticky accepted only with KJOIN_SAFEDIR_SHARED_OK)
 * and is not a symlink. Errors: KJOIN_E_USAGE (refused, missing),
 * KJOIN_E_OUTPUT (cannot be created). */
kjoin_code kjoin_safedir_open(const char *path, unsigned flags, kjoin_safedir *d, kjoin_err *err);
void kjoin_safedir_close(kjoin_safedir *d);

/* The shallowest of path and its ancestors that is not there (the first
 * directory a make would create), into out (cap bytes); "" when path is. */
void kjoin_safedir_first_missing(const char *path, char *out, size_t cap);

/* Whether kjoin_safedir_open(path, KJOIN_SAFEDIR_CREATE) would accept path,
 * deciding without making anything: path as it opens when it is there; else
 * the directory its first missing part would be made in, and every one above
 * that, as the directories above a path are checked. Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_safedir_can_make(const char *path, kjoin_err *err);

/* Opens path's directory as kjoin_safedir_open does (nothing created) and
 * points *name at path's last component, for a file read or removed
 * relative to it. Errors: as kjoin_safedir_open. */
kjoin_code kjoin_safedir_open_parent(const char *path, kjoin_safedir *d, const char **name, kjoin_err *err);

/* Reads name: a regular file (never a symlink) passing kjoin_safedir_check,
 * at most cap bytes, into a new NUL-terminated buffer (wiped on failure).
 * *missing (may be NULL) tells a file that is not there from one refused.
 * Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_safedir_read(const kjoin_safedir *d, const char *name, size_t cap, bool secret, char **out,
                              size_t *len, bool *missing, kjoin_err *err);

/* The file at path, read through its checked directory
 * (kjoin_safedir_read, at most 1 MiB). *missing (may be NULL) tells a file
 * that is not there. Errors: as kjoin_safedir_open and kjoin_safedir_read. */
kjoin_code kjoin_safedir_read_path(const char *path, bool secret, char **text, size_t *len, bool *missing,
                                   kjoin_err *err);

/* Reads the open file fd to its end, at most cap bytes (what names it in
 * messages), into a new NUL-terminated buffer, wiped on failure (it may hold
 * a key). Errors: KJOIN_E_USAGE, KJOIN_E_OTHER. */
kjoin_code kjoin_safedir_read_fd(int fd, const char *what, size_t cap, char **out, size_t *len, kjoin_err *err);

/* Writes name atomically, as kjoin_file_write_mode describes, relative to d:
 * a temporary file (O_EXCL|O_NOFOLLOW) with mode, fsynced, renamed over name,
 * the directory fsynced. An existing name must be a regular file passing
 * kjoin_safedir_check. Errors: KJOIN_E_OUTPUT, KJOIN_E_USAGE. */
kjoin_code kjoin_safedir_write(const kjoin_safedir *d, const char *name, const void *data, size_t len, mode_t mode,
                               bool force, kjoin_write_result *result, kjoin_err *err);

/* Removes name when it is a regular file or a symlink of this user's or
 * root's (a symlink itself, never its target). Missing is fine. Errors:
 * KJOIN_E_USAGE (not ours to remove), KJOIN_E_OUTPUT. */
kjoin_code kjoin_safedir_unlink(const kjoin_safedir *d, const char *name, kjoin_err *err);

/* Removes name under the directory dirfd and everything below it, never
 * following a symlink and never leaving the file system dev (a mount inside
 * is left, with why saying so). false with why (cap bytes) when something
 * could not be removed; a missing name is removed. */
bool kjoin_safedir_remove_tree(int dirfd, const char *name, dev_t dev, char *why, size_t cap);

/* Undoing what a join wrote, both joins' one rule: */
typedef enum { KJOIN_UNDO_GONE, KJOIN_UNDO_REMOVED, KJOIN_UNDO_LEFT } kjoin_undo;
/* The file at path, removed relative to its opened parent when it still
 * holds what was written (sha256: hex of SHA-256): KJOIN_UNDO_REMOVED (with
 * dry_run: it would be, and stays), _GONE when it is not there, _LEFT with
 * why (changed since, a directory that cannot be trusted, the removal
 * failed). */
kjoin_undo kjoin_safedir_undo_file(const char *path, const char *sha256, bool dry_run, char *why, size_t cap);
/* The directory at path, removed relative to its opened parent when it is
 * empty (with dry_run: it would be, when it is); one that is not is _LEFT
 * with not_empty as why. */
kjoin_undo kjoin_safedir_undo_dir(const char *path, bool dry_run, const char *not_empty, char *why, size_t cap);

/* Points name at target (a name in d) with one rename(2): readers see the
 * old link or the new one. Errors: KJOIN_E_OUTPUT. */
kjoin_code kjoin_safedir_link(const kjoin_safedir *d, const char *name, const char *target, kjoin_err *err);

/* Reads the symlink name, which must be this user's or root's and point at
 * a file of d: a plain name, or d's path and a plain name (as kubelet links);
 * target gets the plain name. Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_safedir_readlink(const kjoin_safedir *d, const char *name, char *target, size_t cap, kjoin_err *err);

#endif
