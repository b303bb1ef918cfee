/* kjoin reports: the join reports failed joins left in the cluster. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include <kjoin/kubeapi.h>
#include <kjoin/report.h>
#include <kjoin/util.h>

#include "cli.h"
#include "verbs.h"

enum { OPT_NODE, OPT_WATCH };

static const cli_opt opts[] = {
    {OPT_NODE, "node", 0, true, "NAME", "only the reports of this node"},
    {OPT_WATCH, "watch", 'w', false, NULL,
     "after the list, print each new report as it comes (until interrupted, or --timeout)"},
    CLI_ADMIN_OPTS("deadline for the whole command (default 1m; with --watch: none)"),
};

static const cli_verb reports_verb = {
    .usage = "kjoin reports [--node NAME] [--watch] [flags]",
    .summary = "List the join reports failed joins filed in the cluster, newest first: the node,\n"
               "the phase it failed in, kjoin join's exit code, how long ago, and why. A report\n"
               "is a CertificateSigningRequest no one signs (kubectl get csr -l " KJOIN_REPORT_LABEL "),\n"
               "removed by the cluster 24 hours after it was filed. Needs list on\n"
               "certificatesigningrequests.",
    .opts = opts,
    .n_opts = sizeof(opts) / sizeof(opts[0]),
    .min_args = 0,
    .max_args = 0,
};

#define WATCH_POLL_S 2

typedef struct reports_args {
    cli_admin_args admin;
    const char *node;
    bool watch;
} reports_args;

static kjoin_code on_opt(void *ctx, int id, const char *arg, kjoin_err *err)
{
    reports_args *a = ctx;
    switch (id) {
    case OPT_NODE: a->node = arg; break;
    case OPT_WATCH: a->watch = true; break;
    default: return cli_admin_opt(&a->admin, id, arg, err);
    }
    return KJOIN_OK;
}

static json_object *report_json(const kjoin_join_report *r)
{
    char created[32] = "";
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(r->name));
    json_object_object_add(o, "node", json_object_new_string(r->node));
    json_object_object_add(o, "phase", json_object_new_string(r->phase));
    json_object_object_add(o, "exitCode", r->exit_code >= 0 ? json_object_new_int(r->exit_code) : NULL);
    json_object_object_add(o, "reason", json_object_new_string(r->reason));
    json_object_object_add(o, "kubelet", *r->kubelet ? json_object_new_string(r->kubelet) : NULL);
    json_object_object_add(o, "joinID", json_object_new_string(r->join_id));
    json_object_object_add(o, "tokenID", *r->token_id ? json_object_new_string(r->token_id) : NULL);
    json_object_object_add(o, "version", json_object_new_string(r->version));
    json_object_object_add(o, "created", r->created ? json_object_new_string(cli_rfc3339(r->created, created,
                                                                                             sizeof(created)))
                                                    : NULL);
    return o;
}

static void print_row(const kjoin_join_report *r, long long now)
{
    char age[32] = "<unknown>", code[16] = "?";
    if (r->created)
        cli_short_duration(now - r->created, age, sizeof(age));
    if (r->exit_code >= 0)
        snprintf(code, sizeof(code), "%d", r->exit_code);
    cli_out(stdout, "%-24s %-24s %-4s %-9s %s\n", *r->node ? r->node : "<none>", *r->phase ? r->phase : "<none>",
            code, age, r->reason); /* the reason names the kubelet's last error already */
}

/* A watch's line: one report, as it comes. */
static void print_json_line(const kjoin_join_report *r)
{
    json_object *o = report_json(r);
    puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
}

static bool seen_before(const kjoin_join_reports *old, const char *name)
{
    for (size_t i = 0; i < old->n; i++)
        if (!strcmp(old->items[i].name, name))
            return true;
    return false;
}

int cmd_reports(int argc, char **argv)
{
    kjoin_err err;
    reports_args a = {0};
    int first;
    int p = cli_parse(&reports_verb, argc, argv, on_opt, &a, &first, &err);
    if (p < 0)
        return 0;
    if (p)
        return cli_fail(a.admin.format, &err);
    kjoin_kubeapi *api = NULL;
    kjoin_join_reports now_seen = {0}, before = {0};
    /* A watch lives until interrupted (or --timeout); each of its lists has a bound of its own. */
    int64_t life = a.watch && !a.admin.timeout_ms ? 100LL * 365 * 86400 * 1000 : a.admin.timeout_ms;
    const cli_admin_args *g = &a.admin;
    kjoin_code rc = a.watch ? cli_kubeapi_calls(g->kubeconfig, g->context, false, life, 30000, &a.admin.verbosity, &api, &err)
                            : cli_kubeapi(g->kubeconfig, g->context, false, life, &a.admin.verbosity, &api, &err);
    if (!rc)
        rc = kjoin_join_reports_list(api, a.node, &now_seen, &err);
    if (rc) {
        kjoin_kubeapi_free(api);
        return cli_fail(a.admin.format, &err);
    }
    long long now = (long long)time(NULL);
    if (a.admin.format == CLI_JSON && !a.watch) {
        json_object *arr = json_object_new_array(), *root = json_object_new_object();
        for (size_t i = 0; i < now_seen.n; i++)
            json_object_array_add(arr, report_json(&now_seen.items[i]));
        json_object_object_add(root, "reports", arr);
        cli_print_json(root);
    } else if (a.admin.format == CLI_JSON) { /* a watch: one object a line, as it comes */
        for (size_t i = now_seen.n; i-- > 0;)
            print_json_line(&now_seen.items[i]);
    } else {
        cli_out(stdout, "%-24s %-24s %-4s %-9s %s\n", "NODE", "PHASE", "EXIT", "AGE", "REASON");
        for (size_t i = 0; i < now_seen.n; i++)
            print_row(&now_seen.items[i], now);
    }
    fflush(stdout);
    int64_t end = kjoin_now_ms() + life;
    while (a.watch && kjoin_now_ms() + WATCH_POLL_S * 1000 < end) {
        sleep(WATCH_POLL_S);
        kjoin_join_reports_release(&before);
        before = now_seen;
        if ((rc = kjoin_join_reports_list(api, a.node, &now_seen, &err))) {
            now_seen = before, before = (kjoin_join_reports){0};
            cli_out(stderr, "[reports] WARNING: %s (trying again)\n", err.msg);
            continue;
        }
        now = (long long)time(NULL);
        for (size_t i = now_seen.n; i-- > 0;) { /* oldest new one first */
            if (seen_before(&before, now_seen.items[i].name))
                continue;
            if (a.admin.format == CLI_JSON)
                print_json_line(&now_seen.items[i]);
            else
                print_row(&now_seen.items[i], now);
        }
        fflush(stdout);
    }
    kjoin_join_reports_release(&before);
    kjoin_join_reports_release(&now_seen);
    kjoin_kubeapi_free(api);
    return 0;
}
