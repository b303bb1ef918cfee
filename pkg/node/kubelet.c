/* What kubelet-start writes: the cluster's kubelet configuration, checked,
 * and the node's flags file. */
#include <stdio.h>
#include <string.h>

#include <kjoin/private/node.h>
#include <kjoin/private/release.h>
#include <kjoin/private/patch.h>
#include <kjoin/private/util.h>

#include "../yamldoc/yamldoc.h"
#include "internal.h"

#define BAD KJOIN_E_OTHER /* the cluster's data, not the user's */

kjoin_code kjoin_kubelet_config_parse(const char *yaml, size_t len, kjoin_kubelet_config *out, kjoin_err *err)
{
    kjoin_yaml y;
    yaml_node_t *root;
    const char *port, *addr;
    kjoin_kubelet_config c = KJOIN_KUBELET_CONFIG_DEFAULTS;
    int swap = c.fail_swap_on;
    const char *what = "the kubelet configuration";
    kjoin_code rc = kjoin_yaml__load_kind(&y, yaml, len, what, "kubelet.config.k8s.io/v1beta1", "KubeletConfiguration",
                                          &root, BAD, err);
    if (rc)
        return rc;
    if (!(rc = kjoin_yaml__boolean(&y, root, what, "failSwapOn", &swap, BAD, err)))
        c.fail_swap_on = swap;
    if (!rc && !(rc = kjoin_yaml__scalar(&y, root, what, "healthzPort", &port, BAD, err)) && port) {
        char *end;
        long v = strtol(port, &end, 10);
        if (!*port || *end || v < 0 || v > 65535)
            rc = kjoin_err_set(err, BAD, "the kubelet configuration's healthzPort is not a port");
        c.healthz_port = (int)v;
    }
    if (!rc && !(rc = kjoin_yaml__scalar(&y, root, what, "healthzBindAddress", &addr, BAD, err)) && addr) {
        if (strlen(addr) >= sizeof(c.healthz_address) || strspn(addr, "0123456789abcdefABCDEF.:") != strlen(addr))
            rc = kjoin_err_set(err, BAD, "the kubelet configuration's healthzBindAddress is not an IP address");
        else if (*addr && strcmp(addr, "0.0.0.0") && strcmp(addr, "::"))
            snprintf(c.healthz_address, sizeof(c.healthz_address), "%s", addr);
    }
    kjoin_yaml__release(&y);
    if (!rc)
        *out = c;
    return rc;
}

bool kjoin_kubeadm_instance_config(int minor, int node_local_cri_socket)
{
    return kjoin_gate_on(kjoin_release_of(minor)->node_local_cri_socket, node_local_cri_socket);
}

kjoin_code kjoin_kubelet_instance_config(const char *cri_socket, char **out, kjoin_err *err)
{
    /* Go's %q, which kubeadm writes it with, for a value plain_value() took. */
    *out = NULL;
    if (strpbrk(cri_socket, "\"\\") || !kjoin_utf8_printable(cri_socket))
        return kjoin_err_set(err, KJOIN_E_USAGE, "the container runtime endpoint has quotes, backslashes or "
                                                 "bytes that are not printable UTF-8");
    size_t cap = strlen(cri_socket) + 64;
    if (!(*out = malloc(cap)))
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    snprintf(*out, cap, "containerRuntimeEndpoint: \"%s\"\n", cri_socket);
    return KJOIN_OK;
}

kjoin_code kjoin_kubelet_config_render(const char *yaml, size_t len, const kjoin_patchset *patches,
                                       const char *runtime_endpoint, char **out, kjoin_err *err)
{
    json_object *doc = NULL;
    kjoin_err in;
    *out = NULL;
    if (!runtime_endpoint && (!patches || !patches->n)) {
        if (!(*out = strndup(yaml, len)))
            return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        return KJOIN_OK;
    }
    kjoin_code rc = kjoin_yaml__load_json(yaml, len, BAD, &doc, &in);
    if (rc)
        return kjoin_err_set(err, rc, "the kubelet configuration cannot be patched: %s", in.msg);
    if (!json_object_is_type(doc, json_type_object)) {
        json_object_put(doc);
        return kjoin_err_set(err, BAD, "the kubelet configuration is not a mapping");
    }
    if (patches && (rc = kjoin_patches_apply(patches, "kubeletconfiguration", &doc, NULL, err))) {
        json_object_put(doc);
        return rc;
    }
    /* kubeadm applies instance-config.yaml last, as a patch. */
    if (runtime_endpoint)
        json_object_object_add(doc, "containerRuntimeEndpoint", json_object_new_string(runtime_endpoint));
    json_object *const docs[] = {doc};
    char *text = kjoin_yaml__from_json(docs, 1);
    json_object_put(doc);
    if (!text)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    /* The emitter's stream starts "---": the file kubeadm writes does not. */
    if (!strncmp(text, "---\n", 4))
        memmove(text, text + 4, strlen(text + 4) + 1);
    *out = text;
    return KJOIN_OK;
}

/* A flag value the environment file holds as it is: systemd's EnvironmentFile
 * and kubeadm's quoting agree on it, and the shell's word splitting of
 * $KUBELET_KUBEADM_ARGS keeps it one word. */
