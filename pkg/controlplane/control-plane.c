/* kubeadm's control-plane step of a control-plane join: the static Pod
 * manifests of the API server, controller manager and scheduler, as the
 * cluster release's kubeadm makes them from its ClusterConfiguration
 * (cmd/kubeadm/app/phases/controlplane): the release row's rules. */
#include <kjoin/private/controlplane.h>
#include <kjoin/private/patch.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include <kjoin/private/node.h>

#include "../yamldoc/yamldoc.h"
#include "internal.h"

extern char **environ;

#define ETCD KJOIN_MANIFESTS_N /* the etcd Pod's index, after the three */
static const char *const components[KJOIN_MANIFESTS_N + 1] = {"kube-apiserver", "kube-controller-manager",
                                                              "kube-scheduler", "etcd"};

const char *kjoin_manifest_component(int i) { return components[i]; }

#define ARGS_MAX (48 + KJOIN_EXTRA_ARGS_MAX)
typedef struct arg {
    const char *name;
    char value[1100];
} arg;
typedef struct args {
    size_t n;
    arg v[ARGS_MAX];
} args;

static void set(args *a, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set(args *a, const char *name, const char *fmt, ...)
{
    size_t i = 0;
    while (i < a->n && strcmp(a->v[i].name, name))
        i++;
    if (i == a->n) {
        if (a->n == ARGS_MAX)
            return;
        a->n++;
    }
    a->v[i].name = name;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->v[i].value, sizeof(a->v[i].value), fmt, ap);
    va_end(ap);
}

static int by_name_then_value(const void *x, const void *y)
{
    const arg *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c ? c : strcmp(a->value, b->value);
}

/* The last extra argument named name, or NULL. */
static const char *last_named(const kjoin_extra_args *extra, const char *name, kjoin_arg_merge *merge)
{
    for (size_t i = extra->n; i-- > 0;)
        if (!strcmp(extra->v[i].name, name)) {
            *merge = extra->v[i].merge;
            return extra->v[i].value;
        }
    return NULL;
}

/* The command: the binary, then the arguments as the release's kubeadm
 * orders them (kjoin_args_order). Appended (kubeadm 1.37's mergeMethod):
 * the last extra argument of a name decides; without a merge method it
 * replaces the default, and every such extra argument follows the defaults
 * in its order; with one, the default's value is merged with it in place. */
static json_object *command(const char *binary, args *base, const kjoin_extra_args *extra, kjoin_args_order order)
{
    json_object *cmd = json_object_new_array();
    char line[1200];
    json_object_array_add(cmd, json_object_new_string(binary));
    args all = {0};
    for (size_t i = 0; i < base->n; i++) {
        kjoin_arg_merge merge = KJOIN_ARG_REPLACE;
        const char *over = last_named(extra, base->v[i].name, &merge);
        if (order == KJOIN_ARGS_MAP || !over) {
            all.v[all.n++] = base->v[i];
        } else if (order == KJOIN_ARGS_APPENDED && merge != KJOIN_ARG_REPLACE) {
            all.v[all.n] = base->v[i];
            snprintf(all.v[all.n++].value, sizeof(all.v[0].value), "%s%s", merge == KJOIN_ARG_PREPEND ? over : base->v[i].value,
                     merge == KJOIN_ARG_PREPEND ? base->v[i].value : over);
        }
    }
    for (size_t i = 0; order != KJOIN_ARGS_APPENDED && i < extra->n; i++) {
        if (order == KJOIN_ARGS_MAP) /* one map: the extra value replaces the default */
            set(&all, extra->v[i].name, "%s", extra->v[i].value);
        else if (all.n < ARGS_MAX)
            all.v[all.n].name = extra->v[i].name,
            snprintf(all.v[all.n++].value, sizeof(all.v[0].value), "%s", extra->v[i].value);
    }
    qsort(all.v, all.n, sizeof(all.v[0]), by_name_then_value);
    for (size_t i = 0; i < all.n; i++) {
        snprintf(line, sizeof(line), "--%s=%s", all.v[i].name, all.v[i].value);
        json_object_array_add(cmd, json_object_new_string(line));
    }
    for (size_t i = 0; order == KJOIN_ARGS_APPENDED && i < extra->n; i++) {
        if (extra->v[i].merge != KJOIN_ARG_REPLACE) /* merged into a default, or nothing to merge with */
            continue;
        snprintf(line, sizeof(line), "--%s=%s", extra->v[i].name, extra->v[i].value);
        json_object_array_add(cmd, json_object_new_string(line));
    }
    return cmd;
}

static bool is_authz_mode(const char *m, size_t len)
{
    static const char *const modes[] = {"Node", "RBAC", "Webhook", "ABAC", "AlwaysAllow", "AlwaysDeny"};
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
        if (strlen(modes[i]) == len && !strncmp(m, modes[i], len))
            return true;
    return false;
}

/* kubeadm's getAuthzModes: the known modes of the extra argument, else
 * "Node,RBAC". */
static void authz_modes(const char *given, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (const char *p = given ? given : ""; *p;) {
        size_t len = strcspn(p, ",");
        if (len && is_authz_mode(p, len) && n + len + 2 < cap)
            n += (size_t)snprintf(out + n, cap - n, "%s%.*s", n ? "," : "", (int)len, p);
        p += len + (p[len] == ',');
    }
    if (!n)
        snprintf(out, cap, "Node,RBAC");
}

static json_object *str(const char *s) { return json_object_new_string(s); }

static json_object *cpu(const char *v)
{
    json_object *r = json_object_new_object();
    json_object_object_add(r, "cpu", str(v));
    return r;
}

