/* kubeadm's patches: RFC 7386's and RFC 6902's own examples (their
 * appendices), the strategic directives, and the directory's rules. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kjoin/private/patch.h>

#include "testutil.h"

/* One patch of type on target (JSON text): KJOIN_OK and *result (JSON
 * text, to free), or the error. */
static kjoin_code apply_one(kjoin_patch_type type, const char *target, const char *patch, char **result,
                            kjoin_err *err)
{
    kjoin_patchset set = {.n = 1};
    set.items[0] = (kjoin_patch){.type = type, .target = "kubeletconfiguration", .patch = json_tokener_parse(patch), .file = "test"};
    json_object *doc = json_tokener_parse(target);
    assert_non_null(set.items[0].patch);
    kjoin_code rc = kjoin_patches_apply(&set, "kubeletconfiguration", &doc, NULL, err);
    *result = rc ? NULL : strdup(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN));
    json_object_put(doc);
    kjoin_patchset_release(&set);
    return rc;
}

static void same_json(const char *got, const char *want, size_t i)
{
    json_object *a = json_tokener_parse(got), *b = json_tokener_parse(want);
    if (!json_object_equal(a, b))
        fail_msg("case %zu: %s, not %s", i, got, want);
    json_object_put(a);
    json_object_put(b);
}

/* RFC 7386, Appendix A, each wrapped in {"a": ...} where the target or the
 * patch is not an object (the configuration always is). */
