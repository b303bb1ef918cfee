/* The one record format both joins keep: adding to it, asking it, undoing
 * it, and reading it back as untrusted JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kjoin/private/record.h>

#include "../../pkg/record/record.h"
#include "testutil.h"

#define SUM_X "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881" /* sha256("x") */
#define SUM_Y "a1fce4363854ff888cff4b8e7875d600c2682390412a8cf79b37d0b11148b0fa" /* sha256("y") */

static void test_add_and_ask(void **state)
{
    (void)state;
    kjoin_written *w = calloc(1, sizeof(*w));
    kjoin_err err;
    assert_int_equal(kjoin_written_add_file(w, "/a/x", SUM_Y, &err), KJOIN_OK);
    assert_int_equal(kjoin_written_add_file(w, "/a/x", SUM_X, &err), KJOIN_OK); /* replaced, not added */
    assert_int_equal(w->n_files, 1);
    assert_true(kjoin_written_has_file(w, "/a/x", SUM_X));
    assert_false(kjoin_written_has_file(w, "/a/x", SUM_Y));
    assert_true(kjoin_written_has_file(w, "/a/x", NULL));
    assert_false(kjoin_written_has_file(w, "/a/y", NULL));
    assert_true(kjoin_written_has_data(w, "/a/x", "x", 1));
    assert_false(kjoin_written_has_data(w, "/a/x", "y", 1));
    assert_false(kjoin_written_has_data(w, "/a/z", "x", 1));
    /* More files than a record holds: refused, never dropped. */
    char path[64];
    for (int i = 1; i < KJOIN_WRITTEN_FILES; i++) {
        snprintf(path, sizeof(path), "/a/%d", i);
        assert_int_equal(kjoin_written_add_file(w, path, SUM_X, &err), KJOIN_OK);
    }
    assert_int_equal(kjoin_written_add_file(w, "/a/one-more", SUM_X, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "48 files at most"));
    assert_int_equal(kjoin_written_add_file(w, "/a/1", SUM_Y, &err), KJOIN_OK); /* a replacement still fits */
    free(w);
}

static void test_missing_dirs(void **state)
{
    (void)state;
    char *dir = tu_tmpdir(), deep[4200], mid[4200], other[4200];
    kjoin_written *w = calloc(1, sizeof(*w));
    kjoin_err err;
    snprintf(mid, sizeof(mid), "%s/pki", dir);
    snprintf(deep, sizeof(deep), "%s/pki/etcd", dir);
    snprintf(other, sizeof(other), "%s/manifests", dir);
    assert_int_equal(kjoin_written_add_missing_dirs(w, deep, &err), KJOIN_OK);
    assert_int_equal(kjoin_written_add_missing_dirs(w, deep, &err), KJOIN_OK); /* each once */
    assert_int_equal(kjoin_written_add_missing_dirs(w, dir, &err), KJOIN_OK);  /* there: nothing */
    assert_int_equal(w->n_dirs, 2);
    assert_true(kjoin_written_has_dir(w, deep) && kjoin_written_has_dir(w, mid));
    assert_false(kjoin_written_has_dir(w, dir));
    /* One that is there is not made by the join. */
    assert_int_equal(mkdir(other, 0700), 0);
    assert_int_equal(kjoin_written_add_missing_dirs(w, other, &err), KJOIN_OK);
    assert_int_equal(w->n_dirs, 2);
    /* More than a record holds: refused. */
    for (int i = 0; i < KJOIN_WRITTEN_DIRS - 2; i++) {
        char p[4300];
        snprintf(p, sizeof(p), "%s/d%d", dir, i);
        assert_int_equal(kjoin_written_add_missing_dirs(w, p, &err), KJOIN_OK);
    }
    snprintf(other, sizeof(other), "%s/one-more", dir);
    assert_int_equal(kjoin_written_add_missing_dirs(w, other, &err), KJOIN_E_USAGE);
    free(w);
    tu_rmtree(dir);
}

typedef struct seen {
    char removed[8][4200];
    size_t n_removed;
    char left[8][4800];
    size_t n_left;
} seen;

static void report(void *ctx, const char *path, kjoin_undo u, const char *why)
{
    seen *s = ctx;
    if (u == KJOIN_UNDO_REMOVED && s->n_removed < 8)
        snprintf(s->removed[s->n_removed++], sizeof(s->removed[0]), "%s", path);
    else if (u == KJOIN_UNDO_LEFT && s->n_left < 8)
        snprintf(s->left[s->n_left++], sizeof(s->left[0]), "%s: %s", path, why);
}

/* Undo: a file removed only while it holds what was written; the
 * directories deepest first, only when empty; what before records stays. */
