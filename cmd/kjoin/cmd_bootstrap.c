/* kjoin tls-bootstrap: the node's own client certificate and kubelet.conf
 * from a bootstrap kubeconfig, or (--rotate) renewed with the current one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kjoin/bootstrap.h>
#include <kjoin/util.h>

#include "cli.h"
#include "verbs.h"

#define EXIT_RENEWED 10
#define MAX_LIST 8

enum {
    OPT_BOOTSTRAP_KUBECONFIG, OPT_KUBECONFIG, OPT_KUBELET_KUBECONFIG, OPT_PKI_DIR, OPT_CA_CERT_PATH, OPT_NODE_NAME,
    OPT_KEY_TYPE, OPT_SIGNER, OPT_SUBJECT, OPT_USAGES, OPT_DURATION, OPT_RENEW_BEFORE, OPT_ROTATE, OPT_TIMEOUT,
    OPT_OUTPUT, OPT_VERBOSE, OPT_QUIET,
};

static const cli_opt bootstrap_opts[] = {
    {OPT_BOOTSTRAP_KUBECONFIG, "bootstrap-kubeconfig", 0, true, "FILE",
     "the kubeconfig with the bootstrap token (default /etc/kubernetes/bootstrap-kubelet.conf)"},
    {OPT_KUBECONFIG, "kubeconfig", 0, true, "FILE", "with --rotate: the kubeconfig whose certificate to renew"},
    {OPT_KUBELET_KUBECONFIG, "kubelet-kubeconfig", 0, true, "FILE", "where to write kubelet.conf (default /etc/kubernetes/kubelet.conf)"},
    {OPT_PKI_DIR, "kubelet-pki-dir", 0, true, "DIR", "where the client certificates go (default /var/lib/kubelet/pki)"},
    {OPT_CA_CERT_PATH, "ca-cert-path", 0, true, "FILE", "where the cluster CA goes (default /etc/kubernetes/pki/ca.crt)"},
    {OPT_NODE_NAME, "node-name", 0, true, "NAME", "the node's name (default the host name, lower-cased)"},
    {OPT_KEY_TYPE, "key-type", 0, true, "TYPE", "ecdsa-p256 (default), rsa2048, rsa3072, rsa4096, ed25519"},
    {OPT_SIGNER, "csr-signer", 0, true, "NAME", "signerName for agents other than kubelet (needs --csr-subject)"},
    {OPT_SUBJECT, "csr-subject", 0, true, "CN=..,O=..", "the subject asked for (default CN=system:node:NAME,O=system:nodes)"},
    {OPT_USAGES, "csr-usages", 0, true, "LIST", "comma-separated usages (default kubelet's: digital signature,key encipherment,client auth)"},
    {OPT_DURATION, "cert-duration", 0, true, "DURATION", "ask for this lifetime (spec.expirationSeconds; signers may ignore it)"},
    {OPT_RENEW_BEFORE, "renew-before", 0, true, "PERCENT", "renew when less than this share of the life is left (default 30%)"},
    {OPT_ROTATE, "rotate", 0, false, NULL, "renew with the current certificate instead of the bootstrap token"},
    {OPT_TIMEOUT, "timeout", 0, true, "DURATION", "one deadline for the whole run (default 5m)"},
    {OPT_OUTPUT, "output", 'o', true, "FORMAT", "text (default) or json"},
    {OPT_VERBOSE, "v", 'v', true, "LEVEL", "log verbosity: 4 and above shows each request"},
    {OPT_QUIET, "quiet", 'q', false, NULL, "print errors only"},
};

static const cli_verb bootstrap_verb = {
    .usage = "kjoin tls-bootstrap [--bootstrap-kubeconfig FILE] [flags] | kjoin tls-bootstrap --rotate [--kubeconfig FILE]",
    .summary = "Turn the bootstrap token into the node's own client certificate, as kubelet does:\n"
               "a key and a CSR, the wait for approval, checks of the certificate, then\n"
               "kubelet-client-<time>.pem, kubelet-client-current.pem, kubelet.conf and ca.crt.\n"
               "A valid certificate that is not due is kept (exit 0). --rotate renews it with\n"
               "the current identity: exit 0 when nothing was due, 10 when renewed.",
    .opts = bootstrap_opts,
    .n_opts = sizeof(bootstrap_opts) / sizeof(bootstrap_opts[0]),
    .min_args = 0,
    .max_args = 0,
};

typedef struct bootstrap_args {
    kjoin_bootstrap_spec spec;
    cli_format format;
    long verbosity;
    char subject[512], usages[512];
    const char *orgs[MAX_LIST], *usage_list[MAX_LIST];
} bootstrap_args;

/* "CN=name,O=org,O=org" into the spec's subject (in place). */
static kjoin_code parse_subject(bootstrap_args *a, const char *arg, kjoin_err *err)
{
    snprintf(a->subject, sizeof(a->subject), "%s", arg);
    a->spec.subject_cn = NULL, a->spec.n_o = 0;
    for (char *save = NULL, *part = strtok_r(a->subject, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
        if (strncmp(part, "CN=", 3) == 0 && !a->spec.subject_cn && part[3])
            a->spec.subject_cn = part + 3;
        else if (strncmp(part, "O=", 2) == 0 && part[2] && a->spec.n_o < MAX_LIST)
            a->orgs[a->spec.n_o++] = part + 2;
        else
            return kjoin_err_set(err, KJOIN_E_USAGE, "--csr-subject takes CN=NAME and O=ORG parts, one CN, at most %d "
                                                     "O: \"%.40s\" is not one", MAX_LIST, part);
    }
    if (!a->spec.subject_cn)
        return kjoin_err_set(err, KJOIN_E_USAGE, "--csr-subject needs a CN=NAME part");
    a->spec.subject_o = a->orgs;
    return KJOIN_OK;
}

static kjoin_code parse_usages(bootstrap_args *a, const char *arg, kjoin_err *err)
{
    static const char *const known[] = {"digital signature", "key encipherment", "client auth", "server auth",
                                        "signing", "key agreement"};
    snprintf(a->usages, sizeof(a->usages), "%s", arg);
    a->spec.n_usages = 0;
    for (char *save = NULL, *u = strtok_r(a->usages, ",", &save); u; u = strtok_r(NULL, ",", &save)) {
        bool ok = false;
        for (size_t i = 0; i < sizeof(known) / sizeof(known[0]) && !ok; i++)
            ok = strcmp(u, known[i]) == 0;
        if (!ok || a->spec.n_usages == MAX_LIST)
            return kjoin_err_set(err, KJOIN_E_USAGE, "--csr-usages: \"%.40s\" is not a usage kjoin asks for (digital "
                                                     "signature, key encipherment, client auth, server auth, signing, "
                                                     "key agreement)", u);
        a->usage_list[a->spec.n_usages++] = u;
    }
    a->spec.usages = a->usage_list;
    return KJOIN_OK;
}

static kjoin_code on_opt(void *ctx, int id, const char *arg, kjoin_err *err)
{
    bootstrap_args *a = ctx;
    kjoin_bootstrap_spec *s = &a->spec;
    int64_t ms = 0;
    long pct = 0;
    kjoin_code rc = KJOIN_OK;
    switch (id) {
    case OPT_BOOTSTRAP_KUBECONFIG: s->bootstrap_kubeconfig = arg; break;
    case OPT_KUBECONFIG:
    case OPT_KUBELET_KUBECONFIG: s->kubeconfig_out = arg; break;
    case OPT_PKI_DIR: s->pki_dir = arg; break;
    case OPT_CA_CERT_PATH: s->ca_cert_path = arg; break;
    case OPT_NODE_NAME: s->node_name = arg; break;
    case OPT_KEY_TYPE: return kjoin_key_type_parse(arg, &s->key_type, err);
    case OPT_SIGNER: s->signer = arg; break;
    case OPT_SUBJECT: return parse_subject(a, arg, err);
    case OPT_USAGES: return parse_usages(a, arg, err);
    case OPT_DURATION:
        rc = kjoin_duration_parse(arg, &ms, err);
        s->duration_s = ms / 1000;
        return rc;
    case OPT_RENEW_BEFORE: {
        char buf[16];
        snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(arg, "%"), arg);
        rc = cli_parse_long("--renew-before", buf, 1, 99, &pct, err);
        s->renew_before_percent = pct;
        return rc;
    }
    case OPT_ROTATE: s->rotate = true; break;
    case OPT_TIMEOUT:
        rc = kjoin_duration_parse(arg, &s->timeout_ms, err);
        return rc ? rc : s->timeout_ms ? KJOIN_OK : kjoin_err_set(err, KJOIN_E_USAGE, "--timeout must be more than 0");
    case OPT_OUTPUT: return cli_parse_format(arg, &a->format, err);
    case OPT_VERBOSE: return cli_parse_long("-v", arg, 0, 10, &a->verbosity, err);
    case OPT_QUIET: a->verbosity = -1; break;
    }
    return KJOIN_OK;
}

