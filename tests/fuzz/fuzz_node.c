/* What a worker join reads back: the cluster's kubelet configuration (the
 * kubelet-config ConfigMap's value, from the server), the join record reset
 * reads (a file on disk), the kubelet's --version output, and kubeadm's
 * ClusterConfiguration (from the server), which also goes through the
 * rendering of config.yaml (YAML to JSON and back), and the kubelet's own
 * output (its journal or log file) that a wait scans, and the kernel's
 * route tables with the node-ip values read beside them, a list of
 * DaemonSets (the images a node pulls) and ctr import's words, and the
 * kubelet's files as kjoin sync reads them back (the flags file, YAML by
 * meaning, compared). The first byte chooses the parser (modulo 8, so that
 * the seeds of modulo 4 keep theirs). */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"

#include <kjoin/private/controlplane.h>
#include <kjoin/private/node.h>

#include "../../pkg/node/internal.h"
#include "../../pkg/yamldoc/yamldoc.h"

#include <json-c/json.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    switch (data[0] % 8) {
    case 0: {
        kjoin_kubelet_config c;
        kjoin_kubelet_config_parse(text, len, &c, NULL);
        break;
    }
    case 1: {
        kjoin_node_paths paths = {0};
        kjoin_node_state *st = malloc(sizeof(*st));
        if (st)
            kjoin_node_state_parse(text, len, &paths, st, NULL);
        free(st);
        kjoin_cp_record *cp = malloc(sizeof(*cp)); /* the same file's control-plane part */
        bool found;
        if (cp)
            kjoin_cp_record_parse_file(text, len, cp, &found, NULL);
        free(cp);
        break;
    }
    case 3: {
        kjoin_cluster_configuration c;
        static const int minors[] = {20, 22, 25, 29, 31, 34, 37}; /* one of each era of the release table's rules */
        if (!kjoin_cluster_configuration_parse(text, len, &c, NULL)) /* the manifests made from it */
            for (size_t k = 0; k < sizeof(minors) / sizeof(minors[0]); k++) {
                char *m[KJOIN_MANIFESTS_N], *etcd = NULL, *env[] = {"HTTPS_PROXY=http://p", "no_proxy=x", NULL};
                kjoin_cp_context cx;
                kjoin_cp_context_init(&cx, &c, "/etc/kubernetes", NULL);
                cx.minor = minors[k], cx.release = kjoin_release_of(minors[k]);
                kjoin_join_context join = {.name = {.name = "cp-2"}};
                cx.join = &join;
                snprintf(cx.advertise_address, sizeof(cx.advertise_address), "fd00::2");
                if (!kjoin_control_plane_manifests_make(&cx, env, m, NULL))
                    for (int i = 0; i < KJOIN_MANIFESTS_N; i++)
                        free(m[i]);
                if (!c.external_etcd && !kjoin_etcd_manifest_make(&cx, NULL, 0, &etcd, NULL))
                    free(etcd);
            }
        char *out = NULL; /* config.yaml made from it: YAML to JSON and back */
        kjoin_kubelet_config_render(text, len, NULL, "unix:///run/containerd/containerd.sock", &out, NULL);
        free(out);
        break;
    }
    case 4: {
        kjoin_node__words w;
        char about[400];
        kjoin_node__kubelet_words(text, len, &w);
        kjoin_node__kubelet_error_about(text, len, "kube-system/etcd-cp-2", about, sizeof(about));
        break;
    }
    case 2: { /* a list of DaemonSets (the images a node pulls), and ctr import's words */
        kjoin_node_images *images = calloc(1, sizeof(*images));
        char *s = fuzz_string(data + 1, len), names[700];
        if (images && !kjoin_node__daemonset_images(text, len, images, NULL) && images->n > KJOIN_NODE_IMAGES_MAX)
            abort();
        if (s)
            kjoin_node__ctr_imported(s, names, sizeof(names));
        free(images);
        free(s);
        break;
    }
    case 5: { /* the route tables (both formats), and the rest as a node-ip value and a CIDR list */
        char ifname[64], out[130];
        char *s = fuzz_string(data + 1, len);
        kjoin_err e;
        if (s) {
            kjoin_node__default_route_if(s, false, ifname, sizeof(ifname));
            kjoin_node__default_route_if(s, true, ifname, sizeof(ifname));
            kjoin_node__node_ip_check(s, &e);
            kjoin_node__dual_stack_ip(s, s, "192.0.2.2", "fd00::2", out, sizeof(out));
        }
        free(s);
        break;
    }
    case 6: { /* the node's files as kjoin sync reads them: the flags file, a configuration compared */
        json_object *flags = kjoin_node__flags_json(text, len), *have = NULL, *want = json_tokener_parse(
            "{\"kind\":\"KubeletConfiguration\",\"maxPods\":110,\"evictionHard\":{\"memory.available\":\"100Mi\"}}");
        kjoin_sync_file *f = calloc(1, sizeof(*f));
        if (f && flags)
            kjoin_node__sync_diff(flags, flags, "", f);
        if (f && !kjoin_yaml__load_json(text, len, KJOIN_E_USAGE, &have, NULL)) {
            kjoin_node__sync_diff(have, want, "", f);
            kjoin_node__sync_diff(want, have, "", f);
            memset(f, 0, sizeof(*f));
            kjoin_node__sync_diff(have, have, "", f);
            if (f->n_changes) /* a configuration is the same as itself */
                abort();
        }
        json_object_put(flags), json_object_put(have), json_object_put(want);
        free(f);
        break;
    }
    default: {
        char *s = fuzz_string(data + 1, len), version[64];
        int minor;
        if (s)
            kjoin_kubelet_version_parse(s, version, sizeof(version), &minor, NULL);
        free(s);
    }
    }
    return 0;
}
