/* Private to pkg/join. */
#ifndef KJOIN_JOIN_INTERNAL_H
#define KJOIN_JOIN_INTERNAL_H

#include <kjoin/private/join.h>

/* kjoin_join with the plan kjoin_join_resolve made (resolving reads token
 * files, standard input among them, so it happens once), writing the
 * kubeconfig and CA only when write; the plan is cleared. */
kjoin_code kjoin_join__planned(const kjoin_join_spec *spec, kjoin_join_plan *plan, bool write, kjoin_join_outcome *out,
                               kjoin_err *err);

/* Discovery's files: the verified kubeconfig at kubeconfig_path and, when
 * ca_path is set, the trusted CA there, by the node files' rules
 * (kjoin_node_file_write); o's write fields say what happened. Errors:
 * KJOIN_E_OUTPUT, KJOIN_E_USAGE, KJOIN_E_OTHER (no trusted CA). */
kjoin_code kjoin_join__write(kjoin_join_outcome *o, const char *kubeconfig_path, const char *ca_path, bool force,
                            kjoin_log_fn log, void *log_ctx, kjoin_err *err);

#endif
