/* preflight: kubeadm's worker checks, by kubeadm's names, so a list given to
 * ignore them means the same to both tools. */
#include <arpa/inet.h>
#include <dirent.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <kjoin/private/cri.h>
#include <kjoin/private/node.h>
#include <kjoin/private/safedir.h>
#include <kjoin/private/util.h>

#include "internal.h"

/* The oldest kubelet kjoin starts (Debian's, the oldest release tested). */
#define OLDEST_MINOR 20
/* kubeadm's skew: a kubelet at most three minors older than the API server. */
#define MAX_SKEW 3

/* kubeadm's names of them (its known CRI sockets), so that the files say what kubeadm's say. */
static const char *const runtime_sockets[] = {"/var/run/containerd/containerd.sock", "/var/run/crio/crio.sock"};

const char *kjoin_node__runtime_socket(const char *given)
{
    if (given)
        return !strncmp(given, "unix://", 7) ? given + 7 : given;
    for (size_t i = 0; i < sizeof(runtime_sockets) / sizeof(runtime_sockets[0]); i++) {
        struct stat st;
        if (stat(runtime_sockets[i], &st) == 0)
            return runtime_sockets[i];
    }
    return NULL;
}

static bool ignored(const char *list, const char *name)
{
    if (!list)
        return false;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len && *p == ' ')
            p++, len--;
        while (len && p[len - 1] == ' ')
            len--;
        if ((len == 3 && strncasecmp(p, "all", 3) == 0) || (len == n && strncasecmp(p, name, n) == 0))
            return true;
        p = end ? end + 1 : p + strlen(p);
    }
    return false;
}

static void add(kjoin_preflight_report *r, const kjoin_node_spec *s, bool error, const char *name,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void add(kjoin_preflight_report *r, const kjoin_node_spec *s, bool error, const char *name,
                const char *fmt, ...)
{
    if (r->n == KJOIN_PREFLIGHT_MAX)
        return;
    kjoin_preflight_finding *f = &r->items[r->n++];
    va_list ap;
    snprintf(f->name, sizeof(f->name), "%s", name);
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof(f->message), fmt, ap);
    va_end(ap);
    f->error = error;
    f->ignored = error && ignored(s->ignore_preflight, name);
}

/* An interrupted join of this node (killed, a machine that went down): its
 * record names this node. What it left the join goes on with. */
typedef struct resume {
    const kjoin_node__resolved *p;
    kjoin_node_state *st; /* NULL: no record of this node */
    bool unfinished;      /* its bootstrap kubeconfig is still there as written: the join did not finish */
} resume;

/* Whether the file at path is one the interrupted join left: a file it
 * wrote, still as written, or the kubeconfig its kubelet wrote. */
static bool left_by_this_join(const resume *res, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    kjoin_err e;
    if (!res->st || kjoin_safedir_read_path(path, false, &text, &len, NULL, &e))
        return false;
    /* The kubelet's own kubeconfig only while the join is unfinished: a node
     * whose join finished is joined, and a second join is refused. */
    bool ours = kjoin_written_has_data(&res->st->written, path, text, len) ||
                (res->unfinished && !strcmp(path, res->p->kubelet_kubeconfig) &&
                 kjoin_node__is_kubelets_kubeconfig(text, res->p, res->st->server));
    kjoin_free_wiped(text, len);
    return ours;
}

/* "FileAvailable--etc-kubernetes-kubelet.conf", as kubeadm names the check. */
static void file_available(kjoin_preflight_report *r, const kjoin_node_spec *s, const resume *res, const char *path)
{
    char name[4200];
    struct stat st;
    snprintf(name, sizeof(name), "FileAvailable-%s", path);
    for (char *c = name; *c; c++)
        *c = *c == '/' ? '-' : *c;
    if (lstat(path, &st) != 0)
        return;
    if (left_by_this_join(res, path))
        add(r, s, false, name, "%s was left by an interrupted join of this node (its record says so): the join goes "
                               "on with it", path);
    else
        add(r, s, true, name, "%s already exists: a node joined already (run kjoin reset first) or another tool "
                              "wrote it (move it away)", path);
}

