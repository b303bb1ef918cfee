/* reset: exactly what a join made, removed again: the files the join wrote
 * while they still hold what it wrote, the kubelet's identity and state that
 * the join's kubelet made, the directories the join created; each relative
 * to an opened directory, never through a symlink or across a mount. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <kjoin/private/node.h>
#include <kjoin/private/safedir.h>

#include "../record/record.h"
#include "internal.h"

/* What a kubelet makes in its directory (besides the join's files and pki/,
 * whose files are told apart by name). */
static const char *const kubelet_made[] = {
    "checkpoints", "cpu_manager_state", "dra_manager_state", "memory_manager_state", "device-plugins",
    "image_manager", "plugins", "plugins_registry", "pod-resources", "pods", "pods-api",
    /* once it has run a Pod (a control-plane node's static Pods) */
    "allocated_pods_state", "actuated_pods_state", "graceful_node_shutdown_state"};
/* ... and in its pki directory. */
static const char *const kubelet_pki_made[] = {"kubelet-client-*.pem", "kubelet.crt", "kubelet.key"};

typedef struct run {
    const kjoin_kubelet_reset_spec *spec;
    kjoin_kubelet_reset_result *out;
    kjoin_node__resolved p;
    kjoin_node_state *state;
} run;

static void list_add(char ***list, size_t *n, const char *fmt, const char *a, const char *b)
{
    char line[4400], **grown = realloc(*list, (*n + 1) * sizeof(**list));
    if (!grown)
        return;
    *list = grown;
    snprintf(line, sizeof(line), fmt, a, b);
    if (((*list)[*n] = strdup(line)))
        (*n)++;
}

static void removed(run *r, const char *path)
{
    list_add(&r->out->removed, &r->out->n_removed, "%s%s", path, "");
    kjoin_logf(r->spec->log, r->spec->log_ctx, 1, "[reset] Removed %s", path);
}

static void kept(run *r, const char *path, const char *why)
{
    list_add(&r->out->kept, &r->out->n_kept, "%s: %s", path, why);
    kjoin_logf(r->spec->log, r->spec->log_ctx, KJOIN_LOG_WARNING, "[reset] Left %s: %s", path, why);
}

void kjoin_kubelet_reset_result_release(kjoin_kubelet_reset_result *r)
{
    for (size_t i = 0; r && i < r->n_removed; i++)
        free(r->removed[i]);
    for (size_t i = 0; r && i < r->n_kept; i++)
        free(r->kept[i]);
    if (r) {
        free(r->removed);
        free(r->kept);
        memset(r, 0, sizeof(*r));
    }
}

/* What undoing one of the join's files or directories did. */
static void undone(void *ctx, const char *path, kjoin_undo u, const char *why)
{
    if (u == KJOIN_UNDO_REMOVED)
        removed(ctx, path);
    else if (u == KJOIN_UNDO_LEFT)
        kept(ctx, path, why);
}

/* kubelet.conf as the join's kubelet wrote it: for the recorded server, with
 * the kubelet's rotating client certificate. */
static void remove_kubelet_kubeconfig(run *r)
{
    if (kjoin_written_has_file(&r->state->written, r->p.kubelet_kubeconfig, NULL))
        return; /* kjoin's own TLS bootstrap wrote it: a recorded file */
    char *text = NULL;
    const char *name;
    size_t len = 0;
    bool missing = false;
    kjoin_safedir d;
    kjoin_err e;
    if (kjoin_safedir_open_parent(r->p.kubelet_kubeconfig, &d, &name, &e))
        return;
    if (kjoin_safedir_read(&d, name, 1 << 20, true, &text, &len, &missing, &e)) {
        if (!missing)
            kept(r, r->p.kubelet_kubeconfig, e.msg);
    } else if (!kjoin_node__is_kubelets_kubeconfig(text, &r->p, r->state->server)) {
        kept(r, r->p.kubelet_kubeconfig, "not the kubelet's kubeconfig for the cluster this node joined");
    } else if (!r->spec->dry_run && kjoin_safedir_unlink(&d, name, &e)) {
        kept(r, r->p.kubelet_kubeconfig, e.msg);
    } else {
        removed(r, r->p.kubelet_kubeconfig);
    }
    kjoin_free_wiped(text, len);
    kjoin_safedir_close(&d);
}

