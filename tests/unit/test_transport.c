/* The response body's two routes: collected under a cap, or (a watch's 200)
 * handed to a sink. A sunk body must leave the collected one empty: its
 * length is what the answer's release wipes. Plain HTTP (the kubelet's
 * healthz) only to this machine, never with credentials. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <kjoin/private/transport.h>

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

/* A server on 127.0.0.1 that answers one connection with a fixed reply. */
typedef struct one_answer {
    int fd;
    int port;
    const char *reply;
    pthread_t thread;
} one_answer;

static void *answer_once(void *arg)
{
    one_answer *a = arg;
    int c = accept(a->fd, NULL, NULL);
    if (c >= 0) {
        char req[2048];
        ssize_t n = recv(c, req, sizeof(req), 0);
        (void)n;
        ssize_t w = send(c, a->reply, strlen(a->reply), MSG_NOSIGNAL);
        (void)w;
        close(c);
    }
    return NULL;
}

static void serve_once(one_answer *a, const char *reply)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sa);
    a->reply = reply;
    a->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(a->fd >= 0);
    assert_int_equal(bind(a->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(a->fd, 1), 0);
    assert_int_equal(getsockname(a->fd, (struct sockaddr *)&sa, &sl), 0);
    a->port = ntohs(sa.sin_port);
    assert_int_equal(pthread_create(&a->thread, NULL, answer_once, a), 0);
}

static void serve_done(one_answer *a)
{
    shutdown(a->fd, SHUT_RDWR); /* an accept that got no connection ends */
    pthread_join(a->thread, NULL);
    close(a->fd);
}

static void test_plain_http_reaches_this_machine(void **state)
{
    (void)state;
    one_answer a;
    serve_once(&a, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/healthz", a.port);
    kjoin_http_request req = {.url = url, .tls = KJOIN_TLS_PLAIN_LOCAL, .timeout_ms = 5000};
    kjoin_http_response resp = {0};
    kjoin_err err;
    assert_int_equal(kjoin_http_send(&req, &resp, &err), KJOIN_OK);
    assert_int_equal(resp.status, 200);
    assert_string_equal(resp.body, "ok");
    kjoin_http_response_release(&resp);
    serve_done(&a);
}

static void test_plain_http_is_refused_beyond_its_bounds(void **state)
{
    (void)state;
    one_answer a;
    serve_once(&a, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
    char local[64], tls[64];
    snprintf(local, sizeof(local), "http://127.0.0.1:%d/healthz", a.port);
    snprintf(tls, sizeof(tls), "https://127.0.0.1:%d/healthz", a.port);
    kjoin_http_response resp = {0};
    kjoin_err err;
    /* another machine (TEST-NET-1: never this one) */
    kjoin_http_request far = {.url = "http://192.0.2.1:10248/healthz", .tls = KJOIN_TLS_PLAIN_LOCAL, .timeout_ms = 2000};
    assert_int_equal(kjoin_http_send(&far, &resp, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "plain HTTP is only for"));
    /* an https URL in the plain mode */
    kjoin_http_request scheme = {.url = tls, .tls = KJOIN_TLS_PLAIN_LOCAL, .timeout_ms = 2000};
    assert_int_equal(kjoin_http_send(&scheme, &resp, &err), KJOIN_E_USAGE);
    /* credentials never go in plain text, not even to this machine */
    kjoin_http_request token = {.url = local, .tls = KJOIN_TLS_PLAIN_LOCAL, .timeout_ms = 2000, .bearer_token = "abc"};
    assert_int_equal(kjoin_http_send(&token, &resp, &err), KJOIN_E_USAGE);
    /* nor redirects */
    kjoin_http_request redirects = {.url = local, .tls = KJOIN_TLS_PLAIN_LOCAL, .timeout_ms = 2000,
                                    .follow_redirects = true};
    assert_int_equal(kjoin_http_send(&redirects, &resp, &err), KJOIN_E_USAGE);
    /* and a TLS mode never speaks plain HTTP */
    kjoin_http_request system = {.url = local, .tls = KJOIN_TLS_SYSTEM, .timeout_ms = 2000};
    assert_int_not_equal(kjoin_http_send(&system, &resp, &err), KJOIN_OK);
    assert_int_equal(resp.status, 0);
    serve_done(&a); /* nothing above connected: the server is still waiting */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_sunk_body_leaves_the_collected_one_empty),
        cmocka_unit_test(test_a_collected_body_is_kept_under_its_cap),
        cmocka_unit_test(test_plain_http_reaches_this_machine),
        cmocka_unit_test(test_plain_http_is_refused_beyond_its_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
