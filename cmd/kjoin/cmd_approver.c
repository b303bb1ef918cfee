/* kjoin approver [run] | install | uninstall: the controller that holds
 * node-bound tokens to their node, and its permissions. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <kjoin/approver.h>
#include <kjoin/kubeapi.h>
#include <kjoin/util.h>

#include "cli.h"
#include "verbs.h"

enum {
    OPT_KUBECONFIG, OPT_CONTEXT, OPT_OUTPUT, OPT_VERBOSE, OPT_QUIET, OPT_TIMEOUT, OPT_LEASE_DURATION,
    OPT_RENEW_DEADLINE, OPT_RETRY_PERIOD, OPT_RESYNC, OPT_IDENTITY, OPT_HEALTHZ, OPT_APPROVER_KUBECONFIG, OPT_SERVER,
};

#define O_CONTEXT {OPT_CONTEXT, "context", 0, true, "NAME", "the kubeconfig context to use (default: current)"}
#define O_VERBOSE {OPT_VERBOSE, "v", 'v', true, "LEVEL", "log verbosity: 1 the watch's ends, 4 each request"}, \
                  {OPT_QUIET, "quiet", 'q', false, NULL, "print errors only"}
#define O_ADMIN {OPT_KUBECONFIG, "kubeconfig", 0, true, "FILE", \
    "admin credentials (default: $KUBECONFIG, else " KJOIN_KUBEAPI_DEFAULT_KUBECONFIG ")"}
#define O_OWN {OPT_APPROVER_KUBECONFIG, "approver-kubeconfig", 0, true, "FILE", \
    "the approver's own credentials (default " KJOIN_APPROVER_KUBECONFIG ")"}

static const cli_opt run_opts[] = {
    {OPT_KUBECONFIG, "kubeconfig", 0, true, "FILE",
     "the approver's credentials (default " KJOIN_APPROVER_KUBECONFIG ", as 'kjoin approver install' writes it; "
     "in a pod, its service account)"},
    O_CONTEXT,
    {OPT_LEASE_DURATION, "leader-elect-lease-duration", 0, true, "DURATION",
     "how long others wait for a silent holder before taking the Lease (default 15s)"},
    {OPT_RENEW_DEADLINE, "leader-elect-renew-deadline", 0, true, "DURATION",
     "how long the holder keeps acting without a renewal (default 10s)"},
    {OPT_RETRY_PERIOD, "leader-elect-retry-period", 0, true, "DURATION",
     "between tries to take or renew the Lease (default 2s)"},
    {OPT_RESYNC, "resync-period", 0, true, "DURATION", "a full list of the CSRs this often, besides the watch (default 5m)"},
    {OPT_IDENTITY, "identity", 0, true, "NAME", "the Lease holder's name (default: host name and a UUID)"},
    {OPT_HEALTHZ, "healthz-bind-address", 0, true, "HOST:PORT",
     "answer GET /healthz there; empty for none (default " KJOIN_APPROVER_HEALTHZ ")"},
    O_VERBOSE,
};
#define O_TAIL {OPT_TIMEOUT, "timeout", 0, true, "DURATION", "deadline for the whole command (default 1m)"}, \
               {OPT_OUTPUT, "output", 'o', true, "FORMAT", "text (default) or json"}, O_VERBOSE
static const cli_opt install_opts[] = {
    O_ADMIN, O_CONTEXT, O_OWN,
    {OPT_SERVER, "server", 0, true, "URL",
     "the API server the approver's credentials name (default: the admin kubeconfig's); on a control-plane "
     "node its own, https://ADDRESS:6443, keeps it running while the endpoint is down"},
    O_TAIL,
};
static const cli_opt uninstall_opts[] = {O_ADMIN, O_CONTEXT, O_OWN, O_TAIL};

#define VERB_OPTS(t) .opts = t, .n_opts = sizeof(t) / sizeof(t[0])

static const cli_verb run_verb = {
    .usage = "kjoin approver [run] [flags]",
    .summary = "Run the controller that holds node-bound tokens to their node. It approves a token's\n"
               "CSR ('kjoin token create --node-name') for its own node's kubelet client\n"
               "certificate, denies every other CSR of a bound token with why, deletes a\n"
               "single-use token once used, and never touches another requester's CSR. Run it on\n"
               "every control-plane node (kjoin-approver.service): one holds the Lease\n"
               "kube-system/" KJOIN_APPROVER_LEASE_NAME " and acts. Ends on SIGTERM, giving up the Lease.",
    VERB_OPTS(run_opts), .min_args = 0, .max_args = 0,
};
static const cli_verb install_verb = {
    .usage = "kjoin approver install [flags]",
    .summary = "Make the approver's ServiceAccount, ClusterRole, Role and bindings and the bound\n"
               "tokens' permissions, and write its credentials (mode 0600) for the systemd unit.\n"
               "Idempotent: run it on each control-plane node that runs the approver.",
    VERB_OPTS(install_opts), .min_args = 0, .max_args = 0,
};
static const cli_verb uninstall_verb = {
    .usage = "kjoin approver uninstall [flags]",
    .summary = "Remove exactly what 'kjoin approver install' made, its Lease, and the local\n"
               "credentials. Bound tokens can then no longer join.",
    VERB_OPTS(uninstall_opts), .min_args = 0, .max_args = 0,
};

typedef struct approver_args {
    cli_format format;
    const char *kubeconfig, *context, *own, *server;
    long verbosity;
    int64_t timeout_ms;
    kjoin_approver_options o;
} approver_args;

static kjoin_code on_opt(void *ctx, int id, const char *arg, kjoin_err *err)
{
    approver_args *a = ctx;
    switch (id) {
    case OPT_KUBECONFIG: a->kubeconfig = arg; break;
    case OPT_CONTEXT: a->context = arg; break;
    case OPT_APPROVER_KUBECONFIG: a->own = arg; break;
    case OPT_SERVER: a->server = arg; break;
    case OPT_OUTPUT: return cli_parse_format(arg, &a->format, err);
    case OPT_VERBOSE: return cli_parse_long("-v", arg, 0, 10, &a->verbosity, err);
    case OPT_QUIET: a->verbosity = -1; break;
    case OPT_TIMEOUT: return cli_flag_err("--timeout", kjoin_duration_parse(arg, &a->timeout_ms, err), err);
    case OPT_LEASE_DURATION:
        return cli_flag_err(cli_current_flag, kjoin_duration_parse(arg, &a->o.lease_duration_ms, err), err);
    case OPT_RENEW_DEADLINE:
        return cli_flag_err(cli_current_flag, kjoin_duration_parse(arg, &a->o.renew_deadline_ms, err), err);
    case OPT_RETRY_PERIOD:
        return cli_flag_err(cli_current_flag, kjoin_duration_parse(arg, &a->o.retry_period_ms, err), err);
    case OPT_RESYNC: return cli_flag_err(cli_current_flag, kjoin_duration_parse(arg, &a->o.resync_ms, err), err);
    case OPT_IDENTITY: a->o.identity = arg; break;
    case OPT_HEALTHZ: a->o.healthz = arg; break;
    }
    return KJOIN_OK;
}

static volatile sig_atomic_t stop_requested;
static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static int run(approver_args *a)
{
    kjoin_err err;
    kjoin_kubeapi *api = NULL;
    a->o.stop = &stop_requested;
    a->o.log = cli_log_line;
    a->o.log_ctx = &a->verbosity;
    struct sigaction sa = {.sa_handler = on_stop};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    /* Its own credentials, else (in a pod) its service account's. */
    const char *kubeconfig = a->kubeconfig;
    if (!kubeconfig && !getenv("KUBERNETES_SERVICE_HOST"))
        kubeconfig = KJOIN_APPROVER_KUBECONFIG;
    /* A lifetime of a century; each request bounded by half the renew deadline. */
    kjoin_code rc = cli_kubeapi_calls(kubeconfig, a->context, true, 100LL * 365 * 86400 * 1000,
                                      a->o.renew_deadline_ms / 2, &a->verbosity, &api, &err);
    if (!rc)
        rc = kjoin_approver_run(api, &a->o, &err);
    if (rc) {
        kjoin_kubeapi_free(api);
        return cli_fail(CLI_TEXT, &err);
    }
    /* The watch may still be in a request on api: the process ends here,
     * before the verb's caller would tear libcurl down under it. */
    fflush(stdout);
    fflush(stderr);
    _exit(0);
}

