/* Private to pkg/join. */
#ifndef KJOIN_JOIN_INTERNAL_H
#define KJOIN_JOIN_INTERNAL_H

#include <kjoin/join.h>

/* kjoin_join with the plan kjoin_join_resolve made (resolving reads token
 * files, standard input among them, so it happens once); the plan is
 * cleared. */
kjoin_code kjoin_join__planned(const kjoin_join_spec *spec, kjoin_join_plan *plan, kjoin_join_outcome *out,
                               kjoin_err *err);

#endif
