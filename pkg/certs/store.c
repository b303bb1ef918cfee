/* The certs directory, written the way kubelet's AtomicWriter writes Secret
 * volumes: each run writes a complete generation DIR/..gen-<time>-<hex>/,
 * then swaps the DIR/..data symlink to it with one rename(2); DIR/<file> are
 * stable symlinks to ..data/<file>. Killed at any point, DIR shows the old
 * set or the new set, never a mix.
 *
 * The directory may be handed to a service user while root runs the
 * rotation, so nothing in it is trusted: it is opened once and every
 * operation is relative to that descriptor; no name is followed if it is a
 * symlink kjoin did not make; only kjoin's own generations are removed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include <kjoin/private/safedir.h>
#include <kjoin/private/util.h>

#include "store.h"

#define LOCK_FILE ".kjoin-certs.lock"
#define DATA_LINK "..data"
#define DATA_TMP "..data.tmp"
#define MAX_FILE (4 * 1024 * 1024)

void kjoin_store__crash_point(const char *point)
{
#ifdef KJOIN_TEST_HOOKS /* the suite's builds only: a release build never exits on demand */
    const char *at = getenv("KJOIN_CERTS_CRASH_AT");
    if (at && strcmp(at, point) == 0)
        _exit(99);
#else
    (void)point;
#endif
}

/* Whether name is one kjoin gives a generation: "..gen-<digits>-<8 hex>". */
static bool is_generation_name(const char *name)
{
    if (strncmp(name, "..gen-", 6) != 0)
        return false;
    const char *p = name + 6;
    size_t digits = strspn(p, "0123456789");
    if (!digits || digits > 20 || p[digits] != '-')
        return false;
    p += digits + 1;
    return strlen(p) == 8 && strspn(p, "0123456789abcdef") == 8;
}

/* ssh's rule for a file it trusts (kjoin_safedir_check), for DIR/name. */
static kjoin_code check_owner(const kjoin_store *s, const struct stat *st, const char *what, const char *name,
                              kjoin_err *err)
{
    char full[4400];
    snprintf(full, sizeof(full), "%s/%s", s->path, name);
    return kjoin_safedir_check(what, full, st, false, err);
}

static void note(kjoin_store *s, const char *fmt, const char *a, unsigned mode)
{
    if (s->n_notes < KJOIN_STORE_MAX_NOTES)
        snprintf(s->notes[s->n_notes++], sizeof(s->notes[0]), fmt, a, mode);
}

void kjoin_store__remove_dir(int dirfd, const char *name, bool unless_locked)
{
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
        return;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 && (!unless_locked || flock(fd, LOCK_EX | LOCK_NB) == 0) ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlinkat(fd, e->d_name, 0);
    unlinkat(dirfd, name, AT_REMOVEDIR);
    closedir(d);
}

/* Removes one of kjoin's generation directories, unless a reader holds it
 * (a shared lock): that one is left for a later run. */
static void remove_generation(int dirfd, const char *gen)
{
    if (is_generation_name(gen))
        kjoin_store__remove_dir(dirfd, gen, true);
}

