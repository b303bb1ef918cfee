/* One join's context, made once by the join (pkg/join) after discovery and
 * read by every step of the node's and the control plane's side: the
 * ambient bundle (the one deadline, kubeadm's stage timeouts, the join's
 * ID, the Audit-ID, the log), the node's name, the CA discovery verified
 * and the one client with the bootstrap identity, the cluster's
 * ClusterConfiguration as the join read it, the patches. The steps trust
 * it: its values were checked where the join began. The library's own: not
 * installed, not exported. */
#ifndef KJOIN_PRIVATE_CONTEXT_H
#define KJOIN_PRIVATE_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include <kjoin/kubeapi.h>
#include <kjoin/node.h>
#include <kjoin/util.h>

struct kjoin_cluster_configuration;
struct kjoin_patchset;

/* A dry run's one root, as kubeadm's dry-run directory: every step of the
 * join writes its files under a new private directory instead of the
 * node's places (the paths the files name stay the node's) and notes each
 * there; the join shows them at the node's paths and removes it all. */
typedef struct kjoin_dry_run {
    char root[256];                    /* made by mkdtemp: 0700, no one else's */
    size_t n;
    struct {
        char path[1200];               /* the node's path */
        unsigned mode;
    } files[KJOIN_PLANNED_MAX];        /* in the order written; a path written twice is shown once */
} kjoin_dry_run;

typedef struct kjoin_join_context {
    /* The ambient bundle: */
    int64_t deadline_ms;               /* kjoin_now_ms()'s clock: by when everything ends; 0: a minute from each
                                        * use (a reset's step, a test) */
    kjoin_stage_timeouts timeouts;     /* kubeadm's timeouts.*: each stage's own bound within the deadline */
    const char *join_id;               /* recorded for reset */
    const char *audit_id;              /* sent as Audit-ID with every request */
    kjoin_log_fn log;
    void *log_ctx;
    /* Who joins, and whom it trusts: */
    kjoin_node_name name;              /* resolved once (kjoin_node_name_resolve) */
    const char *ca_pem;                /* the CA bundle discovery verified; NULL: none (the wait alone, a test) */
    size_t ca_len;
    struct kjoin_kubeapi *bootstrap_api; /* the one client with the verified bootstrap kubeconfig; NULL: none yet */
    /* The cluster, read once: */
    const struct kjoin_cluster_configuration *cluster; /* kubeadm-config's ClusterConfiguration (a control-plane
                                        * join reads it first); NULL: kubelet-start reads it */
    const struct kjoin_patchset *patches; /* kubeadm's patches directory, read; NULL: none */
    /* Where the files go: */
    kjoin_dry_run *dry_run;            /* NULL: each where it belongs; else under the dry run's root */
} kjoin_join_context;

/* What is left of the deadline, in milliseconds (at least 1). */
int64_t kjoin_join_context_left_ms(const kjoin_join_context *cx);
/* An API client's options within the context: its deadline (or bound_ms
 * from now, when that is sooner and not 0), each request's own bound
 * call_ms (0: the context's kubernetesAPICall timeout; -1: none), the
 * Audit-ID and the log. */
kjoin_kubeapi_options kjoin_join_context_api_options(const kjoin_join_context *cx, int64_t bound_ms, int64_t call_ms);


/* Where a step writes (and reads back) the node's file or directory at
 * path: path itself, or under a dry run's root. Errors: KJOIN_E_USAGE (too
 * long). */
kjoin_code kjoin_join_context_write_path(const kjoin_join_context *cx, const char *path, char *out, size_t cap,
                                         kjoin_err *err);
/* Where a step reads the node's file at path that an earlier step wrote: a
 * dry run's copy when its steps wrote one, else path (a dry run of one
 * phase reads what earlier runs left on the node). */
void kjoin_join_context_read_path(const kjoin_join_context *cx, const char *path, char *out, size_t cap);
/* Notes that a step wrote the file at written (its write path) with mode:
 * what a dry run shows. No-op outside a dry run. Errors: KJOIN_E_OTHER (more
 * files than a dry run shows). */
kjoin_code kjoin_join_context_wrote(const kjoin_join_context *cx, const char *written, unsigned mode, kjoin_err *err);

/* A new dry run (*out, free it with kjoin_dry_run_end): its root made under
 * tmp_dir and removed by a signal from here on. Errors: KJOIN_E_OUTPUT (the
 * directory), KJOIN_E_USAGE (tmp_dir too long), KJOIN_E_OTHER. */
kjoin_code kjoin_dry_run_begin(const char *tmp_dir, kjoin_dry_run **out, kjoin_err *err);
/* The node's regular files directly in dir (those whose names end with
 * suffix), or the one file at path, copied under the root as the node holds
 * them, modes kept: the dry run's steps then keep, replace or refuse each as
 * the join's would. No-op outside a dry run or when the node has none.
 * Errors: reading or writing them. */
kjoin_code kjoin_dry_run_copy_dir(const kjoin_join_context *cx, const char *dir, const char *suffix, kjoin_err *err);
kjoin_code kjoin_dry_run_copy_file(const kjoin_join_context *cx, const char *path, kjoin_err *err);
/* Each file the dry run's steps wrote, as it would be written at the
 * node's path, private keys and client keys masked, appended to plan (each
 * path once). Errors: KJOIN_E_OTHER (reading them back, too many). */
kjoin_code kjoin_dry_run_show(const kjoin_dry_run *d, kjoin_planned_files *plan, kjoin_err *err);
/* Removes the root and all in it, then d (NULL: no-op); what cannot be
 * removed is said on log (it holds keys). */
void kjoin_dry_run_end(kjoin_dry_run *d, kjoin_log_fn log, void *log_ctx);

/* Adds one file to plan (len bytes of data, tokens masked, control
 * characters shown as "?"). Errors: KJOIN_E_OTHER. */
kjoin_code kjoin_planned_add(kjoin_planned_files *plan, const char *path, unsigned mode, const char *data, size_t len,
                             kjoin_err *err);
void kjoin_planned_release(kjoin_planned_files *plan);

#endif
