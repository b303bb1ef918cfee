/* A worker join as `kubeadm join` runs it: preflight, discovery, then
 * kubelet-start and kubelet-wait-bootstrap, each phase skippable by its
 * kubeadm name. The order and what each phase needs from the others live
 * here; a command only fills the specification. */
#ifndef KJOIN_WORKER_H
#define KJOIN_WORKER_H

#include <kjoin/join.h>
#include <kjoin/node.h>

typedef struct kjoin_worker_spec {
    kjoin_join_spec *join;             /* discovery; its kubeconfig_out is the bootstrap kubeconfig */
    unsigned phases;                   /* KJOIN_PHASE_* to run (discovery runs when kubelet-start does, or
                                        * when no node phase is asked for) */
    kjoin_preflight_spec preflight;    /* its paths are the node's */
    const char *const *taints;
    size_t n_taints;
    const char *const *extra_args;
    size_t n_extra_args;
    const char *join_id;
    /* Runs after kubelet-start wrote the bootstrap kubeconfig, before the
     * kubelet starts (the command's own TLS bootstrap); may be NULL. */
    kjoin_code (*before_start)(void *ctx, kjoin_err *err);
    void *before_start_ctx;
} kjoin_worker_spec;

typedef struct kjoin_worker_outcome {
    bool discovered;
    kjoin_join_outcome join;
    kjoin_preflight_report preflight;
    kjoin_kubelet_start_result kubelet;
    unsigned ran;                      /* the phases that ran to the end */
    int64_t phase_ms[3];               /* preflight, kubelet-start, kubelet-wait-bootstrap (discovery's
                                        * own time is join.result.elapsed_ms) */
} kjoin_worker_outcome;

/* Runs the phases asked for. Findings and steps are logged as they happen.
 * *out is filled as far as the join got, also on failure; release it with
 * kjoin_worker_outcome_release(). Errors: those of kjoin_preflight_node,
 * kjoin_join and kjoin_kubelet_start. */
kjoin_code kjoin_worker_join(const kjoin_worker_spec *spec, kjoin_worker_outcome *out, kjoin_err *err);
void kjoin_worker_outcome_release(kjoin_worker_outcome *o);

#endif
