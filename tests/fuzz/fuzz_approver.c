/* What kjoin approver reads from the API server: a CertificateSigningRequest
 * (decided, and its approval's body made), a watch event carrying one, and
 * its Lease. A decision on any input is one of three, with a reason for the
 * two that act. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include "../../pkg/approver/internal.h"

static bool spent(void *ctx, const char *id, const char *name)
{
    (void)ctx;
    return strlen(id) == KJOIN_TOKEN_ID_LEN && name != NULL && (id[0] & 1);
}

static void decide(json_object *csr)
{
    approver_decision d;
    kjoin_approver__decide(csr, spent, NULL, &d);
    if (d.verdict != VERDICT_IGNORE) {
        if (!*d.reason || !kjoin_token_id_valid(d.token_id))
            abort();
        free(kjoin_approver__approval_body(csr, &d));
    }
    kjoin_approver__approved_for(csr, "abcdef");
    char reason[64];
    kjoin_approver__denied_for(csr, "abcdef", "w7", reason, sizeof(reason));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_tokener *tok = json_tokener_new_ex(64);
    json_object *o = tok && size < INT32_MAX ? json_tokener_parse_ex(tok, (const char *)data, (int)size) : NULL, *obj;
    json_tokener_free(tok);
    if (o) {
        decide(o);
        if (json_object_object_get_ex(o, "object", &obj)) /* a watch event */
            decide(obj);
    }
    json_object_put(o);
    lease_record l;
    kjoin_approver__lease_parse((const char *)data, size, &l);
    return 0;
}
