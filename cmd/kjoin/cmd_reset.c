/* kjoin reset: undo a join, worker or control plane, as kubeadm reset
 * does, but only what the join made; the library decides the order
 * (kjoin_reset), this prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kjoin/config.h>
#include <kjoin/controlplane.h>
#include <kjoin/node.h>
#include <kjoin/phases.h>
#include <kjoin/util.h>

#include "cli.h"
#include "verbs.h"

enum {
    OPT_OUTPUT, OPT_VERBOSE, OPT_QUIET, OPT_KUBEADM, OPT_DRY_RUN, OPT_SKIP_PHASES, OPT_CRI_SOCKET, OPT_CLEANUP_TMP,
    OPT_CONFIG, OPT_IGNORE_PREFLIGHT, OPT_KUBECONFIG,
};

static const cli_opt reset_opts[] = {
    {OPT_OUTPUT, "output", 'o', true, "FORMAT", "text (default) or json"},
    {OPT_VERBOSE, "v", 'v', true, "LEVEL", "log verbosity: 1 lists each file removed"},
    {OPT_QUIET, "quiet", 'q', false, NULL, "print errors only"},
    {OPT_KUBEADM, "force", 'f', false, NULL, "kubeadm's: accepted (kjoin never prompts)"},
    {OPT_DRY_RUN, "dry-run", 0, false, NULL, "decide everything and say what would be removed; change nothing"},
    {OPT_SKIP_PHASES, "skip-phases", 0, true, "LIST", "kubeadm reset's phases not to run: preflight, remove-etcd-member, cleanup-node"},
    {OPT_CRI_SOCKET, "cri-socket", 0, true, "SOCKET", "the runtime whose Pods are stopped (default: the one the kubelet used)"},
    {OPT_CLEANUP_TMP, "cleanup-tmp-dir", 0, false, NULL, "also remove kubeadm's /etc/kubernetes/tmp (its backups)"},
    {OPT_CONFIG, "config", 0, true, "FILE", "a kubeadm ResetConfiguration (v1beta4)"},
    {OPT_IGNORE_PREFLIGHT, "ignore-preflight-errors", 0, true, "LIST", "kubeadm's: accepted (reset's checks are refusals)"},
    {OPT_KUBECONFIG, "kubeconfig", 0, true, "FILE", "kubeadm's: accepted (the node's own admin.conf is used)"},
};

static const cli_verb reset_verb = {
    .usage = "kjoin reset [phase NAME] [--dry-run] [--skip-phases LIST] [--config FILE] [-o json]",
    .summary = "Undo what kjoin join made on this node, deciding before it changes anything: stop the\n"
               "kubelet (systemd); on a control-plane node take its etcd member out of the cluster;\n"
               "stop every Pod of the container runtime, as kubeadm reset does (crictl, or containerd's\n"
               "ctr: only what containerd's CRI made, never a container that is no Pod); remove the join's\n"
               "files while they hold what it wrote, the kubelet's identity and state from that join,\n"
               "and the directories it created. Other files are left and named. Running it again is fine.",
    .opts = reset_opts,
    .n_opts = sizeof(reset_opts) / sizeof(reset_opts[0]),
    .min_args = 0,
    .max_args = 0,
};

typedef struct reset_args {
    cli_format format;
    long verbosity;
    bool dry_run, cleanup_tmp, skip_given;
    unsigned skip;
    const char *cri_socket, *config;
} reset_args;

static kjoin_code on_opt(void *ctx, int id, const char *arg, kjoin_err *err)
{
    reset_args *a = ctx;
    switch (id) {
    case OPT_DRY_RUN: a->dry_run = true; break;
    case OPT_SKIP_PHASES: a->skip_given = true; return cli_flag_err("--skip-phases", kjoin_reset_phases_parse(arg, &a->skip, err), err);
    case OPT_CRI_SOCKET: a->cri_socket = arg; break;
    case OPT_CLEANUP_TMP: a->cleanup_tmp = true; break;
    case OPT_CONFIG: a->config = arg; break;
    case OPT_OUTPUT: return cli_parse_format(arg, &a->format, err);
    case OPT_VERBOSE: return cli_parse_long("-v", arg, 0, 10, &a->verbosity, err);
    case OPT_QUIET: a->verbosity = -1; break;
    }
    return KJOIN_OK;
}

static json_object *strings(char *const *list, size_t n)
{
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        json_object_array_add(arr, json_object_new_string(list[i]));
    return arr;
}

static void print_json(const kjoin_reset_result *res, const char *run_id, const kjoin_err *err)
{
    const kjoin_kubelet_reset_result *r = &res->node;
    const kjoin_cp_reset_result *cp = res->control_plane;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "runID", json_object_new_string(run_id));
    json_object_object_add(o, "dryRun", json_object_new_boolean(res->dry_run));
    json_object_object_add(o, "joined", json_object_new_boolean(r->had_state));
    json_object_object_add(o, "nodeName", r->had_state ? json_object_new_string(r->node_name) : NULL);
    json_object_object_add(o, "kubeletStopped", json_object_new_boolean(r->kubelet_stopped));
    json_object_object_add(o, "removed", strings(r->removed, r->n_removed));
    json_object_object_add(o, "left", strings(r->kept, r->n_kept));
    json_object *pods = json_object_new_object();
    json_object_object_add(pods, "found", json_object_new_int64((int64_t)res->pods));
    json_object_object_add(pods, "stopped", json_object_new_boolean(res->pods_stopped));
    if (*res->pods_not_stopped)
        json_object_object_add(pods, "notStopped", json_object_new_string(res->pods_not_stopped));
    json_object_object_add(o, "pods", pods);
    if (cp && (cp->had_record || *res->control_plane_refused)) {
        json_object *c = json_object_new_object(), *removed = json_object_new_array(), *left = json_object_new_array();
        for (size_t i = 0; i < cp->n_removed; i++)
            json_object_array_add(removed, json_object_new_string(cp->removed[i]));
        for (size_t i = 0; i < cp->n_left; i++)
            json_object_array_add(left, json_object_new_string(cp->left[i]));
        json_object_object_add(c, "etcdMember", json_object_new_boolean(cp->had_member));
        json_object_object_add(c, "etcdMemberRemoved", json_object_new_boolean(cp->member_removed));
        if (*cp->why_not)
            json_object_object_add(c, "etcdMemberNotRemoved", json_object_new_string(cp->why_not));
        if (*res->control_plane_refused)
            json_object_object_add(c, "refused", json_object_new_string(res->control_plane_refused));
        json_object_object_add(c, "removed", removed);
        json_object_object_add(c, "left", left);
        json_object_object_add(o, "controlPlane", c);
    }
    if (err)
        json_object_object_add(o, "error", cli_error_json(err));
    cli_print_json(o);
}

static void print_text(const kjoin_reset_result *res, bool dry_run)
{
    const kjoin_kubelet_reset_result *r = &res->node;
    const kjoin_cp_reset_result *cp = res->control_plane;
    if (!r->had_state && !cp->had_record && !*res->control_plane_refused) {
        cli_out(stdout, "[reset] No join of kjoin's on this node: nothing to undo\n");
        return;
    }
    if (dry_run) { /* every path reset would remove, none removed */
        for (size_t i = 0; i < cp->n_removed; i++)
            cli_out(stdout, "[dryrun] Would remove %s\n", cp->removed[i]);
        for (size_t i = 0; i < r->n_removed; i++)
            cli_out(stdout, "[dryrun] Would remove %s\n", r->removed[i]);
        for (size_t i = 0; i < cp->n_left; i++)
            cli_out(stderr, "[dryrun] Would leave %s\n", cp->left[i]);
        return;
    }
    if (res->pods && res->pods_stopped)
        cli_out(stdout, "[reset] Stopped the %zu Pods the kubelet ran\n", res->pods);
    else if (*res->pods_not_stopped && (r->had_state || cp->had_record))
        cli_out(stderr, "[reset] The Pods the kubelet ran were NOT stopped: %s\n", res->pods_not_stopped);
    if (cp->had_record)
        cli_out(stdout, "[reset] Removed %zu paths of the control-plane join%s%s\n", cp->n_removed,
                cp->had_member ? (cp->member_removed ? " and its etcd member" : "; its etcd member was NOT removed") : "",
                cp->n_left ? "; some were left (said below)" : "");
    for (size_t i = 0; i < cp->n_left; i++)
        cli_out(stderr, "[reset] Left %s\n", cp->left[i]);
    if (r->had_state)
        cli_out(stdout, "[reset] Removed %zu paths of the join of node %s%s\n", r->n_removed, r->node_name,
                r->n_kept ? "; some were left (said above)" : "");
}

