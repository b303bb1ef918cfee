/* Directories kjoin writes into as root may be reachable by other users (a
 * kubelet PKI directory handed to a service user, a /tmp path): a file
 * another user planted there, or a symlink swapped in, must never be read as
 * ours or written through. So a directory is opened once and checked, and
 * everything after is relative to its descriptor. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include <kjoin/private/safedir.h>
#include <kjoin/private/util.h>

kjoin_code kjoin_safedir_check(const char *what, const char *path, const struct stat *st, bool secret,
                               kjoin_err *err)
{
    uid_t me = geteuid();
    if (st->st_uid != me && st->st_uid != 0)
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "%s %s is owned by uid %u, not by this user (uid %u) or root: another user could "
                             "replace it; chown it or run as its owner",
                             what, path, (unsigned)st->st_uid, (unsigned)me);
    if (st->st_mode & 022)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s %s is writable by group or others (mode %04o): chmod go-w %s",
                             what, path, (unsigned)(st->st_mode & 07777), path);
    if (secret && (st->st_mode & 077))
        return kjoin_err_set(err, KJOIN_E_USAGE,
                             "%s %s is readable by group or others (mode %04o): it must be this user's alone; "
                             "chmod 600 it, or remove it and run again",
                             what, path, (unsigned)(st->st_mode & 07777));
    return KJOIN_OK;
}

/* mkdir -p, 0700. */
static int make_dirs(const char *path)
{
    char *copy = strdup(path);
    int rc = copy ? 0 : -1;
    for (char *p = copy ? copy + 1 : NULL; p && *p && !rc; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        rc = mkdir(copy, 0700) != 0 && errno != EEXIST ? -1 : 0;
        *p = '/';
    }
    if (!rc && mkdir(path, 0700) != 0 && errno != EEXIST)
        rc = -1;
    free(copy);
    return rc;
}

/* ssh's StrictModes for the directories above path: each owned by us or
 * root and writable by no one else, unless sticky (/tmp). */
static kjoin_code check_parents(const char *path, kjoin_err *err)
{
    char *copy = strdup(path), *real = NULL;
    char *slash = copy ? strrchr(copy, '/') : NULL;
    if (slash)
        *slash = '\0';
    real = copy ? realpath(slash ? (*copy ? copy : "/") : ".", NULL) : NULL;
    kjoin_code rc = real ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_USAGE, "cannot resolve the parent of %s", path);
    while (!rc) {
        struct stat st;
        const char *dir = *real ? real : "/";
        if (stat(dir, &st) != 0)
            rc = kjoin_err_set(err, KJOIN_E_USAGE, "cannot stat %s: %s", dir, strerror(errno));
        else if (st.st_uid != geteuid() && st.st_uid != 0)
            rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s, above %s, is owned by uid %u, not by this user or root: "
                                                   "that user could swap what is below it; chown it",
                               dir, path, (unsigned)st.st_uid);
        else if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))
            rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s, above %s, is writable by group or others (mode %04o): "
                                                   "chmod go-w %s",
                               dir, path, (unsigned)(st.st_mode & 07777), dir);
        char *up = *real ? strrchr(real, '/') : NULL;
        if (!up)
            break;
        *up = '\0';
    }
    free(real);
    free(copy);
    return rc;
}

void kjoin_safedir_first_missing(const char *path, char *out, size_t cap)
{
    struct stat st;
    out[0] = '\0';
    if (snprintf(out, cap, "%s", path) >= (int)cap || lstat(out, &st) == 0) {
        out[0] = '\0';
        return;
    }
    for (char *slash; (slash = strrchr(out, '/')) && slash != out;) {
        *slash = '\0';
        if (lstat(out, &st) == 0) {
            *slash = '/';
            return;
        }
    }
}

kjoin_code kjoin_safedir_can_make(const char *path, kjoin_err *err)
{
    char missing[4096];
    if (strlen(path) >= sizeof(missing))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the path %.80s... is too long", path);
    kjoin_safedir_first_missing(path, missing, sizeof(missing));
    if (*missing) /* made below directories that must be trusted first: checked now, nothing made */
        return check_parents(missing, err);
    kjoin_safedir d;
    kjoin_code rc = kjoin_safedir_open(path, 0, &d, err);
    kjoin_safedir_close(&d);
    return rc;
}

