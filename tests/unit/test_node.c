/* pkg/node: the kubelet's version and configuration, the flags
 * file, the join record, the preflight checks and reset, on scratch
 * directories (the real node is in tests/e2e/t_node.sh). */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kjoin/private/controlplane.h>
#include <kjoin/private/node.h>
#include <kjoin/private/patch.h>

#include "testutil.h"
#include "../../pkg/node/internal.h"
#include "../../pkg/yamldoc/yamldoc.h"
#include <json-c/json.h>

/* What the scanner makes of text: its exits, whether it ended with one, and
 * a part of what it says. */
static void expect_words(const char *text, int exits, bool ends, const char *said)
{
    kjoin_node__words w;
    kjoin_node__kubelet_words(text, strlen(text), &w);
    assert_int_equal(w.exits, exits);
    assert_int_equal(w.ends_with_exit, ends);
    if (!strstr(w.said, said))
        fail_msg("\"%s\" does not say \"%s\"", w.said, said);
}

/* The kubelet's last error about one Pod: a pull or a start wins over a
 * mirror Pod refused; its klog header left out; printable, capped. */
/* A dual-stack node-ip: the default routes' interfaces (the lowest metric,
 * no rejecting or loopback route), both families only on a dual-stack
 * cluster with both addresses, the cluster's primary family first; a
 * given value is one address or one of each family. */
static void test_dual_stack_node_ip(void **state)
{
    (void)state;
    char ifname[64], out[130];
    const char *route = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
                        "eth1\t00000000\t0102000A\t0003\t0\t0\t200\t00000000\t0\t0\t0\n"
                        "eth0\t00000000\t0100000A\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
                        "eth2\t0000000A\t00000000\t0001\t0\t0\t0\t000000FF\t0\t0\t0\n";
    assert_true(kjoin_node__default_route_if(route, false, ifname, sizeof(ifname)));
    assert_string_equal(ifname, "eth0");
    assert_false(kjoin_node__default_route_if("Iface\tDestination\n", false, ifname, sizeof(ifname)));
    assert_false(kjoin_node__default_route_if("eth2\t0000000A\t00000000\t0001\t0\t0\t0\t000000FF\t0\t0\t0\n", false,
                                              ifname, sizeof(ifname)));
    const char *z = "00000000000000000000000000000000";
    char v6[1024];
    snprintf(v6, sizeof(v6),
             "%s 00 %s 00 %s ffffffff 00000001 00000000 00200200       lo\n"   /* unreachable: no way out */
             "20000000000000000000000000000000 03 %s 00 %s 00000400 00000001 00000000 00000001   kjoin0\n"
             "%s 00 %s 00 %s 00000400 00000001 00000000 00000001   kjoin0\n",
             z, z, z, z, z, z, z, z);
    assert_true(kjoin_node__default_route_if(v6, true, ifname, sizeof(ifname)));
    assert_string_equal(ifname, "kjoin0");
    snprintf(v6, sizeof(v6), "%s 00 %s 00 %s ffffffff 00000001 00000000 00200200       lo\n", z, z, z);
    assert_false(kjoin_node__default_route_if(v6, true, ifname, sizeof(ifname)));
    /* The cluster decides whether, and which family first. */
    assert_true(kjoin_node__dual_stack_cluster("10.96.0.0/12,fd00:10:96::/112", NULL));
    assert_false(kjoin_node__dual_stack_cluster("10.96.0.0/12,fd00:10:96::/112", "10.244.0.0/16"));
    assert_false(kjoin_node__dual_stack_cluster("10.96.0.0/12", ""));
    assert_true(kjoin_node__dual_stack_ip("10.96.0.0/12,fd00:10:96::/112", "10.244.0.0/16,fd00:10:244::/56", "192.0.2.2",
                                          "fd00::2", out, sizeof(out)));
    assert_string_equal(out, "192.0.2.2,fd00::2");
    assert_true(kjoin_node__dual_stack_ip("fd00:10:96::/112,10.96.0.0/12", "", "192.0.2.2", "fd00::2", out, sizeof(out)));
    assert_string_equal(out, "fd00::2,192.0.2.2");
    assert_false(kjoin_node__dual_stack_ip("10.96.0.0/12", "10.244.0.0/16,fd00:10:244::/56", "192.0.2.2", "fd00::2", out,
                                           sizeof(out)));
    assert_string_equal(out, "");
    assert_false(kjoin_node__dual_stack_ip("10.96.0.0/12,fd00:10:96::/112", "10.244.0.0/16", "192.0.2.2", "fd00::2", out,
                                           sizeof(out)));
    assert_false(kjoin_node__dual_stack_ip("10.96.0.0/12,fd00:10:96::/112", "", "192.0.2.2", "", out, sizeof(out)));
    assert_false(kjoin_node__dual_stack_ip("10.96.0.0/12,fd00:10:96::/112", "", "", "fd00::2", out, sizeof(out)));
    assert_false(kjoin_node__dual_stack_ip("", "", "192.0.2.2", "fd00::2", out, sizeof(out)));
    assert_false(kjoin_node__dual_stack_ip("10.96.0.0/12,10.97.0.0/16", "", "192.0.2.2", "fd00::2", out, sizeof(out)));
    assert_false(kjoin_node__dual_stack_ip("10.96.0.0/12,fd00:10:96::/112", "", "192.0.2.2", "fd00::2", out, 8));
    assert_string_equal(out, "");
    kjoin_err e;
    const char *good[] = {"192.0.2.2", "fd00::2", "192.0.2.2,fd00::2", "fd00::2,192.0.2.2"};
    for (size_t i = 0; i < TU_LEN(good); i++)
        if (kjoin_node__node_ip_check(good[i], &e))
            fail_msg("%s: %s", good[i], e.msg);
    const char *bad[] = {"", "x", "192.0.2.2,", "192.0.2.0/24", "192.0.2.2,192.0.2.3", "fd00::2,fd00::3",
                         "192.0.2.2,fd00::2,192.0.2.3", "300.1.1.1"};
    for (size_t i = 0; i < TU_LEN(bad); i++)
        if (kjoin_node__node_ip_check(bad[i], &e) != KJOIN_E_USAGE || !strstr(e.msg, "`node_ip`"))
            fail_msg("taken: \"%s\"", bad[i]);
}

/* A proxy's drop-ins: the URL's rule (its password never in a message),
 * NO_PROXY from the cluster and the node (each once, in order, the
 * operator's last), systemd's "%" doubled. */
static void test_proxy_dropins(void **state)
{
    (void)state;
    kjoin_err e;
    const char *good[] = {"http://proxy.example:3128", "https://10.0.0.9:8443/", "http://u:p%40ss@proxy:3128"};
    for (size_t i = 0; i < TU_LEN(good); i++)
        if (kjoin_node__proxy_check(good[i], &e))
            fail_msg("%s: %s", good[i], e.msg);
    const char *bad[] = {"proxy:3128", "socks5://proxy:1080", "http://", "http://proxy:3128/path", "http://proxy:3128?x",
                         "ftp://proxy"};
    for (size_t i = 0; i < TU_LEN(bad); i++)
        if (kjoin_node__proxy_check(bad[i], &e) != KJOIN_E_USAGE || !strstr(e.msg, "`proxy`"))
            fail_msg("taken: %s", bad[i]);
    assert_int_equal(kjoin_node__proxy_check("http://user:sekret@proxy:3128/x", &e), KJOIN_E_USAGE);
    assert_null(strstr(e.msg, "sekret"));
    char out[2048];
    const char *hosts[] = {"10.0.0.10", "lb.example", "", NULL, "w1", "192.0.2.2", "fd00::2", "10.0.0.10"};
    kjoin_node__no_proxy_in in = {.service_subnet = "10.96.0.0/12,fd00:10:96::/112", .pod_subnet = "10.244.0.0/16",
                                  .dns_domain = "corp.local", .hosts = hosts, .n_hosts = TU_LEN(hosts),
                                  .extra = " registry.corp , .corp,localhost"};
    assert_int_equal(kjoin_node__no_proxy(&in, out, sizeof(out), &e), KJOIN_OK);
    assert_string_equal(out, "localhost,127.0.0.1,::1,169.254.0.0/16,.svc,.corp.local,10.96.0.0/12,fd00:10:96::/112,10.244.0.0/16,"
                             "10.0.0.10,lb.example,w1,192.0.2.2,fd00::2,registry.corp,.corp");
    kjoin_node__no_proxy_in bare = {0};
    assert_int_equal(kjoin_node__no_proxy(&bare, out, sizeof(out), &e), KJOIN_OK);
    assert_string_equal(out, "localhost,127.0.0.1,::1,169.254.0.0/16,.svc,.cluster.local");
    assert_int_equal(kjoin_node__no_proxy(&in, out, 40, &e), KJOIN_E_USAGE);
    assert_string_equal(out, "");
    kjoin_node__no_proxy_in quoted = {.extra = "a\"b"};
    assert_int_equal(kjoin_node__no_proxy(&quoted, out, sizeof(out), &e), KJOIN_E_USAGE);
    char *text = NULL;
    assert_int_equal(kjoin_node__proxy_dropin("containerd", "http://u:p%40ss@proxy:3128", "localhost,.svc", &text, &e),
                     KJOIN_OK);
    assert_non_null(strstr(text, "\n[Service]\nEnvironment=\"HTTP_PROXY=http://u:p%%40ss@proxy:3128\"\n"
                                 "Environment=\"HTTPS_PROXY=http://u:p%%40ss@proxy:3128\"\n"
                                 "Environment=\"NO_PROXY=localhost,.svc\"\n"));
    assert_non_null(strstr(text, "containerd's requests go through it"));
    free(text);
}

/* What ctr import says it unpacked; an archive kjoin_join checks first. */
static void test_images_import_words(void **state)
{
    (void)state;
    char names[64];
    const char *out = "unpacking registry.k8s.io/pause:3.6 (sha256:aaaa)...done\n"
                      "unpacking example.test/cni:1 (sha256:bbbb)...done\nsomething else\nunpacking \n";
    assert_int_equal(kjoin_node__ctr_imported(out, names, sizeof(names)), 2); /* ("unpacking " names nothing) */
    assert_string_equal(names, "registry.k8s.io/pause:3.6, example.test/cni:1");
    assert_int_equal(kjoin_node__ctr_imported("", names, sizeof(names)), 0);
    assert_string_equal(names, "");
    assert_int_equal(kjoin_node__ctr_imported(out, names, 20), 2); /* names that do not fit are counted, not shown */
    assert_string_equal(names, "");
    char ctr[256];
    kjoin_err e;
    assert_int_equal(kjoin_node__images_check("images.tar", ctr, sizeof(ctr), &e), KJOIN_E_USAGE);
    assert_non_null(strstr(e.msg, "must be an absolute path"));
    assert_int_equal(kjoin_node__images_check("/nonexistent/images.tar", ctr, sizeof(ctr), &e), KJOIN_E_USAGE);
    assert_int_equal(kjoin_node__images_check("/tmp", ctr, sizeof(ctr), &e), KJOIN_E_USAGE); /* a directory */
    assert_non_null(strstr(e.msg, "is not a readable image archive"));
}

static void test_kubelet_error_about(void **state)
{
    (void)state;
    char out[400];
    const char journal[] =
        "I1207 10:00:00.000001 1 kubelet.go:1] \"Starting\" pod=\"kube-system/etcd-cp-2\"\n"
        "E1207 10:00:01.000001 1 pod_workers.go:1301] \"Error syncing pod, skipping\" err=\"failed to \\\"StartContainer\\\" "
        "for \\\"etcd\\\" with ErrImagePull: \\\"failed to pull image \\\\\\\"r.example/etcd:3.6.5-0\\\\\\\"\\\"\" "
        "pod=\"kube-system/etcd-cp-2\"\n"
        "E1207 10:00:02.000001 1 kubelet.go:2] \"Failed creating a mirror pod\" err=\"connection refused\" "
        "pod=\"kube-system/etcd-cp-2\"\n"
        "E1207 10:00:03.000001 1 pod_workers.go:1301] \"Error syncing pod, skipping\" err=\"other\" "
        "pod=\"kube-system/kube-apiserver-cp-2\"\n";
    assert_true(kjoin_node__kubelet_error_about(journal, strlen(journal), "kube-system/etcd-cp-2", out, sizeof(out)));
    assert_true(strncmp(out, "\"Error syncing pod, skipping\" err=\"failed to \\\"StartContainer\\\"", 60) == 0);
    assert_non_null(strstr(out, "r.example/etcd:3.6.5-0"));
    /* Only the mirror Pod's: that one. None about the Pod: none. */
    const char mirror[] = "E1207 10:00:02.000001 1 kubelet.go:2] \"Failed creating a mirror pod\" err=\"x\" "
                          "pod=\"kube-system/etcd-cp-2\"\n";
    assert_true(kjoin_node__kubelet_error_about(mirror, strlen(mirror), "kube-system/etcd-cp-2", out, sizeof(out)));
    assert_string_equal(out, "\"Failed creating a mirror pod\" err=\"x\" pod=\"kube-system/etcd-cp-2\"");
    assert_false(kjoin_node__kubelet_error_about(journal, strlen(journal), "kube-system/etcd-cp-3", out, sizeof(out)));
    assert_string_equal(out, "");
    assert_false(kjoin_node__kubelet_error_about(journal, strlen(journal), "", out, sizeof(out)));
    assert_false(kjoin_node__kubelet_error_about("", 0, "kube-system/etcd-cp-2", out, sizeof(out)));
    /* An info line about it is no error; hostile bytes and a token's secret never reach the log. */
    char hostile[2000];
    snprintf(hostile, sizeof(hostile), "E1207 x.go:1] \x1b[31m abcdef.0123456789abcdef %01200d pod=\"kube-system/etcd-cp-2\"",
             0);
    assert_true(kjoin_node__kubelet_error_about(hostile, strlen(hostile), "kube-system/etcd-cp-2", out, sizeof(out)));
    assert_non_null(strstr(out, "?[31m abcdef.****************"));
    assert_true(strlen(out) < sizeof(out));
}