static int install(approver_args *a, bool remove)
{
    kjoin_err err;
    kjoin_kubeapi *api = NULL;
    const char *own = a->own ? a->own : KJOIN_APPROVER_KUBECONFIG;
    kjoin_code rc = cli_kubeapi(a->kubeconfig, a->context, false, a->timeout_ms, &a->verbosity, &api, &err);
    if (!rc)
        rc = remove ? kjoin_approver_uninstall(api, own, cli_log_line, &a->verbosity, &err)
                    : kjoin_approver_install(api, own, a->server, cli_log_line, &a->verbosity, &err);
    kjoin_kubeapi_free(api);
    if (rc)
        return cli_fail(a->format, &err);
    if (a->format == CLI_JSON) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, remove ? "uninstalled" : "installed", json_object_new_boolean(1));
        json_object_object_add(o, "kubeconfig", json_object_new_string(own));
        cli_print_json(o);
    }
    return 0;
}

int cmd_approver(int argc, char **argv)
{
    kjoin_err err;
    static const cli_verb *const verbs[] = {&run_verb, &install_verb, &uninstall_verb};
    static const char *const names[] = {"run", "install", "uninstall"};
    /* Bare `kjoin approver [flags]` runs the controller. */
    bool bare = argc < 2 || (argv[1][0] == '-' && strcmp(argv[1], "--help") && strcmp(argv[1], "-h"));
    int which = bare ? 0
                     : cli_group(argc, argv, "kjoin approver",
                                 "The controller that holds node-bound tokens to their node, and its permissions.",
                                 names, verbs, 3);
    if (which < 0)
        return -which - 1;
    approver_args a = {.format = cli_format_from_argv(argc, argv), .timeout_ms = 60000,
                       .o = KJOIN_APPROVER_OPTIONS_INIT};
    int first = 0, shift = bare ? 0 : 1;
    int p = cli_parse(verbs[which], argc - shift, argv + shift, on_opt, &a, &first, &err);
    if (p < 0)
        return 0;
    if (p)
        return cli_fail(a.format, &err);
    return which == 0 ? run(&a) : install(&a, which == 2);
}
