/* kubeadm's wait-control-plane: this node's API server, controller
 * manager and scheduler answer their health endpoints, at the addresses
 * and ports their static Pod manifests give them. */
#include <kjoin/private/controlplane.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <kjoin/private/kubeapi.h>
#include <kjoin/private/safedir.h>
#include <kjoin/private/transport.h>

#include "../yamldoc/yamldoc.h"
#include "internal.h"

#define logf_(s, level, ...) kjoin_logf((s)->join->log, (s)->join->log_ctx, level, __VA_ARGS__)
#define POLL_MS 500

static const struct {
    const char *name, *addr_arg, *default_port, *endpoint; /* default_port NULL: the API server's */
} checks[KJOIN_MANIFESTS_N] = {
    {"kube-apiserver", "advertise-address", NULL, "livez"},
    {"kube-controller-manager", "bind-address", "10257", "healthz"},
    {"kube-scheduler", "bind-address", "10259", "livez"},
};

/* kubeadm's getControlPlaneComponentAddressAndPort: the value of --arg in
 * the command of the Pod's container that runs name. */
static const char *arg_of(json_object *command, const char *arg)
{
    size_t n = strlen(arg);
    const char *found = NULL;
    for (size_t i = 1; i < json_object_array_length(command); i++) {
        const char *line = json_object_get_string(json_object_array_get_idx(command, i));
        if (line && !strncmp(line, "--", 2) && !strncmp(line + 2, arg, n) && line[2 + n] == '=')
            found = line + 3 + n;
    }
    return found;
}

kjoin_code kjoin_control_plane_endpoints(const char *const yaml[KJOIN_MANIFESTS_N], const size_t len[KJOIN_MANIFESTS_N],
                                         const char *advertise_address, char urls[KJOIN_MANIFESTS_N][320],
                                         kjoin_err *err)
{
    for (int i = 0; i < KJOIN_MANIFESTS_N; i++) {
        json_object *pod = NULL, *spec, *containers, *command = NULL;
        kjoin_err in;
        kjoin_code rc = kjoin_yaml__load_json(yaml[i], len[i], KJOIN_E_USAGE, &pod, &in);
        const char *path = checks[i].endpoint;
        for (size_t k = 0; !rc && json_object_object_get_ex(pod, "spec", &spec) &&
                           json_object_object_get_ex(spec, "containers", &containers) &&
                           json_object_is_type(containers, json_type_array) && k < json_object_array_length(containers);
             k++) {
            json_object *c = json_object_array_get_idx(containers, k), *cmd;
            if (json_object_object_get_ex(c, "command", &cmd) && json_object_is_type(cmd, json_type_array) &&
                json_object_array_length(cmd) > 0 &&
                !strcmp(json_object_get_string(json_object_array_get_idx(cmd, 0)) ?: "", checks[i].name)) {
                command = cmd;
                /* the release's own health path, as its liveness probe has it
                 * (1.20's scheduler: /healthz) */
                json_object *probe, *get, *p;
                if (json_object_object_get_ex(c, "livenessProbe", &probe) &&
                    json_object_object_get_ex(probe, "httpGet", &get) && json_object_object_get_ex(get, "path", &p) &&
                    json_object_is_type(p, json_type_string) && json_object_get_string(p)[0] == '/' &&
                    strspn(json_object_get_string(p) + 1, "abcdefghijklmnopqrstuvwxyz") ==
                        strlen(json_object_get_string(p) + 1) &&
                    strlen(json_object_get_string(p)) < 32)
                    path = json_object_get_string(p) + 1;
            }
        }
        const char *addr = command ? arg_of(command, checks[i].addr_arg) : NULL,
                   *port = command ? arg_of(command, "secure-port") : NULL;
        if (!addr || !*addr)
            addr = i == KJOIN_MANIFEST_APISERVER ? advertise_address : "127.0.0.1";
        char api_port[8];
        snprintf(api_port, sizeof(api_port), "%d", kjoin_api_server_port(0));
        if (!port || !*port)
            port = checks[i].default_port ? checks[i].default_port : api_port;
        if (!rc && !command)
            rc = kjoin_err_set(&in, KJOIN_E_USAGE, "no container's command starts with %s", checks[i].name);
        if (!rc && (!kjoin_is_ip(addr) || strspn(port, "0123456789") != strlen(port) || strlen(port) > 5))
            rc = kjoin_err_set(&in, KJOIN_E_USAGE, "its address or port is not one");
        bool v6 = strchr(addr, ':') != NULL;
        if (!rc)
            snprintf(urls[i], sizeof(urls[0]), "https://%s%s%s:%s/%s", v6 ? "[" : "", addr, v6 ? "]" : "", port, path);
        json_object_put(pod);
        if (rc)
            return kjoin_err_set(err, rc, "the %s manifest: %s", checks[i].name, in.msg);
    }
    return KJOIN_OK;
}

/* A health endpoint of the controller manager or the scheduler: they serve
 * it with a certificate they made for themselves at start, which nothing
 * can verify (kubeadm does not either); the answer's status is all that is
 * read, and it is this machine's own address (never proxied: pkg/transport's
 * rule for a local endpoint). */
