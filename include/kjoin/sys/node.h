/* Plumbing of pkg/node (as libgit2's include/git2/sys/): a parser of
 * untrusted answers the join uses inside, public to the fuzzers and tests
 * only; not installed, not exported. */
#ifndef KJOIN_SYS_NODE_H
#define KJOIN_SYS_NODE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether a Node, as the API server answers it (JSON), has the condition
 * Ready=True. Untrusted: nulls, other types and garbage are not Ready. */
bool kjoin_node_ready(const char *json, size_t len);

#endif