kjoin_code kjoin_safedir_open(const char *path, unsigned flags, kjoin_safedir *d, kjoin_err *err)
{
    struct stat st;
    d->fd = -1;
    snprintf(d->path, sizeof(d->path), "%s", path);
    if (strlen(path) >= sizeof(d->path))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the path %.80s... is too long", path);
    if (flags & KJOIN_SAFEDIR_CREATE) {
        char missing[sizeof(d->path)];
        kjoin_safedir_first_missing(path, missing, sizeof(missing));
        /* Never a directory made under one another user could swap. */
        kjoin_code rc = *missing ? check_parents(missing, err) : KJOIN_OK;
        if (rc)
            return rc;
        if (make_dirs(path) != 0)
            return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot create the directory %s: %s", path, strerror(errno));
    }
    kjoin_code rc = check_parents(path, err);
    if (rc)
        return rc;
    d->fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d->fd < 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "cannot open the directory %s: %s%s", path, strerror(errno),
                             errno == ELOOP || errno == ENOTDIR ? " (a symlink is not followed: give the real path)"
                                                                : "");
    if (fstat(d->fd, &st) != 0)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "cannot stat %s: %s", path, strerror(errno));
    else {
        if ((flags & KJOIN_SAFEDIR_SHARED_OK) && (st.st_mode & S_ISVTX))
            st.st_mode &= ~(mode_t)022; /* sticky (/tmp): see KJOIN_SAFEDIR_SHARED_OK */
        rc = kjoin_safedir_check("the directory", path, &st, false, err);
    }
    if (rc)
        kjoin_safedir_close(d);
    return rc;
}

void kjoin_safedir_close(kjoin_safedir *d)
{
    if (d->fd >= 0)
        close(d->fd);
    d->fd = -1;
}

static void full_name(const kjoin_safedir *d, const char *name, char *out, size_t cap)
{
    snprintf(out, cap, "%s%s%s", d->path, d->path[strlen(d->path) - 1] == '/' ? "" : "/", name);
}

kjoin_code kjoin_safedir_read(const kjoin_safedir *d, const char *name, size_t cap, bool secret, char **out,
                              size_t *len, bool *missing, kjoin_err *err)
{
    char full[4400];
    struct stat st;
    full_name(d, name, full, sizeof(full));
    if (missing)
        *missing = false;
    /* O_NONBLOCK: a FIFO planted under the name must not hang the run. */
    int fd = openat(d->fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (missing)
            *missing = errno == ENOENT;
        return kjoin_err_set(err, KJOIN_E_USAGE, "cannot open %s: %s%s", full, strerror(errno),
                             errno == ELOOP ? " (a symlink kjoin did not make is not followed: remove it)" : "");
    }
    kjoin_code rc = fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)
                        ? kjoin_err_set(err, KJOIN_E_USAGE, "%s is not a regular file: remove it", full)
                        : kjoin_safedir_check(secret ? "the key" : "the file", full, &st, secret, err);
    if (!rc)
        rc = kjoin_safedir_read_fd(fd, full, cap, out, len, err);
    close(fd);
    return rc;
}