/* The kubelet's words, as each release says them when a flag is wrong. */
static void test_kubelet_words(void **state)
{
    (void)state;
    kjoin_node__words w;
    expect_words("Flag --foo has been deprecated\n"
                 "I1126 19:00:00.000001 1 server.go:1] \"Starting\"\n"
                 "E1126 19:00:00.000002 1 run.go:72] \"command failed\" err=\"unknown flag: --no-such-kubelet-flag\"\n",
                 1, true, "the kubelet's last error: E1126 19:00:00.000002 1 run.go:72] \"command failed\" err=\"unknown flag: --no-such-kubelet-flag");
    expect_words("Error: unknown flag: --no-such-kubelet-flag\nUsage:\n  kubelet [flags]\n\n"
                 "F1126 19:00:00.000001 1 server.go:1] unknown flag: --no-such-kubelet-flag\r\n  \n"
                 "goroutine 1 [running]:\nk8s.io/klog/v2.stacks(0x1)\n\t/workspace/klog.go:1 +0x8d\n",
                 1, true, "last error: F1126");
    /* Started again after an exit: its log lines say it runs. */
    expect_words("F1126 a.go:1] x\ngoroutine 1 [running]:\nFlag --y has been deprecated\nI1126 b.go:1] \"Starting\"\n", 1,
                 false, "last error: F1126 a.go:1] x");
    /* Running on after an error: no exit; its last line when it said no error. */
    const char running[] = "E1126 x.go:1] \"failed\" err=\"dial\"\nI1126 y.go:2] \"Started\"\n";
    expect_words(running, 0, false, "err=\"dial\"");
    expect_words("I1126 ok\n", 0, false, "last log line: I1126 ok");
    /* Nothing, blanks, bytes a terminal would act on, and no final newline. */
    expect_words("", 0, false, "");
    expect_words(" \t\r\n\n", 0, false, "");
    const char hostile[] = "F1126 \x1b]0;owned\x07 \xff\xfe";
    kjoin_node__kubelet_words(hostile, sizeof(hostile) - 1, &w);
    assert_int_equal(w.exits, 1);
    assert_null(strchr(w.said, '\x1b'));
    assert_null(strchr(w.said, '\x07'));
    /* "F" alone or "Error:" inside a line is no exit. */
    expect_words("F12 not klog\nI1126 said \"Error: x\"\n", 0, false, "I1126");
    char big[2000];
    memset(big, 'E', sizeof(big));
    memcpy(big, "E1126 ", 6);
    kjoin_node__kubelet_words(big, sizeof(big), &w);
    assert_true(strlen(w.said) < sizeof(w.said));
}

/* A program's output past what is kept: its newest bytes are, so the last
 * line (a journal's newest) is there; a failing program is named. */
static void test_run_keeps_the_newest_output(void **state)
{
    (void)state;
    char *out = NULL;
    kjoin_err err;
    const char *argv[] = {"/bin/sh", "-c", "head -c 800000 /dev/zero | tr '\\0' x; echo; echo the-end", NULL};
    assert_int_equal(kjoin_node__run(argv, 20000, &out, &err), KJOIN_OK);
    size_t len = strlen(out);
    assert_true(len <= 512 * 1024 && len > 400 * 1024);
    assert_string_equal(out + len - 8, "the-end\n");
    free(out);
    const char *fails[] = {"/bin/sh", "-c", "echo why; exit 3", NULL};
    assert_int_not_equal(kjoin_node__run(fails, 20000, &out, &err), KJOIN_OK);
    free(out);
}

static void append_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A log without systemd: an earlier kubelet's exit is not this one's; an exit
 * ends the wait after the quiet time, three at once; a kubelet that runs on,
 * never. */
static void test_kubelet_log_gone(void **state)
{
    (void)state;
    char dir[] = "/tmp/kjoin-log-XXXXXX", path[64], why[200], link[80];
    kjoin_node__log lg;
    kjoin_node__words w;
    kjoin_err err;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/kubelet.log", dir);
    append_file(path, "E1126 a.go:1] \"command failed\" err=\"an earlier run\"\n");
    kjoin_node__log_start(&lg, path, 1000);
    assert_false(kjoin_node__log_gone(&lg, 100000, why, sizeof(why), &w)); /* the earlier run's exit */
    append_file(path, "I1126 b.go:1] \"Starting\"\n");
    assert_false(kjoin_node__log_gone(&lg, 100000, why, sizeof(why), &w));
    append_file(path, "E1126 c.go:1] \"command failed\" err=\"unknown flag: --bad\"\n");
    assert_false(kjoin_node__log_gone(&lg, 101000, why, sizeof(why), &w)); /* just exited: a supervisor may restart it */
    assert_false(kjoin_node__log_gone(&lg, 110000, why, sizeof(why), &w));
    assert_true(kjoin_node__log_gone(&lg, 116000, why, sizeof(why), &w));
    assert_non_null(strstr(why, "the kubelet exited"));
    assert_non_null(strstr(w.said, "--bad"));
    assert_null(strstr(w.said, "earlier run"));
    /* Restarted twice more: it keeps exiting, no quiet time needed. */
    append_file(path, "F1126 d.go:1] x\nF1126 e.go:1] y\n");
    assert_true(kjoin_node__log_gone(&lg, 116500, why, sizeof(why), &w));
    assert_non_null(strstr(why, "keeps exiting"));
    /* Truncated (rotated): what is there now is new. */
    FILE *f = fopen(path, "w");
    fclose(f);
    append_file(path, "I1126 f.go:1] \"Started\"\n");
    assert_false(kjoin_node__log_gone(&lg, 200000, why, sizeof(why), &w));
    kjoin_node__log_words(&lg, &w);
    assert_non_null(strstr(w.said, "Started"));
    /* No file yet, no path: never gone. */
    kjoin_node__log_start(&lg, "/nonexistent/kubelet.log", 0);
    assert_false(kjoin_node__log_gone(&lg, 100000, why, sizeof(why), &w));
    kjoin_node__log_start(&lg, NULL, 0);
    assert_false(kjoin_node__log_gone(&lg, 100000, why, sizeof(why), &w));
    /* The path checked before anything is written: absolute, no symlink, no directory. */
    assert_int_equal(kjoin_node__log_check(path, &err), KJOIN_OK);
    assert_int_equal(kjoin_node__log_check("/nonexistent/kubelet.log", &err), KJOIN_OK);
    assert_int_equal(kjoin_node__log_check("kubelet.log", &err), KJOIN_E_USAGE);
    assert_int_equal(kjoin_node__log_check(dir, &err), KJOIN_E_USAGE);
    snprintf(link, sizeof(link), "%s/link.log", dir);
    assert_int_equal(symlink(path, link), 0);
    assert_int_equal(kjoin_node__log_check(link, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "symbolic link"));
    /* A symlink put there later is not read through. */
    kjoin_node__log_start(&lg, link, 0);
    assert_int_equal(lg.from, 0);
    assert_false(kjoin_node__log_gone(&lg, 100000, why, sizeof(why), &w));
    unlink(link);
    unlink(path);
    rmdir(dir);
}

static void test_kubelet_version(void **state)
{
    (void)state;
    char v[64];
    int minor = 0;
    kjoin_err err;
    assert_int_equal(kjoin_kubelet_version_parse("Kubernetes v1.37.2\n", v, sizeof(v), &minor, &err), KJOIN_OK);
    assert_string_equal(v, "v1.37.2");
    assert_int_equal(minor, 37);
    assert_int_equal(kjoin_kubelet_version_parse("Kubernetes v1.20.5+really1.20.2", v, sizeof(v), &minor, &err), KJOIN_OK);
    assert_int_equal(minor, 20);
    assert_int_equal(kjoin_kubelet_version_parse("Kubernetes v1.30.0-\x1b[31mred", v, sizeof(v), &minor, &err), KJOIN_OK);
    assert_null(strchr(v, 0x1b)); /* a terminal escape from a fake kubelet never reaches the log */
    const char *bad[] = {"", "kubelet 1.30", "Kubernetes v2.0.0", "Kubernetes v1.x", NULL};
    for (size_t i = 0; i < TU_LEN(bad); i++)
        assert_int_equal(kjoin_kubelet_version_parse(bad[i], v, sizeof(v), &minor, &err), KJOIN_E_USAGE);
}

#define KC "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

static void test_kubelet_config(void **state)
{
    (void)state;
    kjoin_kubelet_config c;
    kjoin_err err;
    assert_int_equal(kjoin_kubelet_config_parse(KC, strlen(KC), &c, &err), KJOIN_OK);
    assert_true(c.fail_swap_on);
    assert_int_equal(c.healthz_port, 10248);
    assert_string_equal(c.healthz_address, "127.0.0.1");
    const char *set = KC "failSwapOn: false\nhealthzPort: 11248\nhealthzBindAddress: \"::1\"\nmaxPods: 42\n";
    assert_int_equal(kjoin_kubelet_config_parse(set, strlen(set), &c, &err), KJOIN_OK);
    assert_false(c.fail_swap_on);
    assert_int_equal(c.healthz_port, 11248);
    assert_string_equal(c.healthz_address, "::1");
    const char *any = KC "healthzBindAddress: 0.0.0.0\n"; /* listening everywhere: asked on loopback */
    assert_int_equal(kjoin_kubelet_config_parse(any, strlen(any), &c, &err), KJOIN_OK);
    assert_string_equal(c.healthz_address, "127.0.0.1");
    /* YAML 1.1's booleans, as the kubelet reads its configuration. */
    const char *no = KC "failSwapOn: no\n";
    assert_int_equal(kjoin_kubelet_config_parse(no, strlen(no), &c, &err), KJOIN_OK);
    assert_false(c.fail_swap_on);
    const struct {
        const char *yaml, *why;
    } bad[] = {
        {KC "failSwapOn: \"false\"\n", "failSwapOn at line"}, /* a string, which the kubelet refuses too */
        {"- a\n", "not a mapping"},
        {"apiVersion: v1\nkind: Pod\n", "not a kubelet.config.k8s.io/v1beta1 KubeletConfiguration"},
        {"kind: KubeletConfiguration\n", "not a kubelet.config.k8s.io/v1beta1"},
        {KC "failSwapOn: maybe\n", "failSwapOn"},
        {KC "healthzPort: 70000\n", "healthzPort"},
        {KC "healthzPort: [1]\n", "healthzPort"},
        {KC "healthzBindAddress: evil.example\n", "healthzBindAddress"},
        {KC "kind: again\n", "duplicate"},
        {"a: [\n", "not YAML"},
    };
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        if (kjoin_kubelet_config_parse(bad[i].yaml, strlen(bad[i].yaml), &c, &err) != KJOIN_E_OTHER)
            fail_msg("case %zu accepted", i);
        if (!strstr(err.msg, bad[i].why))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, bad[i].why);
    }
}

static void test_cluster_configuration(void **state)
{
    (void)state;
    kjoin_cluster_configuration c;
    kjoin_err err;
    const char *ok = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.37.2\n";
    assert_int_equal(kjoin_cluster_configuration_parse(ok, strlen(ok), &c, &err), KJOIN_OK);
    assert_string_equal(c.version, "v1.37.2");
    assert_int_equal(c.minor, 37);
    assert_int_equal(c.node_local_cri_socket, -1);
    const char *none = "apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\n";
    assert_int_equal(kjoin_cluster_configuration_parse(none, strlen(none), &c, &err), KJOIN_OK);
    assert_string_equal(c.version, "");
    assert_int_equal(c.minor, 0);
    const char *off = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.34.1\n"
                      "featureGates: {NodeLocalCRISocket: false, EtcdLearnerMode: true, ControlPlaneKubeletLocalMode: false}\n";
    assert_int_equal(kjoin_cluster_configuration_parse(off, strlen(off), &c, &err), KJOIN_OK);
    assert_int_equal(c.node_local_cri_socket, 0);
    assert_int_equal(c.etcd_learner_mode, 1);
    assert_int_equal(c.kubelet_local_mode, 0);
    const char *yes = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nfeatureGates: {NodeLocalCRISocket: On}\n";
    assert_int_equal(kjoin_cluster_configuration_parse(yes, strlen(yes), &c, &err), KJOIN_OK);
    assert_int_equal(c.node_local_cri_socket, 1);
    assert_int_equal(c.etcd_learner_mode, -1);
    assert_int_equal(c.kubelet_local_mode, -1);
    const char *bad[] = {"- x\n", "apiVersion: v1\nkind: ClusterConfiguration\n",
                         "apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\n",
                         "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: latest\n",
                         "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: \"v1.3\\e[1m\"\n",
                         "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nfeatureGates: [a]\n",
                         "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nfeatureGates: {NodeLocalCRISocket: maybe}\n",
                         "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nfeatureGates: {EtcdLearnerMode: 2}\n",
                         "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n"
                         "featureGates: {ControlPlaneKubeletLocalMode: [true]}\n",
                         "a: ["};
    for (size_t i = 0; i < TU_LEN(bad); i++)
        if (kjoin_cluster_configuration_parse(bad[i], strlen(bad[i]), &c, &err) != KJOIN_E_OTHER)
            fail_msg("case %zu accepted", i);
}

/* The fields a control-plane node's certificates are made from. */
static void test_cluster_configuration_control_plane(void **state)
{
    (void)state;
    kjoin_cluster_configuration c;
    kjoin_err err;
    const char *full = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.37.2\n"
                       "controlPlaneEndpoint: lb.example.com:6443\n"
                       "networking: {serviceSubnet: \"10.100.0.0/16,fd00::/108\", dnsDomain: example.internal}\n"
                       "apiServer: {certSANs: [lb.example.com, 192.0.2.10, \"*.example.com\", \"Not A Name\", UPPER.example]}\n"
                       "etcd: {local: {serverCertSANs: [etcd.example.com], peerCertSANs: [\"::2\"]}}\n"
                       "encryptionAlgorithm: ECDSA-P384\ncertificateValidityPeriod: 1h30m0s\n";
    assert_int_equal(kjoin_cluster_configuration_parse(full, strlen(full), &c, &err), KJOIN_OK);
    assert_string_equal(c.service_subnet, "10.100.0.0/16,fd00::/108");
    assert_string_equal(c.dns_domain, "example.internal");
    assert_string_equal(c.control_plane_endpoint, "lb.example.com:6443");
    assert_string_equal(c.control_plane_host, "lb.example.com");
    assert_int_equal(c.control_plane_port, 6443);
    assert_int_equal(c.apiserver_sans.n, 3); /* as kubeadm: what is no IP or lower-case DNS name is left out */
    assert_int_equal(c.apiserver_sans.skipped, 2);
    assert_string_equal(c.apiserver_sans.name[2], "*.example.com");
    assert_string_equal(c.etcd_server_sans.name[0], "etcd.example.com");
    assert_string_equal(c.etcd_peer_sans.name[0], "::2");
    assert_false(c.external_etcd);
    assert_string_equal(c.encryption_algorithm, "ECDSA-P384");
    assert_int_equal(c.certificate_validity_s, 5400);
    const char *ext = "apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\n"
                      "etcd: {external: {endpoints: [\"https://192.0.2.30:2379\"]}}\ncontrolPlaneEndpoint: \"[fd00::1]:6443\"\n";
    assert_int_equal(kjoin_cluster_configuration_parse(ext, strlen(ext), &c, &err), KJOIN_OK);
    assert_true(c.external_etcd);
    assert_string_equal(c.control_plane_host, "fd00::1");
    const char *head = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n";
    static const struct {
        const char *yaml, *why;
    } bad[] = {
        {"networking: {serviceSubnet: 10.96.0.0}\n", "serviceSubnet"},
        {"networking: {serviceSubnet: 10.96.0.0/33}\n", "serviceSubnet"},
        {"networking: {serviceSubnet: \"10.96.0.0/12,\"}\n", "serviceSubnet"},
        {"networking: {dnsDomain: \"Cluster.Local\"}\n", "dnsDomain"},
        {"networking: {dnsDomain: [a]}\n", "dnsDomain"},
        {"controlPlaneEndpoint: \"lb.example.com:99999\"\n", "controlPlaneEndpoint"},
        {"controlPlaneEndpoint: \"lb example\"\n", "controlPlaneEndpoint"},
        {"controlPlaneEndpoint: \"lb.example.com:\"\n", "controlPlaneEndpoint"},
        {"apiServer: {certSANs: lb.example.com}\n", "certSANs"},
        {"apiServer: {certSANs: [[a]]}\n", "certSANs"},
        {"encryptionAlgorithm: DSA-1024\n", "encryptionAlgorithm"},
        {"certificateValidityPeriod: 1.5h\n", "certificateValidityPeriod"},
        {"certificateValidityPeriod: 0s\n", "certificateValidityPeriod"},
        {"certificateValidityPeriod: 10ms\n", "certificateValidityPeriod"},
        {"certificateValidityPeriod: \"-1h\"\n", "certificateValidityPeriod"},
        {"certificateValidityPeriod: 99999999999999h\n", "certificateValidityPeriod"},
    };
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        char yaml[512];
        snprintf(yaml, sizeof(yaml), "%s%s", head, bad[i].yaml);
        if (kjoin_cluster_configuration_parse(yaml, strlen(yaml), &c, &err) != KJOIN_E_OTHER)
            fail_msg("case %zu accepted", i);
        if (!strstr(err.msg, bad[i].why))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, bad[i].why);
    }
    /* More names than a certificate takes: refused, not cut short. */
    char many[4096];
    int n = snprintf(many, sizeof(many), "%sapiServer:\n  certSANs:\n", head);
    for (int i = 0; i <= KJOIN_SANS_MAX; i++)
        n += snprintf(many + n, sizeof(many) - (size_t)n, "  - n%d.example\n", i);
    assert_int_equal(kjoin_cluster_configuration_parse(many, strlen(many), &c, &err), KJOIN_E_OTHER);
    assert_true(kjoin_dns1123_subdomain("a-b.c", false));
    assert_false(kjoin_dns1123_subdomain("*.c", false));
    assert_true(kjoin_dns1123_subdomain("*.c", true));
    assert_false(kjoin_dns1123_subdomain("a..c", true));
    assert_false(kjoin_dns1123_subdomain("-a", true));
}

