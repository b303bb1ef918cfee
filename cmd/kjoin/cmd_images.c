/* kjoin images list: the images a node of the cluster pulls, for an image
 * archive made before a node has a way to a registry (kjoin join --images). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <kjoin/kubeapi.h>
#include <kjoin/node.h>
#include <kjoin/util.h>

#include "cli.h"
#include "verbs.h"

static const cli_opt opts[] = {
    CLI_ADMIN_OPTS("deadline for the whole command (default 1m)"),
};

static const cli_verb images_verb = {
    .usage = "kjoin images list [flags]",
    .summary = "List the images a node of the cluster pulls before its Pods run: the sandbox\n"
               "(pause) image the cluster's kubeadm release names, and each DaemonSet's (kube-proxy,\n"
               "the network plugin), each once, with where it comes from. Put them in an archive\n"
               "(docker save, or skopeo) for kjoin join --images on a node without a way to a\n"
               "registry. Needs get on kube-system's kubeadm-config and list on daemonsets.",
    .opts = opts,
    .n_opts = sizeof(opts) / sizeof(opts[0]),
    .min_args = 1,
    .max_args = 1,
};

static kjoin_code on_opt(void *ctx, int id, const char *arg, kjoin_err *err)
{
    return cli_admin_opt(ctx, id, arg, err);
}

int cmd_images(int argc, char **argv)
{
    kjoin_err err;
    cli_admin_args a = {0};
    int first;
    int p = cli_parse(&images_verb, argc, argv, on_opt, &a, &first, &err);
    if (p < 0)
        return 0;
    if (p)
        return cli_fail(a.format, &err);
    if (strcmp(argv[first], "list") != 0) {
        kjoin_err_set(&err, KJOIN_E_USAGE, "unknown images command \"%.40s\" (list)", argv[first]);
        return cli_fail(a.format, &err);
    }
    kjoin_kubeapi *api = NULL;
    kjoin_node_images *list = calloc(1, sizeof(*list));
    kjoin_code rc = list ? cli_kubeapi(a.kubeconfig, a.context, false, a.timeout_ms, &a.verbosity, &api, &err)
                         : kjoin_err_set(&err, KJOIN_E_OTHER, "out of memory");
    if (!rc)
        rc = kjoin_node_images_list(api, list, &err);
    kjoin_kubeapi_free(api);
    if (rc) {
        free(list);
        return cli_fail(a.format, &err);
    }
    if (a.format == CLI_JSON) {
        json_object *arr = json_object_new_array(), *root = json_object_new_object();
        for (size_t i = 0; i < list->n; i++) {
            json_object *o = json_object_new_object();
            json_object_object_add(o, "image", json_object_new_string(list->items[i].image));
            json_object_object_add(o, "source", json_object_new_string(list->items[i].source));
            json_object_array_add(arr, o);
        }
        json_object_object_add(root, "images", arr);
        json_object_object_add(root, "truncated", json_object_new_boolean(list->truncated));
        cli_print_json(root);
    } else {
        for (size_t i = 0; i < list->n; i++)
            cli_out(stdout, "%-60s %s\n", list->items[i].image, list->items[i].source);
        if (list->truncated)
            cli_out(stderr, "[images] WARNING: more than %d images: the rest not shown\n", KJOIN_NODE_IMAGES_MAX);
    }
    free(list);
    return 0;
}