static void test_merge_rfc7386(void **state)
{
    (void)state;
    static const char *const cases[][3] = {
        {"{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
        {"{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}"},
        {"{\"a\":\"b\"}", "{\"a\":null}", "{}"},
        {"{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}"},
        {"{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
        {"{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}"},
        {"{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}", "{\"a\":{\"b\":\"d\"}}"},
        {"{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}"},
        {"{\"x\":[\"a\",\"b\"]}", "{\"x\":[\"c\",\"d\"]}", "{\"x\":[\"c\",\"d\"]}"},
        {"{\"x\":{\"a\":\"b\"}}", "{\"x\":[\"c\"]}", "{\"x\":[\"c\"]}"},
        {"{\"x\":{\"a\":\"foo\"}}", "{\"x\":null}", "{}"},
        {"{\"x\":{\"a\":\"foo\"}}", "{\"x\":\"bar\"}", "{\"x\":\"bar\"}"},
        {"{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}"},
        {"{\"x\":[1,2]}", "{\"x\":{\"a\":\"b\",\"c\":null}}", "{\"x\":{\"a\":\"b\"}}"},
        {"{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}"},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++)
        for (int type = KJOIN_PATCH_STRATEGIC; type <= KJOIN_PATCH_MERGE; type++) {
            char *got = NULL;
            kjoin_err err;
            assert_int_equal(apply_one(type, cases[i][0], cases[i][1], &got, &err), KJOIN_OK);
            same_json(got, cases[i][2], i);
            free(got);
        }
}

/* A patch's values are copied: a later patch that changes them in the
 * document leaves the first patch as it was. */
static void test_patches_apply_in_order(void **state)
{
    (void)state;
    kjoin_patchset set = {.n = 3};
    set.items[0] = (kjoin_patch){.type = KJOIN_PATCH_MERGE, .target = "kubeletconfiguration", .patch = json_tokener_parse("{\"r\":{\"cpu\":\"1\"}}"), .file = "a"};
    set.items[1] = (kjoin_patch){.type = KJOIN_PATCH_STRATEGIC, .target = "kubeletconfiguration", .patch = json_tokener_parse("{\"r\":{\"memory\":\"1Gi\"}}"), .file = "b"};
    set.items[2] = (kjoin_patch){.type = KJOIN_PATCH_JSON, .target = "kubeletconfiguration", .patch = json_tokener_parse("[{\"op\":\"replace\",\"path\":\"/r/cpu\",\"value\":\"2\"}]"), .file = "c"};
    json_object *doc = json_tokener_parse("{\"maxPods\":110}");
    kjoin_err err;
    assert_int_equal(kjoin_patches_apply(&set, "kubeletconfiguration", &doc, NULL, &err), KJOIN_OK);
    same_json(json_object_to_json_string(doc), "{\"maxPods\":110,\"r\":{\"cpu\":\"2\",\"memory\":\"1Gi\"}}", 0);
    same_json(json_object_to_json_string(set.items[0].patch), "{\"r\":{\"cpu\":\"1\"}}", 1);
    json_object_put(doc);
    kjoin_patchset_release(&set);
}

/* RFC 6902, Appendix A: the examples that succeed... */
static void test_json_patch_rfc6902(void **state)
{
    (void)state;
    static const char *const ok[][3] = {
        /* A.1 */ {"{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\"}]",
                   "{\"baz\":\"qux\",\"foo\":\"bar\"}"},
        /* A.2 */ {"{\"foo\":[\"bar\",\"baz\"]}", "[{\"op\":\"add\",\"path\":\"/foo/1\",\"value\":\"qux\"}]",
                   "{\"foo\":[\"bar\",\"qux\",\"baz\"]}"},
        /* A.3 */ {"{\"baz\":\"qux\",\"foo\":\"bar\"}", "[{\"op\":\"remove\",\"path\":\"/baz\"}]", "{\"foo\":\"bar\"}"},
        /* A.4 */ {"{\"foo\":[\"bar\",\"qux\",\"baz\"]}", "[{\"op\":\"remove\",\"path\":\"/foo/1\"}]",
                   "{\"foo\":[\"bar\",\"baz\"]}"},
        /* A.5 */ {"{\"baz\":\"qux\",\"foo\":\"bar\"}", "[{\"op\":\"replace\",\"path\":\"/baz\",\"value\":\"boo\"}]",
                   "{\"baz\":\"boo\",\"foo\":\"bar\"}"},
        /* A.6 */ {"{\"foo\":{\"bar\":\"baz\",\"waldo\":\"fred\"},\"qux\":{\"corge\":\"grault\"}}",
                   "[{\"op\":\"move\",\"from\":\"/foo/waldo\",\"path\":\"/qux/thud\"}]",
                   "{\"foo\":{\"bar\":\"baz\"},\"qux\":{\"corge\":\"grault\",\"thud\":\"fred\"}}"},
        /* A.7 */ {"{\"foo\":[\"all\",\"grass\",\"cows\",\"eat\"]}",
                   "[{\"op\":\"move\",\"from\":\"/foo/1\",\"path\":\"/foo/3\"}]",
                   "{\"foo\":[\"all\",\"cows\",\"eat\",\"grass\"]}"},
        /* A.8 */ {"{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}",
                   "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"qux\"},{\"op\":\"test\",\"path\":\"/foo/1\",\"value\":2}]",
                   "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}"},
        /* A.10 */ {"{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/child\",\"value\":{\"grandchild\":{}}}]",
                    "{\"foo\":\"bar\",\"child\":{\"grandchild\":{}}}"},
        /* A.11 */ {"{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\",\"xyz\":123}]",
                    "{\"foo\":\"bar\",\"baz\":\"qux\"}"},
        /* A.14 */ {"{\"/\":9,\"~1\":10}", "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":10}]", "{\"/\":9,\"~1\":10}"},
        /* A.16 */ {"{\"foo\":[\"bar\"]}", "[{\"op\":\"add\",\"path\":\"/foo/-\",\"value\":[\"abc\",\"def\"]}]",
                    "{\"foo\":[\"bar\",[\"abc\",\"def\"]]}"},
        /* copy, and add at the end by index */
        {"{\"a\":{\"b\":1},\"l\":[1]}",
         "[{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/c\"},{\"op\":\"add\",\"path\":\"/l/1\",\"value\":2}]",
         "{\"a\":{\"b\":1},\"c\":{\"b\":1},\"l\":[1,2]}"},
    };
    for (size_t i = 0; i < TU_LEN(ok); i++) {
        char *got = NULL;
        kjoin_err err;
        if (apply_one(KJOIN_PATCH_JSON, ok[i][0], ok[i][1], &got, &err))
            fail_msg("case %zu: %s", i, err.msg);
        same_json(got, ok[i][2], i);
        free(got);
    }
}

/* ...and those that must fail, each with its reason; the document is not
 * half-patched (the caller drops it). */
static void test_json_patch_refusals(void **state)
{
    (void)state;
    static const char *const bad[][3] = {
        /* A.9 */ {"{\"baz\":\"qux\"}", "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"bar\"}]", "the value differs"},
        /* A.12 */ {"{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz/bat\",\"value\":\"qux\"}]", "the parent is missing"},
        /* A.13: a duplicate "op" is taken by json-c as its last; the op must be known */
        {"{}", "[{\"op\":\"frobnicate\",\"path\":\"/a\"}]", "is not add, remove, replace, move, copy or test"},
        /* A.15 */ {"{\"/\":9,\"~1\":10}", "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":\"10\"}]", "the value differs"},
        {"{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/b\"}]", "nothing is there"},
        {"{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"/b\",\"value\":1}]", "nothing is there"},
        {"{\"l\":[1]}", "[{\"op\":\"add\",\"path\":\"/l/2\",\"value\":1}]", "past the end"},
        {"{\"l\":[1]}", "[{\"op\":\"remove\",\"path\":\"/l/01\"}]", "nothing is there"},
        {"{\"a\":{\"b\":1}}", "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a/c\"}]", "cannot move into itself"},
        {"{\"a\":1}", "[{\"op\":\"add\",\"path\":\"a\",\"value\":1}]", "does not start with /"},
        {"{\"a\":1}", "[{\"op\":\"add\",\"path\":\"/a~2\",\"value\":1}]", "not ~0 or ~1"},
        {"{\"a\":1}", "[{\"op\":\"add\",\"path\":\"/b\"}]", "add needs \"value\""},
        {"{\"a\":1}", "[{\"op\":\"copy\",\"path\":\"/b\"}]", "copy needs \"from\""},
        {"{\"a\":1}", "[{\"op\":\"copy\",\"from\":\"/x\",\"path\":\"/b\"}]", "copy /b: nothing is at /x"},
        {"{\"a\":1}", "[{\"op\":\"test\",\"path\":\"/a\",\"value\":2}]", "test /a: the value differs"},
        {"{\"a\":1}", "[{\"path\":\"/b\"}]", "a string \"op\" and \"path\""},
        {"{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"\",\"value\":[1]}]", "no longer a mapping"},
        {"{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"\"}]", "the whole document cannot be removed"},
    };
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        char *got = NULL;
        kjoin_err err;
        assert_int_equal(apply_one(KJOIN_PATCH_JSON, bad[i][0], bad[i][1], &got, &err), KJOIN_E_USAGE);
        assert_null(got);
        if (!strstr(err.msg, bad[i][2]) || !strstr(err.msg, "the json patch in test does not apply"))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, bad[i][2]);
    }
}

