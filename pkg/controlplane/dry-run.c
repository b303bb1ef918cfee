/* A dry run of the control-plane steps writes under the join's dry-run
 * root (pkg/context); the files the steps judge are copied there first. */
#include <stdio.h>

#include <kjoin/private/controlplane.h>

#include "internal.h"

kjoin_code kjoin_cp_dry_run_copy(const kjoin_cp_context *cx, kjoin_err *err)
{
    char etcd[1100];
    snprintf(etcd, sizeof(etcd), "%s/etcd", cx->cert_dir);
    kjoin_code rc = kjoin_dry_run_copy_dir(cx->join, cx->cert_dir, "", err);
    if (!rc)
        rc = kjoin_dry_run_copy_dir(cx->join, etcd, "", err);
    if (!rc)
        rc = kjoin_dry_run_copy_dir(cx->join, cx->kubernetes_dir, ".conf", err);
    if (!rc)
        rc = kjoin_dry_run_copy_dir(cx->join, cx->manifests_dir, ".yaml", err);
    return rc;
}