static json_object *probe(const char *host, const char *path, int port, bool named, int delay, int failures, int period,
                          const char *scheme)
{
    json_object *p = json_object_new_object(), *get = json_object_new_object();
    if (*host)
        json_object_object_add(get, "host", str(host));
    json_object_object_add(get, "path", str(path));
    json_object_object_add(get, "port", named ? str("probe-port") : json_object_new_int(port));
    json_object_object_add(get, "scheme", str(scheme));
    json_object_object_add(p, "failureThreshold", json_object_new_int(failures));
    json_object_object_add(p, "httpGet", get);
    if (delay)
        json_object_object_add(p, "initialDelaySeconds", json_object_new_int(delay));
    json_object_object_add(p, "periodSeconds", json_object_new_int(period));
    json_object_object_add(p, "timeoutSeconds", json_object_new_int(15));
    return p;
}

/* kubeadm's getProbeAddress: the wildcard addresses probe the default. */
static const char *probe_host(const char *addr)
{
    return !strcmp(addr, "0.0.0.0") || !strcmp(addr, "::") ? "" : addr;
}

typedef struct volume {
    char name[80];
    char path[1100];  /* on the host */
    char mount[1100]; /* in the container */
    char type[24];
    bool writable;
} volume;
typedef struct volumes {
    size_t n;
    volume v[12 + KJOIN_EXTRA_VOLUMES_MAX];
} volumes;

/* A host path mounted at mount; one of the same name is replaced, as
 * kubeadm's volumes are a map by name. */
static void mount_volume(volumes *vs, const char *name, const char *path, const char *mount, const char *type,
                         bool writable)
{
    size_t i = 0;
    while (i < vs->n && strcmp(vs->v[i].name, name))
        i++;
    if (i == sizeof(vs->v) / sizeof(vs->v[0]))
        return;
    vs->n += i == vs->n;
    volume *v = &vs->v[i];
    snprintf(v->name, sizeof(v->name), "%s", name);
    snprintf(v->path, sizeof(v->path), "%s", path);
    snprintf(v->mount, sizeof(v->mount), "%s", mount);
    snprintf(v->type, sizeof(v->type), "%s", type);
    v->writable = writable;
}

static void add_volume(volumes *vs, const char *name, const char *path, const char *type, bool writable)
{
    mount_volume(vs, name, path, path, type, writable);
}

/* The component's extraVolumes, after kubeadm's own (a name of its
 * replaces kubeadm's volume of that name). */
static void add_extra_volumes(volumes *vs, const kjoin_extra_volumes *extra)
{
    for (size_t i = 0; i < extra->n; i++)
        mount_volume(vs, extra->v[i].name, extra->v[i].host_path, extra->v[i].mount_path, extra->v[i].path_type,
                     !extra->v[i].read_only);
}

static int by_volume_name(const void *x, const void *y) { return strcmp(((const volume *)x)->name, ((const volume *)y)->name); }

/* The trust stores kubeadm mounts into the API server and controller
 * manager where the host has them. */
static const char *const trust_v120[] = {"/etc/pki", "/usr/share/ca-certificates", "/usr/local/share/ca-certificates",
                                         "/etc/ca-certificates", NULL},
                        *const trust_v131[] = {"/etc/pki/ca-trust", "/etc/pki/tls/certs", "/etc/ca-certificates",
                                               "/usr/share/ca-certificates", "/usr/local/share/ca-certificates", NULL};

static void ca_volumes(volumes *vs, bool trust_dirs)
{
    struct stat st;
    char name[80];
    for (const char *const *p = trust_dirs ? trust_v131 : trust_v120; *p; p++) {
        if (stat(*p, &st) != 0)
            continue;
        snprintf(name, sizeof(name), "%s", *p + 1);
        for (char *c = name; *c; c++)
            *c = *c == '/' ? '-' : *c;
        add_volume(vs, name, *p, "DirectoryOrCreate", false);
    }
}

