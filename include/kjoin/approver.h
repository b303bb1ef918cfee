/* kjoin approver: the controller that holds node-bound bootstrap tokens to
 * their node (docs/token.md). One instance acts at a time, chosen by a
 * coordination.k8s.io Lease as client-go's leader election chooses. */
#ifndef KJOIN_APPROVER_H
#define KJOIN_APPROVER_H

#include <signal.h>
#include <stdint.h>

#include <kjoin/err.h>
#include <kjoin/kubeapi.h>
#include <kjoin/token.h>
#include <kjoin/util.h>

#define KJOIN_APPROVER_LEASE_NAMESPACE "kube-system"
#define KJOIN_APPROVER_LEASE_NAME "kjoin-approver"
#define KJOIN_APPROVER_KUBECONFIG "/etc/kubernetes/kjoin-approver.conf"
#define KJOIN_APPROVER_HEALTHZ "127.0.0.1:10271"
/* The reasons on the conditions it sets (kubectl get csr shows them). */
#define KJOIN_APPROVER_APPROVED_REASON "KjoinBoundToken"
#define KJOIN_APPROVER_DENIED_REASON "KjoinTokenBound"

#define KJOIN_APPROVER_OPTIONS_VERSION 1
typedef struct kjoin_approver_options {
    unsigned version;            /* KJOIN_APPROVER_OPTIONS_VERSION */
    int64_t lease_duration_ms;   /* client-go's LeaseDuration (default 15 s) */
    int64_t renew_deadline_ms;   /* RenewDeadline: the leader steps down when it has not renewed for this long (10 s) */
    int64_t retry_period_ms;     /* RetryPeriod: between tries to acquire or renew (2 s) */
    int64_t resync_ms;           /* a full list of the CSRs this often, besides the watch (5 min) */
    const char *identity;        /* the Lease's holder (default: host name and a random suffix) */
    const char *healthz;         /* "host:port" answering GET /healthz; "" none (default KJOIN_APPROVER_HEALTHZ) */
    const volatile sig_atomic_t *stop; /* set (by a signal handler): the controller ends, giving up the Lease */
    kjoin_log_fn log;            /* one line per decision (level 0), the Lease's changes (0), requests (4) */
    void *log_ctx;
} kjoin_approver_options;
#define KJOIN_APPROVER_OPTIONS_INIT                                                                                  \
    {KJOIN_APPROVER_OPTIONS_VERSION, 15000, 10000, 2000, 300000, NULL, KJOIN_APPROVER_HEALTHZ, NULL, NULL, NULL}

/* Runs the controller with api (its own credentials) until *stop is set.
 * Errors: KJOIN_E_USAGE (options that break client-go's rules: lease
 * duration > renew deadline > retry period; a healthz address that cannot be
 * bound), KJOIN_E_API (RBAC refuses what it needs, at the start). */
kjoin_code kjoin_approver_run(kjoin_kubeapi *api, const kjoin_approver_options *opts, kjoin_err *err);

/* Makes the permissions a node-bound token needs (those of kubeadm's
 * default group but approval): idempotent. Errors: KJOIN_E_API. */
kjoin_code kjoin_approver_bound_rbac(kjoin_kubeapi *api, kjoin_err *err);

/* Whether the cluster approves any node's client certificate for a token
 * with these groups (kube-controller-manager asks RBAC whether the
 * requester may create certificatesigningrequests/nodeclient): such a
 * binding would be no binding. *why names it. Errors: KJOIN_E_API. */
kjoin_code kjoin_approver_auto_approved(kjoin_kubeapi *api, const char *token_id, const char *groups, bool *yes,
                                        kjoin_err *err);

/* install: the approver's own ServiceAccount, ClusterRole, Role and
 * bindings, the bound tokens' permissions, and a kubeconfig with the
 * account's token at kubeconfig_path (0600) naming server (NULL: api's), for
 * the systemd unit; idempotent. uninstall removes exactly those. Errors:
 * KJOIN_E_USAGE (server not https://), KJOIN_E_API, KJOIN_E_TIMEOUT (the
 * account's token never issued), KJOIN_E_OUTPUT. */
kjoin_code kjoin_approver_install(kjoin_kubeapi *api, const char *kubeconfig_path, const char *server, kjoin_log_fn log,
                                  void *log_ctx, kjoin_err *err);
kjoin_code kjoin_approver_uninstall(kjoin_kubeapi *api, const char *kubeconfig_path, kjoin_log_fn log, void *log_ctx,
                                    kjoin_err *err);

/* Whether each token of ids[0..n) has made a node: a CSR of it the cluster
 * approved (the CSR cleaner removes approved CSRs after an hour, a
 * single-use token's Secret is gone long before). Errors: KJOIN_E_API. */
kjoin_code kjoin_approver_used_tokens(kjoin_kubeapi *api, const char *const *ids, size_t n, bool *used,
                                      kjoin_err *err);

#endif