/* Where that release's kubeadm puts the runtime: the gate's history. */
static void test_instance_config_by_release(void **state)
{
    (void)state;
    static const struct {
        int minor, gate;
        bool instance;
    } cases[] = {{20, -1, false}, {31, 1, false}, {32, -1, false}, {32, 1, true}, {33, 1, true}, {33, -1, false},
                 {34, -1, true},  {34, 0, false}, {35, 0, false},  {35, -1, true}, {36, 0, false}, {36, -1, true},
                 {37, 0, true}}; /* 1.36: GA, and a gate set off still read (kubeadm 1.36.3 proves it) */
    for (size_t i = 0; i < TU_LEN(cases); i++)
        if (kjoin_kubeadm_instance_config(cases[i].minor, cases[i].gate) != cases[i].instance)
            fail_msg("1.%d with the gate %d", cases[i].minor, cases[i].gate);
    char *text = NULL;
    kjoin_err err;
    assert_int_equal(kjoin_kubelet_instance_config("unix:///run/containerd/containerd.sock", &text, &err), KJOIN_OK);
    assert_string_equal(text, "containerRuntimeEndpoint: \"unix:///run/containerd/containerd.sock\"\n");
    free(text);
    assert_int_equal(kjoin_kubelet_instance_config("unix:///run/a\"b", &text, &err), KJOIN_E_USAGE);
    assert_null(text);
}

/* config.yaml: the cluster's text as it is without a runtime or patches;
 * otherwise parsed, patched, the runtime set last, and equal once parsed. */
static void test_config_render(void **state)
{
    (void)state;
    const char *cm = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n# a comment\n"
                     "maxPods: 42\nfailSwapOn: no\nclusterDNS: [10.96.0.10]\nstaticPodPath: \"0x1\"\n";
    char *out = NULL;
    kjoin_err err;
    assert_int_equal(kjoin_kubelet_config_render(cm, strlen(cm), NULL, NULL, &out, &err), KJOIN_OK);
    assert_string_equal(out, cm);
    free(out);
    kjoin_patchset set = {.n = 1};
    set.items[0] = (kjoin_patch){.type = KJOIN_PATCH_MERGE, .target = "kubeletconfiguration", .patch = json_tokener_parse("{\"maxPods\":30,\"containerRuntimeEndpoint\":\"x\"}"), .file = "kubeletconfiguration+merge.yaml"};
    assert_int_equal(kjoin_kubelet_config_render(cm, strlen(cm), &set, "unix:///run/crio/crio.sock", &out, &err),
                     KJOIN_OK);
    assert_null(strstr(out, "---"));
    kjoin_kubelet_config k;
    assert_int_equal(kjoin_kubelet_config_parse(out, strlen(out), &k, &err), KJOIN_OK);
    assert_false(k.fail_swap_on); /* YAML 1.1's "no", as the kubelet reads it */
    assert_non_null(strstr(out, "maxPods: 30\n"));
    assert_non_null(strstr(out, "containerRuntimeEndpoint: \"unix:///run/crio/crio.sock\"\n"));
    assert_non_null(strstr(out, "staticPodPath: \"0x1\"\n")); /* a string that looks like a number stays one */
    free(out);
    kjoin_patchset_release(&set);
    set = (kjoin_patchset){.n = 1};
    set.items[0] = (kjoin_patch){.type = KJOIN_PATCH_JSON, .target = "kubeletconfiguration", .patch = json_tokener_parse("[{\"op\":\"remove\",\"path\":\"/nope\"}]"), .file = "kubeletconfiguration+json.yaml"};
    assert_int_equal(kjoin_kubelet_config_render(cm, strlen(cm), &set, NULL, &out, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "kubeletconfiguration+json.yaml"));
    assert_null(out);
    kjoin_patchset_release(&set);
    /* The server's document that is no mapping (libFuzzer found the assertion). */
    const char *not_maps[] = {"- a\n- b\n", "just a scalar\n", "~\n"};
    for (size_t i = 0; i < TU_LEN(not_maps); i++) {
        assert_int_equal(kjoin_kubelet_config_render(not_maps[i], strlen(not_maps[i]), NULL, "unix:///s", &out, &err),
                         KJOIN_E_OTHER);
        assert_null(out);
    }
}

static void test_flags_env(void **state)
{
    (void)state;
    char *env = NULL;
    kjoin_err err;
    const char *taints[] = {"a=b:NoSchedule", "c:NoExecute"};
    const char *extra[] = {"node-labels=x=y", "hostname-override=chosen", "v=2"};
    kjoin_node_spec spec = {.taints = taints, .n_taints = 2, .extra_args = extra, .n_extra_args = 3};
    kjoin_node_name name = {.name = "worker-1", .is_host_name = false};
    assert_int_equal(kjoin_kubelet_flags_env(&spec, &name, "unix:///run/containerd/containerd.sock", 37, 37, NULL, NULL, &env, &err),
                     KJOIN_OK);
    /* Sorted by name, extra arguments overriding kjoin's own. */
    assert_string_equal(env, "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=unix:///run/containerd/containerd.sock "
                             "--hostname-override=chosen --node-labels=x=y --register-with-taints=a=b:NoSchedule,"
                             "c:NoExecute --v=2\"\n");
    free(env);
    /* The pause image kubeadm 1.21 to 1.34 pins, in its place by name. */
    assert_int_equal(kjoin_kubelet_flags_env(&spec, &name, NULL, 34, 34, "registry.k8s.io/pause:3.10.1", NULL, &env, &err), KJOIN_OK);
    assert_string_equal(env, "KUBELET_KUBEADM_ARGS=\"--hostname-override=chosen --node-labels=x=y "
                             "--pod-infra-container-image=registry.k8s.io/pause:3.10.1 --register-with-taints=a=b:NoSchedule,"
                             "c:NoExecute --v=2\"\n");
    free(env);
    /* The node-ip found for a dual-stack cluster, by name; the operator's (checked) instead of it. */
    kjoin_node_spec ip = {0};
    assert_int_equal(kjoin_kubelet_flags_env(&ip, &name, NULL, 37, 37, NULL, "192.0.2.2,fd00::2", &env, &err), KJOIN_OK);
    assert_string_equal(env, "KUBELET_KUBEADM_ARGS=\"--hostname-override=worker-1 --node-ip=192.0.2.2,fd00::2\"\n");
    free(env);
    ip.node_ip = "fd00::9";
    assert_int_equal(kjoin_kubelet_flags_env(&ip, &name, NULL, 37, 37, NULL, NULL, &env, &err), KJOIN_OK);
    assert_string_equal(env, "KUBELET_KUBEADM_ARGS=\"--hostname-override=worker-1 --node-ip=fd00::9\"\n");
    free(env);
    env = NULL;
    ip.node_ip = "fd00::9,fd00::8";
    assert_int_equal(kjoin_kubelet_flags_env(&ip, &name, NULL, 37, 37, NULL, NULL, &env, &err), KJOIN_E_USAGE);
    assert_null(env);
    free(env);
    /* The host's own name needs no override; kubeadm to 1.25 tells the kubelet the runtime is remote
     * (1.24 and 1.25 whatever the kubelet's release), unless the kubelet is one that refuses the flag
     * (1.27 on), or not known. */
    kjoin_node_spec plain = {0};
    kjoin_node_name host = {.name = "host-a", .is_host_name = true};
    const struct {
        int kubeadm, kubelet;
        bool remote;
    } runtime[] = {{20, 20, true}, {23, 23, true}, {24, 24, true}, {25, 25, true}, {25, 26, true},
                   {24, 27, false}, {25, 0, false}, {26, 26, false}, {27, 26, false}, {37, 37, false}};
    for (size_t i = 0; i < TU_LEN(runtime); i++) {
        assert_int_equal(kjoin_kubelet_flags_env(&plain, &host, "unix:///s", runtime[i].kubeadm, runtime[i].kubelet,
                                                 NULL, NULL, &env, &err), KJOIN_OK);
        if (strcmp(env, runtime[i].remote ? "KUBELET_KUBEADM_ARGS=\"--container-runtime=remote "
                                            "--container-runtime-endpoint=unix:///s\"\n"
                                          : "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=unix:///s\"\n"))
            fail_msg("kubeadm 1.%d, kubelet 1.%d: %s", runtime[i].kubeadm, runtime[i].kubelet, env);
        free(env);
    }
    const char *bad_values[] = {"a=b c", "a=\"x\"", "a=$(id)", "a=`id`", "a=x\\y", "--a=b", "=b", "a b=c", "a=x\ny",
                                "a=\xff", "a=x\xc3", "a=\xc0\xaf", "a=\xed\xa0\x80", "a=\xc2\x9b"};
    for (size_t i = 0; i < TU_LEN(bad_values); i++) {
        kjoin_node_spec b = {.extra_args = &bad_values[i], .n_extra_args = 1};
        if (kjoin_kubelet_flags_env(&b, &host, "unix:///s", 37, 37, NULL, NULL, &env, &err) != KJOIN_E_USAGE)
            fail_msg("\"%s\" accepted", bad_values[i]);
        assert_null(env);
    }
    /* The runtime's socket goes through the same rule. */
    kjoin_node_spec none = {0};
    assert_int_equal(kjoin_kubelet_flags_env(&none, &host, "unix:///run/c\xff.sock", 37, 37, NULL, NULL, &env, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "container-runtime-endpoint"));
    assert_int_equal(kjoin_kubelet_flags_env(&none, &host, "unix:///run/caf\xc3\xa9.sock", 37, 37, NULL, NULL, &env, &err), KJOIN_OK);
    free(env);
}

static char *record(const char *files, const char *dirs, const char *before)
{
    char *s = malloc(8192);
    snprintf(s, 8192,
             "{\"kind\":\"KjoinJoinRecord\",\"joinID\":\"j\",\"server\":\"https://127.0.0.1:6443\",\"nodeName\":\"n\","
             "\"files\":[%s],\"createdDirs\":[%s],\"kubeletDirBefore\":[%s]}",
             files, dirs, before);
    return s;
}

#define SUM "\"sha256\":\"0000000000000000000000000000000000000000000000000000000000000000\""

static void test_state_parse(void **state)
{
    (void)state;
    kjoin_node_paths paths = {.kubernetes_dir = "/etc/kubernetes", .kubelet_dir = "/var/lib/kubelet",
                              .ca_cert_path = "/opt/ca/ca.crt"};
    kjoin_node_state *st = calloc(1, sizeof(*st));
    kjoin_err err;
    char *ok = record("{\"path\":\"/var/lib/kubelet/config.yaml\"," SUM "},{\"path\":\"/opt/ca/ca.crt\"," SUM "}",
                      "\"/etc/kubernetes\",\"/opt/ca\"", "\"pods\"");
    assert_int_equal(kjoin_node_state_parse(ok, strlen(ok), &paths, st, &err), KJOIN_OK);
    assert_int_equal(st->written.n_files, 2);
    assert_string_equal(st->written.files[1].path, "/opt/ca/ca.crt");
    assert_int_equal(st->written.n_dirs, 2);
    assert_string_equal(st->kubelet_entries[0], "pods");
    free(ok);
    /* Outputs the join was told to put elsewhere, and the directories made on the way to them. */
    char elsewhere[1200];
    snprintf(elsewhere, sizeof(elsewhere),
             "{\"kind\":\"KjoinJoinRecord\",\"joinID\":\"j\",\"server\":\"s\",\"nodeName\":\"n\","
             "\"outputs\":{\"bootstrapKubeconfig\":\"/srv/boot/b.conf\",\"caCert\":\"/srv/ca/ca.crt\"},"
             "\"files\":[{\"path\":\"/srv/boot/b.conf\"," SUM "},{\"path\":\"/srv/ca/ca.crt\"," SUM "}],"
             "\"createdDirs\":[\"/srv\",\"/srv/boot\",\"/srv/ca\",\"/etc/kubernetes\"],\"kubeletDirBefore\":[]}");
    assert_int_equal(kjoin_node_state_parse(elsewhere, strlen(elsewhere), &paths, st, &err), KJOIN_OK);
    assert_int_equal(st->written.n_files, 2);
    assert_int_equal(st->written.n_dirs, 4);
    const char *forged[] = {
        /* an output outside that is not named */
        "\"outputs\":{\"caCert\":\"/srv/ca/ca.crt\"},\"files\":[{\"path\":\"/srv/boot/b.conf\"," SUM "}],\"createdDirs\":[]",
        /* a directory not on the way to a named output */
        "\"outputs\":{\"caCert\":\"/srv/ca/ca.crt\"},\"files\":[],\"createdDirs\":[\"/srv/other\"]",
        "\"outputs\":{\"caCert\":\"/srv/ca/ca.crt\"},\"files\":[],\"createdDirs\":[\"/srv/ca/ca.crt\"]",
        "\"outputs\":{\"caCert\":\"/srv/../etc/ca.crt\"},\"files\":[],\"createdDirs\":[]",
        "\"outputs\":[\"/srv/ca/ca.crt\"],\"files\":[],\"createdDirs\":[]",
    };
    for (size_t i = 0; i < TU_LEN(forged); i++) {
        snprintf(elsewhere, sizeof(elsewhere),
                 "{\"kind\":\"KjoinJoinRecord\",\"joinID\":\"j\",\"server\":\"s\",\"nodeName\":\"n\",%s,"
                 "\"kubeletDirBefore\":[]}", forged[i]);
        if (kjoin_node_state_parse(elsewhere, strlen(elsewhere), &paths, st, &err) != KJOIN_E_USAGE)
            fail_msg("forged case %zu accepted", i);
    }
    char *bad[] = {
        record("{\"path\":\"/etc/shadow\"," SUM "}", "", ""),
        record("{\"path\":\"/etc/kubernetes/../shadow\"," SUM "}", "", ""),
        record("{\"path\":\"/etc/kubernetes//x\"," SUM "}", "", ""),
        record("{\"path\":\"/etc/kubernetesX/x\"," SUM "}", "", ""),
        record("{\"path\":\"/etc/kubernetes/x\",\"sha256\":\"zz\"}", "", ""),
        record("", "\"/etc\"", ""),
        record("", "\"/etc/systemd/system\"", ""), /* a proxy's drop-in directory, not the units' */
        record("{\"path\":\"/etc/systemd/system/kubelet.service.d/10-kubeadm.conf\"," SUM "}", "", ""),
        record("", "", "\"../x\""),
        record("", "", "\"a/b\""),
        record("", "", "7"),
        strdup("{\"kind\":\"Other\"}"),
        strdup("[]"),
        strdup("{\"kind\":\"KjoinJoinRecord\"} trailing"),
    };
    for (size_t i = 0; i < TU_LEN(bad); i++) {
        if (kjoin_node_state_parse(bad[i], strlen(bad[i]), &paths, st, &err) != KJOIN_E_USAGE)
            fail_msg("case %zu accepted: %s", i, bad[i]);
        assert_int_equal(st->written.n_files, 0);
        free(bad[i]);
    }
    free(st);
}

