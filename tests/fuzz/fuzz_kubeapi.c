/* What the API client reads: an admin kubeconfig, and the API's answers
 * (Status errors, bootstrap-token SecretLists). The first byte picks one. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"

#include <kjoin/private/kubeapi.h>
#include <kjoin/private/token.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    switch (data[0] % 3) {
    case 0: {
        kjoin_kubeapi_config c;
        if (kjoin_kubeapi_config_parse(text, len, NULL, NULL, &c, NULL) == KJOIN_OK)
            kjoin_kubeapi_config_release(&c);
        break;
    }
    case 1: {
        char reason[KJOIN_KUBEAPI_REASON_MAX], message[KJOIN_KUBEAPI_MESSAGE_MAX];
        kjoin_kubeapi_status_decode(403, text, len, reason, message);
        break;
    }
    default: {
        kjoin_token_list l;
        if (kjoin_token_list_decode(text, len, &l, NULL) == KJOIN_OK)
            kjoin_token_list_release(&l);
        break;
    }
    }
    return 0;
}
