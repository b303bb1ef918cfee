/* URL redaction (what logs show of a discovery URL) and the source check. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#include <kjoin/private/discovery.h>
#include <kjoin/private/util.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    if (!s)
        return 0;
    static const size_t caps[] = {1, 2, 8, 64, 1024, 65536};
    for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
        char *out = malloc(caps[i]);
        if (!out)
            break;
        kjoin_url_redact(s, out, caps[i]);
        assert(strlen(out) < caps[i]);
        /* No userinfo survives in the authority, and nothing after "?" or "#"
         * but the marker. */
        const char *scheme = strstr(out, "://");
        if (scheme) {
            const char *host = scheme + 3;
            assert(!memchr(host, '@', strcspn(host, "/?#")));
            const char *q = host + strcspn(host, "?#");
            assert(!*q || strncmp(q, "?<redacted>", strlen(q)) == 0);
        }
        free(out);
    }
    kjoin_discovery_source_check(s, NULL);
    free(s);
    return 0;
}