kjoin_code kjoin_safedir_read_fd(int fd, const char *what, size_t cap, char **out, size_t *len, kjoin_err *err)
{
    size_t got = 0, size = 4096;
    char *buf = malloc(size + 1);
    kjoin_code rc = buf ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    while (!rc) {
        if (got == size) {
            char *bigger = size > cap ? NULL : malloc(size * 2 + 1);
            if (!bigger) {
                rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s is larger than %zu bytes", what, cap);
                break;
            }
            memcpy(bigger, buf, got);
            kjoin_free_wiped(buf, got);
            buf = bigger, size *= 2;
        }
        ssize_t n = read(fd, buf + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            rc = kjoin_err_set(err, KJOIN_E_USAGE, "cannot read %s: %s", what, strerror(errno));
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    if (!rc && got > cap)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s is larger than %zu bytes", what, cap);
    if (rc) {
        kjoin_free_wiped(buf, got);
        return rc;
    }
    buf[got] = '\0';
    *out = buf;
    *len = got;
    return KJOIN_OK;
}

/* True when the regular file name holds exactly data. What was read is
 * wiped: it may be a kubeconfig's token. */
static bool same_content(int dirfd, const char *name, const void *data, size_t len)
{
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return false;
    char *old = malloc(len + 1);
    size_t got = 0;
    ssize_t n = 1;
    while (old && got <= len && n > 0) {
        n = read(fd, old + got, len + 1 - got);
        if (n < 0 && errno == EINTR)
            n = 1;
        else if (n > 0)
            got += (size_t)n;
    }
    close(fd);
    bool same = old && n == 0 && got == len && CRYPTO_memcmp(old, data, len) == 0;
    kjoin_free_wiped(old, len + 1);
    return same;
}

static bool write_all(int fd, const char *p, size_t len)
{
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

#define TEMP_SUFFIX ".kjoin-XXXXXX"

/* When this program started: a temporary file older than that is a killed
 * run's leftover, never a concurrent writer's. */
static time_t started;
__attribute__((constructor)) static void note_start(void) { started = time(NULL); }

/* Whether name is "<base>.kjoin-" and six characters of mkstemp's alphabet. */
static bool is_temp_of(const char *name, const char *base)
{
    size_t b = strlen(base), t = sizeof(TEMP_SUFFIX) - 1;
    if (strlen(name) != b + t || strncmp(name, base, b) != 0 || strncmp(name + b, TEMP_SUFFIX, t - 6) != 0)
        return false;
    for (const char *p = name + b + t - 6; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            return false;
    return true;
}

/* Removes what a killed run left beside base in dirfd: only kjoin's own
 * temporary files of this output (regular files, ours, older than this
 * run), never through a symlink. They may hold a whole kubeconfig. */
static void remove_leftovers(int dirfd, const char *base)
{
    int fd = dup(dirfd);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        if (fd >= 0)
            close(fd);
        return;
    }
    for (struct dirent *e; (e = readdir(dir));) {
        struct stat st;
        if (!is_temp_of(e->d_name, base) || fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_mtime < started)
            unlinkat(dirfd, e->d_name, 0);
    }
    closedir(dir);
}

/* A new file "<base>.kjoin-XXXXXX" in dirfd, named at random, with mode;
 * tmp holds strlen(base) + sizeof(TEMP_SUFFIX). */
static int create_temp(int dirfd, const char *base, char *tmp, mode_t mode)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    unsigned char rnd[6];
    snprintf(tmp, strlen(base) + sizeof(TEMP_SUFFIX), "%s" TEMP_SUFFIX, base);
    char *x = tmp + strlen(base) + sizeof(TEMP_SUFFIX) - 7;
    for (int tries = 0; tries < 16; tries++) {
        if (kjoin_random_bytes(rnd, sizeof(rnd), NULL))
            return -1;
        for (size_t i = 0; i < sizeof(rnd); i++)
            x[i] = alphabet[rnd[i] % 62];
        int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0600);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

kjoin_code kjoin_safedir_write(const kjoin_safedir *d, const char *name, const void *data, size_t len, mode_t mode,
                               bool force, kjoin_write_result *result, kjoin_err *err)
{
    char full[4400];
    struct stat st;
    full_name(d, name, full, sizeof(full));
    bool exists = fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (exists && !S_ISREG(st.st_mode))
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "%s exists and is not a regular file", full);
    if (exists && same_content(d->fd, name, data, len)) {
        if ((st.st_mode & 07777) != mode && fchmodat(d->fd, name, mode, 0) != 0)
            return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot set mode %04o on %s: %s", (unsigned)mode, full,
                                 strerror(errno));
        if (result)
            *result = KJOIN_WRITE_UNCHANGED;
        return KJOIN_OK;
    }
    if (exists && !force)
        return kjoin_err_set(err, KJOIN_E_OUTPUT,
                             "%s already exists with different content; set `force` to replace it", full);
    remove_leftovers(d->fd, name);
    KJOIN_AUTO_FREE char *tmp = malloc(strlen(name) + sizeof(TEMP_SUFFIX));
    if (!tmp)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    int fd = create_temp(d->fd, name, tmp, mode);
    if (fd < 0)
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot create a temporary file beside %s: %s", full,
                             strerror(errno));
    bool ok = fchmod(fd, mode) == 0 && write_all(fd, data, len) && fsync(fd) == 0;
    int saved = errno;
    ok = close(fd) == 0 && ok;
    if (ok && renameat(d->fd, tmp, d->fd, name) != 0) {
        saved = errno;
        ok = false;
    }
    if (!ok)
        unlinkat(d->fd, tmp, 0);
    else
        fsync(d->fd);
    if (!ok)
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot write %s: %s", full, strerror(saved));
    if (result)
        *result = exists ? KJOIN_WRITE_REPLACED : KJOIN_WRITE_CREATED;
    return KJOIN_OK;
}