static bool starts_with(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

static int by_text(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

/* kubeadm's getEtcdCertVolumes: the directories of an external etcd's
 * files, read-only, but those under a trust store it mounts (by string
 * prefix, as kubeadm compares), /etc/ssl/certs or the certificates
 * directory; a directory under another one listed goes with it; named
 * etcd-certs-N in sorted order. */
static void etcd_cert_volumes(volumes *vs, const kjoin_cluster_configuration *c, bool trust_dirs, const char *cert_dir)
{
    const char *const files[] = {c->external_ca_file, c->external_cert_file, c->external_key_file};
    char dirs[3][512];
    size_t n = 0;
    for (size_t i = 0; i < 3; i++) {
        if (!*files[i])
            continue; /* Go's filepath.Dir("") is ".", which kubeadm skips */
        char dir[512];
        snprintf(dir, sizeof(dir), "%s", files[i]);
        char *slash = strrchr(dir, '/');
        if (slash == dir)
            slash[1] = '\0';
        else if (slash)
            *slash = '\0';
        bool skip = starts_with(dir, "/etc/ssl/certs") || starts_with(dir, cert_dir);
        for (const char *const *p = trust_dirs ? trust_v131 : trust_v120; *p && !skip; p++)
            skip = starts_with(dir, *p);
        for (size_t k = 0; k < n && !skip;) {
            if (starts_with(dirs[k], dir)) /* a parent of one listed replaces it */
                memmove(dirs[k], dirs[--n], sizeof(dirs[0]));
            else if (starts_with(dir, dirs[k++]))
                skip = true;
        }
        if (!skip)
            snprintf(dirs[n++], sizeof(dirs[0]), "%s", dir);
    }
    qsort(dirs, n, sizeof(dirs[0]), by_text);
    for (size_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "etcd-certs-%zu", i);
        add_volume(vs, name, dirs[i], "DirectoryOrCreate", false);
    }
}

/* The volumes sorted by name, as kubeadm's VolumeMapToSlice; the mounts
 * too, but etcd's, which kubeadm lists in its own order (data, then
 * certificates). */
static void add_volumes(json_object *spec, json_object *container, volumes *vs, bool sort_mounts)
{
    json_object *list = json_object_new_array(), *mounts = json_object_new_array();
    for (int pass = sort_mounts; pass < 2; pass++) {
        if (pass == 1)
            qsort(vs->v, vs->n, sizeof(vs->v[0]), by_volume_name);
        for (size_t i = 0; i < vs->n; i++) {
            if (pass == 1) {
                json_object *v = json_object_new_object(), *hp = json_object_new_object();
                json_object_object_add(hp, "path", str(vs->v[i].path));
                json_object_object_add(hp, "type", str(vs->v[i].type));
                json_object_object_add(v, "hostPath", hp);
                json_object_object_add(v, "name", str(vs->v[i].name));
                json_object_array_add(list, v);
            }
            if (pass == 1 && !sort_mounts)
                continue;
            json_object *m = json_object_new_object();
            json_object_object_add(m, "mountPath", str(vs->v[i].mount));
            json_object_object_add(m, "name", str(vs->v[i].name));
            if (!vs->v[i].writable)
                json_object_object_add(m, "readOnly", json_object_new_boolean(1));
            json_object_array_add(mounts, m);
        }
    }
    json_object_object_add(container, "volumeMounts", mounts);
    json_object_object_add(spec, "volumes", list);
}

typedef struct env_var {
    char name[128];
    const char *value;
} env_var;

static int by_var_name(const void *x, const void *y) { return strcmp(((const env_var *)x)->name, ((const env_var *)y)->name); }

/* The container's environment, as kubeadm's MergeKubeadmEnvVars makes it:
 * with proxies, kubeadm's GetProxyEnvVars (every variable of env whose name
 * ends in "_proxy", any case, with a value), then the component's
 * extraEnvs (one of the same name replacing it); sorted by name when
 * sorted. NULL when there is none. */
static json_object *component_env(char *const *env, bool proxies, const kjoin_extra_envs *extra, bool sorted)
{
    env_var vars[64 + KJOIN_EXTRA_ENVS_MAX];
    size_t n = 0;
    for (char *const *e = env; proxies && e && *e && n < 64; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || !eq[1] || eq - *e < 6 || strncasecmp(eq - 6, "_proxy", 6) || (size_t)(eq - *e) >= sizeof(vars[0].name))
            continue;
        snprintf(vars[n].name, sizeof(vars[n].name), "%.*s", (int)(eq - *e), *e);
        vars[n++].value = eq + 1;
    }
    for (size_t i = 0; extra && i < extra->n; i++) {
        size_t k = 0;
        while (k < n && strcmp(vars[k].name, extra->v[i].name))
            k++;
        snprintf(vars[k].name, sizeof(vars[k].name), "%s", extra->v[i].name);
        vars[k].value = extra->v[i].value;
        n += k == n;
    }
    if (!n)
        return NULL;
    if (sorted)
        qsort(vars, n, sizeof(vars[0]), by_var_name);
    json_object *list = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        json_object *v = json_object_new_object();
        json_object_object_add(v, "name", str(vars[i].name));
        json_object_object_add(v, "value", str(vars[i].value));
        json_object_array_add(list, v);
    }
    return list;
}

typedef struct make_run {
    const kjoin_cluster_configuration *c;
    char *const *environ;
    const char *kubernetes_dir, *advertise_address;
    const kjoin_release *row; /* the release's row: its kubeadm's rules */
    char image_tag[64];
    char cert_dir[1024];
    int port;
    int startup_failures;
    const char *scheme; /* of the probes */
    const char *image;  /* the container's image, when not the component's */
} make_run;

/* kubeadm's ComponentPod around one container. */
static json_object *pod(const make_run *m, int i, json_object *container, volumes *vs, const char *endpoint,
                        const char *client_urls)
{
    json_object *p = json_object_new_object(), *meta = json_object_new_object(), *labels = json_object_new_object(),
                *spec = json_object_new_object(), *containers = json_object_new_array();
    json_object_object_add(p, "apiVersion", str("v1"));
    json_object_object_add(p, "kind", str("Pod"));
    if (endpoint || client_urls) { /* where the API server and etcd of this node are, for kubeadm */
        json_object *a = json_object_new_object();
        json_object_object_add(a, endpoint ? "kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint"
                                           : "kubeadm.kubernetes.io/etcd.advertise-client-urls",
                               str(endpoint ? endpoint : client_urls));
        json_object_object_add(meta, "annotations", a);
    }
    json_object_object_add(labels, "component", str(components[i]));
    json_object_object_add(labels, "tier", str("control-plane"));
    json_object_object_add(meta, "labels", labels);
    json_object_object_add(meta, "name", str(components[i]));
    json_object_object_add(meta, "namespace", str("kube-system"));
    json_object_object_add(p, "metadata", meta);
    json_object_array_add(containers, container);
    json_object_object_add(spec, "containers", containers);
    json_object_object_add(spec, "hostNetwork", json_object_new_boolean(1));
    if (m->row->pod_priority)
        json_object_object_add(spec, "priority", json_object_new_int(2000001000));
    json_object_object_add(spec, "priorityClassName", str("system-node-critical"));
    if (m->row->pod_seccomp) {
        json_object *sc = json_object_new_object(), *seccomp = json_object_new_object();
        json_object_object_add(seccomp, "type", str("RuntimeDefault"));
        json_object_object_add(sc, "seccompProfile", seccomp);
        json_object_object_add(spec, "securityContext", sc);
    }
    add_volumes(spec, container, vs, i != ETCD);
    json_object_object_add(p, "spec", spec);
    return p;
}