static void check_root(kjoin_preflight_report *r, const kjoin_node_spec *s)
{
    if (!s->not_root_ok && geteuid() != 0)
        add(r, s, true, "IsPrivilegedUser", "user is not running as root: run the join as root (sudo)");
}

/* A unix socket that accepts a connection. */
static bool socket_answers(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(sa.sun_path))
        return false;
    memcpy(sa.sun_path, path, strlen(path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

static void check_cri(kjoin_preflight_report *r, const kjoin_node_spec *s)
{
    const char *path = s->cri_socket;
    if (path && strncmp(path, "unix://", 7) == 0)
        path += 7;
    if (path && *path != '/') {
        add(r, s, true, "CRI", "the container runtime socket \"%s\" is not an absolute path or unix:// URL", path);
        return;
    }
    for (size_t i = 0; !path && i < sizeof(runtime_sockets) / sizeof(runtime_sockets[0]); i++) {
        struct stat st;
        if (stat(runtime_sockets[i], &st) == 0)
            path = runtime_sockets[i];
    }
    if (!path) {
        add(r, s, true, "CRI", "no container runtime found at %s or %s: install and start containerd or CRI-O, or "
                               "name the runtime's socket", runtime_sockets[0], runtime_sockets[1]);
        return;
    }
    snprintf(r->cri_socket, sizeof(r->cri_socket), "unix://%s", path);
    if (!socket_answers(path))
        add(r, s, true, "CRI", "the container runtime at %s does not answer (%s): start it", path, strerror(errno));
}

/* kubeadm's ContainerRuntimeVersion (its 1.35 on, by the kubelet's
 * release here: the check runs before the cluster is known): the runtime
 * answers the CRI's RuntimeConfig, where the kubelet reads the cgroup
 * driver from (KEP-4033). A warning until the kubelet 1.38, which no longer
 * falls back to its configuration's cgroupDriver: there an error, as
 * kubeadm plans. */
#define RUNTIME_CONFIG_FROM_MINOR 35
#define RUNTIME_CONFIG_REQUIRED_MINOR 38
#define RUNTIME_CONFIG_MS 5000
static void check_runtime_config(kjoin_preflight_report *r, const kjoin_node_spec *s)
{
    const char *path = r->cri_socket + strlen("unix://");
    if (r->kubelet_minor < RUNTIME_CONFIG_FROM_MINOR || strncmp(r->cri_socket, "unix://", 7) || !socket_answers(path))
        return; /* not kubeadm's check there, or the CRI check said why not */
    bool implemented;
    kjoin_cri_answer said;
    kjoin_err e;
    if (kjoin_cri_implements(path, "runtime.v1.RuntimeService/RuntimeConfig", RUNTIME_CONFIG_MS, &implemented, &said,
                             &e))
        add(r, s, true, "ContainerRuntimeVersion", "could not check whether the container runtime implements the CRI "
            "method RuntimeConfig: %s", e.msg);
    else if (!implemented)
        add(r, s, r->kubelet_minor >= RUNTIME_CONFIG_REQUIRED_MINOR, "ContainerRuntimeVersion",
            "the container runtime at %s does not implement the CRI method RuntimeConfig (%s): update it to a "
            "version that does; the kubelet 1.%d no longer falls back to the cgroupDriver of its configuration "
            "(KEP-4033)", path, said.message, RUNTIME_CONFIG_REQUIRED_MINOR);
}

kjoin_code kjoin_kubelet_version_parse(const char *text, char *version, size_t cap, int *minor, kjoin_err *err)
{
    const char *v = text ? strstr(text, "Kubernetes v") : NULL;
    unsigned major = 0, mnr = 0;
    int used = 0;
    if (!v || sscanf(v + 11, "v%u.%u%n", &major, &mnr, &used) != 2 || major != 1 || mnr > 999)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the kubelet's version is not \"Kubernetes v1.N...\"");
    size_t n = strcspn(v + 11, " \t\r\n");
    if (n >= cap || n > 40)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the kubelet's version is too long");
    memcpy(version, v + 11, n);
    version[n] = '\0';
    kjoin_printable(version, cap, version, false);
    *minor = (int)mnr;
    return KJOIN_OK;
}

kjoin_code kjoin_node__kubelet_version(const char *kubelet, char *path, size_t path_cap, char *version, size_t cap,
                                       int *minor, kjoin_err *err)
{
    char *out = NULL;
    kjoin_err e;
    if (kjoin_node__find_program(kubelet ? kubelet : "kubelet", path, path_cap, err)) {
        *path = '\0'; /* (not a candidate tried on the way) */
        return KJOIN_E_USAGE;
    }
    const char *argv[] = {path, "--version", NULL};
    kjoin_code rc = kjoin_node__run(argv, 10000, &out, &e);
    if (!rc)
        rc = kjoin_kubelet_version_parse(out, version, cap, minor, &e);
    free(out);
    return rc ? kjoin_err_set(err, rc, "couldn't get the version of %s: %s", path, e.msg) : KJOIN_OK;
}

static void check_kubelet(kjoin_preflight_report *r, const kjoin_node_spec *s)
{
    kjoin_err e;
    *r->kubelet = '\0';
    if (kjoin_node__kubelet_version(s->kubelet, r->kubelet, sizeof(r->kubelet), r->kubelet_version,
                                    sizeof(r->kubelet_version), &r->kubelet_minor, &e))
        add(r, s, true, "KubeletVersion", *r->kubelet ? "%s" : "%s: install the kubelet of the cluster's release", e.msg);
    else if (r->kubelet_minor < OLDEST_MINOR)
        add(r, s, true, "KubeletVersion", "kubelet %s is older than kjoin supports (v1.%d): upgrade the kubelet",
            r->kubelet_version, OLDEST_MINOR);
}

/* Whether port can be bound at addr (NULL: every IPv4 address), as Go's
 * net.Listen binds it for kubeadm's PortOpenCheck; errno says why not. */
static bool port_free(const char *addr, int port)
{
    struct sockaddr_in6 six = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
    struct sockaddr_in four = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    bool v6 = addr && inet_pton(AF_INET6, addr, &six.sin6_addr) == 1;
    if (addr && !v6 && inet_pton(AF_INET, addr, &four.sin_addr) != 1) {
        errno = EINVAL;
        return false;
    }
    int one = 1, fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)); /* as Go's net.Listen */
    bool ok = v6 ? bind(fd, (struct sockaddr *)&six, sizeof(six)) == 0
                 : bind(fd, (struct sockaddr *)&four, sizeof(four)) == 0;
    int saved = errno;
    close(fd);
    errno = saved;
    return ok;
}