/* The strategic directives a field without a patch strategy has. */
static void test_strategic_directives(void **state)
{
    (void)state;
    char *got;
    kjoin_err err;
    assert_int_equal(apply_one(KJOIN_PATCH_STRATEGIC, "{\"r\":{\"a\":1,\"b\":2},\"k\":1}",
                               "{\"r\":{\"$patch\":\"replace\",\"c\":3}}", &got, &err), KJOIN_OK);
    same_json(got, "{\"r\":{\"c\":3},\"k\":1}", 0);
    free(got);
    assert_int_equal(apply_one(KJOIN_PATCH_STRATEGIC, "{\"r\":{\"a\":1},\"k\":1}", "{\"r\":{\"$patch\":\"delete\"}}",
                               &got, &err), KJOIN_OK);
    same_json(got, "{\"k\":1}", 1);
    free(got);
    /* A merge patch has no directives: "$patch" is a key like any other. */
    assert_int_equal(apply_one(KJOIN_PATCH_MERGE, "{}", "{\"r\":{\"$patch\":\"delete\"}}", &got, &err), KJOIN_OK);
    same_json(got, "{\"r\":{\"$patch\":\"delete\"}}", 2);
    free(got);
    static const char *const bad[][2] = {
        {"{\"$patch\":\"delete\"}", "would delete the whole configuration"},
        {"{\"r\":{\"$patch\":\"merge\"}}", "is not one of replace, delete"},
        {"{\"$retainKeys\":[\"a\"]}", "$retainKeys is not supported"},
        {"{\"r\":{\"$setElementOrder/x\":[]}}", "is not supported"},
    };
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        assert_int_equal(apply_one(KJOIN_PATCH_STRATEGIC, "{\"r\":{}}", bad[i][0], &got, &err), KJOIN_E_USAGE);
        if (!strstr(err.msg, bad[i][1]))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, bad[i][1]);
    }
}

static bool has_note(const kjoin_patchset *s, const char *text)
{
    for (size_t i = 0; i < s->n_notes; i++)
        if (strstr(s->notes[i], text))
            return true;
    return false;
}

/* A strategic patch on a static Pod merges its keyed lists item by item:
 * the container by name (its resources merged, an env var added, one
 * removed), a volume added; a list without a merge key is replaced. */
