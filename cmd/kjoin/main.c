/* kjoin: the command table. Verbs live in cmd_<verb>.c; the work in pkg/. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <curl/curl.h>
#include <json-c/json.h>
#include <openssl/crypto.h>
#include <yaml.h>

#include <kjoin/join.h>

#include <kjoin/transport.h>
#include <kjoin/util.h>

#include "cli.h"
#include "verbs.h"

#ifndef KJOIN_VERSION
#define KJOIN_VERSION "dev"
#endif

static const struct verb {
    const char *name;
    int (*run)(int argc, char **argv);
    bool network; /* libcurl is set up only for the verbs that need it */
    const char *help;
} verbs[] = {
    {"join", cmd_join, true, "join this machine to a cluster, as a worker or (--control-plane) a control-plane node: preflight, discovery, the kubelet, the Node registered"},
    {"reset", cmd_reset, true, "undo a join, worker or control plane: stop the kubelet and its Pods, the etcd member out, remove exactly what the join made"},
    {"token", cmd_token, true, "bootstrap tokens, as kubeadm token: generate, create, list, delete"},
    {"approver", cmd_approver, true, "the controller that holds node-bound tokens to their node: run, install, uninstall"},
    {"reports", cmd_reports, true, "the join reports failed joins left in the cluster: why each node did not join"},
    {"images", cmd_images, true, "images list: the images a node pulls, for an archive kjoin join --images imports"},
    {"sync", cmd_sync, true, "keep this node's kubelet configuration to the cluster's: --check shows drift (exit 11); labels the Node"},
    {"ca-hash", cmd_ca_hash, false, "print the pins of each certificate of a CA bundle"},
    {"cluster-info", cmd_cluster_info, false, "cluster-info sign: build a signed cluster-info ConfigMap"},
    {"tls-bootstrap", cmd_tls_bootstrap, true, "the node's client certificate and kubelet.conf from the bootstrap token; --rotate renews it"},
    {"refresh", cmd_refresh, true, "follow the cluster's CA bundle from cluster-info (CA rotation); exit 10 when updated"},
    {"certs", cmd_certs, false, "a self-signing certificate manager (init, issue, rotate, adopt-ca, check-expiration, manifests, ca-set); kubeadm's certificate-key and upload-certs"},
};

static void usage(FILE *f)
{
    cli_out(f, "Usage: kjoin COMMAND [flags]\n\nCommands:\n");
    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
        cli_out(f, "  %-14s %s\n", verbs[i].name, verbs[i].help);
    cli_out(f, "  %-14s %s\n", "version", "print the version");
    cli_out(f, "\nRun 'kjoin COMMAND --help' for a command's flags. Exit codes: 0 ok, 1 other,\n"
               "2 usage or bad input, 3 discovery timed out, 4 trust verification failed,\n"
               "5 output not written, 6 the API refused a request, 7 a control-plane\n"
               "join took back what it wrote, 8 the token is rejected; certs rotate and\n"
               "tls-bootstrap --rotate, refresh: 10 when something was renewed.\n");
}

/* Tokens, keys and kubeconfigs pass through memory: no core dump may carry
 * them, and no other process of the user may ptrace this one. */
static void no_core_dumps(void)
{
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int main(int argc, char **argv)
{
    no_core_dumps();
    kjoin_scratch_remove_on_signals(); /* a dry run killed leaves no copy of the CA keys */
    /* The process ends right after its verb: freeing OpenSSL's tables at
     * exit is work for nothing. */
    OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0) {
        /* -o FORMAT alone, as every verb's output flag */
        bool ok = argc == 2 || (argc == 4 && (!strcmp(argv[2], "-o") || !strcmp(argv[2], "--output")) &&
                                (!strcmp(argv[3], "json") || !strcmp(argv[3], "text"))) ||
                  (argc == 3 && (!strcmp(argv[2], "-ojson") || !strcmp(argv[2], "--output=json") ||
                                 !strcmp(argv[2], "-otext") || !strcmp(argv[2], "--output=text")));
        if (!ok) {
            cli_out(stderr, "kjoin: usage: kjoin version [-o json]\n");
            return 2;
        }
        /* What it links, and the Kubernetes releases whose kubeadm it follows. */
        const curl_version_info_data *curl = curl_version_info(CURLVERSION_NOW);
        char releases[32];
        snprintf(releases, sizeof(releases), "1.%d-1.%d", KJOIN_OLDEST_KUBEADM_MINOR, KJOIN_NEWEST_KUBEADM_MINOR);
        if (cli_format_from_argv(argc - 1, argv + 1) == CLI_JSON) {
            json_object *o = json_object_new_object(), *libs = json_object_new_object(),
                        *k8s = json_object_new_object();
            json_object_object_add(o, "version", json_object_new_string(KJOIN_VERSION));
            json_object_object_add(libs, "openssl", json_object_new_string(OpenSSL_version(OPENSSL_VERSION_STRING)));
            json_object_object_add(libs, "libcurl", json_object_new_string(curl->version));
            json_object_object_add(libs, "libyaml", json_object_new_string(yaml_get_version_string()));
            json_object_object_add(libs, "json-c", json_object_new_string(json_c_version()));
            json_object_object_add(o, "libraries", libs);
            snprintf(releases, sizeof(releases), "1.%d", KJOIN_OLDEST_KUBEADM_MINOR);
            json_object_object_add(k8s, "oldest", json_object_new_string(releases));
            snprintf(releases, sizeof(releases), "1.%d", KJOIN_NEWEST_KUBEADM_MINOR);
            json_object_object_add(k8s, "newest", json_object_new_string(releases));
            json_object_object_add(o, "kubernetes", k8s);
            cli_print_json(o);
        } else {
            cli_out(stdout, "kjoin %s (Kubernetes %s; OpenSSL %s, libcurl %s, libyaml %s, json-c %s)\n", KJOIN_VERSION,
                    releases, OpenSSL_version(OPENSSL_VERSION_STRING), curl->version, yaml_get_version_string(),
                    json_c_version());
        }
        return 0;
    }
    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
        if (strcmp(argv[1], verbs[i].name) != 0)
            continue;
        kjoin_err err;
        cli_verb_name = verbs[i].name;
        if (verbs[i].network && kjoin_http_global_init(&err))
            return cli_fail(CLI_TEXT, &err);
        int rc = verbs[i].run(argc - 1, argv + 1);
        if (verbs[i].network)
            kjoin_http_global_cleanup();
        return rc;
    }
    const char *names[sizeof(verbs) / sizeof(verbs[0])], *near;
    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
        names[i] = verbs[i].name;
    near = kjoin_did_you_mean(argv[1], strlen(argv[1]), names, sizeof(verbs) / sizeof(verbs[0]));
    cli_out(stderr, "kjoin: unknown command \"%s\"%s%s%s\n\n", argv[1], near ? " (did you mean \"" : "",
            near ? near : "", near ? "\"?)" : "");
    usage(stderr);
    return 2;
}