static bool healthy_local(const char *url, char *why, size_t cap)
{
    kjoin_http_request req = {.url = url, .tls = KJOIN_TLS_INSECURE, .timeout_ms = 2000}; /* the body is not read */
    kjoin_http_response resp = {0};
    kjoin_err e;
    if (kjoin_http_send(&req, &resp, &e))
        return snprintf(why, cap, "%.300s", e.msg), false;
    bool ok = resp.status == 200;
    if (!ok)
        snprintf(why, cap, "HTTP %ld", resp.status);
    kjoin_http_response_release(&resp);
    return ok;
}

/* The API server's: verified by the cluster CA, as the node's admin
 * (admin.conf's text, read once). */
static bool healthy_apiserver(const kjoin_cp_context *s, const char *admin, size_t admin_len,
                              const char *url, char *why, size_t cap)
{
    kjoin_kubeapi *api = NULL;
    kjoin_kubeapi_response r;
    kjoin_err e;
    char server[320];
    snprintf(server, sizeof(server), "%.*s", (int)(strrchr(url, '/') - url), url);
    kjoin_kubeapi_options o = kjoin_join_context_api_options(s->join, 2000, -1);
    o.log = NULL; /* asked every second until healthy: its lines would drown the join's */
    kjoin_code rc = kjoin_cp__admin_client(admin, admin_len, server, &o, &api, &e);
    if (!rc)
        rc = kjoin_kubeapi_request(api, "GET", strrchr(url, '/'), NULL, &r, &e);
    kjoin_kubeapi_free(api);
    if (rc) {
        snprintf(why, cap, "%.300s", e.msg);
        return false;
    }
    long status = r.status;
    kjoin_kubeapi_response_release(&r);
    if (status != 200)
        snprintf(why, cap, "HTTP %ld", status);
    return status == 200;
}

kjoin_code kjoin_wait_control_plane(const kjoin_cp_context *s, kjoin_wait_control_plane_result *out,
                                    kjoin_err *err)
{
    char *yaml[KJOIN_MANIFESTS_N] = {NULL}, urls[KJOIN_MANIFESTS_N][320], path[4200], why[KJOIN_MANIFESTS_N][400];
    size_t len[KJOIN_MANIFESTS_N] = {0};
    bool bounded = false; /* timeouts.controlPlaneComponentHealthCheck ends it first */
    int64_t t0 = kjoin_now_ms(), deadline = t0 + kjoin_cp_stage_left(s, s->join->timeouts.control_plane_ms, &bounded);
    kjoin_code rc = KJOIN_OK;
    memset(out, 0, sizeof(*out));
    if (s->join->dry_run) { /* nothing was started to wait for */
        logf_(s, 0, "[dryrun] Would wait for the control plane's components on this node to be healthy");
        return KJOIN_OK;
    }
    for (int i = 0; !rc && i < KJOIN_MANIFESTS_N; i++) {
        snprintf(path, sizeof(path), "%s/%s.yaml", s->manifests_dir, checks[i].name);
        rc = kjoin_safedir_read_path(path, false, &yaml[i], &len[i], NULL, err);
    }
    if (!rc)
        rc = kjoin_control_plane_endpoints((const char *const *)yaml, len, s->advertise_address, urls, err);
    for (int i = 0; i < KJOIN_MANIFESTS_N; i++)
        free(yaml[i]);
    char *admin = NULL;
    size_t admin_len = 0;
    if (!rc)
        rc = kjoin_cp__admin_read(s->admin_kubeconfig, &admin, &admin_len, err);
    if (rc)
        return rc;
    logf_(s, 0, "[control-plane-check] Waiting for healthy control plane components");
    for (int i = 0; i < KJOIN_MANIFESTS_N; i++) {
        logf_(s, 0, "[control-plane-check] Checking %s at %s", checks[i].name, urls[i]);
        snprintf(why[i], sizeof(why[0]), "not asked yet");
    }
    for (;;) {
        int left = 0;
        for (int i = 0; i < KJOIN_MANIFESTS_N; i++) {
            if (out->healthy_ms[i])
                continue;
            bool ok = i == KJOIN_MANIFEST_APISERVER ? healthy_apiserver(s, admin, admin_len, urls[i], why[i],
                                                                        sizeof(why[0]))
                                                    : healthy_local(urls[i], why[i], sizeof(why[0]));
            if (ok) {
                out->healthy_ms[i] = kjoin_now_ms() - t0 + 1;
                logf_(s, 0, "[control-plane-check] %s is healthy after %lld ms", checks[i].name,
                      (long long)out->healthy_ms[i]);
            } else {
                left++;
            }
        }
        if (!left || kjoin_now_ms() + POLL_MS > deadline)
            break;
        kjoin_sleep_ms(POLL_MS);
    }
    kjoin_free_wiped(admin, admin_len);
    bool all = true;
    for (int i = 0; i < KJOIN_MANIFESTS_N; i++)
        all &= out->healthy_ms[i] != 0;
    if (all)
        return KJOIN_OK;
    char msg[1400];
    size_t n = 0;
    for (int i = 0; i < KJOIN_MANIFESTS_N; i++)
        if (!out->healthy_ms[i] && n < sizeof(msg))
            n += (size_t)snprintf(msg + n, sizeof(msg) - n, "%s%s at %s: %.300s", n ? "; " : "", checks[i].name,
                                  urls[i], why[i]);
    return kjoin_err_set(err, KJOIN_E_TIMEOUT, "the control plane was not healthy before %s: %s (the kubelet's log "
                         "and crictl ps -a say why)", bounded ? "timeouts.controlPlaneComponentHealthCheck" : "the deadline",
                         msg);
}