static const cli_field field_names[] = {
    {"node_name", "--node-name"}, {"signer", "--csr-signer"}, {"subject_cn", "--csr-subject"},
    {"duration", "--cert-duration"}, {"bootstrap_kubeconfig", "--bootstrap-kubeconfig"},
};

json_object *cli_bootstrap_json(const kjoin_bootstrap_spec *spec, const kjoin_bootstrap_result *r)
{
    char iso[32];
    cli_rfc3339(r->not_after, iso, sizeof(iso));
    json_object *o = json_object_new_object();
    json_object_object_add(o, "changed", json_object_new_boolean(r->changed));
    json_object_object_add(o, "nodeName", json_object_new_string(r->node_name));
    json_object_object_add(o, "csrName", *r->csr_name ? json_object_new_string(r->csr_name) : NULL);
    json_object_object_add(o, "certificate", json_object_new_string(r->cert_path));
    json_object_object_add(o, "notAfter", json_object_new_string(iso));
    json_object_object_add(o, "kubeconfig", json_object_new_string(spec->kubeconfig_out ? spec->kubeconfig_out
                                                                                        : KJOIN_BOOTSTRAP_DEFAULT_KUBECONFIG));
    return o;
}

void cli_bootstrap_fail_names(kjoin_err *err)
{
    cli_name_fields(err->msg, sizeof(err->msg), err->msg, field_names, sizeof(field_names) / sizeof(field_names[0]));
}

