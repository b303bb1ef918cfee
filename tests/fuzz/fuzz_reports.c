/* A CertificateSigningRequestList as the API returns it to kjoin reports:
 * the reports in it (all, and one node's), every text printable and within
 * its field, newest first. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include <kjoin/report.h>

static void check(const kjoin_join_reports *r)
{
    for (size_t i = 0; i < r->n; i++) {
        const kjoin_join_report *p = &r->items[i];
        const char *texts[] = {p->name, p->join_id, p->node, p->phase, p->reason, p->kubelet, p->version, p->token_id};
        for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]); t++)
            for (const unsigned char *c = (const unsigned char *)texts[t]; *c; c++)
                if (*c < 0x20 || *c == 0x7f)
                    abort(); /* a control character would reach the terminal */
        if (p->exit_code < -1 || p->exit_code > 255 || (i && p->created > r->items[i - 1].created))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kjoin_join_reports r;
    if (kjoin_join_reports_decode((const char *)data, size, NULL, &r, NULL) == KJOIN_OK) {
        check(&r);
        kjoin_join_reports_release(&r);
    }
    if (kjoin_join_reports_decode((const char *)data, size, "n1", &r, NULL) == KJOIN_OK) {
        check(&r);
        for (size_t i = 0; i < r.n; i++)
            if (strcmp(r.items[i].node, "n1"))
                abort();
        kjoin_join_reports_release(&r);
    }
    return 0;
}
