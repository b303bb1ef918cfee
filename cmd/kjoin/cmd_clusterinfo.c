/* kjoin cluster-info sign: the ConfigMap the bootstrap signer would publish. */
#include <stdio.h>
#include <string.h>

#include <kjoin/discovery.h>
#include <kjoin/kubeapi.h>
#include <kjoin/kubeconfig.h>
#include <kjoin/util.h>

#include "cli.h"
#include "verbs.h"

#define MAX_TOKENS 64

enum { OPT_KUBECONFIG, OPT_FROM_KUBECONFIG, OPT_TOKEN, OPT_TOKEN_FILE };

static const cli_opt sign_opts[] = {
    {OPT_KUBECONFIG, "kubeconfig", 0, true, "FILE",
     "the kubeconfig to publish, kept verbatim: one cluster, no users, no credentials"},
    {OPT_FROM_KUBECONFIG, "from-kubeconfig", 0, true, "FILE",
     "build the kubeconfig to publish from FILE's current cluster (server and CA only), as kubeadm does from admin.conf"},
    {OPT_TOKEN, "token", 0, true, "TOKEN", "a token to sign for; repeatable"},
    {OPT_TOKEN_FILE, "token-file", 0, true, "FILE", "read a token from the first line of FILE; repeatable"},
};

static const cli_verb sign_verb = {
    .usage = "kjoin cluster-info sign --kubeconfig FILE | --from-kubeconfig FILE --token TOKEN [--token TOKEN...]",
    .summary = "Print the kube-public/cluster-info ConfigMap as the API server returns it, with\n"
               "a jws-kubeconfig-<id> signature for each token, byte-identical to the control\n"
               "plane's bootstrap signer.",
    .opts = sign_opts,
    .n_opts = 4,
    .min_args = 0,
    .max_args = 0,
};

typedef struct sign_args {
    const char *kubeconfig, *from_kubeconfig;
    kjoin_token tokens[MAX_TOKENS];
    size_t n;
} sign_args;

static kjoin_code on_opt(void *ctx, int id, const char *arg, kjoin_err *err)
{
    sign_args *a = ctx;
    if (id == OPT_KUBECONFIG || id == OPT_FROM_KUBECONFIG) {
        *(id == OPT_KUBECONFIG ? &a->kubeconfig : &a->from_kubeconfig) = arg;
        return KJOIN_OK;
    }
    if (a->n == MAX_TOKENS)
        return kjoin_err_set(err, KJOIN_E_USAGE, "at most %d tokens", MAX_TOKENS);
    kjoin_code rc = id == OPT_TOKEN ? kjoin_token_parse(arg, &a->tokens[a->n], err)
                                    : kjoin_token_read_file(arg, &a->tokens[a->n], err);
    a->n += rc == KJOIN_OK;
    return rc;
}

/* The cluster-only kubeconfig of path's current context, as the control
 * plane builds cluster-info from admin.conf: its credentials are dropped. */
static kjoin_code cluster_only(const char *path, char **out, size_t *len, kjoin_err *err)
{
    kjoin_kubeapi_config cfg;
    kjoin_code rc = kjoin_kubeapi_config_load(path, NULL, &cfg, err);
    if (rc)
        return rc;
    if (!cfg.ca_pem)
        rc = kjoin_err_set(err, KJOIN_E_USAGE, "%s: context \"%s\" has no certificate authority to publish", path,
                           cfg.context);
    else
        rc = kjoin_kubeconfig_emit_cluster_info(cfg.server, cfg.ca_pem, cfg.ca_len, out, len, err);
    kjoin_kubeapi_config_release(&cfg);
    return rc;
}

int cmd_cluster_info(int argc, char **argv)
{
    kjoin_err err;
    static const char *const names[] = {"sign"};
    static const cli_verb *const verbs[] = {&sign_verb};
    int which = cli_group(argc, argv, "kjoin cluster-info",
                          "The kube-public/cluster-info ConfigMap that token discovery reads: sign it for bootstrap "
                          "tokens as the control plane's\nbootstrap signer does, for a cluster kjoin bootstraps itself "
                          "or to check the signer's work.", names, verbs, 1);
    if (which < 0)
        return -which - 1;
    sign_args a = {0};
    char *kubeconfig = NULL, *json = NULL;
    size_t len = 0;
    int first;
    int p = cli_parse(&sign_verb, argc - 1, argv + 1, on_opt, &a, &first, &err);
    if (p < 0)
        return 0;
    kjoin_code rc = (kjoin_code)p;
    if (!rc && !a.kubeconfig == !a.from_kubeconfig)
        rc = kjoin_err_set(&err, KJOIN_E_USAGE, "give --kubeconfig or --from-kubeconfig (one of them)");
    if (!rc && a.n == 0)
        rc = kjoin_err_set(&err, KJOIN_E_USAGE, "give at least one --token or --token-file");
    if (!rc && a.kubeconfig)
        rc = kjoin_file_read(a.kubeconfig, KJOIN_KUBECONFIG_MAX, &kubeconfig, &len, &err);
    if (!rc && a.from_kubeconfig)
        rc = cluster_only(a.from_kubeconfig, &kubeconfig, &len, &err);
    if (!rc) {
        /* Refuse to publish a credential, or what a joining node would reject. */
        kjoin_cluster c;
        kjoin_err inner;
        const char *from = a.kubeconfig ? a.kubeconfig : a.from_kubeconfig;
        if ((rc = kjoin_kubeconfig_check_public(kubeconfig, len, &inner)) ||
            (rc = kjoin_kubeconfig_parse_cluster(kubeconfig, len, &c, &inner)))
            rc = kjoin_err_set(&err, KJOIN_E_USAGE, "%s: %s", from, inner.msg);
        else
            kjoin_cluster_release(&c);
    }
    if (!rc)
        rc = kjoin_cluster_info_sign(kubeconfig, len, a.tokens, a.n, &json, &err);
    if (!rc)
        fputs(json, stdout);
    for (size_t i = 0; i < a.n; i++)
        kjoin_token_clear(&a.tokens[i]);
    free(kubeconfig);
    free(json);
    return rc ? cli_fail(CLI_TEXT, &err) : 0;
}