static bool has(const kjoin_preflight_report *r, const char *name, bool error, bool ignored)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->items[i].name, name) && r->items[i].error == error && r->items[i].ignored == ignored)
            return true;
    return false;
}

/* A port nothing listens on, and one something does (fd kept open). */
static int listener(int *port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(fd, 1), 0);
    getsockname(fd, (struct sockaddr *)&sa, &len);
    *port = ntohs(sa.sin_port);
    return fd;
}

/* A port nothing listens on: bound and let go (the next bind may take it
 * again, which is all the checks ask). */
static int free_port(void)
{
    int port, fd = listener(&port);
    close(fd);
    return port;
}

/* kubeadm's control-plane preflight with a context as the join builds it. */
static kjoin_code cp_preflight(const kjoin_node_spec *s, const kjoin_cluster_configuration *c, const char *addr,
                               int port, const char *const *images, size_t n, kjoin_preflight_report *r, kjoin_err *err)
{
    static const kjoin_join_context join = {.join_id = "j"};
    kjoin_cp_context cx;
    kjoin_code rc = kjoin_cp_context_init(&cx, c, s->paths.kubernetes_dir ? s->paths.kubernetes_dir
                                                                          : KJOIN_NODE_KUBERNETES_DIR, err);
    if (rc)
        return rc;
    cx.join = &join;
    snprintf(cx.advertise_address, sizeof(cx.advertise_address), "%s", addr);
    cx.bind_port = port;
    return kjoin_preflight_control_plane(s, &cx, images, n, r, err);
}

static bool has_finding(const kjoin_preflight_report *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->items[i].name, name))
            return true;
    return false;
}

/* A control-plane node's checks: every one fails on a machine set up to
 * fail it, and none on one that is ready. */
/* reset stops the Pods the kubelet started through the runtime's client:
 * the runtime the join's kubelet used is read from its files; a stand-in
 * ctr (containerd's) on PATH lists two running tasks of Pods, each killed,
 * then none, and one running task that is no Pod's, never killed; with no
 * client, or no socket of the join's, it says so. */
static void test_reset_pods(void **state)
{
    (void)state;
    char *d = tu_tmpdir(), bin[300], script[1200], kubelet[300], path[400], sock[512], *old = NULL;
    kjoin_err err;
    size_t n = 99;
    snprintf(kubelet, sizeof(kubelet), "%s/kubelet", d);
    assert_int_equal(mkdir(kubelet, 0700), 0);
    kjoin_node_paths paths = {.kubernetes_dir = d, .kubelet_dir = kubelet};
    kjoin_reset_runtime(&paths, sock, sizeof(sock));
    assert_string_equal(sock, ""); /* no files: no runtime known */
    tu_write(kubelet, "kubeadm-flags.env", "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=unix:///run/x/containerd.sock\"\n");
    kjoin_reset_runtime(&paths, sock, sizeof(sock));
    assert_string_equal(sock, "unix:///run/x/containerd.sock");
    tu_write(kubelet, "instance-config.yaml", "containerRuntimeEndpoint: \"unix:///run/y/containerd.sock\"\n");
    kjoin_reset_runtime(&paths, sock, sizeof(sock));
    assert_string_equal(sock, "unix:///run/y/containerd.sock"); /* instance-config.yaml first, as the kubelet */
    tu_write(kubelet, "instance-config.yaml", "containerRuntimeEndpoint: tcp://10.0.0.1:1234\n");
    tu_write(kubelet, "kubeadm-flags.env", "KUBELET_KUBEADM_ARGS=\"\"\n");
    kjoin_reset_runtime(&paths, sock, sizeof(sock));
    assert_string_equal(sock, ""); /* only a local socket */
    /* a stand-in ctr: two tasks RUNNING until killed */
    snprintf(bin, sizeof(bin), "%s/bin", d);
    assert_int_equal(mkdir(bin, 0755), 0);
    snprintf(script, sizeof(script),
             "#!/bin/sh\necho \"$*\" >>%s/ctr.log\ncase \"$5 $6\" in\n"
             "\"containers list\") [ \"$7 $8\" = '--quiet labels.\"io.cri-containerd.kind\"' ] && printf 'a\\nb\\nc\\n' ;;\n"
             "\"tasks list\") echo 'TASK PID STATUS'; for t in a b; do if [ -e %s/killed-$t ]; then echo \"$t 0 STOPPED\"; "
             "else echo \"$t 1$t RUNNING\"; fi; done; echo 'c 0 STOPPED'; echo 'notapod 9 RUNNING' ;;\n"
             "\"tasks kill\") : >%s/killed-${10} ;;\nesac\n", d, d, d);
    tu_write(bin, "ctr", script);
    snprintf(path, sizeof(path), "%s/ctr", bin);
    assert_int_equal(chmod(path, 0755), 0);
    old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    char newpath[4400];
    snprintf(newpath, sizeof(newpath), "%s", bin); /* no crictl: ctr is the client */
    setenv("PATH", newpath, 1);
    assert_int_equal(kjoin_reset_pods("unix:///run/y/containerd.sock", &n, &err), KJOIN_OK);
    assert_int_equal(n, 2);
    snprintf(path, sizeof(path), "%s/ctr.log", d);
    char *log = tu_read(path, NULL);
    assert_non_null(strstr(log, "--address /run/y/containerd.sock --namespace k8s.io tasks kill --signal SIGKILL -- a"));
    assert_non_null(strstr(log, "tasks kill --signal SIGKILL -- b"));
    assert_null(strstr(log, "-- c")); /* a stopped one is not killed */
    assert_null(strstr(log, "-- notapod")); /* nor a container containerd's CRI did not make: no Pod's */
    free(log);
    /* refusals: no socket of the join's, a runtime no client speaks to */
    assert_int_equal(kjoin_reset_pods("", &n, &err), KJOIN_E_OTHER);
    assert_int_equal(kjoin_reset_pods("tcp://10.0.0.1:1", &n, &err), KJOIN_E_OTHER);
    assert_int_equal(kjoin_reset_pods("unix:///run/crio/crio.sock", &n, &err), KJOIN_E_OTHER);
    assert_non_null(strstr(err.msg, "no client for the runtime"));
    if (old)
        setenv("PATH", old, 1);
    free(old);
    tu_rmtree(d);
}

static void test_preflight_control_plane(void **state)
{
    (void)state;
    char *d = tu_tmpdir(), proc[300], kube[300], manifests[400], etcd[300], name[600], cmd[1200];
    snprintf(proc, sizeof(proc), "%s/proc", d);
    snprintf(kube, sizeof(kube), "%s/etc", d);
    snprintf(manifests, sizeof(manifests), "%s/manifests", kube);
    snprintf(etcd, sizeof(etcd), "%s/etcd", d);
    snprintf(cmd, sizeof(cmd), "mkdir -p %s %s %s", proc, manifests, etcd);
    assert_int_equal(system(cmd), 0);
    tu_write(proc, "meminfo", "MemTotal:        1000000 kB\nMemFree: 1 kB\n");
    tu_write(manifests, "etcd.yaml", "x");
    tu_write(etcd, "member", "x");
    int used, fd = listener(&used);
    kjoin_node_spec s = {.paths = {.kubernetes_dir = kube}, .proc_dir = proc, .not_root_ok = true,
                         .control_plane_ports = {free_port(), free_port(), used, free_port()}};
    kjoin_cluster_configuration c = {0};
    snprintf(c.etcd_data_dir, sizeof(c.etcd_data_dir), "%s", etcd);
    kjoin_preflight_report r = {0};
    kjoin_err err;
    cpu_set_t all, one;
    assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
    CPU_ZERO(&one);
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &all)) {
            CPU_SET(i, &one);
            break;
        }
    assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
    assert_int_equal(cp_preflight(&s, &c, "127.0.0.1", free_port(), NULL, 0, &r, &err), KJOIN_E_USAGE);
    assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
    char etcd_port[32];
    snprintf(etcd_port, sizeof(etcd_port), "Port-%d", used);
    snprintf(name, sizeof(name), "FileAvailable-%s/etcd.yaml", manifests);
    for (char *ch = name; *ch; ch++)
        *ch = *ch == '/' ? '-' : *ch;
    assert_true(has_finding(&r, "ControlPlaneEndpoint"));
    assert_true(has_finding(&r, "NumCPU"));
    assert_true(has_finding(&r, "Mem"));
    assert_true(has_finding(&r, etcd_port));
    assert_true(has_finding(&r, name));
    snprintf(name, sizeof(name), "DirAvailable-%s", etcd);
    for (char *ch = name; *ch; ch++)
        *ch = *ch == '/' ? '-' : *ch;
    assert_true(has_finding(&r, name));
    assert_true(has_finding(&r, "AdvertiseAddress")); /* loopback: no other member reaches it */
    assert_int_equal(r.n, 7);
    assert_non_null(strstr(err.msg, "7 preflight checks failed"));
    /* An external etcd: no local etcd to listen or keep data (its port held and its data directory used
     * are no finding); its client files must be there unless the Secret brings them. */
    c.external_etcd = true;
    snprintf(c.external_ca_file, sizeof(c.external_ca_file), "%s/none/ca.crt", d);
    r = (kjoin_preflight_report){0};
    assert_int_equal(cp_preflight(&s, &c, "127.0.0.1", free_port(), NULL, 0, &r, &err), KJOIN_E_USAGE);
    assert_false(has_finding(&r, etcd_port));
    assert_false(has_finding(&r, name));
    assert_true(has_finding(&r, "ExternalEtcdClientCertificates"));
    c.external_etcd = false;
    c.external_ca_file[0] = '\0';
    /* An address that is not this machine's cannot take etcd's ports. */
    r = (kjoin_preflight_report){0};
    close(fd);
    assert_int_equal(cp_preflight(&s, &c, "192.0.2.1", free_port(), NULL, 0, &r, &err), KJOIN_E_USAGE);
    snprintf(etcd_port, sizeof(etcd_port), "Port-%d", s.control_plane_ports[3]);
    assert_true(has_finding(&r, etcd_port));
    assert_true(has_finding(&r, "AdvertiseAddress")); /* on none of this machine's interfaces */
    /* Ready: nothing found (NumCPU where this machine has two). */
    snprintf(c.control_plane_endpoint, sizeof(c.control_plane_endpoint), "lb.example.com:6443");
    tu_write(proc, "meminfo", "MemTotal:        4000000 kB\n");
    snprintf(cmd, sizeof(cmd), "rm %s/etcd.yaml %s/member", manifests, etcd);
    assert_int_equal(system(cmd), 0);
    s.control_plane_ports[2] = free_port();
    r = (kjoin_preflight_report){0};
    kjoin_code rc = cp_preflight(&s, &c, "127.0.0.1", free_port(), NULL, 0, &r, &err);
    if (CPU_COUNT(&all) >= 2) { /* but the loopback address the test listens on */
        assert_int_equal(rc, KJOIN_E_USAGE);
        assert_int_equal(r.n, 1);
        assert_true(has_finding(&r, "AdvertiseAddress"));
    }
    /* An interrupted control-plane join of this node: the manifest it wrote
     * (still as written), the port its component holds and the etcd data it
     * made are warnings, and the join goes on; a manifest changed since is
     * still an error. */
    tu_write(manifests, "etcd.yaml", "ours");
    tu_write(manifests, "kube-scheduler.yaml", "changed");
    tu_write(etcd, "member", "x");
    char etcd_yaml[420], sched_yaml[420];
    snprintf(etcd_yaml, sizeof(etcd_yaml), "%s/etcd.yaml", manifests);
    snprintf(sched_yaml, sizeof(sched_yaml), "%s/kube-scheduler.yaml", manifests);
    const char *paths[] = {etcd_yaml, sched_yaml};
    const char *sums[] = {NULL, "0000000000000000000000000000000000000000000000000000000000000000"};
    char ours_hex[65];
    unsigned char sum[32];
    kjoin_sha256("ours", 4, sum, NULL);
    kjoin_hex(sum, 32, ours_hex);
    sums[0] = ours_hex;
    assert_int_equal(kjoin_cp_record_pending(kube, paths, sums, 2, NULL, 0, &err), KJOIN_OK);
    assert_int_equal(kjoin_cp_record_etcd(kube, "https://127.0.0.1:2380", "7", kube, etcd, true, &err), KJOIN_OK);
    fd = listener(&used);
    s.control_plane_ports[2] = used; /* etcd's client port, held by "our" etcd */
    r = (kjoin_preflight_report){0};
    assert_int_equal(cp_preflight(&s, &c, "127.0.0.1", free_port(), NULL, 0, &r, &err), KJOIN_E_USAGE);
    close(fd);
    assert_int_equal(r.n - has_finding(&r, "NumCPU") - has_finding(&r, "AdvertiseAddress"), 4); /* (NumCPU on a
                                                                                                * machine of one CPU) */
    snprintf(name, sizeof(name), "FileAvailable-%s", sched_yaml);
    for (char *ch = name; *ch; ch++)
        *ch = *ch == '/' ? '-' : *ch;
    for (size_t i = 0; i < r.n; i++) /* only the changed scheduler manifest is an error */
        if (strcmp(r.items[i].name, "NumCPU") && strcmp(r.items[i].name, "AdvertiseAddress"))
            assert_int_equal(r.items[i].error, !strcmp(r.items[i].name, name));
    snprintf(etcd_port, sizeof(etcd_port), "Port-%d", used);
    for (size_t i = 0; i < r.n; i++)
        if (!strcmp(r.items[i].name, etcd_port))
            assert_non_null(strstr(r.items[i].message, "in use, by the etcd this join's interrupted run started"));
    assert_true(has_finding(&r, etcd_port));
    snprintf(cmd, sizeof(cmd), "rm -f %s/* %s/member %s/kjoin-control-plane.json", manifests, etcd, kube);
    assert_int_equal(system(cmd), 0);
    /* Ignored by name, as kubeadm's --ignore-preflight-errors. */
    snprintf(c.control_plane_endpoint, sizeof(c.control_plane_endpoint), "%s", "");
    s.ignore_preflight = "ControlPlaneEndpoint,NumCPU,AdvertiseAddress";
    r = (kjoin_preflight_report){0};
    assert_int_equal(cp_preflight(&s, &c, "127.0.0.1", free_port(), NULL, 0, &r, &err), KJOIN_OK);
    assert_true(r.items[0].ignored);
    /* ImagePull through the runtime's client (a stand-in crictl on PATH): an
     * image there is fine, a missing one is pulled, one that cannot be
     * pulled is named; ignored by name, the client is not even asked. */
    char bin[300], log[320], script[900], *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL, newpath[4400];
    snprintf(bin, sizeof(bin), "%s/bin", d);
    snprintf(log, sizeof(log), "%s/crictl.log", d);
    assert_int_equal(mkdir(bin, 0755), 0);
    snprintf(script, sizeof(script),
             "#!/bin/sh\necho \"$*\" >>%s\ncase \"$3 $4 $5 $6\" in\n\"inspecti -q -- r/there:1\") exit 0 ;;\n"
             "\"pull -- r/pulled:1 \") exit 0 ;;\n\"pull -- r/nowhere:1 \") echo 'no such registry' >&2; exit 1 ;;\n"
             "esac\nexit 1\n",
             log);
    tu_write(bin, "crictl", script);
    snprintf(cmd, sizeof(cmd), "%s/crictl", bin);
    assert_int_equal(chmod(cmd, 0755), 0);
    snprintf(newpath, sizeof(newpath), "%s:%s", bin, path ? path : "/usr/bin:/bin");
    setenv("PATH", newpath, 1);
    const char *images[] = {"r/there:1", "r/pulled:1", "r/nowhere:1"};
    s.ignore_preflight = "ControlPlaneEndpoint,AdvertiseAddress";
    s.cri_socket = "/run/x.sock";
    r = (kjoin_preflight_report){0};
    assert_int_equal(cp_preflight(&s, &c, "127.0.0.1", free_port(), images, 3, &r, &err),
                     KJOIN_E_USAGE);
    assert_true(has_finding(&r, "ImagePull"));
    size_t pulls = 0;
    for (size_t i = 0; i < r.n; i++)
        if (!strcmp(r.items[i].name, "ImagePull")) {
            pulls++;
            assert_non_null(strstr(r.items[i].message, "failed to pull image r/nowhere:1: "));
            assert_non_null(strstr(r.items[i].message, "no such registry"));
        }
    assert_int_equal(pulls, 1);
    size_t len;
    char *calls = tu_read(log, &len);
    assert_non_null(strstr(calls, "--runtime-endpoint unix:///run/x.sock pull -- r/pulled:1")); /* data, never a flag */
    assert_null(strstr(calls, "pull r/there:1"));
    free(calls);
    unlink(log);
    /* imagePullPolicy Never: nothing pulled, each missing image named; Always: every image pulled, the one
     * there too. */
    s.pull_policy = KJOIN_PULL_NEVER;
    r = (kjoin_preflight_report){0};
    assert_int_equal(cp_preflight(&s, &c, "127.0.0.1", free_port(), images, 3, &r, &err), KJOIN_E_USAGE);
    pulls = 0;
    for (size_t i = 0; i < r.n; i++)
        if (!strcmp(r.items[i].name, "ImagePull")) {
            pulls++;
            assert_non_null(strstr(r.items[i].message, "is not in the runtime, and imagePullPolicy is Never"));
            assert_null(strstr(r.items[i].message, "r/there:1"));
        }
    assert_int_equal(pulls, 2);
    calls = tu_read(log, &len);
    assert_null(strstr(calls, " pull "));
    free(calls);
    unlink(log);
    s.pull_policy = KJOIN_PULL_ALWAYS;
    r = (kjoin_preflight_report){0};
    assert_int_equal(cp_preflight(&s, &c, "127.0.0.1", free_port(), images, 3, &r, &err), KJOIN_E_USAGE);
    calls = tu_read(log, &len);
    assert_non_null(strstr(calls, "pull -- r/there:1"));
    assert_null(strstr(calls, "inspecti"));
    free(calls);
    unlink(log);
    /* imagePullSerial: by default one pull ends before the next starts; false: all at once (each one's
     * start before any end), each failure still named. */
    snprintf(script, sizeof(script),
             "#!/bin/sh\ncase \"$3\" in inspecti) exit 1 ;; esac\necho \"start $5\" >>%s\nsleep 0.4\n"
             "echo \"end $5\" >>%s\ncase \"$5\" in r/bad*) echo 'denied' >&2; exit 1 ;; esac\nexit 0\n",
             log, log);
    tu_write(bin, "crictl", script);
    assert_int_equal(chmod(cmd, 0755), 0);
    const char *slow[] = {"r/a:1", "r/bad:1", "r/c:1"};
    for (int parallel = 0; parallel < 2; parallel++) {
        s.pull_policy = KJOIN_PULL_IF_NOT_PRESENT;
        s.pull_parallel = parallel;
        r = (kjoin_preflight_report){0};
        assert_int_equal(cp_preflight(&s, &c, "127.0.0.1", free_port(), slow, 3, &r, &err), KJOIN_E_USAGE);
        pulls = 0;
        for (size_t i = 0; i < r.n; i++)
            if (!strcmp(r.items[i].name, "ImagePull")) {
                pulls++;
                assert_non_null(strstr(r.items[i].message, "failed to pull image r/bad:1: "));
            }
        assert_int_equal(pulls, 1);
        calls = tu_read(log, &len);
        char *first_end = strstr(calls, "end ");
        size_t starts_before_end = 0;
        for (char *p = calls; (p = strstr(p, "start ")) && p < first_end; p++)
            starts_before_end++;
        if (starts_before_end != (parallel ? 3u : 1u))
            fail_msg("%s pulls: %zu started before the first ended:\n%s", parallel ? "parallel" : "serial",
                     starts_before_end, calls);
        free(calls);
        unlink(log);
    }
    s.pull_parallel = false;
    s.pull_policy = KJOIN_PULL_IF_NOT_PRESENT;
    s.ignore_preflight = "ControlPlaneEndpoint,ImagePull,AdvertiseAddress";
    r = (kjoin_preflight_report){0};
    assert_int_equal(cp_preflight(&s, &c, "127.0.0.1", free_port(), images, 3, &r, &err), KJOIN_OK);
    assert_int_equal(access(log, F_OK), -1);
    if (path)
        setenv("PATH", path, 1);
    free(path);
    tu_rmtree(d);
}

