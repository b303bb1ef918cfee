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

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_header_lines), cmocka_unit_test(test_no_answer)};
    return cmocka_run_group_tests_name("cri", tests, NULL, NULL);
}
