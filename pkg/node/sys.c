/* The node's programs: found on PATH, run with a deadline, their output
 * collected. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kjoin/private/transport.h>

#include "internal.h"

extern char **environ;

/* What a program run says, at most: its last OUTPUT_MAX bytes (a journal's
 * newest lines are what matter; v1.20's kubelet prints 70 KiB of usage
 * before the error it exits with). */
#define OUTPUT_MAX (512 * 1024)

static void join_path(char *out, const char *dir, const char *name)
{
    if (snprintf(out, 4096, "%s/%s", dir, name) >= 4096)
        out[0] = '\0';
}

void kjoin_node__resolve(const kjoin_node_paths *in, kjoin_node__resolved *o)
{
    snprintf(o->kubernetes_dir, sizeof(o->kubernetes_dir), "%s",
             in->kubernetes_dir ? in->kubernetes_dir : KJOIN_NODE_KUBERNETES_DIR);
    snprintf(o->kubelet_dir, sizeof(o->kubelet_dir), "%s", in->kubelet_dir ? in->kubelet_dir : KJOIN_NODE_KUBELET_DIR);
    join_path(o->bootstrap_kubeconfig, o->kubernetes_dir, "bootstrap-kubelet.conf");
    join_path(o->kubelet_kubeconfig, o->kubernetes_dir, "kubelet.conf");
    join_path(o->ca_cert_path, o->kubernetes_dir, "pki/ca.crt");
    if (in->bootstrap_kubeconfig)
        snprintf(o->bootstrap_kubeconfig, sizeof(o->bootstrap_kubeconfig), "%s", in->bootstrap_kubeconfig);
    if (in->kubelet_kubeconfig)
        snprintf(o->kubelet_kubeconfig, sizeof(o->kubelet_kubeconfig), "%s", in->kubelet_kubeconfig);
    if (in->ca_cert_path)
        snprintf(o->ca_cert_path, sizeof(o->ca_cert_path), "%s", in->ca_cert_path);
    join_path(o->state, o->kubernetes_dir, KJOIN_NODE_STATE_NAME);
    join_path(o->config_yaml, o->kubelet_dir, "config.yaml");
    join_path(o->flags_env, o->kubelet_dir, "kubeadm-flags.env");
    join_path(o->instance_config, o->kubelet_dir, "instance-config.yaml");
    snprintf(o->systemd_unit_dir, sizeof(o->systemd_unit_dir), "%s",
             in->systemd_unit_dir ? in->systemd_unit_dir : "/etc/systemd/system");
    join_path(o->kubelet_proxy, o->systemd_unit_dir, "kubelet.service.d/20-kjoin-proxy.conf");
    join_path(o->containerd_proxy, o->systemd_unit_dir, "containerd.service.d/20-kjoin-proxy.conf");
    join_path(o->kubelet_pki, o->kubelet_dir, "pki");
}

kjoin_code kjoin_node__find_program(const char *name, char *out, size_t cap, kjoin_err *err)
{
    struct stat st;
    if (strchr(name, '/')) {
        if (stat(name, &st) != 0 || !S_ISREG(st.st_mode) || access(name, X_OK) != 0)
            return kjoin_err_set(err, KJOIN_E_USAGE, "%s is not an executable file", name);
        snprintf(out, cap, "%s", name);
        return KJOIN_OK;
    }
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p;) {
        size_t len = strcspn(p, ":");
        if (len && (int)snprintf(out, cap, "%.*s/%s", (int)len, p, name) < (int)cap && stat(out, &st) == 0 &&
            S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return KJOIN_OK;
        p += len + (p[len] == ':');
    }
    out[0] = '\0';
    return kjoin_err_set(err, KJOIN_E_USAGE, "%s not found in PATH", name);
}

/* The last non-empty line of text, for a message. */
static const char *last_line(char *text)
{
    size_t n = strlen(text);
    while (n && (text[n - 1] == '\n' || text[n - 1] == '\r'))
        text[--n] = '\0';
    const char *nl = strrchr(text, '\n');
    return nl ? nl + 1 : text;
}

