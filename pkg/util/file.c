#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kjoin/private/safedir.h>
#include <kjoin/private/util.h>

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

/* The directory and last component of path, split in place in copy. */
static void split_path(char *copy, const char **dir, const char **base)
{
    char *slash = strrchr(copy, '/');
    *dir = slash == copy ? "/" : slash ? copy : ".";
    *base = slash ? slash + 1 : copy;
    if (slash && slash != copy)
        *slash = '\0';
}

/* Every output goes through a checked directory (kjoin_safedir): the
 * directory and those above it must be this user's or root's, so no one
 * else can swap in a symlink between the check and the rename. */
kjoin_code kjoin_file_write_mode(const char *path, const void *data, size_t len, mode_t mode, bool force,
                                 kjoin_write_result *result, kjoin_err *err)
{
    KJOIN_AUTO_FREE char *copy = strdup(path);
    if (!copy)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    const char *dir, *base;
    split_path(copy, &dir, &base);
    if (!*base)
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "%s names a directory, not a file", path);
    kjoin_safedir d;
    kjoin_code rc = kjoin_safedir_open(dir, KJOIN_SAFEDIR_CREATE | KJOIN_SAFEDIR_SHARED_OK, &d, err);
    if (!rc)
        rc = kjoin_safedir_write(&d, base, data, len, mode, force, result, err);
    kjoin_safedir_close(&d);
    return rc;
}

kjoin_code kjoin_file_write_atomic(const char *path, const void *data, size_t len, bool force,
                                   kjoin_write_result *result, kjoin_err *err)
{
    return kjoin_file_write_mode(path, data, len, 0600, force, result, err);
}