static void test_pod_strategic(void **state)
{
    (void)state;
    const char *pod = "{\"spec\":{\"containers\":[{\"name\":\"kube-apiserver\",\"command\":[\"a\",\"b\"],"
                      "\"env\":[{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"B\",\"value\":\"2\"}],"
                      "\"resources\":{\"requests\":{\"cpu\":\"250m\"}},\"volumeMounts\":[{\"mountPath\":\"/x\",\"name\":\"x\"}]}],"
                      "\"volumes\":[{\"name\":\"x\",\"hostPath\":{\"path\":\"/x\"}}]}}";
    const char *patch = "{\"spec\":{\"containers\":[{\"name\":\"kube-apiserver\",\"command\":[\"c\"],"
                        "\"env\":[{\"name\":\"C\",\"value\":\"3\"},{\"name\":\"A\",\"$patch\":\"delete\"}],"
                        "\"resources\":{\"requests\":{\"memory\":\"1Gi\"}},\"volumeMounts\":[{\"mountPath\":\"/audit\",\"name\":\"audit\"}]}],"
                        "\"volumes\":[{\"name\":\"audit\",\"hostPath\":{\"path\":\"/var/log/audit\"}}]}}";
    kjoin_patchset set = {.n = 1};
    set.items[0] = (kjoin_patch){.type = KJOIN_PATCH_STRATEGIC, .target = "kube-apiserver",
                                 .patch = json_tokener_parse(patch), .file = "kube-apiserver.yaml"};
    json_object *doc = json_tokener_parse(pod);
    kjoin_err err;
    size_t applied = 9;
    assert_int_equal(kjoin_patches_apply(&set, "kube-scheduler", &doc, &applied, &err), KJOIN_OK);
    assert_int_equal(applied, 0); /* another target's patch */
    assert_int_equal(kjoin_patches_apply(&set, "kube-apiserver", &doc, &applied, &err), KJOIN_OK);
    assert_int_equal(applied, 1);
    /* apimachinery's StrategicMergePatch (v0.37.2) gives this byte for byte, keys aside: a new item goes first. */
    same_json(json_object_to_json_string(doc),
              "{\"spec\":{\"containers\":[{\"name\":\"kube-apiserver\",\"command\":[\"c\"],"
              "\"env\":[{\"name\":\"C\",\"value\":\"3\"},{\"name\":\"B\",\"value\":\"2\"}],"
              "\"resources\":{\"requests\":{\"cpu\":\"250m\",\"memory\":\"1Gi\"}},"
              "\"volumeMounts\":[{\"mountPath\":\"/audit\",\"name\":\"audit\"},{\"mountPath\":\"/x\",\"name\":\"x\"}]}],"
              "\"volumes\":[{\"name\":\"audit\",\"hostPath\":{\"path\":\"/var/log/audit\"}},"
              "{\"name\":\"x\",\"hostPath\":{\"path\":\"/x\"}}]}}", 0);
    json_object_put(doc);
    /* The order of a merged list, each case as apimachinery orders it. */
    static const char *const orders[][3] = {
        {"[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]", "[{\"name\":\"c\",\"x\":1},{\"name\":\"x\"},{\"name\":\"a\",\"x\":2}]",
         "[{\"name\":\"b\"},{\"name\":\"c\",\"x\":1},{\"name\":\"x\"},{\"name\":\"a\",\"x\":2}]"},
        {"[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]", "[{\"name\":\"b\",\"x\":1},{\"name\":\"y\"}]",
         "[{\"name\":\"a\"},{\"name\":\"b\",\"x\":1},{\"name\":\"y\"},{\"name\":\"c\"}]"},
        {"[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]", "[{\"name\":\"b\",\"$patch\":\"delete\"},{\"name\":\"z\"}]",
         "[{\"name\":\"z\"},{\"name\":\"a\"},{\"name\":\"c\"}]"},
    };
    for (size_t i = 0; i < TU_LEN(orders); i++) {
        char text[400];
        json_object_put(set.items[0].patch);
        snprintf(text, sizeof(text), "{\"spec\":{\"volumes\":%s}}", orders[i][1]);
        set.items[0].patch = json_tokener_parse(text);
        snprintf(text, sizeof(text), "{\"spec\":{\"volumes\":%s}}", orders[i][0]);
        doc = json_tokener_parse(text);
        assert_int_equal(kjoin_patches_apply(&set, "kube-apiserver", &doc, NULL, &err), KJOIN_OK);
        snprintf(text, sizeof(text), "{\"spec\":{\"volumes\":%s}}", orders[i][2]);
        same_json(json_object_to_json_string(doc), text, i);
        json_object_put(doc);
    }
    /* An item of a keyed list without its key: refused, named by its file. */
    json_object_put(set.items[0].patch);
    set.items[0].patch = json_tokener_parse("{\"spec\":{\"containers\":[{\"image\":\"x\"}]}}");
    doc = json_tokener_parse(pod);
    assert_int_equal(kjoin_patches_apply(&set, "kube-apiserver", &doc, NULL, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "kube-apiserver.yaml does not apply to kube-apiserver: an item of a list merged by name"));
    json_object_put(doc);
    kjoin_patchset_release(&set);
}