static void test_preflight(void **state)
{
    (void)state;
    char *d = tu_tmpdir(), proc[256], kube[256], kubelet[256], bin[256], ipv4[300];
    snprintf(proc, sizeof(proc), "%s/proc", d);
    snprintf(kube, sizeof(kube), "%s/etc", d);
    snprintf(kubelet, sizeof(kubelet), "%s/kubelet", d);
    snprintf(bin, sizeof(bin), "%s/kubelet-bin", d);
    snprintf(ipv4, sizeof(ipv4), "%s/sys/net/ipv4", proc);
    char cmd[9000];
    snprintf(cmd, sizeof(cmd), "mkdir -p %s %s", ipv4, kube);
    assert_int_equal(system(cmd), 0);
    tu_write(proc, "swaps", "Filename\tType\tSize\tUsed\tPriority\n/swap file 1 0 -2\n");
    tu_write(ipv4, "ip_forward", "0\n");
    tu_write(kube, "kubelet.conf", "x");
    tu_write(d, "kubelet-bin", "#!/bin/sh\necho Kubernetes v1.37.2\n");
    chmod(bin, 0755);
    int port, fd = listener(&port);
    kjoin_node_spec s = {.paths = {.kubernetes_dir = kube, .kubelet_dir = kubelet},
                         .cri_socket = "/nonexistent/cri.sock", .kubelet = bin,
                         .proc_dir = proc, .kubelet_port = port, .not_root_ok = true, .ignore_preflight = "swap, cri"};
    kjoin_preflight_report r;
    kjoin_err err;
    assert_int_equal(kjoin_preflight_node(&s, NULL, "10.0.0.1", &r, &err), KJOIN_E_USAGE);
    char avail[300];
    snprintf(avail, sizeof(avail), "FileAvailable-%s/kubelet.conf", kube);
    for (char *c = avail; *c; c++)
        *c = *c == '/' ? '-' : *c;
    char port_name[32];
    snprintf(port_name, sizeof(port_name), "Port-%d", port);
    assert_true(has(&r, avail, true, false));
    assert_true(has(&r, "CRI", true, true)); /* ignored, case and spaces aside */
    assert_true(has(&r, "Swap", false, false));
    assert_true(has(&r, port_name, true, false));
    assert_true(has(&r, "FileContent--proc-sys-net-ipv4-ip_forward", true, false));
    assert_false(has(&r, "KubeletVersion", true, false));
    assert_string_equal(r.kubelet_version, "v1.37.2");
    assert_int_equal(r.kubelet_minor, 37);
    /* Every failure is named in the error, the ignored one is not. */
    assert_non_null(strstr(err.msg, "3 preflight checks failed"));
    assert_non_null(strstr(err.msg, port_name));
    assert_null(strstr(err.msg, "CRI"));
    close(fd);
    /* "all" makes every error a warning; a host name has no forwarding check. */
    s.ignore_preflight = "all";
    assert_int_equal(kjoin_preflight_node(&s, NULL, "api.example", &r, &err), KJOIN_OK);
    assert_false(has(&r, "FileContent--proc-sys-net-ipv4-ip_forward", true, true));
    /* The cluster's side: kubeadm's skew rule and failSwapOn. */
    s.ignore_preflight = NULL;
    assert_int_equal(kjoin_preflight_cluster(&s, 36, false, &r, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "KubeletVersion"));
    r.n = 0;
    assert_int_equal(kjoin_preflight_cluster(&s, 41, false, &r, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(r.items[0].message, "more than 3 minor releases older"));
    r.n = 0;
    assert_int_equal(kjoin_preflight_cluster(&s, 40, false, &r, &err), KJOIN_OK);
    assert_int_equal(kjoin_preflight_cluster(&s, 37, true, &r, &err), KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "Swap"));
    /* No kubelet at all. */
    s.kubelet = "kubelet-that-is-not-there";
    s.ignore_preflight = NULL;
    kjoin_preflight_node(&s, NULL, NULL, &r, &err);
    assert_true(has(&r, "KubeletVersion", true, false));
    /* kubeadm's other worker checks: a manifests directory with something
     * in it (an error), kubelet.service not enabled under systemd, a node
     * name that does not resolve, an endpoint behind a proxy (warnings). */
    char manifests[300], sysd[300], dirname_[400];
    snprintf(manifests, sizeof(manifests), "%s/manifests", kube);
    snprintf(sysd, sizeof(sysd), "%s/systemd", d);
    snprintf(cmd, sizeof(cmd), "mkdir -p %s %s && printf '#!/bin/sh\\necho disabled; exit 1\\n' >%s/systemctl && "
             "chmod +x %s/systemctl", manifests, sysd, d, d);
    assert_int_equal(system(cmd), 0);
    tu_write(manifests, "kube-apiserver.yaml", "x");
    snprintf(dirname_, sizeof(dirname_), "DirAvailable-%s", manifests);
    for (char *c = dirname_; *c; c++)
        *c = *c == '/' ? '-' : *c;
    char *path = strdup(getenv("PATH")), newpath[8000];
    snprintf(newpath, sizeof(newpath), "%s:%s", d, path);
    setenv("PATH", newpath, 1);
    setenv("https_proxy", "http://proxy.example:3128", 1);
    s.systemd_dir = sysd;
    kjoin_preflight_node(&s, "no-such-node.invalid", "10.0.0.1", &r, &err);
    assert_true(has(&r, dirname_, true, false));
    assert_true(has(&r, "Service-Kubelet", false, false));
    assert_true(has(&r, "Hostname", false, false));
    assert_true(has(&r, "HTTPProxy", false, false));
    /* NO_PROXY listing the endpoint, a control-plane node (its manifests are checked one by one), localhost:
     * none of them. */
    setenv("NO_PROXY", "example.com,10.0.0.1", 1);
    s.control_plane = true;
    kjoin_preflight_node(&s, "localhost", "10.0.0.1", &r, &err);
    assert_false(has(&r, "HTTPProxy", false, false));
    assert_false(has(&r, dirname_, true, false));
    assert_false(has(&r, "Hostname", false, false));
    s.control_plane = false;
    setenv("NO_PROXY", ".example.com", 1);
    kjoin_preflight_node(&s, NULL, "api.example.com", &r, &err);
    assert_false(has(&r, "HTTPProxy", false, false));
    kjoin_preflight_node(&s, NULL, "api.example.org", &r, &err);
    assert_true(has(&r, "HTTPProxy", false, false));
    unsetenv("NO_PROXY");
    unsetenv("https_proxy");
    setenv("PATH", path, 1);
    free(path);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
    assert_int_equal(system(cmd), 0);
    free(d);
}

static bool listed(char *const *list, size_t n, const char *prefix)
{
    for (size_t i = 0; i < n; i++)
        if (!strncmp(list[i], prefix, strlen(prefix)))
            return true;
    return false;
}