/* Whether a mount point lies at or below path (/proc/self/mountinfo): a
 * volume the kubelet left mounted, maybe a bind mount of the same file
 * system, which removing the tree would reach through. */
static bool holds_mount(const char *path)
{
    return kjoin_node__mounts_under(path, NULL, 0) > 0;
}

static int deeper_then_name(const void *a, const void *b)
{
    size_t la = strlen(a), lb = strlen(b);
    return la != lb ? (la < lb) - (la > lb) : strcmp(a, b);
}

static size_t count_of(char (*list)[4096], size_t n, const char *point)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += !strcmp(list[i], point);
    return c;
}

/* What the join's kubelet mounted at or below its directory (its directory
 * onto itself on a machine that had none, its pods' volumes), unmounted
 * deepest first, as kubeadm reset does; a mount that was there before the
 * join (a data disk) stays. A record from before mounts were kept leaves
 * them all. */
static void unmount_kubelet_made(run *r)
{
    enum { CAP = 512 };
    if (!r->state->has_mounts || r->spec->dry_run)
        return;
    char (*now)[4096] = calloc(CAP, sizeof(*now));
    size_t n = now ? kjoin_node__mounts_under(r->p.kubelet_dir, now, CAP) : 0;
    n = n > CAP ? CAP : n;
    if (n)
        qsort(now, n, sizeof(*now), deeper_then_name);
    for (size_t i = 0; i < n; i++) {
        if (i && !strcmp(now[i], now[i - 1]))
            continue;
        size_t extra = count_of(now, n, now[i]), before = count_of(r->state->mounts, r->state->n_mounts, now[i]);
        for (; extra > before; extra--) {
            if (umount2(now[i], UMOUNT_NOFOLLOW) != 0 && umount2(now[i], UMOUNT_NOFOLLOW | MNT_DETACH) != 0) {
                char why[300];
                snprintf(why, sizeof(why), "cannot unmount it: %s", strerror(errno));
                kept(r, now[i], why);
                break;
            }
            kjoin_logf(r->spec->log, r->spec->log_ctx, 1, "[reset] Unmounted %s", now[i]);
        }
    }
    free(now);
}

static bool listed(char (*names)[256], size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name))
            return true;
    return false;
}

/* Whether name was in the kubelet directory, or in its pki/, before the join. */
static bool was_there(const run *r, const char *name)
{
    return listed(r->state->kubelet_entries, r->state->n_kubelet_entries, name);
}
static bool was_in_pki(const run *r, const char *name)
{
    return listed(r->state->pki_entries, r->state->n_pki_entries, name);
}