/* The container of component i: its command and probes. */
static json_object *container(const make_run *m, int i, json_object *cmd, int port, const char *host,
                              const char *live, const char *ready, const char *startup, json_object *requests)
{
    const kjoin_cluster_configuration *cc = m->c;
    const kjoin_extra_envs *const extras[] = {&cc->apiserver_envs, &cc->controller_manager_envs, &cc->scheduler_envs,
                                              &cc->etcd_envs};
    json_object *c = json_object_new_object(),
                *env = component_env(m->environ, i != ETCD, extras[i], m->row->sorted_proxy_env);
    bool named = m->row->probe_port_named;
    char image[400];
    if (m->image)
        snprintf(image, sizeof(image), "%s", m->image);
    else
        snprintf(image, sizeof(image), "%s/%s:%s", m->c->image_repository, components[i], m->image_tag);
    json_object_object_add(c, "command", cmd);
    if (env)
        json_object_object_add(c, "env", env);
    json_object_object_add(c, "image", str(image));
    json_object_object_add(c, "imagePullPolicy", str("IfNotPresent"));
    json_object_object_add(c, "livenessProbe", probe(host, live, port, named, 10, 8, 10, m->scheme));
    json_object_object_add(c, "name", str(components[i]));
    if (named) {
        json_object *ports = json_object_new_array(), *p = json_object_new_object();
        json_object_object_add(p, "containerPort", json_object_new_int(port));
        json_object_object_add(p, "name", str("probe-port"));
        json_object_object_add(p, "protocol", str("TCP"));
        json_object_array_add(ports, p);
        json_object_object_add(c, "ports", ports);
    }
    if (ready)
        json_object_object_add(c, "readinessProbe", probe(host, ready, port, named, 0, 3, 1, m->scheme));
    json_object *res = json_object_new_object();
    json_object_object_add(res, "requests", requests);
    json_object_object_add(c, "resources", res);
    json_object_object_add(c, "startupProbe", probe(host, startup ? startup : live, port, named, 10, m->startup_failures, 10,
                                                      m->scheme));
    return c;
}

static json_object *apiserver(const make_run *m)
{
    const kjoin_cluster_configuration *c = m->c;
    const char *d = m->cert_dir, *addr = m->advertise_address;
    bool v6 = strchr(addr, ':') != NULL;
    args a = {0};
    set(&a, "advertise-address", "%s", addr);
    if (m->row->apiserver_insecure_port)
        set(&a, "insecure-port", "0");
    set(&a, "enable-admission-plugins", "NodeRestriction");
    set(&a, "service-cluster-ip-range", "%s", *c->service_subnet ? c->service_subnet : "10.96.0.0/12");
    set(&a, "service-account-key-file", "%s/sa.pub", d);
    set(&a, "service-account-signing-key-file", "%s/sa.key", d);
    set(&a, "service-account-issuer", "https://kubernetes.default.svc.%s", *c->dns_domain ? c->dns_domain : "cluster.local");
    set(&a, "client-ca-file", "%s/ca.crt", d);
    set(&a, "tls-cert-file", "%s/apiserver.crt", d);
    set(&a, "tls-private-key-file", "%s/apiserver.key", d);
    set(&a, "kubelet-client-certificate", "%s/apiserver-kubelet-client.crt", d);
    set(&a, "kubelet-client-key", "%s/apiserver-kubelet-client.key", d);
    set(&a, "enable-bootstrap-token-auth", "true");
    set(&a, "secure-port", "%d", m->port);
    set(&a, "allow-privileged", "true");
    set(&a, "kubelet-preferred-address-types", "InternalIP,ExternalIP,Hostname");
    set(&a, "requestheader-username-headers", "X-Remote-User");
    set(&a, "requestheader-group-headers", "X-Remote-Group");
    set(&a, "requestheader-extra-headers-prefix", "X-Remote-Extra-");
    set(&a, "requestheader-client-ca-file", "%s/front-proxy-ca.crt", d);
    set(&a, "requestheader-allowed-names", "front-proxy-client");
    set(&a, "proxy-client-cert-file", "%s/front-proxy-client.crt", d);
    set(&a, "proxy-client-key-file", "%s/front-proxy-client.key", d);
    const char *urls = kjoin_extra_arg(&c->etcd_args, "advertise-client-urls");
    if (c->external_etcd) { /* the files where the cluster says, those it gives */
        set(&a, "etcd-servers", "%s", c->external_endpoints);
        if (*c->external_ca_file)
            set(&a, "etcd-cafile", "%s", c->external_ca_file);
        if (*c->external_cert_file && *c->external_key_file) {
            set(&a, "etcd-certfile", "%s", c->external_cert_file);
            set(&a, "etcd-keyfile", "%s", c->external_key_file);
        }
    } else {
        if (urls)
            set(&a, "etcd-servers", "%s", urls);
        else
            set(&a, "etcd-servers", "https://%s:2379", v6 ? "[::1]" : "127.0.0.1");
        set(&a, "etcd-cafile", "%s/etcd/ca.crt", d);
        set(&a, "etcd-certfile", "%s/apiserver-etcd-client.crt", d);
        set(&a, "etcd-keyfile", "%s/apiserver-etcd-client.key", d);
    }
    kjoin_extra_args extra = c->apiserver_args;
    char modes[256];
    authz_modes(kjoin_extra_arg(&extra, "authorization-mode"), modes, sizeof(modes));
    kjoin_args_order order = m->row->arguments;
    if (order == KJOIN_ARGS_MAP || m->row->authz_mode_extra) {
        /* The extra argument becomes the known modes (kubeadm's SetArgValues:
         * the last one named so, else one added after them). */
        size_t i = extra.n;
        while (i > 0 && strcmp(extra.v[i - 1].name, "authorization-mode"))
            i--;
        if (i > 0)
            snprintf(extra.v[i - 1].value, sizeof(extra.v[0].value), "%s", modes);
        else if (order != KJOIN_ARGS_MAP && extra.n < KJOIN_EXTRA_ARGS_MAX) {
            snprintf(extra.v[extra.n].name, sizeof(extra.v[0].name), "authorization-mode");
            extra.v[extra.n].merge = KJOIN_ARG_REPLACE;
            snprintf(extra.v[extra.n++].value, sizeof(extra.v[0].value), "%s", modes);
        }
        if (order == KJOIN_ARGS_MAP)
            set(&a, "authorization-mode", "%s", modes);
    } else if (!kjoin_extra_arg(&extra, "authorization-config")) {
        set(&a, "authorization-mode", "%s", modes);
    }
    volumes vs = {0};
    add_volume(&vs, "k8s-certs", d, "DirectoryOrCreate", false);
    add_volume(&vs, "ca-certs", "/etc/ssl/certs", "DirectoryOrCreate", false);
    ca_volumes(&vs, m->row->ca_trust_dirs);
    if (c->external_etcd)
        etcd_cert_volumes(&vs, c, m->row->ca_trust_dirs, d);
    add_extra_volumes(&vs, &c->apiserver_volumes);
    char endpoint[128];
    snprintf(endpoint, sizeof(endpoint), "%s%s%s:%d", v6 ? "[" : "", addr, v6 ? "]" : "", m->port);
    json_object *ctr = container(m, KJOIN_MANIFEST_APISERVER, command("kube-apiserver", &a, &extra, order), m->port,
                                 probe_host(addr), "/livez", "/readyz", NULL, cpu("250m"));
    return pod(m, KJOIN_MANIFEST_APISERVER, ctr, &vs, endpoint, NULL);
}

