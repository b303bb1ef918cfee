/* kjoin reset of any node kjoin joined, in one order a library caller gets
 * too: every refusal before the first change (the records read, the
 * kubelet stopped), then, as kubeadm reset, the node's etcd member out of
 * the cluster, the Pods the kubelet started stopped, the files of both
 * joins removed while they hold what was written, and the directories the
 * joins made once nothing else is in them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <kjoin/private/safedir.h>
#include <kjoin/phases.h>
#include <kjoin/private/controlplane.h>
#include <kjoin/private/util.h>

#define logf_(s, level, ...) kjoin_logf((s)->node.log, (s)->node.log_ctx, level, __VA_ARGS__)

static const struct {
    const char *name;
    unsigned bit;
} reset_phases[] = {{"preflight", KJOIN_RESET_PREFLIGHT},
                    {"remove-etcd-member", KJOIN_RESET_REMOVE_ETCD_MEMBER},
                    {"cleanup-node", KJOIN_RESET_CLEANUP_NODE}};

kjoin_code kjoin_reset_phases_parse(const char *list, unsigned *mask, kjoin_err *err)
{
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ","), i = 0;
        while (i < sizeof(reset_phases) / sizeof(reset_phases[0]) &&
               (strlen(reset_phases[i].name) != len || strncmp(p, reset_phases[i].name, len)))
            i++;
        if (i == sizeof(reset_phases) / sizeof(reset_phases[0])) {
            const char *names[sizeof(reset_phases) / sizeof(reset_phases[0])], *near;
            for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
                names[k] = reset_phases[k].name;
            near = kjoin_did_you_mean(p, len, names, sizeof(names) / sizeof(names[0]));
            return kjoin_err_set(err, KJOIN_E_USAGE, "unknown phase \"%.*s\"%s%s%s; kubeadm's reset has preflight, "
                                 "remove-etcd-member and cleanup-node", (int)(len > 60 ? 60 : len), p,
                                 near ? " (did you mean \"" : "", near ? near : "", near ? "\"?)" : "");
        }
        *mask |= reset_phases[i].bit;
        p += len + (p[len] == ',');
    }
    return KJOIN_OK;
}

/* kubeadm's --cleanup-tmp-dir: its backups' directory, never crossing a
 * mount or following a symlink. */
static void cleanup_tmp(const kjoin_reset_spec *s, const char *kdir, kjoin_reset_result *out)
{
    char path[4200], why[400] = "";
    kjoin_safedir d;
    kjoin_err e;
    struct stat st;
    snprintf(path, sizeof(path), "%s/tmp", kdir);
    if (lstat(path, &st) != 0 || kjoin_safedir_open(kdir, 0, &d, &e))
        return;
    bool gone = s->dry_run || (fstat(d.fd, &st) == 0 && kjoin_safedir_remove_tree(d.fd, "tmp", st.st_dev, why,
                                                                                  sizeof(why)));
    kjoin_safedir_close(&d);
    char **grown = gone ? realloc(out->node.removed, (out->node.n_removed + 1) * sizeof(char *)) : NULL;
    if (grown && (grown[out->node.n_removed] = strdup(path)))
        out->node.n_removed++;
    if (grown)
        out->node.removed = grown;
    if (!gone)
        logf_(s, KJOIN_LOG_WARNING, "[reset] Left %s: %s", path, why);
}