/* The kubelet's identity and state, made after the join started it. */
static void remove_kubelet_state(run *r)
{
    kjoin_safedir d, pki;
    kjoin_err e;
    char path[4400], why[400];
    if (kjoin_safedir_open(r->p.kubelet_dir, 0, &d, &e))
        return;
    if (!kjoin_safedir_open(r->p.kubelet_pki, 0, &pki, &e)) {
        int fd = dup(pki.fd); /* listed through the descriptor that was checked */
        DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
        if (!dir && fd >= 0)
            close(fd);
        struct dirent *ent;
        while (dir && (ent = readdir(dir))) {
            bool match = false;
            for (size_t i = 0; i < sizeof(kubelet_pki_made) / sizeof(kubelet_pki_made[0]) && !match; i++)
                match = fnmatch(kubelet_pki_made[i], ent->d_name, 0) == 0;
            snprintf(path, sizeof(path), "%s/%s", r->p.kubelet_pki, ent->d_name);
            if (!match || was_in_pki(r, ent->d_name)) /* an operator's serving certificate stays */
                continue;
            if (!r->spec->dry_run && kjoin_safedir_unlink(&pki, ent->d_name, &e))
                kept(r, path, e.msg);
            else
                removed(r, path);
        }
        if (dir)
            closedir(dir);
        kjoin_safedir_close(&pki);
        if (!was_there(r, "pki") && !r->spec->dry_run) {
            if (unlinkat(d.fd, "pki", AT_REMOVEDIR) == 0)
                removed(r, r->p.kubelet_pki);
            else if (errno != ENOENT)
                kept(r, r->p.kubelet_pki, errno == ENOTEMPTY ? "not empty: it holds files the kubelet did not make"
                                                              : strerror(errno));
        }
    }
    struct stat st;
    if (fstat(d.fd, &st) == 0)
        for (size_t i = 0; i < sizeof(kubelet_made) / sizeof(kubelet_made[0]); i++) {
            struct stat entry;
            if (was_there(r, kubelet_made[i]) || fstatat(d.fd, kubelet_made[i], &entry, AT_SYMLINK_NOFOLLOW) != 0)
                continue;
            snprintf(path, sizeof(path), "%s/%s", r->p.kubelet_dir, kubelet_made[i]);
            if (holds_mount(path) && !r->spec->dry_run)
                kept(r, path, "a volume is still mounted below it: unmount it first");
            else if (r->spec->dry_run || kjoin_safedir_remove_tree(d.fd, kubelet_made[i], st.st_dev, why, sizeof(why)))
                removed(r, path);
            else
                kept(r, path, why);
        }
    kjoin_safedir_close(&d);
}

/* The join record, when there is one (r->state; NULL with success when
 * there is none). */
static kjoin_code read_record(run *r, kjoin_err *err)
{
    bool found = false;
    kjoin_node__resolve(&r->spec->paths, &r->p);
    if (!(r->state = calloc(1, sizeof(kjoin_node_state))))
        return kjoin_err_set(err, KJOIN_E_OTHER, "out of memory");
    kjoin_code rc = kjoin_node__read_record(&r->p, &r->spec->paths, r->state, &found, NULL, err);
    if (rc || !found) {
        free(r->state);
        r->state = NULL;
    }
    return rc;
}

kjoin_code kjoin_kubelet_reset_stop(const kjoin_kubelet_reset_spec *spec, kjoin_kubelet_reset_result *out, kjoin_err *err)
{
    run r = {.spec = spec, .out = out};
    memset(out, 0, sizeof(*out));
    kjoin_code rc = read_record(&r, err);
    if (rc || !r.state)
        return rc;
    out->had_state = true;
    snprintf(out->node_name, sizeof(out->node_name), "%s", r.state->node_name);
    free(r.state);
    kjoin_kubelet_config kubelet;
    char why[400];
    kjoin_err e;
    if (kjoin_node__systemd(spec->systemd_dir)) {
        /* A running kubelet would write again what reset removes. */
        if (spec->dry_run) {
            kjoin_logf(spec->log, spec->log_ctx, 0, "[reset] Would stop the kubelet (systemctl stop kubelet)");
        } else if (kjoin_node__systemctl("stop", 60000, &e))
            return kjoin_err_set(err, KJOIN_E_OTHER, "could not stop the kubelet (%s): nothing was removed; stop it "
                                 "and run the reset again", e.msg);
        else
            out->kubelet_stopped = true;
    } else {
        kjoin_node__kubelet_config(&r.p, &kubelet); /* the defaults when config.yaml is gone */
        if (kubelet.healthz_port && kjoin_node__healthz(&kubelet, why, sizeof(why)))
            return kjoin_err_set(err, KJOIN_E_USAGE, "the kubelet still runs (its healthz answers) and systemd "
                                 "does not run this machine: stop the kubelet first; nothing was removed");
    }
    kjoin_node__crash_point("reset-stopped");
    return KJOIN_OK;
}

/* The record last of the node's files: gone, or, when the control plane's
 * part is in it too (its reset comes next), kept with that part alone. */