kjoin_code kjoin_node__run(const char *const *argv, int64_t timeout_ms, char **out, kjoin_err *err)
{
    int fds[2];
    pid_t pid;
    posix_spawn_file_actions_t fa;
    char *buf = calloc(1, OUTPUT_MAX + 1);
    size_t len = 0;
    *out = NULL;
    if (!buf || pipe2(fds, O_CLOEXEC) != 0) {
        free(buf);
        return kjoin_err_set(err, KJOIN_E_OTHER, "cannot run %s: %s", argv[0], strerror(errno));
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        free(buf);
        return kjoin_err_set(err, KJOIN_E_OTHER, "cannot run %s: %s", argv[0], strerror(rc));
    }
    int64_t deadline = kjoin_now_ms() + timeout_ms;
    bool killed = false;
    for (;;) {
        struct pollfd p = {.fd = fds[0], .events = POLLIN};
        int64_t left = deadline - kjoin_now_ms();
        if (left <= 0) {
            kill(pid, SIGKILL);
            killed = true;
            break;
        }
        int n = poll(&p, 1, (int)(left > 1000 ? 1000 : left));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            continue;
        char chunk[4096];
        ssize_t got = read(fds[0], chunk, sizeof(chunk));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        if (len + (size_t)got > OUTPUT_MAX) { /* the oldest bytes go */
            size_t drop = len + (size_t)got - OUTPUT_MAX;
            memmove(buf, buf + drop, len - drop);
            len -= drop;
        }
        memcpy(buf + len, chunk, (size_t)got);
        len += (size_t)got;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    buf[len] = '\0';
    if (killed || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char line[200];
        kjoin_printable(line, sizeof(line), last_line(buf), false);
        free(buf);
        if (killed)
            return kjoin_err_set(err, KJOIN_E_OTHER, "%s did not finish in %lld ms", argv[0], (long long)timeout_ms);
        return kjoin_err_set(err, KJOIN_E_OTHER, "%s %s failed (%s %d)%s%s", argv[0], argv[1] ? argv[1] : "",
                             WIFEXITED(status) ? "exit" : "signal",
                             WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), *line ? ": " : "", line);
    }
    *out = buf;
    return KJOIN_OK;
}

bool kjoin_node__systemd(const char *dir)
{
    struct stat st;
    return lstat(dir ? dir : "/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode);
}

kjoin_code kjoin_node__systemctl(const char *verb, int64_t timeout_ms, kjoin_err *err)
{
    return kjoin_node__systemctl_unit(verb, "kubelet", timeout_ms, err);
}

kjoin_code kjoin_node__systemctl_unit(const char *verb, const char *unit, int64_t timeout_ms, kjoin_err *err)
{
    char prog[4096], *out = NULL;
    const char *argv[] = {prog, verb, unit, NULL};
    kjoin_code rc = kjoin_node__find_program("systemctl", prog, sizeof(prog), err);
    if (!rc)
        rc = kjoin_node__run(argv, timeout_ms, &out, err);
    free(out);
    return rc;
}

bool kjoin_node__kubelet_config(const kjoin_node__resolved *p, kjoin_kubelet_config *out)
{
    kjoin_safedir d;
    const char *name;
    char *text = NULL;
    size_t len = 0;
    kjoin_err e;
    *out = (kjoin_kubelet_config)KJOIN_KUBELET_CONFIG_DEFAULTS;
    if (kjoin_safedir_open_parent(p->config_yaml, &d, &name, &e))
        return false;
    bool ok = !kjoin_safedir_read(&d, name, 1 << 20, false, &text, &len, NULL, &e) &&
              !kjoin_kubelet_config_parse(text, len, out, &e);
    kjoin_safedir_close(&d);
    free(text);
    return ok;
}

bool kjoin_node__healthz(const kjoin_kubelet_config *k, char *why, size_t cap)
{
    if (!k->healthz_port)
        return true;
    /* The kubelet listening on every address answers on the loopback one. */
    const char *addr = k->healthz_address;
    if (!strcmp(addr, "0.0.0.0") || !*addr)
        addr = "127.0.0.1";
    else if (!strcmp(addr, "::"))
        addr = "::1";
    char url[128];
    bool v6 = strchr(addr, ':') != NULL;
    snprintf(url, sizeof(url), "http://%s%s%s:%d/healthz", v6 ? "[" : "", addr, v6 ? "]" : "", k->healthz_port);
    kjoin_http_request req = {.url = url, .tls = KJOIN_TLS_PLAIN_LOCAL, .timeout_ms = 2000, .max_body = 4096};
    kjoin_http_response resp = {0};
    kjoin_err err;
    kjoin_code rc = kjoin_http_send(&req, &resp, &err);
    bool ok = !rc && resp.status == 200;
    if (rc)
        snprintf(why, cap, "the kubelet's healthz at %s does not answer (%s)%s", url, err.msg,
                 strstr(err.msg, "connection refused") ? ": is the kubelet running?" : "");
    else if (!ok)
        snprintf(why, cap, "the kubelet's healthz at %s answers %ld", url, resp.status);
    kjoin_http_response_release(&resp);
    return ok;
}

/* mountinfo's field 5, with its octal escapes (\040 for a space) undone. */
static void unescape(const char *in, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *c = in; *c && o + 1 < cap; c++) {
        if (c[0] == '\\' && c[1] >= '0' && c[1] <= '3' && c[2] >= '0' && c[2] <= '7' && c[3] >= '0' && c[3] <= '7') {
            out[o++] = (char)((c[1] - '0') * 64 + (c[2] - '0') * 8 + (c[3] - '0'));
            c += 3;
        } else {
            out[o++] = *c;
        }
    }
    out[o] = '\0';
}