kjoin_code kjoin_safedir_unlink(const kjoin_safedir *d, const char *name, kjoin_err *err)
{
    char full[4400];
    struct stat st;
    full_name(d, name, full, sizeof(full));
    if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? KJOIN_OK
                               : kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot stat %s: %s", full, strerror(errno));
    if (!(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) || (st.st_uid != geteuid() && st.st_uid != 0))
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s is not a file of this user's or root's: not removing it", full);
    if (unlinkat(d->fd, name, 0) != 0 && errno != ENOENT)
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot remove %s: %s", full, strerror(errno));
    fsync(d->fd);
    return KJOIN_OK;
}

kjoin_code kjoin_safedir_link(const kjoin_safedir *d, const char *name, const char *target, kjoin_err *err)
{
    char tmp[512], full[4400];
    full_name(d, name, full, sizeof(full));
    snprintf(tmp, sizeof(tmp), "%s.kjoin-link", name);
    unlinkat(d->fd, tmp, 0);
    if (symlinkat(target, d->fd, tmp) != 0 || renameat(d->fd, tmp, d->fd, name) != 0) {
        int saved = errno;
        unlinkat(d->fd, tmp, 0);
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot switch %s: %s", full, strerror(saved));
    }
    fsync(d->fd);
    return KJOIN_OK;
}

kjoin_code kjoin_safedir_readlink(const kjoin_safedir *d, const char *name, char *target, size_t cap, kjoin_err *err)
{
    char full[4400];
    struct stat st;
    full_name(d, name, full, sizeof(full));
    if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "cannot stat %s: %s", full, strerror(errno));
    ssize_t n = S_ISLNK(st.st_mode) ? readlinkat(d->fd, name, target, cap - 1) : -1;
    if (n <= 0 || (size_t)n >= cap - 1 || (st.st_uid != geteuid() && st.st_uid != 0))
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s is not a symlink of this user's or root's: remove it", full);
    target[n] = '\0';
    /* kubelet links by absolute path: a name in this same directory is fine. */
    size_t dl = strlen(d->path);
    while (dl > 1 && d->path[dl - 1] == '/')
        dl--;
    if (target[0] == '/' && strncmp(target, d->path, dl) == 0 && target[dl] == '/')
        memmove(target, target + dl + 1, strlen(target + dl + 1) + 1);
    if (!*target || strchr(target, '/') || strcmp(target, ".") == 0 || strcmp(target, "..") == 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s points outside its directory (to %s): remove it", full, target);
    return KJOIN_OK;
}

kjoin_code kjoin_safedir_open_parent(const char *path, kjoin_safedir *d, const char **name, kjoin_err *err)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    d->fd = -1;
    if (!slash || (size_t)(slash - path) >= sizeof(dir))
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s is not an absolute path", path);
    *name = slash + 1;
    snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
    return kjoin_safedir_open(dir, 0, d, err);
}

kjoin_code kjoin_safedir_read_path(const char *path, bool secret, char **text, size_t *len, bool *missing,
                                   kjoin_err *err)
{
    kjoin_safedir d;
    const char *name;
    kjoin_code rc = kjoin_safedir_open_parent(path, &d, &name, err);
    if (missing)
        *missing = rc && access(path, F_OK) != 0;
    if (!rc)
        rc = kjoin_safedir_read(&d, name, 1 << 20, secret, text, len, missing, err);
    kjoin_safedir_close(&d);
    return rc;
}

