/* reset's stop of what the kubelet started: every Pod of the container
 * runtime the join's kubelet used (a control-plane node's static Pods hold
 * the cluster's ports and, the controller manager, its CA key), through the
 * runtime's own client, as kubeadm reset removes them; never a container
 * that is no Pod. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kjoin/private/node.h>
#include <kjoin/private/safedir.h>

#include "internal.h"

/* The value after key on one of text's lines ("key: value" or
 * "--key=value"), trimmed of quotes, into out. */
static bool value_after(const char *text, const char *key, char *out, size_t cap)
{
    for (const char *p = text; p && (p = strstr(p, key)); p += strlen(key)) {
        if (p != text && p[-1] != '\n' && p[-1] != ' ' && p[-1] != '"')
            continue;
        const char *v = p + strlen(key);
        v += strspn(v, " \"'");
        size_t n = strcspn(v, " \"'\n");
        if (n && n < cap) {
            memcpy(out, v, n);
            out[n] = '\0';
            return true;
        }
    }
    return false;
}

void kjoin_reset_runtime(const kjoin_node_paths *paths, char *sock, size_t cap)
{
    kjoin_node__resolved p;
    const struct {
        const char *path, *key;
    } *f, files[] = {{p.instance_config, "containerRuntimeEndpoint:"}, {p.flags_env, "--container-runtime-endpoint="}};
    kjoin_node__resolve(paths, &p);
    sock[0] = '\0';
    for (f = files; f < files + 2 && !sock[0]; f++) {
        char *text = NULL;
        size_t len = 0;
        if (kjoin_safedir_read_path(f->path, false, &text, &len, NULL, NULL))
            continue;
        if (!value_after(text, f->key, sock, cap) || strncmp(sock, "unix:///", 8))
            sock[0] = '\0'; /* only a local socket of the runtime's */
        free(text);
    }
}

/* How many lines of out are not blank (one ID a line). */
static size_t lines(const char *out)
{
    size_t n = 0;
    for (const char *p = out; p && *p;) {
        size_t len = strcspn(p, "\n");
        n += strspn(p, " \t") < len;
        p += len + (p[len] == '\n');
    }
    return n;
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* crictl (any CRI runtime): the Pods removed, as kubeadm reset removes them. */
static kjoin_code by_crictl(const char *tool, const char *sock, size_t *n, kjoin_err *err)
{
    const char *list[] = {tool, "--runtime-endpoint", sock, "pods", "--quiet", NULL},
               *rmp[] = {tool, "--runtime-endpoint", sock, "rmp", "--force", "--all", NULL};
    char *out = NULL;
    kjoin_err e;
    kjoin_code rc = kjoin_node__run(list, 30000, &out, &e);
    *n = rc ? 0 : lines(out);
    free(out);
    out = NULL;
    if (!rc && *n && (rc = kjoin_node__run(rmp, 120000, &out, &e)))
        kjoin_err_set(err, rc, "crictl could not remove the Pods: %s", e.msg);
    else if (rc)
        kjoin_err_set(err, rc, "crictl could not list the Pods: %s", e.msg);
    free(out);
    return rc;
}

/* Whether id is one of the lines of ids. */
static bool listed(const char *ids, const char *id)
{
    size_t n = strlen(id);
    for (const char *p = ids; p && *p;) {
        size_t len = strcspn(p, "\n");
        if (len == n && !strncmp(p, id, n))
            return true;
        p += len + (p[len] == '\n');
    }
    return false;
}

/* containerd's ctr: the tasks of the Pods, and only theirs, killed, then
 * waited for (the containers stay, stopped, for the runtime to clean). A
 * Pod's sandbox and containers are the ones containerd's CRI made, which
 * carry its label io.cri-containerd.kind; a container someone ran in the
 * k8s.io namespace with ctr or nerdctl is no Pod, and is left running. */
static kjoin_code by_ctr(const char *tool, const char *sock, size_t *n, kjoin_err *err)
{
    const char *pods[] = {tool, "--address", sock + 7, "--namespace", "k8s.io", "containers", "list", "--quiet",
                          "labels.\"io.cri-containerd.kind\"", NULL},
               *list[] = {tool, "--address", sock + 7, "--namespace", "k8s.io", "tasks", "list", NULL};
    char *ids = NULL, *out = NULL;
    kjoin_err e;
    *n = 0;
    if (kjoin_node__run(pods, 30000, &ids, &e))
        return kjoin_err_set(err, KJOIN_E_OTHER, "ctr could not list the Pods' containers: %s", e.msg);
    kjoin_code rc = KJOIN_OK;
    for (int round = 0; round < 150; round++) { /* 30 s */
        size_t running = 0;
        if (kjoin_node__run(list, 30000, &out, &e)) {
            rc = kjoin_err_set(err, KJOIN_E_OTHER, "ctr could not list the Pods' containers: %s", e.msg);
            break;
        }
        /* "TASK PID STATUS" lines: each of a Pod's still RUNNING (or PAUSED) is killed */
        for (char *line = strchr(out, '\n'); line && *++line; line = strchr(line, '\n')) {
            char id[200], status[32];
            if (sscanf(line, "%199s %*s %31s", id, status) != 2 || !strcmp(status, "STOPPED") || !listed(ids, id))
                continue;
            running++;
            const char *kill[] = {tool, "--address", sock + 7, "--namespace", "k8s.io", "tasks", "kill", "--signal",
                                  "SIGKILL", "--", id, NULL};
            char *ignored = NULL;
            kjoin_node__run(kill, 10000, &ignored, NULL);
            free(ignored);
        }
        free(out);
        out = NULL;
        if (!round)
            *n = running;
        if (!running)
            break;
        sleep_ms(200);
        if (round == 149)
            rc = kjoin_err_set(err, KJOIN_E_TIMEOUT, "the Pods' containers still run 30 s after they were killed");
    }
    free(ids);
    return rc;
}

kjoin_code kjoin_reset_pods(const char *sock, size_t *n, kjoin_err *err)
{
    char tool[4096];
    *n = 0;
    if (!sock || strncmp(sock, "unix:///", 8))
        return kjoin_err_set(err, KJOIN_E_OTHER, "no runtime socket of the join's kubelet");
    if (!kjoin_node__find_program("crictl", tool, sizeof(tool), NULL))
        return by_crictl(tool, sock, n, err);
    if (strstr(sock, "containerd") && !kjoin_node__find_program("ctr", tool, sizeof(tool), NULL))
        return by_ctr(tool, sock, n, err);
    return kjoin_err_set(err, KJOIN_E_OTHER, "no client for the runtime at %s (crictl, or ctr for containerd): its "
                         "Pods still run; stop them with the runtime's own tools", sock);
}
