/* kjoin refresh: follow the cluster's CA bundle from cluster-info. */
#include <stdio.h>

#include <kjoin/discovery.h>
#include <kjoin/pin.h>
#include <kjoin/util.h>

#include "cli.h"
#include "verbs.h"

#define EXIT_UPDATED 10

enum { OPT_KUBECONFIG, OPT_CA_CERT_PATH, OPT_REQUIRE_PIN, OPT_TIMEOUT, OPT_OUTPUT, OPT_VERBOSE, OPT_QUIET };

static const cli_opt refresh_opts[] = {
    {OPT_KUBECONFIG, "kubeconfig", 0, true, "FILE", "the kubeconfig to refresh (default /etc/kubernetes/kubelet.conf)"},
    {OPT_CA_CERT_PATH, "ca-cert-path", 0, true, "FILE", "also write the bundle there (mode 0644), e.g. /etc/kubernetes/pki/ca.crt"},
    {OPT_REQUIRE_PIN, "require-ca-pin", 0, true, "PIN,...", "follow only a bundle holding a certificate of one of these sha256:/root-sha256: pins"},
    {OPT_TIMEOUT, "timeout", 0, true, "DURATION", "one deadline (default 60s)"},
    {OPT_OUTPUT, "output", 'o', true, "FORMAT", "text (default) or json"},
    {OPT_VERBOSE, "v", 'v', true, "LEVEL", "log verbosity"},
    {OPT_QUIET, "quiet", 'q', false, NULL, "print errors only"},
};

static const cli_verb refresh_verb = {
    .usage = "kjoin refresh [--kubeconfig FILE] [--ca-cert-path FILE]",
    .summary = "Re-read kube-public/cluster-info over TLS verified with the CA the kubeconfig\n"
               "holds, and follow the cluster's CA bundle when it changed (a CA rotation), if\n"
               "the new bundle still verifies the server. Exit 0 unchanged, 10 updated.",
    .opts = refresh_opts,
    .n_opts = sizeof(refresh_opts) / sizeof(refresh_opts[0]),
    .min_args = 0,
    .max_args = 0,
};

typedef struct refresh_args {
    kjoin_refresh_opts o;
    kjoin_pinset *pins;
    cli_format format;
    long verbosity;
} refresh_args;

static kjoin_code on_opt(void *ctx, int id, const char *arg, kjoin_err *err)
{
    refresh_args *a = ctx;
    switch (id) {
    case OPT_KUBECONFIG: a->o.kubeconfig = arg; break;
    case OPT_CA_CERT_PATH: a->o.ca_cert_path = arg; break;
    case OPT_REQUIRE_PIN: {
        if (!a->pins && !(a->pins = kjoin_pinset_new()))
            return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
        kjoin_code rc = kjoin_pinset_add(a->pins, arg, err);
        a->o.pins = a->pins;
        return rc;
    }
    case OPT_TIMEOUT: return kjoin_duration_parse(arg, &a->o.timeout_ms, err);
    case OPT_OUTPUT: return cli_parse_format(arg, &a->format, err);
    case OPT_VERBOSE: return cli_parse_long("-v", arg, 0, 10, &a->verbosity, err);
    case OPT_QUIET: a->verbosity = -1; break;
    }
    return KJOIN_OK;
}

int cmd_refresh(int argc, char **argv)
{
    refresh_args a = {.format = cli_format_from_argv(argc, argv),
                      .o = {.kubeconfig = "/etc/kubernetes/kubelet.conf"}};
    kjoin_err err;
    char run_id[CLI_RUN_ID_LEN];
    int first = 0;
    int p = cli_parse(&refresh_verb, argc, argv, on_opt, &a, &first, &err);
    if (p) {
        kjoin_pinset_free(a.pins);
        return p < 0 ? 0 : cli_fail(a.format, &err);
    }
    a.o.audit_id = cli_run_id(run_id);
    a.o.log = cli_log_line;
    a.o.log_ctx = &a.verbosity;
    kjoin_refresh_result r;
    kjoin_code rc = kjoin_refresh(&a.o, &r, &err);
    kjoin_pinset_free(a.pins);
    if (rc)
        return cli_fail(a.format, &err);
    if (a.format == CLI_JSON) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "runID", json_object_new_string(run_id));
        json_object_object_add(o, "kubeconfig", json_object_new_string(a.o.kubeconfig));
        json_object_object_add(o, "changed", json_object_new_boolean(r.changed));
        json_object_object_add(o, "caCertificates", json_object_new_int((int)(r.changed ? r.new_certs : r.old_certs)));
        cli_print_json(o);
    }
    return r.changed ? EXIT_UPDATED : 0;
}