/* The generation ..data names, or "" when there is none (or it is not ours). */
static void current_generation(int dirfd, char *out, size_t cap)
{
    struct stat st;
    ssize_t n = -1;
    if (fstatat(dirfd, DATA_LINK, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
        n = readlinkat(dirfd, DATA_LINK, out, cap - 1);
    out[n > 0 ? n : 0] = '\0';
    if (!is_generation_name(out))
        out[0] = '\0';
}

/* Removes what a killed run left: other generations of ours and a stale
 * ..data.tmp link. */
static void tidy(kjoin_store *s)
{
    struct stat st;
    if (fstatat(s->dirfd, DATA_TMP, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
        unlinkat(s->dirfd, DATA_TMP, 0);
    int fd = dup(s->dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    rewinddir(d);
    for (struct dirent *e; (e = readdir(d));)
        if (is_generation_name(e->d_name) && strcmp(e->d_name, s->gen) != 0)
            remove_generation(s->dirfd, e->d_name);
    closedir(d);
}

static kjoin_code take_lock(kjoin_store *s, kjoin_err *err)
{
    struct stat st;
    s->lockfd = openat(s->dirfd, LOCK_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (s->lockfd < 0)
        return kjoin_err_set(err, errno == ELOOP ? KJOIN_E_USAGE : KJOIN_E_OUTPUT, "cannot open %s/%s: %s%s", s->path,
                             LOCK_FILE, strerror(errno), errno == ELOOP ? " (a symlink: remove it)" : "");
    kjoin_code rc = fstat(s->lockfd, &st) != 0 || !S_ISREG(st.st_mode)
                        ? kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s is not a regular file", s->path, LOCK_FILE)
                        : check_owner(s, &st, "the lock file", LOCK_FILE, err);
    if (!rc && flock(s->lockfd, LOCK_EX | LOCK_NB) != 0)
        rc = kjoin_err_set(err, KJOIN_E_OTHER, "another kjoin certs run holds %s/%s; try again later", s->path,
                           LOCK_FILE);
    return rc;
}

/* Opens the generation ..data names, once: every read goes through it. A
 * shared flock on it keeps a writer from removing it while it is read; if
 * ..data moved on before the lock was taken, the writer may have started
 * removing it, so the newer one is opened instead. */
static kjoin_code open_generation(kjoin_store *s, kjoin_err *err)
{
    struct stat st;
    for (int attempt = 0; attempt < 20; attempt++) {
        char now[64];
        current_generation(s->dirfd, s->gen, sizeof(s->gen));
        if (!*s->gen)
            return KJOIN_OK;
        s->genfd = openat(s->dirfd, s->gen, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s->genfd < 0 && errno == ENOENT) {
            current_generation(s->dirfd, now, sizeof(now));
            if (strcmp(now, s->gen) == 0)
                return kjoin_err_set(err, KJOIN_E_USAGE, "%s/" DATA_LINK " names %s, which does not exist: the "
                                                         "store was changed outside kjoin", s->path, s->gen);
            continue; /* removed after ..data moved on */
        }
        if (s->genfd < 0)
            return kjoin_err_set(err, KJOIN_E_USAGE, "cannot open %s/%s: %s", s->path, s->gen, strerror(errno));
        if (fstat(s->genfd, &st) != 0)
            return kjoin_err_set(err, KJOIN_E_USAGE, "cannot stat %s/%s: %s", s->path, s->gen, strerror(errno));
        kjoin_code rc = check_owner(s, &st, "the generation", s->gen, err);
        if (rc)
            return rc;
        flock(s->genfd, LOCK_SH);
        current_generation(s->dirfd, now, sizeof(now));
        if (strcmp(now, s->gen) == 0)
            return KJOIN_OK;
        close(s->genfd);
        s->genfd = -1;
    }
    return kjoin_err_set(err, KJOIN_E_OTHER, "%s changed generation too often to be read; try again", s->path);
}

kjoin_code kjoin_store__open(const char *path, kjoin_store_mode mode, kjoin_store *s, kjoin_err *err)
{
    memset(s, 0, sizeof(*s));
    s->path = path;
    s->dirfd = s->lockfd = s->genfd = -1;
    kjoin_safedir d;
    kjoin_err inner;
    kjoin_code rc = kjoin_safedir_open(path, mode == KJOIN_STORE_CREATE ? KJOIN_SAFEDIR_CREATE : 0, &d, &inner);
    if (rc) {
        struct stat st;
        bool missing = rc == KJOIN_E_USAGE && stat(path, &st) != 0 && errno == ENOENT;
        return kjoin_err_set(err, rc, "the certs directory: %s%s", inner.msg,
                             missing ? " (run kjoin certs init first)" : "");
    }
    s->dirfd = d.fd; /* the store keeps the descriptor */
    if (mode != KJOIN_STORE_READ)
        rc = take_lock(s, err);
    if (!rc)
        rc = open_generation(s, err);
    if (!rc && mode != KJOIN_STORE_READ)
        tidy(s);
    if (rc)
        kjoin_store__close(s);
    return rc;
}

void kjoin_store__close(kjoin_store *s)
{
    if (s->genfd >= 0)
        close(s->genfd);
    if (s->lockfd >= 0)
        close(s->lockfd); /* releases the flock */
    if (s->dirfd >= 0)
        close(s->dirfd);
    s->genfd = s->lockfd = s->dirfd = -1;
}

bool kjoin_store__has_pki(const kjoin_store *s) { return s->genfd >= 0; }

/* Whether DIR/name is kjoin's link "..data/<name>"; says what it is if not. */
static kjoin_code check_link(kjoin_store *s, const char *name, bool missing_ok, kjoin_err *err)
{
    struct stat st;
    char target[300], want[300];
    if (fstatat(s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return missing_ok && errno == ENOENT
                   ? KJOIN_OK
                   : kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s is missing: %s", s->path, name, strerror(errno));
    snprintf(want, sizeof(want), DATA_LINK "/%s", name);
    ssize_t n = S_ISLNK(st.st_mode) ? readlinkat(s->dirfd, name, target, sizeof(target) - 1) : -1;
    target[n > 0 ? n : 0] = '\0';
    if (n > 0 && strcmp(target, want) == 0 && (st.st_uid == geteuid() || st.st_uid == 0))
        return KJOIN_OK;
    return kjoin_err_set(err, KJOIN_E_USAGE,
                         "%s/%s is not kjoin's link into the current generation (it is %s%s%s): it was changed "
                         "outside kjoin. Restore it, or adopt a new CA explicitly with kjoin certs adopt-ca",
                         s->path, name, S_ISLNK(st.st_mode) ? "a symlink to " : S_ISREG(st.st_mode) ? "a regular file"
                                                                                 : "not a symlink",
                         S_ISLNK(st.st_mode) ? target : "", "");
}

kjoin_code kjoin_store__read(kjoin_store *s, const char *name, bool secret, char **out, size_t *len, kjoin_err *err)
{
    struct stat st;
    if (s->genfd < 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s holds no generation", s->path);
    kjoin_code rc = check_link(s, name, false, err);
    if (rc)
        return rc;
    int fd = openat(s->genfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "cannot open %s/%s/%s: %s", s->path, s->gen, name, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s/%s/%s is not a regular file", s->path, s->gen, name);
    if (!rc)
        rc = check_owner(s, &st, secret ? "the key" : "the file", name, err);
    if (!rc && secret && (st.st_mode & 077))
        note(s, "%s is readable by group or others (mode %04o); kjoin writes it 0600 when it next rewrites it", name,
             (unsigned)(st.st_mode & 07777));
    if (!rc) {
        char what[600];
        snprintf(what, sizeof(what), "%s/%s", s->path, name);
        rc = kjoin_store__read_fd(fd, what, out, len, err);
    }
    close(fd);
    return rc;
}

kjoin_code kjoin_store__read_fd(int fd, const char *what, char **out, size_t *len, kjoin_err *err)
{
    return kjoin_safedir_read_fd(fd, what, MAX_FILE, out, len, err);
}

bool kjoin_store__write_at(int dirfd, const char *name, const char *data, size_t len, mode_t mode)
{
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return false;
    bool ok = fchmod(fd, mode) == 0;
    for (size_t off = 0; ok && off < len;) {
        ssize_t n = write(fd, data + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        ok = n > 0;
        off += ok ? (size_t)n : 0;
    }
    ok = ok && fsync(fd) == 0;
    return close(fd) == 0 && ok;
}

kjoin_code kjoin_store__commit(kjoin_store *s, const kjoin_store_file *files, size_t n, kjoin_err *err)
{
    char gen[64], target[300];
    uint32_t rnd = 0;
    if (s->lockfd < 0)
        return kjoin_err_set(err, KJOIN_E_OTHER, "the store was opened for reading");
    /* Every name must be kjoin's link already, or free for one. */
    for (size_t i = 0; i < n; i++) {
        kjoin_code rc = check_link(s, files[i].name, true, err);
        if (rc)
            return rc;
    }
    if (kjoin_random_bytes(&rnd, sizeof(rnd), err))
        return KJOIN_E_OTHER;
    snprintf(gen, sizeof(gen), "..gen-%lld-%08x", (long long)time(NULL), rnd);
    if (mkdirat(s->dirfd, gen, 0700) != 0)
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot create %s/%s: %s", s->path, gen, strerror(errno));
    int genfd = openat(s->dirfd, gen, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    for (size_t i = 0; i < n; i++) {
        if (genfd < 0 || !kjoin_store__write_at(genfd, files[i].name, files[i].data, files[i].len, files[i].mode)) {
            int saved = errno;
            if (genfd >= 0)
                close(genfd);
            remove_generation(s->dirfd, gen);
            return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot write %s/%s/%s: %s", s->path, gen, files[i].name,
                                 strerror(saved));
        }
        if (i == n / 2)
            kjoin_store__crash_point("files");
    }
    fsync(genfd);
    close(genfd);
    /* New names get their symlink before the swap (dangling until then,
     * as the old set did not have them either). */
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        snprintf(target, sizeof(target), DATA_LINK "/%s", files[i].name);
        if (fstatat(s->dirfd, files[i].name, &st, AT_SYMLINK_NOFOLLOW) != 0 &&
            symlinkat(target, s->dirfd, files[i].name) != 0)
            return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot link %s/%s: %s", s->path, files[i].name,
                                 strerror(errno));
    }
    kjoin_store__crash_point("swap");
    unlinkat(s->dirfd, DATA_TMP, 0);
    if (symlinkat(gen, s->dirfd, DATA_TMP) != 0 || renameat(s->dirfd, DATA_TMP, s->dirfd, DATA_LINK) != 0)
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot switch %s/" DATA_LINK " to the new generation: %s", s->path,
                             strerror(errno));
    fsync(s->dirfd);
    kjoin_store__crash_point("cleanup");
    snprintf(s->gen, sizeof(s->gen), "%s", gen);
    if (s->genfd >= 0)
        close(s->genfd);
    s->genfd = openat(s->dirfd, gen, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    tidy(s);
    return KJOIN_OK;
}