/* What the controller manager and the scheduler start with: their own
 * kubeconfig for everything, on localhost, leader-elected (1.20: no
 * insecure port). */
static void leader_args(const make_run *m, args *a, const char *conf)
{
    if (m->row->components_port_zero)
        set(a, "port", "0");
    set(a, "bind-address", "127.0.0.1");
    set(a, "leader-elect", "true");
    set(a, "kubeconfig", "%s", conf);
    set(a, "authentication-kubeconfig", "%s", conf);
    set(a, "authorization-kubeconfig", "%s", conf);
}

static json_object *controller_manager(const make_run *m)
{
    const kjoin_cluster_configuration *c = m->c;
    const char *d = m->cert_dir;
    char conf[1100], key[1100];
    struct stat st;
    args a = {0};
    snprintf(conf, sizeof(conf), "%s/controller-manager.conf", m->kubernetes_dir);
    snprintf(key, sizeof(key), "%s/ca.key", d);
    bool external_ca = stat(key, &st) != 0; /* kubeadm's UsingExternalCA: no ca.key, no signer */
    leader_args(m, &a, conf);
    set(&a, "client-ca-file", "%s/ca.crt", d);
    set(&a, "requestheader-client-ca-file", "%s/front-proxy-ca.crt", d);
    set(&a, "root-ca-file", "%s/ca.crt", d);
    set(&a, "service-account-private-key-file", "%s/sa.key", d);
    set(&a, "cluster-signing-cert-file", "%s%s", external_ca ? "" : d, external_ca ? "" : "/ca.crt");
    set(&a, "cluster-signing-key-file", "%s", external_ca ? "" : key);
    set(&a, "use-service-account-credentials", "true");
    set(&a, "controllers", "*,bootstrapsigner,tokencleaner");
    if (*c->pod_subnet) {
        set(&a, "allocate-node-cidrs", "true");
        set(&a, "cluster-cidr", "%s", c->pod_subnet);
        /* kubeadm's defaults when the ClusterConfiguration has none */
        set(&a, "service-cluster-ip-range", "%s", *c->service_subnet ? c->service_subnet : "10.96.0.0/12");
    }
    set(&a, "cluster-name", "%s", *c->cluster_name ? c->cluster_name : "kubernetes");
    volumes vs = {0};
    add_volume(&vs, "k8s-certs", d, "DirectoryOrCreate", false);
    add_volume(&vs, "ca-certs", "/etc/ssl/certs", "DirectoryOrCreate", false);
    add_volume(&vs, "kubeconfig", conf, "FileOrCreate", false);
    if (m->row->flexvolume_dir) {
        const char *flex = kjoin_extra_arg(&c->controller_manager_args, "flex-volume-plugin-dir");
        add_volume(&vs, "flexvolume-dir", flex ? flex : "/usr/libexec/kubernetes/kubelet-plugins/volume/exec",
                   "DirectoryOrCreate", true);
    }
    ca_volumes(&vs, m->row->ca_trust_dirs);
    add_extra_volumes(&vs, &c->controller_manager_volumes);
    const char *bind = kjoin_extra_arg(&c->controller_manager_args, "bind-address");
    json_object *ctr = container(m, KJOIN_MANIFEST_CONTROLLER_MANAGER,
                                 command("kube-controller-manager", &a, &c->controller_manager_args, m->row->arguments), 10257,
                                 bind ? probe_host(bind) : "127.0.0.1", "/healthz", NULL, NULL, cpu("200m"));
    return pod(m, KJOIN_MANIFEST_CONTROLLER_MANAGER, ctr, &vs, NULL, NULL);
}

