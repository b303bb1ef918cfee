/* The container runtime asked over its CRI: a gRPC answer's header lines
 * (untrusted), and the call itself against sockets that give no answer. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <kjoin/private/cri.h>

#include "testutil.h"

static kjoin_cri_answer read_lines(const char *const *lines, size_t n)
{
    kjoin_cri_answer a = {.grpc_status = -1};
    for (size_t i = 0; i < n; i++)
        kjoin_cri_header_line(lines[i], strlen(lines[i]), &a);
    return a;
}

static void test_header_lines(void **state)
{
    (void)state;
    const char *unimplemented[] = {"HTTP/2 200\r\n", "content-type: application/grpc\r\n", "grpc-status: 12\r\n",
                                   "grpc-message: unknown method RuntimeConfig\r\n", "\r\n"};
    kjoin_cri_answer a = read_lines(unimplemented, TU_LEN(unimplemented));
    assert_int_equal(a.grpc_status, 12);
    assert_string_equal(a.message, "unknown method RuntimeConfig");
    /* names in any case, spaces and tabs around the value, a trailer's line without its CRLF */
    const char *spaced[] = {"Grpc-Status:\t 2 \r\n", "GRPC-MESSAGE:  EOF"};
    a = read_lines(spaced, TU_LEN(spaced));
    assert_int_equal(a.grpc_status, 2);
    assert_string_equal(a.message, "EOF");
    /* a later grpc-status (the trailers') wins over the headers' */
    const char *twice[] = {"grpc-status: 0\r\n", "grpc-status: 12\r\n"};
    assert_int_equal(read_lines(twice, TU_LEN(twice)).grpc_status, 12);
    /* what is no status code: none */
    const char *bad[] = {"grpc-status: 99999\r\n", "grpc-status: -1\r\n", "grpc-status: 1x\r\n", "grpc-status:\r\n",
                         "grpc-status: +1\r\n", "grpc-status 12\r\n", "grpc-statuses: 12\r\n"};
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        kjoin_cri_answer b = {.grpc_status = -1};
        kjoin_cri_header_line(bad[i], strlen(bad[i]), &b);
        if (b.grpc_status != -1)
            fail_msg("read a status from: %s", bad[i]);
    }
    /* a hostile message: control characters replaced, a token's secret masked, cut to the field */
    char line[4000];
    snprintf(line, sizeof(line), "grpc-message: \x1b[31m abcdef.0123456789abcdef %03000d\r\n", 0);
    a = (kjoin_cri_answer){.grpc_status = -1};
    kjoin_cri_header_line(line, strlen(line), &a);
    assert_non_null(strstr(a.message, "?[31m abcdef.****************"));
    assert_int_equal(strlen(a.message), sizeof(a.message) - 1);
    assert_null(strstr(a.message, "0123456789abcdef"));
    /* a line shorter than the names, an empty one */
    kjoin_cri_header_line("grpc", 4, &a);
    kjoin_cri_header_line("", 0, &a);
}

/* A runtime socket that accepts and closes at once, without a word. */
static void *close_at_once(void *arg)
{
    int fd = *(int *)arg, c;
    while ((c = accept(fd, NULL, NULL)) >= 0)
        close(c);
    return NULL;
}

