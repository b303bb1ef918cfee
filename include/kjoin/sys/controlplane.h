/* Plumbing of pkg/controlplane (as libgit2's include/git2/sys/): the
 * parsers of untrusted answers the join uses inside, public to the fuzzers
 * and tests only; not installed, not exported. */
#ifndef KJOIN_SYS_CONTROLPLANE_H
#define KJOIN_SYS_CONTROLPLANE_H

#include <kjoin/controlplane.h>

/* The members in an answer of etcd's gateway (/v3/cluster/member/list or
 * /add; untrusted: an ID of digits, https peer URLs, names without
 * separators), at most cap into out and learner. Errors: KJOIN_E_API. */
kjoin_code kjoin_etcd_members_parse(const char *json, size_t len, kjoin_etcd_member *out, bool *learner, size_t cap,
                                    size_t *n, kjoin_err *err);
/* The client URLs kubeadm's etcd.advertise-client-urls annotation gives in
 * a list of Pods (JSON; each an https URL), at most cap;
 * returns how many Pods the list has. */
size_t kjoin_etcd_endpoints_parse(const char *json, size_t len, char (*urls)[300], size_t cap, size_t *n);

#endif
