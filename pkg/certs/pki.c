/* The PKI in memory: the helpers every file of pkg/certs shares, below the
 * stores (dirstore.c, secrets.c) and the decisions (manager.c). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include <kjoin/private/util.h>

#include "pki.h"

char *kjoin_certs__hours(int64_t s, char *buf, size_t cap)
{
    return kjoin_duration_format(s * 1000, buf, cap);
}

void kjoin_certs__say(pki *p, const char *fmt, ...)
{
    if (!p->rep || p->rep->n >= KJOIN_CERTS_REPORT_MAX)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->rep->lines[p->rep->n++], sizeof(p->rep->lines[0]), fmt, ap);
    va_end(ap);
}

void kjoin_certs__rfc3339(int64_t t, char *out, size_t cap)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int64_t kjoin_certs__parse_time(const char *rfc3339)
{
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    const char *end = strptime(rfc3339, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return end && !*end ? (int64_t)timegm(&tm) : 0;
}

X509 *kjoin_certs__first(const entry *e) { return sk_X509_value(e->certs, 0); }

entry *kjoin_certs__find(pki *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->e[i].name, name) == 0)
            return &p->e[i];
    return NULL;
}

void kjoin_certs__release(pki *p)
{
    for (size_t i = 0; i < p->n; i++)
        kjoin_certs__entry_release(&p->e[i]);
    p->n = 0;
}

