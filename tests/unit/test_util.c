#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kjoin/private/util.h>

#include "testutil.h"

/* Go's time.ParseDuration cases (in milliseconds, rounded up), plus our
 * rule that a timeout must be positive. */
static void test_duration_parse(void **state)
{
    (void)state;
    struct {
        const char *in;
        int64_t ms;
    } good[] = {
        {"5s", 5000}, {"30s", 30000}, {"1478s", 1478000}, {"5.0s", 5000}, {"5.6s", 5600}, {"5.s", 5000},
        {".5s", 500}, {"1.004s", 1004}, {"100.00100s", 100001}, {"10ns", 1}, {"11us", 1},
        {"12\xc2\xb5s", 1}, {"12\xce\xbcs", 1}, {"13ms", 13}, {"15m", 900000}, {"16h", 57600000},
        {"3h30m", 12600000}, {"10.5s4m", 250500}, {"1h2m3s4ms5us6ns", 3723005},
        {"39h9m14.425s", 140954425}, {"52763797000ns", 52764}, {"300ms", 300}, {"5m", 300000},
        {"1h30m", 5400000}, {"0.5h", 1800000}, {"9223372036854775807ns", 9223372036855},
    };
    for (size_t i = 0; i < TU_LEN(good); i++) {
        int64_t ms = -1;
        kjoin_err err;
        if (kjoin_duration_parse(good[i].in, &ms, &err) != KJOIN_OK)
            fail_msg("\"%s\": %s", good[i].in, err.msg);
        if (ms != good[i].ms)
            fail_msg("\"%s\": %lld ms, want %lld", good[i].in, (long long)ms, (long long)good[i].ms);
    }
    const char *bad[] = {"", "0", "0s", "3", "-5s", "+5s", "-", "s", ".", ".s", "+.s", "1d", "5 s", "5s ",
                         "9223372036854775808ns", "3000000h", "1.5", "5sm", "ms"};
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        int64_t ms = 42;
        if (kjoin_duration_parse(bad[i], &ms, NULL) != KJOIN_E_USAGE)
            fail_msg("accepted \"%s\"", bad[i]);
        assert_int_equal(ms, 42);
    }
}

static void test_duration_format(void **state)
{
    (void)state;
    struct {
        int64_t ms;
        const char *out;
    } cases[] = {{300000, "5m0s"}, {1500, "1.5s"}, {300, "300ms"}, {5400000, "1h30m0s"},
                 {2000, "2s"}, {3723005, "1h2m3.005s"}, {0, "0ms"}};
    char buf[32];
    for (size_t i = 0; i < TU_LEN(cases); i++)
        assert_string_equal(kjoin_duration_format(cases[i].ms, buf, sizeof(buf)), cases[i].out);
}

static void test_base64(void **state)
{
    (void)state;
    const unsigned char bytes[] = {0xfb, 0xff, 0xbf, 0x00, 0x61};
    char *url = kjoin_b64_encode(bytes, sizeof(bytes), true);
    char *std = kjoin_b64_encode(bytes, sizeof(bytes), false);
    assert_string_equal(url, "-_-_AGE");
    assert_string_equal(std, "+/+/AGE=");
    unsigned char *back = NULL;
    size_t n = 0;
    assert_int_equal(kjoin_b64_decode(url, strlen(url), true, &back, &n, NULL), KJOIN_OK);
    assert_int_equal(n, sizeof(bytes));
    assert_memory_equal(back, bytes, n);
    free(back);
    assert_int_equal(kjoin_b64_decode("+/+/\nAGE=\n", 10, false, &back, &n, NULL), KJOIN_OK);
    assert_memory_equal(back, bytes, n);
    free(back);
    const char *bad_url[] = {"-_-_AGE=", "+/+/AGE", "-_-_AG", "-_-_AGF", "-_ -_AGE", "A"};
    for (size_t i = 0; i < TU_LEN(bad_url); i++)
        if (kjoin_b64_decode(bad_url[i], strlen(bad_url[i]), true, &back, &n, NULL) != KJOIN_E_TRUST)
            fail_msg("url decode accepted \"%s\"", bad_url[i]);
    const char *bad_std[] = {"!!!!", "-_-_AGE=", "AG=E"};
    for (size_t i = 0; i < TU_LEN(bad_std); i++)
        if (kjoin_b64_decode(bad_std[i], strlen(bad_std[i]), false, &back, &n, NULL) != KJOIN_E_TRUST)
            fail_msg("std decode accepted \"%s\"", bad_std[i]);
    free(url);
    free(std);
}