static json_object *scheduler(const make_run *m)
{
    const kjoin_cluster_configuration *c = m->c;
    char conf[1100];
    args a = {0};
    snprintf(conf, sizeof(conf), "%s/scheduler.conf", m->kubernetes_dir);
    leader_args(m, &a, conf);
    volumes vs = {0};
    add_volume(&vs, "kubeconfig", conf, "FileOrCreate", false);
    add_extra_volumes(&vs, &c->scheduler_volumes);
    const char *bind = kjoin_extra_arg(&c->scheduler_args, "bind-address");
    bool old = !m->row->scheduler_livez; /* /healthz and no readiness probe */
    json_object *ctr = container(m, KJOIN_MANIFEST_SCHEDULER,
                                 command("kube-scheduler", &a, &c->scheduler_args, m->row->arguments),
                                 10259, bind ? probe_host(bind) : "127.0.0.1", old ? "/healthz" : "/livez",
                                 old ? NULL : "/readyz", NULL, cpu("100m"));
    return pod(m, KJOIN_MANIFEST_SCHEDULER, ctr, &vs, NULL, NULL);
}

/* Whether an etcd image's tag (after the last ':') is at least 3.6.0 as
 * kubeadm's version.ParseSemantic and AtLeast read it: "v" allowed, a
 * pre-release ("-0") below its release; a tag it cannot read is not. */
static bool etcd_at_least_3_6(const char *image)
{
    const char *tag = strrchr(image, ':');
    unsigned major = 0, minor = 0, patch = 0;
    int end = 0;
    if (!tag || sscanf(tag + 1 + (tag[1] == 'v'), "%u.%u.%u%n", &major, &minor, &patch, &end) != 3)
        return false;
    char after = tag[1 + (tag[1] == 'v') + end];
    if (after != '\0' && after != '-' && after != '+')
        return false;
    if (major != 3)
        return major > 3;
    return minor > 6 || (minor == 6 && (patch > 0 || after != '-'));
}

/* etcd's image: the cluster's etcd.local image, else the release's. */
static void etcd_image(const kjoin_cluster_configuration *c, const kjoin_release *row, char *out, size_t cap)
{
    snprintf(out, cap, "%s/etcd:%s", *c->etcd_image_repository ? c->etcd_image_repository : c->image_repository,
             *c->etcd_image_tag ? c->etcd_image_tag : row->etcd_tag);
}

/* What every manifest is made from, checked once: the release's rules,
 * the fields kjoin can carry, the version, the address. */
static kjoin_code prepare(make_run *m, int minor, const char *cert_dir, kjoin_err *err)
{
    const kjoin_cluster_configuration *c = m->c;
    m->row = kjoin_release_of(minor);
    minor = kjoin_release_minor(minor);
    if (!m->row->static_pods)
        return kjoin_err_set(err, KJOIN_E_USAGE, "kjoin writes the static Pod manifests of kubeadm 1.20 and 1.22 to 1.37, "
                             "not of 1.%d: skip this step and let that release's kubeadm write them", minor);
    if (*c->unsupported)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the cluster's ClusterConfiguration sets %s, which kjoin's static Pod "
                             "manifests do not carry yet: skip this step and let kubeadm write them", c->unsupported);
    if (!*c->version || !*c->image_repository)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the cluster's ClusterConfiguration has no %s: the images of the "
                             "static Pods are made from it", *c->version ? "imageRepository" : "kubernetesVersion");
    snprintf(m->image_tag, sizeof(m->image_tag), "%s", c->version);
    for (char *p = m->image_tag; *p; p++) /* kubeadm's KubernetesVersionToImageTag */
        *p = *p == '+' ? '_' : *p;
    snprintf(m->cert_dir, sizeof(m->cert_dir), "%s", cert_dir);
    int64_t timeout = c->control_plane_timeout_s > 0 && m->row->startup_from_cluster ? c->control_plane_timeout_s : 240;
    m->startup_failures = (int)ceil((double)timeout / 10.0);
    return KJOIN_OK;
}

kjoin_code kjoin_control_plane_images(const kjoin_cluster_configuration *c, int minor,
                                      char out[KJOIN_CP_IMAGES_N][400], kjoin_err *err)
{
    make_run m = {.c = c, .advertise_address = "127.0.0.1"};
    kjoin_code rc = prepare(&m, minor, "/", err);
    if (rc)
        return rc;
    for (int i = 0; i < KJOIN_MANIFESTS_N; i++)
        snprintf(out[i], 400, "%s/%s:%s", c->image_repository, components[i], m.image_tag);
    etcd_image(c, m.row, out[KJOIN_MANIFESTS_N], 400);
    if (c->external_etcd) /* kubeadm pulls etcd's image only for a local etcd */
        out[KJOIN_MANIFESTS_N][0] = '\0';
    /* kubeadm's pause of the release (its ImagePull check pulls it too) */
    snprintf(out[KJOIN_MANIFESTS_N + 1], 400, "%s/pause:%s", c->image_repository, m.row->pause);
    return KJOIN_OK;
}

/* The Pod as YAML, kubeadm's patches for its component applied first (as
 * kubeadm applies them to the manifest it made). */