static bool plain_value(const char *v)
{
    for (const unsigned char *c = (const unsigned char *)v; *c; c++)
        if (*c <= ' ' || *c == '"' || *c == '\\' || *c == '$' || *c == '`' || *c == '\'' || *c == 0x7f)
            return false;
    return kjoin_utf8_printable(v); /* systemd refuses a whole environment file that is not UTF-8 */
}

typedef struct flag {
    char name[64];
    const char *value;
} flag;

static kjoin_code put(flag *flags, size_t *n, size_t cap, const char *name, size_t name_len, const char *value,
                      kjoin_err *err)
{
    if (!name_len || name_len >= sizeof(flags[0].name) || name[0] == '-' ||
        strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") < name_len)
        return kjoin_err_set(err, KJOIN_E_USAGE, "kubelet argument \"%.*s\" is not a flag name (name=value, "
                             "without dashes)", (int)(name_len > 64 ? 64 : name_len), name);
    if (!plain_value(value))
        return kjoin_err_set(err, KJOIN_E_USAGE, "kubelet argument %.*s has a value with spaces, quotes, "
                             "backslashes, \"$\", control characters or bytes that are not UTF-8, which the "
                             "kubelet's environment file cannot carry as it is",
                             (int)name_len, name);
    for (size_t i = 0; i < *n; i++)
        if (strlen(flags[i].name) == name_len && strncmp(flags[i].name, name, name_len) == 0) {
            flags[i].value = value; /* an extra argument overrides kjoin's own, as with kubeadm */
            return KJOIN_OK;
        }
    if (*n == cap)
        return kjoin_err_set(err, KJOIN_E_USAGE, "more than %zu kubelet arguments", cap);
    memcpy(flags[*n].name, name, name_len);
    flags[*n].name[name_len] = '\0';
    flags[(*n)++].value = value;
    return KJOIN_OK;
}

/* put with a NUL-terminated name. */
static kjoin_code put_flag(flag *flags, size_t *n, size_t cap, const char *name, const char *value, kjoin_err *err)
{
    return put(flags, n, cap, name, strlen(name), value, err);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const flag *)a)->name, ((const flag *)b)->name);
}

kjoin_code kjoin_kubelet_flags_env(const kjoin_node_spec *spec, const kjoin_node_name *name, const char *cri_socket,
                                   int kubeadm_minor, int kubelet_minor, const char *pause_image, const char *node_ip,
                                   char **out, kjoin_err *err)
{
    flag flags[40];
    size_t n = 0;
    char taints[2048] = "";
    kjoin_code rc = KJOIN_OK;
    *out = NULL;
    /* the cluster's kubeadm writes it; a kubelet that no longer knows it would not start */
    if (cri_socket && kubelet_minor && kubelet_minor <= KJOIN_KUBELET_RUNTIME_FLAG_UNTIL &&
        kjoin_release_of(kubeadm_minor)->kubelet_runtime_flag)
        rc = put_flag(flags, &n, 40, "container-runtime", "remote", err);
    if (!rc && cri_socket)
        rc = put_flag(flags, &n, 40, "container-runtime-endpoint", cri_socket, err);
    if (!rc && !name->is_host_name)
        rc = put_flag(flags, &n, 40, "hostname-override", name->name, err);
    if (!rc && pause_image)
        rc = put_flag(flags, &n, 40, "pod-infra-container-image", pause_image, err);
    if (!rc && spec->node_ip)
        rc = kjoin_node__node_ip_check(spec->node_ip, err);
    if (!rc && spec->proxy) /* (checked with the flags: what the join writes from the specification) */
        rc = kjoin_node__proxy_check(spec->proxy, err);
    if (!rc && spec->no_proxy && !spec->proxy)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "`no_proxy` without `proxy`");
    if (!rc && (node_ip || spec->node_ip))
        rc = put_flag(flags, &n, 40, "node-ip", node_ip ? node_ip : spec->node_ip, err);
    for (size_t i = 0; !rc && i < spec->n_taints; i++) {
        size_t used = strlen(taints);
        if ((size_t)snprintf(taints + used, sizeof(taints) - used, "%s%s", i ? "," : "", spec->taints[i]) >=
            sizeof(taints) - used)
            rc = kjoin_err_set(err, KJOIN_E_USAGE, "the taints are too long");
    }
    if (!rc && spec->n_taints)
        rc = put_flag(flags, &n, 40, "register-with-taints", taints, err);
    for (size_t i = 0; !rc && i < spec->n_extra_args; i++) {
        const char *a = spec->extra_args[i], *eq = strchr(a, '=');
        rc = put(flags, &n, 40, a, eq ? (size_t)(eq - a) : strlen(a), eq ? eq + 1 : "", err);
    }
    if (rc)
        return rc;
    qsort(flags, n, sizeof(flags[0]), by_name);
    size_t cap = 64;
    for (size_t i = 0; i < n; i++)
        cap += strlen(flags[i].name) + strlen(flags[i].value) + 4;
    char *env = malloc(cap);
    if (!env)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    size_t len = (size_t)snprintf(env, cap, "KUBELET_KUBEADM_ARGS=\"");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(env + len, cap - len, "%s--%s=%s", i ? " " : "", flags[i].name, flags[i].value);
    snprintf(env + len, cap - len, "\"\n");
    *out = env;
    return KJOIN_OK;
}
