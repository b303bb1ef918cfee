/* A dry run's one root: every step of a join writes under a private
 * directory of its own instead of the node's places (kubeadm's dry-run
 * directory) and notes each file there; the files are shown from it at the
 * node's paths, keys masked, and it goes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kjoin/private/context.h>
#include <kjoin/private/safedir.h>
#include <kjoin/private/util.h>

kjoin_code kjoin_join_context_write_path(const kjoin_join_context *cx, const char *path, char *out, size_t cap,
                                         kjoin_err *err)
{
    if (snprintf(out, cap, "%s%s", cx->dry_run ? cx->dry_run->root : "", path) >= (int)cap)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the path %.200s is too long", path);
    return KJOIN_OK;
}

void kjoin_join_context_read_path(const kjoin_join_context *cx, const char *path, char *out, size_t cap)
{
    struct stat st;
    if (!cx->dry_run || kjoin_join_context_write_path(cx, path, out, cap, NULL) || lstat(out, &st) != 0)
        snprintf(out, cap, "%s", path);
}

kjoin_code kjoin_join_context_wrote(const kjoin_join_context *cx, const char *written, unsigned mode, kjoin_err *err)
{
    kjoin_dry_run *d = cx->dry_run;
    if (!d)
        return KJOIN_OK;
    size_t root = strlen(d->root);
    if (strncmp(written, d->root, root) || written[root] != '/')
        return kjoin_err_set(err, KJOIN_E_OTHER, "%.200s is not the dry run's", written);
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->files[i].path, written + root)) { /* written again: shown once, as it is last */
            d->files[i].mode = mode;
            return KJOIN_OK;
        }
    if (d->n == KJOIN_PLANNED_MAX)
        return kjoin_err_set(err, KJOIN_E_OTHER, "more than %d files to show", KJOIN_PLANNED_MAX);
    snprintf(d->files[d->n].path, sizeof(d->files[0].path), "%s", written + root);
    d->files[d->n++].mode = mode;
    return KJOIN_OK;
}

kjoin_code kjoin_dry_run_begin(const char *tmp_dir, kjoin_dry_run **out, kjoin_err *err)
{
    kjoin_dry_run *d = calloc(1, sizeof(*d));
    *out = NULL;
    if (!d)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    if (snprintf(d->root, sizeof(d->root), "%s/kjoin-join-dryrun.XXXXXX", tmp_dir) >= (int)sizeof(d->root)) {
        free(d);
        return kjoin_err_set(err, KJOIN_E_USAGE, "the temporary directory's path is too long");
    }
    if (!mkdtemp(d->root)) { /* 0700, made anew: no one else's */
        free(d);
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "cannot make the dry run's directory under %s: %s", tmp_dir,
                             strerror(errno));
    }
    (void)kjoin_scratch_set(d->root); /* a signal from here on removes it (it fits: the root is shorter) */
    *out = d;
    return KJOIN_OK;
}

/* The regular file name in from, copied to the same name in *to (opened,
 * made, at where the first time). */