kjoin_code kjoin_reset(const kjoin_reset_spec *s, kjoin_reset_result *out, kjoin_err *err)
{
    memset(out, 0, sizeof(*out));
    if (kjoin_version_check(s ? &s->version : NULL, KJOIN_RESET_SPEC_VERSION, "reset specification",
                            "KJOIN_RESET_SPEC_INIT", err))
        return KJOIN_E_USAGE;
    const char *kdir = s->node.paths.kubernetes_dir ? s->node.paths.kubernetes_dir : KJOIN_NODE_KUBERNETES_DIR;
    /* The reset's one context: its Audit-ID and log, and the deadline of the etcd member's removal (set
     * when it begins). */
    kjoin_join_context ctx = {.audit_id = s->audit_id, .log = s->node.log, .log_ctx = s->node.log_ctx};
    kjoin_cp_reset_spec cps = {.join = &ctx, .kubernetes_dir = kdir, .dry_run = s->dry_run};
    kjoin_kubelet_reset_spec node = s->node;
    node.dry_run = s->dry_run;
    bool cleanup = !(s->skip & KJOIN_RESET_CLEANUP_NODE), etcd = !(s->skip & KJOIN_RESET_REMOVE_ETCD_MEMBER);

    kjoin_cp_record *rec = malloc(sizeof(*rec));
    kjoin_err e;
    bool cp_found = false;
    out->dry_run = s->dry_run;
    if (s->skip & ~(unsigned)KJOIN_RESET_ALL) {
        free(rec);
        return kjoin_err_set(err, KJOIN_E_USAGE, "`skip` names phases kubeadm's reset does not have");
    }
    if (!rec || !(out->control_plane = calloc(1, sizeof(*out->control_plane)))) {
        free(rec);
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    }
    /* Decided first: a control-plane record kjoin cannot read leaves its
     * part undone (said at the end), not the worker's. */
    if (kjoin_cp_record_read(kdir, rec, &cp_found, &e))
        snprintf(out->control_plane_refused, sizeof(out->control_plane_refused), "%s", e.msg);
    free(rec);
    /* preflight's refusals come with stopping the kubelet (cleanup-node's
     * first step): skipping one of them reads the record alone. */
    kjoin_code rc = KJOIN_OK;
    if (cleanup || !(s->skip & KJOIN_RESET_PREFLIGHT)) {
        kjoin_kubelet_reset_spec first = node;
        first.dry_run = node.dry_run || !cleanup; /* preflight alone stops nothing */
        if ((rc = kjoin_kubelet_reset_stop(&first, &out->node, err)))
            return rc; /* nothing was changed */
    }
    char sock[512];
    if (s->cri_socket)
        snprintf(sock, sizeof(sock), "%s", s->cri_socket);
    else
        kjoin_reset_runtime(&s->node.paths, sock, sizeof(sock)); /* before its files go */
    bool cp = cp_found && !*out->control_plane_refused;
    ctx.deadline_ms = kjoin_now_ms() + (s->timeout_ms > 0 ? s->timeout_ms : 60000);
    if (cp && etcd && (rc = kjoin_cp_reset_etcd(&cps, out->control_plane, err)))
        return rc;
    if (cp && !etcd)
        logf_(s, KJOIN_LOG_WARNING, "[reset] WARNING: remove-etcd-member skipped: this node's etcd member stays in the "
              "cluster until it is removed (etcdctl member remove)");
    out->changed = !s->dry_run && (cleanup || (cp && etcd));
    if (!cleanup)
        return KJOIN_OK;
    if (s->dry_run && (out->node.had_state || cp)) {
        logf_(s, 0, "[reset] Would stop the Pods the kubelet ran (runtime %s)", *sock ? sock : "not found");
    } else if (out->node.had_state || cp) {
        kjoin_err pe;
        out->pods_stopped = !kjoin_reset_pods(sock, &out->pods, &pe);
        if (!out->pods_stopped)
            snprintf(out->pods_not_stopped, sizeof(out->pods_not_stopped), "%s", pe.msg);
        else if (out->pods)
            logf_(s, 0, "[reset] Stopped the %zu Pods the kubelet ran", out->pods);
    }
    /* Both parts' files, then every directory the joins made at once, deepest first (one part's may
     * hold the other's). */
    kjoin_written *dirs = calloc(2, sizeof(*dirs));
    kjoin_kubelet_reset_reporter reporter = {.spec = &node, .out = &out->node};
    if (!dirs)
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    if (out->node.had_state)
        rc = kjoin_kubelet_reset_remove_files(&node, &out->node, &dirs[0], err);
    if (!rc && cp)
        rc = kjoin_cp_reset_files(&cps, out->control_plane, &dirs[1], err);
    const kjoin_written_part parts[] = {{&dirs[0], kjoin_kubelet_reset_report, &reporter},
                                        {&dirs[1], kjoin_cp_reset_report, out->control_plane}};
    if (!rc)
        kjoin_written_undo_parts(parts, 2, s->dry_run, KJOIN_RESET_NOT_EMPTY);
    free(dirs);
    if (rc)
        return rc;
    if (s->cleanup_tmp_dir)
        cleanup_tmp(s, kdir, out);
    if (*out->control_plane_refused)
        return kjoin_err_set(err, KJOIN_E_USAGE, "%s: the control-plane join's files and etcd member were left (the "
                             "worker's join was undone)", out->control_plane_refused);
    return KJOIN_OK;
}

void kjoin_reset_result_release(kjoin_reset_result *r)
{
    if (!r)
        return;
    kjoin_kubelet_reset_result_release(&r->node);
    free(r->control_plane);
    r->control_plane = NULL;
}
