/* kjoin approver's parts, private to pkg/approver (and its unit tests). */
#ifndef KJOIN_APPROVER_INTERNAL_H
#define KJOIN_APPROVER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include <kjoin/private/approver.h>
#include <kjoin/private/kubeapi.h>
#include <kjoin/private/token.h>

#define APPROVER_SIGNER "kubernetes.io/kube-apiserver-client-kubelet"
#define APPROVER_REASON_MAX 1024

typedef enum approver_verdict {
    VERDICT_IGNORE,  /* not a bound token's, or decided already: never touched */
    VERDICT_APPROVE,
    VERDICT_DENY,
} approver_verdict;

/* What the approver makes of one CertificateSigningRequest. */
typedef struct approver_decision {
    approver_verdict verdict;
    char name[254];                    /* the CSR's */
    char token_id[KJOIN_TOKEN_ID_LEN + 1]; /* the requester's token; "" when not a bootstrap token */
    kjoin_token_binding binding;
    bool approved;                     /* already Approved (a spent single-use token) */
    char reason[APPROVER_REASON_MAX];  /* the denial's message, or what was approved */
} approver_decision;

/* Whether a single-use token already had a CSR approved (other than this
 * one): the approver's memory, from the CSRs it has seen. */
typedef bool (*approver_spent_fn)(void *ctx, const char *token_id, const char *csr_name);

/* Decides csr (one CertificateSigningRequest object, untrusted). */
void kjoin_approver__decide(json_object *csr, approver_spent_fn spent, void *ctx, approver_decision *out);

/* Whether csr was approved and made with token token_id. */
bool kjoin_approver__approved_for(json_object *csr, const char *token_id);

/* Whether csr, made with token token_id for node's kubelet client
 * certificate, was denied by kjoin approver; its message into reason. */
bool kjoin_approver__denied_for(json_object *csr, const char *token_id, const char *node, char *reason, size_t cap);

/* The /approval body that approves or denies csr with the decision's
 * reason: csr with one condition added. Newly-allocated, or NULL. */
char *kjoin_approver__approval_body(json_object *csr, const approver_decision *d);

/* GET path, a list (what names it in messages): *list is the answer (drop
 * it with json_object_put), *items its items, borrowed from it.
 * Errors: as kjoin_kubeapi_request, KJOIN_E_API (refused, or no list). */
kjoin_code kjoin_approver__get_list(kjoin_kubeapi *api, const char *path, const char *what, json_object **list,
                                    json_object **items, kjoin_err *err);

/* ---- leader election over a coordination.k8s.io Lease ------------------- */
typedef struct lease_record {
    char holder[256];
    int64_t duration_s;
    char acquire_time[40], renew_time[40];
    int64_t transitions;
    char resource_version[64];
} lease_record;

/* Parses a Lease (untrusted). false when it is not one. */
bool kjoin_approver__lease_parse(const char *json, size_t len, lease_record *out);

/* Whether r's holder renewed within its lease duration of now_s (Unix
 * seconds, the API server's clock: renewTime is the holder's, which the API
 * server's tracks closely, and the reader's may be far off). */
bool kjoin_approver__lease_current(const lease_record *r, int64_t now_s);
/* The Lease body to create (no resource version) or update (with one). */
char *kjoin_approver__lease_body(const char *ns, const char *name, const lease_record *r);
/* client-go's tryAcquireOrRenew, decided: from the record seen (NULL: no
 * Lease yet), when this instance last saw it change (observed_ms, its own
 * clock) and now_ms, whether identity writes *want (holding it for
 * duration_s, stamped stamp): a renewal keeps the tenure, a takeover (the
 * holder silent for its duration, or none) counts a transition. */
bool kjoin_approver__lease_next(const lease_record *seen, int64_t observed_ms, int64_t now_ms, const char *identity,
                                int64_t duration_s, const char *stamp, lease_record *want);
/* RFC 3339 with microseconds, as MicroTime. */
void kjoin_approver__micro_time(int64_t unix_ms, char out[40]);

#endif