/* kubeadm's names and order: by path, a subdirectory's files where its
 * name sorts; each file's documents in turn; other extensions and empty
 * files ignored; every target's kept (a worker's join notes the control
 * plane's), kubeadm init's add-ons noted. */
static void test_read_directory(void **state)
{
    (void)state;
    char *dir = tu_tmpdir(), sub[512];
    tu_write(dir, "kubeletconfiguration1+merge.yaml", "maxPods: 30\n---\nmaxPods: 31\n");
    tu_write(dir, "kubeletconfiguration0+json.json", "[{\"op\": \"add\", \"path\": \"/x\", \"value\": 1}]");
    tu_write(dir, "kubeletconfiguration2.yaml", "systemReserved: {cpu: 500m}\n");
    tu_write(dir, "etcd.yaml", "spec: {}\n");
    tu_write(dir, "kube-apiserver+json.yaml", "[]\n");
    tu_write(dir, "README.md", "# notes\n");
    tu_write(dir, "corednsdeployment.yaml", "spec: {}\n");
    tu_write(dir, "kubeletconfiguration9.yaml", "");
    snprintf(sub, sizeof(sub), "%s/kubeletconfiguration5", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    tu_write(sub, "kubeletconfiguration+strategic.yaml", "evictionHard: {memory.available: 5%}\n");
    kjoin_patchset s;
    kjoin_err err;
    assert_int_equal(kjoin_patches_read(dir, &s, &err), KJOIN_OK);
    assert_int_equal(s.n, 7);
    const char *files[] = {"etcd.yaml", "kube-apiserver+json.yaml", "kubeletconfiguration0+json.json",
                           "kubeletconfiguration1+merge.yaml", "kubeletconfiguration1+merge.yaml",
                           "kubeletconfiguration2.yaml", "kubeletconfiguration+strategic.yaml"};
    const char *targets[] = {"etcd", "kube-apiserver", "kubeletconfiguration", "kubeletconfiguration",
                             "kubeletconfiguration", "kubeletconfiguration", "kubeletconfiguration"};
    kjoin_patch_type types[] = {KJOIN_PATCH_STRATEGIC, KJOIN_PATCH_JSON, KJOIN_PATCH_JSON, KJOIN_PATCH_MERGE,
                                KJOIN_PATCH_MERGE, KJOIN_PATCH_STRATEGIC, KJOIN_PATCH_STRATEGIC};
    for (size_t i = 0; i < 7; i++) {
        assert_string_equal(s.items[i].file, files[i]);
        assert_string_equal(s.items[i].target, targets[i]);
        assert_int_equal(s.items[i].type, types[i]);
    }
    assert_true(kjoin_patches_control_plane(&s));
    json_object *doc = json_tokener_parse("{}");
    assert_int_equal(kjoin_patches_apply(&s, "kubeletconfiguration", &doc, NULL, &err), KJOIN_OK);
    same_json(json_object_to_json_string(doc),
              "{\"x\":1,\"maxPods\":31,\"systemReserved\":{\"cpu\":\"500m\"},\"evictionHard\":{\"memory.available\":\"5%\"}}",
              0);
    json_object_put(doc);
    assert_true(has_note(&s, "Ignoring file README.md"));
    assert_true(has_note(&s, "Ignoring empty file: kubeletconfiguration9.yaml"));
    assert_true(has_note(&s, "corednsdeployment.yaml is kubeadm init's"));
    assert_int_equal(s.n_notes, 3);
    kjoin_patchset_release(&s);
    tu_rmtree(dir);
}

/* Everything else is refused before any file is written, naming the file. */
static void test_read_refusals(void **state)
{
    (void)state;
    static const char *const bad[][3] = {
        {"kubeletconfig.yaml", "maxPods: 1\n", "names no known target"},
        {"kubeletconfiguration+bogus.yaml", "maxPods: 1\n", "unknown or missing patch type after '+'"},
        {"kubeletconfiguration+.yaml", "maxPods: 1\n", "unknown or missing patch type"},
        {"kubeletconfiguration.yaml", "maxPods: [\n", "kubeletconfiguration.yaml: YAML error at line"},
        {"kubeletconfiguration.yaml", "- a\n", "a merge or strategic patch is a YAML mapping"},
        {"kubeletconfiguration+json.yaml", "op: add\n", "a json patch is a YAML list of operations"},
        {"kubeletconfiguration.yaml", "a: &a [*a]\n", "refer to themselves"},
        {"kubeletconfiguration.yaml", "a: .inf\n", "cannot be JSON"},
    };
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        char *dir = tu_tmpdir();
        tu_write(dir, bad[i][0], bad[i][1]);
        kjoin_patchset s;
        kjoin_err err;
        assert_int_equal(kjoin_patches_read(dir, &s, &err), KJOIN_E_USAGE);
        if (!strstr(err.msg, bad[i][2]))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, bad[i][2]);
        tu_rmtree(dir);
    }
    kjoin_patchset s;
    kjoin_err err;
    assert_int_equal(kjoin_patches_read("/nonexistent/patches", &s, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "the patches directory /nonexistent/patches: "));
    assert_int_equal(kjoin_patches_read("/etc/hostname", &s, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "Not a directory"));
    /* A symbolic link, to a directory or a file, is not followed. */
    char *dir = tu_tmpdir(), link[512];
    snprintf(link, sizeof(link), "%s/kubeletconfiguration.yaml", dir);
    assert_int_equal(symlink("/etc/hostname", link), 0);
    assert_int_equal(kjoin_patches_read(dir, &s, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "is a symbolic link"));
    assert_int_equal(kjoin_patches_read(link, &s, &err), KJOIN_E_USAGE);
    tu_rmtree(dir);
}

