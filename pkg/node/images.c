/* Offline images: the images a node needs before its kubelet can run a Pod
 * (the runtime's sandbox image, kube-proxy's), which of them the runtime
 * lacks, and an archive (docker or OCI) imported into containerd's k8s.io
 * namespace, where the kubelet's images live, with containerd's own ctr. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include <kjoin/private/cluster.h>
#include <kjoin/private/cri.h>
#include <kjoin/private/kubeapi.h>
#include <kjoin/private/release.h>
#include <kjoin/private/util.h>

#include "internal.h"

#define ASK_MS 5000

kjoin_code kjoin_node__images_check(const char *archive, char *ctr, size_t cap, kjoin_err *err)
{
    struct stat st;
    if (archive[0] != '/')
        return kjoin_err_set(err, KJOIN_E_USAGE, "`images` \"%.200s\" must be an absolute path", archive);
    int fd = open(archive, O_RDONLY | O_CLOEXEC);
    bool regular = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
    if (fd >= 0)
        close(fd);
    if (!regular)
        return kjoin_err_set(err, KJOIN_E_USAGE, "`images` %.200s is not a readable image archive (a regular file, "
                                                 "not empty)", archive);
    kjoin_err in;
    if (kjoin_node__find_program("ctr", ctr, cap, &in))
        return kjoin_err_set(err, KJOIN_E_USAGE, "`images` needs containerd's ctr to import %.200s: %s", archive, in.msg);
    return KJOIN_OK;
}

size_t kjoin_node__ctr_imported(const char *output, char *names, size_t cap)
{
    size_t n = 0;
    if (cap)
        *names = '\0';
    for (const char *line = output; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        /* ctr's "unpacking NAME (sha256:...)...done" */
        if (len > 10 && !strncmp(line, "unpacking ", 10)) {
            const char *name = line + 10, *sp = memchr(name, ' ', len - 10);
            size_t nl = sp ? (size_t)(sp - name) : len - 10, used = strlen(names);
            if (nl && used + nl + 3 < cap)
                snprintf(names + used, cap - used, "%s%.*s", used ? ", " : "", (int)nl, name);
            n++;
        }
        line = end ? end + 1 : NULL;
    }
    return n;
}

kjoin_code kjoin_node__images_import(const char *ctr, const char *cri_socket, const char *archive, int64_t timeout_ms,
                                     char *names, size_t cap, size_t *n, kjoin_err *err)
{
    char *out = NULL;
    const char *argv[] = {ctr, "--address", kjoin_node__runtime_socket(cri_socket), "--namespace", "k8s.io", "images", "import",
                          archive, NULL};
    kjoin_err in;
    *n = 0;
    if (kjoin_node__run(argv, timeout_ms, &out, &in))
        return kjoin_err_set(err, KJOIN_E_OTHER, "containerd did not import %.200s: %s", archive, in.msg);
    *n = kjoin_node__ctr_imported(out ? out : "", names, cap);
    free(out);
    return KJOIN_OK;
}

kjoin_code kjoin_node__images_missing(const char *cri_socket, const char *const *images, size_t n, char *missing,
                                      size_t cap, kjoin_err *err)
{
    if (cap)
        *missing = '\0';
    for (size_t i = 0; i < n; i++) {
        bool present = false;
        if (!images[i] || !*images[i])
            continue;
        kjoin_code rc = kjoin_cri_image_present(kjoin_node__runtime_socket(cri_socket), images[i], ASK_MS, &present, err);
        if (rc)
            return rc;
        size_t used = strlen(missing);
        if (!present && used + strlen(images[i]) + 3 < cap)
            snprintf(missing + used, cap - used, "%s%s", used ? ", " : "", images[i]);
    }
    return KJOIN_OK;
}

static void add_image(kjoin_node_images *out, const char *image, const char *source)
{
    if (!image || !*image || strlen(image) >= sizeof(out->items[0].image) || !kjoin_utf8_printable(image))
        return;
    for (size_t i = 0; i < out->n; i++)
        if (!strcmp(out->items[i].image, image))
            return;
    if (out->n == KJOIN_NODE_IMAGES_MAX) {
        out->truncated = true;
        return;
    }
    snprintf(out->items[out->n].image, sizeof(out->items[0].image), "%s", image);
    snprintf(out->items[out->n++].source, sizeof(out->items[0].source), "%s", source);
}

/* Each container's image of a Pod template's containers or initContainers. */
static void add_containers(kjoin_node_images *out, json_object *spec, const char *key, const char *source)
{
    json_object *list = kjoin_json_at(spec, key);
    for (size_t i = 0; list && json_object_is_type(list, json_type_array) && i < json_object_array_length(list); i++)
        add_image(out, kjoin_json_str(json_object_array_get_idx(list, i), "image"), source);
}