static void test_url_redact(void **state)
{
    (void)state;
    struct {
        const char *in, *out;
    } cases[] = {
        {"https://host:6443/path", "https://host:6443/path"},
        {"https://u:p@host/x.yaml", "https://host/x.yaml"},
        {"https://host/x?X-Amz-Signature=abc", "https://host/x?<redacted>"},
        {"https://u@host/x#frag", "https://host/x?<redacted>"},
        {"https://[::1]:6443?sig", "https://[::1]:6443?<redacted>"},
        {"https://host/a@b", "https://host/a@b"}, /* an @ in the path is no userinfo */
        {"/etc/kubernetes/discovery.conf", "/etc/kubernetes/discovery.conf"},
        {"-", "-"},
    };
    char out[256];
    for (size_t i = 0; i < TU_LEN(cases); i++)
        assert_string_equal(kjoin_url_redact(cases[i].in, out, sizeof(out)), cases[i].out);
}

static void test_atomic_write(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    char path[256], nested[256];
    snprintf(path, sizeof(path), "%s/out.conf", dir);
    snprintf(nested, sizeof(nested), "%s/a/b/out.conf", dir);
    kjoin_write_result wr;
    kjoin_err err;
    struct stat st;

    assert_int_equal(kjoin_file_write_atomic(path, "one", 3, false, &wr, NULL), KJOIN_OK);
    assert_int_equal(wr, KJOIN_WRITE_CREATED);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    ino_t ino = st.st_ino;

    chmod(path, 0644);
    assert_int_equal(kjoin_file_write_atomic(path, "one", 3, false, &wr, NULL), KJOIN_OK);
    assert_int_equal(wr, KJOIN_WRITE_UNCHANGED);
    stat(path, &st);
    assert_int_equal(st.st_ino, ino);
    assert_int_equal(st.st_mode & 0777, 0600);

    assert_int_equal(kjoin_file_write_atomic(path, "two", 3, false, &wr, &err), KJOIN_E_OUTPUT);
    assert_non_null(strstr(err.msg, "set `force` to replace it")); /* a field, never a flag */
    char *now = tu_read(path, NULL);
    assert_string_equal(now, "one");
    free(now);

    assert_int_equal(kjoin_file_write_atomic(path, "two", 3, true, &wr, NULL), KJOIN_OK);
    assert_int_equal(wr, KJOIN_WRITE_REPLACED);
    now = tu_read(path, NULL);
    assert_string_equal(now, "two");
    free(now);

    assert_int_equal(kjoin_file_write_atomic(nested, "x", 1, false, &wr, NULL), KJOIN_OK);
    assert_int_equal(kjoin_file_write_atomic(dir, "x", 1, true, &wr, &err), KJOIN_E_OUTPUT);
    assert_int_equal(kjoin_file_write_atomic("/proc/kjoin/x", "x", 1, false, &wr, NULL), KJOIN_E_OUTPUT);

    char cmd[300];
    snprintf(cmd, sizeof(cmd), "test -z \"$(find %s -name '*.kjoin-*')\"", dir);
    assert_int_equal(system(cmd), 0); /* no temporary file left */
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
}

static void test_read_cap(void **state)
{
    (void)state;
    char *dir = tu_tmpdir();
    char path[256];
    snprintf(path, sizeof(path), "%s/f", dir);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < 10000; i++)
        fputc('x', f);
    fclose(f);
    char *buf = NULL;
    size_t n = 0;
    kjoin_err err;
    assert_int_equal(kjoin_file_read(path, 9999, &buf, &n, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "larger than"));
    assert_int_equal(kjoin_file_read(path, 10000, &buf, &n, NULL), KJOIN_OK);
    assert_int_equal(n, 10000);
    free(buf);
    assert_int_equal(kjoin_file_read("/nonexistent", 10, &buf, &n, NULL), KJOIN_E_USAGE);
    unlink(path);
    rmdir(dir);
    free(dir);
}

/* Frees what it wipes; NULL is nothing to do. (ASan reports a leak, a
 * double free or a runaway recursion.) */
static void test_free_wiped(void **state)
{
    (void)state;
    char *secret = strdup("s3cret"), *other = strdup("token");
    assert_non_null(secret);
    assert_non_null(other);
    kjoin_free_wiped(secret, strlen(secret));
    kjoin_free_wiped_str(other);
    kjoin_free_wiped(NULL, 10);
    kjoin_free_wiped_str(NULL);
}