bool kjoin_safedir_remove_tree(int dirfd, const char *name, dev_t dev, char *why, size_t cap)
{
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT;
    if (!S_ISDIR(st.st_mode)) {
        if (unlinkat(dirfd, name, 0) == 0)
            return true;
        snprintf(why, cap, "cannot remove %s: %s", name, strerror(errno));
        return false;
    }
    if (st.st_dev != dev) {
        snprintf(why, cap, "%s is a mount point: unmount it first", name);
        return false;
    }
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    bool ok = d != NULL;
    if (!ok)
        snprintf(why, cap, "cannot open %s: %s", name, strerror(errno));
    struct dirent *e;
    while (ok && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            ok = kjoin_safedir_remove_tree(fd, e->d_name, dev, why, cap);
    if (d)
        closedir(d);
    else if (fd >= 0)
        close(fd);
    if (ok && unlinkat(dirfd, name, AT_REMOVEDIR) != 0) {
        snprintf(why, cap, "cannot remove %s: %s", name, strerror(errno));
        ok = false;
    }
    return ok;
}

kjoin_undo kjoin_safedir_undo_file(const char *path, const char *sha256, bool dry_run, char *why, size_t cap)
{
    char *text = NULL, hex[65];
    const char *name;
    size_t len = 0;
    bool missing = false;
    unsigned char sum[32];
    kjoin_safedir d;
    kjoin_err e;
    kjoin_undo u = KJOIN_UNDO_LEFT;
    if (kjoin_safedir_open_parent(path, &d, &name, &e)) {
        struct stat st;
        if (lstat(path, &st) != 0) /* neither it nor its directory: nothing to undo */
            return KJOIN_UNDO_GONE;
        snprintf(why, cap, "%s", e.msg); /* there, in a directory it cannot trust */
        return KJOIN_UNDO_LEFT;
    }
    if (kjoin_safedir_read(&d, name, 1 << 20, false, &text, &len, &missing, &e)) {
        if (missing)
            u = KJOIN_UNDO_GONE;
        else
            snprintf(why, cap, "%s", e.msg);
    } else if (kjoin_sha256(text, len, sum, NULL) || strcmp(kjoin_hex(sum, 32, hex), sha256) != 0) {
        snprintf(why, cap, "changed since the join wrote it");
    } else if (!dry_run && kjoin_safedir_unlink(&d, name, &e)) {
        snprintf(why, cap, "%s", e.msg);
    } else {
        u = KJOIN_UNDO_REMOVED;
    }
    kjoin_free_wiped(text, len);
    kjoin_safedir_close(&d);
    return u;
}

kjoin_undo kjoin_safedir_undo_dir(const char *path, bool dry_run, const char *not_empty, char *why, size_t cap)
{
    kjoin_safedir d, self;
    const char *name;
    kjoin_err e;
    struct stat st;
    kjoin_undo u = KJOIN_UNDO_LEFT;
    if (lstat(path, &st) != 0 && errno == ENOENT)
        return KJOIN_UNDO_GONE;
    if (kjoin_safedir_open_parent(path, &d, &name, &e)) {
        snprintf(why, cap, "%s", e.msg);
        return KJOIN_UNDO_LEFT;
    }
    if (dry_run) { /* what an rmdir would say, without one: empty or not */
        bool empty = false;
        if (!kjoin_safedir_open(path, 0, &self, &e)) {
            int fd = dup(self.fd);
            DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
            if (!dir && fd >= 0)
                close(fd);
            struct dirent *ent;
            empty = dir != NULL;
            while (dir && empty && (ent = readdir(dir)))
                empty = !strcmp(ent->d_name, ".") || !strcmp(ent->d_name, "..");
            if (dir)
                closedir(dir);
            kjoin_safedir_close(&self);
        }
        if (empty)
            u = KJOIN_UNDO_REMOVED;
        else
            snprintf(why, cap, "%s", not_empty);
    } else if (unlinkat(d.fd, name, AT_REMOVEDIR) == 0) {
        u = KJOIN_UNDO_REMOVED;
    } else if (errno == ENOENT) {
        u = KJOIN_UNDO_GONE;
    } else {
        snprintf(why, cap, "%s", errno == ENOTEMPTY ? not_empty : strerror(errno));
    }
    kjoin_safedir_close(&d);
    return u;
}
