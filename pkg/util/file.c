#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include <kjoin/util.h>

kjoin_code kjoin_file_read(const char *path, size_t cap, char **out, size_t *out_len,
                           kjoin_err *err)
{
    bool is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "standard input" : path;
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "cannot open %s: %s", name, strerror(errno));

    kjoin_code rc = KJOIN_OK;
    size_t len = 0, size = 4096;
    char *buf = malloc(size + 1);
    while (buf) {
        if (len == size) {
            if (size > cap) {
                rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s is larger than %zu bytes", name, cap);
                break;
            }
            char *bigger = realloc(buf, size * 2 + 1);
            if (!bigger)
                break;
            buf = bigger;
            size *= 2;
        }
        ssize_t n = read(fd, buf + len, size - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = kjoin_err_set(err, KJOIN_E_USAGE, "cannot read %s: %s", name, strerror(errno));
            break;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    if (!is_stdin)
        close(fd);
    if (!buf)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory reading %s", name);
    if (rc == KJOIN_OK && len > cap)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s is larger than %zu bytes", name, cap);
    if (rc) {
        free(buf);
        return rc;
    }
    buf[len] = '\0';
    *out = buf;
    *out_len = len;
    return KJOIN_OK;
}

/* mkdir -p for the parent directories of path. */
static int make_parents(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return -1;
    for (char *p = copy + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(copy, 0700) != 0 && errno != EEXIST) {
            free(copy);
            return -1;
        }
        *p = '/';
    }
    free(copy);
    return 0;
}

/* True when the regular file at path (not followed if a symlink) holds
 * exactly data. What was read is wiped: it may be a kubeconfig's token. */
static bool same_content(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
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
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    for (struct dirent *e; (e = readdir(d));) {
        struct stat st;
        if (!is_temp_of(e->d_name, base) || fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_mtime < started)
            unlinkat(dirfd, e->d_name, 0);
    }
    closedir(d);
}

/* The directory and last component of path, split in place in copy. */
static void split_path(char *copy, const char **dir, const char **base)
{
    char *slash = strrchr(copy, '/');
    *dir = slash == copy ? "/" : slash ? copy : ".";
    *base = slash ? slash + 1 : copy;
    if (slash && slash != copy)
        *slash = '\0';
}

kjoin_code kjoin_file_write_mode(const char *path, const void *data, size_t len, mode_t mode, bool force,
                                 kjoin_write_result *result, kjoin_err *err)
{
    struct stat st;
    bool exists = lstat(path, &st) == 0;
    if (exists && !S_ISREG(st.st_mode))
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "%s exists and is not a regular file", path);
    if (exists && same_content(path, data, len)) {
        if ((st.st_mode & 07777) != mode && chmod(path, mode) != 0)
            return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot set mode %04o on %s: %s", (unsigned)mode, path,
                                 strerror(errno));
        if (result)
            *result = KJOIN_WRITE_UNCHANGED;
        return KJOIN_OK;
    }
    if (exists && !force)
        return kjoin_err_set(err, KJOIN_E_OUTPUT,
                             "%s already exists with different content; set `force` to replace it", path);
    if (make_parents(path) != 0)
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot create the directory of %s: %s", path,
                             strerror(errno));

    KJOIN_AUTO_FREE char *copy = strdup(path);
    KJOIN_AUTO_FREE char *tmp = malloc(strlen(path) + sizeof(TEMP_SUFFIX));
    if (!copy || !tmp)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    const char *dir, *base;
    split_path(copy, &dir, &base);
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot open the directory of %s: %s", path, strerror(errno));
    remove_leftovers(dirfd, base);
    sprintf(tmp, "%s" TEMP_SUFFIX, base);
    /* mkostemp wants a path; the name is made here, at random, relative to dirfd. */
    unsigned char rnd[6];
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 16; tries++) {
        if (kjoin_random_bytes(rnd, sizeof(rnd), NULL))
            break;
        char *x = tmp + strlen(base) + sizeof(TEMP_SUFFIX) - 7;
        for (size_t i = 0; i < sizeof(rnd); i++)
            x[i] = alphabet[rnd[i] % 62];
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        int saved = errno;
        close(dirfd);
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot create a temporary file beside %s: %s", path,
                             strerror(saved));
    }
    bool ok = fchmod(fd, mode) == 0 && write_all(fd, data, len) && fsync(fd) == 0;
    int saved = errno;
    ok = close(fd) == 0 && ok;
    if (ok && renameat(dirfd, tmp, dirfd, base) != 0) {
        saved = errno;
        ok = false;
    }
    if (!ok)
        unlinkat(dirfd, tmp, 0);
    else
        fsync(dirfd);
    close(dirfd);
    if (!ok)
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot write %s: %s", path, strerror(saved));
    if (result)
        *result = exists ? KJOIN_WRITE_REPLACED : KJOIN_WRITE_CREATED;
    return KJOIN_OK;
}

kjoin_code kjoin_file_write_atomic(const char *path, const void *data, size_t len, bool force,
                                   kjoin_write_result *result, kjoin_err *err)
{
    return kjoin_file_write_mode(path, data, len, 0600, force, result, err);
}