static void check_port(kjoin_preflight_report *r, const kjoin_node_spec *s, const resume *res)
{
    int port = s->kubelet_port ? s->kubelet_port : KJOIN_NODE_KUBELET_PORT;
    char name[32];
    snprintf(name, sizeof(name), "Port-%d", port);
    /* The kubelet an interrupted join of this node started: under systemd,
     * kubelet-start stops and restarts it; otherwise stop it first. */
    bool restarted = res->unfinished && kjoin_node__systemd(s->systemd_dir);
    if (!port_free(NULL, port))
        add(r, s, !restarted, name, restarted ? "port %d is in use (%s), by the kubelet an interrupted join of this node "
                                                "started: kubelet-start restarts it"
                                              : "port %d is in use (%s): stop what listens there (a kubelet still "
                                                "running?)",
            port, strerror(errno));
}

/* kubeadm's DirAvailable--etc-kubernetes-manifests: a worker's manifests
 * directory holds nothing (a control plane's Pods there would start on
 * this node); a control-plane join checks each manifest instead. */
static void check_manifests_dir(kjoin_preflight_report *r, const kjoin_node_spec *s)
{
    char path[4200], name[4300];
    snprintf(path, sizeof(path), "%s/manifests", s->paths.kubernetes_dir ? s->paths.kubernetes_dir
                                                                         : KJOIN_NODE_KUBERNETES_DIR);
    snprintf(name, sizeof(name), "DirAvailable-%s", path);
    for (char *ch = name; *ch; ch++)
        *ch = *ch == '/' ? '-' : *ch;
    DIR *d = opendir(path);
    bool used = false;
    for (struct dirent *e; d && !used && (e = readdir(d));)
        used = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    if (used)
        add(r, s, true, name, "%s is not empty: a control plane's static Pods would start on this worker (kjoin reset or "
            "kubeadm reset the node first)", path);
}