static void test_no_answer(void **state)
{
    (void)state;
    char *dir = tu_tmpdir(), path[200];
    bool implemented = true;
    kjoin_cri_answer said;
    kjoin_err err;
    snprintf(path, sizeof(path), "%s/none.sock", dir);
    /* nothing there */
    assert_int_equal(kjoin_cri_implements(path, "runtime.v1.RuntimeService/RuntimeConfig", 2000, &implemented, &said,
                                          &err), KJOIN_E_TRANSIENT);
    assert_false(implemented);
    assert_non_null(strstr(err.msg, "gave no gRPC answer to runtime.v1.RuntimeService/RuntimeConfig"));
    /* a socket that closes every connection */
    snprintf(path, sizeof(path), "%s/closes.sock", dir);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    assert_true(strlen(path) < sizeof(sa.sun_path));
    memcpy(sa.sun_path, path, strlen(path) + 1);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(fd, 4), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, close_at_once, &fd), 0);
    assert_int_equal(kjoin_cri_implements(path, "runtime.v1.RuntimeService/RuntimeConfig", 2000, &implemented, &said,
                                          &err), KJOIN_E_TRANSIENT);
    assert_int_equal(said.grpc_status, -1);
    shutdown(fd, SHUT_RDWR);
    close(fd);
    pthread_join(t, NULL);
    /* a method name longer than a URL kjoin makes */
    char long_method[400];
    memset(long_method, 'm', sizeof(long_method) - 1);
    long_method[sizeof(long_method) - 1] = '\0';
    assert_int_equal(kjoin_cri_implements(path, long_method, 2000, &implemented, &said, &err), KJOIN_E_OTHER);
    tu_rmtree(dir);
}

