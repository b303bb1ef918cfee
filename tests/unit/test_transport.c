/* The response body's two routes: collected under a cap, or (a watch's 200)
 * handed to a sink. A sunk body must leave the collected one empty: its
 * length is what the answer's release wipes. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "../../pkg/transport/body.h"

typedef struct seen {
    char data[64];
    size_t len, calls;
} seen;

static void sink(const char *data, size_t len, void *ctx)
{
    seen *s = ctx;
    if (s->len + len <= sizeof(s->data))
        memcpy(s->data + s->len, data, len);
    s->len += len;
    s->calls++;
}

static void test_a_sunk_body_leaves_the_collected_one_empty(void **state)
{
    (void)state;
    seen s = {0};
    kjoin_http_body b = {.max = 40, .sink = sink, .sink_ctx = &s, .sunk = true, .routed = true};
    assert_int_equal(kjoin_http__body_take(&b, "{\"type\":\"ADDED\"}\n", 17), 17);
    assert_int_equal(kjoin_http__body_take(&b, "{\"type\":\"BOOKMARK\"}\n", 20), 20);
    assert_int_equal(s.calls, 2);
    assert_memory_equal(s.data, "{\"type\":\"ADDED\"}\n{\"type\":\"BOOKMARK\"}\n", 37);
    assert_null(b.buf);
    assert_int_equal(b.len, 0); /* nothing collected: nothing for the release to wipe */
    assert_int_equal(b.streamed, 37);
    /* the cap holds for what is streamed too */
    assert_int_equal(kjoin_http__body_take(&b, "1234", 4), 0);
    assert_true(b.overflow);
    assert_int_equal(s.calls, 2);
}

static void test_a_collected_body_is_kept_under_its_cap(void **state)
{
    (void)state;
    kjoin_http_body b = {.max = 8, .routed = true};
    assert_int_equal(kjoin_http__body_take(&b, "abcd", 4), 4);
    assert_int_equal(kjoin_http__body_take(&b, "efgh", 4), 4);
    assert_string_equal(b.buf, "abcdefgh");
    assert_int_equal(b.len, 8);
    assert_int_equal(b.streamed, 0);
    assert_int_equal(kjoin_http__body_take(&b, "i", 1), 0);
    assert_true(b.overflow);
    free(b.buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_sunk_body_leaves_the_collected_one_empty),
        cmocka_unit_test(test_a_collected_body_is_kept_under_its_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