static kjoin_code to_yaml(const kjoin_cp_context *cx, const char *component, json_object *pod, char **out,
                          kjoin_err *err)
{
    size_t applied = 0;
    const struct kjoin_patchset *patches = cx ? cx->join->patches : NULL;
    kjoin_code rc = patches ? kjoin_patches_apply(patches, component, &pod, &applied, err) : KJOIN_OK;
    if (!rc && applied)
        kjoin_logf(cx->join->log, cx->join->log_ctx, 0, "[patches] Applied %zu patch%s to target \"%s\"", applied,
                   applied == 1 ? "" : "es", component);
    *out = rc ? NULL : kjoin_yaml__from_json(&pod, 1);
    json_object_put(pod);
    return rc || *out ? rc : kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
}

kjoin_code kjoin_control_plane_manifests_make(const kjoin_cp_context *cx, char *const *env,
                                             char *out[KJOIN_MANIFESTS_N], kjoin_err *err)
{
    make_run m = {.c = cx->cluster, .port = cx->bind_port, .scheme = "HTTPS", .environ = env ? env : environ,
                  .kubernetes_dir = cx->kubernetes_dir, .advertise_address = cx->advertise_address};
    for (int i = 0; i < KJOIN_MANIFESTS_N; i++)
        out[i] = NULL;
    kjoin_code rc = prepare(&m, cx->minor, cx->cert_dir, err);
    if (rc)
        return rc;
    json_object *(*const make[KJOIN_MANIFESTS_N])(const make_run *) = {apiserver, controller_manager, scheduler};
    for (int i = 0; !rc && i < KJOIN_MANIFESTS_N; i++)
        rc = to_yaml(cx, components[i], make[i](&m), &out[i], err);
    for (int i = 0; rc && i < KJOIN_MANIFESTS_N; i++) {
        free(out[i]);
        out[i] = NULL;
    }
    return rc;
}

/* kubeadm's etcd Pod (phases/etcd/local.go, GetEtcdPodSpec): a member of
 * the stacked etcd on this node's address, joining the members given. */
kjoin_code kjoin_etcd_manifest_make(const kjoin_cp_context *cx, const kjoin_etcd_member *members, size_t n_members,
                                    char **out, kjoin_err *err)
{
    const kjoin_cluster_configuration *c = cx->cluster;
    make_run m = {.c = c, .port = 2381, .scheme = "HTTP", .advertise_address = cx->advertise_address};
    *out = NULL;
    kjoin_code rc = prepare(&m, cx->minor, cx->cert_dir, err);
    if (rc)
        return rc;
    const char *addr = cx->advertise_address, *d = m.cert_dir, *data = *c->etcd_data_dir ? c->etcd_data_dir : "/var/lib/etcd";
    bool v6 = strchr(addr, ':') != NULL;
    const char *local = v6 ? "[::1]" : "127.0.0.1";
    char client[128], peer[128], certs[1100], image[400];
    snprintf(client, sizeof(client), "https://%s%s%s:2379", v6 ? "[" : "", addr, v6 ? "]" : "");
    snprintf(peer, sizeof(peer), "https://%s%s%s:2380", v6 ? "[" : "", addr, v6 ? "]" : "");
    snprintf(certs, sizeof(certs), "%s/etcd", d);
    etcd_image(c, m.row, image, sizeof(image));
    m.image = image;
    args a = {0};
    set(&a, "name", "%s", cx->join->name.name);
    set(&a, "listen-client-urls", "https://%s:2379,%s", local, client);
    set(&a, "advertise-client-urls", "%s", client);
    set(&a, "listen-peer-urls", "%s", peer);
    set(&a, "initial-advertise-peer-urls", "%s", peer);
    set(&a, "data-dir", "%s", data);
    set(&a, "cert-file", "%s/etcd/server.crt", d);
    set(&a, "key-file", "%s/etcd/server.key", d);
    set(&a, "trusted-ca-file", "%s/etcd/ca.crt", d);
    set(&a, "client-cert-auth", "true");
    set(&a, "peer-cert-file", "%s/etcd/peer.crt", d);
    set(&a, "peer-key-file", "%s/etcd/peer.key", d);
    set(&a, "peer-trusted-ca-file", "%s/etcd/ca.crt", d);
    set(&a, "peer-client-cert-auth", "true");
    set(&a, "snapshot-count", "10000");
    set(&a, "listen-metrics-urls", "http://%s:2381", local);
    if (m.row->etcd_corrupt_check || m.row->etcd_watch_progress) {
        /* etcd 3.6 took them out of experimental-*: kubeadm asks the tag */
        bool plain = m.row->etcd_flags_by_version && etcd_at_least_3_6(image);
        if (m.row->etcd_corrupt_check && plain)
            set(&a, "feature-gates", "InitialCorruptCheck=true");
        else if (m.row->etcd_corrupt_check)
            set(&a, "experimental-initial-corrupt-check", "true");
        if (m.row->etcd_watch_progress)
            set(&a, plain ? "watch-progress-notify-interval" : "experimental-watch-progress-notify-interval", "5s");
    }
    if (!n_members) {
        set(&a, "initial-cluster", "%s=%s", cx->join->name.name, peer);
    } else {
        char list[1100];
        size_t n = 0;
        for (size_t i = 0; i < n_members && n < sizeof(list); i++) {
            char hex[24] = ""; /* kubeadm's name for a member without one (etcdutil's AddMember) */
            if (!*members[i].name)
                snprintf(hex, sizeof(hex), "%llx", strtoull(members[i].id, NULL, 10));
            n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s=%s", i ? "," : "",
                                  *members[i].name ? members[i].name : hex, members[i].peer_url);
        }
        if (n >= sizeof(list))
            return kjoin_err_set(err, KJOIN_E_OTHER, "the etcd members do not fit one flag");
        set(&a, "initial-cluster", "%s", list);
        set(&a, "initial-cluster-state", "existing");
    }
    volumes vs = {0};
    add_volume(&vs, "etcd-data", data, "DirectoryOrCreate", true);
    add_volume(&vs, "etcd-certs", certs, "DirectoryOrCreate", true);
    json_object *req = json_object_new_object();
    json_object_object_add(req, "cpu", str("100m"));
    if (m.row->etcd_ephemeral_storage)
        json_object_object_add(req, "ephemeral-storage", str("100Mi"));
    json_object_object_add(req, "memory", str("100Mi"));
    static const char *const paths[][3] = { /* liveness, readiness, startup */
        [KJOIN_ETCD_HEALTH] = {"/health", NULL, "/health"},
        [KJOIN_ETCD_HEALTH_SERIALIZABLE] = {"/health?exclude=NOSPACE&serializable=true", NULL, "/health?serializable=false"},
        [KJOIN_ETCD_LIVEZ] = {"/livez", "/readyz", "/readyz"},
    };
    const char *const *probes = paths[m.row->etcd_probes];
    json_object *ctr = container(&m, ETCD, command("etcd", &a, &c->etcd_args, m.row->arguments), 2381,
                                 v6 ? "::1" : "127.0.0.1", probes[0], probes[1], probes[2], req);
    return to_yaml(cx, "etcd", pod(&m, ETCD, ctr, &vs, NULL, client), out, err);
}

