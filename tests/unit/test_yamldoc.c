/* Every YAML kjoin reads: bounded against hostile input (size, depth,
 * aliases), lookups that refuse ambiguity, one document where one is
 * expected, a stream walked by the one loop, values as go-yaml v2 reads them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "../../pkg/yamldoc/yamldoc.h"

static void test_a_document_and_its_lookups(void **state)
{
    (void)state;
    static const char text[] = "apiVersion: v1\nkind: Config\nport: 0x1F\non: yes\nlist: [a, b]\nempty:\n";
    kjoin_yaml y;
    kjoin_err err;
    assert_int_equal(kjoin_yaml__load(&y, text, strlen(text), KJOIN_E_USAGE, &err), KJOIN_OK);
    yaml_node_t *root = kjoin_yaml__root(&y), *v = NULL;
    assert_int_equal(kjoin_yaml__get(&y, root, "kind", &v, KJOIN_E_USAGE, &err), KJOIN_OK);
    assert_string_equal(kjoin_yaml__str(v), "Config");
    assert_int_equal(kjoin_yaml__get(&y, root, "absent", &v, KJOIN_E_USAGE, &err), KJOIN_OK);
    assert_null(v);
    assert_int_equal(kjoin_yaml__get(&y, root, "list", &v, KJOIN_E_USAGE, &err), KJOIN_OK);
    assert_int_equal(kjoin_yaml__len(v), 2);
    assert_string_equal(kjoin_yaml__str(kjoin_yaml__item(&y, v, 1)), "b");
    assert_int_equal(kjoin_yaml__get(&y, root, "empty", &v, KJOIN_E_USAGE, &err), KJOIN_OK);
    assert_true(kjoin_yaml__is_null(v));
    /* as go-yaml v2 reads it: 0x1F a number, "on" a key that is true, yes true */
    json_object *j = NULL;
    assert_int_equal(kjoin_yaml__to_json(&y, root, KJOIN_E_USAGE, &j, &err), KJOIN_OK);
    json_object *port = NULL, *yes = NULL;
    assert_true(json_object_object_get_ex(j, "port", &port));
    assert_int_equal(json_object_get_int(port), 31);
    assert_true(json_object_object_get_ex(j, "true", &yes));
    assert_true(json_object_get_boolean(yes));
    json_object_put(j);
    kjoin_yaml__release(&y);
}

static void test_ambiguity_is_refused(void **state)
{
    (void)state;
    kjoin_yaml y;
    kjoin_err err;
    yaml_node_t *v = NULL;
    /* a key twice */
    static const char twice[] = "server: a\nserver: b\n";
    assert_int_equal(kjoin_yaml__load(&y, twice, strlen(twice), KJOIN_E_USAGE, &err), KJOIN_OK);
    assert_int_equal(kjoin_yaml__get(&y, kjoin_yaml__root(&y), "server", &v, KJOIN_E_USAGE, &err), KJOIN_E_USAGE);
    kjoin_yaml__release(&y);
    /* two documents where one is read */
    static const char two[] = "a: 1\n---\nb: 2\n";
    assert_int_equal(kjoin_yaml__load(&y, two, strlen(two), KJOIN_E_USAGE, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "second YAML document"));
    /* (a trailing "---" alone is no second one) */
    static const char trailing[] = "a: 1\n---\n";
    assert_int_equal(kjoin_yaml__load(&y, trailing, strlen(trailing), KJOIN_E_USAGE, &err), KJOIN_OK);
    kjoin_yaml__release(&y);
    /* a lookup in something that is not a mapping */
    static const char seq[] = "- a\n- b\n";
    assert_int_equal(kjoin_yaml__load(&y, seq, strlen(seq), KJOIN_E_USAGE, &err), KJOIN_OK);
    assert_int_equal(kjoin_yaml__get(&y, kjoin_yaml__root(&y), "a", &v, KJOIN_E_USAGE, &err), KJOIN_E_USAGE);
    kjoin_yaml__release(&y);
    /* nothing at all */
    assert_int_equal(kjoin_yaml__load(&y, "", 0, KJOIN_E_USAGE, &err), KJOIN_E_USAGE);
    /* a merge key, and a value JSON has no word for */
    json_object *j = NULL;
    static const char merge[] = "base: &b {x: 1}\nother:\n  <<: *b\n";
    assert_int_equal(kjoin_yaml__load_json(merge, strlen(merge), KJOIN_E_USAGE, &j, &err), KJOIN_E_USAGE);
    static const char inf[] = "x: .inf\n";
    assert_int_equal(kjoin_yaml__load_json(inf, strlen(inf), KJOIN_E_USAGE, &j, &err), KJOIN_E_USAGE);
    assert_null(j);
}