/* Root reads the patches to configure the kubelet: a file or directory
 * another user could change is refused, as ssh refuses such a key. */
static void test_read_refuses_what_others_may_change(void **state)
{
    (void)state;
    char *dir = tu_tmpdir(), path[512], sub[512];
    kjoin_patchset s;
    kjoin_err err;
    tu_write(dir, "kubeletconfiguration.yaml", "maxPods: 1\n");
    snprintf(path, sizeof(path), "%s/kubeletconfiguration.yaml", dir);
    assert_int_equal(chmod(path, 0664), 0);
    assert_int_equal(kjoin_patches_read(dir, &s, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "writable by group or others"));
    assert_int_equal(chmod(path, 0644), 0);
    if (geteuid() == 0) {
        assert_int_equal(chown(path, 65534, 65534), 0);
        assert_int_equal(kjoin_patches_read(dir, &s, &err), KJOIN_E_USAGE);
        assert_non_null(strstr(err.msg, "is owned by uid 65534"));
        assert_int_equal(chown(path, 0, 0), 0);
    }
    snprintf(sub, sizeof(sub), "%s/more", dir);
    assert_int_equal(mkdir(sub, 0777), 0);
    assert_int_equal(chmod(sub, 0777), 0);
    assert_int_equal(kjoin_patches_read(dir, &s, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "the patches directory"));
    assert_int_equal(chmod(sub, 0755), 0);
    assert_int_equal(chmod(dir, 0777), 0);
    assert_int_equal(kjoin_patches_read(dir, &s, &err), KJOIN_E_USAGE);
    assert_int_equal(chmod(dir, 0700), 0);
    assert_int_equal(kjoin_patches_read(dir, &s, &err), KJOIN_OK);
    assert_int_equal(s.n, 1);
    kjoin_patchset_release(&s);
    tu_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_rfc7386),
        cmocka_unit_test(test_patches_apply_in_order),
        cmocka_unit_test(test_json_patch_rfc6902),
        cmocka_unit_test(test_json_patch_refusals),
        cmocka_unit_test(test_strategic_directives),
        cmocka_unit_test(test_read_directory),
        cmocka_unit_test(test_pod_strategic),
        cmocka_unit_test(test_read_refusals),
        cmocka_unit_test(test_read_refuses_what_others_may_change),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
