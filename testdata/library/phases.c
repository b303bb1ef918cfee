/* A program that runs kubeadm's worker join through the installed libkjoin,
 * with the one worker specification (the install test builds it with
 * `pkg-config --cflags --libs kjoin`).
 * Usage: worker ENDPOINT TOKEN_FILE PIN NODE_NAME BOOTSTRAP_KUBECONFIG [SKIP_PHASES]
 * With SKIP_PHASES "preflight,kubelet-start" it is discovery alone. */
#include <stdio.h>

#include <kjoin/transport.h>
#include <kjoin/phases.h>

static void log_line(void *ctx, int level, const char *line)
{
    (void)ctx;
    if (level <= 0)
        fprintf(stderr, "%s\n", line);
}

int main(int argc, char **argv)
{
    if (argc != 6 && argc != 7) {
        fprintf(stderr, "usage: %s ENDPOINT TOKEN_FILE PIN NODE_NAME BOOTSTRAP_KUBECONFIG [SKIP_PHASES]\n", argv[0]);
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
    kjoin_phases_spec spec;
    kjoin_phases_spec_init(&spec);                  /* every phase, the default paths and timeout */
    spec.join.endpoints = endpoints;
    spec.join.n_endpoints = 1;
    spec.join.token_file = argv[2];
    spec.join.pins = pins;
    spec.join.timeout_ms = 20000;
    spec.join.log = log_line;
    spec.node.name = argv[4];
    spec.node.paths.bootstrap_kubeconfig = argv[5];
    if (!rc && argc == 7)
        rc = kjoin_phases_parse(argv[6], &spec.skip, &err);
    kjoin_phases_outcome out = {0};                  /* filled as far as the join got; released in any case */
    if (!rc)
        rc = kjoin_join_phases(&spec, &out, &err);
    if (rc)
        fprintf(stderr, "join: %s: %s\n", kjoin_code_reason(rc), err.msg);
    else
        printf("joined %s as node %s\n", out.join.result.server, out.node_name.name);
    kjoin_phases_outcome_release(&out);
    kjoin_pinset_free(pins);
    kjoin_http_global_cleanup();
    return (int)rc;
}