size_t kjoin_node__mounts_under(const char *dir, char (*out)[4096], size_t cap)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    char line[8192], raw[4096], point[4096];
    size_t n = 0, len = strlen(dir);
    while (f && fgets(line, sizeof(line), f)) {
        if (sscanf(line, "%*s %*s %*s %*s %4095s", raw) != 1)
            continue;
        unescape(raw, point, sizeof(point));
        if (strncmp(point, dir, len) == 0 && (point[len] == '\0' || point[len] == '/')) {
            if (out && n < cap)
                memcpy(out[n], point, strlen(point) + 1);
            n++;
        }
    }
    if (f)
        fclose(f);
    return n;
}

bool kjoin_node__is_kubelets_kubeconfig(const char *text, const kjoin_node__resolved *p, const char *server)
{
    char current[4200], line[600];
    snprintf(current, sizeof(current), "%s/kubelet-client-current.pem", p->kubelet_pki);
    snprintf(line, sizeof(line), "server: %s\n", server);
    return *server && strstr(text, line) && strstr(text, current);
}

void kjoin_node__crash_point(const char *point)
{
#ifdef KJOIN_TEST_HOOKS /* the suite's builds only: a release build never kills itself on demand */
    const char *at = getenv("KJOIN_JOIN_CRASH_AT");
    if (at && !strcmp(at, point))
        kill(getpid(), SIGKILL);
#else
    (void)point;
#endif
}

bool kjoin_node__kubelet_unit(kjoin_node__unit *u)
{
    char prog[4096], *out = NULL;
    const char *argv[] = {prog, "show", "kubelet", "--property=ActiveState,SubState,NRestarts,MainPID", NULL};
    memset(u, 0, sizeof(*u));
    if (kjoin_node__find_program("systemctl", prog, sizeof(prog), NULL) || kjoin_node__run(argv, 10000, &out, NULL))
        return false;
    for (char *line = out, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (!strncmp(line, "ActiveState=", 12))
            snprintf(u->active, sizeof(u->active), "%s", line + 12);
        else if (!strncmp(line, "SubState=", 9))
            snprintf(u->sub, sizeof(u->sub), "%s", line + 9);
        else if (!strncmp(line, "NRestarts=", 10))
            u->restarts = strtol(line + 10, NULL, 10);
        else if (!strncmp(line, "MainPID=", 8))
            u->main_pid = strtol(line + 8, NULL, 10);
    }
    free(out);
    return u->active[0] != '\0';
}

int64_t kjoin_node__process_start_ms(const char *proc_dir, long pid)
{
    char path[4200], *text = NULL, *boot = NULL;
    size_t len = 0, boot_len = 0;
    int64_t at = -1;
    const char *proc = proc_dir ? proc_dir : "/proc";
    snprintf(path, sizeof(path), "%s/%ld/stat", proc, pid);
    char stat_path[4200];
    snprintf(stat_path, sizeof(stat_path), "%s/stat", proc);
    if (pid > 0 && !kjoin_file_read(path, 4096, &text, &len, NULL) &&
        !kjoin_file_read(stat_path, 1 << 20, &boot, &boot_len, NULL)) {
        /* field 22 (starttime, clock ticks after boot) counts from after the
         * command's ")", which may hold anything */
        const char *p = strrchr(text, ')'), *btime = strstr(boot, "\nbtime ");
        unsigned long long ticks = 0;
        int field = 2;
        for (; p && *p && field < 22; p++)
            if (*p == ' ')
                field++;
        long hz = sysconf(_SC_CLK_TCK);
        if (p && field == 22 && sscanf(p, "%llu", &ticks) == 1 && btime && hz > 0)
            at = strtoll(btime + 7, NULL, 10) * 1000 + (int64_t)(ticks * 1000 / (unsigned long long)hz);
    }
    free(text), free(boot);
    return at;
}
