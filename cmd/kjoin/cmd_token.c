/* kjoin token generate */
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include <kjoin/token.h>

#include "cli.h"
#include "verbs.h"

enum { OPT_OUTPUT };

static const cli_opt token_opts[] = {
    {OPT_OUTPUT, "output", 'o', true, "FORMAT", "text (default) or json"},
};

static const cli_verb generate_verb = {
    .usage = "kjoin token generate [flags]",
    .summary = "Print a new random bootstrap token ([a-z0-9]{6}.[a-z0-9]{16}) drawn from\n"
               "OpenSSL's CSPRNG. Create it on the cluster with 'kubeadm token create TOKEN'.",
    .opts = token_opts,
    .n_opts = 1,
    .min_args = 0,
    .max_args = 0,
};

static kjoin_code on_opt(void *ctx, int id, const char *arg, kjoin_err *err)
{
    (void)id;
    return cli_parse_format(arg, ctx, err);
}

int cmd_token(int argc, char **argv)
{
    cli_format format = CLI_TEXT;
    kjoin_err err;
    if (argc < 2 || strcmp(argv[1], "generate") != 0) {
        kjoin_err_set(&err, KJOIN_E_USAGE, "usage: %s", generate_verb.usage);
        return cli_fail(format, &err);
    }
    int first;
    int p = cli_parse(&generate_verb, argc - 1, argv + 1, on_opt, &format, &first, &err);
    if (p < 0)
        return 0;
    kjoin_token t;
    kjoin_code rc = p ? (kjoin_code)p : kjoin_token_generate(&t, &err);
    if (rc)
        return cli_fail(format, &err);
    char s[KJOIN_TOKEN_STR_MAX];
    kjoin_token_format(&t, s);
    if (format == CLI_JSON) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "token", json_object_new_string(s));
        json_object_object_add(o, "tokenID", json_object_new_string(t.id));
        cli_print_json(o);
    } else {
        printf("%s\n", s);
    }
    OPENSSL_cleanse(s, sizeof(s));
    kjoin_token_clear(&t);
    return 0;
}
