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
} kjoin_join_context;

/* What is left of the deadline, in milliseconds (at least 1). */
int64_t kjoin_join_context_left_ms(const kjoin_join_context *cx);
/* An API client's options within the context: its deadline (or bound_ms
 * from now, when that is sooner and not 0), each request's own bound
 * call_ms (0: the context's kubernetesAPICall timeout; -1: none), the
 * Audit-ID and the log. */
kjoin_kubeapi_options kjoin_join_context_api_options(const kjoin_join_context *cx, int64_t bound_ms, int64_t call_ms);

#endif