static void test_reset(void **state)
{
    (void)state;
    char *d = tu_tmpdir(), kube[256], kubelet[256], pki[300], cmd[9000], rec[8192];
    snprintf(kube, sizeof(kube), "%s/etc", d);
    snprintf(kubelet, sizeof(kubelet), "%s/kubelet", d);
    snprintf(pki, sizeof(pki), "%s/pki", kubelet);
    snprintf(cmd, sizeof(cmd), "mkdir -p %s/pki %s %s/pods/x %s/other && chmod -R go-w %s", kube, pki, kubelet, kubelet, d);
    assert_int_equal(system(cmd), 0);
    int port, fd = listener(&port);
    close(fd); /* a healthz port where nothing answers */
    char config[128];
    snprintf(config, sizeof(config), KC "healthzPort: %d\n", port);
    tu_write(kubelet, "config.yaml", config);
    tu_write(kube, "pki/ca.crt", "changed by the operator");
    tu_write(pki, "kubelet-client-2026.pem", "x");
    tu_write(pki, "unrelated.pem", "x");
    /* sha256("KC healthzPort...") is not known here: the record holds the real digest of config.yaml. */
    snprintf(cmd, sizeof(cmd), "sha256sum %s/config.yaml | cut -c1-64 > %s/sum", kubelet, d);
    assert_int_equal(system(cmd), 0);
    char sumpath[300], sum[80] = "";
    snprintf(sumpath, sizeof(sumpath), "%s/sum", d);
    FILE *f = fopen(sumpath, "r");
    assert_non_null(fgets(sum, sizeof(sum), f));
    fclose(f);
    sum[64] = '\0';
    snprintf(rec, sizeof(rec),
             "{\"kind\":\"KjoinJoinRecord\",\"joinID\":\"j\",\"server\":\"https://x\",\"nodeName\":\"n1\","
             "\"files\":[{\"path\":\"%s/config.yaml\",\"sha256\":\"%s\"},{\"path\":\"%s/pki/ca.crt\",\"sha256\":\"%s\"}],"
             "\"createdDirs\":[\"%s/pki\"],\"kubeletDirBefore\":[\"other\"]}",
             kubelet, sum, kube, sum, kube);
    tu_write(kube, KJOIN_NODE_STATE_NAME, rec);
    snprintf(cmd, sizeof(cmd), "chmod 600 %s/%s", kube, KJOIN_NODE_STATE_NAME);
    assert_int_equal(system(cmd), 0);
    /* A volume left mounted below plugins/ (a bind mount of the same file
     * system): the tree is left whole, the volume's source untouched. */
    snprintf(cmd, sizeof(cmd), "mkdir -p %s/src %s/plugins/vol && echo keep >%s/src/f && mount --bind %s/src %s/plugins/vol",
             d, kubelet, d, d, kubelet);
    bool mounted = system(cmd) == 0;
    kjoin_kubelet_reset_spec spec = {.paths = {.kubernetes_dir = kube, .kubelet_dir = kubelet}, .systemd_dir = "/nonexistent"};
    kjoin_kubelet_reset_result r;
    kjoin_err err;
    if (kjoin_kubelet_reset(&spec, &r, &err))
        fail_msg("%s", err.msg);
    assert_true(r.had_state);
    assert_string_equal(r.node_name, "n1");
    char path[400];
    snprintf(path, sizeof(path), "%s/config.yaml", kubelet);
    assert_true(listed(r.removed, r.n_removed, path));
    assert_int_equal(access(path, F_OK), -1);
    snprintf(path, sizeof(path), "%s/pki/ca.crt", kube);
    assert_true(listed(r.kept, r.n_kept, path)); /* changed since the join */
    assert_int_equal(access(path, F_OK), 0);
    snprintf(path, sizeof(path), "%s/pods", kubelet);
    assert_true(listed(r.removed, r.n_removed, path));
    snprintf(path, sizeof(path), "%s/other", kubelet);
    assert_int_equal(access(path, F_OK), 0); /* there before the join */
    if (mounted) {
        snprintf(path, sizeof(path), "%s/plugins", kubelet);
        assert_true(listed(r.kept, r.n_kept, path));
        snprintf(path, sizeof(path), "%s/src/f", d);
        assert_int_equal(access(path, F_OK), 0);
        snprintf(cmd, sizeof(cmd), "umount %s/plugins/vol", kubelet);
        assert_int_equal(system(cmd), 0);
    }
    snprintf(path, sizeof(path), "%s/unrelated.pem", pki);
    assert_int_equal(access(path, F_OK), 0); /* not the kubelet's */
    assert_true(listed(r.kept, r.n_kept, pki)); /* so its directory stays */
    snprintf(path, sizeof(path), "%s/pki", kube);
    assert_true(listed(r.kept, r.n_kept, path)); /* not empty: the operator's ca.crt */
    kjoin_kubelet_reset_result_release(&r);
    /* Again: nothing to do. */
    assert_int_equal(kjoin_kubelet_reset(&spec, &r, &err), KJOIN_OK);
    assert_false(r.had_state);
    kjoin_kubelet_reset_result_release(&r);
    /* A record others may read is refused (it names the node's files). */
    tu_write(kube, KJOIN_NODE_STATE_NAME, rec);
    snprintf(cmd, sizeof(cmd), "chmod 644 %s/%s", kube, KJOIN_NODE_STATE_NAME);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(kjoin_kubelet_reset(&spec, &r, &err), KJOIN_E_USAGE);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
    assert_int_equal(system(cmd), 0);
    free(d);
}


/* The printed command, run by a shell as a user pastes it: paths with shell
 * syntax stay words, and the flags are split but never globbed. */
static void test_start_command(void **state)
{
    (void)state;
    char *d = tu_tmpdir(), cmd[8192], kube[600], kubelet[600], bin[600], line[9000], out[600];
    kjoin_err err;
    snprintf(kube, sizeof(kube), "%s/etc k8s;touch PWNED;'", d);
    snprintf(kubelet, sizeof(kubelet), "%s/lib $(touch PWNED2)", d);
    snprintf(bin, sizeof(bin), "%s/kube'let", d);
    snprintf(out, sizeof(out), "%s/args", d);
    mkdir(kube, 0700);
    mkdir(kubelet, 0700);
    char script[1200];
    snprintf(script, sizeof(script), "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done >'%s'\n", out);
    tu_write(d, "kube'let", script);
    chmod(bin, 0755);
    tu_write(kubelet, "kubeadm-flags.env", "KUBELET_KUBEADM_ARGS=\"--a=* --b=x\"\n");
    tu_write(d, "decoy-file", ""); /* what a glob of "*" would find in the working directory */
    kjoin_node_paths paths = {.kubernetes_dir = kube, .kubelet_dir = kubelet};
    assert_int_equal(kjoin_kubelet_start_command(bin, &paths, cmd, sizeof(cmd), &err), KJOIN_OK);
    assert_non_null(strstr(cmd, "sh -c 'set -f; . "));
    snprintf(line, sizeof(line), "cd '%s' && %s", d, cmd);
    assert_int_equal(system(line), 0);
    char *args = tu_read(out, NULL), want[3000];
    snprintf(want, sizeof(want), "--bootstrap-kubeconfig=%s/bootstrap-kubelet.conf\n--kubeconfig=%s/kubelet.conf\n"
             "--config=%s/config.yaml\n--a=*\n--b=x\n", kube, kube, kubelet);
    assert_string_equal(args, want);
    free(args);
    char pwned[700];
    snprintf(pwned, sizeof(pwned), "%s/PWNED", d);
    assert_int_not_equal(access(pwned, F_OK), 0);
    snprintf(pwned, sizeof(pwned), "%s/PWNED2", d);
    assert_int_not_equal(access(pwned, F_OK), 0);
    /* A command that does not fit is an error, not a cut line. */
    assert_int_equal(kjoin_kubelet_start_command(bin, &paths, cmd, 64, &err), KJOIN_E_USAGE);
    snprintf(line, sizeof(line), "rm -rf '%s'", d);
    assert_int_equal(system(line), 0);
    free(d);
}


/* kubelet-start's writes and reset, on scratch directories: the record
 * holds every name the kubelet directory had before (no silent cap), so
 * reset gives them all back; more than a record holds is refused before
 * anything is written or stopped. */
static void write_node_dry(const kjoin_node_paths *paths, kjoin_dry_run *dry, kjoin_err *err, kjoin_code want)
{
    kjoin_node_spec spec = {.paths = *paths, .systemd_dir = "/nonexistent/systemd"};
    kjoin_join_context cx = {.name = {.name = "n1", .is_host_name = true}, .join_id = "j", .ca_pem = "ca\n",
                             .ca_len = 3, .dry_run = dry};
    kjoin_node_join j = {.spec = &spec, .cx = &cx, .bootstrap_kubeconfig = "bootstrap\n", .bootstrap_len = 10,
                         .checked = true};
    j.config_yaml = strdup(KC "healthzPort: 0\n");
    j.flags_env = strdup("KUBELET_KUBEADM_ARGS=\"\"\n");
    assert_int_equal(kjoin_kubelet_write(&j, err), want);
    kjoin_node_join_release(&j);
}
static void write_node_at(const kjoin_node_paths *paths, kjoin_err *err, kjoin_code want)
{
    write_node_dry(paths, NULL, err, want);
}

static void write_scratch_node(const char *kube, const char *kubelet, kjoin_err *err, kjoin_code want)
{
    kjoin_node_paths paths = {.kubernetes_dir = kube, .kubelet_dir = kubelet};
    write_node_at(&paths, err, want);
}

/* A scratch node's two directories under d, as the tests name them. */
static void scratch_dirs(const char *d, char *kube, char *kubelet, size_t cap)
{
    snprintf(kube, cap, "%s/kubernetes", d);
    snprintf(kubelet, cap, "%s/kubelet", d);
}

/* A join told to put its bootstrap kubeconfig and CA outside its
 * directories: reset takes them back, and every directory made for them. */
static void test_outputs_elsewhere_reset(void **state)
{
    (void)state;
    char *d = tu_tmpdir(), kube[300], kubelet[300], boot[300], ca[300], cmd[600];
    kjoin_err err;
    scratch_dirs(d, kube, kubelet, sizeof(kube));
    snprintf(boot, sizeof(boot), "%s/srv/boot/b.conf", d);
    snprintf(ca, sizeof(ca), "%s/opt/ca/pki/ca.crt", d);
    snprintf(cmd, sizeof(cmd), "chmod -R go-w %s", d);
    assert_int_equal(system(cmd), 0);
    kjoin_node_paths paths = {.kubernetes_dir = kube, .kubelet_dir = kubelet, .bootstrap_kubeconfig = boot,
                              .ca_cert_path = ca};
    write_node_at(&paths, &err, KJOIN_OK);
    assert_int_equal(access(boot, F_OK), 0);
    assert_int_equal(access(ca, F_OK), 0);
    /* reset is told only the node's directories, as kjoin reset is. */
    kjoin_kubelet_reset_spec rs = {.paths = {.kubernetes_dir = kube, .kubelet_dir = kubelet}, .systemd_dir = "/nonexistent"};
    kjoin_kubelet_reset_result r;
    if (kjoin_kubelet_reset(&rs, &r, &err))
        fail_msg("reset: %s", err.msg);
    assert_int_equal(r.n_kept, 0);
    kjoin_kubelet_reset_result_release(&r);
    snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A %s)\"", d);
    assert_int_equal(system(cmd), 0); /* srv/, opt/ and the node's directories: all made by the join, all gone */
    snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
    assert_int_equal(system(cmd), 0);
    free(d);
}

/* kubelet-start in a dry run writes under the dry run's root alone: the
 * node's directories are not made, each file is shown at the node's path
 * (the record naming the node's paths, never the root); on a node it
 * already joined only what would change is shown; a file the join would
 * refuse is refused as the join refuses it, the node's left as it was. */
static void test_kubelet_dry_run(void **state)
{
    (void)state;
    char *d = tu_tmpdir(), *tmp = tu_tmpdir(), kube[300], kubelet[300], cmd[700], path[400];
    kjoin_err err;
    kjoin_dry_run *dry = NULL;
    kjoin_planned_files plan = {0};
    scratch_dirs(d, kube, kubelet, sizeof(kube));
    snprintf(cmd, sizeof(cmd), "chmod -R go-w %s", d);
    assert_int_equal(system(cmd), 0);
    kjoin_node_paths paths = {.kubernetes_dir = kube, .kubelet_dir = kubelet};
    assert_int_equal(kjoin_dry_run_begin(tmp, &dry, &err), KJOIN_OK);
    write_node_dry(&paths, dry, &err, KJOIN_OK);
    assert_int_not_equal(access(kube, F_OK), 0);
    assert_int_not_equal(access(kubelet, F_OK), 0);
    assert_int_equal(kjoin_dry_run_show(dry, &plan, &err), KJOIN_OK);
    assert_int_equal(plan.n, 5); /* the record, the bootstrap kubeconfig, config.yaml, the flags, the CA */
    snprintf(path, sizeof(path), "%s/kjoin-join.json", kube);
    assert_string_equal(plan.files[0].path, path);
    assert_int_equal(plan.files[0].mode, 0600);
    snprintf(path, sizeof(path), "\"%s/config.yaml\"", kubelet);
    assert_non_null(strstr(plan.files[0].content, path)); /* the node's path */
    assert_null(strstr(plan.files[0].content, dry->root));
    assert_non_null(strstr(plan.files[0].content, "\"kubeletInputs\"")); /* what kjoin sync makes the files from */
    kjoin_node_state *st = calloc(1, sizeof(*st));
    assert_int_equal(kjoin_node_state_parse(plan.files[0].content, strlen(plan.files[0].content), &paths, st, &err),
                     KJOIN_OK);
    assert_true(st->inputs.has);
    free(st);
    snprintf(path, sizeof(path), "%s/bootstrap-kubelet.conf", kube);
    assert_string_equal(plan.files[1].path, path);
    assert_string_equal(plan.files[1].content, "bootstrap\n");
    snprintf(path, sizeof(path), "%s/pki/ca.crt", kube);
    assert_string_equal(plan.files[4].path, path);
    assert_int_equal(plan.files[4].mode, 0644);
    kjoin_planned_release(&plan);
    kjoin_dry_run_end(dry, NULL, NULL);
    /* joined for real: the same join again changes nothing, so shows nothing; the flags changed, those alone */
    write_node_at(&paths, &err, KJOIN_OK);
    assert_int_equal(kjoin_dry_run_begin(tmp, &dry, &err), KJOIN_OK);
    write_node_dry(&paths, dry, &err, KJOIN_OK);
    assert_int_equal(kjoin_dry_run_show(dry, &plan, &err), KJOIN_OK);
    assert_int_equal(plan.n, 0);
    kjoin_dry_run_end(dry, NULL, NULL);
    snprintf(cmd, sizeof(cmd), "echo '# an edit' >> %s/kubeadm-flags.env", kubelet);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(kjoin_dry_run_begin(tmp, &dry, &err), KJOIN_OK);
    write_node_dry(&paths, dry, &err, KJOIN_OK);
    assert_int_equal(kjoin_dry_run_show(dry, &plan, &err), KJOIN_OK);
    assert_int_equal(plan.n, 1);
    snprintf(path, sizeof(path), "%s/kubeadm-flags.env", kubelet);
    assert_string_equal(plan.files[0].path, path);
    kjoin_planned_release(&plan);
    kjoin_dry_run_end(dry, NULL, NULL);
    snprintf(cmd, sizeof(cmd), "grep -q '# an edit' %s/kubeadm-flags.env", kubelet);
    assert_int_equal(system(cmd), 0); /* the node's as it was */
    /* another CA on the node: refused, dry as for real, the node's kept */
    snprintf(cmd, sizeof(cmd), "printf other > %s/pki/ca.crt", kube);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(kjoin_dry_run_begin(tmp, &dry, &err), KJOIN_OK);
    write_node_dry(&paths, dry, &err, KJOIN_E_OUTPUT);
    assert_non_null(strstr(err.msg, "ca.crt"));
    kjoin_dry_run_end(dry, NULL, NULL);
    write_node_at(&paths, &err, KJOIN_E_OUTPUT);
    snprintf(cmd, sizeof(cmd), "test \"$(cat %s/pki/ca.crt)\" = other", kube);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(rmdir(tmp), 0); /* every dry run's root gone */
    snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
    assert_int_equal(system(cmd), 0);
    free(d);
    free(tmp);
}

/* The record's kubeletInputs, which kjoin sync makes the files from: read
 * back and checked as every field of the record. */