/* protobuf's wire format both ways, and a runtime's malformed bytes refused. */
static void test_protobuf(void **state)
{
    (void)state;
    unsigned char buf[400], spec[300];
    size_t n = kjoin_pb_put_bytes(spec, sizeof(spec), 1, "registry.k8s.io/pause:3.10", 26);
    assert_int_equal(n, 28);
    size_t m = kjoin_pb_put_bytes(buf, sizeof(buf), 1, spec, n);
    assert_memory_equal(buf, "\x0a\x1c\x0a\x1aregistry.k8s.io/pause:3.10", m);
    assert_int_equal(kjoin_pb_put_bytes(buf, 10, 1, spec, n), 0); /* short */
    assert_int_equal(kjoin_pb_put_varint(buf, sizeof(buf), 1, 1), 2);
    assert_memory_equal(buf, "\x08\x01", 2);
    assert_int_equal(kjoin_pb_put_varint(buf, sizeof(buf), 2, 300), 3);
    assert_memory_equal(buf, "\x10\xac\x02", 3);
    /* read back: a varint, bytes, a fixed64, a fixed32 */
    const unsigned char msg[] = {0x10, 0xac, 0x02, 0x0a, 0x02, 'h', 'i', 0x19, 1, 2, 3, 4, 5, 6, 7, 8, 0x25, 1, 2, 3, 4};
    const unsigned char *p = msg, *end = msg + sizeof(msg);
    kjoin_pb_field f;
    assert_int_equal(kjoin_pb_next(&p, end, &f), 1);
    assert_true(f.field == 2 && f.wire == 0 && f.varint == 300);
    assert_int_equal(kjoin_pb_next(&p, end, &f), 1);
    assert_true(f.field == 1 && f.wire == 2 && f.len == 2 && !memcmp(f.data, "hi", 2));
    assert_int_equal(kjoin_pb_next(&p, end, &f), 1);
    assert_true(f.field == 3 && f.wire == 1 && f.len == 8);
    assert_int_equal(kjoin_pb_next(&p, end, &f), 1);
    assert_true(f.field == 4 && f.wire == 5 && f.len == 4);
    assert_int_equal(kjoin_pb_next(&p, end, &f), 0);
    static const struct {
        const char *bytes;
        size_t len;
    } bad[] = {
        {"\x0a\x05hi", 4},                                          /* a length past the end */
        {"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11},  /* a length of 2^64 */
        {"\x80", 1},                                                 /* a key cut short */
        {"\x00\x01", 2},                                             /* field 0 */
        {"\x0b", 1},                                                 /* a group */
        {"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12}, /* a varint over 64 bits */
        {"\x0d\x01\x02", 3},                                        /* a fixed32 cut short */
    };
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        p = (const unsigned char *)bad[i].bytes, end = p + bad[i].len;
        if (kjoin_pb_next(&p, end, &f) != -1)
            fail_msg("case %zu read", i);
    }
}

/* What the runtime's answers say: an image it holds or not, its sandbox image
 * (containerd 1.x's key and 2.x's), the gRPC frame around a message. */
static void test_answers(void **state)
{
    (void)state;
    unsigned char image[100], msg[200];
    size_t n = kjoin_pb_put_bytes(image, sizeof(image), 1, "sha256:abc", 10);
    size_t m = kjoin_pb_put_bytes(msg, sizeof(msg), 1, image, n);
    assert_true(kjoin_cri_image_status_present(msg, m));
    assert_false(kjoin_cri_image_status_present(msg, 0)); /* an empty ImageStatusResponse: none */
    m = kjoin_pb_put_bytes(msg, sizeof(msg), 2, "x", 1);   /* info only */
    assert_false(kjoin_cri_image_status_present(msg, m));
    assert_false(kjoin_cri_image_status_present((const unsigned char *)"\x0a\x09", 2));
    char out[128];
    const char *v1 = "{\"sandboxImage\":\"registry.k8s.io/pause:3.6\",\"x\":1}";
    const char *v2 = "{\"pinnedImages\":{\"sandbox\":\"registry.k8s.io/pause:3.10\"}}";
    unsigned char entry[300], status[400];
    size_t e = kjoin_pb_put_bytes(entry, sizeof(entry), 1, "config", 6);
    e += kjoin_pb_put_bytes(entry + e, sizeof(entry) - e, 2, v1, strlen(v1));
    size_t s = kjoin_pb_put_bytes(status, sizeof(status), 1, "\x0a\x00", 2); /* RuntimeStatus */
    s += kjoin_pb_put_bytes(status + s, sizeof(status) - s, 2, "\x0a\x04last\x12\x02{}", 10);
    s += kjoin_pb_put_bytes(status + s, sizeof(status) - s, 2, entry, e);
    assert_true(kjoin_cri_status_sandbox_image(status, s, out, sizeof(out)));
    assert_string_equal(out, "registry.k8s.io/pause:3.6");
    assert_true(kjoin_cri_config_sandbox_image(v2, strlen(v2), out, sizeof(out)));
    assert_string_equal(out, "registry.k8s.io/pause:3.10");
    const char *no[] = {"{}", "[]", "{\"sandboxImage\":\"\"}", "{\"sandboxImage\":7}", "{\"sandboxImage\":\"a b\"}",
                        "{\"sandboxImage\":\"a\\u0001\"}", "not json", "{\"sandboxImage\":\"x\"} trailing"};
    for (size_t i = 0; i < TU_LEN(no); i++)
        if (kjoin_cri_config_sandbox_image(no[i], strlen(no[i]), out, sizeof(out)) || *out)
            fail_msg("taken: %s", no[i]);
    assert_false(kjoin_cri_config_sandbox_image(v1, strlen(v1), out, 8)); /* does not fit */
    assert_false(kjoin_cri_status_sandbox_image(status, s - 1, out, sizeof(out))); /* cut */
    /* gRPC's frame */
    const unsigned char *inner;
    size_t inner_len;
    kjoin_err err;
    assert_int_equal(kjoin_cri_message((const unsigned char *)"\0\0\0\0\2hi", 7, &inner, &inner_len, &err), KJOIN_OK);
    assert_true(inner_len == 2 && !memcmp(inner, "hi", 2));
    assert_int_equal(kjoin_cri_message((const unsigned char *)"\1\0\0\0\2hi", 7, &inner, &inner_len, &err), KJOIN_E_OTHER);
    assert_int_equal(kjoin_cri_message((const unsigned char *)"\0\0\0\0\3hi", 7, &inner, &inner_len, &err), KJOIN_E_OTHER);
    assert_int_equal(kjoin_cri_message((const unsigned char *)"\0\0\0", 3, &inner, &inner_len, &err), KJOIN_E_OTHER);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_header_lines), cmocka_unit_test(test_no_answer),
                                       cmocka_unit_test(test_protobuf), cmocka_unit_test(test_answers)};
    return cmocka_run_group_tests_name("cri", tests, NULL, NULL);
}
