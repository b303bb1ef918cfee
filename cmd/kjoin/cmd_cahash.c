/* kjoin ca-hash [FILE|-]: the pins of each certificate of a PEM bundle. */
#include <stdio.h>
#include <string.h>

#include <kjoin/pin.h>
#include <kjoin/util.h>

#include "cli.h"
#include "verbs.h"

#define DEFAULT_CA "/etc/kubernetes/pki/ca.crt"

enum { OPT_OUTPUT, OPT_ONLY };

static const cli_opt ca_hash_opts[] = {
    {OPT_OUTPUT, "output", 'o', true, "FORMAT", "text (default) or json"},
    {OPT_ONLY, "only", 0, true, "KIND", "print only pins of KIND (sha256 or root-sha256), one a line"},
};

static const cli_verb ca_hash_verb = {
    .usage = "kjoin ca-hash [FILE|-] [flags]",
    .summary = "Show a PEM bundle's structure (default " DEFAULT_CA "): for each certificate its\n"
               "subject, issuer, validity, role (root, intermediate or leaf of the bundle), its\n"
               "sha256: pin (SHA-256 of the DER SubjectPublicKeyInfo, as kubeadm) and, for roots,\n"
               "its root-sha256: pin (SHA-256 of the certificate's DER, also K3s' bundle hash).",
    .opts = ca_hash_opts,
    .n_opts = 2,
    .min_args = 0,
    .max_args = 1,
};

typedef struct ca_hash_args {
    cli_format format;
    const char *only;
} ca_hash_args;

static kjoin_code on_opt(void *ctx, int id, const char *arg, kjoin_err *err)
{
    ca_hash_args *a = ctx;
    if (id == OPT_OUTPUT)
        return cli_parse_format(arg, &a->format, err);
    if (strcmp(arg, "sha256") != 0 && strcmp(arg, "root-sha256") != 0)
        return kjoin_err_set(err, KJOIN_E_USAGE, "--only takes sha256 or root-sha256, not \"%s\"", arg);
    a->only = arg;
    return KJOIN_OK;
}

static void print_text(const kjoin_cert_info *c, size_t i)
{
    cli_out(stdout, "[%zu] %s\n", i + 1, c->subject);
    cli_out(stdout, "    %s%s, issuer %s, valid %s to %s\n", kjoin_cert_role_name(c->role),
           c->self_signed ? " (self-signed)" : "", c->issuer, c->not_before, c->not_after);
    cli_out(stdout, "    %s\n", c->spki_pin);
    if (*c->root_pin)
        cli_out(stdout, "    %s\n", c->root_pin);
}

int cmd_ca_hash(int argc, char **argv)
{
    ca_hash_args a = {.format = cli_format_from_argv(argc, argv)};
    kjoin_err err;
    int first;
    int p = cli_parse(&ca_hash_verb, argc, argv, on_opt, &a, &first, &err);
    if (p < 0)
        return 0;
    if (p)
        return cli_fail(a.format, &err);
    const char *path = first < argc ? argv[first] : DEFAULT_CA;
    char *pem = NULL;
    size_t len = 0;
    kjoin_bundle *b = NULL;
    kjoin_err inner;
    unsigned char bytes_hash[32];
    char k3s_hash[65] = "";
    kjoin_code rc = kjoin_file_read(path, 4 * 1024 * 1024, &pem, &len, &err);
    if (!rc && kjoin_bundle_parse(pem, len, &b, &inner))
        rc = kjoin_err_set(&err, KJOIN_E_USAGE, "%s: %s", path, inner.msg);
    /* What K3s puts in a K10 token for a single certificate: the file's bytes. */
    if (!rc && !(rc = kjoin_sha256(pem, len, bytes_hash, &err)))
        kjoin_hex(bytes_hash, sizeof(bytes_hash), k3s_hash);
    free(pem);
    if (rc)
        return cli_fail(a.format, &err);
    if (!a.only && a.format == CLI_TEXT)
        cli_out(stdout, "%s: %zu certificate(s); SHA-256 of the file's bytes (K3s' single-certificate token hash): %s\n",
               path, kjoin_bundle_count(b), k3s_hash);

    json_object *certs = a.format == CLI_JSON && !a.only ? json_object_new_array() : NULL;
    for (size_t i = 0; i < kjoin_bundle_count(b); i++) {
        const kjoin_cert_info *c = kjoin_bundle_cert(b, i);
        if (a.only) {
            const char *pin = strcmp(a.only, "sha256") == 0 ? c->spki_pin : c->root_pin;
            if (*pin)
                cli_out(stdout, "%s\n", pin);
        } else if (certs) {
            json_object_array_add(certs, cli_cert_json(c, true));
        } else {
            print_text(c, i);
        }
    }
    if (certs) {
        json_object *root = json_object_new_object();
        json_object_object_add(root, "fileSha256", json_object_new_string(k3s_hash));
        json_object_object_add(root, "certificates", certs);
        cli_print_json(root);
    }
    kjoin_bundle_free(b);
    return 0;
}