/* kubeadm's "kjoin reset phase NAME": every other phase skipped. */
static kjoin_code take_phase(int *argc, char **argv, unsigned *skip, bool *given, kjoin_err *err)
{
    if (*argc < 2 || strcmp(argv[1], "phase"))
        return KJOIN_OK;
    if (*argc < 3 || argv[2][0] == '-')
        return kjoin_err_set(err, KJOIN_E_USAGE, "kjoin reset phase needs the phase's name: preflight, "
                                                 "remove-etcd-member or cleanup-node");
    unsigned one = 0;
    kjoin_code rc = strchr(argv[2], ',') ? kjoin_err_set(err, KJOIN_E_USAGE, "kjoin reset phase NAME runs one phase")
                                         : kjoin_reset_phases_parse(argv[2], &one, err);
    if (rc)
        return rc;
    *skip = KJOIN_RESET_ALL & ~one, *given = true;
    for (int i = 1; i + 2 <= *argc; i++)
        argv[i] = argv[i + 2];
    *argc -= 2;
    return KJOIN_OK;
}

/* The ResetConfiguration's settings, under the flags given. */
static kjoin_code from_config(reset_args *a, kjoin_reset_config *c, kjoin_err *err)
{
    char *text = NULL;
    size_t len = 0;
    kjoin_err inner;
    kjoin_code rc = kjoin_file_read(a->config, 1 << 20, &text, &len, err);
    if (!rc && (rc = kjoin_reset_config_parse(text, len, c, &inner)))
        kjoin_err_set(err, rc, "%s: %s", a->config, inner.msg);
    free(text);
    if (rc)
        return rc;
    for (size_t i = 0; a->verbosity >= 0 && i < c->n_notes; i++)
        cli_out(stderr, "[config] %s\n", c->notes[i]);
    a->dry_run |= c->dry_run;
    a->cleanup_tmp |= c->cleanup_tmp_dir;
    if (!a->cri_socket)
        a->cri_socket = c->cri_socket;
    if (!a->skip_given && c->skip_phases) /* --skip-phases, when given, instead of skipPhases */
        rc = kjoin_reset_phases_parse(c->skip_phases, &a->skip, err);
    return rc;
}