/* A manifest as the kubelet reads it, without what serializing a Pod adds
 * (status: {}, creationTimestamp: null); NULL when it is not one. */
static json_object *pod_of(const char *text, size_t len)
{
    json_object *o = NULL, *meta;
    kjoin_err ignored;
    if (kjoin_yaml__load_json(text, len, KJOIN_E_USAGE, &o, &ignored) || !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        return NULL;
    }
    json_object_object_del(o, "status");
    if (json_object_object_get_ex(o, "metadata", &meta) && json_object_is_type(meta, json_type_object))
        json_object_object_del(meta, "creationTimestamp");
    return o;
}

/* Whether the manifest in d is the same Pod as made (kubeadm's own
 * serialization of it too): kept, not written. Another one is refused
 * unless force. */
static kjoin_code judge_existing(const char *dir_path, bool force, const kjoin_safedir *d, const char *name,
                                 const char *made, bool *same, kjoin_err *err)
{
    char *text = NULL;
    size_t len = 0;
    bool missing = false;
    *same = false;
    kjoin_code rc = kjoin_safedir_read(d, name, 1 << 20, false, &text, &len, &missing, err);
    if (rc)
        return missing ? KJOIN_OK : rc;
    json_object *there = pod_of(text, len), *ours = pod_of(made, strlen(made));
    *same = there && ours && json_object_equal(there, ours);
    json_object_put(there);
    json_object_put(ours);
    free(text);
    if (!*same && !force)
        return kjoin_err_set(err, KJOIN_E_OUTPUT, "%s/%s is already there and is another Pod than this node's; it is "
                             "left as it is (remove it, or ask for it to be replaced)", dir_path, name);
    return KJOIN_OK;
}

kjoin_code kjoin_cp__write_manifests(const char *record_dir, const char *dir_path, const char *const *names,
                                     char *const *yaml, size_t n, bool force, bool *kept, const kjoin_cp_context *cx,
                                     kjoin_err *err)
{
    cp_file files[KJOIN_MANIFESTS_N + 1];
    kjoin_safedir dir = {.fd = -1};
    struct stat st;
    kjoin_code rc = KJOIN_OK;
    if (n > sizeof(files) / sizeof(files[0]))
        return kjoin_err_set(err, KJOIN_E_OTHER, "too many manifests at once");
    /* What is there is judged first; a directory not there yet has nothing. */
    if (lstat(dir_path, &st) == 0)
        rc = kjoin_safedir_open(dir_path, 0, &dir, err);
    for (size_t i = 0; i < n; i++) {
        kept[i] = false;
        if (!rc && dir.fd >= 0)
            rc = judge_existing(dir_path, force, &dir, names[i], yaml[i], &kept[i], err);
        files[i] = (cp_file){names[i], 0600, kept[i] ? NULL : yaml[i], strlen(yaml[i])};
    }
    kjoin_safedir_close(&dir);
    if (!rc) /* replacing was judged above */
        rc = kjoin_cp__write_files(record_dir, dir_path, files, n, true, NULL, cx, err);
    return rc;
}

kjoin_code kjoin_control_plane_manifests(const kjoin_cp_context *cx, kjoin_control_plane_manifests_result *out,
                                        kjoin_err *err)
{
    char *yaml[KJOIN_MANIFESTS_N], names[KJOIN_MANIFESTS_N][64];
    const char *name_of[KJOIN_MANIFESTS_N];
    memset(out, 0, sizeof(*out));
    kjoin_code rc = kjoin_control_plane_manifests_make(cx, NULL, yaml, err);
    if (rc)
        return rc;
    for (int i = 0; i < KJOIN_MANIFESTS_N; i++) {
        snprintf(names[i], sizeof(names[i]), "%s.yaml", components[i]);
        name_of[i] = names[i];
    }
    char dir[1400];
    rc = kjoin_join_context_write_path(cx->join, cx->manifests_dir, dir, sizeof(dir), err);
    if (!rc)
        rc = kjoin_cp__write_manifests(kjoin_cp_record_dir(cx), dir, name_of, yaml, KJOIN_MANIFESTS_N, cx->force,
                                       out->kept, cx, err);
    for (int i = 0; i < KJOIN_MANIFESTS_N; i++) {
        out->written[i] = !rc && !out->kept[i];
        if (rc)
            out->kept[i] = false;
        free(yaml[i]);
    }
    return rc;
}