int cli_run_bootstrap(kjoin_bootstrap_spec *spec, int format, long verbosity, const char *run_id)
{
    kjoin_bootstrap_result r;
    kjoin_err err;
    spec->audit_id = run_id;
    spec->log = cli_log_line;
    spec->log_ctx = &verbosity;
    kjoin_code rc = kjoin_tls_bootstrap(spec, &r, &err);
    if (rc) {
        cli_bootstrap_fail_names(&err);
        return cli_fail((cli_format)format, &err);
    }
    if (format == CLI_JSON) {
        json_object *o = cli_bootstrap_json(spec, &r);
        json_object_object_add(o, "runID", json_object_new_string(run_id));
        cli_print_json(o);
    }
    return spec->rotate && r.changed ? EXIT_RENEWED : 0;
}

int cmd_tls_bootstrap(int argc, char **argv)
{
    bootstrap_args a = {.format = cli_format_from_argv(argc, argv), .spec = KJOIN_BOOTSTRAP_SPEC_INIT};
    kjoin_err err;
    int first = 0;
    int p = cli_parse(&bootstrap_verb, argc, argv, on_opt, &a, &first, &err);
    if (p < 0)
        return 0;
    if (p)
        return cli_fail(a.format, &err);
    if (a.spec.rotate && a.spec.bootstrap_kubeconfig) {
        kjoin_err_set(&err, KJOIN_E_USAGE, "--rotate renews with the current certificate: not with --bootstrap-kubeconfig");
        return cli_fail(a.format, &err);
    }
    if (!a.spec.rotate && !a.spec.bootstrap_kubeconfig)
        a.spec.bootstrap_kubeconfig = "/etc/kubernetes/bootstrap-kubelet.conf";
    char run_id[CLI_RUN_ID_LEN];
    return cli_run_bootstrap(&a.spec, a.format, a.verbosity, cli_run_id(run_id));
}