static void test_record_kubelet_inputs(void **state)
{
    (void)state;
    kjoin_node_paths paths = {.kubernetes_dir = "/etc/kubernetes", .kubelet_dir = "/var/lib/kubelet"};
    kjoin_node_state *st = calloc(1, sizeof(*st));
    kjoin_err err;
    char text[8192], many[2048] = "";
    const char *head = "{\"kind\":\"KjoinJoinRecord\",\"joinID\":\"j\",\"server\":\"s\",\"nodeName\":\"n\","
                       "\"files\":[],\"createdDirs\":[],\"kubeletDirBefore\":[]";
    snprintf(text, sizeof(text), "%s,\"kubeletInputs\":{\"criSocket\":\"unix:///run/containerd/containerd.sock\","
             "\"patchesDir\":\"/etc/kjoin/patches\",\"nodeIP\":\"10.0.0.7\",\"hostnameOverride\":true,"
             "\"taints\":[\"a=b:NoSchedule\"],\"extraArgs\":[\"node-labels=x=y\",\"v=2\"]}}", head);
    assert_int_equal(kjoin_node_state_parse(text, strlen(text), &paths, st, &err), KJOIN_OK);
    assert_true(st->inputs.has);
    assert_true(st->inputs.hostname_override);
    assert_string_equal(st->inputs.patches_dir, "/etc/kjoin/patches");
    assert_string_equal(st->inputs.node_ip, "10.0.0.7");
    assert_int_equal(st->inputs.n_taints, 1);
    assert_int_equal(st->inputs.n_extra_args, 2);
    assert_string_equal(st->inputs.extra_args[1], "v=2");
    /* a record of an earlier kjoin has none: no inputs, still a record */
    snprintf(text, sizeof(text), "%s}", head);
    assert_int_equal(kjoin_node_state_parse(text, strlen(text), &paths, st, &err), KJOIN_OK);
    assert_false(st->inputs.has);
    for (int i = 0; i < KJOIN_NODE_INPUTS_MAX_ARGS + 1; i++)
        snprintf(many + strlen(many), sizeof(many) - strlen(many), "%s\"t%d:NoSchedule\"", i ? "," : "", i);
    char too_many[2200];
    snprintf(too_many, sizeof(too_many), "\"criSocket\":\"s\",\"hostnameOverride\":false,\"taints\":[%s],\"extraArgs\":[]",
             many);
    const char *forged[] = {
        "\"criSocket\":\"s\",\"taints\":[],\"extraArgs\":[]",                                   /* no hostnameOverride */
        "\"criSocket\":7,\"hostnameOverride\":false,\"taints\":[],\"extraArgs\":[]",            /* not a string */
        "\"hostnameOverride\":false,\"taints\":[],\"extraArgs\":[]",                             /* no runtime */
        "\"criSocket\":\"s\",\"hostnameOverride\":false,\"patchesDir\":\"patches\",\"taints\":[],\"extraArgs\":[]",
        "\"criSocket\":\"s\",\"hostnameOverride\":false,\"patchesDir\":\"/etc/../p\",\"taints\":[],\"extraArgs\":[]",
        "\"criSocket\":\"s\",\"hostnameOverride\":false,\"taints\":[],\"extraArgs\":[\"v=2\\n--x\"]", /* a newline */
        "\"criSocket\":\"s\",\"hostnameOverride\":false,\"taints\":[],\"extraArgs\":[\"a\\u0000b\"]", /* a NUL */
        "\"criSocket\":\"s\",\"hostnameOverride\":false,\"taints\":{},\"extraArgs\":[]",
        "\"criSocket\":\"s\",\"hostnameOverride\":false,\"taints\":[1],\"extraArgs\":[]",
        "\"criSocket\":\"s\",\"hostnameOverride\":\"yes\",\"taints\":[],\"extraArgs\":[]",
        too_many,
    };
    for (size_t i = 0; i < TU_LEN(forged); i++) {
        snprintf(text, sizeof(text), "%s,\"kubeletInputs\":{%s}}", head, forged[i]);
        if (kjoin_node_state_parse(text, strlen(text), &paths, st, &err) != KJOIN_E_USAGE)
            fail_msg("forged inputs %zu accepted", i);
        assert_false(st->inputs.has);
    }
    snprintf(text, sizeof(text), "%s,\"kubeletInputs\":[]}", head);
    assert_int_equal(kjoin_node_state_parse(text, strlen(text), &paths, st, &err), KJOIN_E_USAGE);
    free(st);
}

/* kjoin sync's comparison: by meaning (formatting is no difference), one
 * line each field that differs; the flags file by name and value. */
static void test_sync_compares_by_meaning(void **state)
{
    (void)state;
    json_object *have = NULL, *want = NULL;
    kjoin_err err;
    const char *a = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 110\n"
                    "evictionHard:\n  memory.available: 100Mi\nold: 1\n";
    const char *b = "{kind: KubeletConfiguration, apiVersion: \"kubelet.config.k8s.io/v1beta1\", maxPods: 90,\n"
                    " evictionHard: {memory.available: 100Mi, nodefs.available: 5%}, shutdownGracePeriod: 30s}\n";
    const char *a2 = "kind: KubeletConfiguration\napiVersion: 'kubelet.config.k8s.io/v1beta1'\nold: 1\n"
                     "evictionHard: {\"memory.available\": \"100Mi\"}\nmaxPods: 0x6e\n";
    assert_int_equal(kjoin_yaml__load_json(a, strlen(a), KJOIN_E_USAGE, &have, &err), KJOIN_OK);
    assert_int_equal(kjoin_yaml__load_json(b, strlen(b), KJOIN_E_USAGE, &want, &err), KJOIN_OK);
    kjoin_sync_file *f = calloc(1, sizeof(*f));
    kjoin_node__sync_diff(have, want, "", f);
    assert_int_equal(f->n_changes, 4);
    assert_string_equal(f->changes[0], "+ evictionHard.nodefs.available: \"5%\"");
    assert_string_equal(f->changes[1], "maxPods: 110 -> 90");
    assert_string_equal(f->changes[2], "+ shutdownGracePeriod: \"30s\"");
    assert_string_equal(f->changes[3], "- old: 1");
    json_object_put(want);
    /* the same configuration written another way: nothing differs */
    memset(f, 0, sizeof(*f));
    assert_int_equal(kjoin_yaml__load_json(a2, strlen(a2), KJOIN_E_USAGE, &want, &err), KJOIN_OK);
    kjoin_node__sync_diff(have, want, "", f);
    assert_int_equal(f->n_changes, 0);
    json_object_put(want);
    /* a list differs whole; a value of another type too */
    json_object *x = json_tokener_parse("{\"l\":[1,2],\"t\":\"1\"}"), *y = json_tokener_parse("{\"l\":[2,1],\"t\":1}");
    memset(f, 0, sizeof(*f));
    kjoin_node__sync_diff(x, y, "", f);
    assert_int_equal(f->n_changes, 2);
    assert_string_equal(f->changes[0], "l: [1,2] -> [2,1]");
    assert_string_equal(f->changes[1], "t: \"1\" -> 1");
    json_object_put(x), json_object_put(y);
    /* a value shown is cut, a line never holds a control character */
    x = json_tokener_parse("{\"k\":\"\\u001b[31mred\"}"), y = json_tokener_parse("{\"k\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}");
    memset(f, 0, sizeof(*f));
    kjoin_node__sync_diff(x, y, "", f);
    assert_int_equal(f->n_changes, 1);
    assert_null(strchr(f->changes[0], '\x1b'));
    assert_non_null(strstr(f->changes[0], "..."));
    json_object_put(x), json_object_put(y);
    /* more than a file's lines: counted, not all kept */
    x = json_object_new_object(), y = json_object_new_object();
    for (int i = 0; i < KJOIN_SYNC_MAX_CHANGES + 5; i++) {
        char k[16];
        snprintf(k, sizeof(k), "k%02d", i);
        json_object_object_add(y, k, json_object_new_int(i));
    }
    memset(f, 0, sizeof(*f));
    kjoin_node__sync_diff(x, y, "", f);
    assert_int_equal(f->n_changes, KJOIN_SYNC_MAX_CHANGES);
    assert_true(f->more_changes);
    json_object_put(x), json_object_put(y);
    json_object_put(have);
    /* the flags file */
    const char *flags = "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=unix:///run/c.sock --node-ip=10.0.0.7 --x\"\n";
    x = kjoin_node__flags_json(flags, strlen(flags));
    assert_non_null(x);
    assert_string_equal(json_object_get_string(json_object_object_get(x, "--node-ip")), "10.0.0.7");
    assert_string_equal(json_object_get_string(json_object_object_get(x, "--x")), "");
    json_object_put(x);
    const char *not_flags[] = {"", "KUBELET_KUBEADM_ARGS=", "KUBELET_KUBEADM_ARGS=\"--a=b", "OTHER=\"--a=b\"\n",
                               "KUBELET_KUBEADM_ARGS=\"--a=b\"\nMORE=1\n", "KUBELET_KUBEADM_ARGS=\"--a=b\" trailing\n"};
    for (size_t i = 0; i < TU_LEN(not_flags); i++)
        if ((x = kjoin_node__flags_json(not_flags[i], strlen(not_flags[i])))) {
            json_object_put(x);
            fail_msg("not a flags file, read as one: %s", not_flags[i]);
        }
    char nul[] = "KUBELET_KUBEADM_ARGS=\"--a=b\0c\"\n";
    assert_null(kjoin_node__flags_json(nul, sizeof(nul) - 1));
    free(f);
}

/* When the kubelet started (kjoin sync's restart-needed): /proc/PID/stat's
 * starttime (field 22, counted after the command's last ")", which may
 * hold spaces and parentheses) after /proc/stat's btime. */
static void test_process_start(void **state)
{
    (void)state;
    char *proc = tu_tmpdir(), dir[300], cmd[400];
    long hz = sysconf(_SC_CLK_TCK);
    snprintf(dir, sizeof(dir), "%s/4242", proc);
    assert_int_equal(mkdir(dir, 0755), 0);
    tu_write(proc, "stat", "cpu  1 2 3\nbtime 1700000000\nprocesses 9\n");
    tu_write(dir, "stat", "4242 (kube let) (x)) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 12 0 2500 1000 50\n");
    assert_int_equal(kjoin_node__process_start_ms(proc, 4242), 1700000000LL * 1000 + 2500LL * 1000 / hz);
    assert_int_equal(kjoin_node__process_start_ms(proc, 4243), -1); /* no such process */
    assert_int_equal(kjoin_node__process_start_ms(proc, 0), -1);
    tu_write(dir, "stat", "4242 (kubelet) S 1 2\n"); /* cut short */
    assert_int_equal(kjoin_node__process_start_ms(proc, 4242), -1);
    tu_write(dir, "stat", "4242 kubelet S 1 4242 4242 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 12 0 2500 1000 50\n");
    assert_int_equal(kjoin_node__process_start_ms(proc, 4242), -1); /* no command at all */
    tu_write(dir, "stat", "4242 (kubelet) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 12 0 2500 1000 50\n");
    tu_write(proc, "stat", "cpu  1 2 3\n"); /* no boot time */
    assert_int_equal(kjoin_node__process_start_ms(proc, 4242), -1);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", proc);
    assert_int_equal(system(cmd), 0);
    free(proc);
}

static void test_record_keeps_every_name(void **state)
{
    (void)state;
    char *d = tu_tmpdir(), kube[300], kubelet[300], cmd[1200], path[600];
    kjoin_err err;
    scratch_dirs(d, kube, kubelet, sizeof(kube));
    /* pods/ is the 40th name: a record cut at 32 made reset take it for the kubelet's. */
    /* An operator's serving certificate in pki/ before the join stays too. */
    snprintf(cmd, sizeof(cmd), "mkdir -p %s && cd %s && for i in $(seq 38); do mkdir d$i; done && mkdir pods pki && "
             "touch pods/keep pki/kubelet.crt pki/kubelet.key && chmod -R go-w %s && chmod 700 pki", kubelet, kubelet, d);
    assert_int_equal(system(cmd), 0);
    write_scratch_node(kube, kubelet, &err, KJOIN_OK);
    /* What the join's kubelet makes, which reset takes. */
    snprintf(cmd, sizeof(cmd), "touch %s/pki/kubelet-client-2026-11-26.pem && mkdir %s/plugins", kubelet, kubelet);
    assert_int_equal(system(cmd), 0);
    kjoin_node_paths paths = {.kubernetes_dir = kube, .kubelet_dir = kubelet};
    kjoin_kubelet_reset_result r;
    /* With systemd, a kubelet that will not stop stops the reset, before anything is removed. */
    char bin[400], *old_path = strdup(getenv("PATH"));
    snprintf(bin, sizeof(bin), "%s/bin", d);
    mkdir(bin, 0700);
    tu_write(bin, "systemctl", "#!/bin/sh\necho 'Failed to stop kubelet.service: Access denied' >&2\nexit 1\n");
    snprintf(path, sizeof(path), "%s/systemctl", bin);
    chmod(path, 0755);
    setenv("PATH", bin, 1);
    kjoin_kubelet_reset_spec rs = {.paths = paths, .systemd_dir = d};
    assert_int_equal(kjoin_kubelet_reset(&rs, &r, &err), KJOIN_E_OTHER);
    assert_non_null(strstr(err.msg, "could not stop the kubelet"));
    assert_non_null(strstr(err.msg, "nothing was removed"));
    kjoin_kubelet_reset_result_release(&r);
    snprintf(path, sizeof(path), "%s/config.yaml", kubelet);
    assert_int_equal(access(path, F_OK), 0);
    snprintf(path, sizeof(path), "%s/pki/kubelet-client-2026-11-26.pem", kubelet);
    assert_int_equal(access(path, F_OK), 0);
    tu_write(bin, "systemctl", "#!/bin/sh\nexit 0\n");
    if (kjoin_kubelet_reset(&rs, &r, &err))
        fail_msg("reset: %s", err.msg);
    setenv("PATH", old_path, 1);
    free(old_path);
    assert_true(r.had_state);
    assert_true(r.kubelet_stopped);
    kjoin_kubelet_reset_result_release(&r);
    snprintf(path, sizeof(path), "%s/pki/kubelet.crt", kubelet);
    assert_int_equal(access(path, F_OK), 0);
    snprintf(path, sizeof(path), "%s/pki/kubelet.key", kubelet);
    assert_int_equal(access(path, F_OK), 0);
    snprintf(path, sizeof(path), "%s/pki/kubelet-client-2026-11-26.pem", kubelet);
    assert_int_not_equal(access(path, F_OK), 0);
    snprintf(path, sizeof(path), "%s/plugins", kubelet);
    assert_int_not_equal(access(path, F_OK), 0);
    snprintf(path, sizeof(path), "%s/pods/keep", kubelet);
    assert_int_equal(access(path, F_OK), 0);
    snprintf(path, sizeof(path), "%s/d38", kubelet);
    assert_int_equal(access(path, F_OK), 0);
    snprintf(path, sizeof(path), "%s/config.yaml", kubelet);
    assert_int_not_equal(access(path, F_OK), 0); /* the join's own file went */
    /* More names than a record holds: refused, nothing written. */
    snprintf(cmd, sizeof(cmd), "cd %s && for i in $(seq 300); do touch f$i; done", kubelet);
    assert_int_equal(system(cmd), 0);
    char *before = tu_tree_state(d);
    write_scratch_node(kube, kubelet, &err, KJOIN_E_USAGE);
    assert_non_null(strstr(err.msg, "more than the join record keeps"));
    tu_tree_unchanged(d, before); /* the whole of both directories, as they were */
    snprintf(path, sizeof(path), "%s/%s", kube, KJOIN_NODE_STATE_NAME);
    assert_int_not_equal(access(path, F_OK), 0);
    snprintf(path, sizeof(path), "%s/config.yaml", kubelet);
    assert_int_not_equal(access(path, F_OK), 0);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
    assert_int_equal(system(cmd), 0);
    free(d);
}