int cmd_reset(int argc, char **argv)
{
    reset_args a = {.format = cli_format_from_argv(argc, argv)};
    kjoin_reset_config cfg = {0};
    kjoin_err err;
    char run_id[CLI_RUN_ID_LEN];
    int first = 0;
    kjoin_code rc = take_phase(&argc, argv, &a.skip, &a.skip_given, &err);
    if (rc)
        return cli_fail(a.format, &err);
    int p = cli_parse(&reset_verb, argc, argv, on_opt, &a, &first, &err);
    if (p)
        return p < 0 ? 0 : cli_fail(a.format, &err);
    if (a.config && (rc = from_config(&a, &cfg, &err))) {
        kjoin_reset_config_release(&cfg);
        return cli_fail(a.format, &err);
    }
    cli_run_id(run_id);
    kjoin_reset_spec spec = {.version = KJOIN_RESET_SPEC_VERSION,
                             .node = {.log = cli_log_line, .log_ctx = &a.verbosity}, .timeout_ms = 60000,
                             .audit_id = run_id, .skip = a.skip, .dry_run = a.dry_run, .cri_socket = a.cri_socket,
                             .cleanup_tmp_dir = a.cleanup_tmp};
    kjoin_reset_result res;
    rc = kjoin_reset(&spec, &res, &err);
    kjoin_reset_config_release(&cfg);
    /* A reset that changed something says what, refused or not. */
    if (!rc || res.changed) {
        if (a.format == CLI_JSON)
            print_json(&res, run_id, rc ? &err : NULL);
        else if (a.verbosity >= 0)
            print_text(&res, a.dry_run);
        if (a.verbosity >= 0 && res.node.had_state && !a.dry_run) /* on stderr, -o json too */
            cli_out(stderr, "[reset] Left as they are: the container runtime's images, and the Node object %s in the "
                            "cluster, which only an admin can delete: kubectl delete node %s\n", res.node.node_name,
                    res.node.node_name);
    }
    kjoin_reset_result_release(&res);
    if (rc && a.format == CLI_JSON && res.changed) {
        fprintf(stderr, "kjoin: %s\n", err.msg);
        return cli_exit_code(err.code);
    }
    return rc ? cli_fail(a.format, &err) : 0;
}
