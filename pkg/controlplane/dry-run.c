/* A dry run of the control-plane steps: each writes under a private
 * directory of its own instead of the node's places (kubeadm's dry-run
 * directory), and what it wrote is shown from there, keys masked. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kjoin/private/controlplane.h>
#include <kjoin/private/node.h>
#include <kjoin/private/safedir.h>

#include "internal.h"

kjoin_code kjoin_cp_write_path(const kjoin_cp_context *cx, const char *path, char *out, size_t cap, kjoin_err *err)
{
    if (snprintf(out, cap, "%s%s", cx->dry_run_dir, path) >= (int)cap)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the path %.200s is too long", path);
    return KJOIN_OK;
}

void kjoin_cp_read_path(const kjoin_cp_context *cx, const char *path, char *out, size_t cap)
{
    struct stat st;
    if (!*cx->dry_run_dir || kjoin_cp_write_path(cx, path, out, cap, NULL) || lstat(out, &st) != 0)
        snprintf(out, cap, "%s", path);
}

/* The files under dir (those whose names end with suffix) copied where the
 * dry run's steps read and write, as the node holds them, modes kept: its
 * steps then keep, replace or refuse each as the join's would. Only regular
 * files: a link or a directory there the steps refuse on the node. */
static kjoin_code copy_node_files(const kjoin_cp_context *cx, const char *dir, const char *suffix, kjoin_err *err)
{
    struct stat st;
    char where[1400];
    kjoin_safedir from = {.fd = -1}, to = {.fd = -1};
    if (lstat(dir, &st) != 0 && errno == ENOENT)
        return KJOIN_OK;
    kjoin_code rc = kjoin_cp_write_path(cx, dir, where, sizeof(where), err);
    if (!rc)
        rc = kjoin_safedir_open(dir, 0, &from, err);
    int fd = rc ? -1 : dup(from.fd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!rc && !d)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "cannot list %s: %s", dir, strerror(errno));
    if (!d && fd >= 0)
        close(fd);
    for (struct dirent *e; !rc && (e = readdir(d));) {
        size_t n = strlen(e->d_name), k = strlen(suffix);
        if (n < k || strcmp(e->d_name + n - k, suffix) || fstatat(from.fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode))
            continue;
        char *text = NULL;
        size_t len = 0;
        if (to.fd < 0)
            rc = kjoin_safedir_open(where, KJOIN_SAFEDIR_CREATE, &to, err);
        if (!rc)
            rc = kjoin_safedir_read(&from, e->d_name, 1 << 20, false, &text, &len, NULL, err);
        if (!rc)
            rc = kjoin_safedir_write(&to, e->d_name, text, len, st.st_mode & 0777, false, NULL, err);
        kjoin_free_wiped(text, len);
    }
    if (d)
        closedir(d);
    kjoin_safedir_close(&to);
    kjoin_safedir_close(&from);
    return rc;
}

/* What the steps judge before they write: the certificates (the shared
 * ones the node's are signed with among them), the kubeconfigs, the static
 * Pods. */
static kjoin_code copy_node(const kjoin_cp_context *cx, kjoin_err *err)
{
    char etcd[1100];
    snprintf(etcd, sizeof(etcd), "%s/etcd", cx->cert_dir);
    kjoin_code rc = copy_node_files(cx, cx->cert_dir, "", err);
    if (!rc)
        rc = copy_node_files(cx, etcd, "", err);
    if (!rc)
        rc = copy_node_files(cx, cx->kubernetes_dir, ".conf", err);
    if (!rc)
        rc = copy_node_files(cx, cx->manifests_dir, ".yaml", err);
    return rc;
}

kjoin_code kjoin_cp_dry_run_begin(kjoin_cp_context *cx, const char *tmp_dir, kjoin_err *err)
{
    char dir[sizeof(cx->dry_run_dir)];
    if (snprintf(dir, sizeof(dir), "%s/kjoin-join-dryrun.XXXXXX", tmp_dir) >= (int)sizeof(dir))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the temporary directory's path is too long");
    if (!mkdtemp(dir)) /* 0700, made anew: no one else's */
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot make the dry run's directory under %s: %s", tmp_dir,
                             strerror(errno));
    memcpy(cx->dry_run_dir, dir, sizeof(dir));
    if (!kjoin_scratch_set(dir)) { /* a signal from here on removes it */
        kjoin_cp_dry_run_end(cx);
        return kjoin_err_set(err, KJOIN_E_USAGE, "the temporary directory's path is too long");
    }
    cx->record = false;
    kjoin_code rc = copy_node(cx, err);
    if (rc)
        kjoin_cp_dry_run_end(cx);
    return rc;
}