/* The one sanitiser: controls (C0, DEL, C1), broken UTF-8 and CR become
 * '?'; UTF-8 text stays; token secrets are masked wherever they stand. */
static void test_printable(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
        bool newlines;
    } cases[] = {
        {"plain text", "plain text", false},
        {"a\033[31mred\007", "a?[31mred?", false},
        {"line\r\nnext\tx", "line??next?x", false},
        {"line\nnext\tx", "line\nnext\tx", true},
        {"caf\xc3\xa9 \xe2\x9c\x93", "caf\xc3\xa9 \xe2\x9c\x93", false},
        {"c1 \xc2\x9b csi", "c1 ?? csi", false},
        {"raw \x9b csi", "raw ? csi", false},
        {"overlong \xc0\xaf", "overlong ??", false},
        {"cut \xe2\x9c", "cut ??", false},
        {"del \x7f", "del ?", false},
        {"open abcdef.0123456789abcdef: no", "open abcdef.****************: no", false},
        {"xabcdef.0123456789abcdef", "xabcdef.0123456789abcdef", false}, /* not a token: longer run */
        {"K10aa::server:pw9: x", "K10aa::**********: x", false},
        {"K10aa::pw", "K10aa::**", false},
        {NULL, "", false},
    };
    char out[128];
    for (size_t i = 0; i < TU_LEN(cases); i++)
        assert_string_equal(kjoin_printable(out, sizeof(out), cases[i].in, cases[i].newlines), cases[i].want);
    assert_string_equal(kjoin_printable(out, 4, "abcdef", false), "abc");
    assert_string_equal(kjoin_printable(out, 5, "ab\xc3\xa9", false), "ab\xc3\xa9");
    assert_string_equal(kjoin_printable(out, 4, "ab\xc3\xa9", false), "ab");
}


/* A certificate key's form (64 hex digits standing alone) is masked wherever
 * it is; a pin's hash, a longer or shorter run, or one inside a word is not. */
static void test_mask_keys(void **state)
{
    (void)state;
#define K64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define M64 "****************************************************************"
    static const struct {
        const char *in, *want;
    } cases[] = {
        {K64, M64},
        {"the certificate key file " K64 ": No such file", "the certificate key file " M64 ": No such file"},
        {"/run/kjoin/" K64, "/run/kjoin/" M64},
        {"\"" K64 "\"", "\"" M64 "\""},
        {"0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF", M64},
        {K64 " and " K64, M64 " and " M64},
        {"pin sha256:" K64, "pin sha256:" K64},
        {"root-sha256:" K64 ",sha256:" K64, "root-sha256:" K64 ",sha256:" K64},
        {K64 "0", K64 "0"},             /* 65 digits: no key */
        {K64 + 1, K64 + 1},             /* 63 */
        {"x" K64, "x" K64},             /* inside a word */
        {K64 "g", K64 "g"},
        {K64 "_", K64 "_"},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[300];
        snprintf(buf, sizeof(buf), "%s", cases[i].in);
        assert_string_equal(kjoin_mask_keys(buf), cases[i].want);
    }
    assert_null(kjoin_mask_keys(NULL));
    /* Every error message passes through it. */
    kjoin_err err;
    kjoin_err_set(&err, KJOIN_E_USAGE, "the certificate key file %s: %s", K64, "No such file");
    assert_string_equal(err.msg, "the certificate key file " M64 ": No such file");
#undef K64
#undef M64
}

/* SIGINT, SIGTERM and SIGHUP remove the scratch directory set (nested,
 * keys in it), never follow a link out of it, and still end the process by
 * the signal; once cleared, the directory stays. */
