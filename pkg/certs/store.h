/* Private to pkg/certs: the certs directory, opened once and used only
 * through that descriptor. */
#ifndef KJOIN_CERTS_STORE_H
#define KJOIN_CERTS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <kjoin/private/err.h>

typedef struct kjoin_store_file {
    const char *name;
    const char *data;
    size_t len;
    mode_t mode;
} kjoin_store_file;

#define KJOIN_STORE_MAX_NOTES 8

typedef struct kjoin_store {
    const char *path;   /* for messages */
    int dirfd;          /* the directory (O_DIRECTORY|O_NOFOLLOW) */
    int lockfd;         /* -1 for readers */
    int genfd;          /* the generation ..data named when opened; -1 when there is none */
    char gen[64];
    size_t n_notes;     /* what the caller should report (a key readable by others) */
    char notes[KJOIN_STORE_MAX_NOTES][200];
} kjoin_store;

typedef enum kjoin_store_mode {
    KJOIN_STORE_READ,   /* no lock: a reader sees the one generation ..data named at open */
    KJOIN_STORE_WRITE,  /* locked; a killed run's leftovers removed */
    KJOIN_STORE_CREATE  /* as WRITE, creating the directory and its parents (0700) */
} kjoin_store_mode;

/* Opens the directory, checks it (and the lock file) as ssh checks its
 * files: owned by this user or root, not group- or world-writable, not a
 * symlink. Errors: KJOIN_E_USAGE (refused, missing), KJOIN_E_OTHER (the lock
 * is held), KJOIN_E_OUTPUT. */
kjoin_code kjoin_store__open(const char *path, kjoin_store_mode mode, kjoin_store *s, kjoin_err *err);
void kjoin_store__close(kjoin_store *s);

/* Whether a generation exists (a PKI was committed). */
bool kjoin_store__has_pki(const kjoin_store *s);

/* Reads name from the generation opened. DIR/name must be kjoin's own
 * symlink "..data/<name>"; anything else is tampering. The file must be a
 * regular file owned by this user or root, not group- or world-writable;
 * a secret readable by others is noted. Errors: KJOIN_E_USAGE. */
kjoin_code kjoin_store__read(kjoin_store *s, const char *name, bool secret, char **out, size_t *len,
                             kjoin_err *err);

/* Reads the open file fd to its end, at most 4 MiB (what names it in
 * messages), into a new NUL-terminated buffer; wiped on failure (it may
 * hold a key). Errors: KJOIN_E_USAGE, KJOIN_E_OTHER. */
kjoin_code kjoin_store__read_fd(int fd, const char *what, char **out, size_t *len, kjoin_err *err);

/* Writes the complete set of files as a new generation and switches to it
 * atomically (a locked store only). Errors: KJOIN_E_OUTPUT, KJOIN_E_USAGE
 * (a name in the directory that is not kjoin's). */
kjoin_code kjoin_store__commit(kjoin_store *s, const kjoin_store_file *files, size_t n, kjoin_err *err);

/* Creates name in dirfd (never through a symlink, never over a file),
 * writes data with mode and fsyncs it. */
bool kjoin_store__write_at(int dirfd, const char *name, const char *data, size_t len, mode_t mode);

/* Removes dirfd/name, a flat directory of this user's (never a symlink):
 * its entries are unlinked, never followed, then it. With unless_locked, a
 * directory someone holds a flock on is left alone. */
void kjoin_store__remove_dir(int dirfd, const char *name, bool unless_locked);

/* Test hook: exits (99) when KJOIN_CERTS_CRASH_AT names point, standing in
 * for a kill there. */
void kjoin_store__crash_point(const char *point);

#endif
