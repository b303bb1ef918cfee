#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kjoin/private/util.h>

#include "testutil.h"

char *tu_read(const char *path, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    kjoin_err err;
    if (kjoin_file_read(path, 64 * 1024 * 1024, &buf, &n, &err) != KJOIN_OK)
        fail_msg("cannot read %s: %s", path, err.msg);
    if (len)
        *len = n;
    return buf;
}

json_object *tu_json(const char *path)
{
    char *text = tu_read(path, NULL);
    json_object *obj = json_tokener_parse(text);
    free(text);
    if (!obj)
        fail_msg("%s is not JSON", path);
    return obj;
}

const char *tu_str(json_object *obj, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

char *tu_tmpdir(void)
{
    /* Under $TMPDIR, which the runner (tests/check.sh) makes and removes. */
    const char *top = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof(tmpl), "%s/kjoin-unit-XXXXXX", top && *top ? top : "/tmp");
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    return strdup(d);
}

void tu_write(const char *dir, const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

void tu_rmtree(char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
}

/* tu_tree_state's lines, gathered by nftw (which has no context argument). */
static char **tree_lines;
static size_t tree_n, tree_cap;

static int tree_line(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)type, (void)ftw;
    char line[8192], target[4096] = "", digest[65] = "";
    if (S_ISLNK(st->st_mode)) {
        ssize_t n = readlink(path, target, sizeof(target) - 1);
        target[n > 0 ? n : 0] = '\0';
    } else if (S_ISREG(st->st_mode)) {
        size_t len = 0;
        char *text = NULL;
        kjoin_err err;
        unsigned char sum[32];
        /* (a file the test may not read, 0000: its size stands in) */
        if (kjoin_file_read(path, 64 * 1024 * 1024, &text, &len, &err) == KJOIN_OK &&
            kjoin_sha256(text, len, sum, NULL) == KJOIN_OK)
            kjoin_hex(sum, 32, digest);
        else
            snprintf(digest, sizeof(digest), "unreadable:%lld", (long long)st->st_size);
        free(text);
    }
    snprintf(line, sizeof(line), "%s %o %u:%u %s %s", path, (unsigned)st->st_mode, (unsigned)st->st_uid,
             (unsigned)st->st_gid, target, digest);
    if (tree_n == tree_cap) {
        tree_cap = tree_cap ? 2 * tree_cap : 64;
        tree_lines = realloc(tree_lines, tree_cap * sizeof(*tree_lines));
        assert_non_null(tree_lines);
    }
    tree_lines[tree_n++] = strdup(line);
    return 0;
}

static int by_line(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

char *tu_tree_state(const char *dir)
{
    size_t total = 1;
    tree_n = 0;
    nftw(dir, tree_line, 32, FTW_PHYS); /* a missing dir: an empty state */
    qsort(tree_lines, tree_n, sizeof(*tree_lines), by_line);
    for (size_t i = 0; i < tree_n; i++)
        total += strlen(tree_lines[i]) + 1;
    char *out = malloc(total), *o = out;
    assert_non_null(out);
    *o = '\0';
    for (size_t i = 0; i < tree_n; i++) {
        size_t n = strlen(tree_lines[i]);
        memcpy(o, tree_lines[i], n);
        o[n] = '\n', o[n + 1] = '\0', o += n + 1;
        free(tree_lines[i]);
    }
    free(tree_lines);
    tree_lines = NULL, tree_n = tree_cap = 0;
    return out;
}

void tu_tree_unchanged(const char *dir, char *before)
{
    char *now = tu_tree_state(dir);
    if (strcmp(before, now) != 0)
        fail_msg("%s changed:\nbefore:\n%s\nnow:\n%s", dir, before, now);
    free(now);
    free(before);
}