static void test_undo(void **state)
{
    (void)state;
    char *dir = tu_tmpdir(), a[1100], b[1024], c[1024], sub[1024], subsub[1024], keep[1024];
    kjoin_written *w = calloc(1, sizeof(*w)), *before = calloc(1, sizeof(*before));
    kjoin_err err;
    snprintf(sub, sizeof(sub), "%s/sub", dir);
    snprintf(subsub, sizeof(subsub), "%s/sub/deeper", dir);
    snprintf(keep, sizeof(keep), "%s/kept", dir);
    assert_int_equal(kjoin_written_add_missing_dirs(w, subsub, &err), KJOIN_OK);
    assert_int_equal(kjoin_written_add_missing_dirs(w, keep, &err), KJOIN_OK);
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(mkdir(subsub, 0700), 0);
    assert_int_equal(mkdir(keep, 0700), 0);
    tu_write(subsub, "a", "x");   /* as written */
    tu_write(dir, "b", "changed"); /* changed since */
    tu_write(dir, "c", "x");      /* written before this run */
    snprintf(a, sizeof(a), "%s/a", subsub);
    snprintf(b, sizeof(b), "%s/b", dir);
    snprintf(c, sizeof(c), "%s/c", dir);
    assert_int_equal(kjoin_written_add_file(w, a, SUM_X, &err), KJOIN_OK);
    assert_int_equal(kjoin_written_add_file(w, b, SUM_X, &err), KJOIN_OK);
    assert_int_equal(kjoin_written_add_file(w, c, SUM_X, &err), KJOIN_OK);
    assert_int_equal(kjoin_written_add_file(before, c, SUM_X, &err), KJOIN_OK);
    snprintf(before->dirs[before->n_dirs++], sizeof(before->dirs[0]), "%s", keep);
    seen *s = calloc(1, sizeof(*s));
    /* A dry run says, and changes nothing. */
    kjoin_written_undo_files(w, before, true, report, s);
    assert_int_equal(s->n_removed, 1);
    assert_int_equal(access(a, F_OK), 0);
    memset(s, 0, sizeof(*s));
    kjoin_written_undo_files(w, before, false, report, s);
    assert_int_equal(s->n_removed, 1);
    assert_string_equal(s->removed[0], a);
    assert_int_equal(s->n_left, 1);
    assert_non_null(strstr(s->left[0], b));
    assert_int_equal(access(b, F_OK), 0);
    assert_int_equal(access(c, F_OK), 0);
    memset(s, 0, sizeof(*s));
    kjoin_written_undo_dirs(w, before, false, "not empty", report, s);
    assert_int_equal(s->n_removed, 2);
    assert_string_equal(s->removed[0], subsub); /* deepest first */
    assert_string_equal(s->removed[1], sub);
    assert_int_equal(access(keep, F_OK), 0);  /* before made it: not this run's */
    /* A directory that holds another's file stays, said. */
    assert_int_equal(mkdir(sub, 0700), 0);
    tu_write(sub, "theirs", "y");
    memset(s, 0, sizeof(*s));
    kjoin_written_undo_dirs(w, NULL, false, "not empty", report, s);
    assert_int_equal(s->n_left, 1);
    assert_non_null(strstr(s->left[0], "not empty"));
    free(s);
    free(w);
    free(before);
    tu_rmtree(dir);
}

static bool not_tmp(const char *path, const void *ctx)
{
    (void)ctx;
    return strncmp(path, "/tmp/", 5) != 0;
}

static bool any(const char *path, const void *ctx)
{
    (void)path, (void)ctx;
    return true;
}

static kjoin_code parse(const char *text, kjoin_written *w, kjoin_err *err)
{
    json_object *o = kjoin_record_open(text, strlen(text), 4096, "K");
    if (!o)
        return kjoin_err_set(err, KJOIN_E_USAGE, "not a record");
    kjoin_code rc = kjoin_record_written_parse(o, "test record", not_tmp, any, NULL, w, err);
    json_object_put(o);
    return rc;
}

/* Read back as untrusted: what is written reads back the same; the
 * control plane's records of before the one format ("dirs") still read. */
