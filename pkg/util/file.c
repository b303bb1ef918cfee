#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* True when the file at path holds exactly data. */
static bool same_content(const char *path, const void *data, size_t len)
{
    char *old = NULL;
    size_t old_len = 0;
    if (kjoin_file_read(path, len, &old, &old_len, NULL) != KJOIN_OK)
        return false;
    bool same = old_len == len && memcmp(old, data, len) == 0;
    free(old);
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

static void fsync_dir(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(copy);
}

kjoin_code kjoin_file_write_atomic(const char *path, const void *data, size_t len, bool force,
                                   kjoin_write_result *result, kjoin_err *err)
{
    struct stat st;
    bool exists = lstat(path, &st) == 0;
    if (exists && !S_ISREG(st.st_mode))
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "%s exists and is not a regular file", path);
    if (exists && same_content(path, data, len)) {
        if ((st.st_mode & 07777) != 0600 && chmod(path, 0600) != 0)
            return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot set mode 0600 on %s: %s", path,
                                 strerror(errno));
        if (result)
            *result = KJOIN_WRITE_UNCHANGED;
        return KJOIN_OK;
    }
    if (exists && !force)
        return kjoin_err_set(err, KJOIN_E_OUTPUT,
                             "%s already exists with different content; use --force to replace it",
                             path);
    if (make_parents(path) != 0)
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot create the directory of %s: %s", path,
                             strerror(errno));

    size_t plen = strlen(path);
    KJOIN_AUTO_FREE char *tmp = malloc(plen + sizeof(".kjoin-XXXXXX"));
    if (!tmp)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".kjoin-XXXXXX", sizeof(".kjoin-XXXXXX"));

    int fd = mkostemp(tmp, O_CLOEXEC); /* creates the file with mode 0600 */
    if (fd < 0)
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot create a temporary file beside %s: %s",
                             path, strerror(errno));
    bool ok = fchmod(fd, 0600) == 0 && write_all(fd, data, len) && fsync(fd) == 0;
    int saved = errno;
    ok = close(fd) == 0 && ok;
    if (ok && rename(tmp, path) != 0) {
        saved = errno;
        ok = false;
    }
    if (!ok) {
        unlink(tmp);
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot write %s: %s", path, strerror(saved));
    }
    fsync_dir(path);
    if (result)
        *result = exists ? KJOIN_WRITE_REPLACED : KJOIN_WRITE_CREATED;
    return KJOIN_OK;
}