/* kubeadm's Service-Kubelet: under systemd, kubelet.service enabled, so
 * that the node comes back after a reboot (a warning, as kubeadm's). */
static void check_kubelet_service(kjoin_preflight_report *r, const kjoin_node_spec *s)
{
    char prog[4096], *out = NULL;
    kjoin_err e;
    if (!kjoin_node__systemd(s->systemd_dir) || kjoin_node__find_program("systemctl", prog, sizeof(prog), &e))
        return;
    const char *argv[] = {prog, "is-enabled", "kubelet.service", NULL};
    (void)kjoin_node__run(argv, 10000, &out, &e); /* not enabled: a non-zero exit, its word on stdout */
    if (out)
        out[strcspn(out, "\n")] = '\0';
    if (!out || (strcmp(out, "enabled") && strcmp(out, "static") && strcmp(out, "alias")))
        add(r, s, false, "Service-Kubelet", "kubelet.service is not enabled (%.40s): run systemctl enable "
            "kubelet.service, or the node does not come back after a reboot", out && *out ? out : "not found");
    free(out);
}

/* kubeadm's Hostname: the node's name resolves (a warning: the kubelet
 * and the API server reach the node by it only when they use names). */
static void check_hostname(kjoin_preflight_report *r, const kjoin_node_spec *s, const char *node_name)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    if (!node_name || getaddrinfo(node_name, NULL, &hints, &res) == 0) {
        freeaddrinfo(res);
        return;
    }
    add(r, s, false, "Hostname", "the node's name \"%s\" does not resolve (/etc/hosts, DNS): the cluster reaches the "
        "node by its address, as its kubelet reports it", node_name);
}

/* kubeadm's HTTPProxy: the API server would be reached through a proxy the
 * environment names (a warning: a proxy in the way of the cluster's own
 * traffic is rarely meant). */
static void check_http_proxy(kjoin_preflight_report *r, const kjoin_node_spec *s, const char *host)
{
    char proxy[300];
    if (host && kjoin_proxy_for(host, proxy, sizeof(proxy)))
        add(r, s, false, "HTTPProxy", "the API server at %s would be reached through the proxy %s: if that is not "
            "intended, add it to NO_PROXY", host, proxy);
}

/* Reads a small file under the proc directory; "" when unreadable. */
static void read_proc(const kjoin_node_spec *s, const char *rel, char *buf, size_t cap)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", s->proc_dir ? s->proc_dir : "/proc", rel);
    buf[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, cap - 1);
    buf[n > 0 ? n : 0] = '\0';
    close(fd);
}

/* Whether /proc/swaps lists a device (its first line is a header). */
static bool swap_on(const kjoin_node_spec *s)
{
    char buf[4096];
    read_proc(s, "swaps", buf, sizeof(buf));
    const char *nl = strchr(buf, '\n');
    return nl && nl[1] != '\0';
}