static kjoin_code drop_node_part(run *r, kjoin_err *err)
{
    json_object *file = NULL, *part, *rest = kjoin_record_file_new();
    kjoin_code rc = kjoin_record_file_load(r->p.kubernetes_dir, &file, err);
    bool gone = !json_object_object_get_ex(file, KJOIN_RECORD_CONTROL_PLANE, &part); /* a dry run's answer */
    if (!gone)
        json_object_object_add(rest, KJOIN_RECORD_CONTROL_PLANE, json_object_get(part));
    if (!rc && !r->spec->dry_run) /* neither part left: the file goes */
        rc = kjoin_record_file_store(r->p.kubernetes_dir, rest, &gone, err);
    json_object_put(rest);
    json_object_put(file);
    if (!rc && gone)
        removed(r, r->p.state);
    return rc;
}

void kjoin_kubelet_reset_report(void *reporter, const char *path, kjoin_undo what, const char *why)
{
    const kjoin_kubelet_reset_reporter *rep = reporter;
    run r = {.spec = rep->spec, .out = rep->out};
    undone(&r, path, what, why);
}

kjoin_code kjoin_kubelet_reset_remove(const kjoin_kubelet_reset_spec *spec, kjoin_kubelet_reset_result *out, kjoin_err *err)
{
    return kjoin_kubelet_reset_remove_files(spec, out, NULL, err);
}

static bool was_removed(const run *r, const char *path)
{
    for (size_t i = 0; i < r->out->n_removed; i++)
        if (!strcmp(r->out->removed[i], path))
            return true;
    return false;
}

/* The proxy's drop-ins gone: systemd forgets them, and containerd runs
 * without its proxy again (its containers go on). A failure is said, not
 * fatal: the files are gone. */
static void proxy_units_after_reset(run *r)
{
    bool containerd = was_removed(r, r->p.containerd_proxy);
    kjoin_err e;
    if (r->spec->dry_run || !kjoin_node__systemd(r->spec->systemd_dir) ||
        (!containerd && !was_removed(r, r->p.kubelet_proxy)))
        return;
    if (kjoin_node__systemctl_unit("daemon-reload", NULL, 60000, &e) ||
        (containerd && kjoin_node__systemctl_unit("try-restart", "containerd", 60000, &e)))
        kjoin_logf(r->spec->log, r->spec->log_ctx, KJOIN_LOG_WARNING, "[reset] After the proxy's drop-ins: %s", e.msg);
    else if (containerd)
        kjoin_logf(r->spec->log, r->spec->log_ctx, 0, "[reset] Restarted containerd without its proxy drop-in");
}

kjoin_code kjoin_kubelet_reset_remove_files(const kjoin_kubelet_reset_spec *spec, kjoin_kubelet_reset_result *out,
                                            kjoin_written *dirs, kjoin_err *err)
{
    run r = {.spec = spec, .out = out};
    kjoin_code rc = read_record(&r, err);
    if (rc || !r.state)
        return rc;
    unmount_kubelet_made(&r);
    kjoin_written_undo_files(&r.state->written, NULL, spec->dry_run, undone, &r);
    proxy_units_after_reset(&r);
    kjoin_node__crash_point("reset-files");
    remove_kubelet_kubeconfig(&r);
    remove_kubelet_state(&r);
    kjoin_node__crash_point("reset-state");
    rc = drop_node_part(&r, err);
    /* The directories the join made, deepest first, when nothing else is in them (or the caller's to undo). */
    if (!rc && dirs)
        *dirs = r.state->written;
    else if (!rc)
        kjoin_written_undo_dirs(&r.state->written, NULL, spec->dry_run, KJOIN_RESET_NOT_EMPTY, undone, &r);
    free(r.state);
    return rc;
}

kjoin_code kjoin_kubelet_reset(const kjoin_kubelet_reset_spec *spec, kjoin_kubelet_reset_result *out, kjoin_err *err)
{
    kjoin_code rc = kjoin_kubelet_reset_stop(spec, out, err);
    return rc || !out->had_state ? rc : kjoin_kubelet_reset_remove(spec, out, err);
}
