/* kjoin sync: keep a joined node's kubelet configuration to the cluster's. */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include <kjoin/node.h>
#include <kjoin/util.h>

#include "cli.h"
#include "verbs.h"

#define EXIT_WRITTEN 10 /* sync wrote files (as refresh's "updated") */
#define EXIT_DRIFT 11   /* sync --check: the node differs */

enum { OPT_CHECK, OPT_RESTART, OPT_KUBECONFIG };

static const cli_opt opts[] = {
    {OPT_CHECK, "check", 0, false, NULL, "compare only: exit 11 and show what differs when the node differs; change "
                                         "nothing on the node"},
    {OPT_RESTART, "restart", 0, false, NULL,
     "restart the kubelet (systemd) when it started before its files were written, and wait until it is healthy"},
    {OPT_KUBECONFIG, "kubeconfig", 0, true, "FILE", "the node's credentials (default /etc/kubernetes/kubelet.conf)"},
    CLI_COMMON_OPTS("one deadline (default 1m)"),
};

static const cli_verb sync_verb = {
    .usage = "kjoin sync [--check] [--restart] [flags]",
    .summary = "Make this node's kubelet files again as kjoin join would write them now: the\n"
               "cluster's kubelet-config for its kubeadm release, the join's recorded patches\n"
               "and flags, the release's instance configuration. Compared by meaning; with\n"
               "--check only compared (exit 11: the node differs), else written and recorded\n"
               "(exit 10: written; the kubelet takes them at its restart, or --restart). Both\n"
               "label the node's Node: kubectl get nodes -L kjoin.io/kubelet-config.",
    .opts = opts,
    .n_opts = sizeof(opts) / sizeof(opts[0]),
    .min_args = 0,
    .max_args = 0,
};

typedef struct sync_args {
    kjoin_sync_spec s;
    cli_admin_args common; /* its timeout, output and verbosity */
} sync_args;

static kjoin_code on_opt(void *ctx, int id, const char *arg, kjoin_err *err)
{
    sync_args *a = ctx;
    switch (id) {
    case OPT_CHECK: a->s.check = true; break;
    case OPT_RESTART: a->s.restart = true; break;
    case OPT_KUBECONFIG: a->s.paths.kubelet_kubeconfig = arg; break;
    default: return cli_admin_opt(&a->common, id, arg, err);
    }
    return KJOIN_OK;
}

static json_object *result_json(const kjoin_sync_result *r, const char *run_id)
{
    json_object *o = json_object_new_object(), *files = json_object_new_array();
    json_object_object_add(o, "runID", json_object_new_string(run_id));
    json_object_object_add(o, "nodeName", json_object_new_string(r->node_name));
    json_object_object_add(o, "configMap", json_object_new_string(r->config_map));
    json_object_object_add(o, "kubeadmMinor", json_object_new_int(r->kubeadm_minor));
    json_object_object_add(o, "state", json_object_new_string(kjoin_sync_state_name(r->state)));
    json_object_object_add(o, "drift", json_object_new_boolean(r->drift));
    json_object_object_add(o, "written", json_object_new_boolean(r->written));
    json_object_object_add(o, "restarted", json_object_new_boolean(r->restarted));
    json_object_object_add(o, "flagsKept", json_object_new_boolean(r->flags_kept));
    json_object_object_add(o, "hash", json_object_new_string(r->hash));
    json_object_object_add(o, "labeled", json_object_new_boolean(r->labeled));
    for (size_t i = 0; i < r->n_files; i++) {
        const kjoin_sync_file *f = &r->files[i];
        json_object *j = json_object_new_object(), *changes = json_object_new_array();
        json_object_object_add(j, "path", json_object_new_string(f->path));
        json_object_object_add(j, "differs", json_object_new_boolean(f->differs));
        json_object_object_add(j, "missing", json_object_new_boolean(f->missing));
        json_object_object_add(j, "written", json_object_new_boolean(f->written));
        for (size_t k = 0; k < f->n_changes; k++)
            json_object_array_add(changes, json_object_new_string(f->changes[k]));
        json_object_object_add(j, "changes", changes);
        json_object_object_add(j, "moreChanges", json_object_new_boolean(f->more_changes));
        json_object_array_add(files, j);
    }
    json_object_object_add(o, "files", files);
    return o;
}

static void print_text(const kjoin_sync_result *r, bool check)
{
    cli_out(stdout, "Node %s: kubelet configuration %s (kube-system/%s, kubeadm 1.%d; hash %.16s)\n", r->node_name,
            kjoin_sync_state_name(r->state), r->config_map, r->kubeadm_minor, r->hash);
    for (size_t i = 0; i < r->n_files; i++) {
        const kjoin_sync_file *f = &r->files[i];
        cli_out(stdout, "  %s: %s\n", f->path,
                f->written ? "written" : f->missing ? "missing" : f->differs ? "differs" : "the same");
        for (size_t k = 0; k < f->n_changes; k++)
            cli_out(stdout, "      %s\n", f->changes[k]);
        if (f->more_changes)
            cli_out(stdout, "      (more)\n");
    }
    if (check && r->drift)
        cli_out(stdout, "kjoin sync writes it (with --restart, restarts the kubelet)\n");
    else if (r->state == KJOIN_SYNC_RESTART_NEEDED)
        cli_out(stdout, "the kubelet takes it when it restarts (systemctl restart kubelet, or kjoin sync --restart)\n");
}

int cmd_sync(int argc, char **argv)
{
    sync_args a = {.s = KJOIN_SYNC_SPEC_INIT, .common = {.format = cli_format_from_argv(argc, argv)}};
    cli_admin_args *c = &a.common;
    kjoin_err err;
    char run_id[CLI_RUN_ID_LEN];
    int first = 0;
    int p = cli_parse(&sync_verb, argc, argv, on_opt, &a, &first, &err);
    if (p)
        return p < 0 ? 0 : cli_fail(c->format, &err);
    if (a.s.check && a.s.restart) {
        kjoin_err_set(&err, KJOIN_E_USAGE, "--restart writes nothing with --check: give one of them");
        return cli_fail(c->format, &err);
    }
    a.s.timeout_ms = c->timeout_ms;
    a.s.audit_id = cli_run_id(run_id);
    a.s.log = cli_log_line;
    a.s.log_ctx = &c->verbosity;
    kjoin_sync_result r;
    kjoin_code rc = kjoin_sync(&a.s, &r, &err);
    if (rc)
        return cli_fail_with(c->format, &err, r.n_files ? result_json(&r, run_id) : NULL);
    if (c->format == CLI_JSON)
        cli_print_json(result_json(&r, run_id));
    else if (c->verbosity >= 0)
        print_text(&r, a.s.check);
    return a.s.check && r.drift ? EXIT_DRIFT : r.written ? EXIT_WRITTEN : 0;
}