static void test_scratch_removed_on_signals(void **state)
{
    (void)state;
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGTERM};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        char dir[] = "/tmp/kjoin-scratch-test.XXXXXX", outside[] = "/tmp/kjoin-scratch-out.XXXXXX", path[200];
        bool cleared = i == 3;
        assert_non_null(mkdtemp(dir));
        assert_non_null(mkdtemp(outside));
        snprintf(path, sizeof(path), "%s/pki", dir);
        assert_int_equal(mkdir(path, 0700), 0);
        snprintf(path, sizeof(path), "%s/pki/etcd", dir);
        assert_int_equal(mkdir(path, 0700), 0);
        for (int k = 0; k < 300; k++) { /* more than one read of the directory */
            snprintf(path, sizeof(path), "%s/pki/etcd/key-%03d.key", dir, k);
            FILE *f = fopen(path, "w");
            assert_non_null(f);
            fclose(f);
        }
        snprintf(path, sizeof(path), "%s/kept", outside);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fclose(f);
        snprintf(path, sizeof(path), "%s/pki/link", dir);
        assert_int_equal(symlink(outside, path), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            /* (as a process started in the foreground: a background one of a
             * shell without job control starts with SIGINT ignored, and an
             * ignored signal stays ignored) */
            signal(SIGINT, SIG_DFL), signal(SIGTERM, SIG_DFL), signal(SIGHUP, SIG_DFL);
            kjoin_scratch_remove_on_signals();
            kjoin_scratch_set(dir);
            if (cleared)
                kjoin_scratch_clear();
            raise(sigs[i]);
            _exit(0);
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status));
        assert_int_equal(WTERMSIG(status), sigs[i]);
        struct stat st;
        assert_int_equal(lstat(dir, &st) == 0, cleared);
        snprintf(path, sizeof(path), "%s/kept", outside);
        assert_int_equal(lstat(path, &st), 0); /* the link was not followed */
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf %s %s", dir, outside);
        assert_int_equal(system(cmd), 0);
    }
    /* A signal the process was started ignoring (nohup) stays ignored: it
     * neither ends the process nor removes the directory. */
    char dir[] = "/tmp/kjoin-scratch-test.XXXXXX";
    assert_non_null(mkdtemp(dir));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGHUP, SIG_IGN);
        kjoin_scratch_remove_on_signals();
        kjoin_scratch_set(dir);
        raise(SIGHUP);
        _exit(7);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 7);
    assert_int_equal(rmdir(dir), 0);
}

static void test_utf8_printable(void **state)
{
    (void)state;
    const char *good[] = {"", "plain", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
    const char *bad[] = {"\xff", "a\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xc2\x9b", "\x1b[31m", "a\x7f", "tab\t",
                         "\xf4\x90\x80\x80"};
    for (size_t i = 0; i < TU_LEN(good); i++)
        assert_true(kjoin_utf8_printable(good[i]));
    for (size_t i = 0; i < TU_LEN(bad); i++)
        if (kjoin_utf8_printable(bad[i]))
            fail_msg("case %zu accepted", i);
}

static void test_shell_word(void **state)
{
    (void)state;
    const struct {
        const char *in, *out;
    } cases[] = {
        {"/usr/bin/kubelet", "/usr/bin/kubelet"}, {"--config=/a/b.yaml", "--config=/a/b.yaml"}, {"", "''"},
        {"a b", "'a b'"}, {"it's", "'it'\\''s'"}, {"$(id);`x`*", "'$(id);`x`*'"},
    };
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        char out[64] = "x ";
        assert_true(kjoin_shell_word(out, sizeof(out), cases[i].in));
        assert_string_equal(out + 2, cases[i].out);
    }
    char small[8] = "ab";
    assert_false(kjoin_shell_word(small, sizeof(small), "a b c d"));
    assert_string_equal(small, "ab");
}

static void test_dns_subdomain(void **state)
{
    (void)state;
    char max[256], over[256];
    memset(max, 'a', 253), max[253] = '\0';
    memset(over, 'a', 254), over[254] = '\0';
    const char *good[] = {"a", "node-1", "worker-1.example.com", "1.2.3", "a-b.c-d", max};
    for (size_t i = 0; i < TU_LEN(good); i++)
        if (!kjoin_dns_subdomain_valid(good[i]))
            fail_msg("\"%.30s\" refused", good[i]);
    const struct {
        const char *name, *why;
    } bad[] = {
        {"", "empty"},           {over, "254 characters"}, {"Node_1", "upper-case"}, {"node_1", "character 5"},
        {"a-.b", "ends with '-'"}, {"a..b", "empty label"}, {".a", "empty label"},  {"a.", "empty label"},
        {"-a", "starts with '-'"}, {"a.-b", "starts with '-'"}, {"a b", "character 2"}, {"n\xc3\xa9", "character 2"},
    };
    kjoin_err err;
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        if (kjoin_dns_subdomain_check(bad[i].name, &err) != KJOIN_E_USAGE || !strstr(err.msg, bad[i].why))
            fail_msg("\"%.30s\": %s", bad[i].name, err.msg);
        assert_false(kjoin_dns_subdomain_valid(bad[i].name));
    }
}