static void test_node_ready(void **state)
{
    (void)state;
    const char *ready[] = {
        "{\"status\": {\"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}]}}",
        "{\"status\": {\"conditions\": [null, 7, {\"type\": \"MemoryPressure\", \"status\": \"False\"},"
        " {\"type\": \"Ready\", \"status\": \"True\"}]}}",
    };
    const char *not_ready[] = {
        "{\"status\": {\"conditions\": [{\"type\": null, \"status\": \"True\"}]}}",
        "{\"status\": {\"conditions\": [{\"type\": \"Ready\", \"status\": null}]}}",
        "{\"status\": {\"conditions\": [{\"type\": \"Ready\", \"status\": \"False\"}]}}",
        "{\"status\": {\"conditions\": [{\"type\": \"Ready\", \"status\": true}]}}",
        "{\"status\": {\"conditions\": {\"type\": \"Ready\", \"status\": \"True\"}}}",
        "{\"status\": null}", "[{\"status\": {\"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}]}}]",
        "\"Ready\"", "", "{\"status\": {\"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}]}",
    };
    for (size_t i = 0; i < TU_LEN(ready); i++)
        assert_true(kjoin_node_ready(ready[i], strlen(ready[i])));
    for (size_t i = 0; i < TU_LEN(not_ready); i++)
        if (kjoin_node_ready(not_ready[i], strlen(not_ready[i])))
            fail_msg("case %zu taken as Ready", i);
}


/* Runs child(d, arg) in a forked process on a fresh scratch directory d
 * (private mounts, rlimits and the like stay with it), and fails the test
 * when it exits other than 0; what names the case. */
static void in_child(int (*child)(const char *d, int arg), int arg, const char *what)
{
    char *d = tu_tmpdir(), cmd[700];
    snprintf(cmd, sizeof(cmd), "chmod -R go-w %s", d);
    assert_int_equal(system(cmd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child(d, arg));
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status))
        fail_msg("%s: the child exited %d", what, WEXITSTATUS(status));
    snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
    assert_int_equal(system(cmd), 0);
    free(d);
}

/* Mounts at or below dir now. */
static size_t mounts_under(const char *dir)
{
    char line[8192], point[4096];
    size_t n = 0, len = strlen(dir);
    FILE *f = fopen("/proc/self/mountinfo", "r");
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "%*s %*s %*s %*s %4095s", point) == 1 && !strncmp(point, dir, len) &&
            (!point[len] || point[len] == '/'))
            n++;
    if (f)
        fclose(f);
    return n;
}

/* In a child with a private mount namespace: a join on a scratch node, the
 * kubelet's mounts as a kubelet makes them, reset. data_disk: the kubelet
 * directory is a mount already before the join. Exits 0 when reset left
 * exactly the mounts that were there before and removed the rest. */
static int mounts_child(const char *d, int data_disk)
{
    char kube[600], kubelet[600], vol[700], cmd[4000];
    kjoin_err err;
    scratch_dirs(d, kube, kubelet, sizeof(kube));
    snprintf(vol, sizeof(vol), "%s/pods/uid-1/volumes/kubernetes.io~projected/token", kubelet);
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return fprintf(stderr, "no mount namespace: %s\n", strerror(errno)), 2;
    if (data_disk && (mkdir(kubelet, 0700) != 0 || mount("disk", kubelet, "tmpfs", 0, "mode=0700") != 0))
        return fprintf(stderr, "data disk: %s\n", strerror(errno)), 3;
    kjoin_node_paths paths = {.kubernetes_dir = kube, .kubelet_dir = kubelet};
    kjoin_node_spec spec = {.paths = paths, .systemd_dir = "/nonexistent/systemd"};
    kjoin_join_context cx = {.name = {.name = "n1", .is_host_name = true}, .join_id = "j"};
    kjoin_node_join j = {.spec = &spec, .cx = &cx, .bootstrap_kubeconfig = "b\n", .bootstrap_len = 2, .checked = true};
    j.config_yaml = strdup(KC "healthzPort: 0\n");
    j.flags_env = strdup("KUBELET_KUBEADM_ARGS=\"\"\n");
    if (kjoin_kubelet_write(&j, &err))
        return fprintf(stderr, "write: %s\n", err.msg), 4;
    kjoin_node_join_release(&j);
    /* What a kubelet does: its directory onto itself (rshared), a pod's volume. */
    snprintf(cmd, sizeof(cmd), "mount --bind %s %s && mount --make-rshared %s && mkdir -p %s && mount -t tmpfs tok %s",
             kubelet, kubelet, kubelet, vol, vol);
    if (system(cmd) != 0)
        return fprintf(stderr, "kubelet mounts failed\n"), 5;
    size_t want = data_disk ? 1 : 0;
    kjoin_kubelet_reset_spec rs = {.paths = paths, .systemd_dir = "/nonexistent/systemd"};
    kjoin_kubelet_reset_result r;
    if (kjoin_kubelet_reset(&rs, &r, &err))
        return fprintf(stderr, "reset: %s\n", err.msg), 6;
    for (size_t i = 0; i < r.n_kept; i++)
        fprintf(stderr, "left: %s\n", r.kept[i]);
    size_t kept = r.n_kept;
    kjoin_kubelet_reset_result_release(&r);
    if (mounts_under(kubelet) != want)
        return fprintf(stderr, "%zu mounts left under the kubelet directory, want %zu\n", mounts_under(kubelet), want), 7;
    if (kept || (!data_disk && access(kubelet, F_OK) == 0) || access(vol, F_OK) == 0)
        return fprintf(stderr, "reset did not take what the join and its kubelet made\n"), 8;
    return 0;
}

static void test_reset_unmounts_what_the_kubelet_mounted(void **state)
{
    (void)state;
    in_child(mounts_child, 0, "on a fresh machine");
    in_child(mounts_child, 1, "with a data disk");
}


/* The tree under d as "path mode" lines, to compare before and after. */
static char *tree_of(const char *d)
{
    char cmd[700], *text;
    snprintf(cmd, sizeof(cmd), "cd %s && find . -printf '%%p %%m\\n' | sort > ../tree.txt", d);
    if (system(cmd) != 0)
        return NULL;
    snprintf(cmd, sizeof(cmd), "%s/../tree.txt", d);
    text = tu_read(cmd, NULL);
    unlink(cmd);
    return text;
}

/* In a child with a private mount namespace: the node's writes onto a
 * read-only or full file system fail with exit 5, leave no temporary file,
 * and leave the tree as it was. which: 0 the kubelet directory read-only,
 * 1 it full, 2 the Kubernetes directory read-only. */
static int full_disk_child(const char *d, int which)
{
    char kube[600], kubelet[600], cmd[2000];
    kjoin_err err;
    scratch_dirs(d, kube, kubelet, sizeof(kube));
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return fprintf(stderr, "no mount namespace: %s\n", strerror(errno)), 2;
    const char *dir = which == 2 ? kube : kubelet;
    if (mkdir(dir, 0700) != 0 || mount("scratch", dir, "tmpfs", which == 1 ? 0 : MS_RDONLY, "size=64k,mode=0700") != 0)
        return fprintf(stderr, "mount: %s\n", strerror(errno)), 3;
    snprintf(cmd, sizeof(cmd), "dd if=/dev/zero of=%s/filler bs=4k count=64 2>/dev/null; true", dir);
    if (which == 1 && system(cmd) != 0)
        return 4;
    char *before = tree_of(d);
    kjoin_node_paths paths = {.kubernetes_dir = kube, .kubelet_dir = kubelet};
    kjoin_node_spec spec = {.paths = paths, .systemd_dir = "/nonexistent/systemd"};
    kjoin_join_context cx = {.name = {.name = "n1", .is_host_name = true}, .join_id = "j", .ca_pem = "ca\n",
                             .ca_len = 3};
    kjoin_node_join j = {.spec = &spec, .cx = &cx, .bootstrap_kubeconfig = "b\n", .bootstrap_len = 2,
                         .checked = true};
    j.config_yaml = strdup(KC "healthzPort: 0\n");
    j.flags_env = strdup("KUBELET_KUBEADM_ARGS=\"\"\n");
    kjoin_code rc = kjoin_kubelet_write(&j, &err);
    kjoin_node_join_release(&j);
    char *after = tree_of(d);
    int out = 0;
    if (rc != KJOIN_E_OUTPUT) {
        fprintf(stderr, "case %d: exit %d, want 5: %s\n", which, rc, err.msg);
        out = 5;
    } else if (!strstr(err.msg, "nothing of this run is left")) {
        fprintf(stderr, "case %d: %s\n", which, err.msg);
        out = 6;
    } else if (!before || !after || strcmp(before, after)) {
        fprintf(stderr, "case %d: the tree changed:\n%s---\n%s", which, before ? before : "", after ? after : "");
        out = 7;
    }
    free(before);
    free(after);
    return out;
}

static void test_write_onto_full_or_read_only_disk(void **state)
{
    (void)state;
    in_child(full_disk_child, 0, "the kubelet directory read-only");
    in_child(full_disk_child, 1, "the kubelet directory full");
    in_child(full_disk_child, 2, "the Kubernetes directory read-only");
}


/* Preflight after an interrupted join: only what this node's record proves
 * that join wrote is a warning; a file changed since, or another node's
 * record, is still an error. */
static void test_preflight_resumes_only_its_own(void **state)
{
    (void)state;
    char *d = tu_tmpdir(), kube[300], kubelet[300], cmd[700], boot[400], avail[500];
    kjoin_err err;
    scratch_dirs(d, kube, kubelet, sizeof(kube));
    snprintf(boot, sizeof(boot), "%s/bootstrap-kubelet.conf", kube);
    snprintf(cmd, sizeof(cmd), "chmod -R go-w %s", d);
    assert_int_equal(system(cmd), 0);
    write_scratch_node(kube, kubelet, &err, KJOIN_OK); /* the interrupted join of n1 */
    kjoin_node_spec s = {.paths = {.kubernetes_dir = kube, .kubelet_dir = kubelet}, .not_root_ok = true,
                         .ignore_preflight = "CRI,KubeletVersion,Port-10250,Swap", .systemd_dir = "/nonexistent"};
    kjoin_preflight_report r;
    snprintf(avail, sizeof(avail), "FileAvailable-%s", boot);
    for (char *c = avail; *c; c++)
        *c = *c == '/' ? '-' : *c;
    kjoin_preflight_node(&s, "n1", NULL, &r, &err);
    assert_true(has(&r, avail, false, false)); /* a warning: the join goes on with it */
    kjoin_preflight_node(&s, "n2", NULL, &r, &err);
    assert_true(has(&r, avail, true, false)); /* another node's record: an error */
    kjoin_preflight_node(&s, NULL, NULL, &r, &err);
    assert_true(has(&r, avail, true, false));
    snprintf(cmd, sizeof(cmd), "echo changed >> %s", boot);
    assert_int_equal(system(cmd), 0);
    kjoin_preflight_node(&s, "n1", NULL, &r, &err);
    assert_true(has(&r, avail, true, false)); /* changed since: an error */
    snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
    assert_int_equal(system(cmd), 0);
    free(d);
}


/* A tree under pods/ that cannot be opened (here: no descriptor left, the
 * one way root meets it) is left with the reason, never an uninitialised
 * one (ASan saw a stack over-read). */
static int unopenable_child(const char *d, int unused)
{
    char kube[600], kubelet[600], cmd[2000];
    kjoin_err err;
    (void)unused;
    scratch_dirs(d, kube, kubelet, sizeof(kube));
    write_scratch_node(kube, kubelet, &err, KJOIN_OK);
    snprintf(cmd, sizeof(cmd), "mkdir -p %s/pods/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t", kubelet);
    if (system(cmd) != 0)
        return 2;
    struct rlimit rl = {.rlim_cur = 24, .rlim_max = 24}; /* room for reset, not for the whole depth */
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 3;
    kjoin_kubelet_reset_spec rs = {.paths = {.kubernetes_dir = kube, .kubelet_dir = kubelet}, .systemd_dir = "/nonexistent"};
    kjoin_kubelet_reset_result r;
    if (kjoin_kubelet_reset(&rs, &r, &err))
        return fprintf(stderr, "reset: %s\n", err.msg), 4;
    int out = 5;
    for (size_t i = 0; i < r.n_kept; i++)
        if (strstr(r.kept[i], "/pods: cannot open ") && strstr(r.kept[i], "Too many open files"))
            out = 0;
    for (size_t i = 0; out && i < r.n_kept; i++)
        fprintf(stderr, "left: %s\n", r.kept[i]);
    kjoin_kubelet_reset_result_release(&r);
    return out;
}

static void test_reset_names_why_a_tree_stays(void **state)
{
    (void)state;
    in_child(unopenable_child, 0, "a tree that cannot be opened");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
                 cmocka_unit_test(test_kubelet_version), cmocka_unit_test(test_kubelet_words), cmocka_unit_test(test_kubelet_error_about), cmocka_unit_test(test_dual_stack_node_ip), cmocka_unit_test(test_proxy_dropins), cmocka_unit_test(test_images_import_words), cmocka_unit_test(test_run_keeps_the_newest_output), cmocka_unit_test(test_kubelet_log_gone), cmocka_unit_test(test_start_command), cmocka_unit_test(test_node_ready), cmocka_unit_test(test_record_keeps_every_name), cmocka_unit_test(test_outputs_elsewhere_reset), cmocka_unit_test(test_kubelet_dry_run),
        cmocka_unit_test(test_reset_unmounts_what_the_kubelet_mounted),
        cmocka_unit_test(test_write_onto_full_or_read_only_disk),
        cmocka_unit_test(test_preflight_resumes_only_its_own),
        cmocka_unit_test(test_reset_names_why_a_tree_stays),
        cmocka_unit_test(test_kubelet_config), cmocka_unit_test(test_flags_env),
        cmocka_unit_test(test_cluster_configuration),
        cmocka_unit_test(test_cluster_configuration_control_plane),
        cmocka_unit_test(test_preflight_control_plane),
        cmocka_unit_test(test_instance_config_by_release),
        cmocka_unit_test(test_config_render),
        cmocka_unit_test(test_state_parse), cmocka_unit_test(test_record_kubelet_inputs),
        cmocka_unit_test(test_sync_compares_by_meaning), cmocka_unit_test(test_process_start),    cmocka_unit_test(test_preflight),
        cmocka_unit_test(test_reset),
        cmocka_unit_test(test_reset_pods),
    };
    return cmocka_run_group_tests_name("node", tests, NULL, NULL);
}