static kjoin_code copy_one(kjoin_safedir *from, const char *name, const char *where, kjoin_safedir *to,
                           kjoin_err *err)
{
    struct stat st;
    char *text = NULL;
    size_t len = 0;
    if (fstatat(from->fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
        return KJOIN_OK; /* a link or a directory there the steps refuse on the node */
    kjoin_code rc = to->fd < 0 ? kjoin_safedir_open(where, KJOIN_SAFEDIR_CREATE, to, err) : KJOIN_OK;
    if (!rc)
        rc = kjoin_safedir_read(from, name, 1 << 20, false, &text, &len, NULL, err);
    if (!rc)
        rc = kjoin_safedir_write(to, name, text, len, st.st_mode & 0777, false, NULL, err);
    kjoin_free_wiped(text, len);
    return rc;
}

kjoin_code kjoin_dry_run_copy_dir(const kjoin_join_context *cx, const char *dir, const char *suffix, kjoin_err *err)
{
    struct stat st;
    char where[1400];
    kjoin_safedir from = {.fd = -1}, to = {.fd = -1};
    if (!cx->dry_run || (lstat(dir, &st) != 0 && errno == ENOENT))
        return KJOIN_OK;
    kjoin_code rc = kjoin_join_context_write_path(cx, dir, where, sizeof(where), err);
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
        if (n >= k && !strcmp(e->d_name + n - k, suffix))
            rc = copy_one(&from, e->d_name, where, &to, err);
    }
    if (d)
        closedir(d);
    kjoin_safedir_close(&to);
    kjoin_safedir_close(&from);
    return rc;
}

kjoin_code kjoin_dry_run_copy_file(const kjoin_join_context *cx, const char *path, kjoin_err *err)
{
    struct stat st;
    char where[1400];
    const char *name;
    kjoin_safedir from = {.fd = -1}, to = {.fd = -1};
    if (!cx->dry_run || (lstat(path, &st) != 0 && errno == ENOENT))
        return KJOIN_OK;
    kjoin_code rc = kjoin_safedir_open_parent(path, &from, &name, err);
    if (!rc && !(rc = kjoin_join_context_write_path(cx, path, where, sizeof(where), err)))
        *strrchr(where, '/') = '\0'; /* its directory under the root */
    if (!rc)
        rc = copy_one(&from, name, *where ? where : "/", &to, err);
    kjoin_safedir_close(&to);
    kjoin_safedir_close(&from);
    return rc;
}

void kjoin_dry_run_end(kjoin_dry_run *d, kjoin_log_fn log, void *log_ctx)
{
    if (!d)
        return;
    char why[200] = "";
    struct stat st;
    kjoin_scratch_clear();
    /* made by mkdtemp: a directory, never a link; what is left holds keys, so it is said */
    if (lstat(d->root, &st) == 0 && !kjoin_safedir_remove_tree(AT_FDCWD, d->root, st.st_dev, why, sizeof(why)))
        kjoin_logf(log, log_ctx, KJOIN_LOG_WARNING, "[dryrun] %s was not removed (%s): it holds keys, remove it",
                   d->root, why);
    free(d);
}

static char *put(char *o, const char *p, size_t n)
{
    memcpy(o, p, n);
    return o + n;
}

/* text with each PEM private key's body and each kubeconfig's
 * client-key-data replaced by a note, and a proxy URL's user name and
 * password by "***": a dry run shows where a key goes, never the key. */
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
        const char *scheme = memmem(line, n, "_PROXY=", 7) ? memmem(line, n, "://", 3) : NULL;
        const char *at = scheme ? memchr(scheme, '@', n - (size_t)(scheme - line)) : NULL;
        if (data) {
            o = put(put(o, line, (size_t)(data + 16 - line)), " ", 1);
            o = put(put(o, note, sizeof(note) - 1), "\n", 1);
        } else if (at && !in_key) { /* a proxy's user name and password (a drop-in's Environment=) */
            o = put(put(o, line, (size_t)(scheme + 3 - line)), "***", 3);
            o = put(o, at, n - (size_t)(at - line));
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

kjoin_code kjoin_dry_run_show(const kjoin_dry_run *d, kjoin_planned_files *plan, kjoin_err *err)
{
    kjoin_code rc = KJOIN_OK;
    for (size_t i = 0; !rc && i < d->n; i++) {
        char at[sizeof(d->root) + sizeof(d->files[0].path)], *text = NULL, *shown = NULL;
        size_t len = 0;
        snprintf(at, sizeof(at), "%s%s", d->root, d->files[i].path);
        bool secret = !(d->files[i].mode & 044);
        if (!(rc = kjoin_safedir_read_path(at, secret, &text, &len, NULL, err)) && !(shown = masked(text, len)))
            rc = kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        if (!rc)
            rc = kjoin_planned_add(plan, d->files[i].path, d->files[i].mode, shown, strlen(shown), err);
        kjoin_free_wiped(text, len);
        kjoin_free_wiped(shown, shown ? strlen(shown) : 0);
    }
    return rc;
}

kjoin_code kjoin_planned_add(kjoin_planned_files *plan, const char *path, unsigned mode, const char *data, size_t len,
                             kjoin_err *err)
{
    if (plan->n == KJOIN_PLANNED_MAX)
        return kjoin_err_set(err, KJOIN_E_OTHER, "more than %d files to show", KJOIN_PLANNED_MAX);
    kjoin_planned_file *f = &plan->files[plan->n];
    char *raw = strndup(data, len);
    f->content = raw ? malloc(len + 1) : NULL; /* the sanitiser never lengthens */
    if (!f->content) {
        free(raw);
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    kjoin_printable(f->content, len + 1, raw, true); /* tokens masked, controls shown as "?" */
    kjoin_free_wiped(raw, len);
    snprintf(f->path, sizeof(f->path), "%s", path);
    f->mode = mode;
    plan->n++;
    return KJOIN_OK;
}

void kjoin_planned_release(kjoin_planned_files *plan)
{
    for (size_t i = 0; i < plan->n; i++)
        free(plan->files[i].content);
    plan->n = 0;
}