/* kubeadm's default when the cluster names no imageRepository. */
static const char *repository(const char *image_repository)
{
    return *image_repository ? image_repository : "registry.k8s.io";
}

bool kjoin_node__pause_image(int minor, const char *image_repository, char *out, size_t cap)
{
    const kjoin_release *row = kjoin_release_of(minor);
    *out = '\0';
    if (!row || !row->pause)
        return false;
    (void)!snprintf(out, cap, "%.250s/pause:%.60s", repository(image_repository), row->pause);
    return true;
}

void kjoin_node__kube_proxy_image(const kjoin_cluster_configuration *cc, char *out, size_t cap)
{
    *out = '\0';
    if (*cc->version)
        (void)!snprintf(out, cap, "%.240s/kube-proxy:%.60s", repository(cc->image_repository), cc->version);
}

kjoin_code kjoin_node_images_list(kjoin_kubeapi *api, kjoin_node_images *out, kjoin_err *err)
{
    kjoin_cluster_configuration cc;
    bool found = false;
    char source[200], image[320];
    memset(out, 0, sizeof(*out));
    kjoin_code rc = kjoin_cluster_configuration_get(api, &cc, &found, err);
    if (rc)
        return rc;
    if (found && kjoin_node__pause_image(cc.minor, cc.image_repository, image, sizeof(image))) {
        snprintf(source, sizeof(source), "sandbox (kubeadm 1.%d's pause; the runtime's own may differ)", cc.minor);
        add_image(out, image, source);
    }
    kjoin_kubeapi_response r = {0};
    if ((rc = kjoin_kubeapi_request(api, "GET", "/apis/apps/v1/daemonsets", NULL, &r, err)) ||
        (rc = kjoin_kubeapi_check(&r, "list daemonsets", err))) {
        kjoin_kubeapi_response_release(&r);
        return rc;
    }
    rc = kjoin_node__daemonset_images(r.body, r.len, out, err);
    kjoin_kubeapi_response_release(&r);
    return rc;
}

kjoin_code kjoin_node__daemonset_images(const char *body, size_t len, kjoin_node_images *out, kjoin_err *err)
{
    char source[200];
    json_object *list = kjoin_json_whole(body, len), *items = list ? kjoin_json_at(list, "items") : NULL;
    if (!items || !json_object_is_type(items, json_type_array)) {
        json_object_put(list);
        return kjoin_err_set(err, KJOIN_E_OTHER, "the list of daemonsets is not a list");
    }
    for (size_t i = 0; i < json_object_array_length(items); i++) {
        json_object *ds = json_object_array_get_idx(items, i), *meta = kjoin_json_at(ds, "metadata"),
                    *tmpl = kjoin_json_at(kjoin_json_at(ds, "spec"), "template"), *spec = kjoin_json_at(tmpl, "spec");
        const char *ns = meta ? kjoin_json_str(meta, "namespace") : NULL, *name = meta ? kjoin_json_str(meta, "name") : NULL;
        (void)!snprintf(source, sizeof(source), "DaemonSet %.80s/%.100s", ns ? ns : "?", name ? name : "?");
        if (!kjoin_utf8_printable(source) || !spec)
            continue;
        add_containers(out, spec, "initContainers", source);
        add_containers(out, spec, "containers", source);
    }
    json_object_put(list);
    return KJOIN_OK;
}

kjoin_code kjoin_join_check_images(kjoin_kubeapi *api, const char *cri_socket, kjoin_join_check *out, kjoin_err *err)
{
    kjoin_cluster_configuration cc;
    bool found = false;
    const char *sock = kjoin_node__runtime_socket(cri_socket);
    out->images_checked = false;
    if (!sock)
        return kjoin_err_set(err, KJOIN_E_USAGE, "no container runtime's socket to ask for its images");
    kjoin_code rc = kjoin_cluster_configuration_get(api, &cc, &found, err);
    if (!rc && found)
        kjoin_node__kube_proxy_image(&cc, out->images_kube_proxy, sizeof(out->images_kube_proxy));
    if (!rc)
        rc = kjoin_cri_sandbox_image(sock, ASK_MS, out->images_sandbox, sizeof(out->images_sandbox), err);
    const char *images[] = {out->images_sandbox, out->images_kube_proxy};
    if (!rc)
        rc = kjoin_node__images_missing(sock, images, 2, out->images_missing, sizeof(out->images_missing), err);
    out->images_checked = !rc;
    return rc;
}
