/* Private to pkg/kubeconfig. */
#ifndef KJOIN_KUBECONFIG_INTERNAL_H
#define KJOIN_KUBECONFIG_INTERNAL_H

#include "../yamldoc/yamldoc.h"

/* The entry of seq whose "name" is name (NULL or "" for the unnamed one). */
yaml_node_t *kjoin_kubeconfig__find_named(kjoin_yaml *y, yaml_node_t *seq, const char *name);

#endif