static void test_node_name_resolve(void **state)
{
    (void)state;
    kjoin_node_name n;
    kjoin_err err;
    /* kubeadm's rule: the host name, trimmed and lower-cased. */
    assert_int_equal(kjoin_node_name_resolve(NULL, " Worker-A\n", &n, &err), KJOIN_OK);
    assert_string_equal(n.name, "worker-a");
    assert_true(n.is_host_name);
    assert_int_equal(kjoin_node_name_resolve("WORKER-A", "worker-a", &n, &err), KJOIN_OK);
    assert_true(n.is_host_name);
    assert_int_equal(kjoin_node_name_resolve("other", "worker-a", &n, &err), KJOIN_OK);
    assert_string_equal(n.name, "other");
    assert_false(n.is_host_name);
    /* A valid given name rescues a host name that is not one. */
    assert_int_equal(kjoin_node_name_resolve("good", "Node_1", &n, &err), KJOIN_OK);
    assert_false(n.is_host_name);
    /* The host name that is not a node name says so, and what to set. */
    kjoin_node_name untouched = {.name = "keep"};
    const char *hosts[] = {"Node_1", "a-.b", "a..b", ""};
    for (size_t i = 0; i < TU_LEN(hosts); i++) {
        if (kjoin_node_name_resolve(NULL, hosts[i], &untouched, &err) != KJOIN_E_USAGE ||
            !strstr(err.msg, "the host name") || !strstr(err.msg, "set `node_name`"))
            fail_msg("host \"%s\": %s", hosts[i], err.msg);
        assert_string_equal(untouched.name, "keep");
    }
    char long_name[300];
    memset(long_name, 'a', 254), long_name[254] = '\0';
    assert_int_equal(kjoin_node_name_resolve(long_name, "h", &n, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "`node_name` has 254 characters"));
    memset(long_name, 'a', 299), long_name[299] = '\0';
    assert_int_equal(kjoin_node_name_resolve(NULL, long_name, &n, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "the host name has 299 characters"));
    /* This machine's own name is read when no host is given. */
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    if (kjoin_dns_subdomain_valid(host)) {
        assert_int_equal(kjoin_node_name_resolve(NULL, NULL, &n, &err), KJOIN_OK);
        assert_string_equal(n.name, host);
    }
}

/* This machine's own endpoints, which are never proxied. */
/* A server as a kubeconfig names one (a per-node load balancer's): https,
 * a host, at most a "/" after it; everything else refused, named. */
