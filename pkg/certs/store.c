/* The certs directory, written the way kubelet's AtomicWriter writes Secret
 * volumes: each run writes a complete generation DIR/..gen-<n>/, then swaps
 * the DIR/..data symlink to it with one rename(2); DIR/<file> are stable
 * symlinks to ..data/<file>. Killed at any point, DIR shows the old set or
 * the new set, never a mix. */
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

#include <kjoin/util.h>

#include "store.h"

static void remove_generation(const char *dir, const char *gen);

/* Test hook: exit at a named point, standing in for a kill. */
static void crash_point(const char *point)
{
    const char *at = getenv("KJOIN_CERTS_CRASH_AT");
    if (at && strcmp(at, point) == 0)
        _exit(99);
}

/* Removes generations that ..data does not point at (left by a killed run)
 * and a stale ..data.tmp. */
static void tidy(const char *dir)
{
    char data[4200], target[256] = "", tmp[4200];
    snprintf(data, sizeof(data), "%s/..data", dir);
    ssize_t n = readlink(data, target, sizeof(target) - 1);
    target[n > 0 ? n : 0] = '\0';
    snprintf(tmp, sizeof(tmp), "%s/..data.tmp", dir);
    unlink(tmp);
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strncmp(e->d_name, "..gen-", 6) == 0 && strcmp(e->d_name, target) != 0)
            remove_generation(dir, e->d_name);
    if (d)
        closedir(d);
}

kjoin_code kjoin_store__lock(const char *dir, int *fd_out, kjoin_err *err)
{
    char path[4200];
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s is not a directory (run kjoin certs init first)", dir);
    snprintf(path, sizeof(path), "%s/.kjoin-certs.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot open %s: %s", path, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return kjoin_err_set(err, KJOIN_E_OTHER, "another kjoin certs run holds %s; try again later", path);
    }
    tidy(dir);
    *fd_out = fd;
    return KJOIN_OK;
}

void kjoin_store__unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* releases the flock */
}

kjoin_code kjoin_store__read(const char *dir, const char *name, char **out, size_t *len, kjoin_err *err)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return kjoin_file_read(path, 4 * 1024 * 1024, out, len, err);
}

static bool write_file(const char *path, const char *data, size_t len, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
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

static void fsync_path(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* Removes a generation directory and its files (flat). */
static void remove_generation(const char *dir, const char *gen)
{
    char path[4200], file[4500];
    snprintf(path, sizeof(path), "%s/%s", dir, gen);
    DIR *d = opendir(path);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') {
            snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
            unlink(file);
        }
    closedir(d);
    rmdir(path);
}

kjoin_code kjoin_store__commit(const char *dir, const kjoin_store_file *files, size_t n, kjoin_err *err)
{
    char gen[64], path[4200], file[4500], tmp[4600], link_target[4200], data_link[4200];
    uint32_t rnd = 0;
    kjoin_random_bytes(&rnd, sizeof(rnd), NULL);
    snprintf(gen, sizeof(gen), "..gen-%ld-%08x", (long)time(NULL), rnd);
    snprintf(path, sizeof(path), "%s/%s", dir, gen);
    if (mkdir(path, 0700) != 0)
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot create %s: %s", path, strerror(errno));
    for (size_t i = 0; i < n; i++) {
        snprintf(file, sizeof(file), "%s/%s", path, files[i].name);
        if (!write_file(file, files[i].data, files[i].len, files[i].mode)) {
            int saved = errno;
            remove_generation(dir, gen);
            return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot write %s: %s", file, strerror(saved));
        }
        if (i == n / 2)
            crash_point("files");
    }
    fsync_path(path);
    /* New names get their symlink before the swap (dangling until then,
     * as the old set did not have them either). */
    for (size_t i = 0; i < n; i++) {
        snprintf(file, sizeof(file), "%s/%s", dir, files[i].name);
        snprintf(link_target, sizeof(link_target), "..data/%s", files[i].name);
        struct stat st;
        if (lstat(file, &st) != 0 && symlink(link_target, file) != 0)
            return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot link %s: %s", file, strerror(errno));
    }
    crash_point("swap");
    snprintf(tmp, sizeof(tmp), "%s/..data.tmp", dir);
    snprintf(data_link, sizeof(data_link), "%s/..data", dir);
    unlink(tmp);
    if (symlink(gen, tmp) != 0 || rename(tmp, data_link) != 0)
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot switch %s to the new generation: %s", data_link,
                             strerror(errno));
    fsync_path(dir);
    crash_point("cleanup");
    /* A file replaced by hand (a regular file, no longer our symlink) was
     * adopted into the new generation by the caller: link it now. */
    for (size_t i = 0; i < n; i++) {
        snprintf(file, sizeof(file), "%s/%s", dir, files[i].name);
        snprintf(link_target, sizeof(link_target), "..data/%s", files[i].name);
        struct stat st;
        if (lstat(file, &st) == 0 && !S_ISLNK(st.st_mode)) {
            snprintf(tmp, sizeof(tmp), "%s.kjoin-link", file);
            unlink(tmp);
            if (symlink(link_target, tmp) != 0 || rename(tmp, file) != 0)
                return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot link %s: %s", file, strerror(errno));
        }
    }
    tidy(dir);
    return KJOIN_OK;
}
