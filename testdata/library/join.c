/* A program that joins through the installed libkjoin (the install test
 * builds it with `pkg-config --cflags --libs kjoin`).
 * Usage: join ENDPOINT TOKEN_FILE PIN KUBECONFIG_OUT */
#include <stdio.h>

#include <kjoin/join.h>
#include <kjoin/transport.h>

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s ENDPOINT TOKEN_FILE PIN KUBECONFIG_OUT\n", argv[0]);
        return 2;
    }
    kjoin_err err;
    kjoin_code rc = kjoin_http_global_init(&err);
    kjoin_pinset *pins = kjoin_pinset_new();
    if (!rc && !pins)
        rc = kjoin_err_set(&err, KJOIN_E_OTHER, "out of memory");
    if (!rc)
        rc = kjoin_pinset_add(pins, argv[3], &err);
    const char *endpoints[] = {argv[1]};
    kjoin_join_spec spec = {.version = KJOIN_JOIN_SPEC_VERSION, .endpoints = endpoints, .n_endpoints = 1,
                            .token_file = argv[2], .pins = pins,
                            .kubeconfig_out = argv[4], .timeout_ms = 20000};
    kjoin_join_outcome out;
    if (!rc)
        rc = kjoin_join(&spec, &out, &err);
    if (rc) {
        fprintf(stderr, "join: %s: %s\n", kjoin_code_reason(rc), err.msg);
    } else {
        printf("joined %s as token %s\n", out.result.server, out.token_id);
        kjoin_join_outcome_release(&out);
    }
    kjoin_pinset_free(pins);
    kjoin_http_global_cleanup();
    return (int)rc;
}