static void test_url_server_check(void **state)
{
    (void)state;
    kjoin_err e;
    const char *good[] = {"https://127.0.0.1:6443", "https://lb.example", "https://[fd00::1]:8443/", "HTTPS://LB:1"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        if (kjoin_url_server_check(good[i], "`kubelet_server`", &e))
            fail_msg("%s: %s", good[i], e.msg);
    struct {
        const char *url, *says;
    } bad[] = {
        {"http://127.0.0.1:6443", "is no https:// URL"},
        {"127.0.0.1:6443", "is no https:// URL"},
        {"https://", "is no https:// URL"},
        {"https://user:pw@lb:6443", "a user name or password"},
        {"https://lb:6443/api", "has a path, query or fragment"},
        {"https://lb:6443?x=1", "has a path, query or fragment"},
        {"https://lb:6443#f", "has a path, query or fragment"},
        {"https://lb:99999", "is no https:// URL"},
        {"", "is no https:// URL"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (kjoin_url_server_check(bad[i].url, "`kubelet_server`", &e) != KJOIN_E_USAGE)
            fail_msg("taken: %s", bad[i].url);
        if (!strstr(e.msg, bad[i].says) || !strstr(e.msg, "`kubelet_server`"))
            fail_msg("%s: %s", bad[i].url, e.msg);
    }
    char long_url[400];
    snprintf(long_url, sizeof(long_url), "https://%0330d", 0);
    assert_int_equal(kjoin_url_server_check(long_url, "x", &e), KJOIN_E_USAGE);
}

static void test_local_endpoints(void **state)
{
    (void)state;
    const char *local[] = {"https://127.0.0.1:6443", "https://127.9.9.9/x", "https://[::1]:2379/health",
                           "https://localhost:10257/healthz", "http://LOCALHOST"};
    const char *remote[] = {"https://192.0.2.1:6443", "https://cp.example:6443", "https://[2001:db8::1]:6443",
                            "127.0.0.1:6443", "", "https://", "https://[::1", "https://127.0.0.1.example/",
                            /* userinfo: the host reached is the part after the '@' */
                            "https://127.0.0.1:1@10.99.0.3:2379", "https://localhost@192.0.2.1/"};
    for (size_t i = 0; i < TU_LEN(local); i++)
        if (!kjoin_url_is_local(local[i]))
            fail_msg("not local: %s", local[i]);
    for (size_t i = 0; i < TU_LEN(remote); i++)
        if (kjoin_url_is_local(remote[i]))
            fail_msg("local: %s", remote[i]);
    assert_false(kjoin_url_is_local(NULL));
    assert_true(kjoin_is_local_address("127.0.0.1"));
    assert_false(kjoin_is_local_address("192.0.2.1"));
    assert_false(kjoin_is_local_address("x"));
    /* The host as libcurl parses it, or nothing; userinfo said. */
    char host[64];
    bool user = true;
    assert_true(kjoin_url_host("https://[fd00::3]:6443/x", host, sizeof(host), &user));
    assert_string_equal(host, "fd00::3");
    assert_false(user);
    assert_true(kjoin_url_host("https://cp.example:6443", host, sizeof(host), NULL));
    assert_string_equal(host, "cp.example");
    assert_true(kjoin_url_host("https://127.0.0.1:1@10.99.0.3:2379", host, sizeof(host), &user));
    assert_string_equal(host, "10.99.0.3");
    assert_true(user);
    assert_true(kjoin_url_host("https://user@cp.example/", host, sizeof(host), &user));
    assert_true(user);
    user = false;
    assert_true(kjoin_url_host("https://:secret@cp.example/", host, sizeof(host), &user));
    assert_true(user);
    assert_string_equal(host, "cp.example");
    assert_false(kjoin_url_host("https://[::1", host, sizeof(host), NULL));
    assert_string_equal(host, "");
    assert_false(kjoin_url_host(NULL, host, sizeof(host), NULL));
    assert_false(kjoin_url_host("https://a-very-long-host-name-that-does-not-fit.example/", host, 8, NULL));
}

/* A slip of the keyboard gets the name meant; anything farther, nothing. */
static void test_did_you_mean(void **state)
{
    (void)state;
    const char *names[] = {"join", "reset", "token", "version", "skip-phases", "preflight", "kubelet-start"};
    static const struct {
        const char *word, *want;
    } cases[] = {{"joni", "join"},          {"jion", "join"},       {"tokn", "token"},
                 {"tokne", "token"},        {"versoin", "version"}, {"skip-phase", "skip-phases"},
                 {"preflgiht", "preflight"}, {"kubelet-strat", "kubelet-start"}, {"rest", "reset"},
                 {"zzzz", NULL},            {"", NULL},             {"j", NULL},
                 {"node", NULL},            {"join", NULL},         {"kubelet", NULL}};
    for (size_t i = 0; i < TU_LEN(cases); i++) {
        const char *got = kjoin_did_you_mean(cases[i].word, strlen(cases[i].word), names, TU_LEN(names));
        if ((got == NULL) != (cases[i].want == NULL) || (got && strcmp(got, cases[i].want)))
            fail_msg("\"%s\": %s, not %s", cases[i].word, got ? got : "nothing", cases[i].want ? cases[i].want : "nothing");
    }
    char long_word[200];
    memset(long_word, 'a', sizeof(long_word));
    assert_null(kjoin_did_you_mean(long_word, sizeof(long_word), names, TU_LEN(names)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duration_parse), cmocka_unit_test(test_duration_format),
        cmocka_unit_test(test_base64),         cmocka_unit_test(test_url_redact),
        cmocka_unit_test(test_printable),      cmocka_unit_test(test_local_endpoints), cmocka_unit_test(test_url_server_check),
        cmocka_unit_test(test_atomic_write),
        cmocka_unit_test(test_read_cap),
        cmocka_unit_test(test_free_wiped),
        cmocka_unit_test(test_utf8_printable),
        cmocka_unit_test(test_mask_keys),
        cmocka_unit_test(test_scratch_removed_on_signals),
        cmocka_unit_test(test_shell_word),
        cmocka_unit_test(test_dns_subdomain),
        cmocka_unit_test(test_node_name_resolve),
        cmocka_unit_test(test_did_you_mean),
    };
    return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