static void check_forwarding(kjoin_preflight_report *r, const kjoin_node_spec *s, const char *host)
{
    unsigned char addr[16];
    const char *rel = NULL;
    if (!host)
        return;
    if (inet_pton(AF_INET, host, addr) == 1)
        rel = "sys/net/ipv4/ip_forward";
    else if (inet_pton(AF_INET6, host, addr) == 1)
        rel = "sys/net/ipv6/conf/default/forwarding";
    if (!rel)
        return; /* a host name: kubeadm checks neither family */
    char buf[16], name[96] = "FileContent--proc-", key[64];
    read_proc(s, rel, buf, sizeof(buf));
    snprintf(key, sizeof(key), "%s", strchr(rel, '/') + 1); /* the sysctl's name: net.ipv4.ip_forward */
    for (char *c = key; *c; c++)
        *c = *c == '/' ? '.' : *c;
    snprintf(name + strlen(name), sizeof(name) - strlen(name), "%s", rel);
    for (char *c = name; *c; c++)
        *c = *c == '/' ? '-' : *c;
    if (buf[0] != '1')
        add(r, s, true, name, "/proc/%s is not set to 1: enable forwarding (sysctl -w %s=1, and in "
                              "/etc/sysctl.d to keep it)", rel, key);
}

static kjoin_code verdict(const kjoin_preflight_report *r, size_t from, kjoin_err *err)
{
    char names[400] = "";
    size_t failed = 0;
    for (size_t i = from; i < r->n; i++) {
        if (!r->items[i].error || r->items[i].ignored)
            continue;
        size_t used = strlen(names);
        snprintf(names + used, sizeof(names) - used, "%s%s", failed++ ? ", " : "", r->items[i].name);
    }
    if (failed)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%zu preflight check%s failed: %s (each is said above with its "
                             "fix; ignore one by its name only if you know it does not matter)", failed,
                             failed == 1 ? "" : "s", names);
    return KJOIN_OK;
}

kjoin_code kjoin_preflight_node(const kjoin_node_spec *spec, const char *node_name, const char *endpoint_host,
                                kjoin_preflight_report *report, kjoin_err *err)
{
    kjoin_node__resolved p;
    memset(report, 0, sizeof(*report));
    kjoin_node__resolve(&spec->paths, &p);
    resume res = {.p = &p, .st = node_name ? calloc(1, sizeof(kjoin_node_state)) : NULL};
    bool found = false;
    if (res.st && (kjoin_node__read_record(&p, &spec->paths, res.st, &found, NULL, NULL) || !found ||
                   strcmp(res.st->node_name, node_name))) {
        free(res.st); /* no record, one that is not kjoin's, or another node's: nothing to go on with */
        res.st = NULL;
    }
    /* The join removes its bootstrap kubeconfig last: still there as written, the join did not finish. */
    res.unfinished = res.st && left_by_this_join(&res, p.bootstrap_kubeconfig);
    check_root(report, spec);
    file_available(report, spec, &res, p.kubelet_kubeconfig);
    file_available(report, spec, &res, p.bootstrap_kubeconfig);
    if (!spec->control_plane) /* a control-plane node's CA is control-plane-prepare's */
        file_available(report, spec, &res, p.ca_cert_path);
    check_cri(report, spec);
    if (swap_on(spec))
        add(report, spec, false, "Swap", "swap is on: the kubelet refuses to start unless the cluster's kubelet "
                                         "configuration sets failSwapOn: false (checked after discovery)");
    check_kubelet(report, spec);
    check_runtime_config(report, spec);
    check_kubelet_service(report, spec);
    check_port(report, spec, &res);
    if (!spec->control_plane)
        check_manifests_dir(report, spec);
    free(res.st);
    check_forwarding(report, spec, endpoint_host);
    check_hostname(report, spec, node_name);
    check_http_proxy(report, spec, endpoint_host);
    return verdict(report, 0, err);
}