void kjoin_cp_dry_run_end(kjoin_cp_context *cx)
{
    if (!*cx->dry_run_dir)
        return;
    char why[200] = "";
    struct stat st;
    kjoin_scratch_clear();
    /* made by mkdtemp: a directory, never a link; what is left holds keys, so it is said */
    if (lstat(cx->dry_run_dir, &st) == 0 &&
        !kjoin_safedir_remove_tree(AT_FDCWD, cx->dry_run_dir, st.st_dev, why, sizeof(why)))
        kjoin_logf(cx->join->log, cx->join->log_ctx, KJOIN_LOG_WARNING, "[dryrun] %s was not removed (%s): it holds keys, "
                   "remove it", cx->dry_run_dir, why);
    /* the paths stay the dry run's: what names it afterwards names nothing */
}

static char *put(char *o, const char *p, size_t n)
{
    memcpy(o, p, n);
    return o + n;
}

/* text with each PEM private key's body and each kubeconfig's
 * client-key-data replaced by a note: a dry run shows where a key goes,
 * never the key. */
static char *masked(const char *text, size_t len)
{
    static const char note[] = "(a private key: not shown)";
    /* a line gains at most the note and a newline, and a line that does is longer than they are */
    char *out = malloc(3 * len + sizeof(note) + 2), *o = out;
    bool in_key = false;
    if (!out)
        return NULL;
    for (const char *line = text, *end = text + len; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t n = nl ? (size_t)(nl - line) + 1 : (size_t)(end - line);
        const char *data = memmem(line, n, "client-key-data:", 16);
        bool begin = memmem(line, n, "-----BEGIN ", 11) && memmem(line, n, "PRIVATE KEY-----", 16),
             finish = in_key && memmem(line, n, "-----END ", 9);
        if (data) {
            o = put(put(o, line, (size_t)(data + 16 - line)), " ", 1);
            o = put(put(o, note, sizeof(note) - 1), "\n", 1);
        } else if (begin || finish || !in_key) {
            o = put(o, line, n);
            if (begin)
                o = put(put(o, note, sizeof(note) - 1), "\n", 1);
        }
        in_key = begin || (in_key && !finish);
        line += n;
    }
    *o = '\0';
    return out;
}

static bool planned(const kjoin_planned_files *plan, const char *path)
{
    for (size_t i = 0; i < plan->n; i++)
        if (!strcmp(plan->files[i].path, path))
            return true;
    return false;
}

kjoin_code kjoin_cp_dry_run_files(const kjoin_cp_context *cx, kjoin_planned_files *plan, kjoin_err *err)
{
    size_t root = strlen(cx->dry_run_dir);
    kjoin_code rc = KJOIN_OK;
    for (size_t i = 0; !rc && cx->written && i < cx->written->n; i++) {
        const char *path = cx->written->v[i].path;
        char *text = NULL, *shown = NULL;
        size_t len = 0;
        if (!root || strncmp(path, cx->dry_run_dir, root) || path[root] != '/')
            return kjoin_err_set(err, KJOIN_E_OTHER, "%.200s is not the dry run's", path);
        if (planned(plan, path + root)) /* the cluster's CA: kubelet-start's too, the same (both verified) */
            continue;
        bool secret = !(cx->written->v[i].mode & 044);
        if (!(rc = kjoin_safedir_read_path(path, secret, &text, &len, NULL, err)) && !(shown = masked(text, len)))
            rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        if (!rc)
            rc = kjoin_planned_add(plan, path + root, cx->written->v[i].mode, shown, strlen(shown), err);
        kjoin_free_wiped(text, len);
        kjoin_free_wiped(shown, shown ? strlen(shown) : 0);
    }
    return rc;
}
