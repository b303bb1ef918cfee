/* The approver module's own plumbing, for the library's modules, its tests and
 * fuzzers: not installed, not exported. The public part is kjoin/approver.h. */
#ifndef KJOIN_PRIVATE_APPROVER_H
#define KJOIN_PRIVATE_APPROVER_H

#include <kjoin/approver.h>

/* Who holds the approver's Lease, and whether it is current, into holder
 * (cap bytes): KJOIN_OK with *held when a holder renewed within its lease
 * duration. Errors: KJOIN_E_API (refused, or no Lease: no approver ever
 * ran). */
kjoin_code kjoin_approver_holder(kjoin_kubeapi *api, char *holder, size_t cap, bool *held, kjoin_err *err);

/* Who the API server says api's token is (a SelfSubjectReview, served by
 * default from 1.27 on; minor is the server's release, 0 unknown): its
 * binding, and *known false when the release serves no SelfSubjectReview.
 * Errors: KJOIN_E_API. */
kjoin_code kjoin_approver_whoami(kjoin_kubeapi *api, int minor, kjoin_token_binding *out, bool *known,
                                 kjoin_err *err);
/* Whether api's token may join as node: a token bound to another node, or
 * carrying kjoin's groups without a binding, is refused before anything is
 * written. Unknown (an older release), or not bound: KJOIN_OK, and the
 * approver decides. *binding is what was learnt. Errors: KJOIN_E_USAGE,
 * KJOIN_E_API. */
kjoin_code kjoin_approver_check_binding(kjoin_kubeapi *api, int minor, const char *node,
                                        kjoin_token_binding *binding, bool *known, kjoin_err *err);
/* Whether kjoin approver denied a kubelet client CSR of node made with the
 * token token_id (its message into reason): a denial the same join would
 * meet again. Errors: KJOIN_E_API. */
kjoin_code kjoin_approver_denied(kjoin_kubeapi *api, const char *token_id, const char *node, char *reason, size_t cap,
                                 bool *denied, kjoin_err *err);

#endif