/* MemTotal of the proc directory's meminfo, in MiB; -1 when unreadable. */
static long mem_mib(const kjoin_node_spec *s)
{
    char buf[4096];
    read_proc(s, "meminfo", buf, sizeof(buf));
    const char *m = strstr(buf, "MemTotal:");
    long kib;
    return m && sscanf(m, "MemTotal: %ld kB", &kib) == 1 ? kib / 1024 : -1;
}

/* Whether image is among the runtime's: crictl's inspecti, or in ctr's list. */
static bool image_there(const char *tool, bool crictl, const char *sock, const char *image, const char *ctr_list)
{
    if (!crictl) {
        size_t n = strlen(image);
        for (const char *p = ctr_list; p && (p = strstr(p, image)); p += n)
            if ((p == ctr_list || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
                return true;
        return false;
    }
    const char *argv[] = {tool, "--runtime-endpoint", sock, "inspecti", "-q", "--", image, NULL};
    char *out = NULL;
    bool there = !kjoin_node__run(argv, 30000, &out, NULL);
    free(out);
    return there;
}

/* One image pulled through the runtime's client. */
typedef struct pull {
    const char *tool, *sock, *image;
    bool crictl, failed;
    kjoin_err why;
} pull;

static void *pull_one(void *arg)
{
    pull *p = arg;
    /* "--": an image name is data, never an option, whatever the cluster's imageRepository says */
    const char *crictl[] = {p->tool, "--runtime-endpoint", p->sock, "pull", "--", p->image, NULL};
    const char *ctr[] = {p->tool, "--address", p->sock + 7, "--namespace", "k8s.io", "images", "pull", "--", p->image,
                         NULL};
    char *out = NULL;
    p->failed = kjoin_node__run(p->crictl ? crictl : ctr, 300000, &out, &p->why) != KJOIN_OK;
    free(out);
    return NULL;
}

/* kubeadm's ImagePull: the images the static Pods run are in the runtime,
 * pulled when they are not, as kubeadm pulls them. kjoin speaks to the
 * runtime through its own client: crictl (any CRI runtime), else ctr
 * (containerd's, in its k8s.io namespace); with neither, a warning. */
static void check_images(kjoin_preflight_report *r, const kjoin_node_spec *s, const char *const *images, size_t n,
                         bool dry_run)
{
    char tool[4096], sock[330], *list = NULL;
    const char *endpoint = *r->cri_socket ? r->cri_socket : s->cri_socket;
    bool crictl = !kjoin_node__find_program("crictl", tool, sizeof(tool), NULL);
    if (!n || !endpoint)
        return;
    snprintf(sock, sizeof(sock), "%s%s", strncmp(endpoint, "unix://", 7) && *endpoint == '/' ? "unix://" : "", endpoint);
    if (strncmp(sock, "unix://", 7) || sock[7] != '/')
        return; /* the CRI check names a socket that is none */
    if (!crictl && (kjoin_node__find_program("ctr", tool, sizeof(tool), NULL) || !strstr(sock, "containerd"))) {
        add(r, s, false, "ImagePull", "the runtime's images cannot be seen (no crictl, and no ctr for containerd): "
            "the kubelet pulls them when it starts the Pods");
        return;
    }
    if (!crictl) {
        const char *argv[] = {tool, "--address", sock + 7, "--namespace", "k8s.io", "images", "list", "--quiet", NULL};
        kjoin_err e;
        if (kjoin_node__run(argv, 30000, &list, &e)) {
            add(r, s, true, "ImagePull", "cannot list the runtime's images: %s", e.msg);
            return;
        }
    }
    pull *pulls = calloc(n, sizeof(*pulls));
    pthread_t *threads = calloc(n, sizeof(*threads));
    bool *started = calloc(n, sizeof(*started));
    size_t n_pulls = 0;
    if (!pulls || !threads || !started) {
        add(r, s, true, "ImagePull", "out of memory");
        n = 0;
    }
    for (size_t i = 0; i < n; i++) {
        bool there = s->pull_policy != KJOIN_PULL_ALWAYS && image_there(tool, crictl, sock, images[i], list);
        if (there)
            continue;
        if (s->pull_policy == KJOIN_PULL_NEVER) {
            add(r, s, true, "ImagePull", "image %s is not in the runtime, and imagePullPolicy is Never", images[i]);
            continue;
        }
        if (dry_run) { /* the runtime's store is the node's too: nothing pulled */
            add(r, s, false, "ImagePull", "image %s is not in the runtime: the join would pull it (a dry run pulls "
                "nothing)", images[i]);
            continue;
        }
        pulls[n_pulls++] = (pull){.tool = tool, .crictl = crictl, .sock = sock, .image = images[i]};
    }
    /* kubeadm's imagePullSerial: one at a time, or all at once (a thread
     * each; a thread that cannot start pulls in this one). */
    for (size_t i = 0; i < n_pulls; i++)
        if (!s->pull_parallel || !(started[i] = pthread_create(&threads[i], NULL, pull_one, &pulls[i]) == 0))
            pull_one(&pulls[i]);
    for (size_t i = 0; i < n_pulls; i++) {
        if (started[i])
            pthread_join(threads[i], NULL);
        if (pulls[i].failed)
            add(r, s, true, "ImagePull", "failed to pull image %s: %s", pulls[i].image, pulls[i].why.msg);
    }
    free(pulls);
    free(threads);
    free(started);
    free(list);
}

kjoin_code kjoin_preflight_cluster(const kjoin_node_spec *spec, int server_minor, bool fail_swap_on,
                                   kjoin_preflight_report *report, kjoin_err *err)
{
    size_t from = report->n;
    int k = report->kubelet_minor;
    if (k && server_minor && k > server_minor)
        add(report, spec, true, "KubeletVersion", "the kubelet (%s) is newer than the control plane (v1.%d), which "
            "kubeadm's skew policy forbids: install the kubelet of the cluster's release", report->kubelet_version,
            server_minor);
    else if (k && server_minor && k + MAX_SKEW < server_minor)
        add(report, spec, true, "KubeletVersion", "the kubelet (%s) is more than %d minor releases older than the "
            "control plane (v1.%d): install a newer kubelet", report->kubelet_version, MAX_SKEW, server_minor);
    if (fail_swap_on && swap_on(spec))
        add(report, spec, true, "Swap", "swap is on and the cluster's kubelet configuration has failSwapOn: the "
                                        "kubelet would not start: turn swap off (swapoff -a, and in /etc/fstab)");
    return verdict(report, from, err);
}

/* ---- the kit other modules' checks use (a control-plane node's) ---- */

void kjoin_preflight_add(kjoin_preflight_report *r, const kjoin_node_spec *s, bool error, const char *name,
                         const char *fmt, ...)
{
    char message[sizeof(r->items[0].message)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    add(r, s, error, name, "%s", message);
}

bool kjoin_preflight_ignored(const kjoin_node_spec *s, const char *name) { return ignored(s->ignore_preflight, name); }

bool kjoin_preflight_port_free(const char *addr, int port) { return port_free(addr, port); }

void kjoin_preflight_file_available(kjoin_preflight_report *r, const kjoin_node_spec *s, const char *path)
{
    resume none = {0};
    file_available(r, s, &none, path);
}

long kjoin_preflight_mem_mib(const kjoin_node_spec *s) { return mem_mib(s); }

void kjoin_preflight_images(kjoin_preflight_report *r, const kjoin_node_spec *s, const char *const *images, size_t n,
                            bool dry_run)
{
    check_images(r, s, images, n, dry_run);
}

kjoin_code kjoin_preflight_verdict(const kjoin_preflight_report *r, size_t from, kjoin_err *err)
{
    return verdict(r, from, err);
}