static void test_hostile_input_stops_at_once(void **state)
{
    (void)state;
    kjoin_yaml y;
    kjoin_err err;
    /* over the size bound */
    size_t big = KJOIN_YAML_MAX_BYTES + 1;
    char *text = malloc(big + 1);
    assert_non_null(text);
    memset(text, '#', big);
    text[big] = '\0';
    assert_int_equal(kjoin_yaml__load(&y, text, big, KJOIN_E_USAGE, &err), KJOIN_E_USAGE);
    /* nesting deeper than the bound */
    size_t depth = KJOIN_YAML_MAX_DEPTH + 8, n = 0;
    for (size_t i = 0; i < depth; i++)
        text[n++] = '[';
    for (size_t i = 0; i < depth; i++)
        text[n++] = ']';
    assert_int_equal(kjoin_yaml__load(&y, text, n, KJOIN_E_USAGE, &err), KJOIN_E_USAGE);
    /* (the bound itself is fine) */
    n = 0;
    for (size_t i = 0; i < KJOIN_YAML_MAX_DEPTH - 1; i++)
        text[n++] = '[';
    for (size_t i = 0; i < KJOIN_YAML_MAX_DEPTH - 1; i++)
        text[n++] = ']';
    assert_int_equal(kjoin_yaml__load(&y, text, n, KJOIN_E_USAGE, &err), KJOIN_OK);
    kjoin_yaml__release(&y);
    free(text);
    /* a billion laughs: aliases expanding past the bound */
    static const char laughs[] = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                                 "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                                 "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                                 "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                                 "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                                 "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                                 "g: [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n";
    assert_int_equal(kjoin_yaml__load(&y, laughs, strlen(laughs), KJOIN_E_USAGE, &err), KJOIN_E_USAGE);
}

typedef struct walk {
    int documents;
    char kinds[64];
} walk;

static kjoin_code each(kjoin_yaml *y, yaml_node_t *root, void *ctx, kjoin_err *err)
{
    walk *w = ctx;
    yaml_node_t *kind = NULL;
    w->documents++;
    if (root->type != YAML_MAPPING_NODE)
        return KJOIN_OK;
    kjoin_code rc = kjoin_yaml__get(y, root, "kind", &kind, KJOIN_E_USAGE, err);
    if (!rc && kind)
        snprintf(w->kinds + strlen(w->kinds), sizeof(w->kinds) - strlen(w->kinds), "%s,", kjoin_yaml__str(kind));
    if (!rc && kind && !strcmp(kjoin_yaml__str(kind), "Stop"))
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "stopped");
    return rc;
}

static void test_a_stream_is_walked_once_by_the_one_loop(void **state)
{
    (void)state;
    kjoin_err err;
    walk w = {0};
    static const char stream[] = "kind: A\n---\n---\nkind: B\n";
    assert_int_equal(kjoin_yaml__each_document(stream, strlen(stream), KJOIN_E_USAGE, each, &w, NULL, &err), KJOIN_OK);
    assert_int_equal(w.documents, 3); /* the empty one too, as a null scalar */
    assert_string_equal(w.kinds, "A,B,");
    /* the callback's error ends the walk */
    walk s = {0};
    static const char stop[] = "kind: A\n---\nkind: Stop\n---\nkind: C\n";
    assert_int_equal(kjoin_yaml__each_document(stop, strlen(stop), KJOIN_E_USAGE, each, &s, NULL, &err), KJOIN_E_USAGE);
    assert_string_equal(s.kinds, "A,Stop,");
    /* a syntax error says its line */
    walk b = {0};
    size_t line = 0;
    static const char broken[] = "kind: A\n---\nkind: [B\n";
    assert_int_equal(kjoin_yaml__each_document(broken, strlen(broken), KJOIN_E_TRUST, each, &b, &line, &err),
                     KJOIN_E_TRUST);
    assert_true(line >= 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_document_and_its_lookups),
        cmocka_unit_test(test_ambiguity_is_refused),
        cmocka_unit_test(test_hostile_input_stops_at_once),
        cmocka_unit_test(test_a_stream_is_walked_once_by_the_one_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
