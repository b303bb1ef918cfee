/* The two stores of a PKI behind one table: a run checks its store once
 * and takes its backend; from then on it asks the backend. */
#include <string.h>

#include "pki.h"

kjoin_code kjoin_certs_store_check(const kjoin_certs_store *st, kjoin_err *err)
{
    if (st->dir)
        return *st->dir ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_USAGE, "the certs directory is empty");
    if (!st->api)
        return kjoin_err_set(err, KJOIN_E_USAGE, "the Secrets store needs an API client");
    return kjoin_certs__secrets_names_check(st->ns, st->prefix, st->ca_secret, err);
}

const certs_backend *kjoin_certs__backend(const kjoin_certs_store *st)
{
    return st->dir ? &kjoin_certs__dir_backend : &kjoin_certs__secrets_backend;
}

kjoin_code kjoin_certs__begin(pki *p, const kjoin_certs_store *st, int64_t now, kjoin_certs_report *rep,
                              kjoin_err *err)
{
    memset(p, 0, sizeof(*p));
    p->where = st, p->now = now, p->rep = rep;
    p->store.dirfd = p->store.lockfd = p->store.genfd = -1; /* closed: 0 would be standard input */
    kjoin_code rc = kjoin_certs_store_check(st, err);
    if (!rc)
        p->be = kjoin_certs__backend(st);
    return rc;
}

void kjoin_certs__end(pki *p)
{
    if (p->be)
        p->be->close(p);
    kjoin_certs__release(p);
}