static void test_json(void **state)
{
    (void)state;
    kjoin_written *w = calloc(1, sizeof(*w)), *back = calloc(1, sizeof(*back));
    kjoin_err err;
    assert_int_equal(kjoin_written_add_file(w, "/etc/kubernetes/x", SUM_X, &err), KJOIN_OK);
    snprintf(w->dirs[w->n_dirs++], sizeof(w->dirs[0]), "/etc/kubernetes/pki");
    json_object *o = json_object_new_object();
    json_object_object_add(o, "kind", json_object_new_string("K"));
    kjoin_record_written_emit(o, w);
    const char *text = json_object_to_json_string(o);
    assert_non_null(strstr(text, "\"createdDirs\""));
    assert_int_equal(parse(text, back, &err), KJOIN_OK);
    assert_memory_equal(w, back, sizeof(*w));
    json_object_put(o);
    assert_int_equal(parse("{\"kind\":\"K\",\"files\":[],\"dirs\":[\"/var/lib/etcd\"]}", back, &err), KJOIN_OK);
    assert_int_equal(back->n_dirs, 1);
    assert_string_equal(back->dirs[0], "/var/lib/etcd");
    assert_int_equal(parse("{\"kind\":\"K\",\"files\":[]}", back, &err), KJOIN_OK);
    char many[2048] = "{\"kind\":\"K\",\"files\":[],\"createdDirs\":[";
    for (int i = 0; i <= KJOIN_WRITTEN_DIRS; i++)
        snprintf(many + strlen(many), sizeof(many) - strlen(many), "%s\"/d%d\"", i ? "," : "", i);
    strncat(many, "]}", sizeof(many) - strlen(many) - 1);
    const char *bad[] = {
        "{\"kind\":\"J\",\"files\":[]}",                                   /* another kind */
        "{\"kind\":\"K\",\"files\":[]} {}",                                /* not whole */
        "[{\"kind\":\"K\"}]",                                              /* not an object */
        "{\"kind\":\"K\"}",                                                /* no files */
        "{\"kind\":\"K\",\"files\":{}}",                                   /* files not a list */
        "{\"kind\":\"K\",\"files\":[{\"path\":\"/tmp/x\",\"sha256\":\"" SUM_X "\"}]}", /* not the record's to name */
        "{\"kind\":\"K\",\"files\":[{\"path\":\"/e/../x\",\"sha256\":\"" SUM_X "\"}]}", /* not clean */
        "{\"kind\":\"K\",\"files\":[{\"path\":\"/e/x\",\"sha256\":\"" SUM_X "0\"}]}",   /* a digest too long */
        "{\"kind\":\"K\",\"files\":[{\"path\":\"/e/x\",\"sha256\":\"zz\"}]}",
        "{\"kind\":\"K\",\"files\":[{\"path\":\"/e/\\u001bx\",\"sha256\":\"" SUM_X "\"}]}", /* not printable */
        "{\"kind\":\"K\",\"files\":[],\"createdDirs\":[\"/\"]}",             /* never the root */
        "{\"kind\":\"K\",\"files\":[],\"createdDirs\":[\"rel\"]}",
        "{\"kind\":\"K\",\"files\":[],\"createdDirs\":\"/e\"}",
        "{\"kind\":\"K\",\"files\":[],\"createdDirs\":[1]}",
        many,
    };
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        memset(back, 0xff, sizeof(*back));
        if (parse(bad[i], back, &err) != KJOIN_E_USAGE)
            fail_msg("accepted: %s", bad[i]);
    }
    assert_null(kjoin_record_open("{\"kind\":\"K\",\"files\":[]}", 24, 10, "K")); /* over the cap */
    assert_null(kjoin_record_open("{\"kind\":\"K\"}\0", 13, 100, "K"));         /* a NUL */
    free(w);
    free(back);
}

/* Who heard what: a part's paths, and whether each went. */
typedef struct heard {
    size_t removed, left;
    char last[4200];
} heard;

static void hear(void *ctx, const char *path, kjoin_undo what, const char *why)
{
    heard *h = ctx;
    (void)why;
    h->removed += what == KJOIN_UNDO_REMOVED;
    h->left += what == KJOIN_UNDO_LEFT;
    snprintf(h->last, sizeof(h->last), "%s", path);
}

/* Two parts' directories undone at once: one part's directory holding the
 * other's goes after it, whichever part is first; a directory both record
 * is undone once, reported to the first; a dry run removes nothing; one
 * holding another's file is left, said. */
static void test_undo_parts(void **state)
{
    (void)state;
    char *d = tu_tmpdir(), outer[1000], inner[1000], shared[1000];
    snprintf(outer, sizeof(outer), "%s/outer", d);
    snprintf(inner, sizeof(inner), "%s/outer/inner", d);
    snprintf(shared, sizeof(shared), "%s/shared", d);
    kjoin_written *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
    kjoin_err err;
    assert_int_equal(kjoin_written_add_missing_dirs(a, outer, &err), KJOIN_OK); /* the outer one: part a's */
    snprintf(a->dirs[a->n_dirs++], sizeof(a->dirs[0]), "%s", shared);
    snprintf(b->dirs[b->n_dirs++], sizeof(b->dirs[0]), "%s", inner);
    snprintf(b->dirs[b->n_dirs++], sizeof(b->dirs[0]), "%s", shared);
    assert_int_equal(mkdir(outer, 0700), 0);
    assert_int_equal(mkdir(inner, 0700), 0);
    assert_int_equal(mkdir(shared, 0700), 0);
    heard ha = {0}, hb = {0};
    kjoin_written_part parts[] = {{a, hear, &ha}, {b, hear, &hb}};
    struct stat st;
    kjoin_written_undo_parts(parts, 2, true, "not empty");
    assert_int_equal(stat(inner, &st), 0);
    ha = (heard){0}, hb = (heard){0};
    tu_write(shared, "theirs", "x");
    kjoin_written_undo_parts(parts, 2, false, "not empty");
    assert_int_equal(stat(inner, &st), -1);
    assert_int_equal(stat(outer, &st), -1);
    assert_int_equal(stat(shared, &st), 0);
    assert_int_equal(ha.removed, 1); /* outer */
    assert_int_equal(ha.left, 1);    /* shared: recorded by both, reported to a */
    assert_int_equal(hb.removed, 1); /* inner */
    assert_int_equal(hb.left, 0);
    free(a);
    free(b);
    tu_rmtree(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_and_ask),
        cmocka_unit_test(test_missing_dirs),
        cmocka_unit_test(test_undo),
        cmocka_unit_test(test_undo_parts),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
